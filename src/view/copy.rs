//! Copying items from one body into another without decoding them: every
//! back-reference rewritten to where its target lands, what a copied item
//! names outside the copy written into it, and strings written once.

use super::walk::{backref_name, float_len, Body};
use super::View;
use crate::error::{ErrorKind, Result};
use crate::protocol::{self, tag, TRACK_FLAG};
use hashbrown::HashMap;

/// What a copy does with a reference (`REFP`, `ALIAS`) to an item outside
/// what it copies.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outside {
    /// Stop: the copy cannot be made on its own.
    Stop,
    /// Copy the item in, where the reference is (as `REFN` and the item,
    /// with its class), once; items before `floor` (what holds the copied
    /// items) are refused.
    Expand { floor: usize },
}

/// What a copy does with a weak reference whose referent it holds nowhere
/// strongly (one written first weak, `WEAKEN REFN`, whose strong
/// references are outside the copy): decoded alone, the referent would be
/// freed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Weak {
    /// Copies it as it is (the whole document is copied).
    Keep,
    /// Stops (see [`Copied::Outside`]); so does a tracked item other than
    /// an array or hash (a scalar), which an `OBJECT` outside the copy
    /// may bless: a copy that must read as the item reads in its document.
    Refuse,
    /// Writes it strong.
    Strengthen,
}

/// The class of an object, as a copy writes it again: where its name is,
/// and the tag of the object, `OBJECT` or, for what a FREEZE callback
/// wrote, `OBJECT_FREEZE` (which THAW reads).
#[derive(Clone, Copy)]
pub(crate) struct Class {
    name: usize,
    tag: u8,
}

/// A copy of items of one body into a new body (`out[body_start..]`).
pub(crate) struct Copier<'v, 'd> {
    r: Body<'v>,
    /// The new body's offset of `out[body_start]`.
    shift: usize,
    body_start: usize,
    outside: Outside,
    /// Tracked items copied: their source position and new offset.
    tracked: HashMap<usize, u64>,
    /// Strings copied for a `COPY` or an `OBJECTV`: source position and new offset.
    strings: HashMap<usize, u64>,
    /// Source positions of tracked referents and the class of the object
    /// that holds them (see [`Copier::note_class`]), kept across copies.
    classes: Option<&'d mut HashMap<usize, Class>>,
    /// Source positions of the referents among those whose class this
    /// copy has written.
    blessed: hashbrown::HashSet<usize>,
    /// Strings written, by content, when strings are written once.
    dedupe: Option<&'d mut HashMap<(bool, &'v [u8]), u64>>,
    weak: Weak,
    /// Weak references written first (`WEAKEN REFN`): where the `WEAKEN`
    /// is in `out`, and the referent's source position.
    weak_first: Vec<(usize, usize)>,
    /// Source positions of tracked referents the copy refers to strongly
    /// (or aliases).
    strong: hashbrown::HashSet<usize>,
    /// Breakpoints of the main range: a source position and where in
    /// `out` it landed, the bytes after it copied as they are up to the
    /// next breakpoint.
    breaks: Vec<(usize, usize)>,
}

/// How a copy ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Copied {
    Done,
    /// A reference to the item at this source position, outside the copy.
    Outside(usize),
}

impl<'v, 'd> Copier<'v, 'd> {
    pub fn new(r: Body<'v>, shift: usize, body_start: usize, outside: Outside) -> Self {
        Copier {
            r,
            shift,
            body_start,
            outside,
            tracked: HashMap::new(),
            strings: HashMap::new(),
            classes: None,
            blessed: hashbrown::HashSet::new(),
            dedupe: None,
            weak: Weak::Keep,
            weak_first: Vec::new(),
            strong: hashbrown::HashSet::new(),
            breaks: Vec::new(),
        }
    }

    /// What to do with weak references the copy holds nowhere strongly.
    pub fn weak(mut self, weak: Weak) -> Self {
        self.weak = weak;
        self
    }

    /// Keeps the classes of the tracked objects it copies in `classes`,
    /// for the copies that follow (an object referred to from a later one).
    pub fn classes(mut self, classes: &'d mut HashMap<usize, Class>) -> Self {
        self.classes = Some(classes);
        self
    }

