//! Where keys live: a counted box per key, allocated on its own or among
//! the boxes of a chunk made for the keys of a large hash (see `Chunks`).
//!
//! A box's count of handles is a plain cell: every handle on a key is in
//! one graph, on one thread (`Document::into_send` checks it).

use super::chunks::{release_slot, Chunks, ALONE};
use super::key::KeyInner;
use super::str::Str;
use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::Cell;
use std::ptr::{addr_of_mut, NonNull};

/// A key's allocation: its count of handles, where it sits, and the key.
/// Aligned to 8, so that a long key's heap pointer is aligned (see `Str`).
#[repr(C, align(8))]
pub(crate) struct KeyBox {
    count: Cell<u32>,
    /// Its index in its chunk, or `ALONE`.
    slot: u32,
    pub(super) inner: KeyInner,
}

/// Hands out boxes for the keys of one large hash.
pub(crate) type KeyChunks = Chunks<KeyBox>;

/// Writes a box with one handle at `p`, holding an empty key with these
/// flags: field by field, where it lives (built on the stack and copied,
/// the copy's wide loads would stall on the narrow stores that made it).
///
/// # Safety
/// `p` must be valid for writes of a `KeyBox`.
unsafe fn init(p: *mut KeyBox, slot: u32, flags: u8) -> NonNull<KeyBox> {
    addr_of_mut!((*p).count).write(Cell::new(1));
    addr_of_mut!((*p).slot).write(slot);
    addr_of_mut!((*p).inner).write(KeyInner {
        flags,
        bytes: Str::EMPTY,
    });
    NonNull::new_unchecked(p)
}

impl KeyBox {
    /// A box of its own with one handle, holding an empty key with these
    /// flags.
    pub(super) fn alone(flags: u8) -> NonNull<KeyBox> {
        let layout = Layout::new::<KeyBox>();
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc(layout) }.cast::<KeyBox>();
        if p.is_null() {
            handle_alloc_error(layout);
        }
        // SAFETY: `p` was just allocated for a `KeyBox`.
        unsafe { init(p, ALONE, flags) }
    }

    /// The number of handles on the key.
    #[inline]
    pub(super) fn count(&self) -> usize {
        self.count.get() as usize
    }

    /// Adds a handle.
    #[inline]
    pub(super) fn retain(&self) {
        let c = self.count.get();
        if c == u32::MAX {
            // As `Rc` does when its count would overflow.
            std::process::abort();
        }
        self.count.set(c + 1);
    }

    /// Drops a handle; with the last, drops the key and frees its box (and
    /// the box's chunk, with the last box of it in use).
    ///
    /// # Safety
    /// `p` must be a box made here that still has the handle dropped.
    #[inline]
    pub(super) unsafe fn release(p: NonNull<KeyBox>) {
        let b = p.as_ref();
        let c = b.count.get() - 1;
        b.count.set(c);
        if c == 0 {
            Self::free(p);
        }
    }

    #[cold]
    unsafe fn free(p: NonNull<KeyBox>) {
        let slot = p.as_ref().slot;
        std::ptr::drop_in_place(addr_of_mut!((*p.as_ptr()).inner));
        if slot == ALONE {
            dealloc(p.as_ptr().cast(), Layout::new::<KeyBox>());
        } else {
            release_slot(p.as_ptr(), slot);
        }
    }
}

impl KeyChunks {
    /// A box with one handle, holding an empty key with these flags.
    #[inline]
    pub(super) fn boxed(&mut self, flags: u8) -> NonNull<KeyBox> {
        let (p, slot) = self.next_box();
        // SAFETY: a box handed out is valid for writes; its use of its
        // chunk passes to the key.
        unsafe { init(p, slot, flags) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::value::chunks::CHUNK_BOXES;
    use crate::value::Key;

    #[test]
    fn a_box_is_32_bytes() {
        assert_eq!(std::mem::size_of::<KeyBox>(), 32);
    }

    /// Keys of several chunks (short ones and heap-held long ones), some
    /// boxes never handed out, clones and handles remade from pointers,
    /// all dropped in an order unlike their making, some after their
    /// `KeyChunks`: every key reads back whole, and (under Miri) nothing is
    /// used after it is freed, and nothing leaks.
    #[test]
    fn chunked_keys_live_as_long_as_their_handles() {
        let n = CHUNK_BOXES + 40;
        let name = |i: usize| {
            if i.is_multiple_of(5) {
                format!("long key number {i} past the inline bytes")
            } else {
                format!("k{i}")
            }
        };
        let mut chunks = KeyChunks::new(n + 3, None);
        let mut keys: Vec<Key> = (0..n)
            .map(|i| Key::unshared_in(&mut chunks, name(i).as_bytes(), i.is_multiple_of(3)))
            .collect();
        let clones: Vec<Key> = keys.iter().step_by(11).cloned().collect();
        // SAFETY: the addresses are of keys alive until the end.
        let remade: Vec<Key> = keys
            .iter()
            .step_by(13)
            .map(|k| unsafe { Key::from_ptr(k.as_ptr()) })
            .collect();
        assert!(keys[0].may_repeat() && !keys[1].may_repeat());
        keys.swap(0, n - 1);
        keys.swap(1, n / 2);
        let later = keys.split_off(n / 3);
        drop(keys);
        drop(chunks);
        for (j, k) in later.iter().enumerate().rev() {
            let i = match n / 3 + j {
                i if i == n / 2 => 1,
                i if i == n - 1 => 0,
                i => i,
            };
            assert_eq!(k.as_bytes(), name(i).as_bytes());
            assert_eq!(k.is_utf8(), i.is_multiple_of(3));
        }
        drop(later);
        for (j, k) in clones.iter().enumerate() {
            assert_eq!(k.as_bytes(), name(11 * j).as_bytes());
        }
        drop(clones);
        for (j, k) in remade.iter().enumerate() {
            assert_eq!(k.as_bytes(), name(13 * j).as_bytes());
            assert!(!k.may_repeat());
        }
    }
}
