//! Serde deserialization straight from Sereal bytes.
//!
//! Accepts what Perl writes: numbers in any integer or float tag when the
//! target can hold them (an integral float for an integer), strings from
//! `BINARY`/`SHORT_BINARY` or `STR_UTF8` (validated), `REFN`, `REFP`,
//! `ALIAS`, `COPY` and `WEAKEN` followed transparently (except a weak
//! reference back into the path being read, which reads as undef), objects
//! as their referent, `LONG_DOUBLE` and `FLOAT_128` as their 16 bytes,
//! booleans from `TRUE`/`FALSE`/`YES`/`NO` and, for `bool`, from `0`/`1`
//! and `""`/`"0"`/`"1"` as Perl writes them. Hash keys are strings: integer,
//! float, bool and char key types parse them. `&str` and `&[u8]` borrow
//! from an uncompressed input.

use crate::decoder::{
    document_size_check, frame, over_limit, string_over_limit, DecoderOptions, Header,
};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, tag, TRACK_FLAG};
use crate::stack::{HasStack, Stack};
use serde::de::{self, DeserializeSeed, IgnoredAny, IntoDeserializer, Unexpected, Visitor};
use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

/// How a value is wanted: what conversions Perl's data may need.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    Any,
    Int,
    Bool,
}

/// A serde deserializer over one Sereal document.
///
/// A weak reference to an item that is being read (one on the path from
/// the document's root to the weak reference: Perl's child-to-parent link,
/// `weaken($p->{kid}{up})`) reads as undef, which the target type takes as
/// it takes a missing value: `None` for an `Option`, `()` for a unit, undef
/// for a [`Value`](crate::Value), an ignored field skipped. A weak reference
/// to any other item reads as that item, as a strong one does. (A strong
/// reference back into the path is a cycle that no tree type can hold: it
/// is an error.)
///
/// Hash keys are strings in Sereal; a map whose key type is an integer
/// (any width), a float, `bool` or `char` parses them, as the serializer
/// writes them (`"1"`, `"true"`, `"x"`).
///
/// Errors carry the offset of the defect, or of the value being read when
/// the target type refused it, as [`sereal::decode`](crate::decode)
/// reports them: document offsets, or for a compressed document offsets in
/// the decompressed body (which the error's message says).
///
/// ```
/// use serde::Deserialize;
/// #[derive(Deserialize, Debug, PartialEq)]
/// struct User<'a> { id: u32, name: &'a str }
/// let doc = sereal::encode(&sereal::Value::hash([("id", sereal::Value::from(7)), ("name", "ann".into())])).unwrap();
/// let user: User = sereal::from_slice(&doc).unwrap();
/// assert_eq!(user, User { id: 7, name: "ann" });
/// ```
pub struct Deserializer<'de> {
    body: Cow<'de, [u8]>,
    pos: usize,
    // body offset of body[0]
    shift: usize,
    // error offset of body[0] and whether error offsets are in a
    // decompressed body
    base: usize,
    in_body: bool,
    // for a compressed document, where its frame ends, and the input length
    frame_end: Option<usize>,
    input_len: usize,
    depth: usize,
    max_depth: usize,
    // tags left to read: REFP/ALIAS re-read their targets, so a document
    // could otherwise expand exponentially
    budget: usize,
    opts: Limits,
    stack: Stack,
    // made at the first tracked item or class name
    seen: Option<Box<Seen>>,
    /// The targets of recent hash key COPYs, in `KEY_SETS` sets of two
    /// ways by a hash of the position: position + 1 (0: empty) and the
    /// key. Made at the first key COPY.
    key_copies: Vec<[(usize, KeyRef); 2]>,
}

/// A document's body as [`Deserializer::framed`] finds it: its bytes,
/// their offset shift, the offset errors count from, and where a compressed
/// frame ends.
type Framed<'de> = (Cow<'de, [u8]>, usize, usize, Option<usize>);

/// The decoder options that apply once the body is framed.
#[derive(Clone, Copy)]
struct Limits {
    max_num_array_entries: usize,
    max_num_hash_entries: usize,
    max_string_length: usize,
    refuse_objects: bool,
}

/// Positions of the tracked items read so far (what REFP and ALIAS may
/// name), of those being read now, and of class names.
#[derive(Default)]
struct Seen {
    tracked: HashSet<usize>,
    path: HashSet<usize>,
    classes: HashSet<usize>,
}

const KEY_SETS: usize = 64;

