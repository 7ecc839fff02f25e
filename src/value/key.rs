//! `Key`: interned hash keys and class names.

use super::keybox::{KeyBox, KeyChunks};
use super::str::{latin1_to_string, write_quoted, Str};
use hashbrown::HashTable;
use std::cell::RefCell;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::ptr::NonNull;
use std::sync::OnceLock;

// In this order, so that a long key's heap pointer is aligned (see `Str`);
// 24 bytes, so that with its count and place it fills a 32-byte box.
#[repr(C)]
pub(super) struct KeyInner {
    // UTF8 and INTERNED
    pub(super) flags: u8,
    pub(super) bytes: Str,
}

const UTF8: u8 = 1;
// the interner's table holds a handle too
const INTERNED: u8 = 2;

impl KeyInner {
    #[inline]
    fn utf8(&self) -> bool {
        self.flags & UTF8 != 0
    }
}

fn utf8_flag(utf8: bool) -> u8 {
    u8::from(utf8) * UTF8
}

/// An interned string used as a hash key or a class name.
///
/// Equal strings (same bytes, same UTF-8 flag) made on one thread share one
/// allocation, as Perl shares hash keys in its string table. Comparing and
/// hashing a `Key` is a pointer operation, which is what lets the encoder
/// write a repeated key as a `COPY` with one pointer lookup.
///
/// A `&str` key made of ASCII only is a byte string (as Perl stores it);
/// other text is flagged UTF-8. [`Key::bytes`] and [`Key::utf8`] choose
/// explicitly.
///
/// The decoder interns the keys of hashes under 256 entries. The keys of a
/// larger hash are data more often than field names (ids, paths), rarely
/// met again, and interning each would cost a lookup in a table as large as
/// the hash: they are made unshared instead, and allocated together, up to
/// 1,024 in one block of memory that is freed with the last of them (a key
/// kept after its document keeps its block). An unshared key still equals,
/// hashes and orders as any key of the same content, and the `COPY`s of it
/// in the document share its allocation, so the document re-encodes to the
/// same bytes. The encoder writes a `COPY` for a key that is the same
/// allocation as one it wrote before: an unshared key and an interned key
/// of equal content are both written out.
///
/// ```
/// use sereal::Key;
/// let a = Key::from("id");
/// let b = Key::from(String::from("id"));
/// assert!(a.ptr_eq(&b));
/// assert!(!a.is_utf8());
/// assert!(Key::from("café").is_utf8());
/// assert_ne!(Key::utf8("id"), a);
/// ```
pub struct Key(NonNull<KeyBox>);

// A key is changed by no one: its count only between two of its own
// statements, which nothing can interrupt halfway (as `Rc`'s).
impl std::panic::UnwindSafe for Key {}
impl std::panic::RefUnwindSafe for Key {}

impl Clone for Key {
    #[inline]
    fn clone(&self) -> Key {
        self.boxed().retain();
        Key(self.0)
    }
}

impl Drop for Key {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: this handle is counted in the box, which is alive while
        // it is.
        unsafe { KeyBox::release(self.0) }
    }
}

struct Interner {
    table: HashTable<Key>,
    purge_at: usize,
}

/// The table's size at which dead keys are first purged. Under Miri, which
/// runs code thousands of times slower, a small one lets a test see
/// several purges.
const MIN_PURGE: usize = if cfg!(miri) { 64 } else { 4096 };

thread_local! {
    static INTERNER: RefCell<Interner> = const {
        RefCell::new(Interner {
            table: HashTable::new(),
            purge_at: MIN_PURGE,
        })
    };
}

/// The hash of a key's content, with one seed per process (random, so a
/// document cannot be built to collide).
#[inline]
pub(crate) fn content_hash(utf8: bool, bytes: &[u8]) -> u64 {
    static HASHER: OnceLock<hashbrown::DefaultHashBuilder> = OnceLock::new();
    let mut h = HASHER.get_or_init(Default::default).build_hasher();
    h.write_u8(utf8 as u8);
    h.write(bytes);
    h.finish()
}

