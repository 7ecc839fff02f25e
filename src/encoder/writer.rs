//! The traversal: one pass over the graph, writing into one buffer.

use super::held::{snapshot, Held};
use super::order::entry_order;
use super::seen::{Addr, Retained, Seen, Spare};
use super::{CallbackPolicy, Callbacks, EncoderOptions};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, tag, TRACK_FLAG};
use crate::stack::{HasStack, Stack};
use crate::value::{prefetch, Body, ClassNames, Key, Node, NodeRc, Value};
use hashbrown::hash_map::Entry;

mod freeze;
mod guard;
mod scalars;

/// How the encoder reached a node.
#[derive(Clone, Copy)]
pub(super) enum Via {
    /// The node is the slot itself: a repeat is an `ALIAS`.
    Slot,
    /// Through a reference whose bytes start at this buffer position: a
    /// repeat rewinds there and writes `REFP`.
    Ref { rewrite: usize },
}

/// How a container's head is written.
#[derive(Clone, Copy)]
enum Head {
    /// `ARRAY n` or `HASH n`.
    Long,
    /// A `REFN` ends the output: the short form (`ARRAYREF_n`,
    /// `HASHREF_n`) replaces it when the container has one.
    AfterRefn,
    /// The reference to the container is not written yet: the short form,
    /// or `REFN` and the long head.
    Ref,
}

pub(super) struct Writer<'e> {
    pub opts: &'e EncoderOptions,
    /// The classes FREEZE may run for (`freeze_allow_classes`).
    pub allowed: Option<&'e ClassNames>,
    pub seen: &'e mut Seen,
    pub retained: Retained,
    /// Where `retained` gives its memory back for the next body.
    spare: &'e mut Spare,
    /// The caller's buffer, taken for the writing (a field of the writer
    /// rather than a reference to one: a write reads one pointer less) and
    /// given back when the writer is dropped.
    pub out: Vec<u8>,
    dest: &'e mut Vec<u8>,
    /// Where offsets count from in `out`, and where the body starts.
    pub base: usize,
    pub body_start: usize,
    pub depth: usize,
    /// The levels of `depth` that `max_recursion_depth` does not count, as
    /// Perl's encoder does not: a reference that is the root value or the
    /// content of a scalar cell (a reference to a reference) takes none;
    /// one held by an array or hash, one.
    free: usize,
    /// The depth at which `enter` takes its slow path: the deepest allowed
    /// or, when callbacks can run, the end of `active` (which then grows).
    enter_limit: usize,
    pub callbacks: &'e mut Callbacks,
    /// The box of the node whose body is being written at each depth
    /// (entries above the current depth are stale); kept only when
    /// callbacks can run
    /// (`guarded`), and locked while one does. The encoder's, taken for the
    /// writing as `out` is, and given back to `active_home`.
    pub active: Vec<Addr>,
    active_home: &'e mut Vec<Addr>,
    /// Whether a callback can run in this encode.
    pub guarded: bool,
    /// Whether containers are copied on entry (the Snapshot policy).
    pub snapshot: bool,
    /// Whether string values are deduplicated.
    pub dedupe: bool,
    /// Whether a container only one strong reference holds may be written
    /// without tracking (see `lone_container`): not under Snapshot, and
    /// with no `PAD`s to write.
    lone_refs: bool,
    pub warnings: &'e mut Vec<String>,
    /// Nodes whose strong references follow a `PAD` (`Encoder::with_pads`).
    pads: &'e hashbrown::HashSet<usize>,
    stack: Stack,
}

impl Drop for Writer<'_> {
    /// Gives the output and the record of active nodes back to their
    /// owners, then releases what the body kept alive (on an error or a
    /// panic too) and keeps its memory for the next body. The buffer goes
    /// back first: releasing drops values a callback returned, whose own
    /// `Drop` may panic, and the caller's bytes must survive that.
    fn drop(&mut self) {
        std::mem::swap(self.dest, &mut self.out);
        std::mem::swap(self.active_home, &mut self.active);
        std::mem::take(&mut self.retained).into_spare(self.spare);
    }
}

impl HasStack for Writer<'_> {
    fn stack(&mut self) -> &mut Stack {
        &mut self.stack
    }
}

