//! Stack depth for the recursive walks (decoder, serde, encoder, equality,
//! formatting, JSON): each nesting level asks [`Stack::run`] to go one level
//! deeper, and the call moves to a fresh heap-allocated stack segment when
//! the current one is nearly used up.
//!
//! The check compares the address of a local with a floor computed once per
//! segment, so it costs a comparison per level and holds for any frame size:
//! debug builds, whose frames are several times larger than release ones,
//! and threads with small stacks are as safe as a release build's main
//! thread. A walk the crate builds and runs within one call of its own
//! ([`Stack::lazy`]) takes its first 8 KiB below that call without asking
//! for the thread's limit: the code calling into the crate is taken to have
//! that much stack free, as it has for any call; a walk handed to the
//! caller asks at its first level.

/// Room kept free below the deepest check: more than any single level of the
/// crate's walks uses between two checks, in any build profile.
const RED_ZONE: usize = 128 * 1024;

/// Size of each extra stack segment.
const SEGMENT: usize = 2 * 1024 * 1024;

/// Stack a lazy walk takes below its start before it asks for the thread's
/// limit: room for the first nesting levels of a release build, which the
/// code calling into the crate has free as it has room for any call.
const LAZY_WINDOW: usize = 8 * 1024;

/// The stack floor of the current segment; see the module docs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stack {
    floor: usize,
}

/// An address on the current stack, close to the stack pointer.
#[inline(always)]
fn here() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

impl Stack {
    /// The floor for the current thread's current stack segment (even: an
    /// odd floor is a lazy one).
    pub(crate) fn new() -> Stack {
        // Without a known limit, behave as if the stack were almost full, so
        // that the first deep walk moves to a segment whose size is known.
        let remaining = stacker::remaining_stack().unwrap_or(0);
        Stack {
            floor: here().saturating_sub(remaining.saturating_sub(RED_ZONE)) & !1,
        }
    }

    /// A provisional floor a little below the current frame (odd, to say
    /// so), replaced by the real one when a walk gets there: a shallow
    /// walk (a scalar, a flat array, a small record) never asks for the
    /// thread's stack limit. Only for a walk run on this stack, by the call
    /// that built it or one it makes.
    #[inline(always)]
    pub(crate) fn lazy() -> Stack {
        // No stack is in the first pages of the address space; were the
        // subtraction to wrap, the floor would be past at once, and found.
        // The address is taken as the checks take it (`here`), so that a
        // sanitizer's relocated frames compare alike.
        Stack {
            floor: here().wrapping_sub(LAZY_WINDOW) | 1,
        }
    }

    /// Runs `f` one nesting level deeper: on a new stack segment when the
    /// current one has less than the red zone left. `f` gets the state back,
    /// whose stack floor is the segment's.
    #[inline]
    pub(crate) fn run<S: HasStack, R>(state: &mut S, f: impl FnOnce(&mut S) -> R) -> R {
        if here() >= state.stack().floor {
            return f(state);
        }
        Self::grow(state, f)
    }

    #[cold]
    #[inline(never)]
    fn grow<S: HasStack, R>(state: &mut S, f: impl FnOnce(&mut S) -> R) -> R {
        if state.stack().floor & 1 == 1 {
            // Past a lazy walk's provisional floor: stay on this stack if it
            // has more than the red zone left.
            *state.stack() = Stack::new();
            if here() > state.stack().floor {
                return f(state);
            }
        }
        let saved = *state.stack();
        let r = stacker::grow(SEGMENT, || {
            *state.stack() = Stack::new();
            f(state)
        });
        *state.stack() = saved;
        r
    }
}

/// A walk that carries its [`Stack`].
pub(crate) trait HasStack {
    /// The walk's stack floor.
    fn stack(&mut self) -> &mut Stack;
}

/// Runs `f` one nesting level deeper, for a walk that does not carry its
/// own [`Stack`] (formatting, equality, JSON): asks the thread's stack limit
/// at every level.
#[inline]
pub(crate) fn deeper<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
