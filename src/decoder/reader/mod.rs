//! The body reader: tags to a value graph, with back-references, limits,
//! depth and the cycles a document must free.

use super::scratch::Scratch;
use super::{memory, thaw, Decoder, DecoderOptions, Thaw, ThawOrder};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, tag, Cursor, TRACK_FLAG};
use crate::stack::{HasStack, Stack};
use crate::value::{
    collect, Array, Body, ClassMap, ClassNames, Document, Hash, Key, NodeChunks, Ref, Value,
};
use bytes::Bytes;
use hashbrown::HashMap;
use std::cell::OnceCell;
use std::sync::Arc;

mod frozen;
mod large;
mod lone;
mod strings;
mod value;

use large::LargeKeys;
pub(crate) use strings::string_over_limit;
use strings::ReadKeys;

/// Hashes of at least this many entries get unshared keys (see `Key`).
const UNSHARED_KEYS: usize = 256;

/// Hashes of more entries are indexed after they are read.
const BATCH_INDEX: usize = 64;

/// Reads one body. Errors carry offsets into `buf`.
pub(super) struct Reader<'a, 'o> {
    cur: Cursor<&'a [u8]>,
    /// The shared buffer `buf` lies in, whose long strings are kept as
    /// slices of it (`Decoder::decode_bytes`), and the handle on it that
    /// they share, made at the first.
    source: Option<&'a Bytes>,
    owner: OnceCell<Arc<Bytes>>,
    opts: &'o DecoderOptions,
    thaw: &'o ClassMap<Thaw>,
    thaw_allowed: Option<&'o ClassNames>,
    thaw_allow_if: Option<&'o (dyn Fn(&Key) -> bool + Send + Sync)>,
    /// Tracked items by offset, made at the first (with a fresh random
    /// state: offsets are the input's choice).
    tracked: Option<HashMap<usize, Tracked>>,
    /// Hash keys and class names read so far, by position (increasing: the
    /// targets of key COPYs and OBJECTVs).
    keys: ReadKeys,
    /// The keys of large hashes, by position (the targets of key COPYs).
    large: LargeKeys,
    /// The decoder's kept buffers, which `large` works in, and chunks.
    scratch: &'o Scratch,
    /// Where the document's nodes are made.
    nodes: NodeChunks,
    classes: ReadKeys,
    weak_keep: Vec<Ref>,
    /// Nodes a back-reference named while they were still being read.
    cycles: Vec<Ref>,
    /// Cells read as the alias in a slot, made plain values at the end if
    /// nothing else holds them (see `lone`).
    aliased: Vec<Ref>,
    /// Position of the reference tag the last WEAKEN applies to.
    weak_ref_at: usize,
    /// A node being read that the back-reference at `weak_ref_at` named
    /// without counting it a cycle, the WEAKEN being due to make it weak:
    /// a cycle after all if the WEAKEN fails.
    weak_named: Option<Ref>,
    /// Immortal cells that weak references point to (see [`Document`]).
    keep: Vec<Ref>,
    /// While an `OBJECT` that names its slot is read (a tracked one, or the
    /// referent of a `REFN`): the slot the next item makes. Perl reads an
    /// object's value into the object's own slot, so a tracked tag inside
    /// it names that slot too.
    slot: Option<Slot>,
    /// The prefix tag (`WEAKEN`, `OBJECT`, `OBJECTV`) whose own value is
    /// being read, with no nesting level entered since: the next prefix
    /// read is directly inside it.
    prefix: Option<u8>,
    /// Integers below this (and from -16) decode as aliases of one shared
    /// cell per value (`alias_smallint`, `alias_varint_under`); 0: none.
    alias_below: u64,
    // the shared cells, by value
    aliases: Option<HashMap<i64, Ref>>,
    /// Frozen objects waiting for THAW, in the order their data starts
    /// (`None`: one whose THAW turned out not to run).
    thaws: Vec<Option<frozen::PendingThaw<'o>>>,
    /// How many of them have been read to the end.
    thaws_ended: usize,
    stack: Stack,
    /// The forms of writing the graph does not keep, noted when asked for
    /// (`capturing`).
    forms: Option<Box<Forms>>,
    /// Where the item after the last run of `PAD`s starts (`usize::MAX`:
    /// none yet).
    pad_next: usize,
}