impl<'e> Writer<'e> {
    pub fn new(
        enc: &'e mut super::Encoder,
        out: &'e mut Vec<u8>,
        base: usize,
        body_start: usize,
    ) -> Writer<'e> {
        let guarded = enc.callbacks_possible();
        let snapshot = guarded && enc.opts.policy == CallbackPolicy::Snapshot;
        Writer {
            opts: &enc.opts,
            allowed: enc.allowed.as_ref(),
            seen: &mut enc.seen,
            retained: Retained::from_spare(&mut enc.spare),
            spare: &mut enc.spare,
            out: std::mem::take(out),
            dest: out,
            base,
            body_start,
            depth: 0,
            free: 0,
            enter_limit: 0,
            callbacks: &mut enc.callbacks,
            active: std::mem::take(&mut enc.active),
            active_home: &mut enc.active,
            guarded,
            snapshot,
            dedupe: enc.opts.dedupe_strings || enc.opts.aliased_dedupe_strings,
            lone_refs: !snapshot && enc.pads.is_empty(),
            warnings: &mut enc.warnings,
            pads: &enc.pads,
            stack: Stack::lazy(),
        }
    }

    /// Writes a whole body for `value`.
    pub fn body(&mut self, value: &Value) -> Result<()> {
        self.enter()?;
        self.uncounted(|w| w.value(value, Held::GRAPH))?;
        self.fix_weak_refs();
        Ok(())
    }

    #[inline]
    pub(super) fn offset(&self) -> u64 {
        (self.out.len() - self.base) as u64
    }

    #[inline]
    pub(super) fn tag_varint(&mut self, t: u8, n: u64) {
        protocol::write_tag_varint(&mut self.out, t, n);
    }

    #[inline]
    pub(super) fn set_track_flag(&mut self, offset: u64) {
        self.out[self.base + offset as usize] |= TRACK_FLAG;
    }

    fn fix_weak_refs(&mut self) {
        // A node reached only through weak references would not survive
        // decoding: its last WEAKEN becomes PAD, making that reference strong.
        // Perl's encoder also drops the track flag the WEAKEN may carry,
        // leaving later REFP/ALIAS to that slot dangling; the flag is kept
        // here, which Perl's decoder reads as tracking the slot.
        for &off in self.seen.weak.values() {
            if off != 0 {
                let byte = &mut self.out[self.base + off as usize];
                *byte = tag::PAD | (*byte & TRACK_FLAG);
            }
        }
    }

    /// Writes one slot; `held` says how to count its node's references.
    fn value(&mut self, v: &Value, held: Held) -> Result<()> {
        let version = self.opts.protocol_version;
        match v {
            Value::Undef => self.out.push(tag::UNDEF),
            Value::CanonicalUndef => self.out.push(if version >= 3 {
                tag::CANONICAL_UNDEF
            } else {
                tag::UNDEF
            }),
            Value::Bool(b) => self.write_bool(*b),
            Value::True => self.out.push(tag::TRUE),
            Value::False => self.out.push(tag::FALSE),
            Value::Int(i) => self.write_int(*i),
            Value::UInt(u) => self.write_uint(*u),
            Value::Float(f) => {
                self.out.push(tag::FLOAT);
                self.out.extend_from_slice(&f.to_le_bytes());
            }
            Value::Double(d) => self.write_double(*d),
            Value::LongDouble(b) => {
                self.out.push(tag::LONG_DOUBLE);
                self.out.extend_from_slice(&b[..]);
            }
            Value::Float128(b) => {
                self.out.push(tag::FLOAT_128);
                self.out.extend_from_slice(&b[..]);
            }
            Value::Bytes(s) => self.write_string(s, false, false),
            Value::Utf8(s) => self.write_string(s, true, false),
            Value::Ref(r) => {
                if let Some(body) = self.lone_container(&r.0) {
                    return self.write_lone(&r.0, body);
                }
                self.enter()?;
                self.write_ref(&r.0, held, false)?;
                self.depth -= 1;
            }
            Value::Weak(w) => {
                if w.0.strong_count() == 0 {
                    // The node is gone: Perl sees an undefined value.
                    self.out.push(tag::UNDEF);
                } else {
                    self.enter()?;
                    if self.guarded {
                        // A callback could drop the node's owners: hold it.
                        let node = w.0.upgrade().expect("strong count checked");
                        self.write_ref(&node, Held::own(1), true)?;
                    } else {
                        // SAFETY: the node is alive (strong count checked) and
                        // no user code runs in this encode, so it stays alive;
                        // `ManuallyDrop` keeps the count as it was.
                        let node =
                            std::mem::ManuallyDrop::new(unsafe { NodeRc::from_raw(w.0.as_ptr()) });
                        self.write_ref(&node, Held::GRAPH, true)?;
                    }
                    self.depth -= 1;
                }
            }
            Value::Alias(r) => {
                self.enter()?;
                self.write_alias(&r.0, held)?;
                self.depth -= 1;
            }
            Value::Foreign(x) => self.write_foreign(x)?,
        }
        Ok(())
    }

    /// Whether the node was written (tracked) before in this body. A node
    /// this handle alone holds never was: tracking needs a second handle,
    /// and a tracked node is held by the encoder (retained) whenever a
    /// callback could have dropped its other handles; so the lookup is
    /// skipped for it.
    #[inline]
    fn was_written(&self, rc: &NodeRc) -> bool {
        self.written_at(rc).is_some()
    }

    /// Where the node was written before in this body, if it was (see
    /// [`Writer::was_written`]).
    #[inline]
    fn written_at(&self, rc: &NodeRc) -> Option<u64> {
        if NodeRc::strong_count(rc) > 1 || NodeRc::weak_count(rc) > 0 {
            self.seen.refs.get(&Addr::node(rc)).copied()
        } else {
            None
        }
    }

    /// Writes a slot that is the node itself (`Value::Alias`).
    ///
    /// Perl blesses referents, so it has no blessed container in a slot; a
    /// blessed array, hash, regexp or frozen object met first as a slot is
    /// written with its class before it, unreferenced: `OBJECT class ARRAY`
    /// (`OBJECT_FREEZE class ARRAY values` for a frozen one or one whose
    /// class has a FREEZE handler), which this crate's decoder reads back as
    /// the slot being that object. (Perl's decoder refuses such bytes: it
    /// blesses only references.) A blessed scalar cell in a slot is written
    /// as its content, as Perl writes a blessed scalar: a reference to it
    /// later in the document carries its class (`OBJECT class REFP`); with a
    /// FREEZE handler for its class it is written as a frozen object.
    fn write_alias(&mut self, rc: &NodeRc, held: Held) -> Result<()> {
        let addr = Addr::node(rc);
        let written = self.was_written(rc);
        if written {
            // An ALIAS; tracked as what was written (FREEZE values, say).
            return if self.retained.is_frozen(addr) {
                self.write_frozen(rc, held, 0, Via::Slot, None)
            } else {
                self.write_node(rc, held, 0, Via::Slot)
            };
        }
        // SAFETY: the class is read before any callback can run and copied.
        let class = unsafe { rc.class_unguarded() }.cloned();
        let Some(class) = class.filter(|_| !self.opts.no_bless_objects) else {
            return self.write_node(rc, held, 0, Via::Slot);
        };
        if self.opts.croak_on_bless {
            return Err(Error::new(ErrorKind::BlessRefused));
        }
        if let Some(vals) = self.frozen(rc, held, &class)? {
            self.write_class(rc, &class, true)?;
            return self.write_frozen(rc, held, 0, Via::Slot, Some(vals));
        }
        // SAFETY: no callback runs while this reference is used.
        if matches!(unsafe { rc.body_unguarded() }?, Body::Scalar(_)) {
            return self.write_node(rc, held, 0, Via::Slot);
        }
        self.write_class(rc, &class, false)?;
        self.write_node(rc, held, 0, Via::Slot)
    }

    /// The body of an unblessed array or hash that only this strong
    /// reference holds (and that is no Snapshot copy's, nor follows a
    /// `PAD`): nothing to track or look up, so it is written at once,
    /// in its short form when it has one, as the general path writes it.
    #[inline(always)]
    fn lone_container<'n>(&self, rc: &'n NodeRc) -> Option<&'n Body> {
        if !self.lone_refs || NodeRc::strong_count(rc) != 1 || NodeRc::weak_count(rc) != 0 {
            return None;
        }
        // SAFETY: as for `track`: no callback runs while the body is used,
        // or (Guard) one that does finds the node locked, marked by
        // `write_lone` as the one being written at its depth.
        let (class, body) = unsafe { (rc.class_unguarded(), rc.body_unguarded().ok()?) };
        (class.is_none() && matches!(body, Body::Array(_) | Body::Hash(_))).then_some(body)
    }

    /// Writes `REFN` and the body `lone_container` found.
    #[inline(always)]
    fn write_lone(&mut self, rc: &NodeRc, body: &Body) -> Result<()> {
        self.enter()?;
        let head = if self.opts.canonical_refs {
            self.out.push(tag::REFN);
            Head::Long
        } else {
            Head::Ref
        };
        if self.guarded {
            self.mark_active(Addr::node_box(rc));
        }
        Stack::run(self, |w| w.write_body(body, |_| Held::GRAPH, head))?;
        self.depth -= 1;
        Ok(())
    }

    /// Writes a reference (strong, or weak with `weak`) to a node.
    fn write_ref(&mut self, rc: &NodeRc, held: Held, weak: bool) -> Result<()> {
        let mut weak_ofs = 0;
        if weak {
            weak_ofs = self.offset();
            self.out.push(tag::WEAKEN);
        } else if !self.pads.is_empty() && self.pads.contains(&(NodeRc::as_ptr(rc) as usize)) {
            self.out.push(tag::PAD);
        }
        let mut rewrite = self.out.len();
        // A container written before becomes a REFP over its class: write no
        // class (Perl writes one and rewinds over it, but keeps it in its
        // class table, so a later OBJECTV could point into rewound bytes).
        // So does an object written as its FREEZE values (tracked as their
        // ARRAY, as in Perl), or a frozen body. A blessed scalar keeps its
        // class before the REFP, as in Perl; once written (as a slot, say)
        // it is not frozen again, since its content is already written.
        let addr = Addr::node(rc);
        let written_at = self.written_at(rc);
        let written = written_at.is_some();
        // Tracked as its FREEZE values (a cell of an immortal too): a REFP.
        let frozen_before = written && self.retained.is_frozen(addr);
        // SAFETY: no callback runs while this reference is used.
        let repeat = frozen_before
            || written
                && matches!(
                    unsafe { rc.body_unguarded() }?,
                    Body::Array(_) | Body::Hash(_) | Body::Frozen(_)
                );
        if let Some(off) = written_at.filter(|_| repeat && !frozen_before && !weak) {
            if NodeRc::weak_count(rc) == 0 && held.count(rc) > 1 {
                // A container written before, held by strong handles only:
                // its REFP, as `track` writes it, without the bookkeeping a
                // weak reference or a first meeting needs.
                self.refer_back(off, Via::Ref { rewrite });
                return Ok(());
            }
        }
        let mut replacement = None;
        // SAFETY: the class is read before any callback can run and copied.
        if let Some(class) = unsafe { rc.class_unguarded() }.cloned().filter(|_| !repeat) {
            if self.opts.croak_on_bless {
                return Err(Error::new(ErrorKind::BlessRefused));
            }
            if !self.opts.no_bless_objects {
                if !written {
                    replacement = self.frozen(rc, held, &class)?;
                }
                if self.write_class(rc, &class, replacement.is_some())? {
                    rewrite = self.out.len();
                }
            }
        }
        self.out.push(tag::REFN);
        let via = Via::Ref { rewrite };
        if replacement.is_some() || frozen_before {
            return self.write_frozen(rc, held, weak_ofs, via, replacement);
        }
        Stack::run(self, |w| w.write_node(rc, held, weak_ofs, via))
    }

    /// Writes `OBJECT class` or `OBJECTV offset` (their `_FREEZE` forms with
    /// `freeze`) before a blessed referent. Returns whether a repeat of this
    /// (non-container) referent must keep the class, that is whether the
    /// reference rewrite point moves past it.
    fn write_class(&mut self, rc: &NodeRc, class: &Key, freeze: bool) -> Result<bool> {
        let addr = Addr::node(rc);
        let node: &Node = rc;
        // SAFETY: no callback runs while this reference is used.
        let body = unsafe { node.body_unguarded() }?;
        let freeze = freeze || matches!(body, Body::Frozen(_));
        let is_container = matches!(body, Body::Array(_) | Body::Hash(_));
        if !is_container && self.seen.objects.contains_key(&addr) {
            return Ok(false);
        }
        match self.seen.classes.get(&Addr::key(class)) {
            Some(&off) => self.tag_varint(
                if freeze {
                    tag::OBJECTV_FREEZE
                } else {
                    tag::OBJECTV
                },
                off,
            ),
            None => {
                self.out.push(if freeze {
                    tag::OBJECT_FREEZE
                } else {
                    tag::OBJECT
                });
                let here = self.offset();
                self.seen.classes.insert(Addr::key(class), here);
                self.retained.key(class);
                self.write_pv(class.as_bytes(), class.is_utf8());
            }
        }
        if is_container {
            return Ok(false);
        }
        let here = self.offset();
        self.seen.objects.insert(addr, here);
        self.retained.node(rc);
        Ok(true)
    }

    /// Records a node as met: the weak-referent and tracking tables, Perl's
    /// rules. Writes the back-reference (`REFP`/`ALIAS`, or an immortal's
    /// tag unless `frozen`) and returns `None` when the node was written
    /// before; otherwise returns its body and reference count.
    #[inline]
    fn track<'n>(
        &mut self,
        rc: &'n NodeRc,
        held: Held,
        weak_ofs: u64,
        via: Via,
        frozen: bool,
    ) -> Result<Option<(&'n Body, usize)>> {
        let node: &Node = rc;
        let addr = Addr::node(rc);
        let strong = held.count(rc);
        let mut refcount = strong;
        // SAFETY: nothing can borrow the node for writing while the encoder
        // uses this reference: no user code runs, or the node is locked, or
        // (Snapshot) the body is copied before any callback.
        let body = unsafe { node.body_unguarded() }?;
        let immortal = match (body, frozen) {
            (Body::Scalar(v), false) => self.immortal_tag(v),
            _ => None,
        };
        // Every cell of one of Perl's immortals is that one scalar: a weak
        // reference to it stays weak when the document refers to the same
        // immortal strongly anywhere (its tag stands for it, never a real
        // address).
        let weak_key = match immortal {
            Some(t) => Some(Addr::immortal(t)),
            None => (NodeRc::weak_count(rc) > 0).then_some(addr),
        };
        if let Some(key) = weak_key {
            match self.seen.weak.entry(key) {
                Entry::Vacant(e) => {
                    e.insert(weak_ofs);
                    if immortal.is_none() {
                        self.retained.node(rc);
                    }
                }
                Entry::Occupied(mut e) => {
                    if *e.get() != 0 {
                        e.insert(weak_ofs);
                    }
                }
            }
        }
        if NodeRc::weak_count(rc) > 0 {
            refcount += 1;
        }
        if frozen {
            // A frozen object is tracked however its count reads (under
            // Snapshot, the copy's handle and the encoder's may be all it
            // has): its FREEZE values are let go once written, so a later
            // meeting must be a back-reference to that writing.
            refcount = refcount.max(2);
        }
        if refcount > 1 {
            if let Some(t) = immortal {
                self.out.push(t);
                return Ok(None);
            }
            let here = self.offset();
            match self.seen.refs.entry(addr) {
                Entry::Occupied(e) => {
                    let off = *e.get();
                    self.refer_back(off, via);
                    return Ok(None);
                }
                Entry::Vacant(e) => {
                    e.insert(here);
                    // A frozen object is kept alive by `set_frozen` already.
                    if !frozen {
                        self.retained.node(rc);
                    }
                    if self.dedupe
                        && !self.opts.aliased_dedupe_strings
                        && !frozen
                        && is_dedupe_string(body)
                    {
                        let handles = strong + NodeRc::weak_count(rc);
                        self.seen.copy_targets.insert(here as usize, handles - 1);
                    }
                }
            }
        }
        Ok(Some((body, refcount)))
    }

    /// Writes a `REFP` (through a reference, over what was written from
    /// `rewrite` on) or an `ALIAS` (as the slot) to the node written at
    /// `off`, and marks that writing tracked.
    fn refer_back(&mut self, off: u64, via: Via) {
        if !self.seen.copy_targets.is_empty() {
            if let Some(left) = self.seen.copy_targets.get_mut(&(off as usize)) {
                *left = left.saturating_sub(1);
            }
        }
        match via {
            Via::Ref { rewrite } => {
                self.out.truncate(rewrite);
                self.tag_varint(tag::REFP, off);
            }
            Via::Slot => self.tag_varint(tag::ALIAS, off),
        }
        self.set_track_flag(off);
    }

    /// Writes a node reached through a reference or as the slot itself.
    fn write_node(&mut self, rc: &NodeRc, held: Held, weak_ofs: u64, via: Via) -> Result<()> {
        let Some((body, refcount)) = self.track(rc, held, weak_ofs, via, false)? else {
            return Ok(());
        };
        let head = if matches!(via, Via::Ref { .. }) && refcount == 1 && !self.opts.canonical_refs {
            Head::AfterRefn
        } else {
            Head::Long
        };
        if self.snapshot {
            let (copy, held) = snapshot(body);
            return self.write_body(&copy, |i| held[i], head);
        }
        if self.guarded {
            self.mark_active(Addr::node_box(rc));
        }
        self.write_body(body, |_| Held::GRAPH, head)
    }

    /// Writes a body, a container's with the head `head` says; `held(i)`
    /// says how to count the node of its `i`th slot (numbered as `held::slots`
    /// lists them).
    fn write_body(&mut self, body: &Body, held: impl Fn(usize) -> Held, head: Head) -> Result<()> {
        // Only `write_lone` leaves the reference to `write_head`.
        debug_assert!(matches!(body, Body::Array(_) | Body::Hash(_)) || !matches!(head, Head::Ref));
        match body {
            Body::Scalar(Value::Alias(_)) => Err(Error::new(ErrorKind::Unsupported(
                "a scalar cell holds an alias (a slot that is another node), which Sereal cannot carry"
                    .into(),
            ))),
            Body::Scalar(v) => self.uncounted(|w| w.value(v, held(0))),
            Body::Array(items) | Body::Frozen(items) => {
                let n = items.len();
                let short = matches!(body, Body::Array(_)).then_some(tag::ARRAYREF_0);
                self.write_head(head, tag::ARRAY, short, n);
                if !prefetch::pays(items) {
                    return items
                        .iter()
                        .enumerate()
                        .try_for_each(|(i, v)| self.element(v, held(i)));
                }
                items.iter().enumerate().try_for_each(|(i, v)| {
                    prefetch::ahead(items, i);
                    self.element(v, held(i))
                })
            }
            Body::Hash(h) => {
                let n = h.len();
                self.write_head(head, tag::HASH, Some(tag::HASHREF_0), n);
                let entries = h.entries();
                let Some(order) = entry_order(entries, self.opts.key_order, self.opts.sort_keys)
                else {
                    return entries.iter().enumerate().try_for_each(|(i, (k, v))| {
                        self.write_key(k);
                        self.element(v, held(i))
                    });
                };
                // In Perl's cmp order, Perl writes the keys as strings (its
                // key SVs), not as hash keys.
                let as_strings = self.opts.key_order.is_some();
                order.into_iter().try_for_each(|i| {
                    let (k, v) = &entries[i];
                    if as_strings {
                        self.write_string(k.as_str_value(), k.is_utf8(), true);
                    } else {
                        self.write_key(k);
                    }
                    self.element(v, held(i))
                })
            }
            Body::Regexp(re) => {
                self.out.push(tag::REGEXP);
                self.write_pv(re.pattern.as_bytes(), re.utf8);
                self.write_pv(re.flags.as_bytes(), false);
                Ok(())
            }
        }
    }

    /// Writes the head of a container of `n` items as `head` says: the
    /// long form is `long` and `n`; the short form, for fewer than 16
    /// items, is `short` plus `n`, when the container has one (an
    /// `ARRAYREF_n` or `HASHREF_n` is the reference and the head at once).
    #[inline(always)]
    fn write_head(&mut self, head: Head, long: u8, short: Option<u8>, n: usize) {
        let short = short.filter(|_| n < 16).map(|t| t + n as u8);
        match (head, short) {
            (Head::AfterRefn, Some(t)) => {
                if let Some(last) = self.out.last_mut() {
                    debug_assert_eq!(*last, tag::REFN);
                    *last = t;
                }
            }
            (Head::Ref, Some(t)) => self.out.push(t),
            (Head::Ref, None) => {
                self.out.push(tag::REFN);
                self.tag_varint(long, n as u64);
            }
            (Head::Long | Head::AfterRefn, None) | (Head::Long, Some(_)) => {
                self.tag_varint(long, n as u64)
            }
        }
    }

    /// An array element or hash value: a plain scalar written at once, or
    /// anything else by `value`.
    #[inline(always)]
    fn element(&mut self, v: &Value, held: Held) -> Result<()> {
        if self.plain_scalar(v) {
            return Ok(());
        }
        if let Value::Ref(r) = v {
            if let Some(body) = self.lone_container(&r.0) {
                return self.write_lone(&r.0, body);
            }
        }
        self.item(v, held)
    }
}

/// Whether `body` is a string [`Writer::write_string`] deduplicates.
fn is_dedupe_string(body: &Body) -> bool {
    match body {
        Body::Scalar(Value::Bytes(s)) => s.as_bytes().len() > 3,
        Body::Scalar(Value::Utf8(s)) => s.as_bytes().len() > 3,
        _ => false,
    }
}
