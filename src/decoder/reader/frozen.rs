//! Frozen objects (`OBJECT_FREEZE`), and their THAW at the end of the
//! document, in Perl's order.

use super::*;

/// A frozen object whose class's THAW handler runs when the document ends.
pub(super) struct PendingThaw<'o> {
    /// The object: a node of its own, an array of its FREEZE values, which
    /// the object's slot and each reference made after its data names
    /// until THAW's result replaces it.
    node: Ref,
    /// The array of its FREEZE values as read, which references made
    /// inside that data name, and which a THAW given the object before it
    /// is thawed sees (Perl's array of the object's values).
    values: Ref,
    class: Key,
    handler: &'o Thaw,
    /// Where the `OBJECT_FREEZE` is, for errors.
    at: usize,
    /// How many frozen objects' data ended before this one's.
    ended: usize,
    /// Whether the document may refer to the object again (its `ARRAY`
    /// carries the track flag), or writes it as a slot: THAW must then
    /// return a reference.
    named: bool,
}

/// What THAW made of each object thawed so far, by the address of the node
/// that stood for it (held, so that no new node takes that address while
/// the THAWs run).
type Thawed = HashMap<usize, (Ref, Value)>;

/// The nodes a walk has entered, by address (held, likewise).
type Walked = HashMap<usize, Ref>;

