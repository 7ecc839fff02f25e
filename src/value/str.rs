//! `Str`: an owned byte string that keeps up to 22 bytes inline.

use bytes::Bytes;
use std::fmt;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::sync::Arc;

const INLINE: usize = 22;
const HEAP: u8 = u8::MAX;
const SHARED: u8 = u8::MAX - 1;

/// An owned byte string, 23 bytes in size, that stores strings of up to 22
/// bytes inline and longer ones in one heap allocation, or as a slice of a
/// shared [`Bytes`] buffer.
///
/// It is the payload of [`Value::Bytes`](crate::Value::Bytes) and
/// [`Value::Utf8`](crate::Value::Utf8): most strings in real data are short,
/// and keeping them inside the value means no allocation and no pointer to
/// chase when they are built, encoded or decoded.
///
/// A document decoded with [`decode_bytes`](crate::decode_bytes) keeps its
/// long strings as slices of the input buffer ([`is_shared`](Str::is_shared)):
/// no copy, and the buffer lives as long as one of them does. Such a string
/// reads, compares and encodes as any other; [`to_bytes`](Str::to_bytes)
/// hands out its slice without a copy, and [`Str::new`] of its bytes makes
/// an unshared copy that does not hold the buffer.
///
/// ```
/// use sereal::Str;
/// let s = Str::new(b"user42@example.com");
/// assert_eq!(s.as_bytes(), b"user42@example.com");
/// assert!(s.is_inline());
/// assert!(!Str::new(&[b'x'; 100]).is_inline());
/// ```
#[repr(C)]
pub struct Str {
    // inline length (0..=22), HEAP or SHARED
    tag: u8,
    // Inline bytes, every one initialized; or the parts of a long string
    // (see `HEAP_PTR`), its pointers stored as pointers: `MaybeUninit`
    // copies bytes as they are, a pointer's provenance with them, where a
    // copy of a `[u8; N]` would keep its address only.
    data: MaybeUninit<[u8; INLINE]>,
}

/// Where in `data` a long string's pointer (a `*mut u8`) and length (a
/// `usize`) sit: 7 and 15 bytes into the `Str`, which are 8-byte aligned
/// where a `Str` follows a one-byte tag (in a `Value`, a `Key`). Leak
/// checkers find heap blocks only through aligned pointers.
const HEAP_PTR: usize = 6;
const HEAP_LEN: usize = 14;
/// A shared string: its bytes' pointer at `HEAP_PTR`, the pointer of the
/// `Arc<Bytes>` that owns them at `SHARED_OWNER` (aligned, as above) and its
/// length, under 4 GiB, as a `u32` at `SHARED_LEN`.
const SHARED_OWNER: usize = 14;
const SHARED_LEN: usize = 2;

const _: () = {
    let word = std::mem::size_of::<usize>();
    assert!(HEAP_PTR + word <= HEAP_LEN && HEAP_LEN + word <= INLINE);
    assert!(SHARED_LEN + 4 <= HEAP_PTR && SHARED_OWNER + word <= INLINE);
};

impl Str {
    /// The empty string.
    pub(crate) const EMPTY: Str = Str {
        tag: 0,
        data: MaybeUninit::new([0; INLINE]),
    };