/// The set of `key_copies` for the COPY target at `p`.
#[inline]
fn key_set(p: usize) -> usize {
    ((p as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

/// `b` as text, when it is valid UTF-8 (ASCII checked first: most keys
/// and strings are).
#[inline]
fn text(b: &[u8]) -> Option<&str> {
    if b.is_ascii() {
        // SAFETY: ASCII is valid UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(b) })
    } else {
        std::str::from_utf8(b).ok()
    }
}

/// A hash key read: its bytes in the body, whether it is flagged UTF-8, and
/// whether its bytes are valid UTF-8 (checked once per key, however many
/// COPYs name it).
#[derive(Clone, Default)]
struct KeyRef {
    bytes: Range<usize>,
    utf8: bool,
    text: bool,
}

impl HasStack for Deserializer<'_> {
    fn stack(&mut self) -> &mut Stack {
        &mut self.stack
    }
}

/// Bytes of a string: from the input (borrowable for `'de`) or from a
/// decompressed copy.
enum Bytes<'de, 'a> {
    Input(&'de [u8]),
    Copy(&'a [u8]),
}

impl<'de> Deserializer<'de> {
    /// A deserializer for the document `input`, with `opts`' limits.
    #[inline(always)]
    pub fn from_slice_with(input: &'de [u8], opts: DecoderOptions) -> Result<Deserializer<'de>> {
        let (body, shift, base, frame_end) = Deserializer::framed(input, &opts)?;
        Ok(Deserializer::over(
            body,
            shift,
            base,
            frame_end,
            input.len(),
            &opts,
        ))
    }

    /// The body of the document `input`.
    #[inline(always)]
    fn framed(input: &'de [u8], opts: &DecoderOptions) -> Result<Framed<'de>> {
        // The input is the document: refused before it is read.
        document_size_check(opts, input.len())?;
        // The common header (protocol 3 to 5, raw, no suffix) without
        // building a `Header`.
        if let Some(len) = Header::raw_len(input) {
            return Ok((Cow::Borrowed(&input[len..]), 1, len, None));
        }
        let header = Header::parse(input)?;
        let (body, shift, frame_end) = frame(opts, input, &header)?;
        let base = if frame_end.is_some() { 0 } else { header.len };
        Ok((body, shift, base, frame_end))
    }

    /// A deserializer over `body`, whose offsets are shifted by `shift` and
    /// whose errors count from `base` (in the decompressed body if the
    /// input's frame ended at `frame_end`).
    #[inline(always)]
    fn over(
        body: Cow<'de, [u8]>,
        shift: usize,
        base: usize,
        frame_end: Option<usize>,
        input_len: usize,
        opts: &DecoderOptions,
    ) -> Deserializer<'de> {
        let budget = body.len().saturating_mul(64).saturating_add(1 << 16);
        let max_depth = if opts.max_recursion_depth == 0 {
            usize::MAX
        } else {
            opts.max_recursion_depth
        };
        Deserializer {
            body,
            pos: 0,
            shift,
            base,
            in_body: frame_end.is_some(),
            frame_end,
            input_len,
            depth: 0,
            max_depth,
            budget,
            opts: Limits {
                max_num_array_entries: opts.max_num_array_entries,
                max_num_hash_entries: opts.max_num_hash_entries,
                max_string_length: opts.max_string_length,
                refuse_objects: opts.refuse_objects,
            },
            stack: Stack::lazy(),
            seen: None,
            key_copies: Vec::new(),
        }
    }

    /// Checks that the whole body was read (and, for a compressed
    /// document, that nothing follows its compressed frame).
    #[inline]
    pub fn end(&self) -> Result<()> {
        if self.pos != self.body.len() {
            return Err(self.err_at(ErrorKind::TrailingData, self.pos));
        }
        match self.frame_end {
            Some(end) if end != self.input_len => Err(Error::at(ErrorKind::TrailingData, end)),
            _ => Ok(()),
        }
    }

    /// An error at body position `at`, with the offset `decode` reports.
    fn err_at(&self, kind: ErrorKind, at: usize) -> Error {
        self.located(Error::new(kind), at)
    }

    fn err(&self, kind: ErrorKind) -> Error {
        self.err_at(kind, self.pos)
    }

    /// `e`, placed at body position `at` if it has no position yet (an
    /// error a visitor raised).
    fn located(&self, e: Error, at: usize) -> Error {
        e.or_at(self.base + at, self.in_body)
    }

    #[inline]
    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .body
            .get(self.pos)
            .ok_or_else(|| self.err(ErrorKind::Truncated))?;
        self.pos += 1;
        Ok(b)
    }

    #[inline]
    fn varint(&mut self) -> Result<u64> {
        match protocol::varint_at(&self.body, self.pos) {
            Ok((n, len)) => {
                self.pos += len;
                Ok(n)
            }
            Err(kind) => Err(self.err(kind)),
        }
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<Range<usize>> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.body.len())
            .ok_or_else(|| self.err(ErrorKind::Truncated))?;
        let r = self.pos..end;
        self.pos = end;
        Ok(r)
    }

    #[inline]
    fn bytes(&self, r: Range<usize>) -> Bytes<'de, '_> {
        match &self.body {
            Cow::Borrowed(b) => {
                let b: &'de [u8] = b;
                Bytes::Input(&b[r])
            }
            Cow::Owned(v) => Bytes::Copy(&v[r]),
        }
    }

    /// The body position an offset read at `at` names; it must be before `at`.
    fn target(&self, off: u64, at: usize, what: &'static str) -> Result<usize> {
        usize::try_from(off)
            .ok()
            .and_then(|o| o.checked_sub(self.shift))
            .filter(|&p| p < at)
            .ok_or_else(|| self.err_at(ErrorKind::BadOffset(off, what), at))
    }

    /// The body position of the tracked item a `REFP` or `ALIAS` read at
    /// `at` names: one read before.
    fn tracked_target(&self, off: u64, at: usize, what: &'static str) -> Result<usize> {
        usize::try_from(off)
            .ok()
            .and_then(|o| o.checked_sub(self.shift))
            .filter(|p| self.seen.as_ref().is_some_and(|s| s.tracked.contains(p)))
            .ok_or_else(|| self.err_at(ErrorKind::BadOffset(off, what), at))
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(self.err(ErrorKind::DepthExceeded(self.max_depth)));
        }
        Ok(())
    }

    /// Reads a nested value one level deeper, on a grown stack when the
    /// current one runs low (visitors recurse too).
    fn nested<V: Visitor<'de>>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<V::Value>,
    ) -> Result<V::Value> {
        self.enter()?;
        let v = Stack::run(self, f);
        self.depth -= 1;
        v
    }

    fn count(&mut self, limit: usize, what: &str, min_bytes: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.varint()?;
        if let Some(kind) = over_limit(n, limit, what) {
            return Err(self.err_at(kind, at));
        }
        if n.saturating_mul(min_bytes as u64) > (self.body.len() - self.pos) as u64 {
            return Err(self.err_at(ErrorKind::Truncated, at));
        }
        Ok(n as usize)
    }

    /// Reads one value and hands it to `visitor`. The commonest untracked
    /// scalars (integers, short strings) are read here; the rest, and
    /// these when cut short, by `parse_item`.
    #[inline(always)]
    fn parse<V: Visitor<'de>>(&mut self, visitor: V, want: Want) -> Result<V::Value> {
        let at = self.pos;
        if self.budget > 0 {
            match self.body.get(at) {
                Some(&t @ tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31) => {
                    let end = at + 1 + (t & 31) as usize;
                    if end <= self.body.len() {
                        self.budget -= 1;
                        self.pos = end;
                        return self
                            .string(visitor, at + 1..end, false, want)
                            .map_err(|e| self.located(e, at));
                    }
                }
                Some(&tag::STR_UTF8) => {
                    // A length under 128 is one byte; a string over the
                    // limit is refused by `parse_item`.
                    if let Some(&n @ 0..=127) = self.body.get(at + 1) {
                        let end = at + 2 + n as usize;
                        let max = self.opts.max_string_length;
                        if end <= self.body.len() && (max == 0 || n as usize <= max) {
                            self.budget -= 1;
                            self.pos = end;
                            return self
                                .string(visitor, at + 2..end, true, want)
                                .map_err(|e| self.located(e, at));
                        }
                    }
                }
                Some(&t @ tag::POS_0..=tag::POS_15) if want != Want::Bool || t > 1 => {
                    self.budget -= 1;
                    self.pos = at + 1;
                    return visitor
                        .visit_u64(u64::from(t))
                        .map_err(|e| self.located(e, at));
                }
                Some(&t @ tag::NEG_16..=tag::NEG_1) => {
                    self.budget -= 1;
                    self.pos = at + 1;
                    return visitor
                        .visit_i64(i64::from(t) - 32)
                        .map_err(|e| self.located(e, at));
                }
                Some(&tag::ZIGZAG) => {
                    if let Ok((n, len)) = protocol::varint_at(&self.body, at + 1) {
                        self.budget -= 1;
                        self.pos = at + 1 + len;
                        return visitor
                            .visit_i64(protocol::zigzag_decode(n))
                            .map_err(|e| self.located(e, at));
                    }
                }
                Some(&tag::VARINT) => {
                    // One byte, inline: a call returning a `Result` through
                    // memory stalls on reading it back.
                    if let Some(&n @ 0..=0x7f) = self.body.get(at + 1) {
                        self.budget -= 1;
                        self.pos = at + 2;
                        return visitor
                            .visit_u64(u64::from(n))
                            .map_err(|e| self.located(e, at));
                    }
                    if let Some(&[lo, hi @ 0..=0x7f]) = self.body.get(at + 1..at + 3) {
                        self.budget -= 1;
                        self.pos = at + 3;
                        let n = u64::from(lo & 0x7f) | u64::from(hi) << 7;
                        return visitor.visit_u64(n).map_err(|e| self.located(e, at));
                    }
                    if let Ok((n, len)) = protocol::varint_at(&self.body, at + 1) {
                        self.budget -= 1;
                        self.pos = at + 1 + len;
                        return visitor.visit_u64(n).map_err(|e| self.located(e, at));
                    }
                }
                _ => {}
            }
        }
        self.parse_item(visitor, want, false)
    }

    /// Reads one value, a `REFN`'s referent if `referent`. Levels count as
    /// the decoder counts them, where it counts them: one for the node a
    /// referent or a tracked item is (an `ARRAY` or `HASH` in it adds none),
    /// one for each `ARRAYREF_n`/`HASHREF_n`, bare `ARRAY`/`HASH`, `REGEXP`,
    /// `WEAKEN` and `OBJECT`; and one for each `REFP` or `ALIAS` target,
    /// which only this reader reads again.
    fn parse_item<V: Visitor<'de>>(
        &mut self,
        visitor: V,
        want: Want,
        referent: bool,
    ) -> Result<V::Value> {
        let depth = self.depth;
        // The tracked items this call put on the path.
        let mut marks = Vec::new();
        let v = self.parse_marked(visitor, want, referent, &mut marks);
        if let Some(seen) = &mut self.seen {
            for m in marks {
                seen.path.remove(&m);
            }
        }
        self.depth = depth;
        v
    }

    fn parse_marked<V: Visitor<'de>>(
        &mut self,
        visitor: V,
        want: Want,
        mut referent: bool,
        marks: &mut Vec<usize>,
    ) -> Result<V::Value> {
        // A tracked PAD tracks the item after it, at the PAD's offset.
        let mut tracked_pad = None;
        loop {
            self.budget = self.budget.checked_sub(1).ok_or_else(|| {
                self.err(ErrorKind::LimitExceeded("document expands too much".into()))
            })?;
            let at = self.pos;
            let b = self.byte()?;
            let t = b & !TRACK_FLAG;
            if t == tag::PAD {
                if b & TRACK_FLAG != 0 {
                    tracked_pad = Some(at);
                }
                continue;
            }
            let tracked = tracked_pad.take().or((b & TRACK_FLAG != 0).then_some(at));
            if let Some(p) = tracked {
                let seen = self.seen.get_or_insert_with(Default::default);
                seen.tracked.insert(p);
                if seen.path.insert(p) {
                    marks.push(p);
                }
            }
            let node = std::mem::take(&mut referent) || tracked.is_some();
            if node {
                self.enter()?;
            }
            if t == tag::WEAKEN || matches!(t, tag::REGEXP | tag::ARRAY | tag::HASH) && !node {
                self.enter()?;
            }
            let v = match t {
                tag::WEAKEN => match self.weak_back(self.pos) {
                    Some(end) => {
                        self.pos = end;
                        visitor.visit_unit()
                    }
                    None if self.reference_follows(self.pos, false) => continue,
                    None => return self.not_a_reference("WEAKEN of a non-reference", at),
                },
                tag::REFN => Stack::run(self, |de| de.parse_item(visitor, want, true)),
                tag::REFP | tag::ALIAS => {
                    let what = if t == tag::REFP { "REFP" } else { "ALIAS" };
                    let off = self.varint()?;
                    let p = self.tracked_target(off, at, what)?;
                    if self.on_path(p) {
                        // A strong cycle: no tree holds it.
                        let m = format!("{what} back into the value being read (a strong cycle)");
                        return Err(self.err_at(ErrorKind::Invalid(m), at));
                    }
                    let back = self.pos;
                    self.pos = p;
                    // The target is tracked: reading it is a level.
                    let v = Stack::run(self, |de| de.parse(visitor, want));
                    self.pos = back;
                    v
                }
                tag::COPY => {
                    let off = self.varint()?;
                    let p = self.target(off, at, "COPY")?;
                    let (r, utf8) = self.string_at(p, at, "as the target of a COPY", true)?;
                    self.string(visitor, r, utf8, want)
                }
                tag::OBJECT | tag::OBJECTV | tag::OBJECT_FREEZE | tag::OBJECTV_FREEZE => {
                    self.refuse_objects(at)?;
                    if matches!(t, tag::OBJECT | tag::OBJECT_FREEZE) {
                        self.class_name()?;
                    } else {
                        let off = self.varint()?;
                        let p = self.target(off, at, "OBJECTV")?;
                        if !self.seen.as_ref().is_some_and(|s| s.classes.contains(&p)) {
                            let kind = ErrorKind::BadOffset(off, "OBJECTV class name");
                            return Err(self.err_at(kind, at));
                        }
                    }
                    if matches!(t, tag::OBJECT | tag::OBJECTV) {
                        self.enter()?;
                        if !self.reference_follows(self.pos, true) {
                            return self.not_a_reference("an object must be a reference", at);
                        }
                    } else {
                        self.frozen_values()?;
                    }
                    // The object reads as its referent (the values FREEZE
                    // returned, for a frozen one).
                    continue;
                }
                tag::POS_0..=tag::POS_15 if want == Want::Bool && t <= 1 => {
                    visitor.visit_bool(t == 1)
                }
                tag::POS_0..=tag::POS_15 => visitor.visit_u64(u64::from(t)),
                tag::NEG_16..=tag::NEG_1 => visitor.visit_i64(i64::from(t) - 32),
                tag::VARINT => visitor.visit_u64(self.varint()?),
                tag::ZIGZAG => visitor.visit_i64(protocol::zigzag_decode(self.varint()?)),
                tag::FLOAT => {
                    let r = self.take(4)?;
                    let f = f32::from_le_bytes(self.body[r].try_into().expect("4 bytes"));
                    float(visitor, f64::from(f), want, Some(f))
                }
                tag::DOUBLE => {
                    let r = self.take(8)?;
                    let d = f64::from_le_bytes(self.body[r].try_into().expect("8 bytes"));
                    float(visitor, d, want, None)
                }
                tag::LONG_DOUBLE | tag::FLOAT_128 => {
                    // No Rust type holds them: their bytes, as `Value`
                    // serializes them.
                    let r = self.take(16)?;
                    match self.bytes(r) {
                        Bytes::Input(b) => visitor.visit_borrowed_bytes(b),
                        Bytes::Copy(b) => visitor.visit_bytes(b),
                    }
                }
                tag::UNDEF | tag::CANONICAL_UNDEF => visitor.visit_unit(),
                tag::TRUE | tag::YES => visitor.visit_bool(true),
                tag::FALSE | tag::NO => visitor.visit_bool(false),
                tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 | tag::BINARY | tag::STR_UTF8 => {
                    let (r, utf8) = self.string_body(t, true)?.expect("a string tag");
                    self.string(visitor, r, utf8, want)
                }
                tag::ARRAY => {
                    let n = self.count(self.opts.max_num_array_entries, "array", 1)?;
                    Stack::run(self, |de| de.seq(visitor, n))
                }
                tag::HASH => {
                    let n = self.count(self.opts.max_num_hash_entries, "hash", 2)?;
                    Stack::run(self, |de| visitor.visit_map(Entries { de, left: n }))
                }
                tag::ARRAYREF_0..=tag::ARRAYREF_15 => {
                    let n = (t & 15) as usize;
                    if let Some(kind) =
                        over_limit(n as u64, self.opts.max_num_array_entries, "array")
                    {
                        return Err(self.err_at(kind, at));
                    }
                    self.nested::<V>(|de| de.seq(visitor, n))
                }
                tag::HASHREF_0..=tag::HASHREF_15 => {
                    let n = (t & 15) as usize;
                    if let Some(kind) = over_limit(n as u64, self.opts.max_num_hash_entries, "hash")
                    {
                        return Err(self.err_at(kind, at));
                    }
                    self.nested::<V>(|de| visitor.visit_map(Entries { de, left: n }))
                }
                tag::REGEXP => {
                    // A regexp reads as its pattern; the flags are skipped.
                    let (pattern, utf8) = self.string_item("as a regexp pattern")?;
                    self.string_item("as regexp flags")?;
                    self.string(visitor, pattern, utf8, want)
                }
                _ => return Err(self.err_at(ErrorKind::UnexpectedTag(t, "as a value"), at)),
            };
            return v.map_err(|e| self.located(e, at));
        }
    }

    /// Whether the tracked item at `p` is being read (a reference to it
    /// closes a cycle).
    fn on_path(&self, p: usize) -> bool {
        self.seen.as_ref().is_some_and(|s| s.path.contains(&p))
    }

    /// After a `WEAKEN` at `p - 1`: if a `REFP` to an item on the current
    /// path follows, the position after it.
    fn weak_back(&self, mut p: usize) -> Option<usize> {
        while *self.body.get(p)? & !TRACK_FLAG == tag::PAD {
            p += 1;
        }
        if self.body[p] != tag::REFP {
            return None;
        }
        let (off, len) = protocol::read_varint(&self.body[p + 1..])?;
        let target = usize::try_from(off).ok()?.checked_sub(self.shift)?;
        self.on_path(target).then_some(p + 1 + len)
    }

    /// Whether the item at `p` (after `PAD`s) is a reference: what a
    /// `WEAKEN` (untracked, unless `tracked_ok`) or an `OBJECT` applies to.
    /// A truncated input says yes: the read that follows reports it.
    fn reference_follows(&self, p: usize, tracked_ok: bool) -> bool {
        let Some((b, tracked)) = self.peek_tag(p) else {
            return true;
        };
        (tracked_ok || !tracked)
            && matches!(
                b & !TRACK_FLAG,
                tag::REFN
                    | tag::REFP
                    | tag::ARRAYREF_0..=tag::ARRAYREF_15
                    | tag::HASHREF_0..=tag::HASHREF_15
                    | tag::OBJECT
                    | tag::OBJECTV
                    | tag::OBJECT_FREEZE
                    | tag::OBJECTV_FREEZE
            )
    }

    /// The tag at `p` after `PAD`s and whether it (or a `PAD` before it) is
    /// tracked; `None` at the end of the input.
    fn peek_tag(&self, mut p: usize) -> Option<(u8, bool)> {
        let mut tracked = false;
        loop {
            let b = *self.body.get(p)?;
            tracked |= b & TRACK_FLAG != 0;
            if b & !TRACK_FLAG != tag::PAD {
                return Some((b, tracked));
            }
            p += 1;
        }
    }

    /// Reads the value a `WEAKEN` or `OBJECT` at `at` may not apply to,
    /// then fails as the decoder does.
    fn not_a_reference<T>(&mut self, what: &str, at: usize) -> Result<T> {
        let (t, t_at) = self.next_tag()?;
        if t == tag::ALIAS {
            // Not followed: the decoder only looks its target up.
            let off = self.varint()?;
            self.tracked_target(off, t_at, "ALIAS")?;
        } else {
            self.pos = t_at;
            Stack::run(self, |de| de.parse(IgnoredAny, Want::Any))?;
        }
        Err(self.err_at(ErrorKind::Invalid(what.into()), at))
    }

    fn seq<V: Visitor<'de>>(&mut self, visitor: V, n: usize) -> Result<V::Value> {
        let mut access = Elements { de: self, left: n };
        let v = visitor.visit_seq(&mut access)?;
        // A visitor that stopped early (a fixed-size tuple, say): skip the rest.
        while access.left > 0 {
            access.left -= 1;
            access.de.parse(IgnoredAny, Want::Any)?;
        }
        Ok(v)
    }

    fn string<V: Visitor<'de>>(
        &mut self,
        visitor: V,
        r: Range<usize>,
        utf8: bool,
        want: Want,
    ) -> Result<V::Value> {
        if want == Want::Bool && matches!(&self.body[r.clone()], b"" | b"0" | b"1") {
            return visitor.visit_bool(&self.body[r] == b"1");
        }
        let bad_utf8 = || self.err_at(ErrorKind::InvalidUtf8, r.start);
        match self.bytes(r.clone()) {
            Bytes::Input(b) => match text(b) {
                Some(s) => visitor.visit_borrowed_str(s),
                None if utf8 => Err(bad_utf8()),
                None => visitor.visit_borrowed_bytes(b),
            },
            Bytes::Copy(b) => match text(b) {
                Some(s) => visitor.visit_str(s),
                None if utf8 => Err(bad_utf8()),
                None => visitor.visit_bytes(b),
            },
        }
    }

    /// The rest of a string item whose tag `t` was just read: its bytes and
    /// whether it is UTF-8; `None` for a tag that is not a string's (a
    /// tracked one included). `max_string_length` applies where the decoder
    /// applies it (`limited`: not to hash keys and class names).
    fn string_body(&mut self, t: u8, limited: bool) -> Result<Option<(Range<usize>, bool)>> {
        let len = match t {
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => (t & 31) as usize,
            tag::BINARY | tag::STR_UTF8 => {
                let at = self.pos;
                let n = self.varint()?;
                if let Some(kind) = string_over_limit(n, self.opts.max_string_length, limited) {
                    return Err(self.err_at(kind, at));
                }
                usize::try_from(n).map_err(|_| self.err_at(ErrorKind::Truncated, at))?
            }
            _ => return Ok(None),
        };
        Ok(Some((self.take(len)?, t == tag::STR_UTF8)))
    }

    /// A string item (after `PAD`s); `what` names its place for the error.
    fn string_item(&mut self, what: &'static str) -> Result<(Range<usize>, bool)> {
        let (t, at) = self.next_tag()?;
        self.string_body(t, true)?
            .ok_or_else(|| self.err_at(ErrorKind::UnexpectedTag(t, what), at))
    }

    /// The next tag after `PAD`s, without the track flag, and its position
    /// (as the decoder has it: that of a tracked `PAD` before it, if any).
    #[inline]
    fn next_tag(&mut self) -> Result<(u8, usize)> {
        let mut tracked_pad = None;
        loop {
            let at = self.pos;
            let b = self.byte()?;
            if b & !TRACK_FLAG != tag::PAD {
                return Ok((b & !TRACK_FLAG, tracked_pad.unwrap_or(at)));
            }
            if b & TRACK_FLAG != 0 {
                tracked_pad = Some(at);
            }
        }
    }

    /// The string at the earlier position `p`, the target of a `COPY` read
    /// at `at`: it must end before `at`. As in the decoder, the target may
    /// carry the track flag (Perl writes a COPY of a string that is also a
    /// shared or aliased scalar), and `limited` says whether
    /// `max_string_length` applies (not to keys and class names).
    fn string_at(
        &mut self,
        p: usize,
        at: usize,
        what: &'static str,
        limited: bool,
    ) -> Result<(Range<usize>, bool)> {
        let back = self.pos;
        self.pos = p;
        let read = self
            .byte()
            .and_then(|b| Ok((b, self.string_body(b & !TRACK_FLAG, limited)?)));
        let end = self.pos;
        self.pos = back;
        let (t, s) = read?;
        let s = s.ok_or_else(|| self.err_at(ErrorKind::UnexpectedTag(t, what), p))?;
        if end > at {
            return Err(self.err_at(
                ErrorKind::BadOffset(
                    (p + self.shift) as u64,
                    "COPY target (it must end before the COPY)",
                ),
                at,
            ));
        }
        Ok(s)
    }

    /// A hash key: a string, or a `COPY` of an earlier one.
    #[inline]
    fn key(&mut self) -> Result<KeyRef> {
        // The common case first: a COPY (with a one-byte offset) of a key
        // met before.
        if let (Some(&tag::COPY), Some(&off @ 0..=127)) =
            (self.body.get(self.pos), self.body.get(self.pos + 1))
        {
            if let Some(p) = (off as usize).checked_sub(self.shift) {
                if let Some(set) = self.key_copies.get(key_set(p)) {
                    if set[0].0 == p + 1 {
                        self.pos += 2;
                        return Ok(set[0].1.clone());
                    }
                }
            }
        }
        self.key_slow()
    }

    fn key_slow(&mut self) -> Result<KeyRef> {
        let (t, at) = self.next_tag()?;
        if t == tag::COPY {
            let off = self.varint()?;
            let p = self.target(off, at, "COPY")?;
            // Every record's keys COPY the first record's: remember the
            // last few targets. A target checked once ends before every
            // later COPY too.
            if self.key_copies.is_empty() {
                self.key_copies = vec![Default::default(); KEY_SETS];
            }
            let set = &mut self.key_copies[key_set(p)];
            if set[0].0 == p + 1 {
                return Ok(set[0].1.clone());
            }
            if set[1].0 == p + 1 {
                set.swap(0, 1);
                return Ok(set[0].1.clone());
            }
            let (bytes, utf8) = self.string_at(p, at, "as the target of a hash key COPY", false)?;
            let key = self.key_ref(bytes, utf8);
            let set = &mut self.key_copies[key_set(p)];
            set[1] = std::mem::replace(&mut set[0], (p + 1, key.clone()));
            return Ok(key);
        }
        let (bytes, utf8) = self
            .string_body(t, false)?
            .ok_or_else(|| self.err_at(ErrorKind::UnexpectedTag(t, "as a hash key"), at))?;
        Ok(self.key_ref(bytes, utf8))
    }

    #[inline]
    fn key_ref(&self, bytes: Range<usize>, utf8: bool) -> KeyRef {
        let text = text(&self.body[bytes.clone()]).is_some();
        KeyRef { bytes, utf8, text }
    }

    /// Visits a key read by `key` as a string (bytes when it is not valid
    /// UTF-8 and not flagged so; an error when flagged).
    fn visit_key<V: Visitor<'de>>(&mut self, visitor: V, key: KeyRef) -> Result<V::Value> {
        if !key.text {
            return self.string(visitor, key.bytes, key.utf8, Want::Any);
        }
        // SAFETY: `key.text` says these bytes were checked to be UTF-8
        // (`key_ref`), and the body does not change.
        match self.bytes(key.bytes) {
            Bytes::Input(b) => {
                visitor.visit_borrowed_str(unsafe { std::str::from_utf8_unchecked(b) })
            }
            Bytes::Copy(b) => visitor.visit_str(unsafe { std::str::from_utf8_unchecked(b) }),
        }
    }

    /// The class name of an `OBJECT`: a string or a `COPY` of one.
    fn class_name(&mut self) -> Result<()> {
        let (t, at) = self.next_tag()?;
        if t == tag::COPY {
            let off = self.varint()?;
            let p = self.target(off, at, "COPY")?;
            self.string_at(p, at, "as the target of a class name COPY", false)?;
        } else if self.string_body(t, false)?.is_none() {
            return Err(self.err_at(ErrorKind::UnexpectedTag(t, "as a class name"), at));
        }
        self.seen
            .get_or_insert_with(Default::default)
            .classes
            .insert(at);
        Ok(())
    }

    /// Checks that an `OBJECT_FREEZE`'s values follow: `REFN ARRAY`.
    fn frozen_values(&mut self) -> Result<()> {
        let (refn, at) = self.next_tag()?;
        if refn != tag::REFN {
            let kind = ErrorKind::UnexpectedTag(refn, "after OBJECT_FREEZE (expected REFN)");
            return Err(self.err_at(kind, at));
        }
        let (array, array_at) = self.next_tag()?;
        if array != tag::ARRAY {
            let kind = ErrorKind::UnexpectedTag(array, "in an OBJECT_FREEZE (expected ARRAY)");
            return Err(self.err_at(kind, array_at));
        }
        self.pos = at;
        Ok(())
    }

    fn refuse_objects(&self, at: usize) -> Result<()> {
        if self.opts.refuse_objects {
            return Err(self.err_at(
                ErrorKind::Invalid("objects are refused (refuse_objects)".into()),
                at,
            ));
        }
        Ok(())
    }

    /// Whether the next value (after PADs) is undefined, or a weak
    /// reference back into the path, which reads as undef.
    /// A plain `DOUBLE` at `at`, read (the common form of a float).
    #[inline]
    fn double_at(&mut self, at: usize) -> Option<f64> {
        if self.budget == 0 || self.body.get(at) != Some(&tag::DOUBLE) {
            return None;
        }
        let b: [u8; 8] = self.body.get(at + 1..at + 9)?.try_into().ok()?;
        self.budget -= 1;
        self.pos = at + 9;
        Some(f64::from_le_bytes(b))
    }

    fn next_is_undef(&self) -> bool {
        let mut p = self.pos;
        while let Some(&b) = self.body.get(p) {
            match b & !TRACK_FLAG {
                tag::PAD => p += 1,
                tag::UNDEF | tag::CANONICAL_UNDEF => return true,
                tag::WEAKEN => return self.weak_back(p + 1).is_some(),
                _ => return false,
            }
        }
        false
    }
}

