//! `Hash`: an insertion-ordered map from interned keys to values.

use super::{Key, Value};
use hashbrown::HashTable;

/// Hashes at most this long are searched by a scan; longer ones get an index.
const SCAN_LIMIT: usize = 12;

/// An insertion-ordered hash, the body of a Perl hash.
///
/// Entries sit contiguously in insertion order (what the encoder walks);
/// hashes longer than a dozen entries also keep an index from key to position
/// for lookups. Keys are [`Key`]s: interned keys of equal content are one
/// pointer, which makes the scan of a small hash a pointer comparison.
///
/// ```
/// use sereal::{Hash, Value};
/// let mut h = Hash::new();
/// h.insert("id", 7);
/// h.insert("name", "ann");
/// assert_eq!(h.get("id"), Some(&Value::Int(7)));
/// assert_eq!(h.keys().map(|k| k.to_string()).collect::<Vec<_>>(), ["id", "name"]);
/// h.insert("id", 8); // replacing keeps the position
/// assert_eq!(h.iter().next().unwrap().1, &Value::Int(8));
/// ```
#[derive(Clone)]
pub struct Hash(Repr);

/// Small hashes are just their entries; large ones carry an index too. Both
/// forms fit in 24 bytes, which keeps every node small.
#[derive(Clone)]
enum Repr {
    Small(Vec<(Key, Value)>),
    Indexed(Box<Indexed>),
}

#[derive(Clone)]
struct Indexed {
    entries: Vec<(Key, Value)>,
    index: HashTable<u32>,
}

impl Default for Hash {
    fn default() -> Hash {
        Hash(Repr::Small(Vec::new()))
    }
}

/// Appends `(key, Undef)`, writing the two fields straight into the
/// buffer: a pushed tuple is built on the stack first and copied with wide
/// loads over its narrow stores, a store-forwarding stall per entry.
#[inline]
fn push_entry(entries: &mut Vec<(Key, Value)>, key: Key) {
    entries.reserve(1);
    let len = entries.len();
    // SAFETY: `reserve` made room for one more entry at `len`; both fields
    // are written before the length covers them.
    unsafe {
        let slot = entries.as_mut_ptr().add(len);
        std::ptr::addr_of_mut!((*slot).0).write(key);
        std::ptr::addr_of_mut!((*slot).1).write(Value::Undef);
        entries.set_len(len + 1);
    }
}

impl Hash {
    /// An empty hash.
    ///
    /// ```
    /// use sereal::{Hash, Value};
    /// let mut h = Hash::new();
    /// assert!(h.is_empty());
    /// h.insert("k", 1);
    /// assert_eq!(Value::from(h), Value::hash([("k", 1)]));
    /// ```
    pub fn new() -> Hash {
        Hash::default()
    }

    /// An empty hash with room for `n` entries (and, past a dozen, an index
    /// of that size).
    ///
    /// ```
    /// use sereal::Hash;
    /// let mut h = Hash::with_capacity(1000);
    /// for i in 0..1000 {
    ///     h.insert(format!("id{i}"), i);
    /// }
    /// assert_eq!(h.len(), 1000);
    /// assert_eq!(h["id999"], 999);
    /// ```
    pub fn with_capacity(n: usize) -> Hash {
        if n <= SCAN_LIMIT {
            return Hash(Repr::Small(Vec::with_capacity(n)));
        }
        Hash(Repr::Indexed(Box::new(Indexed {
            entries: Vec::with_capacity(n),
            index: HashTable::with_capacity(n),
        })))
    }

    /// An empty hash with room for `n` entries and no index, for
    /// [`Hash::push_unindexed`] and [`Hash::index_all`] to fill: an index
    /// made now would be thrown away by `index_all`.
    pub(crate) fn unindexed(n: usize) -> Hash {
        Hash(Repr::Small(Vec::with_capacity(n)))
    }