    /// Replaces an empty string's content with a copy of `bytes`, writing
    /// in place. Building a short string by value goes through a stack copy
    /// whose wide reloads of the narrow stores a copy of a few bytes makes
    /// stall (store forwarding fails); written where it lives, nothing reads
    /// the bytes back until they have landed.
    /// A string too long for `data` is made by `long`.
    #[inline]
    pub(crate) fn assign(&mut self, bytes: &[u8], long: impl FnOnce(&[u8]) -> Str) {
        debug_assert!(self.is_empty() && self.is_inline());
        if bytes.len() <= INLINE {
            // SAFETY: `data` has room for `INLINE` bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    self.data.as_mut_ptr().cast::<u8>(),
                    bytes.len(),
                )
            };
            self.tag = bytes.len() as u8;
        } else {
            *self = long(bytes);
        }
    }

    /// Copies `bytes` into a new string.
    ///
    /// ```
    /// use sereal::{Str, Value};
    /// let s = Str::new(b"caf\xe9");
    /// assert_eq!(s.as_bytes(), b"caf\xe9");
    /// assert_eq!(Value::Bytes(s), Value::bytes(b"caf\xe9"));
    /// ```
    #[inline]
    pub fn new(bytes: &[u8]) -> Str {
        if bytes.len() <= INLINE {
            let mut data = [0u8; INLINE];
            data[..bytes.len()].copy_from_slice(bytes);
            Str {
                tag: bytes.len() as u8,
                data: MaybeUninit::new(data),
            }
        } else {
            Str::from_box(bytes.into())
        }
    }

    /// Takes ownership of `bytes`, keeping its allocation when it is long.
    ///
    /// ```
    /// use sereal::Str;
    /// let page = vec![b'x'; 1000];
    /// let at = page.as_ptr();
    /// let s = Str::from_vec(page);
    /// assert_eq!(s.as_bytes().as_ptr(), at); // a long string keeps the Vec's buffer
    /// ```
    pub fn from_vec(bytes: Vec<u8>) -> Str {
        if bytes.len() <= INLINE {
            Str::new(&bytes)
        } else {
            Str::from_box(bytes.into_boxed_slice())
        }
    }

    fn from_box(b: Box<[u8]>) -> Str {
        let len = b.len();
        let mut s = Str {
            tag: HEAP,
            data: MaybeUninit::new([0; INLINE]),
        };
        // SAFETY: a pointer and a `usize` fit at these offsets.
        unsafe {
            s.put(HEAP_PTR, Box::into_raw(b).cast::<u8>());
            s.put(HEAP_LEN, len);
        }
        s
    }

    /// A string of the bytes `part` of the buffer `owner` holds, sharing
    /// them: `None` when `part` is not inside that buffer, or is 4 GiB or
    /// longer.
    pub(crate) fn shared(owner: &Arc<Bytes>, part: &[u8]) -> Option<Str> {
        let base = owner.as_ptr().addr();
        let start = part.as_ptr().addr();
        let inside = start >= base && start + part.len() <= base + owner.len();
        let len = u32::try_from(part.len()).ok().filter(|_| inside)?;
        let mut s = Str {
            tag: SHARED,
            data: MaybeUninit::new([0; INLINE]),
        };
        // SAFETY: two pointers and a `u32` fit at these offsets.
        unsafe {
            // The owner's pointer at `part`'s address: the buffer's own
            // provenance, not that of the borrow `part` came from.
            s.put(HEAP_PTR, owner.as_ptr().with_addr(start).cast_mut());
            s.put(SHARED_OWNER, Arc::into_raw(Arc::clone(owner)));
            s.put(SHARED_LEN, len);
        }
        Some(s)
    }

    /// Writes `v` at byte `at` of `data`, unaligned.
    ///
    /// # Safety
    /// A `T` must fit there: `at + size_of::<T>() <= INLINE`.
    #[inline]
    unsafe fn put<T: Copy>(&mut self, at: usize, v: T) {
        debug_assert!(at + std::mem::size_of::<T>() <= INLINE);
        self.data
            .as_mut_ptr()
            .cast::<u8>()
            .add(at)
            .cast::<T>()
            .write_unaligned(v)
    }

    /// Reads a `T` at byte `at` of `data`, unaligned.
    ///
    /// # Safety
    /// A `T` must have been written there with `put`.
    #[inline]
    unsafe fn get<T: Copy>(&self, at: usize) -> T {
        self.data
            .as_ptr()
            .cast::<u8>()
            .add(at)
            .cast::<T>()
            .read_unaligned()
    }

    /// The pointer and length of a string that is not inline.
    #[inline]
    fn heap_parts(&self) -> (*mut u8, usize) {
        // SAFETY: a HEAP tag means `from_box` wrote the pointer and the
        // length; a SHARED one, that `shared` wrote the pointer and the
        // `u32` length.
        unsafe {
            let len = if self.tag == HEAP {
                self.get::<usize>(HEAP_LEN)
            } else {
                self.get::<u32>(SHARED_LEN) as usize
            };
            (self.get::<*mut u8>(HEAP_PTR), len)
        }
    }

    /// The owner of a shared string's bytes, still owned by the string.
    fn owner(&self) -> ManuallyDrop<Arc<Bytes>> {
        debug_assert_eq!(self.tag, SHARED);
        // SAFETY: a SHARED tag means `data` holds a pointer from
        // `Arc::into_raw` whose count this `Str` owns (see `shared`); the
        // `ManuallyDrop` leaves that count alone.
        ManuallyDrop::new(unsafe { Arc::from_raw(self.get::<*const Bytes>(SHARED_OWNER)) })
    }

    /// The inline buffer of a string stored inline.
    #[inline]
    fn inline_data(&self) -> &[u8; INLINE] {
        debug_assert!(self.tag <= INLINE as u8);
        // SAFETY: an inline string's `data` is all plain bytes, every one
        // initialized (`EMPTY`, `new` and `assign` write them all).
        unsafe { self.data.assume_init_ref() }
    }

    /// For a string stored inline: the whole inline buffer (every byte of
    /// it initialized) and the string's length in it, which lets a writer
    /// copy a fixed size.
    #[inline]
    pub(crate) fn inline(&self) -> Option<(&[u8; INLINE], usize)> {
        if self.tag <= INLINE as u8 {
            Some((self.inline_data(), self.tag as usize))
        } else {
            None
        }
    }

    /// The bytes of the string.
    ///
    /// ```
    /// use sereal::Value;
    /// let Value::Utf8(s) = Value::utf8("é") else { unreachable!() };
    /// assert_eq!(s.as_bytes(), [0xc3, 0xa9]);
    /// ```
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        if self.tag <= INLINE as u8 {
            &self.inline_data()[..self.tag as usize]
        } else {
            let (ptr, len) = self.heap_parts();
            // SAFETY: a HEAP tag means `data` holds the parts of a live
            // `Box<[u8]>` owned by this `Str` (see `from_box`); a SHARED
            // one, a part of the bytes of a `Bytes` that this `Str` keeps
            // alive (see `shared`).
            unsafe { std::slice::from_raw_parts(ptr, len) }
        }
    }

    /// The length in bytes.
    ///
    /// ```
    /// use sereal::Str;
    /// assert_eq!(Str::from("é").len(), 2); // bytes, not characters
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        if self.tag <= INLINE as u8 {
            self.tag as usize
        } else {
            self.heap_parts().1
        }
    }

    /// Whether the string is empty.
    ///
    /// ```
    /// use sereal::Str;
    /// assert!(Str::new(b"").is_empty());
    /// assert!(!Str::from("a").is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the bytes are stored inside the value (22 bytes or fewer).
    ///
    /// ```
    /// use sereal::Str;
    /// assert!(Str::from("twenty-two bytes: fits").is_inline());
    /// assert!(!Str::from("twenty-three bytes: heap").is_inline());
    /// ```
    #[inline]
    pub fn is_inline(&self) -> bool {
        self.tag <= INLINE as u8
    }

    /// Whether the bytes are a slice of a shared buffer (see
    /// [`decode_bytes`](crate::decode_bytes)), which this string keeps alive.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use sereal::{Str, Value};
    /// let long = "a string longer than twenty-two bytes";
    /// let doc = sereal::encode(&Value::array([long, "short"])).unwrap();
    /// let v = sereal::decode_bytes(&Bytes::from(doc)).unwrap().into_value();
    /// let shared: Vec<bool> = (0..2)
    ///     .map(|i| matches!(v.at(i), Some(Value::Bytes(s) | Value::Utf8(s)) if s.is_shared()))
    ///     .collect();
    /// assert_eq!(shared, [true, false]);
    /// assert!(!Str::new(long.as_bytes()).is_shared());
    /// ```
    #[inline]
    pub fn is_shared(&self) -> bool {
        self.tag == SHARED
    }

    /// The bytes as a [`Bytes`]: for a shared string, a slice of the buffer
    /// it shares (no copy); otherwise a copy.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use sereal::Value;
    /// let text = "x".repeat(1000);
    /// let input = Bytes::from(sereal::encode(&Value::from(text.as_str())).unwrap());
    /// let v = sereal::decode_bytes(&input).unwrap().into_value();
    /// let (Value::Bytes(s) | Value::Utf8(s)) = &v else { unreachable!() };
    /// let s = s.to_bytes();
    /// assert_eq!(s, text.as_bytes());
    /// // the same memory as the input's
    /// let at = s.as_ptr() as usize - input.as_ptr() as usize;
    /// assert_eq!(&input[at..at + 1000], text.as_bytes());
    /// ```
    pub fn to_bytes(&self) -> Bytes {
        if self.tag == SHARED {
            self.owner().slice_ref(self.as_bytes())
        } else {
            Bytes::copy_from_slice(self.as_bytes())
        }
    }

    /// The string as `&str` when its bytes are valid UTF-8.
    ///
    /// ```
    /// use sereal::Str;
    /// assert_eq!(Str::from("Zoë").to_str(), Some("Zoë"));
    /// assert_eq!(Str::new(b"Zo\xeb").to_str(), None); // Latin-1
    /// ```
    pub fn to_str(&self) -> Option<&str> {
        std::str::from_utf8(self.as_bytes()).ok()
    }

    /// Converts into a `Vec<u8>`, reusing the allocation of a long string
    /// that is not shared.
    ///
    /// ```
    /// use sereal::Str;
    /// let s = Str::from_vec(vec![b'y'; 100]);
    /// let at = s.as_bytes().as_ptr();
    /// let v = s.into_vec();
    /// assert_eq!((v.len(), v.as_ptr()), (100, at)); // no copy
    /// ```
    pub fn into_vec(self) -> Vec<u8> {
        if self.tag != HEAP {
            return self.as_bytes().to_vec();
        }
        let this = ManuallyDrop::new(self);
        let (ptr, len) = this.heap_parts();
        // SAFETY: ownership of the box moves out; `this` is never dropped.
        unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) }.into_vec()
    }
}