/// What a document's bytes chose that its value graph does not say: see
/// `json::Forms`, the public face of this type.
#[derive(Debug, Default)]
pub struct Forms {
    /// Handles on the nodes written in the long form.
    pub(crate) refn: Vec<Ref>,
    /// The addresses of the nodes whose strong reference follows a `PAD`.
    pub(crate) pad: Vec<usize>,
}

impl Forms {
    /// Whether the document's bytes made none of these choices.
    ///
    /// ```
    /// use sereal::json::Document;
    /// use sereal::Decoder;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let short = Document::decode(b"=\xF3rl\x05\x00\x41\x42\x01\x02", &Decoder::default())?;
    /// assert!(short.forms.is_empty());
    /// // the inner array as REFN ARRAY: a form the graph does not keep
    /// let long = Document::decode(b"=\xF3rl\x05\x00\x41\x28\x2b\x02\x01\x02", &Decoder::default())?;
    /// assert!(!long.forms.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "json")]
    pub fn is_empty(&self) -> bool {
        self.refn.is_empty() && self.pad.is_empty()
    }

    /// Adds the choices of `other` (another part of the same document).
    #[cfg(feature = "json")]
    pub(crate) fn append(&mut self, other: Forms) {
        self.refn.extend(other.refn);
        self.pad.extend(other.pad);
    }
}

/// The slot an `OBJECT` names (see `Reader::slot`).
#[derive(Default)]
struct Slot {
    /// The offsets of the tracked `OBJECT` tags whose slot it is.
    objects: Vec<usize>,
    /// Whether it is a `REFN`'s referent, whose level the `REFN` took.
    referent: bool,
}

/// A tracked item: its node, and whether it is still being read (so that a
/// reference to it closes a cycle).
struct Tracked {
    node: Ref,
    open: bool,
}

impl HasStack for Reader<'_, '_> {
    fn stack(&mut self) -> &mut Stack {
        &mut self.stack
    }
}

#[derive(Clone, Copy, PartialEq)]
enum StrKind {
    Bytes,
    Utf8,
}

impl<'a, 'o> Reader<'a, 'o> {
    pub(super) fn new(buf: &'a [u8], shift: usize, dec: &'o Decoder) -> Self {
        Reader {
            cur: Cursor::new(buf, shift)
                .max_depth(dec.opts.max_recursion_depth)
                .max_memory(dec.opts.max_memory, 0),
            source: None,
            owner: OnceCell::new(),
            opts: &dec.opts,
            thaw: &dec.thaw,
            thaw_allowed: dec.thaw_allowed.as_ref(),
            thaw_allow_if: dec.thaw_allow_if.as_deref(),
            tracked: None,
            keys: ReadKeys::default(),
            large: LargeKeys::default(),
            scratch: &dec.scratch,
            // A node takes a byte of the document at least.
            nodes: NodeChunks::growing(buf.len(), dec.scratch.node_chunks()),
            classes: ReadKeys::default(),
            weak_keep: Vec::new(),
            cycles: Vec::new(),
            aliased: Vec::new(),
            weak_ref_at: usize::MAX,
            weak_named: None,
            keep: Vec::new(),
            slot: None,
            alias_below: match (dec.opts.alias_varint_under, dec.opts.alias_smallint) {
                (0, false) => 0,
                (0, true) => 16,
                (n, _) => n.max(16),
            },
            aliases: None,
            thaws: Vec::new(),
            thaws_ended: 0,
            stack: Stack::lazy(),
            forms: None,
            pad_next: usize::MAX,
            prefix: None,
        }
    }

    /// Notes the [`Forms`] the bytes choose while reading.
    pub(super) fn capturing(self) -> Self {
        Reader {
            forms: Some(Box::default()),
            ..self
        }
    }

