//! Frozen objects (`OBJECT_FREEZE`), and their THAW at the end of the
//! document, in Perl's order.

use super::*;
use hashbrown::HashSet;
use std::rc::Rc;

/// A frozen object whose class's THAW handler runs when the document ends.
pub(super) struct PendingThaw<'o> {
    /// The object as read: an array of its FREEZE values, which every
    /// reference to the object names until THAW's result replaces it.
    node: Ref,
    class: Key,
    handler: &'o Thaw,
    /// Where the `OBJECT_FREEZE` is, for errors.
    at: usize,
    /// Whether the document may refer to the object again (its `ARRAY`
    /// carries the track flag), or writes it as a slot: THAW must then
    /// return a reference.
    named: bool,
}

/// What THAW made of each object thawed so far, by the address of the node
/// that stood for it.
type Thawed = HashMap<usize, Value>;

fn addr(r: &Ref) -> usize {
    Rc::as_ptr(&r.0) as usize
}

impl<'o> Reader<'_, 'o> {
    /// `OBJECT_FREEZE class REFN ARRAY values`: the class's THAW handler
    /// makes the object of the values when the document ends; without one
    /// the node keeps them as a [`Body::Frozen`] body. Without the `REFN`
    /// (`OBJECT_FREEZE class ARRAY values`, how this crate writes a
    /// [`Value::Alias`] of a frozen object) the slot is the object: an
    /// alias of it.
    pub(super) fn frozen_object(&mut self, t: u8, at: usize) -> Result<Value> {
        let class = self.object_class(t == tag::OBJECT_FREEZE, at)?;
        let (refn, refn_at) = self.next_tag()?;
        let slot_form = refn & !TRACK_FLAG == tag::ARRAY;
        if !slot_form && refn & !TRACK_FLAG != tag::REFN {
            return Err(self.err_at(
                ErrorKind::UnexpectedTag(refn, "after OBJECT_FREEZE (expected REFN or ARRAY)"),
                refn_at,
            ));
        }
        let wrap = |node: Ref| {
            if slot_form {
                Value::Alias(node)
            } else {
                Value::Ref(node)
            }
        };
        let (t2, at2) = if slot_form {
            (refn, refn_at)
        } else {
            self.next_tag()?
        };
        if t2 & !TRACK_FLAG != tag::ARRAY {
            return Err(self.err_at(
                ErrorKind::UnexpectedTag(t2, "in an OBJECT_FREEZE (expected ARRAY)"),
                at2,
            ));
        }
        let tracked = t2 & TRACK_FLAG != 0;
        let deferred =
            self.opts.thaw_lifo && !self.opts.no_bless_objects && !self.opts.no_thaw_objects;
        // With `thaw_lifo`, as in Perl 5.004, frozen objects are listed in
        // the order their data starts, and thawed from the last one back.
        let slot = match self.thaw.get(&class) {
            Some(_) if deferred => {
                self.thaws.push(None);
                Some(self.thaws.len() - 1)
            }
            _ => None,
        };
        let node = self.node_from_tag(tag::ARRAY, at2, tracked)?;
        if self.opts.no_bless_objects {
            return Ok(wrap(node));
        }
        if self.opts.no_thaw_objects {
            // what THAW would be given: the values, then the class
            if let Body::Array(items) = &mut *node.body_mut()? {
                items.push(if class.is_utf8() {
                    Value::utf8(String::from_utf8_lossy(class.as_bytes()))
                } else {
                    Value::bytes(class.as_bytes())
                });
            }
            node.bless("Sereal::Decoder::THAW_args");
            return Ok(wrap(node));
        }
        let handler = match self.thaw.get(&class) {
            Some(h) => {
                let refusal = if self.thaw_allowed.is_some_and(|a| !a.contains(&class)) {
                    Some("not in thaw_allow_classes")
                } else if self.thaw_allow_if.is_some_and(|allow| !allow(&class)) {
                    Some("refused by thaw_allow_if")
                } else {
                    None
                };
                match refusal {
                    Some(why) if !self.opts.thaw_deny_raw => {
                        return Err(self.err_at(
                            ErrorKind::Callback(format!(
                                "THAW not allowed for class '{}' ({why})",
                                String::from_utf8_lossy(class.as_bytes())
                            )),
                            at,
                        ))
                    }
                    Some(_) => None,
                    None => Some(h),
                }
            }
            None => None,
        };
        let named = tracked || slot_form;
        if let (Some(handler), Some(i)) = (handler, slot) {
            self.thaws[i] = Some(PendingThaw {
                node: node.clone(),
                class,
                handler,
                at,
                named,
            });
            return Ok(wrap(node));
        }
        let items = match std::mem::replace(&mut *node.body_mut()?, Body::Array(Array::new())) {
            Body::Array(a) => a,
            _ => unreachable!("node_from_tag(ARRAY) makes an array"),
        };
        let Some(handler) = handler else {
            node.set_body(Body::Frozen(items));
            node.bless(class);
            return Ok(wrap(node));
        };
        let object = self.call_thaw(handler, &class, items.into_vec(), at, named)?;
        // Later references to the frozen object mean the thawed one; a slot
        // that is the frozen object is the thawed one.
        if let Some(obj) = object.node().filter(|_| tracked) {
            self.track(at2, &obj, false);
        }
        if slot_form {
            return Ok(wrap(object.node().expect("checked: a named object")));
        }
        Ok(object)
    }

    /// Runs the THAW `handler` of the frozen object of `class` read at `at`
    /// on its FREEZE values; a `named` object must thaw to a reference.
    fn call_thaw(
        &self,
        handler: &Thaw,
        class: &Key,
        values: Vec<Value>,
        at: usize,
        named: bool,
    ) -> Result<Value> {
        let name = || String::from_utf8_lossy(class.as_bytes()).into_owned();
        let object = thaw(handler, class, values).map_err(|e| {
            self.err_at(
                ErrorKind::Callback(format!("THAW callback of class '{}' failed: {e}", name())),
                at,
            )
        })?;
        if named && object.node().is_none() {
            return Err(self.err_at(
                ErrorKind::Callback(format!(
                    "THAW callback of class '{}' returned a non-reference for an object referred to again or written without a reference",
                    name()
                )),
                at,
            ));
        }
        Ok(object)
    }

    /// Runs the THAWs the document's frozen objects wait for, from the one
    /// whose data starts last back to the first (Perl 5.004's LIFO order),
    /// each given its FREEZE values with the objects thawed before it in
    /// place; then puts each result where the document referred to the
    /// object (in `root` and in every container reached from it, but not
    /// inside what THAW returned).
    pub(super) fn run_thaws(&mut self, root: &mut Value) -> Result<()> {
        if self.thaws.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.thaws);
        let mut thawed = Thawed::new();
        let mut walked = HashSet::new();
        for p in pending.into_iter().rev().flatten() {
            let mut values = match &*p.node.body() {
                Body::Array(items) => items.to_vec(),
                _ => unreachable!("a pending object's node is the array of its values"),
            };
            for v in &mut values {
                replace_thawed(v, &thawed, &mut walked)?;
            }
            let object = self.call_thaw(p.handler, &p.class, values, p.at, p.named)?;
            thawed.insert(addr(&p.node), object);
        }
        // A cycle closed through an object's node stays in `cycles`: the
        // node keeps its FREEZE values, so from it the document's drop
        // still reaches whatever THAW made of them and the references the
        // walk below moves to it.
        replace_thawed(root, &thawed, &mut HashSet::new())
    }
}