impl Interner {
    fn intern(&mut self, utf8: bool, bytes: &[u8]) -> Key {
        let hash = content_hash(utf8, bytes);
        if let Some(k) = self.table.find(hash, |k| k.is(utf8, bytes)) {
            return k.clone();
        }
        if self.table.len() >= self.purge_at {
            // Drop the entries nothing but the interner holds.
            self.table.retain(|k| k.boxed().count() > 1);
            self.purge_at = (self.table.len() * 2).max(MIN_PURGE);
        }
        let k = Key::filled(KeyBox::alone(INTERNED | utf8_flag(utf8)), bytes);
        self.table
            .insert_unique(hash, k.clone(), |k| k.content_hash());
        k
    }
}

impl Key {
    /// The key for `bytes`, with the UTF-8 flag given.
    ///
    /// ```
    /// use sereal::Key;
    /// let k = Key::new(b"caf\xc3\xa9", true);
    /// assert_eq!((k.as_str(), k.is_utf8()), (Some("café"), true));
    /// assert!(k.ptr_eq(&Key::from("café"))); // interned: one allocation
    /// ```
    pub fn new(bytes: &[u8], utf8: bool) -> Key {
        INTERNER.with(|i| i.borrow_mut().intern(utf8, bytes))
    }

    /// A key for `bytes` that is not interned: it shares its allocation
    /// only with its clones (see the type's documentation).
    pub(crate) fn unshared(bytes: &[u8], utf8: bool) -> Key {
        Key::filled(KeyBox::alone(utf8_flag(utf8)), bytes)
    }

    /// As [`Key::unshared`], in a box of `chunks` (the keys of a large
    /// hash: see `KeyChunks`).
    #[inline]
    pub(crate) fn unshared_in(chunks: &mut KeyChunks, bytes: &[u8], utf8: bool) -> Key {
        Key::filled(chunks.boxed(utf8_flag(utf8)), bytes)
    }

    /// The key of the new box `b` (one handle, an empty key), given its
    /// bytes.
    #[inline]
    fn filled(mut b: NonNull<KeyBox>, bytes: &[u8]) -> Key {
        // SAFETY: the box is new, and this is its only handle.
        unsafe { b.as_mut() }.inner.bytes.assign(bytes, Str::new);
        Key(b)
    }

    #[inline]
    fn boxed(&self) -> &KeyBox {
        // SAFETY: the box is alive while a handle on it is.
        unsafe { self.0.as_ref() }
    }

    #[inline]
    fn inner(&self) -> &KeyInner {
        &self.boxed().inner
    }

    /// The hash of the key's content (what [`Hash`](crate::Hash) indexes by).
    #[inline]
    pub(crate) fn content_hash(&self) -> u64 {
        content_hash(self.is_utf8(), self.as_bytes())
    }