    /// The number of entries.
    ///
    /// ```
    /// use sereal::Hash;
    /// let mut h: Hash = [("a", 1), ("b", 2)].into();
    /// assert_eq!(h.len(), 2);
    /// h.insert("a", 3); // replaced, not added
    /// assert_eq!(h.len(), 2);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether the hash has no entries.
    ///
    /// ```
    /// use sereal::Hash;
    /// let mut h = Hash::new();
    /// assert!(h.is_empty());
    /// h.insert("a", 1);
    /// assert!(!h.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    /// The entries as a slice, in insertion order.
    ///
    /// ```
    /// use sereal::{Hash, Value};
    /// let h: Hash = [("z", 1), ("a", 2)].into();
    /// let (key, value) = &h.entries()[0];
    /// assert_eq!((key.as_str(), value), (Some("z"), &Value::Int(1))); // insertion order
    /// ```
    #[inline]
    pub fn entries(&self) -> &[(Key, Value)] {
        match &self.0 {
            Repr::Small(v) => v,
            Repr::Indexed(ix) => &ix.entries,
        }
    }

    #[inline]
    pub(super) fn entries_mut(&mut self) -> &mut Vec<(Key, Value)> {
        match &mut self.0 {
            Repr::Small(v) => v,
            Repr::Indexed(ix) => &mut ix.entries,
        }
    }

    fn position(&self, key: &Key) -> Option<usize> {
        match &self.0 {
            Repr::Small(v) => v.iter().position(|(k, _)| k == key),
            Repr::Indexed(ix) => ix
                .index
                .find(key.content_hash(), |&i| &ix.entries[i as usize].0 == key)
                .map(|&i| i as usize),
        }
    }

    fn position_str(&self, s: &[u8]) -> Option<usize> {
        match &self.0 {
            Repr::Small(v) => v.iter().position(|(k, _)| k.as_bytes() == s),
            Repr::Indexed(ix) => [false, true].into_iter().find_map(|utf8| {
                ix.index
                    .find(super::key::content_hash(utf8, s), |&i| {
                        ix.entries[i as usize].0.is(utf8, s)
                    })
                    .map(|&i| i as usize)
            }),
        }
    }

    /// Re-derives the representation from the entries: an index exactly
    /// when there are more than `SCAN_LIMIT` of them. Gives the position of
    /// the first entry whose key repeats an earlier one (what the index
    /// finds on the way; a scanned hash is not checked).
    fn reindex(&mut self) -> Result<(), usize> {
        self.reindex_with(|_, k| k.content_hash(), |_, _| true)
    }

    /// As [`Hash::reindex`], with `hash(i, key)` the content hash of entry
    /// `i`'s key, and `maybe_same(j, h)` false when entry `j`'s key cannot
    /// have the hash `h` (a check that spares reading the key).
    fn reindex_with(
        &mut self,
        hash: impl Fn(usize, &Key) -> u64,
        maybe_same: impl Fn(usize, u64) -> bool,
    ) -> Result<(), usize> {
        let entries = std::mem::take(self.entries_mut());
        if entries.len() <= SCAN_LIMIT {
            self.0 = Repr::Small(entries);
            return Ok(());
        }
        let mut index = HashTable::with_capacity(entries.len());
        let mut dup = None;
        for (i, (k, _)) in entries.iter().enumerate() {
            let h = hash(i, k);
            match index.entry(
                h,
                |&j| maybe_same(j as usize, h) && &entries[j as usize].0 == k,
                |&j| entries[j as usize].0.content_hash(),
            ) {
                hashbrown::hash_table::Entry::Occupied(_) => {
                    dup = Some(i);
                    break;
                }
                hashbrown::hash_table::Entry::Vacant(e) => {
                    e.insert(i as u32);
                }
            }
        }
        self.0 = Repr::Indexed(Box::new(Indexed { entries, index }));
        dup.map_or(Ok(()), Err)
    }

    /// `reindex` of a hash whose keys are known to be distinct.
    fn reindex_distinct(&mut self) {
        let distinct = self.reindex();
        debug_assert!(distinct.is_ok(), "a hash held a key twice");
    }

