//! The crate's own borrow guards: what reads and writes of a node's content
//! return ([`Ref::body`], [`Value::get_ref`], [`Value::pointer`], ...).
//!
//! A node's content lives in a `RefCell` (the graph is shared, and may be
//! changed through any handle), so a borrow into it is a guard, as
//! `RefCell`'s are. These wrap `RefCell`'s guards instead of exposing them,
//! so that a guard can also keep alive the node it borrows from (a pointer
//! reaches nodes that the value it started from does not hold directly),
//! and so that the crate can compare and print them.

use super::Ref;
use std::cell;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// A shared borrow of part of the graph, read as `&T`.
///
/// While it lives, the node it borrows from cannot be borrowed for writing:
/// [`Ref::body_mut`] and the other mutators return an error, and
/// [`Value::pointer_mut`] returns `None` (as `RefCell::try_borrow_mut`
/// would). It compares and prints as the `T` it reads.
///
/// ```
/// use sereal::{sereal, Borrowed, Value};
/// let v = sereal!({"tags": ["a", "b"]});
/// let tags: Borrowed<'_, Value> = v.get_ref("tags").unwrap();
/// assert!(tags.at(1).unwrap() == "b");
/// let first = Borrowed::map(tags, |t| t); // narrow like `cell::Ref::map`
/// assert!(first.at_ref(0).unwrap() == "a");
/// ```
///
/// [`Value::pointer_mut`]: super::Value::pointer_mut
pub struct Borrowed<'a, T: ?Sized + 'a> {
    // Declared before `node`, so dropped before it: the borrow may point
    // into that node.
    borrow: Shared<'a, T>,
    node: Option<Ref>,
}

enum Shared<'a, T: ?Sized> {
    Plain(&'a T),
    Cell(cell::Ref<'a, T>),
}

/// An exclusive borrow of part of the graph, read and written as `&mut T`.
///
/// While it lives, every other borrow of the node it borrows from fails:
/// [`Ref::try_body`] errors, [`Value::get_ref`] and [`Value::pointer`]
/// return `None`.
///
/// ```
/// use sereal::{sereal, Value};
/// let v = sereal!({"n": 1});
/// let other = v.clone(); // the same hash
/// *v.as_strong_ref().unwrap().hash_mut().unwrap().get_mut("n").unwrap() = Value::from(2);
/// assert!(other.get("n").unwrap() == 2);
/// ```
///
/// [`Value::get_ref`]: super::Value::get_ref
/// [`Value::pointer`]: super::Value::pointer
pub struct BorrowedMut<'a, T: ?Sized + 'a> {
    // Dropped before `node`, as in `Borrowed`.
    borrow: Exclusive<'a, T>,
    node: Option<Ref>,
}

enum Exclusive<'a, T: ?Sized> {
    Plain(&'a mut T),
    Cell(cell::RefMut<'a, T>),
}

/// What both guards do alike: `plain`, `cell`, `owning`, `map` and `Deref`, for the
/// guard `$guard` over `$inner`, `RefCell`'s guard `$cell`, and `&` or
/// `&mut` references (`$mut` empty or `mut`).
macro_rules! guard_common {
    ($guard:ident, $inner:ident, $cell:ident, $($mut:tt)?) => {
        impl<'a, T: ?Sized> $guard<'a, T> {
            pub(crate) fn plain(r: &'a $($mut)? T) -> Self {
                $guard {
                    borrow: $inner::Plain(r),
                    node: None,
                }
            }

            pub(crate) fn cell(r: cell::$cell<'a, T>) -> Self {
                $guard {
                    borrow: $inner::Cell(r),
                    node: None,
                }
            }

            /// A borrow of `node`'s content that keeps `node` alive.
            pub(crate) fn owning(
                node: Ref,
                borrow: impl FnOnce(&Ref) -> Option<cell::$cell<'_, T>>,
            ) -> Option<Self> {
                let b = borrow(&node)?;
                // SAFETY: the borrow points into the node, which `node`
                // keeps alive at a fixed address (moving the handle does not
                // move the node) for as long as the guard lives; the guard
                // drops the borrow first (field order). Only the lifetime
                // changes.
                let b: cell::$cell<'a, T> = unsafe { std::mem::transmute(b) };
                Some($guard {
                    borrow: $inner::Cell(b),
                    node: Some(node),
                })
            }

            #[doc = concat!("A guard on a part of what this one borrows (as `cell::", stringify!($cell), "::map`).")]
            pub fn map<U: ?Sized>(
                orig: Self,
                f: impl FnOnce(&$($mut)? T) -> &$($mut)? U,
            ) -> $guard<'a, U> {
                let borrow = match orig.borrow {
                    $inner::Plain(r) => $inner::Plain(f(r)),
                    $inner::Cell(r) => $inner::Cell(cell::$cell::map(r, f)),
                };
                $guard {
                    borrow,
                    node: orig.node,
                }
            }
        }

        impl<T: ?Sized> Deref for $guard<'_, T> {
            type Target = T;
            #[inline]
            fn deref(&self) -> &T {
                match &self.borrow {
                    $inner::Plain(r) => r,
                    $inner::Cell(r) => r,
                }
            }
        }
    };
}
guard_common!(Borrowed, Shared, Ref,);
guard_common!(BorrowedMut, Exclusive, RefMut, mut);

