//! `Str`: an owned byte string that keeps up to 22 bytes inline.

use std::fmt;
use std::mem::ManuallyDrop;

const INLINE: usize = 22;
const HEAP: u8 = u8::MAX;

/// An owned byte string, 23 bytes in size, that stores strings of up to 22
/// bytes inline and longer ones in one heap allocation.
///
/// It is the payload of [`Value::Bytes`](crate::Value::Bytes) and
/// [`Value::Utf8`](crate::Value::Utf8): most strings in real data are short,
/// and keeping them inside the value means no allocation and no pointer to
/// chase when they are built, encoded or decoded.
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
    // inline length (0..=22), or HEAP
    tag: u8,
    // inline bytes, or the pointer and length of a `Box<[u8]>` at
    // `HEAP_PTR` and `HEAP_LEN`
    data: [u8; INLINE],
}

/// Where in `data` a long string's pointer and length sit: 7 and 15 bytes
/// into the `Str`, which are 8-byte aligned where a `Str` follows a one-byte
/// tag (in a `Value`, a `Key`). Leak checkers find heap blocks only through
/// aligned pointers.
const HEAP_PTR: std::ops::Range<usize> = 6..14;
const HEAP_LEN: std::ops::Range<usize> = 14..22;

impl Str {
    /// The empty string.
    pub(crate) const EMPTY: Str = Str {
        tag: 0,
        data: [0; INLINE],
    };

    /// Replaces an empty string's content with a copy of `bytes`, writing
    /// in place. Building a short string by value goes through a stack copy
    /// whose wide reloads of the narrow stores a copy of a few bytes makes
    /// stall (store forwarding fails); written where it lives, nothing reads
    /// the bytes back until they have landed.
    #[inline]
    pub(crate) fn assign(&mut self, bytes: &[u8]) {
        debug_assert!(self.is_empty() && self.is_inline());
        if bytes.len() <= INLINE {
            self.data[..bytes.len()].copy_from_slice(bytes);
            self.tag = bytes.len() as u8;
        } else {
            *self = Str::from_box(bytes.into());
        }
    }

    /// Copies `bytes` into a new string.
    #[inline]
    pub fn new(bytes: &[u8]) -> Str {
        if bytes.len() <= INLINE {
            let mut data = [0u8; INLINE];
            data[..bytes.len()].copy_from_slice(bytes);
            Str {
                tag: bytes.len() as u8,
                data,
            }
        } else {
            Str::from_box(bytes.into())
        }
    }

    /// Takes ownership of `bytes`, keeping its allocation when it is long.
    pub fn from_vec(bytes: Vec<u8>) -> Str {
        if bytes.len() <= INLINE {
            Str::new(&bytes)
        } else {
            Str::from_box(bytes.into_boxed_slice())
        }
    }

    fn from_box(b: Box<[u8]>) -> Str {
        let len = b.len();
        let ptr = Box::into_raw(b) as *mut u8 as usize;
        let mut data = [0u8; INLINE];
        data[HEAP_PTR].copy_from_slice(&(ptr as u64).to_le_bytes());
        data[HEAP_LEN].copy_from_slice(&(len as u64).to_le_bytes());
        Str { tag: HEAP, data }
    }

    #[inline]
    fn heap_parts(&self) -> (*mut u8, usize) {
        let ptr = u64::from_le_bytes(self.data[HEAP_PTR].try_into().expect("8 bytes")) as usize;
        let len = u64::from_le_bytes(self.data[HEAP_LEN].try_into().expect("8 bytes")) as usize;
        (ptr as *mut u8, len)
    }

    /// The bytes of the string.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        if self.tag != HEAP {
            &self.data[..self.tag as usize]
        } else {
            let (ptr, len) = self.heap_parts();
            // SAFETY: a HEAP tag means `data` holds the parts of a live
            // `Box<[u8]>` owned by this `Str` (see `from_box`).
            unsafe { std::slice::from_raw_parts(ptr, len) }
        }
    }

    /// The length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        if self.tag != HEAP {
            self.tag as usize
        } else {
            self.heap_parts().1
        }
    }

    /// Whether the string is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the bytes are stored inside the value (22 bytes or fewer).
    #[inline]
    pub fn is_inline(&self) -> bool {
        self.tag != HEAP
    }

    /// The string as `&str` when its bytes are valid UTF-8.
    pub fn to_str(&self) -> Option<&str> {
        std::str::from_utf8(self.as_bytes()).ok()
    }

    /// Converts into a `Vec<u8>`, reusing the allocation of a long string.
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
        }
    }
}

impl Clone for Str {
    #[inline]
    fn clone(&self) -> Str {
        if self.tag != HEAP {
            Str {
                tag: self.tag,
                data: self.data,
            }
        } else {
            Str::new(self.as_bytes())
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
