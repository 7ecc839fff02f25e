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

/// Buffers and chunks kept for the next decode, or none kept
/// (`sereal::decode`'s decoder, shared by the whole process, keeps nothing).
///
/// A decode takes the buffers when it first needs them and gives them back
/// emptied when it ends; a decode that finds them taken (another thread is
/// decoding with the same decoder) works in buffers of its own, and the
/// larger of the two sets is kept. The chunks of nodes, and of the keys of
/// large hashes, come back to their pools as the documents they hold are
/// dropped.
pub(crate) struct Scratch(Option<Kept>);

struct Kept {
    buffers: Mutex<Buffers>,
    keys: Arc<ChunkPool>,
    nodes: Arc<ChunkPool>,
}

impl Scratch {
    /// Scratch that keeps buffers and chunks.
    pub(crate) fn kept() -> Scratch {
        Scratch(Some(Kept {
            buffers: Mutex::default(),
            keys: ChunkPool::new(),
            nodes: ChunkPool::new(),
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
    pub(crate) fn key_chunks(&self) -> Option<Arc<ChunkPool>> {
        self.0.as_ref().map(|k| Arc::clone(&k.keys))
    }

    /// The pool node chunks are taken from, if chunks are kept.
    pub(crate) fn node_chunks(&self) -> Option<Arc<ChunkPool>> {
        self.0.as_ref().map(|k| Arc::clone(&k.nodes))
    }

    /// Notes that a decode used this many full chunks of keys and of
    /// nodes: each pool keeps as many as one decode used at most.
    pub(crate) fn used_chunks(&self, keys: usize, nodes: usize) {
        if let Some(k) = &self.0 {
            k.keys.note_used(keys);
            k.nodes.note_used(nodes);
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