impl<'a, T: ?Sized> Borrowed<'a, T> {
    /// A guard on a part of what this one reads, if `f` finds one; the
    /// original guard otherwise (as `cell::Ref::filter_map`).
    ///
    /// ```
    /// use sereal::{Borrowed, Value};
    /// let v = Value::hash([("name", "ann")]);
    /// let name = Borrowed::filter_map(v.as_hash().unwrap(), |h| h.get("name")).ok().unwrap();
    /// assert_eq!(*name, "ann");
    /// let missing = Borrowed::filter_map(v.as_hash().unwrap(), |h| h.get("age"));
    /// assert!(missing.is_err()); // the hash's guard comes back
    /// ```
    pub fn filter_map<U: ?Sized>(
        orig: Self,
        f: impl FnOnce(&T) -> Option<&U>,
    ) -> Result<Borrowed<'a, U>, Self> {
        let node = orig.node;
        match orig.borrow {
            Shared::Plain(r) => match f(r) {
                Some(u) => Ok(Borrowed {
                    borrow: Shared::Plain(u),
                    node,
                }),
                None => Err(Borrowed {
                    borrow: Shared::Plain(r),
                    node,
                }),
            },
            Shared::Cell(r) => match cell::Ref::filter_map(r, f) {
                Ok(u) => Ok(Borrowed {
                    borrow: Shared::Cell(u),
                    node,
                }),
                Err(r) => Err(Borrowed {
                    borrow: Shared::Cell(r),
                    node,
                }),
            },
        }
    }
}

impl<T: ?Sized> DerefMut for BorrowedMut<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.borrow {
            Exclusive::Plain(r) => r,
            Exclusive::Cell(r) => r,
        }
    }
}

macro_rules! forward {
    ($($guard:ident),*) => {$(
        impl<T: ?Sized + fmt::Debug> fmt::Debug for $guard<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                (**self).fmt(f)
            }
        }

        impl<T: ?Sized + fmt::Display> fmt::Display for $guard<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                (**self).fmt(f)
            }
        }

        /// Compares what the guard reads: `guard == "b"`, `guard == 1`.
        impl<T: ?Sized + PartialEq<U>, U> PartialEq<U> for $guard<'_, T> {
            fn eq(&self, other: &U) -> bool {
                **self == *other
            }
        }
    )*};
}
forward!(Borrowed, BorrowedMut);

#[cfg(test)]
mod tests {
    use crate::{sereal, Value};

    /// A guard keeps alive the node it borrows from: the graph it was
    /// reached through may let go of that node first.
    #[test]
    fn a_guard_outlives_the_path_to_its_node() {
        let v = sereal!({"a": {"b": [1, "x"]}});
        let x = v.pointer("/a/b/1").unwrap();
        // the hash under "a", and with it the only other handle on the
        // array `x` borrows from, is dropped here
        v.as_strong_ref()
            .unwrap()
            .hash_mut()
            .unwrap()
            .insert("a", Value::from(0));
        assert!(x == "x");
        let narrowed = super::Borrowed::map(x, |x| x);
        assert_eq!(narrowed.as_str(), Some("x"));
    }

    /// Writes through an exclusive guard land in the node, and the node
    /// cannot be read while the guard lives.
    #[test]
    fn writes_through_a_guard_land_in_the_node() {
        let mut v = sereal!({"a": [1, {"b": 2}]});
        let other = v.clone();
        {
            let mut b = v.pointer_mut("/a/1/b").unwrap();
            assert!(other.pointer("/a/1/b").is_none(), "borrowed for writing");
            *b = Value::from("two");
        }
        assert!(other.pointer("/a/1/b").unwrap() == "two");
        *v.pointer_mut("").unwrap() = Value::from(3);
        assert!(v == 3);
        assert!(other.pointer("/a/0").unwrap() == 1);
    }
}
