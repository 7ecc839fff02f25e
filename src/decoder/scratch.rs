//! The scratch space a [`Decoder`](super::Decoder) keeps between decodes.

use crate::value::ChunkPool;
use std::sync::{Arc, Mutex};

/// The buffers a decode of large hashes works in: the content hash and
/// the position of each of their keys.
#[derive(Default)]
pub(crate) struct Buffers {
    pub(crate) key_hash: Vec<u64>,
    pub(crate) key_pos: Vec<usize>,
}

impl Buffers {
    fn bytes(&self) -> usize {
        self.key_hash.capacity() * 8 + self.key_pos.capacity() * 8
    }
}

/// Buffers and key chunks kept for the next decode, or none kept
/// (`sereal::decode`'s decoder, shared by the whole process, keeps nothing).
///
/// A decode takes the buffers when it first needs them and gives them back
/// emptied when it ends; a decode that finds them taken (another thread is
/// decoding with the same decoder) works in buffers of its own, and the
/// larger of the two sets is kept. The key chunks of large hashes come
/// back to the pool as the documents whose keys they hold are dropped.
pub(crate) struct Scratch(Option<Kept>);

struct Kept {
    buffers: Mutex<Buffers>,
    chunks: Arc<ChunkPool>,
}

impl Scratch {
    /// Scratch that keeps buffers and chunks.
    pub(crate) fn kept() -> Scratch {
        Scratch(Some(Kept {
            buffers: Mutex::default(),
            chunks: ChunkPool::new(),
        }))
    }

    /// Scratch that keeps nothing.
    pub(crate) const fn none() -> Scratch {
        Scratch(None)
    }

    /// The buffers kept, or new ones.
    pub(crate) fn take(&self) -> Buffers {
        self.0
            .as_ref()
            .and_then(|k| k.buffers.try_lock().ok())
            .map(|mut b| std::mem::take(&mut *b))
            .unwrap_or_default()
    }

    /// The pool key chunks are taken from, if chunks are kept.
    pub(crate) fn chunks(&self) -> Option<Arc<ChunkPool>> {
        self.0.as_ref().map(|k| Arc::clone(&k.chunks))
    }

    /// Notes that a decode used `n` full key chunks: the pool keeps as
    /// many as one decode used at most.
    pub(crate) fn used_chunks(&self, n: usize) {
        if let Some(k) = &self.0 {
            k.chunks.note_used(n);
        }
    }

    /// Keeps `b`, emptied, unless larger buffers are kept.
    pub(crate) fn give(&self, mut b: Buffers) {
        let Some(mut kept) = self.0.as_ref().and_then(|k| k.buffers.try_lock().ok()) else {
            return;
        };
        if b.bytes() > kept.bytes() {
            b.key_hash.clear();
            b.key_pos.clear();
            *kept = b;
        }
    }
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch::kept()
    }
}

impl Clone for Scratch {
    /// A clone keeps buffers and chunks of its own, if the original keeps
    /// any.
    fn clone(&self) -> Scratch {
        match self.0 {
            Some(_) => Scratch::kept(),
            None => Scratch::none(),
        }
    }
}
