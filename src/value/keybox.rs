//! Where keys live: a counted box per key, allocated on its own or among
//! the boxes of a chunk made for the keys of a large hash.
//!
//! A decoded hash of 300,000 keys would otherwise make 300,000 allocations
//! of 48 bytes, one after another: a quarter of the decode's instructions
//! went to the allocator. A chunk holds up to 1,024 boxes of 32 bytes in
//! one allocation (as many as the hash has keys left), and goes when the
//! last of its keys does.
//!
//! A box's count of handles is a plain cell: every handle on a key is in
//! one graph, on one thread (`Document::into_send` checks it). The keys of
//! one chunk may end up in graphs on different threads, so a chunk counts
//! its boxes in use atomically.

use super::key::KeyInner;
use super::str::Str;
use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::Cell;
use std::ptr::{addr_of_mut, NonNull};
use std::sync::atomic::{fence, AtomicUsize, Ordering};

/// A key's allocation: its count of handles, where it sits, and the key.
/// Aligned to 8, so that a long key's heap pointer is aligned (see `Str`).
#[repr(C, align(8))]
pub(super) struct KeyBox {
    count: Cell<u32>,
    /// Its index in its chunk, or `ALONE`.
    slot: u32,
    pub(super) inner: KeyInner,
}

/// The `slot` of a box allocated on its own.
const ALONE: u32 = u32::MAX;

/// Boxes a chunk holds at most.
const CHUNK_KEYS: usize = 1024;

/// A chunk starts with this header, then its boxes.
#[repr(C, align(8))]
struct ChunkHead {
    /// Its boxes in use, plus those a [`KeyChunks`] may still hand out.
    live: AtomicUsize,
    /// How many boxes it has.
    boxes: usize,
}

/// The layout of a chunk of `boxes` boxes, and where its boxes start.
fn chunk_layout(boxes: usize) -> (Layout, usize) {
    let boxes = Layout::array::<KeyBox>(boxes).expect("a chunk's size fits");
    Layout::new::<ChunkHead>()
        .extend(boxes)
        .expect("a chunk's size fits")
}

/// Where a chunk's boxes start (the same for every size).
fn boxes_start() -> usize {
    chunk_layout(0).1
}

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
            let offset = boxes_start() + slot as usize * std::mem::size_of::<KeyBox>();
            ChunkHead::release(
                NonNull::new_unchecked(p.as_ptr().cast::<u8>().sub(offset).cast()),
                1,
            );
        }
    }
}

impl ChunkHead {
    /// Drops `n` uses of the chunk; frees it with the last (as `Arc` does:
    /// every use's writes happen before the free).
    ///
    /// # Safety
    /// `head` must be a chunk made by [`KeyChunks`] that still has those
    /// uses.
    unsafe fn release(head: NonNull<ChunkHead>, n: usize) {
        if n == 0 || head.as_ref().live.fetch_sub(n, Ordering::Release) != n {
            return;
        }
        fence(Ordering::Acquire);
        let boxes = head.as_ref().boxes;
        dealloc(head.as_ptr().cast(), chunk_layout(boxes).0);
    }
}

/// Hands out boxes from chunks, for the keys of one large hash.
pub(crate) struct KeyChunks {
    /// The chunk boxes come from, the index of its next free box and its
    /// number of boxes.
    head: Option<NonNull<ChunkHead>>,
    next: usize,
    boxes: usize,
    /// How many more boxes may be asked for (the keys the hash has left).
    left: usize,
}

impl KeyChunks {
    /// Chunks for at most `keys` keys; the first box makes the first chunk.
    pub(crate) fn new(keys: usize) -> KeyChunks {
        KeyChunks {
            head: None,
            next: 0,
            boxes: 0,
            left: keys,
        }
    }

    /// A box with one handle, holding an empty key with these flags.
    #[inline]
    pub(super) fn boxed(&mut self, flags: u8) -> NonNull<KeyBox> {
        if self.next == self.boxes {
            self.grow();
        }
        let head = self.head.expect("a chunk is made");
        let slot = self.next;
        self.next += 1;
        // SAFETY: the chunk is alive (this holds the uses of the boxes it
        // has not handed out), and its box `slot` is within it and was
        // never handed out; that box's use passes to the key.
        unsafe {
            let p = head
                .as_ptr()
                .cast::<u8>()
                .add(boxes_start())
                .cast::<KeyBox>()
                .add(slot);
            init(p, slot as u32, flags)
        }
    }

    /// Lets go of the current chunk and makes a new one, of as many boxes
    /// as are left to ask for (at least one, at most `CHUNK_KEYS`).
    #[cold]
    fn grow(&mut self) {
        self.let_go();
        let boxes = self.left.clamp(1, CHUNK_KEYS);
        self.left -= boxes.min(self.left);
        let (layout, _) = chunk_layout(boxes);
        // SAFETY: the layout has a non-zero size (its header).
        let p = unsafe { alloc(layout) }.cast::<ChunkHead>();
        let Some(head) = NonNull::new(p) else {
            handle_alloc_error(layout)
        };
        // SAFETY: `p` was just allocated for a chunk, whose header comes
        // first. Each box is a use of the chunk from the start: a key
        // dropped while its chunk still hands out boxes cannot free it.
        unsafe {
            p.write(ChunkHead {
                live: AtomicUsize::new(boxes),
                boxes,
            })
        };
        self.head = Some(head);
        self.next = 0;
        self.boxes = boxes;
    }

    /// Gives up the uses of the boxes not handed out.
    fn let_go(&mut self) {
        if let Some(head) = self.head.take() {
            // SAFETY: this held the uses of the boxes from `next` on.
            unsafe { ChunkHead::release(head, self.boxes - self.next) };
        }
    }
}

impl Drop for KeyChunks {
    fn drop(&mut self) {
        self.let_go();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::value::Key;

    #[test]
    fn a_box_is_32_bytes() {
        assert_eq!(std::mem::size_of::<KeyBox>(), 32);
        assert_eq!(boxes_start(), 16);
    }

    /// Keys of several chunks (short ones and heap-held long ones), some
    /// boxes never handed out, clones and handles remade from addresses,
    /// all dropped in an order unlike their making, some after their
    /// `KeyChunks`: every key reads back whole, and (under Miri) nothing is
    /// used after it is freed, and nothing leaks.
    #[test]
    fn chunked_keys_live_as_long_as_their_handles() {
        let n = CHUNK_KEYS + 40;
        let name = |i: usize| {
            if i.is_multiple_of(5) {
                format!("long key number {i} past the inline bytes")
            } else {
                format!("k{i}")
            }
        };
        let mut chunks = KeyChunks::new(n + 3);
        let mut keys: Vec<Key> = (0..n)
            .map(|i| Key::unshared_in(&mut chunks, name(i).as_bytes(), i.is_multiple_of(3)))
            .collect();
        let clones: Vec<Key> = keys.iter().step_by(11).cloned().collect();
        // SAFETY: the addresses are of keys alive until the end.
        let remade: Vec<Key> = keys
            .iter()
            .step_by(13)
            .map(|k| unsafe { Key::from_addr(k.addr()) })
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
