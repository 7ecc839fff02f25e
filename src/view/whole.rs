//! An item found in the whole document's graph: for an item whose bytes
//! do not stand alone, decoded with the document and walked to.

use super::View;
use crate::error::{Error, ErrorKind, Result};
use crate::value::{Body as NodeBody, Value};
use crate::Document;

/// The item at `pos` of `view`, found by decoding the whole document and
/// walking to where the item is; the document's cycles are freed with it.
pub(crate) fn decode_whole(view: &View<'_>, pos: usize) -> Result<Document> {
    let doc = view.decoder().decode(view.input())?;
    let steps = locate(view, pos)?;
    let mut v: Value = doc.root().clone();
    for step in steps {
        if matches!(&v, Value::Weak(w) if w.upgrade().is_none()) {
            // inside a value held only by weak references, which the
            // decoder freed: Perl reads undef there
            return Ok(Document::from(Value::Undef));
        }
        v = child(&v, step).ok_or_else(|| {
            Error::new(ErrorKind::Invalid(
                "the decoded document has no item where the view has it".into(),
            ))
        })?;
    }
    Ok(doc.with_root(v))
}

/// A step from an item to one whose bytes are inside its own.
#[derive(Clone, Copy)]
enum Step {
    /// Element (or entry value) `i` of the array (or hash) it is or
    /// refers to, or of the values of a frozen object.
    Child(usize),
    /// The scalar it refers to, written after its `REFN` (a path reaches
    /// what is inside through a `REFP` from elsewhere).
    Referent,
}

/// The steps from the root to the item at `pos`, each to the item whose
/// bytes hold it.
fn locate(view: &View<'_>, pos: usize) -> Result<Vec<Step>> {
    let r = view.reader();
    let mut steps = Vec::new();
    let mut here = 0;
    let mut stack = Vec::new();
    while here != pos {
        let cont = match r.container(here)? {
            Some(c) => Some(c),
            // a frozen object's values, which the graph keeps as an array
            None => r.frozen(here)?,
        }
        .filter(|c| c.first > here);
        let mut found = None;
        if let Some(cont) = cont {
            let mut p = cont.first;
            for i in 0..cont.count {
                if cont.hash {
                    p = r.key(p)?.1;
                }
                let end = r.walk(p, &mut stack)?;
                if (p..end).contains(&pos) {
                    found = Some((Step::Child(i), p));
                    break;
                }
                p = end;
            }
        } else if let Some(p) = r.referent(here)? {
            if (p..r.walk(p, &mut stack)?).contains(&pos) {
                found = Some((Step::Referent, p));
            }
        }
        let Some((step, p)) = found else {
            return Err(Error::new(ErrorKind::Invalid(format!(
                "no value of the document starts at body position {pos}"
            ))));
        };
        steps.push(step);
        here = p;
    }
    Ok(steps)
}

/// What `step` reaches from `v`, through references and aliases of
/// scalar cells.
fn child(v: &Value, step: Step) -> Option<Value> {
    let mut v = v.clone();
    // An alias of a scalar cell reads as the cell's value (as the view's
    // walk follows an `ALIAS` to its target).
    for _ in 0..64 {
        let Value::Alias(cell) = &v else { break };
        let inner = match &*cell.try_body().ok()? {
            NodeBody::Scalar(inner) => inner.clone(),
            _ => break,
        };
        v = inner;
    }
    let node = v.node()?;
    let body = node.try_body().ok()?;
    match (&*body, step) {
        (NodeBody::Array(a) | NodeBody::Frozen(a), Step::Child(i)) => a.get(i).cloned(),
        (NodeBody::Hash(h), Step::Child(i)) => h.entries().get(i).map(|(_, v)| v.clone()),
        (NodeBody::Scalar(inner), Step::Referent) => Some(inner.clone()),
        _ => None,
    }
}