    /// A node made for `REFN` + `ARRAY`/`HASH` (not tracked): noted when it
    /// holds fewer than 16 items, which `ARRAYREF_n`/`HASHREF_n` could
    /// have written.
    #[cold]
    fn note_refn(&mut self, node: &Ref) {
        let short = match &*node.body() {
            Body::Array(a) => a.len() < 16,
            Body::Hash(h) => h.len() < 16,
            _ => false,
        };
        if let (true, Some(f)) = (short, &mut self.forms) {
            f.refn.push(node.clone());
        }
    }

    /// The reference just read from the item at `at` (to `node`) follows
    /// a `PAD`, if `at` is where the last run of them ended.
    #[inline]
    fn note_pad(&mut self, at: usize, node: &Ref) {
        if at == self.pad_next {
            if let Some(f) = &mut self.forms {
                f.pad.push(node.addr());
            }
        }
    }

    /// Counts `held` bytes of `max_memory` as taken already (a decompressed
    /// body, a stream's buffered document).
    pub(super) fn holding(self, held: usize) -> Self {
        Reader {
            cur: self.cur.max_memory(self.opts.max_memory, held),
            ..self
        }
    }

    /// Reads long strings as slices of `source`, the buffer `buf` lies in.
    pub(super) fn sharing(self, source: Option<&'a Bytes>) -> Self {
        Reader { source, ..self }
    }

    /// A new node of the document with `body`, counted against
    /// `max_memory`.
    #[inline(always)]
    fn node(&mut self, body: Body) -> Result<Ref> {
        self.cur.charge(memory::NODE, "a node", self.cur.pos())?;
        Ok(self.counted_node(body))
    }

    /// A new node of the document with `body`, its memory counted already.
    #[inline(always)]
    fn counted_node(&mut self, body: Body) -> Ref {
        Ref::new_in(&mut self.nodes, body)
    }

    /// The shared cell of integer `n`, for `alias_smallint` and
    /// `alias_varint_under`.
    #[cold]
    fn alias_of(&mut self, n: i64) -> Value {
        Value::Alias(
            self.aliases
                .get_or_insert_with(HashMap::new)
                .entry(n)
                .or_insert_with(|| Ref::scalar(Value::Int(n)))
                .clone(),
        )
    }

    /// The whole buffer as one value, with the forms noted if capturing.
    pub(super) fn whole(self) -> Result<(Document, Option<Box<Forms>>)> {
        let len = self.cur.bytes().len();
        let (v, used, forms) = self.prefix()?;
        if used != len {
            return Err(Error::at(ErrorKind::TrailingData, used));
        }
        Ok((v, forms))
    }

    /// The value at the start of the buffer, the bytes it took, and the
    /// forms noted if capturing. On error the cycles among the nodes built
    /// so far are freed, as a document's are when it is dropped.
    pub(super) fn prefix(mut self) -> Result<(Document, usize, Option<Box<Forms>>)> {
        let read = self.read_value().and_then(|mut v| {
            self.run_thaws(&mut v)?;
            Ok(v)
        });
        let (mut root, err) = match read {
            Ok(v) => (v, None),
            Err(e) => (Value::Undef, Some(e)),
        };
        // The reader's own handles go first: the document's care for its
        // cycles counts every other handle as one from outside.
        drop(std::mem::take(&mut self.tracked));
        drop(std::mem::take(&mut self.weak_keep));
        drop(std::mem::take(&mut self.thaws));
        let large = std::mem::take(&mut self.large);
        self.scratch
            .used_chunks(large.full_chunks(), self.nodes.full_chunks());
        if let Some(b) = large.into_buffers() {
            self.scratch.give(b);
        }
        let forms = self.forms.take();
        // A back-reference named from below a weak one may have closed no
        // strong cycle: what only that guess holds goes now, as it goes in
        // Perl once the weak reference is made.
        collect::prune_candidates(&mut self.cycles);
        lone::unalias_lone(&mut root, std::mem::take(&mut self.aliased));
        let doc = Document::new(root, self.cycles, self.keep);
        match err {
            None => Ok((doc, self.cur.pos(), forms)),
            Some(e) => {
                // The forms' handles first: the document frees what only
                // its cycles hold.
                drop(forms);
                drop(doc);
                Err(e)
            }
        }
    }

