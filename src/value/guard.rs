//! The callback boundary's thread-local state: the nodes each running
//! callback has locked (the encoder locks the containers it is writing
//! before it calls user code), and whether code in it was refused a
//! mutation of one of them. The value layer's mutation API consults it; the
//! encoder opens and closes the spans.

use std::cell::RefCell;

/// One running callback: the addresses of the nodes its encoder locked, and
/// whether a mutation of one of them was refused.
struct Frame {
    locked: Vec<usize>,
    refused: bool,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Called by the value graph's mutation API when borrowing the node at
/// `addr` for writing fails: returns `true` (and records the refusal) when
/// a running encoder callback holds that node locked.
pub(crate) fn note_refused_mutation(addr: usize) -> bool {
    FRAMES.with(|f| {
        let mut hit = false;
        for frame in f.borrow_mut().iter_mut() {
            if frame.locked.contains(&addr) {
                frame.refused = true;
                hit = true;
            }
        }
        hit
    })
}

/// The span of one callback. Dropping it (also while unwinding from a
/// panic) removes its frame.
pub(crate) struct Scope(());

impl Scope {
    pub(crate) fn enter(locked: Vec<usize>) -> Scope {
        FRAMES.with(|f| {
            f.borrow_mut().push(Frame {
                locked,
                refused: false,
            })
        });
        Scope(())
    }

    /// Whether a mutation of a node this span locked was refused so far.
    pub(crate) fn refused(&self) -> bool {
        FRAMES.with(|f| f.borrow().last().is_some_and(|fr| fr.refused))
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        FRAMES.with(|f| f.borrow_mut().pop());
    }
}
