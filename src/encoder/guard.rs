//! The callback boundary's thread-local state: whether an encoder callback
//! is running, and whether code in it was refused a mutation.

use std::cell::Cell;

thread_local! {
    static IN_CALLBACK: Cell<u32> = const { Cell::new(0) };
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

/// Called by the value graph's mutation API when a borrow for writing
/// fails: records the refusal and returns `true` if an encoder callback is
/// running (so the container is locked by the encoder).
pub(crate) fn note_refused_mutation() -> bool {
    let inside = IN_CALLBACK.with(|c| c.get() > 0);
    if inside {
        REFUSED.with(|r| r.set(true));
    }
    inside
}

/// The span of one callback. Dropping it (also while unwinding from a
/// panic) restores the state of any enclosing callback.
pub(super) struct Scope {
    outer_refused: bool,
}

impl Scope {
    pub(super) fn enter() -> Scope {
        IN_CALLBACK.with(|c| c.set(c.get() + 1));
        Scope {
            outer_refused: REFUSED.with(|r| r.replace(false)),
        }
    }

    /// Ends the span; returns whether a mutation was refused in it.
    pub(super) fn finish(self) -> bool {
        REFUSED.with(|r| r.get())
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        IN_CALLBACK.with(|c| c.set(c.get() - 1));
        let refused = REFUSED.with(|r| r.get());
        REFUSED.with(|r| r.set(self.outer_refused || refused));
    }
}
