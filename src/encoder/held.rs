//! How the writer counts the references to a slot's node, and the copies
//! of bodies the Snapshot policy writes from.

use crate::value::{Body, Key, NodeRc, Value};

/// How to read the reference count of a slot's node as Perl would: the
/// live strong count less the `own` handles the encoder itself holds on it,
/// and never less than `floor`.
///
/// A slot of a snapshot copy (the Snapshot policy) has the copy's handles
/// as `own` and, as `floor`, the node's count when the copy was made (the
/// copy's handles not included). Until a callback changes something the
/// two readings agree; a callback that drops handles cannot lower the count
/// below what the graph had when the container was entered (which keeps
/// its sharing), and one that adds handles raises it, as it does for Guard.
#[derive(Clone, Copy)]
pub(super) struct Held {
    pub(super) own: usize,
    pub(super) floor: usize,
}

impl Held {
    /// A slot of the graph itself (or of the encoder's FREEZE values).
    pub(super) const GRAPH: Held = Held::own(0);

    /// A slot on whose node the encoder holds `own` handles.
    pub(super) const fn own(own: usize) -> Held {
        Held { own, floor: 0 }
    }

    #[inline]
    pub(super) fn count(self, rc: &NodeRc) -> usize {
        NodeRc::strong_count(rc)
            .saturating_sub(self.own)
            .max(self.floor)
    }
}

/// The node a slot holds a strong handle on, if any.
fn slot_node(v: &Value) -> Option<&NodeRc> {
    match v {
        Value::Ref(r) | Value::Alias(r) => Some(&r.0),
        _ => None,
    }
}

/// The slots of a body, in the order `Writer::write_body` numbers them.
fn slots(body: &Body) -> impl Iterator<Item = &Value> {
    let (one, many, entries): (Option<&Value>, &[Value], &[(Key, Value)]) = match body {
        Body::Scalar(v) => (Some(v), &[], &[]),
        Body::Array(items) | Body::Frozen(items) => (None, items, &[]),
        Body::Hash(h) => (None, &[], h.entries()),
        Body::Regexp(_) => (None, &[], &[]),
    };
    one.into_iter()
        .chain(many)
        .chain(entries.iter().map(|(_, v)| v))
}

/// The Snapshot policy's copy of a body, with how to count each of its
/// slots' nodes.
pub(super) fn snapshot(body: &Body) -> (Body, Vec<Held>) {
    let before: Vec<usize> = slots(body)
        .map(|v| slot_node(v).map_or(0, NodeRc::strong_count))
        .collect();
    let copy = body.clone();
    let held = slots(&copy)
        .zip(before)
        .map(|(v, floor)| match slot_node(v) {
            Some(rc) => Held {
                own: NodeRc::strong_count(rc) - floor,
                floor,
            },
            None => Held::GRAPH,
        })
        .collect();
    (copy, held)
}