    /// Inserts or replaces the value for `key`; returns the old value.
    /// A new key goes to the end; a replaced one keeps its position.
    ///
    /// ```
    /// use sereal::{Hash, Value};
    /// let mut h = Hash::new();
    /// assert_eq!(h.insert("a", 1), None);
    /// h.insert("b", 2);
    /// assert_eq!(h.insert("a", "one"), Some(Value::Int(1)));
    /// let keys: Vec<String> = h.keys().map(|k| k.to_string()).collect();
    /// assert_eq!(keys, ["a", "b"]); // "a" kept its place
    /// ```
    pub fn insert(&mut self, key: impl Into<Key>, value: impl Into<Value>) -> Option<Value> {
        let key = key.into();
        let value = value.into();
        if let Some(i) = self.position(&key) {
            return Some(std::mem::replace(&mut self.entries_mut()[i].1, value));
        }
        self.push_new(key, value);
        None
    }

    /// Appends an entry for a key not present yet, with an undefined value,
    /// and returns that value's slot; gives the key back if it is present
    /// (one lookup for both).
    pub(crate) fn push_slot(&mut self, key: Key) -> Result<&mut Value, Key> {
        match &mut self.0 {
            Repr::Small(v) => {
                if v.iter().any(|(k, _)| k == &key) {
                    return Err(key);
                }
                push_entry(v, key);
                if v.len() > SCAN_LIMIT {
                    self.reindex_distinct();
                }
            }
            Repr::Indexed(ix) => {
                let i = ix.entries.len() as u32;
                let entries = &ix.entries;
                match ix.index.entry(
                    key.content_hash(),
                    |&j| entries[j as usize].0 == key,
                    |&j| entries[j as usize].0.content_hash(),
                ) {
                    hashbrown::hash_table::Entry::Occupied(_) => return Err(key),
                    hashbrown::hash_table::Entry::Vacant(e) => {
                        e.insert(i);
                    }
                }
                push_entry(&mut ix.entries, key);
            }
        }
        let (_, v) = self.entries_mut().last_mut().expect("just pushed");
        Ok(v)
    }

    /// Appends `(key, Undef)` without indexing it; [`Hash::index_all`] must
    /// index the hash before any other use. Inserting every key in one loop
    /// afterwards lets the processor overlap the index's cache misses, which
    /// a loop that also parses values between them serializes.
    #[inline]
    pub(crate) fn push_unindexed(&mut self, key: Key) {
        push_entry(self.entries_mut(), key);
    }

    /// Sets the value of the last entry (made by [`Hash::push_unindexed`]
    /// before its value was read).
    #[inline]
    pub(crate) fn set_last_value(&mut self, v: Value) {
        if let Some((_, slot)) = self.entries_mut().last_mut() {
            *slot = v;
        }
    }

    /// Indexes the entries pushed by [`Hash::push_unindexed`], `hash(i)`
    /// being the content hash of entry `i`'s key (computed while the key
    /// was made, so indexing does not read every key again); gives the
    /// position of the first entry whose key repeats an earlier one.
    pub(crate) fn index_all(&mut self, hash: impl Fn(usize) -> u64) -> Result<(), usize> {
        match &self.0 {
            // A hash scanned, not indexed: `reindex_with` does not check it.
            Repr::Small(v) if v.len() <= SCAN_LIMIT => {
                let dup = (1..v.len()).find(|&i| v[..i].iter().any(|(k, _)| k == &v[i].0));
                return dup.map_or(Ok(()), Err);
            }
            _ => {}
        }
        self.reindex_with(|i, _| hash(i), |j, h| hash(j) == h)
    }

    /// Appends an entry whose key the caller knows is not present.
    pub(crate) fn push_new(&mut self, key: Key, value: Value) {
        match &mut self.0 {
            Repr::Small(v) => {
                v.push((key, value));
                if v.len() > SCAN_LIMIT {
                    self.reindex_distinct();
                }
            }
            Repr::Indexed(ix) => {
                let i = ix.entries.len() as u32;
                let h = key.content_hash();
                ix.entries.push((key, value));
                let entries = &ix.entries;
                ix.index
                    .insert_unique(h, i, |&j| entries[j as usize].0.content_hash());
            }
        }
    }

