//! The scratch space a [`Decoder`](super::Decoder) keeps between decodes.

use std::sync::Mutex;

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

/// Buffers kept for the next decode, or none kept (`sereal::decode`'s
/// decoder, shared by the whole process, keeps nothing).
///
/// A decode takes the buffers when it first needs them and gives them back
/// emptied when it ends; a decode that finds them taken (another thread is
/// decoding with the same decoder) works in buffers of its own, and the
/// larger of the two sets is kept.
pub(crate) struct Scratch(Option<Mutex<Buffers>>);

impl Scratch {
    /// Scratch that keeps buffers.
    pub(crate) fn kept() -> Scratch {
        Scratch(Some(Mutex::default()))
    }

    /// Scratch that keeps nothing.
    pub(crate) const fn none() -> Scratch {
        Scratch(None)
    }

    /// The buffers kept, or new ones.
    pub(crate) fn take(&self) -> Buffers {
        self.0
            .as_ref()
            .and_then(|m| m.try_lock().ok())
            .map(|mut b| std::mem::take(&mut *b))
            .unwrap_or_default()
    }

    /// Keeps `b`, emptied, unless larger buffers are kept.
    pub(crate) fn give(&self, mut b: Buffers) {
        let Some(mut kept) = self.0.as_ref().and_then(|m| m.try_lock().ok()) else {
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
    /// A clone keeps buffers of its own, if the original keeps any.
    fn clone(&self) -> Scratch {
        Scratch(self.0.as_ref().map(|_| Mutex::default()))
    }
}