    /// The key's text as UTF-8 bytes: its bytes, or for a byte string its
    /// Latin-1 bytes as UTF-8 (Perl holds `"caf\xe9"` and UTF-8 `"café"`
    /// as one name).
    pub(crate) fn text(&self) -> std::borrow::Cow<'_, [u8]> {
        let b = self.as_bytes();
        if self.is_utf8() || b.is_ascii() {
            return std::borrow::Cow::Borrowed(b);
        }
        std::borrow::Cow::Owned(latin1_to_string(b).into_bytes())
    }

    /// Whether the key has these bytes and this UTF-8 flag.
    #[inline]
    pub(crate) fn is(&self, utf8: bool, bytes: &[u8]) -> bool {
        self.inner().utf8() == utf8 && self.as_bytes() == bytes
    }

    /// A byte-string key (written as `SHORT_BINARY`/`BINARY`).
    ///
    /// ```
    /// use sereal::{Hash, Key, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let k = Key::bytes(b"caf\xe9"); // Perl's Latin-1 "café"
    /// assert!(!k.is_utf8());
    /// let mut h = Hash::new();
    /// h.insert(k, 1);
    /// assert_eq!(&sereal::encode(&Value::from(h))?[6..], b"\x51\x64caf\xe9\x01"); // SHORT_BINARY key
    /// # Ok(())
    /// # }
    /// ```
    pub fn bytes(bytes: impl AsRef<[u8]>) -> Key {
        Key::new(bytes.as_ref(), false)
    }

    /// A UTF-8 key (written as `STR_UTF8`).
    ///
    /// ```
    /// use sereal::{Hash, Key, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let mut h = Hash::new();
    /// h.insert(Key::utf8("id"), 1); // flagged, though ASCII
    /// assert_eq!(&sereal::encode(&Value::from(h))?[6..], b"\x51\x27\x02id\x01"); // STR_UTF8 key
    /// # Ok(())
    /// # }
    /// ```
    pub fn utf8(s: impl AsRef<str>) -> Key {
        Key::new(s.as_ref().as_bytes(), true)
    }

    /// The key's bytes.
    ///
    /// ```
    /// use sereal::Key;
    /// assert_eq!(Key::from("café").as_bytes(), "café".as_bytes());
    /// assert_eq!(Key::bytes(b"\xff").as_bytes(), b"\xff");
    /// ```
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.inner().bytes.as_bytes()
    }

    /// The key's text as a [`Str`], for writers that copy a short one's
    /// inline buffer whole.
    #[inline]
    pub(crate) fn as_str_value(&self) -> &Str {
        &self.inner().bytes
    }

    /// The key as text, when its bytes are valid UTF-8.
    ///
    /// ```
    /// use sereal::Key;
    /// assert_eq!(Key::from("name").as_str(), Some("name"));
    /// assert_eq!(Key::bytes(b"caf\xe9").as_str(), None); // Latin-1, not UTF-8
    /// ```
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(self.as_bytes()).ok()
    }

    /// Whether the key carries the UTF-8 flag.
    ///
    /// ```
    /// use sereal::Key;
    /// assert!(!Key::from("plain").is_utf8()); // ASCII text: a byte string, as in Perl
    /// assert!(Key::from("Zoë").is_utf8());
    /// assert!(Key::utf8("plain").is_utf8());
    /// ```
    #[inline]
    pub fn is_utf8(&self) -> bool {
        self.inner().utf8()
    }

    /// Whether two keys are the same interned key.
    ///
    /// ```
    /// use sereal::{decode, encode, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let rows = Value::array([Value::hash([("id", 1)]), Value::hash([("id", 2)])]);
    /// let back = decode(&encode(&rows)?)?;
    /// let (a, b) = (back.at(0).unwrap(), back.at(1).unwrap());
    /// let (ha, hb) = (a.as_hash().unwrap(), b.as_hash().unwrap());
    /// // decoded keys of one text are one interned key
    /// assert!(ha.keys().next().unwrap().ptr_eq(hb.keys().next().unwrap()));
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn ptr_eq(&self, other: &Key) -> bool {
        self.0 == other.0
    }

    /// Whether a hash or class other than the one holding this handle may
    /// hold the same key: more handles exist than this one and the
    /// interner's. A key held once can never be repeated while the graph
    /// does not change, so an encoder that runs no callbacks need not
    /// remember where it wrote it.
    #[inline]
    pub(crate) fn may_repeat(&self) -> bool {
        self.boxed().count() > 1 + usize::from(self.inner().flags & INTERNED != 0)
    }

    /// Whether the `uses` handles a graph holds on this key are all there
    /// are (no other graph, and not the interner, holds it).
    pub(crate) fn is_private(&self, uses: usize) -> bool {
        self.inner().flags & INTERNED == 0 && self.boxed().count() == uses
    }

    /// An equal key of its own allocation, not interned.
    pub(crate) fn private_copy(&self) -> Key {
        Key::unshared(self.as_bytes(), self.is_utf8())
    }

    /// A new handle on the key at `p`.
    ///
    /// # Safety
    /// `p` must come from [`Key::as_ptr`] of a key that is still alive.
    pub(crate) unsafe fn from_ptr(p: *const u8) -> Key {
        let k = Key(NonNull::new_unchecked(p.cast_mut().cast::<KeyBox>()));
        k.boxed().retain();
        k
    }

    /// The key's allocation, for tables that make handles on it again
    /// ([`Key::from_ptr`]).
    #[inline]
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.0.as_ptr().cast_const().cast()
    }

    /// The address identifying this key, for seen tables.
    #[inline]
    pub(crate) fn addr(&self) -> usize {
        self.0.as_ptr().addr()
    }
}

/// Class names as Perl compares them: as text (see `Key::text`), so a
/// Latin-1 byte-string class matches its UTF-8 spelling.
#[derive(Clone, Default)]
pub(crate) struct ClassNames(hashbrown::HashSet<Box<[u8]>>);

impl ClassNames {
    pub(crate) fn new(names: &[String]) -> ClassNames {
        ClassNames(names.iter().map(|n| n.as_bytes().into()).collect())
    }

    pub(crate) fn contains(&self, class: &Key) -> bool {
        self.0.contains(&*class.text())
    }
}

