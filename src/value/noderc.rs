//! `NodeRc` and `NodeWeak`: the counted handles on a node, as `Rc` and
//! `Weak` are, on a node allocated on its own or among the nodes of a
//! chunk (see `Chunks`) that a decoder writes a document's nodes into.

use super::chunks::{release_slot, Chunks, ALONE};
use super::Node;
use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::Cell;
use std::ptr::{addr_of, addr_of_mut, NonNull};

/// A node's allocation: its counts, where it sits, and the node.
#[repr(C)]
pub(crate) struct NodeBox {
    /// Strong handles.
    strong: Cell<usize>,
    /// Weak handles, plus one held by all the strong ones together (as
    /// `Rc` counts them): the box is freed when this reaches zero.
    weak: Cell<u32>,
    /// Its index in its chunk, or `ALONE`.
    slot: u32,
    node: Node,
}

/// Hands out boxes for the nodes of one document.
pub(crate) type NodeChunks = Chunks<NodeBox>;

/// A strong handle on a node.
pub(crate) struct NodeRc(NonNull<NodeBox>);

/// A weak handle on a node; [`NodeWeak::new`] makes one on none.
pub(crate) struct NodeWeak(NonNull<NodeBox>);

/// The address of a weak handle on no node (as `Weak::new` has): no box
/// can sit there.
const NO_NODE: usize = usize::MAX;

/// Writes a box with one strong handle at `p`, its node what `make`
/// returns, written in place.
///
/// # Safety
/// `p` must be valid for writes of a `NodeBox`.
#[inline(always)]
unsafe fn init(p: *mut NodeBox, slot: u32, make: impl FnOnce() -> Node) -> NodeRc {
    addr_of_mut!((*p).strong).write(Cell::new(1));
    addr_of_mut!((*p).weak).write(Cell::new(1));
    addr_of_mut!((*p).slot).write(slot);
    addr_of_mut!((*p).node).write(make());
    NodeRc(NonNull::new_unchecked(p))
}

/// Frees the box at `p`, whose node is dropped already.
///
/// # Safety
/// No handle on the box may be left.
unsafe fn free(p: NonNull<NodeBox>) {
    let slot = p.as_ref().slot;
    if slot == ALONE {
        dealloc(p.as_ptr().cast(), Layout::new::<NodeBox>());
    } else {
        release_slot(p.as_ptr(), slot);
    }
}

/// Adds a weak handle's count to `b` (aborting, as `Rc` does, if the
/// count would overflow).
#[inline]
fn add_weak(b: &NodeBox) {
    let w = b.weak.get();
    if w == u32::MAX {
        std::process::abort();
    }
    b.weak.set(w + 1);
}

/// Adds a strong handle's count to `b`, which has one at least.
#[inline]
fn add_strong(b: &NodeBox) {
    let s = b.strong.get();
    if s == usize::MAX {
        std::process::abort();
    }
    b.strong.set(s + 1);
}

/// Drops one count of `weak` in the box at `p`, and frees the box with
/// the last.
///
/// # Safety
/// The box must be alive and have that count; its node must be dropped
/// already if the count is the last.
#[inline]
unsafe fn drop_weak(p: NonNull<NodeBox>) {
    let w = p.as_ref().weak.get() - 1;
    p.as_ref().weak.set(w);
    if w == 0 {
        free(p);
    }
}

