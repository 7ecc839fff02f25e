//! The graph walk the fuzz targets share.

use sereal::{Body, Ref, Value};
use std::collections::HashSet;

/// A node's identity: the address of its body.
pub fn id(r: &Ref) -> usize {
    &*r.body() as *const Body as usize
}

/// The nodes `root` reaches through strong handles (and through weak ones
/// too with `weak_too`); `f` sees every value met.
pub fn reach(root: &Value, weak_too: bool, mut f: impl FnMut(&Value)) -> HashSet<usize> {
    let mut reached = HashSet::new();
    let mut stack = vec![root.clone()];
    while let Some(v) = stack.pop() {
        f(&v);
        let r = match v {
            Value::Ref(r) | Value::Alias(r) => r,
            Value::Weak(w) if weak_too => match w.upgrade() {
                Some(r) => r,
                None => continue,
            },
            _ => continue,
        };
        if !reached.insert(id(&r)) {
            continue;
        }
        match &*r.body() {
            Body::Scalar(x) => stack.push(x.clone()),
            Body::Array(a) | Body::Frozen(a) => stack.extend(a.iter().cloned()),
            Body::Hash(h) => stack.extend(h.values().cloned()),
            Body::Regexp(_) => {}
        };
    }
    reached
}
