//! Freeing the strong cycles of one graph: the nodes reachable from a set of
//! candidates that nothing outside that subgraph holds lose their bodies,
//! which breaks every cycle among them; nodes still held from outside, and
//! everything they reach, stay whole.

use super::{Body, Node, NodeRc, Ref, Value};
use hashbrown::HashMap;

/// The strong handles a body holds on other nodes.
fn children(body: &Body, mut f: impl FnMut(&NodeRc)) {
    let mut slot = |v: &Value| {
        if let Value::Ref(r) | Value::Alias(r) = v {
            f(&r.0);
        }
    };
    match body {
        Body::Scalar(v) => slot(v),
        Body::Array(a) | Body::Frozen(a) => a.iter().for_each(slot),
        Body::Hash(h) => h.values().for_each(slot),
        Body::Regexp(_) => {}
    }
}

/// Frees what only cycles keep alive among the nodes reachable from
/// `candidates` (nodes every strong cycle of the graph passes through).
/// The candidates' own handles do not count as holding anything.
pub(crate) fn collect_cycles(candidates: &[Ref]) {
    if candidates.is_empty() {
        return;
    }
    // Each node of the subgraph, with its strong count less the handles
    // held inside the subgraph or about to be released (and less the walk's
    // own handle on it).
    let mut index: HashMap<*const Node, usize> = HashMap::new();
    let mut nodes: Vec<NodeRc> = Vec::new();
    let mut external: Vec<isize> = Vec::new();
    let mut reach = |rc: &NodeRc, nodes: &mut Vec<NodeRc>, external: &mut Vec<isize>| {
        let i = *index.entry(NodeRc::as_ptr(rc)).or_insert_with(|| {
            external.push(NodeRc::strong_count(rc) as isize);
            nodes.push(rc.clone());
            nodes.len() - 1
        });
        external[i] -= 1;
        i
    };
    for r in candidates {
        reach(&r.0, &mut nodes, &mut external);
    }
    let mut in_use = vec![false; nodes.len()];
    let mut next = 0;
    while next < nodes.len() {
        let node = nodes[next].clone();
        // SAFETY: nothing runs during the walk that could borrow a body
        // mutably, and the reference does not outlive this step.
        match unsafe { node.body_unguarded() } {
            Ok(body) => children(body, |child| {
                reach(child, &mut nodes, &mut external);
            }),
            Err(_) => {
                in_use.resize(nodes.len(), false);
                in_use[next] = true;
            }
        }
        next += 1;
    }
    in_use.resize(nodes.len(), false);
    // Whatever is held from outside (or is in use right now) is live, and
    // so is everything it reaches.
    let mut live = vec![false; nodes.len()];
    let mut stack: Vec<usize> = (0..nodes.len())
        .filter(|&i| external[i] > 0 || in_use[i])
        .collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut live[i], true) {
            continue;
        }
        // SAFETY: as in the walk above.
        if let Ok(body) = unsafe { nodes[i].body_unguarded() } {
            children(body, |child| {
                let j = index[&NodeRc::as_ptr(child)];
                if !live[j] {
                    stack.push(j);
                }
            });
        }
    }
    // The rest only the subgraph holds: take their bodies, and drop them
    // once no walk is looking any more.
    let mut garbage = Vec::new();
    for (node, live) in nodes.iter().zip(&live) {
        if !live {
            if let Ok(mut body) = node.body.try_borrow_mut() {
                garbage.push(std::mem::replace(&mut *body, Body::Scalar(Value::Undef)));
            }
        }
    }
    drop(nodes);
    drop(garbage);
}
