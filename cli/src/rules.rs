//! The decoder's rules, checked as the tag walker goes, without building
//! the graph: so that `info` says whether a document decodes in the
//! walker's time and memory.
//!
//! The walker checks the structure (tags, lengths, counts, offsets that
//! point back); the decoder (`sereal::Decoder` with its default options,
//! as the other commands use it) refuses more: nesting past its
//! `max_recursion_depth` (counted as it counts), a `REFP` or `ALIAS` to an
//! offset no tracked item has, a `COPY` whose string does not end before
//! it, an `OBJECTV` naming no class name, a
//! hash key written twice, `WEAKEN` of a non-reference, an object that is
//! not a reference, a malformed `OBJECT_FREEZE`. The checker follows the
//! decoder's reading step by step, keeping of each node only what these
//! checks look at (its kind), and of each hash its keys while it is read.
//! `cli/src/inspect.rs`'s tests hold it to the decoder on every corpus
//! document and on many damaged ones.

use sereal::protocol::{self, tag, TRACK_FLAG};
use sereal::{DecoderOptions, ErrorKind};
use std::collections::HashMap;

/// What a value reads as, for the checks of `WEAKEN`, objects and cells.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Got {
    Plain,
    Ref,
    Weak,
    /// A slot that is the node: an alias of it.
    Alias(u32),
}

/// A node's body, as far as the checks go.
#[derive(Clone, Copy, PartialEq)]
enum Node {
    /// An array, hash, regexp or frozen object.
    Container,
    /// A scalar cell still being read (it holds undef until it is read).
    Open,
    /// A scalar cell holding a reference.
    RefCell,
    /// A scalar cell holding anything else.
    Cell,
}

/// The construct whose items come next.
#[derive(Clone, Copy, PartialEq, Debug, Default)]
enum What {
    #[default]
    Root,
    Array,
    Hash,
    Refn,
    Weaken,
    /// `OBJECT`: a class name, then its value.
    Object,
    /// `OBJECTV`: its value.
    ObjectV,
    /// `OBJECT_FREEZE`: a class name, then `REFN ARRAY` or `ARRAY`.
    Frozen,
    /// `OBJECTV_FREEZE`: `REFN ARRAY` or `ARRAY`.
    FrozenV,
    /// The `REFN` of a frozen object: its `ARRAY`.
    FrozenRefn,
    Regexp,
}

/// The checker's state of one construct being read (kept in the walker's
/// frame).
#[derive(Default)]
pub struct Open<'a> {
    what: What,
    /// Items read so far (PADs not counted).
    index: u64,
    /// Nesting levels the decoder took for it, given back when it closes.
    levels: usize,
    /// The scalar cell (node, position) whose value the construct is.
    cell: Option<(u32, usize)>,
    /// What the construct reads as (`None`: what its last item reads as).
    got: Option<Got>,
    /// What the last item read as.
    last: Option<Got>,
    /// The construct's position.
    at: usize,
    /// A hash's keys so far: UTF-8 flag, bytes, position.
    keys: Vec<(bool, &'a [u8], usize)>,
}

impl Open<'_> {
    fn new(what: What, at: usize, levels: usize, got: Option<Got>) -> Self {
        Open {
            what,
            levels,
            got,
            at,
            ..Open::default()
        }
    }
}

enum Step<'a> {
    Leaf(Got),
    Open(Open<'a>),
}

type Check<T> = Result<T, (usize, ErrorKind)>;

/// Positions, inserted in increasing order: one bit each, in 64-bit words
/// kept only where a bit is set.
#[derive(Default)]
struct Marks(Vec<(usize, u64)>);

impl Marks {
    fn insert(&mut self, p: usize) {
        let (word, bit) = (p / 64, 1u64 << (p % 64));
        match self.0.last_mut() {
            Some((w, bits)) if *w == word => *bits |= bit,
            Some((w, _)) if *w > word => match self.0.binary_search_by_key(&word, |e| e.0) {
                Ok(i) => self.0[i].1 |= bit,
                Err(i) => self.0.insert(i, (word, bit)),
            },
            _ => self.0.push((word, bit)),
        }
    }

    fn contains(&self, p: usize) -> bool {
        let word = p / 64;
        self.0
            .binary_search_by_key(&word, |e| e.0)
            .is_ok_and(|i| self.0[i].1 & (1 << (p % 64)) != 0)
    }
}

