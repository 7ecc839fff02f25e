//! Freeing a graph without recursion and without copying it.
//!
//! A node whose last handle goes frees its children, and those the
//! children it was the last owner of, to any depth. Recursing would
//! overflow the stack on deep graphs, so the drop walks them with an
//! explicit stack of the containers it is emptying, each draining its
//! elements in place: one entry for each level of depth whose container
//! has elements left (a chain of one-element containers takes one). A wide
//! container (an array of 300,000 references) is emptied where it lies,
//! not copied out first.

use super::noderc::NodeRc;
use super::{Body, Node, Value};

/// The elements a freed container still has to let go of.
enum Children {
    Scalar(Option<Value>),
    Array(smallvec::IntoIter<[Value; 1]>),
    Hash(std::vec::IntoIter<(super::Key, Value)>),
}

impl Children {
    /// Takes the elements of `body` when one of them may own a node;
    /// a body holding none is left to its own drop.
    fn take(body: &mut Body) -> Option<Children> {
        match body {
            Body::Scalar(v) if owns_node(v) => Some(Children::Scalar(Some(std::mem::take(v)))),
            Body::Array(a) | Body::Frozen(a) if a.iter().any(owns_node) => {
                Some(Children::Array(std::mem::take(a).into_iter()))
            }
            Body::Hash(h) if h.values().any(owns_node) => {
                Some(Children::Hash(std::mem::take(h).into_iter()))
            }
            _ => None,
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Children::Scalar(v) => v.is_none(),
            Children::Array(a) => a.len() == 0,
            Children::Hash(h) => h.len() == 0,
        }
    }

    fn next(&mut self) -> Option<Value> {
        match self {
            Children::Scalar(v) => v.take(),
            Children::Array(a) => a.next(),
            Children::Hash(h) => h.next().map(|(_, v)| v),
        }
    }
}

fn owns_node(v: &Value) -> bool {
    matches!(v, Value::Ref(_) | Value::Alias(_))
}

impl Drop for Node {
    fn drop(&mut self) {
        let Some(first) = Children::take(self.body.get_mut()) else {
            return;
        };
        let mut stack = vec![first];
        while let Some(top) = stack.last_mut() {
            let Some(v) = top.next() else {
                stack.pop();
                continue;
            };
            // A container whose last element this is leaves the stack
            // first, so a chain of them is walked in constant memory.
            if top.is_empty() {
                stack.pop();
            }
            if let Value::Ref(r) | Value::Alias(r) = v {
                // The last handle: the node's children join the walk, and
                // the node itself, emptied, is freed here.
                if let Ok(mut node) = NodeRc::try_unwrap(r.0) {
                    if let Some(children) = Children::take(node.body.get_mut()) {
                        stack.push(children);
                    }
                }
            }
        }
    }
}