/// Replaces every handle on a thawed object's node in `v`, and in the
/// containers reached from it not yet `walked`, by THAW's result (an alias
/// or a weak reference by one of the result's node). What a result holds is
/// not entered.
fn replace_thawed(v: &mut Value, thawed: &Thawed, walked: &mut HashSet<usize>) -> Result<()> {
    let mut todo = Vec::new();
    replace_one(v, thawed, walked, &mut todo);
    while let Some(node) = todo.pop() {
        let mut body = node.body_mut()?;
        match &mut *body {
            Body::Scalar(v) => replace_one(v, thawed, walked, &mut todo),
            Body::Array(items) | Body::Frozen(items) => items
                .iter_mut()
                .for_each(|v| replace_one(v, thawed, walked, &mut todo)),
            Body::Hash(h) => h
                .iter_mut()
                .for_each(|(_, v)| replace_one(v, thawed, walked, &mut todo)),
            Body::Regexp(_) => {}
        }
    }
    Ok(())
}

/// [`replace_thawed`] for one slot: the containers to enter go to `todo`.
fn replace_one(v: &mut Value, thawed: &Thawed, walked: &mut HashSet<usize>, todo: &mut Vec<Ref>) {
    let node = match v {
        Value::Ref(r) | Value::Alias(r) => r,
        Value::Weak(w) => {
            if let Some(object) = w.upgrade().and_then(|r| thawed.get(&addr(&r))) {
                *v = object
                    .node()
                    .map_or(Value::Undef, |n| Value::Weak(n.downgrade()));
            }
            return;
        }
        _ => return,
    };
    if let Some(object) = thawed.get(&addr(node)) {
        *v = match v {
            Value::Alias(_) => Value::Alias(object.node().expect("checked: a named object")),
            _ => object.clone(),
        };
    } else if walked.insert(addr(node)) {
        todo.push(node.clone());
    }
}
