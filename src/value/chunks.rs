//! Chunks: one allocation for up to 1,024 counted boxes of one kind (keys,
//! nodes), which a decoder writes a document's keys or nodes into.
//!
//! A decoded hash of 300,000 keys, or an array of 300,000 arrays, would
//! otherwise make 300,000 allocations one after another: a quarter to a
//! third of such a decode's instructions went to the allocator. A chunk is
//! freed when the last of its boxes is, or, when it was made for a decoder
//! that keeps chunks, goes back to that decoder's [`ChunkPool`] to be
//! handed out again: the next document is written into memory already
//! mapped and cached, as Perl's arenas reuse theirs, instead of memory the
//! allocator may have just given back to the system.
//!
//! A box's own count of handles is the box's business: every handle on one
//! box is in one graph, on one thread (`Document::into_send` checks it).
//! The boxes of one chunk may end up in graphs on different threads, so a
//! chunk counts its boxes in use atomically.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::marker::PhantomData;
use std::ptr::{addr_of_mut, NonNull};
use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// Boxes a chunk holds at most. Under Miri, which runs code thousands of
/// times slower, fewer: its tests then fill, free and reuse several chunks
/// in a few seconds.
pub(super) const CHUNK_BOXES: usize = if cfg!(miri) { 64 } else { 1024 };

/// The slot of a box allocated on its own, not in a chunk.
pub(super) const ALONE: u32 = u32::MAX;

/// A chunk starts with this header, then its boxes.
#[repr(C, align(8))]
struct ChunkHead {
    /// Its boxes in use, plus those a [`Chunks`] may still hand out.
    live: AtomicUsize,
    /// How many boxes it has.
    boxes: usize,
    /// Its allocation's layout.
    layout: Layout,
    /// The pool it goes back to when its last box is freed (a full chunk
    /// made for a decoder that keeps chunks), if that pool is still there.
    pool: Option<Weak<ChunkPool>>,
}

/// The layout of a chunk of `boxes` boxes of `B`, and where its boxes
/// start.
fn chunk_layout<B>(boxes: usize) -> (Layout, usize) {
    let boxes = Layout::array::<B>(boxes).expect("a chunk's size fits");
    Layout::new::<ChunkHead>()
        .extend(boxes)
        .expect("a chunk's size fits")
}

/// Where a chunk's boxes of `B` start (the same for every size).
fn boxes_start<B>() -> usize {
    chunk_layout::<B>(0).1
}

impl ChunkHead {
    /// Drops `n` uses of the chunk; with the last (as `Arc` does: every
    /// use's writes happen before), gives it to its pool or frees it.
    ///
    /// # Safety
    /// `head` must be a chunk made by [`Chunks`] that still has those uses.
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
    /// `head` must be a chunk made by [`Chunks`] with no box in use and no
    /// use left.
    unsafe fn free(head: NonNull<ChunkHead>) {
        let layout = head.as_ref().layout;
        std::ptr::drop_in_place(addr_of_mut!((*head.as_ptr()).pool));
        dealloc(head.as_ptr().cast(), layout);
    }
}

/// Gives back the use the box at `p`, number `slot` of its chunk, had of
/// the chunk (which goes with the last of them).
///
/// # Safety
/// `p` must be box `slot` of a chunk of `B` made by [`Chunks`], handed out
/// and no longer in use.
pub(super) unsafe fn release_slot<B>(p: *mut B, slot: u32) {
    let offset = boxes_start::<B>() + slot as usize * std::mem::size_of::<B>();
    ChunkHead::release(NonNull::new_unchecked(p.cast::<u8>().sub(offset).cast()), 1);
}

