//! The entries of large hashes, read first and indexed after, and the keys
//! of theirs that later `COPY`s name.
//!
//! The keys of a small hash are kept by position in `ReadKeys`, one handle
//! each. A large hash's keys are not: keeping them would clone and later
//! drop every key of a hash that may be most of the document, touching each
//! key's memory twice more. Instead each key's position is noted, and a
//! `COPY` of it finds the key in the hash itself: in the hash being read,
//! which the reader holds while its values are read, or in the node of a
//! hash read before.

use super::{Reader, StrKind, UNSHARED_KEYS};
use crate::decoder::scratch::{Buffers, Scratch};
use crate::error::Result;
use crate::protocol::{tag, TRACK_FLAG};
use crate::value::{content_hash, Body, Hash, Key, KeyChunks, Ref, Value};

/// The keys of the large hashes of one document, by position.
#[derive(Default)]
pub(super) struct LargeKeys {
    /// The position of every key of every large hash, in document order.
    pos: Vec<usize>,
    /// The content hash of each key of the large hashes being read (a
    /// stack: a hash read inside another pushes its keys' and pops them).
    key_hash: Vec<u64>,
    /// Whether `pos` and `key_hash` are the decoder's kept buffers, taken
    /// at the first large hash, to be given back at the end.
    taken: bool,
    /// Stretches of `pos` each of one hash: from `pos[at]` on, the keys of
    /// hash `hash` from its entry `entry` on. A hash read inside a value of
    /// another splits the outer hash's keys into two stretches.
    runs: Vec<Run>,
    /// Each large hash: being read, read (its node), or read and not yet
    /// placed in its node.
    hashes: Vec<Slot>,
    /// The hashes being read, innermost last, with their numbers.
    open: Vec<(usize, Hash)>,
    /// The hash read last, until its node is known.
    unplaced: Option<usize>,
    /// The full key chunks the document's large hashes used.
    full_chunks: usize,
}

struct Run {
    at: usize,
    hash: usize,
    entry: usize,
}

enum Slot {
    Open(usize),
    Unplaced,
    Placed(Ref),
}

impl LargeKeys {
    /// Works in the buffers `scratch` keeps, from the first large hash on.
    fn take_buffers(&mut self, scratch: &Scratch) {
        if !self.taken {
            let b = scratch.take();
            (self.key_hash, self.pos, self.taken) = (b.key_hash, b.key_pos, true);
        }
    }

    /// The full key chunks the document's large hashes used.
    pub(super) fn full_chunks(&self) -> usize {
        self.full_chunks
    }

    /// Lets go of the hashes, and gives back the buffers taken from the
    /// decoder's scratch, if any were.
    pub(super) fn into_buffers(self) -> Option<Buffers> {
        self.taken.then_some(Buffers {
            key_hash: self.key_hash,
            key_pos: self.pos,
        })
    }

    /// Starts reading `h` (empty) as a large hash of `n` entries.
    fn open(&mut self, h: Hash, n: usize) {
        let hash = self.hashes.len();
        self.hashes.push(Slot::Open(self.open.len()));
        self.open.push((hash, h));
        self.runs.push(Run {
            at: self.pos.len(),
            hash,
            entry: 0,
        });
        self.pos.reserve(n);
    }

    /// The hash being read.
    fn current(&mut self) -> &mut Hash {
        &mut self.open.last_mut().expect("a hash is open").1
    }

    /// Ends reading the innermost hash and gives it back with its number;
    /// the keys noted from here on are the enclosing hash's again, if there
    /// is one.
    fn close(&mut self) -> (usize, Hash) {
        let (hash, h) = self.open.pop().expect("a hash is open");
        self.hashes[hash] = Slot::Unplaced;
        self.unplaced = Some(hash);
        if let Some((outer, oh)) = self.open.last() {
            self.runs.push(Run {
                at: self.pos.len(),
                hash: *outer,
                entry: oh.len(),
            });
        }
        (hash, h)
    }

    /// Notes the node that the hash read last was placed in.
    pub(super) fn placed(&mut self, node: &Ref) {
        if let Some(hash) = self.unplaced.take() {
            self.hashes[hash] = Slot::Placed(node.clone());
        }
    }