    /// The next tag, skipping `PAD`s: the byte and its position.
    #[inline]
    fn next_tag(&mut self) -> Result<(u8, usize)> {
        let at = self.cur.pos();
        let t = self.cur.byte()?;
        if t & !TRACK_FLAG != tag::PAD {
            return Ok((t, at));
        }
        self.after_pads(t, at)
    }

    /// The tag after a run of `PAD`s that began with `t` at `at`.
    #[cold]
    fn after_pads(&mut self, mut t: u8, mut at: usize) -> Result<(u8, usize)> {
        let mut tracked_pad = None;
        loop {
            match (t & !TRACK_FLAG, tracked_pad) {
                (tag::PAD, _) if t & TRACK_FLAG != 0 => tracked_pad = Some(at),
                (tag::PAD, _) => {}
                // A tracked PAD (a rewritten WEAKEN whose slot is referred
                // to) tracks the item that follows it, at the PAD's offset.
                (_, Some(pad)) => {
                    self.pad_next = pad;
                    return Ok((t | TRACK_FLAG, pad));
                }
                (_, None) => {
                    self.pad_next = at;
                    return Ok((t, at));
                }
            }
            at = self.cur.pos();
            t = self.cur.byte()?;
        }
    }

    fn read_value(&mut self) -> Result<Value> {
        let mut v = Value::Undef;
        self.read_into(&mut v)?;
        Ok(v)
    }

    /// Reads the next value into `out`.
    #[inline]
    fn read_into(&mut self, out: &mut Value) -> Result<()> {
        let (t, at) = self.next_tag()?;
        let tracked = t & TRACK_FLAG != 0;
        if tracked || self.slot.is_some() {
            let t = t & !TRACK_FLAG;
            if matches!(t, tag::OBJECT | tag::OBJECTV) {
                // The object's value makes the slot (an alias of it).
                self.name_slot(at, tracked, false);
                return self.value_into(t, at, out);
            }
            let node = self.node_from_tag(t, at, tracked, false)?;
            self.slot_alias(&node);
            *out = Value::Alias(node);
            return Ok(());
        }
        self.value_into(t, at, out)
    }

    /// Reads a `REFN`'s referent. It takes a nesting level, as in Perl,
    /// unless it is one of Perl's immortal scalars (`TRUE`, `FALSE`,
    /// `CANONICAL_UNDEF`, and `UNDEF` with `use_undef`) right after the
    /// `REFN`, which Perl's decoder does not read as a value.
    fn read_node(&mut self) -> Result<Ref> {
        let start = self.cur.pos();
        let (t, at) = self.next_tag()?;
        let immortal = at == start && protocol::immortal_referent(t, self.opts.use_undef);
        let tracked = t & TRACK_FLAG != 0;
        let t = t & !TRACK_FLAG;
        if self.forms.is_some() && !tracked && matches!(t, tag::ARRAY | tag::HASH) {
            let node = self.node_from_tag(t, at, tracked, true)?;
            self.note_refn(&node);
            return Ok(node);
        }
        if matches!(t, tag::OBJECT | tag::OBJECTV) {
            // The referent is the slot the object's value makes. It takes a
            // level here (its node takes none).
            self.enter()?;
            self.name_slot(at, tracked, true);
            let Value::Alias(node) = self.grow(|r| r.value_from_tag(t, at))? else {
                unreachable!("an object read into a named slot is an alias of it")
            };
            self.not_a_slot(&node);
            self.cur.leave();
            return Ok(node);
        }
        self.node_from_tag(t, at, tracked, !immortal)
    }

    /// Starts (or goes on with) a named slot for the `OBJECT` at `at`: the
    /// next item read is made a node, registered at `at` too if `tracked`;
    /// `referent` if the slot is a `REFN`'s referent.
    fn name_slot(&mut self, at: usize, tracked: bool, referent: bool) {
        let slot = self.slot.get_or_insert_with(|| Slot {
            objects: Vec::new(),
            referent,
        });
        if tracked {
            slot.objects.push(at);
        }
    }

