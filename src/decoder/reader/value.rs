//! Values: what one untracked tag reads as, written into its slot.

use super::{memory, Reader};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::over_limit;
use crate::protocol::{self, tag, TRACK_FLAG};
use crate::value::{Array, Body, Hash, Key, Ref, Value};

impl Reader<'_, '_> {
    pub(super) fn value_from_tag(&mut self, t: u8, at: usize) -> Result<Value> {
        let mut v = Value::Undef;
        self.value_into(t, at, &mut v)?;
        Ok(v)
    }

    /// Reads the value whose (untracked) tag `t` was read at `at` into
    /// `out`. Writing in place, rather than returning the 24-byte value,
    /// keeps the hot loops clear of store-forwarding stalls on its copy.
    #[inline]
    pub(super) fn value_into(&mut self, t: u8, at: usize, out: &mut Value) -> Result<()> {
        // The commonest scalars are each written by their own store, not
        // through the value the other arms make (see `put`).
        match t {
            tag::POS_0..=tag::POS_15 if self.alias_below == 0 => {
                put(out, Value::Int(i64::from(t)));
                return Ok(());
            }
            tag::NEG_16..=tag::NEG_1 if self.alias_below == 0 => {
                put(out, Value::Int(i64::from(t) - 32));
                return Ok(());
            }
            tag::VARINT if self.alias_below == 0 => {
                let n = self.cur.varint()?;
                put(out, Value::from(n));
                return Ok(());
            }
            tag::ZIGZAG => {
                let n = protocol::zigzag_decode(self.cur.varint()?);
                put(out, Value::Int(n));
                return Ok(());
            }
            tag::DOUBLE => {
                let d = f64::from_le_bytes(self.cur.fixed()?);
                put(out, Value::Double(d));
                return Ok(());
            }
            tag::REFN => {
                let node = self.read_node()?;
                self.note_pad(at, &node);
                put(out, Value::Ref(node));
                return Ok(());
            }
            tag::ARRAYREF_0..=tag::ARRAYREF_15 | tag::HASHREF_0..=tag::HASHREF_15 => {
                self.enter()?;
                let n = (t & 15) as usize;
                let (limit, what) = if t <= tag::ARRAYREF_15 {
                    (self.opts.max_num_array_entries, "array")
                } else {
                    (self.opts.max_num_hash_entries, "hash")
                };
                if let Some(kind) = over_limit(n as u64, limit, what) {
                    return Err(self.cur.error_at(kind, at));
                }
                // The node and its at most 15 items, counted at once.
                let bytes = memory::SHORT_CONTAINER[usize::from(t - tag::ARRAYREF_0)];
                self.cur.charge_tag(bytes, t, at)?;
                // Each kind of node is made from a constant body (an array's
                // sized in place), written straight into the node's memory:
                // a body chosen at run time is built on the stack and copied
                // over with wide loads of the narrow stores that made it (a
                // store-forwarding stall per container).
                let mut node;
                if t <= tag::ARRAYREF_15 {
                    node = self.counted_node(Body::Array(Array::new()));
                    node.fill(|b| match b {
                        Body::Array(a) => {
                            // An array of one keeps it in the node.
                            if n > 1 {
                                a.reserve(n);
                            }
                            self.grow(|r| r.array_items(a, n))
                        }
                        _ => unreachable!("the body made here"),
                    })?;
                } else {
                    node = self.counted_node(Body::Hash(Hash::with_capacity(n)));
                    node.fill(|b| match b {
                        Body::Hash(h) => self.grow(|r| r.hash_entries(h, n)),
                        _ => unreachable!("the body made here"),
                    })?;
                }
                self.cur.leave();
                self.note_pad(at, &node);
                put(out, Value::Ref(node));
                return Ok(());
            }
            _ => {}
        }
        let v = match t {
            tag::POS_0..=tag::POS_15 => self.alias_of(i64::from(t)),
            tag::NEG_16..=tag::NEG_1 => self.alias_of(i64::from(t) - 32),
            tag::VARINT => match self.cur.varint()? {
                n if n < self.alias_below && self.alias_below > 16 => self.alias_of(n as i64),
                n => Value::from(n),
            },
            tag::FLOAT => Value::Float(f32::from_le_bytes(self.cur.fixed()?)),
            tag::LONG_DOUBLE => Value::LongDouble(Box::new(self.cur.fixed()?)),
            tag::FLOAT_128 => Value::Float128(Box::new(self.cur.fixed()?)),
            tag::UNDEF if self.opts.use_undef => Value::CanonicalUndef,
            tag::UNDEF => Value::Undef,
            tag::CANONICAL_UNDEF => Value::CanonicalUndef,
            tag::YES => Value::Bool(true),
            tag::NO => Value::Bool(false),
            tag::TRUE => Value::True,
            tag::FALSE => Value::False,
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 | tag::BINARY | tag::STR_UTF8 => {
                let (b, kind) = self.string(t, true)?.expect("string tag");
                self.string_into(out, b, kind);
                return Ok(());
            }
            tag::REFP | tag::ALIAS => {
                let what = if t == tag::REFP { "REFP" } else { "ALIAS" };
                // Only registered items resolve, and an item is registered
                // when its tag is read: a REFP may name its own tracked tag
                // (Perl writes `$x = \$x` that way).
                let off = self.cur.varint()?;
                let item = self
                    .tracked
                    .as_mut()
                    .and_then(|m| m.get_mut(&(off as usize)))
                    .ok_or_else(|| Error::at(ErrorKind::BadOffset(off, what), at))?;
                let node = item.node.clone();
                if item.open && at != self.weak_ref_at {
                    // A strong reference back into what is being read: a
                    // cycle, which the document frees when it is dropped.
                    item.open = false;
                    self.cycles.push(node.clone());
                } else if item.open {
                    self.weak_named = Some(node.clone());
                }
                if t == tag::REFP {
                    self.note_pad(at, &node);
                    Value::Ref(node)
                } else {
                    Value::Alias(node)
                }
            }
            tag::ARRAY | tag::HASH | tag::REGEXP => {
                Value::Alias(self.node_from_tag(t, at, false, false)?)
            }
            tag::OBJECT | tag::OBJECTV => {
                let class = self.object_class(t == tag::OBJECT, at)?;
                let v = if self.weaken_follows() {
                    Value::Undef
                } else {
                    self.nested_value(t)?
                };
                let target = object_target(&v).ok_or_else(|| {
                    self.cur.error_at(
                        ErrorKind::Invalid("an object must be a reference".into()),
                        at,
                    )
                })?;
                if !self.opts.no_bless_objects {
                    target.bless(class);
                }
                v
            }
            tag::OBJECT_FREEZE | tag::OBJECTV_FREEZE => self.frozen_object(t, at)?,
            tag::WEAKEN => {
                self.weak_ref_at = self.cur.pos();
                let v = if self.weaken_follows() {
                    None
                } else {
                    Some(self.nested_value(t)?)
                };
                let named = self.weak_named.take();
                let Some(Value::Ref(r)) = v else {
                    // What the back-reference named stays held strongly:
                    // the document the error drops frees the cycle.
                    self.cycles.extend(named);
                    return Err(self
                        .cur
                        .error_at(ErrorKind::Invalid("WEAKEN of a non-reference".into()), at));
                };
                let w = r.downgrade();
                if is_immortal(&r) {
                    self.keep.push(r);
                } else {
                    self.weak_keep.push(r);
                }
                Value::Weak(w)
            }
            tag::COPY => {
                if let Some(p) = self.copy_into(at, out)? {
                    let node = self.node(Body::Scalar(std::mem::take(out)))?;
                    self.track(p, &node, false);
                    self.slot_alias(&node);
                    *out = Value::Alias(node);
                }
                return Ok(());
            }
            _ => {
                return Err(self
                    .cur
                    .error_at(ErrorKind::UnexpectedTag(t, "as a value"), at))
            }
        };
        put(out, v);
        Ok(())
    }
}