    /// The key of a large hash whose tag is at `pos`.
    fn at(&self, pos: usize) -> Option<Key> {
        let g = self.pos.binary_search(&pos).ok()?;
        let run = &self.runs[self.runs.partition_point(|r| r.at <= g).checked_sub(1)?];
        let entry = run.entry + (g - run.at);
        match &self.hashes[run.hash] {
            Slot::Open(i) => Some(self.open[*i].1.entries().get(entry)?.0.clone()),
            Slot::Placed(node) => match &*node.try_body().ok()? {
                Body::Hash(h) => Some(h.entries().get(entry)?.0.clone()),
                _ => None,
            },
            Slot::Unplaced => None,
        }
    }

    /// The position of entry `entry`'s key in hash `hash` (for an error).
    fn position(&self, hash: usize, entry: usize) -> usize {
        let mut found = 0;
        for (i, run) in self.runs.iter().enumerate() {
            if run.hash != hash || run.entry > entry {
                continue;
            }
            let end = self.runs.get(i + 1).map_or(self.pos.len(), |r| r.at);
            if entry - run.entry < end - run.at {
                found = self.pos[run.at + entry - run.entry];
            }
        }
        found
    }
}

impl Reader<'_, '_> {
    /// The key of an earlier large hash whose tag is at `pos`, for the key
    /// `COPY` at `at`, if that is where a key of one begins. A `COPY` is
    /// never the target of another.
    pub(super) fn large_key_at(&mut self, pos: usize, at: usize) -> Option<Key> {
        if self.cur.bytes()[pos] & !TRACK_FLAG == tag::COPY {
            return None;
        }
        let k = self.large.at(pos)?;
        // A THAW handler run while the document is read may have changed
        // a hash read before: the key found must be the one written there.
        let (b, kind) = self.string_at(pos, at, "as a hash key", false).ok()?;
        k.is(kind == StrKind::Utf8, b).then_some(k)
    }

    /// The entries of a hash of more than `BATCH_INDEX`: read first, then
    /// indexed in one loop (see `Hash::push_unindexed`).
    pub(super) fn large_hash_entries(&mut self, h: &mut Hash, n: usize) -> Result<()> {
        self.large.take_buffers(self.scratch);
        self.large.open(std::mem::take(h), n);
        let read = self.read_large(n);
        let hash;
        (hash, *h) = self.large.close();
        read?;
        let first = self.large.key_hash.len() - n;
        let hashes = &self.large.key_hash[first..];
        let r = match h.index_all(|i| hashes[i]) {
            Ok(()) => Ok(()),
            Err(i) => Err(self.duplicate_key(&h.entries()[i].0, self.large.position(hash, i))),
        };
        self.large.key_hash.truncate(first);
        r
    }

    /// Reads the `n` entries of the innermost open large hash, noting each
    /// key's position and content hash.
    fn read_large(&mut self, n: usize) -> Result<()> {
        // The keys of a large hash are not interned (see `Key`), and are
        // allocated in chunks (see `KeyChunks`).
        let mut chunks = (n >= UNSHARED_KEYS).then(|| KeyChunks::new(n, self.scratch.key_chunks()));
        let read = self.read_large_in(n, chunks.as_mut());
        self.large.full_chunks += chunks.map_or(0, |c| c.full_chunks());
        read
    }

    /// [`Reader::read_large`], the keys in `chunks` if there are any.
    fn read_large_in(&mut self, n: usize, mut chunks: Option<&mut KeyChunks>) -> Result<()> {
        // The content hash of each key is taken while the key is at hand;
        // its stack grows once per hash (`n` is bounded by the bytes left).
        self.large.key_hash.reserve(n);
        for _ in 0..n {
            // The hash of a new key is taken from the document's bytes: the
            // key's own copy was just written, and reading it back at once
            // stalls on the stores that made it.
            let mut fresh = None;
            let (k, at, _) = self.read_key(|b, utf8| {
                fresh = Some(content_hash(utf8, b));
                match chunks.as_deref_mut() {
                    Some(chunks) => Key::unshared_in(chunks, b, utf8),
                    None => Key::new(b, utf8),
                }
            })?;
            self.large
                .key_hash
                .push(fresh.unwrap_or_else(|| k.content_hash()));
            self.large.pos.push(at);
            // The entry is made before its value is read, so that a key
            // inside the value can `COPY` this one.
            self.large.current().push_unindexed(k);
            let mut v = Value::Undef;
            let read = self.read_into(&mut v);
            self.large.current().set_last_value(v);
            read?;
        }
        Ok(())
    }
}