    /// The value for a key given as text (either UTF-8 flag matches).
    ///
    /// ```
    /// use sereal::{Hash, Key};
    /// let mut h = Hash::new();
    /// h.insert(Key::bytes("id"), 7);
    /// h.insert(Key::utf8("name"), "ann");
    /// assert_eq!(h.get("id"), Some(&7.into()));
    /// assert!(h.get("name").is_some_and(|v| v == "ann")); // a UTF-8 key too
    /// assert_eq!(h.get("missing"), None);
    /// ```
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.position_str(key.as_bytes())
            .map(|i| &self.entries()[i].1)
    }

    /// The value for a key given as text, for changing.
    ///
    /// ```
    /// use sereal::{Hash, Value};
    /// let mut h: Hash = [("hits", 1)].into();
    /// if let Some(v) = h.get_mut("hits") {
    ///     *v = Value::from(v.as_i64().unwrap() + 1);
    /// }
    /// assert_eq!(h["hits"], 2);
    /// ```
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.position_str(key.as_bytes())
            .map(move |i| &mut self.entries_mut()[i].1)
    }

    /// The value for a [`Key`].
    ///
    /// ```
    /// use sereal::{Hash, Key};
    /// let mut h = Hash::new();
    /// h.insert(Key::utf8("id"), "flagged");
    /// h.insert(Key::bytes("id"), "bytes"); // Perl holds these as one key; here two
    /// assert_eq!(h.get_key(&Key::utf8("id")).unwrap(), "flagged");
    /// assert_eq!(h.get_key(&Key::bytes("id")).unwrap(), "bytes");
    /// ```
    pub fn get_key(&self, key: &Key) -> Option<&Value> {
        self.position(key).map(|i| &self.entries()[i].1)
    }

    /// Whether a key given as text is present.
    ///
    /// ```
    /// use sereal::Hash;
    /// let h: Hash = [("a", 1)].into();
    /// assert!(h.contains_key("a"));
    /// assert!(!h.contains_key("b"));
    /// ```
    pub fn contains_key(&self, key: &str) -> bool {
        self.position_str(key.as_bytes()).is_some()
    }

    /// Removes a key, keeping the order of the others; returns its value.
    ///
    /// ```
    /// use sereal::{Hash, Value};
    /// let mut h: Hash = [("a", 1), ("b", 2), ("c", 3)].into();
    /// assert_eq!(h.remove("b"), Some(Value::Int(2)));
    /// assert_eq!(h.remove("b"), None);
    /// let keys: Vec<String> = h.keys().map(|k| k.to_string()).collect();
    /// assert_eq!(keys, ["a", "c"]);
    /// ```
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.position_str(key.as_bytes())?;
        let (_, v) = self.entries_mut().remove(i);
        if matches!(self.0, Repr::Indexed(_)) {
            self.reindex_distinct();
        }
        Some(v)
    }

    /// Removes every entry.
    ///
    /// ```
    /// use sereal::Hash;
    /// let mut h: Hash = [("a", 1), ("b", 2)].into();
    /// h.clear();
    /// assert!(h.is_empty() && h.get("a").is_none());
    /// ```
    pub fn clear(&mut self) {
        self.0 = Repr::Small(Vec::new());
    }

    /// The entries in insertion order.
    ///
    /// ```
    /// use sereal::Hash;
    /// let h: Hash = [("b", 2), ("a", 1)].into();
    /// let pairs: Vec<(String, i64)> = h.iter().map(|(k, v)| (k.to_string(), v.as_i64().unwrap())).collect();
    /// assert_eq!(pairs, [("b".to_string(), 2), ("a".to_string(), 1)]);
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Key, &Value)> + '_ {
        self.entries().iter().map(|(k, v)| (k, v))
    }

    /// The entries in insertion order, values mutable.
    ///
    /// ```
    /// use sereal::{Hash, Value};
    /// let mut h: Hash = [("a", 1), ("b", 2)].into();
    /// for (_, v) in h.iter_mut() {
    ///     *v = Value::from(v.as_i64().unwrap() * 10);
    /// }
    /// assert_eq!((h["a"].as_i64(), h["b"].as_i64()), (Some(10), Some(20)));
    /// ```
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (&Key, &mut Value)> + '_ {
        self.entries_mut().iter_mut().map(|(k, v)| (&*k, v))
    }

    /// The keys in insertion order.
    ///
    /// ```
    /// use sereal::Hash;
    /// let h: Hash = [("name", "ann"), ("id", "7")].into();
    /// let keys: Vec<&str> = h.keys().map(|k| k.as_str().unwrap()).collect();
    /// assert_eq!(keys, ["name", "id"]);
    /// ```
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &Key> + '_ {
        self.entries().iter().map(|(k, _)| k)
    }

    /// The values in insertion order.
    ///
    /// ```
    /// use sereal::Hash;
    /// let h: Hash = [("a", 1), ("b", 2), ("c", 3)].into();
    /// let sum: i64 = h.values().filter_map(|v| v.as_i64()).sum();
    /// assert_eq!(sum, 6);
    /// ```
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> + '_ {
        self.entries().iter().map(|(_, v)| v)
    }
}

