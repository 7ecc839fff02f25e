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

//! A decoder keeps the full chunks that come back free in a [`ChunkPool`]
//! and hands them out again: the next document's keys are written into
//! memory already mapped and cached, as Perl's arenas reuse theirs, instead
//! of memory the allocator may have just given back to the system.

use super::key::KeyInner;
use super::str::Str;
use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::Cell;
use std::ptr::{addr_of_mut, NonNull};
use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

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
    /// The pool it goes back to when its last box is freed (a full chunk
    /// made for a decoder that keeps chunks), if that pool is still there.
    pool: Option<Weak<ChunkPool>>,
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
        if let Some(pool) = head.as_ref().pool.as_ref().and_then(Weak::upgrade) {
            if pool.keep(head) {
                return;
            }
        }
        Self::free(head);
    }

    /// Frees a chunk.
    ///
    /// # Safety
    /// `head` must be a chunk made by [`KeyChunks`] with no box in use and
    /// no use left.
    unsafe fn free(head: NonNull<ChunkHead>) {
        let boxes = head.as_ref().boxes;
        std::ptr::drop_in_place(addr_of_mut!((*head.as_ptr()).pool));
        dealloc(head.as_ptr().cast(), chunk_layout(boxes).0);
    }
}

/// The full chunks a decoder keeps for its next documents' keys.
///
/// A chunk whose last key is dropped comes back here (from whichever
/// thread drops it) while the decoder is alive, up to as many chunks as
/// one decode has used at most; the rest, and all of them when the
/// decoder goes, are freed.
pub(crate) struct ChunkPool {
    free: Mutex<FreeChunks>,
    /// The most full chunks one decode has used.
    cap: AtomicUsize,
}

/// Chunks with no box in use.
struct FreeChunks(Vec<NonNull<ChunkHead>>);

// SAFETY: a chunk listed here has no box in use and no use left: nothing
// else points into it, and whoever takes it from the list owns it.
unsafe impl Send for FreeChunks {}

impl ChunkPool {
    /// A pool that keeps nothing until a decode says how many chunks it used.
    pub(crate) fn new() -> Arc<ChunkPool> {
        Arc::new(ChunkPool {
            free: Mutex::new(FreeChunks(Vec::new())),
            cap: AtomicUsize::new(0),
        })
    }

    /// Lets the pool keep as many chunks as one decode just used, if that
    /// is more than it keeps now.
    pub(crate) fn note_used(&self, chunks: usize) {
        self.cap.fetch_max(chunks, Ordering::Relaxed);
    }

    fn list(&self) -> std::sync::MutexGuard<'_, FreeChunks> {
        // The list is never left half-changed: a panic cannot poison it.
        self.free.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A kept chunk, if there is one.
    fn take(&self) -> Option<NonNull<ChunkHead>> {
        self.list().0.pop()
    }

    /// Keeps the full chunk `head` (no box in use) unless as many as the
    /// cap are kept already.
    fn keep(&self, head: NonNull<ChunkHead>) -> bool {
        let mut list = self.list();
        if list.0.len() >= self.cap.load(Ordering::Relaxed) {
            return false;
        }
        list.0.push(head);
        true
    }
}

impl Drop for ChunkPool {
    fn drop(&mut self) {
        let list = std::mem::take(
            &mut self
                .free
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .0,
        );
        for head in list {
            // SAFETY: a kept chunk has no box in use and no use left.
            unsafe { ChunkHead::free(head) };
        }
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
    /// Where full chunks are taken from and go back to, if anywhere.
    pool: Option<Arc<ChunkPool>>,
    /// How many full chunks this has used.
    full: usize,
}

impl KeyChunks {
    /// Chunks for at most `keys` keys, taken from `pool` while it has any
    /// (and full ones made for it); the first box takes the first chunk.
    pub(crate) fn new(keys: usize, pool: Option<Arc<ChunkPool>>) -> KeyChunks {
        KeyChunks {
            head: None,
            next: 0,
            boxes: 0,
            left: keys,
            pool,
            full: 0,
        }
    }

