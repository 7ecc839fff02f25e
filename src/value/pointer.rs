//! JSON Pointers (RFC 6901) into the graph, in serde_json's shape.

use super::{mutation_refused, Body, Borrowed, BorrowedMut, Value};
use std::cell;

/// One reference token of a pointer, unescaped (`~1` is `/`, `~0` is `~`).
fn unescape(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains('~') {
        token.replace("~1", "/").replace("~0", "~").into()
    } else {
        token.into()
    }
}

/// An array index as RFC 6901 writes it: digits, no leading zero, no sign.
fn index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() > 1) {
        return None;
    }
    token.parse().ok()
}

fn child<'b>(body: &'b Body, token: &str) -> Option<&'b Value> {
    match body {
        Body::Array(a) => a.get(index(token)?),
        Body::Hash(h) => h.get(token),
        _ => None,
    }
}

fn child_mut<'b>(body: &'b mut Body, token: &str) -> Option<&'b mut Value> {
    match body {
        Body::Array(a) => a.get_mut(index(token)?),
        Body::Hash(h) => h.get_mut(token),
        _ => None,
    }
}

/// Walks all tokens of `pointer` but the last, cloning each slot (cheap: a
/// node is a counted handle): the value whose node holds the last slot, and
/// the last token. `None` for a pointer that is not `""` and does not start
/// with `/`, or a path that leads nowhere.
fn walk(root: &Value, pointer: &str) -> Option<(Value, String)> {
    let rest = pointer.strip_prefix('/')?;
    let mut tokens = rest.split('/').map(unescape);
    let mut last = tokens.next()?;
    let mut at = root.clone();
    for token in tokens {
        let node = at.node()?;
        let next = child(&*node.try_body().ok()?, &last)?.clone();
        at = next;
        last = token;
    }
    Some((at, last.into_owned()))
}

impl Value {
    /// The slot a JSON Pointer (RFC 6901) names, borrowed: `""` is the
    /// value itself, `"/tags/1"` element 1 of the array under `tags`.
    /// Tokens are hash keys and array indices, with `~1` for `/` and `~0`
    /// for `~` in keys; each step follows a reference (strong, weak or
    /// alias) as [`Value::get`] does, so shared and cyclic graphs are walked
    /// like trees.
    ///
    /// The guard keeps the node holding the slot alive and borrowed (as
    /// `RefCell::borrow` does): while it lives, that node cannot be
    /// changed. `None` for a malformed pointer, a path that leads nowhere,
    /// or a node borrowed for writing.
    ///
    /// ```
    /// use sereal::{sereal, Value};
    /// let v = sereal!({"id": 1, "tags": ["a", "b"], "a/b": {"~": true}});
    /// assert!(v.pointer("/tags/1").unwrap() == "b");
    /// assert!(v.pointer("/id").unwrap() == 1);
    /// assert!(v.pointer("/a~1b/~0").unwrap() == true);
    /// assert!(v.pointer("/tags/2").is_none());
    /// assert!(v.pointer("").unwrap().get("id").is_some());
    /// ```
    pub fn pointer(&self, pointer: &str) -> Option<Borrowed<'_, Value>> {
        if pointer.is_empty() {
            return Some(Borrowed::plain(self));
        }
        let (at, last) = walk(self, pointer)?;
        Borrowed::owning(at.node()?, |node| {
            let body = node.0.body.try_borrow().ok()?;
            cell::Ref::filter_map(body, |b| child(b, &last)).ok()
        })
    }

    /// The slot a JSON Pointer names, borrowed for changing: as
    /// [`Value::pointer`], and writing through the guard changes the node,
    /// which every handle on it sees.
    ///
    /// Borrow rules are `RefCell::try_borrow_mut`'s: when the node holding
    /// the slot is borrowed (a guard from [`Value::pointer`],
    /// [`Value::get_ref`] or [`Ref::body`](super::Ref::body) taken through
    /// another handle on it, say), this returns `None` instead of
    /// panicking.
    ///
    /// ```
    /// use sereal::{sereal, Value};
    /// let mut v = sereal!({"address": {"city": "Oslo"}});
    /// let other = v.clone(); // the same hash
    /// *v.pointer_mut("/address/city").unwrap() = Value::from("Bergen");
    /// assert!(other.pointer("/address/city").unwrap() == "Bergen");
    /// let reading = other.pointer("/address/city").unwrap();
    /// assert!(v.pointer_mut("/address/city").is_none()); // in use
    /// drop(reading);
    /// assert!(v.pointer_mut("/address/city").is_some());
    /// ```
    pub fn pointer_mut(&mut self, pointer: &str) -> Option<BorrowedMut<'_, Value>> {
        if pointer.is_empty() {
            return Some(BorrowedMut::plain(self));
        }
        let (at, last) = walk(self, pointer)?;
        BorrowedMut::owning(at.node()?, |node| {
            let Ok(body) = node.0.body.try_borrow_mut() else {
                // recorded, should an encoder callback hold the node locked
                mutation_refused(&node.0);
                return None;
            };
            cell::RefMut::filter_map(body, |b| child_mut(b, &last)).ok()
        })
    }
}