impl NodeRc {
    /// A node of its own, what `make` returns written in place (built
    /// first and moved, a node would be copied with wide loads of the
    /// narrow stores that made it: a store-forwarding stall).
    #[inline(always)]
    pub(crate) fn written(make: impl FnOnce() -> Node) -> NodeRc {
        let layout = Layout::new::<NodeBox>();
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc(layout) }.cast::<NodeBox>();
        if p.is_null() {
            handle_alloc_error(layout);
        }
        // SAFETY: `p` was just allocated for a `NodeBox`.
        unsafe { init(p, ALONE, make) }
    }

    /// A node in a box of `chunks`, written in place as [`NodeRc::written`]
    /// writes it.
    #[inline(always)]
    pub(crate) fn written_in(chunks: &mut NodeChunks, make: impl FnOnce() -> Node) -> NodeRc {
        let (p, slot) = chunks.next_box();
        // SAFETY: a box handed out is valid for writes; its use of its
        // chunk passes to the node.
        unsafe { init(p, slot, make) }
    }

    #[inline]
    fn inner(&self) -> &NodeBox {
        // SAFETY: the box is alive while a strong handle on it is.
        unsafe { self.0.as_ref() }
    }

    /// The number of strong handles.
    #[inline]
    pub(crate) fn strong_count(this: &NodeRc) -> usize {
        this.inner().strong.get()
    }

    /// The number of weak handles.
    #[inline]
    pub(crate) fn weak_count(this: &NodeRc) -> usize {
        this.inner().weak.get() as usize - 1
    }

    /// The box's first byte (see [`NodeRc::node_of_box`]; a prefetch reads
    /// the box from there).
    #[inline(always)]
    pub(crate) fn box_ptr(&self) -> *const u8 {
        self.0.as_ptr().cast_const().cast()
    }

    /// The node in the box at `box_ptr`, as [`NodeRc::as_ptr`] gives it.
    pub(crate) fn node_of_box(box_ptr: *const u8) -> *const Node {
        box_ptr
            .wrapping_add(std::mem::offset_of!(NodeBox, node))
            .cast()
    }

    /// The node's address.
    #[inline]
    pub(crate) fn as_ptr(this: &NodeRc) -> *const Node {
        // SAFETY: the box is alive; this takes the field's address only.
        unsafe { addr_of!((*this.0.as_ptr()).node) }
    }

    /// Whether both handles are on the same node.
    #[inline]
    pub(crate) fn ptr_eq(a: &NodeRc, b: &NodeRc) -> bool {
        a.0 == b.0
    }

    /// The box of the node at `p`.
    ///
    /// # Safety
    /// `p` must be the address of the node of a live box.
    unsafe fn box_of(p: *const Node) -> NonNull<NodeBox> {
        let offset = std::mem::offset_of!(NodeBox, node);
        NonNull::new_unchecked(p.cast::<u8>().sub(offset).cast_mut().cast())
    }

    /// The strong handle whose node is at `p`, taking over one of its
    /// counted strong handles (as `Rc::from_raw`).
    ///
    /// # Safety
    /// `p` must be [`NodeRc::as_ptr`] of a live node, and the caller must
    /// own one strong count of it (or not let this handle drop).
    #[inline]
    pub(crate) unsafe fn from_raw(p: *const Node) -> NodeRc {
        NodeRc(Self::box_of(p))
    }

    /// Adds a strong count to the node at `p` (as
    /// `Rc::increment_strong_count`).
    ///
    /// # Safety
    /// `p` must be [`NodeRc::as_ptr`] of a live node.
    pub(crate) unsafe fn increment_strong_count(p: *const Node) {
        let h = std::mem::ManuallyDrop::new(Self::from_raw(p));
        std::mem::forget(NodeRc::clone(&h));
    }

    /// The node, if this is its only handle, strong or weak.
    #[inline]
    pub(crate) fn get_mut(this: &mut NodeRc) -> Option<&mut Node> {
        let b = this.inner();
        if b.strong.get() == 1 && b.weak.get() == 1 {
            // SAFETY: no other handle exists to see the node.
            Some(unsafe { &mut (*this.0.as_ptr()).node })
        } else {
            None
        }
    }

    /// The node, moved out, if this is its only strong handle (weak ones
    /// then find it gone); the handle back otherwise.
    pub(crate) fn try_unwrap(this: NodeRc) -> Result<Node, NodeRc> {
        if this.inner().strong.get() != 1 {
            return Err(this);
        }
        let this = std::mem::ManuallyDrop::new(this);
        let p = this.0;
        // SAFETY: the only strong handle is this one, which is consumed:
        // the node is read out once, and the strong ones' weak count goes.
        unsafe {
            p.as_ref().strong.set(0);
            let node = std::ptr::read(addr_of!((*p.as_ptr()).node));
            drop_weak(p);
            Ok(node)
        }
    }

    /// A weak handle on the same node.
    pub(crate) fn downgrade(this: &NodeRc) -> NodeWeak {
        add_weak(this.inner());
        NodeWeak(this.0)
    }
}

impl Clone for NodeRc {
    #[inline]
    fn clone(&self) -> NodeRc {
        add_strong(self.inner());
        NodeRc(self.0)
    }
}

impl Drop for NodeRc {
    #[inline]
    fn drop(&mut self) {
        let b = self.inner();
        let s = b.strong.get() - 1;
        b.strong.set(s);
        if s == 0 {
            // SAFETY: that was the last strong handle: the node is dropped
            // (a weak handle cannot reach it any more), then the strong
            // ones' weak count goes.
            unsafe {
                std::ptr::drop_in_place(addr_of_mut!((*self.0.as_ptr()).node));
                drop_weak(self.0);
            }
        }
    }
}

impl std::ops::Deref for NodeRc {
    type Target = Node;
    #[inline]
    fn deref(&self) -> &Node {
        &self.inner().node
    }
}

impl NodeWeak {
    /// A weak handle on no node.
    pub(crate) fn new() -> NodeWeak {
        NodeWeak(NonNull::new(std::ptr::without_provenance_mut(NO_NODE)).expect("not null"))
    }