    /// Writes each string once (later ones as `COPY`s of the first, where
    /// shorter), by content, across the copies that share `written`.
    pub fn dedupe(mut self, written: &'d mut HashMap<(bool, &'v [u8]), u64>) -> Self {
        self.dedupe = Some(written);
        self
    }

    /// The new offset of the next byte of `out`.
    fn here(&self, out: &[u8]) -> u64 {
        (out.len() - self.body_start + self.shift) as u64
    }

    /// Copies the items from source position `from` to `to` (whole items)
    /// to the end of `out`.
    pub fn copy(&mut self, from: usize, to: usize, out: &mut Vec<u8>) -> Result<Copied> {
        let r = self.r;
        // Ranges still to copy: the items asked for, and the items copied
        // in for references to outside them.
        let mut ranges = vec![(from, to)];
        // How many of the next strings are a regexp's pattern and flags,
        // which are written as they are.
        let mut literal = 0u8;
        // Whether the item being copied is under a WEAKEN.
        let mut weakened = false;
        // Where the main range's bytes landed: from each breakpoint's source
        // position on, bytes were copied as they are (see `moved`).
        self.breaks.clear();
        while let Some(&(pos, end)) = ranges.last() {
            if pos >= end {
                ranges.pop();
                continue;
            }
            if ranges.len() == 1 {
                let o = out.len();
                if self.breaks.last().is_none_or(|&(s, d)| o - d != pos - s) {
                    self.breaks.push((pos, o));
                }
            }
            // A run of items copied as they are, at once.
            let run = if weakened {
                pos
            } else {
                plain_run(r.buf, pos, end, self.dedupe.is_none() && literal == 0)
            };
            if run > pos {
                out.extend_from_slice(&r.buf[pos..run]);
                if let Some(top) = ranges.last_mut() {
                    top.0 = run;
                }
                continue;
            }
            let mut c = r.cursor(pos);
            let at = pos;
            let b = c.byte()?;
            let t = b & !TRACK_FLAG;
            let tracked = b & TRACK_FLAG != 0;
            let under_weaken = std::mem::take(&mut weakened);
            let weak = under_weaken && t != tag::PAD;
            if t == tag::PAD {
                weakened = under_weaken;
            }
            let next = |ranges: &mut Vec<(usize, usize)>, p: usize| {
                if let Some(top) = ranges.last_mut() {
                    top.0 = p;
                }
            };
            // An item already copied in is referred to where it is met again.
            if tracked {
                if let Some(&n) = self.tracked.get(&at) {
                    // the same item (a tracked item is the one Perl fills
                    // there: a reference for ARRAYREF_n, say)
                    write_backref(out, tag::ALIAS, n);
                    next(&mut ranges, r.skip(at)?);
                    continue;
                }
                if self.weak == Weak::Refuse && !matches!(r.tag(at)?.0.t, tag::ARRAY | tag::HASH) {
                    return Ok(Copied::Outside(at));
                }
                let n = self.here(out);
                self.tracked.insert(at, n);
            }
            match t {
                tag::REFP | tag::ALIAS => {
                    let off = c.varint()?;
                    let x = match t {
                        tag::REFP => r.refp_target(&c, off, at)?,
                        _ => c.target(off, at, "ALIAS")?,
                    };
                    next(&mut ranges, c.pos());
                    // an ALIAS makes its slot the item: it holds it too
                    if !weak {
                        self.strong.insert(x);
                    }
                    if self.tracked.contains_key(&x) {
                        if t == tag::REFP && !self.blessed.contains(&x) {
                            // an item copied in as an element (an ALIAS),
                            // which carries no class: its first reference
                            // here does
                            if let Some(class) = self.class_of(x) {
                                out.push(class.tag);
                                self.string(class.name, out)?;
                                self.blessed.insert(x);
                                if tracked {
                                    let n = self.here(out);
                                    self.tracked.insert(at, n);
                                }
                            }
                        }
                        // (read after: a REFP may name itself)
                        write_backref(out, b, self.tracked[&x]);
                        continue;
                    }
                    let Outside::Expand { floor } = self.outside else {
                        return Ok(Copied::Outside(x));
                    };
                    if x < floor {
                        return Ok(Copied::Outside(x));
                    }
                    // Only a tracked item is referred to (the decoder's
                    // rule), and a copy of one is met once: its tag is
                    // noted before what it holds is copied.
                    if !r.tag(x)?.0.tracked {
                        return Err(r.error(ErrorKind::BadOffset(off, backref_name(t)), at));
                    }
                    let x_end = r.skip(x)?;
                    if t == tag::REFP {
                        if let Some(class) = self.class_of(x) {
                            out.push(class.tag);
                            self.string(class.name, out)?;
                            self.blessed.insert(x);
                        }
                        // A reference to the item, whatever it is (a
                        // `REFP` to an `ARRAYREF_n` is a reference to the
                        // scalar holding the array's reference, as Perl
                        // reads it); tracked where the `REFP` was, for
                        // what refers to it.
                        if tracked {
                            let n = self.here(out);
                            self.tracked.insert(at, n);
                        }
                        out.push(tag::REFN | (b & TRACK_FLAG));
                    }
                    ranges.push((x, x_end));
                }
                tag::COPY => {
                    let off = c.varint()?;
                    let x = c.target(off, at, "COPY")?;
                    next(&mut ranges, c.pos());
                    match self.written(x, from) {
                        Some(n) => write_backref(out, b, n),
                        None => {
                            let n = self.here(out);
                            self.copy_string(x, tracked, out, off, at)?;
                            // a later COPY may name it only untracked: a
                            // decoder tracks what it reads at a COPY's
                            // target, and would track that scalar there
                            if !tracked {
                                self.strings.insert(x, n);
                            }
                        }
                    }
                }
                tag::OBJECTV | tag::OBJECTV_FREEZE => {
                    let off = c.varint()?;
                    let x = c.target(off, at, "OBJECTV")?;
                    next(&mut ranges, c.pos());
                    let object = match t {
                        tag::OBJECTV => tag::OBJECT,
                        _ => tag::OBJECT_FREEZE,
                    };
                    self.note_class(x, object, c.pos())?;
                    match self.written(x, from) {
                        Some(n) => write_backref(out, b, n),
                        None => {
                            let literal = if t == tag::OBJECTV {
                                tag::OBJECT
                            } else {
                                tag::OBJECT_FREEZE
                            };
                            out.push(literal | (b & TRACK_FLAG));
                            self.string(x, out)?;
                        }
                    }
                }
                tag::OBJECT | tag::OBJECT_FREEZE => {
                    out.push(b);
                    let class = c.pos();
                    let value = r.key(class)?.1;
                    let (ct, mut cc) = r.tag(class)?;
                    let class_at = if ct.t == tag::COPY {
                        let off = cc.varint()?;
                        cc.target(off, ct.at, "COPY")?
                    } else {
                        ct.at
                    };
                    self.note_class(class_at, t, value)?;
                    next(&mut ranges, class);
                }
                tag::WEAKEN => {
                    // A weak reference to an item copied in here would be
                    // its only holder: it is written strong.
                    let (inner, mut ic) = r.tag(c.pos())?;
                    let mut keep = true;
                    if inner.t == tag::REFP {
                        let off = ic.varint()?;
                        let x = ic.target(off, inner.at, "REFP")?;
                        keep = self.tracked.contains_key(&x) || self.outside == Outside::Stop;
                    }
                    if keep {
                        if inner.t == tag::REFN {
                            let referent = r.tag(inner.at + 1)?.0;
                            self.weak_first.push((out.len(), referent.at));
                        }
                        out.push(b);
                        weakened = true;
                    } else if tracked {
                        // What refers to the weak reference refers to the
                        // strong one: its track flag stays, on a `PAD`.
                        out.push(tag::PAD | TRACK_FLAG);
                    }
                    next(&mut ranges, c.pos());
                }
                tag::REFN => {
                    let (inner, _) = r.tag(c.pos())?;
                    if inner.tracked && !weak {
                        self.strong.insert(inner.at);
                    }
                    if inner.tracked {
                        if let Some(&n) = self.tracked.get(&inner.at) {
                            // the referent was copied in already: a new
                            // reference to it
                            write_backref(out, tag::REFP | (b & TRACK_FLAG), n);
                            next(&mut ranges, r.skip(at)?);
                            continue;
                        }
                    }
                    out.push(b);
                    next(&mut ranges, c.pos());
                }
                tag::REGEXP => {
                    out.push(b);
                    literal = 2;
                    next(&mut ranges, c.pos());
                }
                tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 | tag::BINARY | tag::STR_UTF8 => {
                    let len = match t {
                        tag::BINARY | tag::STR_UTF8 => r.string_len(&mut c)?,
                        _ => usize::from(t & 31),
                    };
                    let bytes = c.slice(len)?;
                    let keep = literal > 0 || tracked;
                    literal = literal.saturating_sub(1);
                    let here = self.here(out);
                    match self.dedupe.as_deref_mut() {
                        Some(written) if !keep => {
                            let key = (t == tag::STR_UTF8, bytes);
                            match written.get(&key) {
                                Some(&n) if varint_len(n) + 1 < c.pos() - at => {
                                    write_backref(out, tag::COPY, n);
                                    self.strings.insert(at, n);
                                }
                                Some(_) => out.extend_from_slice(&r.buf[at..c.pos()]),
                                None => {
                                    written.insert(key, here);
                                    out.extend_from_slice(&r.buf[at..c.pos()]);
                                }
                            }
                        }
                        _ => out.extend_from_slice(&r.buf[at..c.pos()]),
                    }
                    next(&mut ranges, c.pos());
                }
                _ => {
                    // Copied as it is: the tag and what follows it up to the
                    // next tag (a number, a count).
                    match t {
                        tag::VARINT | tag::ZIGZAG => {
                            c.varint()?;
                        }
                        tag::ARRAY | tag::HASH => {
                            r.count(&mut c, t)?;
                        }
                        tag::FLOAT | tag::DOUBLE | tag::LONG_DOUBLE | tag::FLOAT_128 => {
                            c.take(float_len(t))?;
                        }
                        _ => {}
                    }
                    out.extend_from_slice(&r.buf[at..c.pos()]);
                    next(&mut ranges, c.pos());
                }
            }
        }
        self.weak_references(out)
    }

    /// The weak references written first whose referent the copy holds
    /// nowhere strongly, as [`Weak`] says.
    fn weak_references(&mut self, out: &mut [u8]) -> Result<Copied> {
        for &(at, referent) in &self.weak_first {
            if self.strong.contains(&referent) {
                continue;
            }
            match self.weak {
                Weak::Keep => {}
                Weak::Refuse => return Ok(Copied::Outside(referent)),
                Weak::Strengthen => out[at] = tag::PAD | (out[at] & TRACK_FLAG),
            }
        }
        Ok(Copied::Done)
    }

    /// Where the string at source position `x` was written, if it was:
    /// for a `COPY` or `OBJECTV` of it, or in the main range.
    fn written(&self, x: usize, from: usize) -> Option<u64> {
        self.strings
            .get(&x)
            .copied()
            .or_else(|| self.moved(x, from))
    }

    /// The new offset of the string at source position `x`, copied as it
    /// is in the main range (which starts at `from`); `None` for anything
    /// else, which the caller writes in.
    fn moved(&self, x: usize, from: usize) -> Option<u64> {
        let string = matches!(
            self.r.buf.get(x)? & !TRACK_FLAG,
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 | tag::BINARY | tag::STR_UTF8
        );
        if x < from || !string {
            return None;
        }
        let i = self
            .breaks
            .partition_point(|&(s, _)| s <= x)
            .checked_sub(1)?;
        let (s, o) = self.breaks[i];
        Some((o + (x - s) - self.body_start + self.shift) as u64)
    }

    /// Writes the string at source position `x` (a `COPY`'s target, read
    /// for the `COPY` of offset `off` at `at`) as a string item, tracked
    /// if `tracked`.
    fn copy_string(
        &mut self,
        x: usize,
        tracked: bool,
        out: &mut Vec<u8>,
        off: u64,
        at: usize,
    ) -> Result<()> {
        let (t, _) = self.r.tag(x)?;
        if !matches!(
            t.t,
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 | tag::BINARY | tag::STR_UTF8
        ) {
            return Err(self.r.error(ErrorKind::BadOffset(off, "COPY"), at));
        }
        let end = self.r.skip(t.at)?;
        let start = out.len();
        out.extend_from_slice(&self.r.buf[t.at..end]);
        out[start] = t.t | if tracked { TRACK_FLAG } else { 0 };
        Ok(())
    }

    /// Writes the class name (or string) at source position `x` where it
    /// is needed: as a `COPY` of where it was written before, or as it is.
    fn string(&mut self, x: usize, out: &mut Vec<u8>) -> Result<()> {
        match self.strings.get(&x) {
            Some(&n) => write_backref(out, tag::COPY, n),
            None => {
                let n = self.here(out);
                let (t, _) = self.r.tag(x)?;
                if !matches!(
                    t.t,
                    tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 | tag::BINARY | tag::STR_UTF8
                ) {
                    return Err(self
                        .r
                        .error(ErrorKind::UnexpectedTag(t.t, "as a class name"), t.at));
                }
                let end = self.r.skip(t.at)?;
                let start = out.len();
                out.extend_from_slice(&self.r.buf[t.at..end]);
                out[start] = t.t;
                self.strings.insert(x, n);
            }
        }
        Ok(())
    }

    /// Notes the class (the string at `name`) of the object (written with
    /// the tag `object`) whose value is at `value`, when what it blesses
    /// is tracked (written after the `REFN`, or before, where a `REFP`
    /// names it): a reference to it copied in later is written as an
    /// object of that class.
    fn note_class(&mut self, name: usize, object: u8, value: usize) -> Result<()> {
        let Some(classes) = self.classes.as_deref_mut() else {
            return Ok(());
        };
        if let Some(referent) = self.r.object_referent(value)? {
            classes.insert(referent, Class { name, tag: object });
            self.blessed.insert(referent);
        }
        Ok(())
    }

    fn class_of(&self, x: usize) -> Option<Class> {
        self.classes.as_deref().and_then(|c| c.get(&x).copied())
    }
}