/// The checker of one body.
pub struct Rules<'a> {
    buf: &'a [u8],
    shift: usize,
    max_depth: usize,
    depth: usize,
    /// Positions of the tracked `OBJECT`s whose slot the next node is, and
    /// whether the slot is a `REFN`'s referent (whose level it took).
    slot: Option<(Vec<usize>, bool)>,
    /// A tracked PAD just read: the next item is tracked at its position.
    pad: Option<usize>,
    /// Where the referent of the last `REFN` starts.
    referent_at: usize,
    /// Nodes that `REFP` and `ALIAS` may name, by body offset.
    tracked: HashMap<usize, u32>,
    nodes: Vec<Node>,
    /// Where hash keys (not COPYs) and class names were read.
    keys: Marks,
    classes: Marks,
    /// Key lists of closed hashes, for reuse.
    spare: Vec<Vec<(bool, &'a [u8], usize)>>,
    /// The first rule broken: its position and what.
    failed: Option<(usize, ErrorKind)>,
}

impl<'a> Rules<'a> {
    /// The checker of the body `buf`, whose first byte has body offset
    /// `shift`.
    pub fn new(buf: &'a [u8], shift: usize) -> Self {
        Rules {
            buf,
            shift,
            max_depth: DecoderOptions::default().max_recursion_depth,
            depth: 0,
            slot: None,
            pad: None,
            referent_at: 0,
            tracked: HashMap::new(),
            nodes: Vec::new(),
            keys: Marks::default(),
            classes: Marks::default(),
            spare: Vec::new(),
            failed: None,
        }
    }

    /// The first rule the body broke: its buffer position and the
    /// decoder's words for it.
    pub fn failure(self) -> Option<(usize, String)> {
        self.failed.map(|(at, k)| (at, k.to_string()))
    }