    /// How many full chunks this has used, taken or made.
    pub(crate) fn full_chunks(&self) -> usize {
        self.full
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

    /// Lets go of the current chunk and takes a kept one, or makes one of
    /// as many boxes as are left to ask for (at least one, at most
    /// `CHUNK_KEYS`).
    #[cold]
    fn grow(&mut self) {
        self.let_go();
        if let Some(head) = self.pool.as_ref().and_then(|p| p.take()) {
            // SAFETY: a kept chunk is full-size, with no box in use and no
            // use left: this owns it, and its boxes become its uses again.
            unsafe { head.as_ref() }
                .live
                .store(CHUNK_KEYS, Ordering::Relaxed);
            self.left -= CHUNK_KEYS.min(self.left);
            self.full += 1;
            (self.head, self.next, self.boxes) = (Some(head), 0, CHUNK_KEYS);
            return;
        }
        let boxes = self.left.clamp(1, CHUNK_KEYS);
        self.left -= boxes.min(self.left);
        let pool = match &self.pool {
            Some(pool) if boxes == CHUNK_KEYS => {
                self.full += 1;
                Some(Arc::downgrade(pool))
            }
            _ => None,
        };
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
                pool,
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
        assert_eq!(boxes_start(), 24);
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
        let mut chunks = KeyChunks::new(n + 3, None);
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

    /// Full chunks go back to their pool with their last key, up to the
    /// pool's cap, and are handed out again; a chunk whose pool is gone
    /// frees itself; the pool frees what it keeps when it goes (Miri checks
    /// that nothing is used after it is freed and nothing leaks).
    #[test]
    fn pooled_chunks_are_reused_and_freed() {
        let pool = ChunkPool::new();
        let make = |n: usize, tag: &str| {
            let mut chunks = KeyChunks::new(n, Some(Arc::clone(&pool)));
            let keys: Vec<Key> = (0..n)
                .map(|i| Key::unshared_in(&mut chunks, format!("{tag}{i}").as_bytes(), false))
                .collect();
            (keys, chunks.full_chunks())
        };
        let kept = |pool: &ChunkPool| pool.list().0.len();
        // Two full chunks and one of 5 boxes; the pool keeps nothing
        // before a decode has said how many it used.
        let (first, full) = make(2 * CHUNK_KEYS + 5, "a");
        assert_eq!(full, 2);
        drop(first);
        assert_eq!(kept(&pool), 0);
        pool.note_used(full);
        let (second, _) = make(2 * CHUNK_KEYS + 5, "b");
        let addrs: Vec<usize> = [0, CHUNK_KEYS].map(|i| second[i].addr()).into();
        drop(second);
        assert_eq!(kept(&pool), 2);
        // The kept chunks come back, a full one even for a few keys.
        let (third, full) = make(3, "c");
        let (fourth, _) = make(CHUNK_KEYS + 1, "d");
        assert_eq!(full, 1);
        assert_eq!(kept(&pool), 0);
        let mut reused = vec![third[0].addr(), fourth[0].addr()];
        reused.sort();
        let mut expected = addrs.clone();
        expected.sort();
        assert_eq!(reused, expected);
        assert_eq!(third[2].as_bytes(), b"c2");
        assert_eq!(
            fourth[CHUNK_KEYS].as_bytes(),
            format!("d{CHUNK_KEYS}").as_bytes()
        );
        // No more than the cap is kept.
        let (fifth, _) = make(3 * CHUNK_KEYS, "e");
        drop((third, fourth, fifth));
        assert_eq!(kept(&pool), 2);
        // Keys outliving their pool free their chunks themselves.
        let (last, _) = make(CHUNK_KEYS + 7, "f");
        drop(pool);
        assert_eq!(
            last[CHUNK_KEYS + 6].as_bytes(),
            format!("f{}", CHUNK_KEYS + 6).as_bytes()
        );
        drop(last);
    }
}