/// Where the run of items from `p` (before `end`) that are copied as they
/// are ends: untracked scalars, numbers, container headers, and strings
/// when `strings` (no string is written once, none is a regexp's part).
/// What needs a look (back-references, prefixes, tracked items) ends it.
fn plain_run(buf: &[u8], mut p: usize, end: usize, strings: bool) -> usize {
    let end = end.min(buf.len());
    while p < end {
        let b = buf[p];
        let next = match b {
            tag::POS_0..=tag::NEG_1
            | tag::UNDEF
            | tag::CANONICAL_UNDEF
            | tag::TRUE
            | tag::FALSE
            | tag::YES
            | tag::NO
            | tag::ARRAYREF_0..=tag::HASHREF_15 => Some(p + 1),
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 if strings => {
                Some(p + 1 + usize::from(b & 31))
            }
            tag::BINARY | tag::STR_UTF8 if strings => protocol::read_varint(&buf[p + 1..])
                .and_then(|(n, len)| usize::try_from(n).ok()?.checked_add(p + 1 + len)),
            tag::VARINT | tag::ZIGZAG | tag::ARRAY | tag::HASH => {
                protocol::read_varint(&buf[p + 1..]).map(|(_, len)| p + 1 + len)
            }
            tag::FLOAT => Some(p + 5),
            tag::DOUBLE => Some(p + 9),
            _ => None,
        };
        match next {
            Some(n) if n <= end => p = n,
            _ => break,
        }
    }
    p
}