    /// The tag `t` read at `at` as an item of `parent`, with its offset
    /// operand `off` (REFP, ALIAS, COPY, OBJECTV) and its string `text`:
    /// the state of the items it opens, if it opens any.
    pub fn item(
        &mut self,
        parent: &mut Open<'a>,
        t: u8,
        at: usize,
        off: u64,
        text: &'a [u8],
    ) -> Open<'a> {
        if self.failed.is_some() {
            return Open::default();
        }
        match self.step(parent, t, at, off, text) {
            Ok(Some(Step::Leaf(g))) => parent.last = Some(g),
            Ok(Some(Step::Open(mut o))) => {
                if o.what == What::Hash {
                    o.keys = self.spare.pop().unwrap_or_default();
                }
                return o;
            }
            Ok(None) => {}
            Err(e) => self.failed = Some(e),
        }
        Open::default()
    }

    /// A construct whose items are all read.
    pub fn close(&mut self, done: Open<'a>, parent: &mut Open<'a>) {
        if self.failed.is_some() {
            return;
        }
        match self.finish(done) {
            Ok(g) => parent.last = Some(g),
            Err(e) => self.failed = Some(e),
        }
    }

    fn step(
        &mut self,
        parent: &mut Open<'a>,
        t: u8,
        raw_at: usize,
        off: u64,
        text: &'a [u8],
    ) -> Check<Option<Step<'a>>> {
        let bare = t & !TRACK_FLAG;
        if bare == tag::PAD {
            if t & TRACK_FLAG != 0 {
                self.pad = Some(raw_at);
            }
            return Ok(None);
        }
        // A tracked PAD tracks the item after it, at the PAD's position.
        let (tracked, at) = match self.pad.take() {
            Some(p) => (true, p),
            None => (t & TRACK_FLAG != 0, raw_at),
        };
        let index = parent.index;
        parent.index += 1;
        if bare == tag::REFN {
            self.referent_at = raw_at + 1;
        }
        let leaf = Ok(Some(Step::Leaf(Got::Plain)));
        let step = match (parent.what, index) {
            (What::Hash, i) if i % 2 == 0 => {
                return self.key(parent, bare, at, off, text).and(leaf)
            }
            (What::Object | What::Frozen, 0) => return self.class(bare, at, off).and(leaf),
            (What::Regexp, _) => return leaf,
            (What::Frozen | What::FrozenV, _) => match bare {
                tag::REFN => Step::Open(Open::new(What::FrozenRefn, at, 0, Some(Got::Ref))),
                tag::ARRAY => self.node(tag::ARRAY, at, tracked, off, true, What::Frozen)?,
                _ => {
                    let what = "after OBJECT_FREEZE (expected REFN or ARRAY)";
                    return Err((at, ErrorKind::UnexpectedTag(t, what)));
                }
            },
            (What::FrozenRefn, _) if bare == tag::ARRAY => {
                self.node(bare, at, tracked, off, true, What::FrozenRefn)?
            }
            (What::FrozenRefn, _) => {
                let what = "in an OBJECT_FREEZE (expected ARRAY)";
                return Err((at, ErrorKind::UnexpectedTag(t, what)));
            }
            // a weak reference is not a reference: neither weakened nor
            // blessed
            (What::Weaken, _) if bare == tag::WEAKEN => {
                let m = "WEAKEN of a non-reference".into();
                return Err((parent.at, ErrorKind::Invalid(m)));
            }
            (What::Object | What::ObjectV, _) if bare == tag::WEAKEN => {
                let m = "an object must be a reference".into();
                return Err((parent.at, ErrorKind::Invalid(m)));
            }
            (what, _) => {
                let referent = what == What::Refn;
                if !referent && !tracked && self.slot.is_none() {
                    self.value(bare, at, off, what)?
                } else if matches!(bare, tag::OBJECT | tag::OBJECTV) {
                    // the object's value makes its slot, named at `at` too;
                    // a referent takes its level here
                    let levels = if referent {
                        self.enter(at)?;
                        1
                    } else {
                        0
                    };
                    let slot = self.slot.get_or_insert_with(|| (Vec::new(), referent));
                    if tracked {
                        slot.0.push(at);
                    }
                    self.object(bare, at, off, levels, what)?
                } else {
                    // an immortal right after its REFN takes no level
                    let level = referent
                        && !(raw_at == self.referent_at && protocol::immortal_referent(t, false));
                    self.node(bare, at, tracked, off, level, what)?
                }
            }
        };
        Ok(Some(step))
    }

    /// An item that is a node of its own (tracked, a named slot, a
    /// referent, a container), in an item of `parent`: registered where
    /// REFP and ALIAS find it. It takes a level if it is a `referent` that
    /// takes one or a container that is not a referent (the decoder's
    /// count, `sereal::protocol::immortal_referent`).
    fn node(
        &mut self,
        t: u8,
        at: usize,
        tracked: bool,
        off: u64,
        referent: bool,
        parent: What,
    ) -> Check<Step<'a>> {
        let slot = self.slot.take();
        let container = matches!(t, tag::ARRAY | tag::HASH);
        let level = match &slot {
            Some((_, slot_referent)) => container && !slot_referent,
            None => referent || container,
        };
        let levels = if level {
            self.enter(at)?;
            1
        } else {
            0
        };
        let prefixes = slot.map(|s| s.0).unwrap_or_default();
        match t {
            tag::ARRAY | tag::HASH | tag::REGEXP => {
                let id = self.new_node(Node::Container, at, tracked, &prefixes);
                let what = match t {
                    tag::ARRAY => What::Array,
                    tag::HASH => What::Hash,
                    _ => What::Regexp,
                };
                Ok(Step::Open(Open::new(
                    what,
                    at,
                    levels,
                    Some(Got::Alias(id)),
                )))
            }
            tag::ALIAS => {
                let id = self.lookup(off, at, "ALIAS")?;
                self.register(at, tracked, &prefixes, id);
                self.depth -= levels;
                Ok(Step::Leaf(Got::Alias(id)))
            }
            _ => {
                let id = self.new_node(Node::Open, at, tracked, &prefixes);
                match self.value(t, at, off, parent)? {
                    Step::Leaf(g) => {
                        self.set_cell(id, g, at)?;
                        self.depth -= levels;
                        Ok(Step::Leaf(Got::Alias(id)))
                    }
                    Step::Open(mut o) => {
                        o.cell = Some((id, at));
                        o.levels += levels;
                        Ok(Step::Open(o))
                    }
                }
            }
        }
    }

    /// A value in a slot of its container, an item of `parent`.
    fn value(&mut self, t: u8, at: usize, off: u64, parent: What) -> Check<Step<'a>> {
        let open = |what, levels, got| Ok(Step::Open(Open::new(what, at, levels, got)));
        match t {
            tag::COPY => {
                let p = self.target(off, at, "COPY")?;
                self.string_at(p, at, "as the target of a COPY")?;
            }
            tag::REFN => return open(What::Refn, 0, Some(Got::Ref)),
            tag::REFP => {
                self.lookup(off, at, "REFP")?;
                return Ok(Step::Leaf(Got::Ref));
            }
            tag::ALIAS => return Ok(Step::Leaf(Got::Alias(self.lookup(off, at, "ALIAS")?))),
            tag::ARRAYREF_0..=tag::ARRAYREF_15 => {
                self.enter(at)?;
                return open(What::Array, 1, Some(Got::Ref));
            }
            tag::HASHREF_0..=tag::HASHREF_15 => {
                self.enter(at)?;
                return open(What::Hash, 1, Some(Got::Ref));
            }
            tag::ARRAY | tag::HASH | tag::REGEXP => {
                return self.node(t, at, false, off, false, parent)
            }
            tag::OBJECT | tag::OBJECTV => return self.object(t, at, off, 0, parent),
            tag::OBJECT_FREEZE => return open(What::Frozen, 0, None),
            tag::OBJECTV_FREEZE => {
                self.class_target(off, at)?;
                return open(What::FrozenV, 0, None);
            }
            tag::WEAKEN => {
                let levels = self.prefix_level(parent, t, at)?;
                return open(What::Weaken, levels, None);
            }
            _ => {}
        }
        Ok(Step::Leaf(Got::Plain))
    }

    /// An `OBJECT` or `OBJECTV` in an item of `parent`, holding `levels`.
    fn object(
        &mut self,
        t: u8,
        at: usize,
        off: u64,
        levels: usize,
        parent: What,
    ) -> Check<Step<'a>> {
        let what = if t == tag::OBJECT {
            What::Object
        } else {
            self.class_target(off, at)?;
            What::ObjectV
        };
        let levels = levels + self.prefix_level(parent, t, at)?;
        Ok(Step::Open(Open::new(what, at, levels, None)))
    }

    /// The level a prefix `t` read at `at` directly in an item of `parent`
    /// takes (`sereal::protocol::nested_prefix_level`).
    fn prefix_level(&mut self, parent: What, t: u8, at: usize) -> Check<usize> {
        let object = matches!(parent, What::Object | What::ObjectV);
        if !object || !protocol::nested_prefix_level(tag::OBJECT, t) {
            return Ok(0);
        }
        self.enter(at)?;
        Ok(1)
    }

    fn finish(&mut self, mut o: Open<'a>) -> Check<Got> {
        self.depth -= o.levels;
        if o.what == What::Hash {
            let dup = duplicate(&mut o.keys);
            o.keys.clear();
            self.spare.push(std::mem::take(&mut o.keys));
            if let Some((utf8, k, at)) = dup {
                let kind = if utf8 { "UTF-8 " } else { "" };
                let m = format!(
                    "duplicate {kind}key {:?} in hash",
                    String::from_utf8_lossy(k)
                );
                return Err((at, ErrorKind::Invalid(m)));
            }
        }
        let last = o.last.unwrap_or(Got::Plain);
        let g = match o.what {
            What::Weaken if last == Got::Ref => Got::Weak,
            What::Weaken => {
                let m = "WEAKEN of a non-reference".into();
                return Err((o.at, ErrorKind::Invalid(m)));
            }
            What::Object | What::ObjectV if self.blessable(last) => last,
            What::Object | What::ObjectV => {
                let m = "an object must be a reference".into();
                return Err((o.at, ErrorKind::Invalid(m)));
            }
            _ => o.got.unwrap_or(last),
        };
        match o.cell {
            Some((id, at)) => {
                self.set_cell(id, g, at)?;
                Ok(Got::Alias(id))
            }
            None => Ok(g),
        }
    }

    /// Whether the decoder can bless what a value reads as.
    fn blessable(&self, g: Got) -> bool {
        match g {
            Got::Ref => true,
            Got::Alias(id) => matches!(self.nodes[id as usize], Node::Container | Node::RefCell),
            Got::Plain | Got::Weak => false,
        }
    }

    /// A scalar cell read: what it holds.
    fn set_cell(&mut self, id: u32, g: Got, at: usize) -> Check<()> {
        self.nodes[id as usize] = match g {
            Got::Ref => Node::RefCell,
            Got::Alias(_) => {
                let m = "an object written without a reference cannot be held in a scalar";
                return Err((at, ErrorKind::Invalid(m.into())));
            }
            Got::Plain | Got::Weak => Node::Cell,
        };
        Ok(())
    }

    fn new_node(&mut self, kind: Node, at: usize, tracked: bool, prefixes: &[usize]) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(kind);
        self.register(at, tracked, prefixes, id);
        id
    }

    fn register(&mut self, at: usize, tracked: bool, prefixes: &[usize], id: u32) {
        if tracked {
            self.tracked.insert(at + self.shift, id);
        }
        for &p in prefixes {
            self.tracked.insert(p + self.shift, id);
        }
    }

    fn enter(&mut self, at: usize) -> Check<()> {
        self.depth += 1;
        if self.max_depth != 0 && self.depth > self.max_depth {
            return Err((at, ErrorKind::DepthExceeded(self.max_depth)));
        }
        Ok(())
    }

    /// The node a `REFP` or `ALIAS` at `at` names.
    fn lookup(&self, off: u64, at: usize, what: &'static str) -> Check<u32> {
        usize::try_from(off)
            .ok()
            .and_then(|o| self.tracked.get(&o).copied())
            .ok_or((at, ErrorKind::BadOffset(off, what)))
    }

    /// The buffer position of an offset read at `at`: before it.
    fn target(&self, off: u64, at: usize, what: &'static str) -> Check<usize> {
        usize::try_from(off)
            .ok()
            .and_then(|o| o.checked_sub(self.shift))
            .filter(|&p| p < at)
            .ok_or((at, ErrorKind::BadOffset(off, what)))
    }

    /// The string at `p` (the target of a COPY), which must end by `end`:
    /// its UTF-8 flag and bytes.
    fn string_at(&self, p: usize, end: usize, what: &'static str) -> Check<(bool, &'a [u8])> {
        let t = *self.buf.get(p).ok_or((p, ErrorKind::Truncated))?;
        let bare = t & !TRACK_FLAG;
        let (len, start) = match bare {
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => (u64::from(bare & 31), p + 1),
            tag::BINARY | tag::STR_UTF8 => {
                let (n, l) = protocol::read_varint(&self.buf[p + 1..])
                    .ok_or((p + 1, ErrorKind::BadVarint))?;
                (n, p + 1 + l)
            }
            _ => return Err((p, ErrorKind::UnexpectedTag(t, what))),
        };
        let stop = usize::try_from(len)
            .ok()
            .and_then(|n| start.checked_add(n))
            .filter(|&e| e <= self.buf.len())
            .ok_or((start, ErrorKind::Truncated))?;
        if stop > end {
            let what = "COPY target (it must end before the COPY)";
            return Err((end, ErrorKind::BadOffset((p + self.shift) as u64, what)));
        }
        Ok((bare == tag::STR_UTF8, &self.buf[start..stop]))
    }

    /// A hash key (the hash is `parent`).
    fn key(
        &mut self,
        parent: &mut Open<'a>,
        t: u8,
        at: usize,
        off: u64,
        text: &'a [u8],
    ) -> Check<()> {
        let key = if t == tag::COPY {
            // an earlier key, or a string that ends before the COPY
            let p = self.target(off, at, "COPY")?;
            let what = "as the target of a hash key COPY";
            if self.keys.contains(p) {
                // a key read after a tracked PAD was registered at the PAD
                let q = p + self.buf[p..]
                    .iter()
                    .take_while(|&&b| b & !TRACK_FLAG == tag::PAD)
                    .count();
                self.string_at(q, usize::MAX, what)?
            } else {
                self.string_at(p, at, what)?
            }
        } else {
            self.keys.insert(at);
            (t == tag::STR_UTF8, text)
        };
        parent.keys.push((key.0, key.1, at));
        Ok(())
    }

    fn class(&mut self, t: u8, at: usize, off: u64) -> Check<()> {
        if t == tag::COPY {
            let p = self.target(off, at, "COPY")?;
            self.string_at(p, at, "as the target of a class name COPY")?;
        }
        self.classes.insert(at);
        Ok(())
    }

    /// The class name an `OBJECTV` at `at` names.
    fn class_target(&self, off: u64, at: usize) -> Check<()> {
        let p = self.target(off, at, "OBJECTV")?;
        if !self.classes.contains(p) {
            return Err((at, ErrorKind::BadOffset(off, "OBJECTV class name")));
        }
        Ok(())
    }
}

/// The first key of a hash (in order) that repeats an earlier one.
fn duplicate<'a>(keys: &mut [(bool, &'a [u8], usize)]) -> Option<(bool, &'a [u8], usize)> {
    if keys.len() < 2 {
        return None;
    }
    keys.sort_unstable();
    keys.windows(2)
        .filter(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
        .map(|w| w[1])
        .min_by_key(|k| k.2)
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