    /// One nesting level deeper, or `DepthExceeded` past the limit.
    #[inline]
    fn enter(&mut self) -> Result<()> {
        self.prefix = None;
        self.cur.enter()
    }

    /// Registers `node`, made for the item at `at`, at its own offset if
    /// `tracked`, and at those of the `OBJECT`s whose slot it is
    /// (`prefixes`); `open` while its content is still to be read.
    fn track_item(&mut self, at: usize, tracked: bool, prefixes: &[usize], node: &Ref, open: bool) {
        if tracked {
            self.track(at, node, open);
        }
        for &p in prefixes {
            self.track(p, node, open);
        }
    }

    /// Marks the item registered by [`Reader::track_item`] as read.
    fn close_item(&mut self, at: usize, tracked: bool, prefixes: &[usize]) {
        if tracked {
            self.close(at);
        }
        for &p in prefixes {
            self.close(p);
        }
    }

    /// Registers the item whose tag is at `at`; `open` while its content is
    /// still to be read.
    fn track(&mut self, at: usize, node: &Ref, open: bool) {
        let node = node.clone();
        let at = self.cur.offset_of(at);
        self.tracked
            .get_or_insert_with(HashMap::new)
            .insert(at, Tracked { node, open });
    }

    /// Marks the tracked item at `at` as read: references to it from now on
    /// close no cycle.
    fn close(&mut self, at: usize) {
        let at = at + self.cur.shift();
        if let Some(t) = self.tracked.as_mut().and_then(|m| m.get_mut(&at)) {
            t.open = false;
        }
    }

    /// A node for the item whose (untracked) tag `t` was read at `at`,
    /// a `REFN`'s referent that takes a nesting level if `referent`.
    ///
    /// Levels count as [`protocol::immortal_referent`] says (a referent
    /// that is an object's slot took its level where the slot was named).
    fn node_from_tag(&mut self, t: u8, at: usize, tracked: bool, referent: bool) -> Result<Ref> {
        // This node is the named slot being read, if there is one.
        let slot = self.slot.take();
        let container = matches!(t, tag::ARRAY | tag::HASH);
        let level = match &slot {
            Some(s) => container && !s.referent,
            None => referent || container,
        };
        if level {
            self.enter()?;
        }
        let objects = slot.map(|s| s.objects).unwrap_or_default();
        let node = self.make_node(t, at, tracked, &objects)?;
        if level {
            self.cur.leave();
        }
        Ok(node)
    }

