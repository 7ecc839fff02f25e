//! Slots read as aliases of cells that nothing else turns out to hold.
//!
//! A tracked item in a slot (an array element, a hash value, the root) is
//! read as an alias of a cell, and so is a `COPY` of a tracked string,
//! which answers the string's offset from then on: Perl's decoder makes
//! the slot's own scalar the one that a later `REFP` or `ALIAS` to that
//! offset names. When none does (the references to the string came before
//! the copy, or a later copy answers the offset instead), Perl's slot is a
//! plain scalar like any other, and so it is here: once the document is
//! read, the alias of a cell that no other slot, reference or weak
//! reference holds, and that is not blessed, is replaced by the cell's
//! value.

use super::Reader;
use crate::value::{Body, Ref, Value};
use hashbrown::HashSet;

impl Reader<'_, '_> {
    /// Notes `node`, just read as the alias in a slot, if it is a cell:
    /// one that may turn out to be held by that slot alone.
    pub(super) fn slot_alias(&mut self, node: &Ref) {
        if matches!(node.try_body().as_deref(), Ok(Body::Scalar(_))) {
            self.aliased.push(node.clone());
        }
    }

    /// Forgets `node` as a slot's alias (see [`Reader::slot_alias`]): it
    /// was read as an alias, the last noted, but is a reference's referent.
    pub(super) fn not_a_slot(&mut self, node: &Ref) {
        if self.aliased.last().is_some_and(|n| n.ptr_eq(node)) {
            self.aliased.pop();
        }
    }
}

/// Replaces, in the graph of `root`, each alias of one of the cells
/// `aliased` that only that alias holds (after `aliased` lets go) by the
/// cell's value. The walk stops once every such alias is found.
pub(super) fn unalias_lone(root: &mut Value, aliased: Vec<Ref>) {
    // Most documents have no tracked slot: no set is made for them.
    if aliased.is_empty() {
        return;
    }
    let lone: HashSet<usize> = aliased
        .into_iter()
        .filter(|n| n.strong_count() == 2 && n.weak_count() == 0 && n.class().is_none())
        .map(|n| n.addr())
        .collect();
    if lone.is_empty() {
        return;
    }
    let mut walk = Walk {
        lone,
        left: 0,
        seen: HashSet::new(),
        stack: Vec::new(),
    };
    walk.left = walk.lone.len();
    walk.slot(root);
    while walk.left > 0 {
        let Some(node) = walk.stack.pop() else { break };
        let Ok(mut body) = node.body_mut() else {
            continue;
        };
        match &mut *body {
            Body::Scalar(v) => walk.slot(v),
            Body::Array(a) | Body::Frozen(a) => a.iter_mut().for_each(|v| walk.slot(v)),
            Body::Hash(h) => h.iter_mut().for_each(|(_, v)| walk.slot(v)),
            Body::Regexp(_) => {}
        }
    }
}

/// The walk of [`unalias_lone`]: the lone cells (by address) and how many
/// are still to be found, the nodes met and those still to visit.
struct Walk {
    lone: HashSet<usize>,
    left: usize,
    seen: HashSet<usize>,
    stack: Vec<Ref>,
}

impl Walk {
    /// Makes `v` its cell's value if it is the alias of a lone cell, and
    /// queues the node it then holds, if it holds one not met before.
    fn slot(&mut self, v: &mut Value) {
        if let Value::Alias(n) = v {
            if self.lone.contains(&n.addr()) {
                let inner = match n.body_mut().as_deref_mut() {
                    Ok(Body::Scalar(x)) => std::mem::take(x),
                    _ => return,
                };
                *v = inner;
                self.left -= 1;
            }
        }
        if let Value::Ref(n) | Value::Alias(n) = v {
            if self.seen.insert(n.addr()) {
                self.stack.push(n.clone());
            }
        }
    }
}