fn float<'de, V: Visitor<'de>>(
    visitor: V,
    d: f64,
    want: Want,
    single: Option<f32>,
) -> Result<V::Value> {
    if want == Want::Int && d.fract() == 0.0 {
        if (0.0..18_446_744_073_709_551_616.0).contains(&d) {
            return visitor.visit_u64(d as u64);
        }
        if (-9_223_372_036_854_775_808.0..0.0).contains(&d) {
            return visitor.visit_i64(d as i64);
        }
    }
    match single {
        Some(f) => visitor.visit_f32(f),
        None => visitor.visit_f64(d),
    }
}

/// Deserializes a `T` from the Sereal document `input` (borrowing strings
/// from it when it is not compressed).
///
/// ```
/// let doc = sereal::to_vec(&(1u8, "two", [3.5f64])).unwrap();
/// let (a, b, c): (u8, String, Vec<f64>) = sereal::from_slice(&doc).unwrap();
/// assert_eq!((a, b.as_str(), c), (1, "two", vec![3.5]));
/// ```
pub fn from_slice<'de, T: de::Deserialize<'de>>(input: &'de [u8]) -> Result<T> {
    from_slice_with(input, DecoderOptions::default())
}

/// As [`from_slice`], with decoder options (limits, refusals).
pub fn from_slice_with<'de, T: de::Deserialize<'de>>(
    input: &'de [u8],
    opts: DecoderOptions,
) -> Result<T> {
    let (body, shift, base, frame_end) = Deserializer::framed(input, &opts)?;
    let mut de = Deserializer::over(body, shift, base, frame_end, input.len(), &opts);
    let v = T::deserialize(&mut de).map_err(|e| de.located(e, 0))?;
    de.end()?;
    Ok(v)
}

