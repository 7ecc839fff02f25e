//! Reference-counted allocations written in place.

use std::mem::MaybeUninit;
use std::rc::Rc;

/// A new `Rc` holding what `make` returns, allocated before `make` runs and
/// written straight into the allocation.
///
/// `Rc::new(value)` evaluates `value` first, on the stack, and copies it
/// into the allocation afterwards with wide loads over the narrow stores
/// that just built it: a store-forwarding stall per allocation, which the
/// decoder pays once per node and per key.
#[inline(always)]
pub(super) fn rc_written<T>(make: impl FnOnce() -> T) -> Rc<T> {
    let mut rc = Rc::new(MaybeUninit::<T>::uninit());
    Rc::get_mut(&mut rc)
        .expect("a new Rc is unique")
        .write(make());
    // SAFETY: the value was written just above.
    unsafe { rc.assume_init() }
}