    /// The node of [`Reader::node_from_tag`], registered at `prefixes` too.
    fn make_node(&mut self, t: u8, at: usize, tracked: bool, prefixes: &[usize]) -> Result<Ref> {
        Ok(match t {
            tag::ARRAY | tag::HASH => {
                let node = self.node(Body::Array(Array::new()))?;
                self.track_item(at, tracked, prefixes, &node, true);
                let counted = self.cur.pos();
                let body = if t == tag::ARRAY {
                    let n = self
                        .cur
                        .count(self.opts.max_num_array_entries, "array", 1)?;
                    let bytes = n.saturating_mul(memory::ELEMENT);
                    self.cur.charge_tag(bytes, t, counted)?;
                    let mut a = Array::with_capacity(n);
                    self.grow(|r| r.array_items(&mut a, n))?;
                    Body::Array(a)
                } else {
                    let n = self.cur.count(self.opts.max_num_hash_entries, "hash", 2)?;
                    self.cur.charge_tag(memory::entries(n), t, counted)?;
                    // A large hash is indexed after its entries are read.
                    let mut h = if n > BATCH_INDEX {
                        Hash::unindexed(n)
                    } else {
                        Hash::with_capacity(n)
                    };
                    self.grow(|r| r.hash_entries(&mut h, n))?;
                    Body::Hash(h)
                };
                node.set_body(body);
                self.large.placed(&node);
                self.close_item(at, tracked, prefixes);
                node
            }
            tag::ALIAS => {
                // A tracked ALIAS is its target: the same node answers both offsets.
                let Value::Alias(node) = self.value_from_tag(t, at)? else {
                    unreachable!("ALIAS reads an alias")
                };
                self.track_item(at, tracked, prefixes, &node, false);
                node
            }
            tag::COPY => {
                let node = self.node(Body::Scalar(Value::Undef))?;
                self.track_item(at, tracked, prefixes, &node, false);
                let mut v = Value::Undef;
                if let Some(p) = self.copy_into(at, &mut v)? {
                    self.track(p, &node, false);
                }
                node.set_body(Body::Scalar(v));
                node
            }
            tag::REGEXP => {
                let body = self.regexp()?;
                let node = self.node(body)?;
                self.track_item(at, tracked, prefixes, &node, false);
                node
            }
            _ => {
                let node = self.node(Body::Scalar(Value::Undef))?;
                // A cell holding a reference can be part of a cycle.
                let nests = !matches!(
                    t,
                    tag::POS_0..=tag::STR_UTF8
                        | tag::YES
                        | tag::NO
                        | tag::CANONICAL_UNDEF
                        | tag::FALSE
                        | tag::TRUE
                        | tag::FLOAT_128
                        | tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31
                );
                self.track_item(at, tracked, prefixes, &node, nests);
                let mut v = self.grow(|r| r.value_from_tag(t, at))?;
                if let Value::Alias(shared) = &v {
                    if matches!(t, tag::POS_0..=tag::VARINT) {
                        // A referent is an integer of its own, as in Perl,
                        // not the cell `alias_smallint` shares among slots.
                        v = scalar_of(shared);
                    }
                }
                if let Value::Alias(_) = v {
                    // Only an object written without a reference (an
                    // OBJECT_FREEZE of an ARRAY) reads as an alias here: a
                    // cell cannot hold a slot.
                    return Err(self.cur.error_at(
                        ErrorKind::Invalid(
                            "an object written without a reference cannot be held in a scalar"
                                .into(),
                        ),
                        at,
                    ));
                }
                node.set_body(Body::Scalar(v));
                if nests {
                    self.close_item(at, tracked, prefixes);
                }
                node
            }
        })
    }

    /// Reads the value the prefix tag `t` (`WEAKEN`, `OBJECT`, `OBJECTV`)
    /// applies to. The prefix takes no nesting level, as in Perl, unless it
    /// is directly inside another ([`protocol::nested_prefix_level`]).
    fn nested_value(&mut self, t: u8) -> Result<Value> {
        let level = self
            .prefix
            .take()
            .is_some_and(|outer| protocol::nested_prefix_level(outer, t));
        if level {
            self.cur.enter()?;
        }
        self.prefix = Some(t);
        let v = self.grow(|r| r.read_value());
        self.prefix = None;
        if level {
            self.cur.leave();
        }
        v
    }

    #[inline]
    fn grow<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        Stack::run(self, f)
    }

    /// Reads `n` items onto `items`.
    fn array_items(&mut self, items: &mut Array, n: usize) -> Result<()> {
        for _ in 0..n {
            items.push(Value::Undef);
            let slot = items.last_mut().expect("just pushed");
            self.read_into(slot)?;
        }
        Ok(())
    }

    /// Reads the `n` entries of a hash into `h`, made by
    /// `Hash::unindexed(n)` when it is large.
    fn hash_entries(&mut self, h: &mut Hash, n: usize) -> Result<()> {
        if n > BATCH_INDEX {
            return self.large_hash_entries(h, n);
        }
        for _ in 0..n {
            let (k, at, literal) = self.read_key(Key::new)?;
            if literal {
                self.keys.push((at, k.clone()));
            }
            match h.push_slot(k) {
                Ok(slot) => self.read_into(slot)?,
                Err(k) => return Err(self.duplicate_key(&k, at)),
            }
        }
        Ok(())
    }

    fn duplicate_key(&self, k: &Key, at: usize) -> Error {
        self.cur
            .error_at(ErrorKind::DuplicateKey(k.as_bytes().to_vec()), at)
    }
}

/// The value in the scalar cell `r`.
fn scalar_of(r: &Ref) -> Value {
    match &*r.body() {
        Body::Scalar(v) => v.clone(),
        _ => Value::Undef,
    }
}