/// `hash["key"]`: the value of a key given as text, `Value::Undef` for a
/// missing one (as `serde_json` does).
///
/// ```
/// use sereal::{Hash, Value};
/// let h: Hash = [("id", 7)].into_iter().collect();
/// assert_eq!(h["id"], Value::Int(7));
/// assert!(h["nope"].is_undef());
/// ```
impl std::ops::Index<&str> for Hash {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        const UNDEF: &Value = &Value::Undef;
        self.get(key).unwrap_or(UNDEF)
    }
}

impl<K: Into<Key>, V: Into<Value>, const N: usize> From<[(K, V); N]> for Hash {
    /// A hash of `entries`, in their order, as [`Value::hash`] takes them:
    /// `Ref::hash([("x", 1)].into())`.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let point = Ref::hash([("x", 1), ("y", 2)].into()).blessed("Point");
    /// assert_eq!(Value::from(&point).get("y"), Some(Value::from(2)));
    /// ```
    fn from(entries: [(K, V); N]) -> Hash {
        entries.into_iter().collect()
    }
}

impl<K: Into<Key>, V: Into<Value>> FromIterator<(K, V)> for Hash {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Hash {
        let iter = iter.into_iter();
        let mut h = Hash::with_capacity(iter.size_hint().0);
        for (k, v) in iter {
            h.insert(k, v);
        }
        h
    }
}

impl<K: Into<Key>, V: Into<Value>> Extend<(K, V)> for Hash {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl IntoIterator for Hash {
    type Item = (Key, Value);
    type IntoIter = std::vec::IntoIter<(Key, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        match self.0 {
            Repr::Small(v) => v.into_iter(),
            Repr::Indexed(ix) => ix.entries.into_iter(),
        }
    }
}

impl std::fmt::Debug for Hash {
    /// The entries in their order, as a map.
    ///
    /// ```
    /// let h: sereal::Hash = [("a", 1)].into_iter().collect();
    /// assert_eq!(format!("{h:?}"), r#"{"a": 1}"#);
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_hash_indexes_and_keeps_order() {
        // Under Miri, a hash still well past `SCAN_LIMIT`.
        let n: i64 = if cfg!(miri) { 50 } else { 1000 };
        let mut h = Hash::new();
        for i in 0..n {
            assert!(h.insert(format!("k{i}"), i).is_none());
        }
        assert!(matches!(h.0, Repr::Indexed(_)));
        assert_eq!(h.get(&format!("k{}", n / 2)), Some(&Value::Int(n / 2)));
        assert_eq!(h.insert("k10", -1), Some(Value::Int(10)));
        assert_eq!(h.remove("k0"), Some(Value::Int(0)));
        assert_eq!(h.len() as i64, n - 1);
        assert_eq!(h.keys().next().unwrap().to_string(), "k1");
        assert_eq!(h.get(&format!("k{}", n - 1)), Some(&Value::Int(n - 1)));
        assert!(!h.contains_key("k0"));
        assert_eq!(std::mem::size_of::<Hash>(), 24);
        for i in 1..n - 10 {
            h.remove(&format!("k{i}"));
        }
        assert!(matches!(h.0, Repr::Small(_)));
        assert_eq!(h.get(&format!("k{}", n - 5)), Some(&Value::Int(n - 5)));
        assert!(h.get("nope").is_none());
    }
}