impl Drop for Str {
    fn drop(&mut self) {
        if self.tag == HEAP {
            let (ptr, len) = self.heap_parts();
            // SAFETY: the parts come from `Box::into_raw` in `from_box`, and
            // this is the only owner.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
        } else if self.tag == SHARED {
            drop(ManuallyDrop::into_inner(self.owner()));
        }
    }
}

impl Clone for Str {
    #[inline]
    fn clone(&self) -> Str {
        match self.tag {
            HEAP => Str::new(self.as_bytes()),
            SHARED => {
                // One more count on the owner, for the copy.
                std::mem::forget(Arc::clone(&self.owner()));
                Str {
                    tag: SHARED,
                    data: self.data,
                }
            }
            _ => Str {
                tag: self.tag,
                data: self.data,
            },
        }
    }
}

impl PartialEq for Str {
    fn eq(&self, other: &Str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Str {}

impl std::hash::Hash for Str {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state)
    }
}

impl std::ops::Deref for Str {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl From<&[u8]> for Str {
    fn from(b: &[u8]) -> Str {
        Str::new(b)
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str::new(s.as_bytes())
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str::from_vec(s.into_bytes())
    }
}

impl From<Vec<u8>> for Str {
    fn from(v: Vec<u8>) -> Str {
        Str::from_vec(v)
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_quoted(f, self.as_bytes())
    }
}

/// Bytes read as Latin-1 (one character U+0000 to U+00FF per byte), as
/// Perl upgrades a byte string to compare it with a UTF-8 one.
pub(crate) fn latin1_to_string(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// The Latin-1 bytes of `s`, when every character is under U+0100.
pub(crate) fn string_to_latin1(s: &str) -> Option<Vec<u8>> {
    s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect()
}

/// Writes bytes as a double-quoted string, escaping what is not printable.
pub(crate) fn write_quoted(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    f.write_str("\"")?;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                c if c.is_control() => write!(f, "{}", c.escape_default())?,
                c => write!(f, "{c}")?,
            }
        }
        for b in chunk.invalid() {
            write!(f, "\\x{b:02x}")?;
        }
    }
    f.write_str("\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long string's heap pointer sits at an aligned address inside a
    /// `Value`, where a leak checker scanning the heap finds it.
    #[test]
    fn heap_pointer_is_aligned_in_a_value() {
        let v = crate::Value::Bytes(Str::new(&[7u8; 100]));
        let crate::Value::Bytes(s) = &v else {
            unreachable!()
        };
        let ptr = s.as_bytes().as_ptr() as usize;
        let base = &v as *const crate::Value as usize;
        assert_eq!(base % 8, 0);
        let words: [usize; 3] = unsafe { std::mem::transmute_copy(&v) };
        assert!(
            words.contains(&ptr),
            "no aligned word of the Value holds the pointer"
        );
    }

    #[test]
    fn inline_and_heap() {
        assert_eq!(std::mem::size_of::<Str>(), 23);
        for n in [0usize, 1, 21, 22, 23, 100, 5000] {
            let v: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let s = Str::new(&v);
            assert_eq!(s.as_bytes(), &v[..]);
            assert_eq!(s.len(), n);
            assert_eq!(s.is_inline(), n <= 22);
            let c = s.clone();
            assert_eq!(c, s);
            assert_eq!(Str::from_vec(v.clone()).into_vec(), v);
            assert_eq!(s.into_vec(), v);
        }
    }
}