/// Handlers by class name, compared as [`ClassNames`] compares them (as
/// Perl compares package names: as text), keyed by the name's text. The
/// names are owned bytes, not `Key`s, so that a codec holding its handlers
/// can move to another thread and be shared between threads.
#[derive(Clone)]
pub(crate) struct ClassMap<F>(HashTable<(Box<[u8]>, F)>);

impl<F> Default for ClassMap<F> {
    fn default() -> Self {
        ClassMap(HashTable::new())
    }
}

impl<F> ClassMap<F> {
    fn find(&self, class: &Key) -> Option<&(Box<[u8]>, F)> {
        let text = class.text();
        self.0.find(content_hash(true, &text), |e| *e.0 == *text)
    }

    /// Sets the handler of `class`, replacing any before it.
    pub(crate) fn insert(&mut self, class: &Key, handler: F) {
        let text = class.text();
        let hash = content_hash(true, &text);
        match self.0.find_mut(hash, |e| *e.0 == *text) {
            Some(e) => e.1 = handler,
            None => {
                self.0
                    .insert_unique(hash, (text.into(), handler), |e| content_hash(true, &e.0));
            }
        }
    }

    pub(crate) fn get(&self, class: &Key) -> Option<&F> {
        self.find(class).map(|e| &e.1)
    }

    pub(crate) fn get_mut(&mut self, class: &Key) -> Option<&mut F> {
        let text = class.text();
        self.0
            .find_mut(content_hash(true, &text), |e| *e.0 == *text)
            .map(|e| &mut e.1)
    }

    pub(crate) fn contains(&self, class: &Key) -> bool {
        self.find(class).is_some()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The class names, as keys of their text.
    pub(crate) fn names(&self) -> impl Iterator<Item = Key> + '_ {
        self.0.iter().map(|e| Key::new(&e.0, !e.0.is_ascii()))
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        // Interning makes equal content share one pointer; the content
        // comparison covers unshared keys.
        self.ptr_eq(other) || other.is(self.is_utf8(), self.as_bytes())
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.is_utf8().hash(state);
        self.as_bytes().hash(state);
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        self.as_bytes()
            .cmp(other.as_bytes())
            .then(self.is_utf8().cmp(&other.is_utf8()))
    }
}

impl From<&str> for Key {
    fn from(s: &str) -> Key {
        Key::new(s.as_bytes(), !s.is_ascii())
    }
}

impl From<String> for Key {
    fn from(s: String) -> Key {
        Key::from(s.as_str())
    }
}

impl From<&String> for Key {
    fn from(s: &String) -> Key {
        Key::from(s.as_str())
    }
}

impl From<&Key> for Key {
    fn from(k: &Key) -> Key {
        k.clone()
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_quoted(f, self.as_bytes())
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_shares_and_purges() {
        let a = Key::from("alpha");
        assert!(a.ptr_eq(&Key::bytes("alpha")));
        assert!(!a.ptr_eq(&Key::utf8("alpha")));
        // Make many short-lived keys: the table must not keep them all.
        // Under Miri, enough for a few purges of its smaller table.
        let (n, most) = if cfg!(miri) {
            (8 * MIN_PURGE, 2 * MIN_PURGE)
        } else {
            (50_000, 20_000)
        };
        for i in 0..n {
            let _ = Key::from(format!("transient{i}"));
        }
        let len = INTERNER.with(|i| i.borrow().table.len());
        assert!(len < most, "interner kept {len} dead keys");
        assert!(a.ptr_eq(&Key::from("alpha")));
    }

    #[test]
    fn a_key_fills_one_32_byte_box() {
        // Its count and place and the inner value.
        assert_eq!(std::mem::size_of::<KeyInner>(), 24);
    }

    #[test]
    fn unshared_keys_equal_interned_ones_and_count_their_handles() {
        let u = Key::unshared(b"beta", false);
        let i = Key::from("beta");
        assert!(!u.ptr_eq(&i));
        assert_eq!(u, i);
        assert_eq!(u.content_hash(), i.content_hash());
        assert_ne!(u, Key::unshared(b"beta", true));
        assert!(!u.may_repeat() && !i.may_repeat());
        let (u2, i2) = (u.clone(), i.clone());
        assert!(u.may_repeat() && i.may_repeat());
        drop((u2, i2));
        assert!(!u.may_repeat());
        let long = Key::unshared(&[b'x'; 100], false);
        assert_eq!(long.as_bytes(), &[b'x'; 100][..]);
    }
}