/// The full chunks of one kind of box a decoder keeps for its next
/// documents.
///
/// A chunk whose last box is freed comes back here (from whichever thread
/// frees it) while the decoder is alive, up to as many chunks as one decode
/// has used at most; the rest, and all of them when the decoder goes, are
/// freed.
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
    /// A pool that keeps nothing until a decode says how many chunks it
    /// used.
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

    fn list(&self) -> MutexGuard<'_, FreeChunks> {
        // The list is never left half-changed: a panic cannot poison it.
        self.free.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many chunks are kept.
    #[cfg(test)]
    pub(super) fn kept(&self) -> usize {
        self.list().0.len()
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

/// Hands out boxes of `B` from chunks, for a known most number of them
/// (the keys of one large hash, the nodes of one document).
pub(crate) struct Chunks<B> {
    /// The chunk boxes come from, the index of its next free box and its
    /// number of boxes.
    head: Option<NonNull<ChunkHead>>,
    next: usize,
    boxes: usize,
    /// How many more boxes may be asked for.
    left: usize,
    /// The most boxes the next chunk made will have.
    size: usize,
    /// Where full chunks are taken from and go back to, if anywhere: a pool
    /// of chunks of `B` only.
    pool: Option<Arc<ChunkPool>>,
    /// How many full chunks this has used.
    full: usize,
    boxed: PhantomData<*mut B>,
}

impl<B> Chunks<B> {
    /// Chunks for `items` boxes at most, each of as many as are left (up
    /// to `CHUNK_BOXES`): for a number known to be needed, give or take a
    /// few. Full chunks are taken from `pool` while it has any, and made
    /// for it when it has none; the first box takes the first chunk.
    pub(crate) fn new(items: usize, pool: Option<Arc<ChunkPool>>) -> Chunks<B> {
        Chunks {
            head: None,
            next: 0,
            boxes: 0,
            left: items,
            size: CHUNK_BOXES,
            pool,
            full: 0,
            boxed: PhantomData,
        }
    }

    /// As [`Chunks::new`], for a number not known beforehand, of which
    /// `items` is only a bound: the first chunk has 16 boxes, each next one
    /// twice as many, up to `CHUNK_BOXES` (a document of a few nodes takes
    /// a few hundred bytes, not a full chunk).
    pub(crate) fn growing(items: usize, pool: Option<Arc<ChunkPool>>) -> Chunks<B> {
        let mut chunks = Chunks::new(items, pool);
        chunks.size = 16;
        chunks
    }

    /// How many full chunks this has used, taken or made.
    pub(crate) fn full_chunks(&self) -> usize {
        self.full
    }

    /// An unwritten box and its slot in its chunk; the box's use of the
    /// chunk passes to the caller, who gives it back with [`release_slot`].
    #[inline]
    pub(super) fn next_box(&mut self) -> (*mut B, u32) {
        if self.next == self.boxes {
            self.grow();
        }
        let head = self.head.expect("a chunk is made");
        let slot = self.next;
        self.next += 1;
        // SAFETY: the chunk is alive (this holds the uses of the boxes it
        // has not handed out), and its box `slot` is within it and was
        // never handed out.
        let p = unsafe {
            head.as_ptr()
                .cast::<u8>()
                .add(boxes_start::<B>())
                .cast::<B>()
                .add(slot)
        };
        (p, slot as u32)
    }

    /// Lets go of the current chunk and makes one of as many boxes as are
    /// left to ask for, at least one and at most `size`; a full one is
    /// taken from the pool if it keeps any.
    #[cold]
    fn grow(&mut self) {
        self.let_go();
        let boxes = self.left.min(self.size).max(1);
        self.size = (self.size * 2).min(CHUNK_BOXES);
        let kept = match &self.pool {
            Some(pool) if boxes == CHUNK_BOXES => pool.take(),
            _ => None,
        };
        if let Some(head) = kept {
            // SAFETY: a kept chunk is full-size, of boxes of `B` (its pool
            // holds no other kind), with no box in use and no use left:
            // this owns it, and its boxes become its uses again.
            unsafe { head.as_ref() }
                .live
                .store(CHUNK_BOXES, Ordering::Relaxed);
            self.left -= CHUNK_BOXES;
            self.full += 1;
            (self.head, self.next, self.boxes) = (Some(head), 0, CHUNK_BOXES);
            return;
        }
        self.left -= boxes.min(self.left);
        let pool = match &self.pool {
            Some(pool) if boxes == CHUNK_BOXES => {
                self.full += 1;
                Some(Arc::downgrade(pool))
            }
            _ => None,
        };
        let (layout, _) = chunk_layout::<B>(boxes);
        // SAFETY: the layout has a non-zero size (its header).
        let p = unsafe { alloc(layout) }.cast::<ChunkHead>();
        let Some(head) = NonNull::new(p) else {
            handle_alloc_error(layout)
        };
        // SAFETY: `p` was just allocated for a chunk, whose header comes
        // first. Each box is a use of the chunk from the start: a box
        // freed while its chunk still hands out boxes cannot free it.
        unsafe {
            p.write(ChunkHead {
                live: AtomicUsize::new(boxes),
                boxes,
                layout,
                pool,
            })
        };
        (self.head, self.next, self.boxes) = (Some(head), 0, boxes);
    }

    /// Gives up the uses of the boxes not handed out.
    fn let_go(&mut self) {
        if let Some(head) = self.head.take() {
            // SAFETY: this held the uses of the boxes from `next` on.
            unsafe { ChunkHead::release(head, self.boxes - self.next) };
        }
    }
}

impl<B> Drop for Chunks<B> {
    fn drop(&mut self) {
        self.let_go();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_header_is_40_bytes() {
        assert_eq!(boxes_start::<[u64; 4]>(), 40);
    }

    /// Full chunks go back to their pool with their last box, up to the
    /// pool's cap, and are handed out again; a chunk whose pool is gone
    /// frees itself; the pool frees what it keeps when it goes (Miri checks
    /// that nothing is used after it is freed and nothing leaks).
    #[test]
    fn pooled_chunks_are_reused_and_freed() {
        type Boxed = [u64; 2];
        let pool = ChunkPool::new();
        let take = |n: usize, mark: u64| {
            let mut chunks = Chunks::<Boxed>::new(n, Some(Arc::clone(&pool)));
            let boxes: Vec<(*mut Boxed, u32)> = (0..n)
                .map(|i| {
                    let (p, slot) = chunks.next_box();
                    // SAFETY: a box handed out is valid for writes.
                    unsafe { p.write([mark, i as u64]) };
                    (p, slot)
                })
                .collect();
            (boxes, chunks.full_chunks())
        };
        let give_back = |boxes: Vec<(*mut Boxed, u32)>| {
            for (p, slot) in boxes {
                // SAFETY: each box was handed out once and is given back once.
                unsafe { release_slot(p, slot) };
            }
        };
        // Two full chunks and one of 5 boxes; the pool keeps nothing
        // before a decode has said how many it used.
        let (first, full) = take(2 * CHUNK_BOXES + 5, 1);
        assert_eq!(full, 2);
        give_back(first);
        assert_eq!(pool.kept(), 0);
        pool.note_used(full);
        let (second, _) = take(2 * CHUNK_BOXES + 5, 2);
        let mut addrs: Vec<usize> = [0, CHUNK_BOXES].map(|i| second[i].0 as usize).into();
        give_back(second);
        assert_eq!(pool.kept(), 2);
        // The kept chunks come back for full ones, not for a few boxes.
        let (few, full) = take(3, 3);
        assert_eq!((full, pool.kept()), (0, 2));
        let (third, full) = take(CHUNK_BOXES, 3);
        let (fourth, _) = take(CHUNK_BOXES + 1, 4);
        assert_eq!(full, 1);
        assert_eq!(pool.kept(), 0);
        give_back(few);
        let mut reused = vec![third[0].0 as usize, fourth[0].0 as usize];
        reused.sort();
        addrs.sort();
        assert_eq!(reused, addrs);
        // SAFETY: the boxes are alive and were written.
        unsafe {
            assert_eq!(*third[CHUNK_BOXES - 1].0, [3, CHUNK_BOXES as u64 - 1]);
            assert_eq!(*fourth[CHUNK_BOXES].0, [4, CHUNK_BOXES as u64]);
        }
        // No more than the cap is kept.
        let (fifth, _) = take(3 * CHUNK_BOXES, 5);
        give_back(third);
        give_back(fourth);
        give_back(fifth);
        assert_eq!(pool.kept(), 2);
        // Boxes outliving their pool free their chunks themselves.
        let (last, _) = take(CHUNK_BOXES + 7, 6);
        drop(pool);
        // SAFETY: the box is alive and was written.
        assert_eq!(
            unsafe { *last[CHUNK_BOXES + 6].0 },
            [6, CHUNK_BOXES as u64 + 6]
        );
        give_back(last);
    }

    /// A growing set of chunks starts at 16 boxes and doubles up to full
    /// ones, which alone come from the pool; no chunk has more boxes than
    /// are left to ask for.
    #[test]
    fn growing_chunks_double_up_to_full_ones() {
        let pool = ChunkPool::new();
        let sizes = |items: usize, asked: usize| {
            let mut chunks = Chunks::<u64>::growing(items, Some(Arc::clone(&pool)));
            let mut sizes = Vec::new();
            let mut held = Vec::new();
            for _ in 0..asked {
                let (p, slot) = chunks.next_box();
                if slot == 0 {
                    sizes.push(chunks.boxes);
                }
                held.push((p, slot));
            }
            let full = chunks.full_chunks();
            drop(chunks);
            for (p, slot) in held {
                // SAFETY: handed out once, given back once.
                unsafe { release_slot(p, slot) };
            }
            (sizes, full)
        };
        assert_eq!(sizes(10, 10), (vec![10], 0));
        assert_eq!(sizes(5000, 20), (vec![16, 32], 0));
        // 16, 32, ... up to a full chunk, then two more and a part of a
        // third (1024 boxes a chunk: 16 to 512, then 3 full ones).
        let mut want: Vec<usize> = (4..)
            .map(|p| 1 << p)
            .take_while(|&n| n < CHUNK_BOXES)
            .collect();
        let asked = want.iter().sum::<usize>() + 2 * CHUNK_BOXES + 44;
        want.extend([CHUNK_BOXES; 3]);
        let (s, full) = sizes(100_000, asked);
        assert_eq!(s, want);
        assert_eq!(full, 3);
        pool.note_used(3);
        let (_, full) = sizes(100_000, asked);
        assert_eq!((full, pool.kept()), (3, 3));
    }
}