/// Reads a whole document from `reader` and deserializes a `T` (which owns
/// its data). A failed read is an [`ErrorKind::Io`] error.
///
/// ```
/// let bytes = sereal::to_vec(&("id", 7u8)).unwrap();
/// let (k, v): (String, u8) = sereal::from_reader(&bytes[..]).unwrap();
/// assert_eq!((k.as_str(), v), ("id", 7));
/// ```
pub fn from_reader<R: std::io::Read, T: de::DeserializeOwned>(mut reader: R) -> Result<T> {
    let mut buf = Vec::new();
    reader
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("read", e))?;
    from_slice(&buf)
}

/// Reads a `T` from a [`Value`](crate::Value) graph, as
/// [`from_slice`] reads it from the graph's encoding (which it goes through:
/// the graph is encoded once, with the default options).
///
/// ```
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct User { id: u32, name: String }
/// let v = sereal::Value::hash([("id", sereal::Value::from(7)), ("name", "ann".into())]);
/// let user: User = sereal::from_value(&v).unwrap();
/// assert_eq!(user, User { id: 7, name: "ann".into() });
/// ```
pub fn from_value<T: de::DeserializeOwned>(value: &crate::Value) -> Result<T> {
    from_slice(&crate::encode(value)?)
}

impl de::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error::new(ErrorKind::Invalid(msg.to_string()))
    }
}

