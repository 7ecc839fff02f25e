//! Handlers that stay on the thread that registered them, inside codecs
//! that may move between threads.

use crate::error::{Error, ErrorKind};
use crate::value::Key;
use std::mem::ManuallyDrop;
use std::thread::{self, ThreadId};

/// A value only the thread that made it may touch, in a type that is `Send`
/// and `Sync` whatever the value is.
///
/// Another thread sees nothing (`get` and `get_mut` return `None`), and if
/// the last owner drops it on another thread the value is leaked, never
/// dropped there: a non-thread-safe value (an `Rc`, a `Cell`) is only ever
/// used, cloned and dropped on its own thread.
pub(crate) struct ThreadBound<T> {
    // `None` in a clone made on another thread
    value: ManuallyDrop<Option<T>>,
    thread: ThreadId,
}

// SAFETY: the value is reached only through `get`, `get_mut`, `clone` and
// `drop`, and each of them touches it only on the thread that made it
// (`ThreadId`s are never reused). Moving or sharing the wrapper moves or
// shares a value no other thread can reach.
unsafe impl<T> Send for ThreadBound<T> {}
// SAFETY: as above; `&ThreadBound` gives another thread no access.
unsafe impl<T> Sync for ThreadBound<T> {}

impl<T> ThreadBound<T> {
    /// Binds `value` to the current thread.
    pub(crate) fn new(value: T) -> Self {
        ThreadBound {
            value: ManuallyDrop::new(Some(value)),
            thread: thread::current().id(),
        }
    }

    fn here(&self) -> bool {
        thread::current().id() == self.thread
    }

    /// The value, on the thread that made it.
    pub(crate) fn get(&self) -> Option<&T> {
        if self.here() {
            self.value.as_ref()
        } else {
            None
        }
    }

    /// The value, on the thread that made it.
    pub(crate) fn get_mut(&mut self) -> Option<&mut T> {
        if self.here() {
            self.value.as_mut()
        } else {
            None
        }
    }
}

impl<T: Clone> Clone for ThreadBound<T> {
    /// A clone of the value on its own thread; on another, a wrapper that
    /// is bound to the same thread and holds nothing.
    fn clone(&self) -> Self {
        ThreadBound {
            value: ManuallyDrop::new(self.get().cloned()),
            thread: self.thread,
        }
    }
}

impl<T> Drop for ThreadBound<T> {
    fn drop(&mut self) {
        if self.here() {
            // SAFETY: dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.value) }
        }
    }
}

/// A callback of a codec: one that any thread may run (registered with a
/// `*_shared` method, so it is `Send + Sync`), or one bound to the thread
/// that registered it. `S` holds the first, `L` the second.
pub(crate) enum Handler<S, L> {
    /// Runs on any thread.
    Shared(S),
    /// Runs only on the thread that registered it.
    Local(ThreadBound<L>),
}

impl<S: Clone, L: Clone> Clone for Handler<S, L> {
    fn clone(&self) -> Self {
        match self {
            Handler::Shared(s) => Handler::Shared(s.clone()),
            Handler::Local(l) => Handler::Local(l.clone()),
        }
    }
}

impl<S, L> Handler<S, L> {
    /// The handler as `F`, or `None` for a local handler on another thread.
    pub(crate) fn get<'a, F: ?Sized>(
        &'a self,
        shared: impl FnOnce(&'a S) -> &'a F,
        local: impl FnOnce(&'a L) -> &'a F,
    ) -> Option<&'a F> {
        match self {
            Handler::Shared(s) => Some(shared(s)),
            Handler::Local(l) => l.get().map(local),
        }
    }

    /// As [`Handler::get`], for a handler that needs `&mut`.
    pub(crate) fn get_mut<'a, F: ?Sized>(
        &'a mut self,
        shared: impl FnOnce(&'a mut S) -> &'a mut F,
        local: impl FnOnce(&'a mut L) -> &'a mut F,
    ) -> Option<&'a mut F> {
        match self {
            Handler::Shared(s) => Some(shared(s)),
            Handler::Local(l) => l.get_mut().map(local),
        }
    }
}

/// The error for a local handler met on another thread: `what` names the
/// handler, `class` its class if it has one, `shared` the method that
/// registers one for any thread.
pub(crate) fn elsewhere(what: &str, class: Option<&Key>, shared: &str) -> Error {
    let of = class.map_or(String::new(), |c| {
        format!(" of class '{}'", String::from_utf8_lossy(c.as_bytes()))
    });
    Error::new(ErrorKind::Callback(format!(
        "the {what}{of} was registered on another thread, and only that thread can run it \
         (register it with {shared} to run it on any thread)"
    )))
}

#[cfg(test)]
mod tests {
    use super::ThreadBound;
    use std::rc::Rc;

    #[test]
    fn only_the_owning_thread_reaches_drops_or_clones_the_value() {
        let rc = Rc::new(5);
        let mut bound = ThreadBound::new(rc.clone());
        assert_eq!(bound.get().map(|r| **r), Some(5));
        let copy = bound.clone();
        assert_eq!(Rc::strong_count(&rc), 3);
        let (bound, copy) = std::thread::spawn(move || {
            assert!(bound.get().is_none() && bound.get_mut().is_none());
            let none = bound.clone();
            assert!(none.get().is_none());
            drop(none);
            (bound, copy)
        })
        .join()
        .unwrap();
        // back home: still there, still counted once each
        assert_eq!(Rc::strong_count(&rc), 3);
        drop((bound, copy));
        assert_eq!(Rc::strong_count(&rc), 1);
        // dropped on another thread: leaked, never dropped there
        let away = ThreadBound::new(rc.clone());
        std::thread::spawn(move || drop(away)).join().unwrap();
        assert_eq!(Rc::strong_count(&rc), 2);
        // SAFETY: exactly one handle was leaked above; this releases it so
        // the allocation is freed with `rc` (and leak checkers stay quiet).
        unsafe { Rc::decrement_strong_count(Rc::as_ptr(&rc)) };
        assert_eq!(Rc::strong_count(&rc), 1);
        let mut n = ThreadBound::new(1);
        *n.get_mut().unwrap() += 1;
        assert_eq!(n.get(), Some(&2));
    }
}