fn addr(r: &Ref) -> usize {
    r.addr()
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
            return Err(self.cur.error_at(
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
            return Err(self.cur.error_at(
                ErrorKind::UnexpectedTag(t2, "in an OBJECT_FREEZE (expected ARRAY)"),
                at2,
            ));
        }
        let tracked = t2 & TRACK_FLAG != 0;
        let deferred = self.opts.thaw_order != ThawOrder::Immediate
            && !self.opts.no_bless_objects
            && !self.opts.no_thaw_objects;
        // In Perl's orders frozen objects are listed in the order their
        // data starts, and thawed when the document has been read.
        let thaw: &'o ClassMap<Thaw> = self.thaw;
        let registered = thaw.get(&class);
        let slot = match registered {
            Some(_) if deferred => {
                self.thaws.push(None);
                Some(self.thaws.len() - 1)
            }
            _ => None,
        };
        let node = self.node_from_tag(tag::ARRAY, at2, tracked, true)?;
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
        let handler = match registered {
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
                        return Err(self.cur.error_at(
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
            // As in Perl, references made inside the object's own data name
            // the array of its values (`node`); the object itself, and the
            // references made from here on, a node of its own that THAW's
            // result is to replace.
            let values = match &*node.body() {
                Body::Array(items) => items.to_vec(),
                _ => unreachable!("node_from_tag(ARRAY) makes an array"),
            };
            let copy = values.len().saturating_mul(memory::ELEMENT);
            self.cur
                .charge(copy.saturating_add(memory::NODE), "a frozen object", at)?;
            let object = Ref::array(values);
            if tracked {
                self.track(at2, &object, false);
            }
            self.thaws[i] = Some(PendingThaw {
                node: object.clone(),
                values: node,
                class,
                handler,
                at,
                named,
                ended: self.thaws_ended,
            });
            self.thaws_ended += 1;
            return Ok(wrap(object));
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
            let m = format!("THAW callback of class '{}' failed: {e}", name());
            self.cur.error_at(ErrorKind::Callback(m), at).caused_by(e)
        })?;
        if named && object.node().is_none() {
            return Err(self.cur.error_at(
                ErrorKind::Callback(format!(
                    "THAW callback of class '{}' returned a non-reference for an object referred to again or written without a reference",
                    name()
                )),
                at,
            ));
        }
        Ok(object)
    }

    /// Runs the THAWs the document's frozen objects wait for, in Perl's
    /// order: from the one whose data starts (Perl 5.004) or ends (Perl
    /// 5.003) last back to the first, each given its FREEZE values with the
    /// objects thawed before it in place; then puts each result where the
    /// decoder referred to the object (in `root` and in every container the
    /// decoder made, but not in what THAW handlers made).
    pub(super) fn run_thaws(&mut self, root: &mut Value) -> Result<()> {
        if self.thaws.is_empty() {
            return Ok(());
        }
        let mut pending: Vec<PendingThaw> = std::mem::take(&mut self.thaws)
            .into_iter()
            .flatten()
            .collect();
        if self.opts.thaw_order == ThawOrder::Perl5003 {
            pending.sort_by_key(|p| p.ended);
        }
        let mut unthawed: HashMap<usize, Ref> = pending
            .iter()
            .map(|p| (addr(&p.node), p.values.clone()))
            .collect();
        let mut thawed = Thawed::new();
        let mut walked = Walked::new();
        let mut read = Vec::new();
        for p in pending.into_iter().rev() {
            unthawed.remove(&addr(&p.node));
            let mut values = match &*p.node.body() {
                Body::Array(items) => items.to_vec(),
                _ => unreachable!("a pending object's node is the array of its values"),
            };
            for v in &mut values {
                replace_thawed(v, &thawed, &mut walked)?;
                // What THAW takes of an object not thawed yet is a reference
                // to the array of its values, as in Perl.
                unthawed_values(v, &unthawed);
            }
            let object = self.call_thaw(p.handler, &p.class, values, p.at, p.named)?;
            thawed.insert(addr(&p.node), (p.node, object));
            read.push(p.values);
        }
        let mut walked = Walked::new();
        // The arrays of values as read are the decoder's too: references
        // to thawed objects in them name the results, as in Perl, where a
        // THAW that took such an array sees the objects in it thawed later.
        for values in read {
            replace_thawed(&mut Value::Ref(values), &thawed, &mut walked)?;
        }
        // A cycle through a thawed object's result closes through an item
        // of its FREEZE data that was still being read (an ancestor of the
        // object): that item is in `cycles`, and from it the document's
        // drop reaches the result.
        replace_thawed(root, &thawed, &mut walked)
    }
}

/// Replaces every strong handle on a thawed object's node in `v`, and in
/// the containers reached from it not yet `walked`, by THAW's result (an
/// alias by one of the result's node). What a result holds is
/// not entered, but the thawed object's node, the FREEZE values it was
/// made of, is.
fn replace_thawed(v: &mut Value, thawed: &Thawed, walked: &mut Walked) -> Result<()> {
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
fn replace_one(v: &mut Value, thawed: &Thawed, walked: &mut Walked, todo: &mut Vec<Ref>) {
    let node = match v {
        Value::Ref(r) | Value::Alias(r) => r,
        Value::Weak(w) => {
            // As in Perl, a weak reference keeps naming the array of the
            // object's FREEZE values, which nothing holds once the strong
            // references name THAW's result.
            if let Some(node) = w.upgrade() {
                enter(&node, walked, todo);
            }
            return;
        }
        _ => return,
    };
    enter(node, walked, todo);
    if let Some((_, object)) = thawed.get(&addr(node)) {
        *v = match v {
            Value::Alias(_) => Value::Alias(object.node().expect("checked: a named object")),
            _ => object.clone(),
        };
    }
}

/// Points `v`, a handle on an object not thawed yet, at the array of its
/// values as read.
fn unthawed_values(v: &mut Value, unthawed: &HashMap<usize, Ref>) {
    let node = match v {
        Value::Ref(r) | Value::Alias(r) => r.clone(),
        Value::Weak(w) => match w.upgrade() {
            Some(r) => r,
            None => return,
        },
        _ => return,
    };
    let Some(values) = unthawed.get(&addr(&node)) else {
        return;
    };
    *v = match v {
        Value::Ref(_) => Value::Ref(values.clone()),
        Value::Alias(_) => Value::Alias(values.clone()),
        _ => Value::Weak(values.downgrade()),
    };
}

/// Puts `node` on the walk, unless it was entered before.
fn enter(node: &Ref, walked: &mut Walked, todo: &mut Vec<Ref>) {
    if let hashbrown::hash_map::Entry::Vacant(e) = walked.entry(addr(node)) {
        e.insert(node.clone());
        todo.push(node.clone());
    }
}
