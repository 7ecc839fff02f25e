//! The strings a document records for Perl's `COPY`s.

use super::*;

/// Strings already written (hash keys, and values with `dedupe_strings`):
/// where their bytes are in the output, and their body offsets. A document
/// with no keys and no deduplicated strings never builds the table.
#[derive(Default)]
pub(super) struct Strings {
    /// `(hash, position of the bytes in the output, length, utf8, offset)`
    table: HashTable<(u64, usize, u32, bool, u64)>,
    hasher: Option<hashbrown::DefaultHashBuilder>,
}

impl Strings {
    pub(super) fn hash(&mut self, bytes: &[u8], utf8: bool) -> u64 {
        let mut h = self
            .hasher
            .get_or_insert_with(Default::default)
            .build_hasher();
        h.write(bytes);
        h.write_u8(utf8 as u8);
        h.finish()
    }

    /// The offset of a string equal to `bytes` written before into `out`,
    /// or the hash to [`record`](Self::record) it with.
    #[inline]
    pub(super) fn find(
        &mut self,
        out: &[u8],
        bytes: &[u8],
        utf8: bool,
    ) -> std::result::Result<u64, u64> {
        let hash = self.hash(bytes, utf8);
        match self.table.find(hash, |e| {
            e.0 == hash && e.3 == utf8 && out.get(e.1..e.1 + e.2 as usize) == Some(bytes)
        }) {
            Some(e) => Ok(e.4),
            None => Err(hash),
        }
    }

    /// Records the string whose `len` bytes are at `pos` in the output,
    /// and whose item starts at body offset `offset`.
    #[inline]
    pub(super) fn record(&mut self, hash: u64, pos: usize, len: usize, utf8: bool, offset: u64) {
        let entry = (hash, pos, len as u32, utf8, offset);
        self.table.insert_unique(hash, entry, |e| e.0);
    }

    /// Room for `n` more strings without growing the table.
    pub(super) fn reserve(&mut self, n: usize) {
        self.table.reserve(n, |e| e.0);
    }
}

/// The strings a document with more than one hash, or with deduplicated
/// strings, records: hash keys, string values, and a cache of struct field
/// names by address (fixed for a `&'static str`), so that a repeated field
/// name is found without hashing its text.
#[derive(Default)]
pub(super) struct Tables {
    pub(super) keys: Strings,
    pub(super) values: Strings,
    /// Class names of objects, for `OBJECTV`.
    pub(super) classes: Strings,
    pub(super) fields: FieldCache,
}

const FIELD_SLOTS: usize = 64;
/// Slots a name may take, from its home slot on.
const FIELD_PROBES: usize = 4;

/// Field names by address: `(address, length, offset)`, 0 for an empty
/// slot; each name sits in one of the `FIELD_PROBES` slots from its home
/// slot, so a struct's names rarely evict each other.
pub(super) struct FieldCache([(usize, usize, u64); FIELD_SLOTS]);

impl Default for FieldCache {
    fn default() -> FieldCache {
        FieldCache([(0, 0, 0); FIELD_SLOTS])
    }
}

impl FieldCache {
    #[inline]
    fn home(addr: usize) -> usize {
        ((addr as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
    }

    /// The offset of the field name at `addr` (`len` bytes), if cached.
    #[inline]
    pub(super) fn get(&self, addr: usize, len: usize) -> Option<u64> {
        let home = Self::home(addr);
        for i in 0..FIELD_PROBES {
            let (a, n, off) = self.0[(home + i) % FIELD_SLOTS];
            if a == addr && n == len {
                return Some(off);
            }
            if a == 0 {
                return None;
            }
        }
        None
    }

    /// Caches the offset of the field name at `addr`: in the first free
    /// slot of its probes, or in its home slot when they are all taken.
    pub(super) fn put(&mut self, addr: usize, len: usize, off: u64) {
        let home = Self::home(addr);
        let slot = (0..FIELD_PROBES)
            .map(|i| (home + i) % FIELD_SLOTS)
            .find(|&j| self.0[j].0 == 0)
            .unwrap_or(home);
        self.0[slot] = (addr, len, off);
    }
}