/// Writes a back-reference tag byte `b` and its offset `n`.
fn write_backref(out: &mut Vec<u8>, b: u8, n: u64) {
    out.push(b);
    protocol::write_varint(out, n);
}

fn varint_len(n: u64) -> usize {
    (64 - (n | 1).leading_zeros() as usize).div_ceil(7)
}

/// A raw document header of `version`, no user data, at the end of `out`;
/// the new body's shift.
pub(crate) fn write_header(out: &mut Vec<u8>, version: u8) -> usize {
    let start = out.len();
    protocol::write_magic(out, version);
    out.push(0);
    if version == 1 {
        out.len() - start
    } else {
        1
    }
}

/// The item at `pos` of `view` as a document of its own, or `None` when it
/// refers to an item outside it.
pub(crate) fn extract(view: &View<'_>, pos: usize) -> Result<Option<Vec<u8>>> {
    let r = view.reader();
    let end = r.skip(pos)?;
    let mut out = Vec::with_capacity(end - pos + 16);
    let shift = write_header(&mut out, view.version());
    let body_start = out.len();
    let mut copier = Copier::new(r, shift, body_start, Outside::Stop).weak(Weak::Refuse);
    Ok(match copier.copy(pos, end, &mut out)? {
        Copied::Done => Some(out),
        Copied::Outside(_) => None,
    })
}