/// Sets `out` to `v`. The slots the reader fills hold `Undef`, which owns
/// nothing: written over without a call to drop it, `v` goes from
/// registers to the slot, instead of through a stack copy whose wide reload
/// of narrow stores stalls (store forwarding fails).
#[inline(always)]
fn put(out: &mut Value, v: Value) {
    if !matches!(out, Value::Undef) {
        *out = Value::Undef;
    }
    // SAFETY: `out` is valid for writes and holds `Undef`, which has no
    // destructor to skip.
    unsafe { std::ptr::write(out, v) }
}

impl Reader<'_, '_> {
    /// The class of an `OBJECT` (`literal`: a class name follows) or an
    /// `OBJECTV` (an offset to an earlier class name follows).
    /// Whether the next item (after any `PAD`s) is a `WEAKEN`, which no
    /// prefix holds: a weak reference is not a reference, neither weakened
    /// nor blessed. Checked before the item is read, so that a chain of
    /// them is refused at its start.
    fn weaken_follows(&self) -> bool {
        let next = self.cur.bytes()[self.cur.pos()..]
            .iter()
            .find(|&&b| b & !TRACK_FLAG != tag::PAD);
        next.is_some_and(|&b| b & !TRACK_FLAG == tag::WEAKEN)
    }

    pub(super) fn object_class(&mut self, literal: bool, at: usize) -> Result<Key> {
        if self.opts.refuse_objects {
            return Err(self.cur.error_at(ErrorKind::ObjectRefused, at));
        }
        if literal {
            return self.class_name();
        }
        let off = self.cur.varint()?;
        let p = self.cur.target(off, at, "OBJECTV")?;
        match self.classes.at(p) {
            Some(k) => Ok(k.clone()),
            None => Err(self
                .cur
                .error_at(ErrorKind::BadOffset(off, "OBJECTV class name"), at)),
        }
    }
}

/// Whether `r` is a cell holding one of Perl's immortal scalars (`PL_sv_yes`,
/// `PL_sv_no`, `PL_sv_undef`): Perl never frees those, so a weak reference
/// to one stays alive.
fn is_immortal(r: &Ref) -> bool {
    matches!(
        r.try_body().as_deref(),
        Ok(Body::Scalar(
            Value::True | Value::False | Value::CanonicalUndef
        ))
    )
}

/// The node an `OBJECT` blesses: the referent of a reference, or of the
/// reference held in a tracked cell, or a container that is the slot itself
/// (how this crate writes a [`Value::Alias`] of a blessed container; Perl's
/// decoder refuses it).
fn object_target(v: &Value) -> Option<Ref> {
    match v {
        Value::Ref(r) => Some(r.clone()),
        Value::Alias(node) => match &*node.try_body().ok()? {
            Body::Scalar(Value::Ref(r)) => Some(r.clone()),
            Body::Scalar(_) => None,
            _ => Some(node.clone()),
        },
        _ => None,
    }
}