macro_rules! forward {
    ($want:expr; $($m:ident),*) => {$(
        fn $m<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            self.parse(visitor, $want)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = Error;

    /// As [`Serializer`](crate::Serializer): the compact forms, so what this
    /// crate wrote reads back.
    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let at = self.pos;
        if let Some(d) = self.double_at(at) {
            return float(visitor, d, Want::Any, None).map_err(|e| self.located(e, at));
        }
        self.parse(visitor, Want::Any)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_f64(visitor)
    }

    forward!(Want::Any; deserialize_any, deserialize_char,
        deserialize_str, deserialize_string, deserialize_bytes, deserialize_byte_buf, deserialize_unit,
        deserialize_seq, deserialize_map, deserialize_identifier, deserialize_ignored_any);
    forward!(Want::Int; deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64, deserialize_i128,
        deserialize_u8, deserialize_u16, deserialize_u32, deserialize_u64, deserialize_u128);
    forward!(Want::Bool; deserialize_bool);

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        // A plain UNDEF (no PAD, no track flag) is read in place.
        if let Some(&(tag::UNDEF | tag::CANONICAL_UNDEF)) = self.body.get(self.pos) {
            self.pos += 1;
            return visitor.visit_none();
        }
        if self.next_is_undef() {
            self.parse(IgnoredAny, Want::Any)?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.parse(visitor, Want::Any)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        self.parse(visitor, Want::Any)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.parse(visitor, Want::Any)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.parse(visitor, Want::Any)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_enum(Variant { de: self })
    }
}

struct Elements<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Elements<'_, 'de> {
    type Error = Error;
    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let at = self.de.pos;
        seed.deserialize(&mut *self.de)
            .map(Some)
            .map_err(|e| self.de.located(e, at))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

struct Entries<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    left: usize,
}

impl<'de> de::MapAccess<'de> for Entries<'_, 'de> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let at = self.de.pos;
        seed.deserialize(MapKey { de: &mut *self.de })
            .map(Some)
            .map_err(|e| self.de.located(e, at))
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let at = self.de.pos;
        seed.deserialize(&mut *self.de)
            .map_err(|e| self.de.located(e, at))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// A hash key. Keys are strings in Sereal: integer, float, bool and char
/// key types parse them (the serializer writes such keys as their text);
/// other types read the string.
struct MapKey<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

impl<'de> MapKey<'_, 'de> {
    /// Reads the key and visits what `parse` makes of its text, or fails
    /// with the visitor's type error.
    fn parsed<V: Visitor<'de>, T>(
        self,
        visitor: V,
        parse: impl FnOnce(&str) -> Option<T>,
        visit: impl FnOnce(V, T) -> Result<V::Value>,
    ) -> Result<V::Value> {
        let key = self.de.key()?;
        let bytes = &self.de.body[key.bytes];
        // SAFETY: `key.text` says the bytes are UTF-8 (see `visit_key`).
        let text = key
            .text
            .then(|| unsafe { std::str::from_utf8_unchecked(bytes) });
        match text.and_then(parse) {
            Some(v) => visit(visitor, v),
            None => {
                let got = text.map_or(Unexpected::Bytes(bytes), Unexpected::Str);
                Err(de::Error::invalid_type(got, &visitor))
            }
        }
    }
}

