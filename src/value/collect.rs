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

/// The nodes reachable from a set of candidates, each with what holds it
/// from outside them.
struct Subgraph {
    index: HashMap<*const Node, usize>,
    nodes: Vec<NodeRc>,
    /// Which nodes are held from outside the subgraph (the candidates' own
    /// handles do not count), are borrowed right now, or are reached from
    /// one that is.
    live: Vec<bool>,
}

impl Subgraph {
    fn new(candidates: &[Ref]) -> Subgraph {
        // Each node of the subgraph, with its strong count less the handles
        // held inside the subgraph or by the candidates (and less the
        // walk's own handle on it).
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
        // Whatever is held from outside (or is in use right now) is live,
        // and so is everything it reaches.
        let mut g = Subgraph {
            index,
            nodes,
            live: vec![false; in_use.len()],
        };
        let mut stack: Vec<usize> = (0..g.nodes.len())
            .filter(|&i| external[i] > 0 || in_use[i])
            .collect();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut g.live[i], true) {
                continue;
            }
            g.each_child(i, |j| stack.push(j));
        }
        g
    }

    /// Calls `f` with the index of each strong handle node `i` holds.
    fn each_child(&self, i: usize, mut f: impl FnMut(usize)) {
        // SAFETY: as in the walk that made the subgraph, which reached
        // every child.
        if let Ok(body) = unsafe { self.nodes[i].body_unguarded() } {
            children(body, |child| f(self.index[&NodeRc::as_ptr(child)]));
        }
    }
}

/// Frees what only cycles keep alive among the nodes reachable from
/// `candidates` (nodes every strong cycle of the graph passes through).
/// The candidates' own handles do not count as holding anything.
pub(crate) fn collect_cycles(candidates: &[Ref]) {
    if candidates.is_empty() {
        return;
    }
    let g = Subgraph::new(candidates);
    // The rest only the subgraph holds: take their bodies, and drop them
    // once no walk is looking any more.
    let mut garbage = Vec::new();
    for (node, live) in g.nodes.iter().zip(&g.live) {
        if !live {
            if let Ok(mut body) = node.body.try_borrow_mut() {
                garbage.push(std::mem::replace(&mut *body, Body::Scalar(Value::Undef)));
            }
        }
    }
    drop(g);
    drop(garbage);
}

/// How many passes of the quick check `prune_candidates` makes before it
/// works the answer out over the whole subgraph.
const QUICK_PASSES: usize = 4;

/// Lets go of the candidates no strong cycle needs, so that what the graph
/// holds is what plain reference counting would hold: a candidate that
/// only `candidates` holds (named from below a weak reference, say, where
/// no strong cycle closed) goes, with whatever only it held; one on a
/// strong cycle, or reached from one, stays.
pub(crate) fn prune_candidates(candidates: &mut Vec<Ref>) {
    for _ in 0..QUICK_PASSES {
        let before = candidates.len();
        // Dropping a candidate may free others' last holders: the next
        // pass sees those.
        candidates.retain(|c| c.strong_count() > 1);
        if candidates.len() == before {
            return;
        }
    }
    // A long chain of candidates, each held by the next: peel the nodes
    // that nothing but the candidates holds, from those nothing holds at
    // all inward. What no peeling reaches is on a strong cycle, or held
    // from one.
    let g = Subgraph::new(candidates);
    let dead = |i: usize| !g.live[i];
    let mut holders = vec![0usize; g.nodes.len()];
    for i in (0..g.nodes.len()).filter(|&i| dead(i)) {
        g.each_child(i, |j| holders[j] += 1);
    }
    let mut peel: Vec<usize> = (0..g.nodes.len())
        .filter(|&i| dead(i) && holders[i] == 0)
        .collect();
    let mut peeled = vec![false; g.nodes.len()];
    while let Some(i) = peel.pop() {
        peeled[i] = true;
        g.each_child(i, |j| {
            holders[j] -= 1;
            if holders[j] == 0 && dead(j) {
                peel.push(j);
            }
        });
    }
    // The walk's own handles go last, so the peeled nodes are freed then,
    // with nothing looking.
    candidates.retain(|c| !peeled[g.index[&NodeRc::as_ptr(&c.0)]]);
    drop(g);
}