    #[inline]
    fn inner(&self) -> Option<&NodeBox> {
        // SAFETY: a weak handle on a box keeps the box (not its node)
        // alive.
        if self.0.as_ptr().addr() == NO_NODE {
            None
        } else {
            Some(unsafe { self.0.as_ref() })
        }
    }

    /// A strong handle, if the node is still alive.
    pub(crate) fn upgrade(&self) -> Option<NodeRc> {
        let b = self.inner()?;
        if b.strong.get() == 0 {
            return None;
        }
        add_strong(b);
        Some(NodeRc(self.0))
    }

    /// The number of strong handles on the node (0 once it is gone).
    pub(crate) fn strong_count(&self) -> usize {
        self.inner().map_or(0, |b| b.strong.get())
    }

    /// The node's address, for a weak handle on a live node.
    pub(crate) fn as_ptr(&self) -> *const Node {
        match self.inner() {
            // SAFETY: the box is alive; this takes the field's address only.
            Some(_) => unsafe { addr_of!((*self.0.as_ptr()).node) },
            None => std::ptr::without_provenance(NO_NODE),
        }
    }
}

impl Clone for NodeWeak {
    fn clone(&self) -> NodeWeak {
        if let Some(b) = self.inner() {
            add_weak(b);
        }
        NodeWeak(self.0)
    }
}

impl Drop for NodeWeak {
    fn drop(&mut self) {
        if self.inner().is_some() {
            // SAFETY: this handle's count is in the box, which it keeps.
            unsafe { drop_weak(self.0) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Body, Ref, Value, WeakRef};

    #[test]
    fn a_node_box_is_a_node_and_two_words() {
        assert_eq!(
            std::mem::size_of::<NodeBox>(),
            std::mem::size_of::<Node>() + 16
        );
    }

    /// Strong and weak handles on nodes of chunks and nodes of their own
    /// count as `Rc` and `Weak` do; a node goes with its last strong
    /// handle and its memory with its last handle; nodes that hold each
    /// other, and a chunk outliving its `NodeChunks`, free cleanly (Miri
    /// checks for use after free and leaks).
    #[test]
    fn node_handles_count_as_rc_does() {
        let mut chunks = NodeChunks::growing(100, None);
        let nodes: Vec<Ref> = (0..40)
            .map(|i| Ref::new_in(&mut chunks, Body::Scalar(Value::from(i))))
            .collect();
        let alone = Ref::scalar(99);
        // A chain: each node holds the next, the last one alone.
        for w in nodes.windows(2) {
            w[0].set(Body::Scalar(Value::Ref(w[1].clone()))).unwrap();
        }
        nodes[39]
            .set(Body::Scalar(Value::Ref(alone.clone())))
            .unwrap();
        let weak: WeakRef = nodes[20].downgrade();
        let weak2 = weak.clone();
        let none = WeakRef(NodeWeak::new());
        assert!(none.upgrade().is_none() && none.clone().upgrade().is_none());
        assert_eq!((nodes[20].strong_count(), nodes[20].weak_count()), (2, 2));
        assert_eq!((alone.strong_count(), alone.weak_count()), (2, 0));
        drop(chunks);
        // `try_unwrap` takes the node of a single strong handle, weak
        // handles or not; they then find it gone.
        let mut rest = nodes;
        let tail = rest.split_off(20);
        let mut first = rest.into_iter().next().unwrap();
        assert!(NodeRc::get_mut(&mut first.0).is_some());
        let mut tail = tail.into_iter();
        let twenty = tail.next().unwrap();
        drop(tail);
        assert_eq!(twenty.strong_count(), 2);
        let up = weak.upgrade().unwrap();
        assert!(up.ptr_eq(&twenty));
        drop(up);
        drop(first);
        assert_eq!(twenty.strong_count(), 1);
        let node = NodeRc::try_unwrap(twenty.0).unwrap_or_else(|_| panic!("unique"));
        assert!(weak.upgrade().is_none());
        assert_eq!(weak.0.strong_count(), 0);
        drop(node);
        drop((weak, weak2));
        assert_eq!(alone.strong_count(), 1);
        // Raw round trips keep the counts.
        let p = NodeRc::as_ptr(&alone.0);
        // SAFETY: `p` is a live node's; the count added is taken back.
        unsafe {
            NodeRc::increment_strong_count(p);
            assert_eq!(alone.strong_count(), 2);
            drop(NodeRc::from_raw(p));
        }
        assert_eq!(alone.strong_count(), 1);
        let mut alone = alone;
        assert!(NodeRc::get_mut(&mut alone.0).is_some());
    }
}