macro_rules! parse_key {
    ($($m:ident => $visit:ident: $t:ty),*) => {$(
        fn $m<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            self.parsed(visitor, |s| s.parse::<$t>().ok(), |v, n| v.$visit(n))
        }
    )*};
}

impl<'de> de::Deserializer<'de> for MapKey<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let key = self.de.key()?;
        self.de.visit_key(visitor, key)
    }

    parse_key!(deserialize_i8 => visit_i8: i8, deserialize_i16 => visit_i16: i16,
        deserialize_i32 => visit_i32: i32, deserialize_i64 => visit_i64: i64,
        deserialize_i128 => visit_i128: i128, deserialize_u8 => visit_u8: u8,
        deserialize_u16 => visit_u16: u16, deserialize_u32 => visit_u32: u32,
        deserialize_u64 => visit_u64: u64, deserialize_u128 => visit_u128: u128,
        deserialize_f32 => visit_f32: f32, deserialize_f64 => visit_f64: f64);

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let parse = |s: &str| match s {
            "true" | "1" => Some(true),
            "false" | "0" | "" => Some(false),
            _ => None,
        };
        self.parsed(visitor, parse, |v, b| v.visit_bool(b))
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let parse = |s: &str| {
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Some(c),
                _ => None,
            }
        };
        self.parsed(visitor, parse, |v, c| v.visit_char(c))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        // A key names a unit variant.
        self.parsed(
            visitor,
            |s| Some(s.to_owned()),
            |v, s| v.visit_enum(IntoDeserializer::<Error>::into_deserializer(s)),
        )
    }

    serde::forward_to_deserialize_any! {
        str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// An enum: a string names a unit variant; a one-key hash names a variant
/// and holds its content.
struct Variant<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

impl<'de> de::EnumAccess<'de> for Variant<'_, 'de> {
    type Error = Error;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        // Past references to the hash or string.
        while let Some(&b) = self.de.body.get(self.de.pos) {
            match b & !TRACK_FLAG {
                tag::PAD | tag::REFN | tag::WEAKEN => self.de.pos += 1,
                tag::HASHREF_0..=tag::HASHREF_15 | tag::HASH => {
                    let at = self.de.pos;
                    self.de.pos += 1;
                    let n = if b & !TRACK_FLAG == tag::HASH {
                        self.de.count(0, "hash", 2)?
                    } else {
                        (b & 15) as usize
                    };
                    if n != 1 {
                        return Err(self.de.err_at(
                            ErrorKind::Invalid(format!(
                                "an enum variant with content is a hash of one key, not {n}"
                            )),
                            at,
                        ));
                    }
                    let key_at = self.de.pos;
                    let v = seed
                        .deserialize(MapKey { de: &mut *self.de })
                        .map_err(|e| self.de.located(e, key_at))?;
                    return Ok((v, self));
                }
                _ => break,
            }
        }
        let v = seed.deserialize(&mut *self.de)?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'_, 'de> {
    type Error = Error;
    fn unit_variant(self) -> Result<()> {
        Ok(())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(&mut *self.de)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        self.de.parse(visitor, Want::Any)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.de.parse(visitor, Want::Any)
    }
}
