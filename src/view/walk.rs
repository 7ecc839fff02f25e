//! The view's reads of a body: an item's end found by walking its tags
//! (no recursion, nothing built), the tag an item starts with, the string
//! or container it is, with every length, count, offset and limit checked
//! as the decoder checks them.

use super::objects::Objects;
use crate::decoder::{string_over_limit, DecoderOptions};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, over_limit, tag, Cursor, TRACK_FLAG};
use std::sync::OnceLock;

/// A body, where its errors are placed, and the limits it is read with.
#[derive(Clone, Copy)]
pub(crate) struct Body<'v> {
    pub buf: &'v [u8],
    /// The body offset of `buf[0]`.
    pub shift: usize,
    /// Where errors are placed (see [`Cursor::placed_at`]).
    pub base: usize,
    pub in_body: bool,
    pub opts: &'v DecoderOptions,
    /// The objects of the body and what they bless, found when first
    /// asked (see [`Objects`]).
    pub objects: &'v OnceLock<Objects>,
}

/// An item's first tag, after any `PAD`s.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tag {
    /// The tag byte without its track flag.
    pub t: u8,
    /// Whether the tag (or a `PAD` before it) has the track flag.
    pub tracked: bool,
    /// Where the tag byte is.
    pub at: usize,
}

/// A string item's bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Text<'v> {
    pub bytes: &'v [u8],
    /// `STR_UTF8` (characters), or a byte string (Latin-1 characters).
    pub utf8: bool,
}

impl<'v> Text<'v> {
    /// The string's characters: a byte string's bytes are Latin-1.
    pub fn to_str(self) -> std::borrow::Cow<'v, str> {
        match std::str::from_utf8(self.bytes) {
            Ok(s) if self.utf8 || self.bytes.is_ascii() => s.into(),
            _ if self.utf8 => String::from_utf8_lossy(self.bytes),
            _ => self
                .bytes
                .iter()
                .map(|&b| char::from(b))
                .collect::<String>()
                .into(),
        }
    }

    /// Whether the string has the characters of `s`, as Perl compares
    /// strings: a byte string's bytes are Latin-1 characters.
    pub fn is(&self, s: &str) -> bool {
        if self.utf8 || self.bytes.is_ascii() {
            return self.bytes == s.as_bytes();
        }
        s.chars().eq(self.bytes.iter().map(|&b| char::from(b)))
    }
}

/// What an array or hash holds, and where its first item starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Container {
    pub hash: bool,
    /// Elements, or entries of a hash.
    pub count: usize,
    pub first: usize,
}

/// Which of the keys a path step asks for the key strings at some
/// positions name (see [`Body::lookup_all`]).
#[derive(Default)]
pub(crate) struct KeyNames(Vec<(usize, Option<usize>)>);

impl KeyNames {
    /// Key strings remembered, at most: a hash's keys are few, and a
    /// document with more distinct ones is read without the shortcut.
    const MAX: usize = 64;
}

/// An open item of [`Body::walk`]: the items it still owes, and whether it
/// took a nesting level.
#[derive(Clone, Copy)]
pub(crate) struct Frame {
    pub(super) owed: u64,
    pub(super) level: bool,
    /// A `REFN`: its referent takes its level, when it is read.
    pub(super) refn: bool,
}

impl<'v> Body<'v> {
    /// A cursor at `pos`.
    #[inline]
    pub fn cursor(&self, pos: usize) -> Cursor<&'v [u8]> {
        let mut c = Cursor::new(self.buf, self.shift)
            .placed_at(self.base, self.in_body)
            .max_depth(self.opts.max_recursion_depth);
        c.set_pos(pos);
        c
    }

    /// An error of kind `kind` at buffer position `at`.
    pub fn error(&self, kind: ErrorKind, at: usize) -> Error {
        self.cursor(0).error_at(kind, at)
    }

    /// The tag of the item at `pos`, after any `PAD`s, and the cursor past it.
    #[inline]
    pub fn tag(&self, pos: usize) -> Result<(Tag, Cursor<&'v [u8]>)> {
        let mut c = self.cursor(pos);
        let mut tracked = false;
        loop {
            let at = c.pos();
            let b = c.byte()?;
            tracked |= b & TRACK_FLAG != 0;
            let t = b & !TRACK_FLAG;
            if t != tag::PAD {
                return Ok((Tag { t, tracked, at }, c));
            }
        }
    }

    /// Where the item at `pos` ends.
    pub fn skip(&self, pos: usize) -> Result<usize> {
        self.walk(pos, &mut Vec::new())
    }

    /// Where the item at `pos` ends, its tags checked as the decoder
    /// checks them, nesting depth included (counted from 0 at `pos`).
    /// `stack` is scratch space, kept between walks.
    #[inline]
    pub fn walk(&self, pos: usize, stack: &mut Vec<Frame>) -> Result<usize> {
        match self.fast_walk(pos, stack) {
            Some(end) => Ok(end),
            None => self.checked_walk(pos, stack, None),
        }
    }

    /// The item the `REFP` at `at` names, its offset `off` read by `c`: an
    /// item before it, or the `REFP` itself when its tag is tracked (Perl
    /// writes `$x = \$x` so; the decoder registers an item when it reads
    /// its tag, and reads it).
    pub fn refp_target(&self, c: &Cursor<&'v [u8]>, off: u64, at: usize) -> Result<usize> {
        if self.buf[at] & TRACK_FLAG != 0 && c.position_of(off) == Some(at) {
            return Ok(at);
        }
        c.target(off, at, "REFP")
    }

    /// The checked walk of [`walk`](Self::walk), through the cursor; the
    /// position of each object tag it reads goes to `objects`, if given.
    pub(super) fn checked_walk(
        &self,
        pos: usize,
        stack: &mut Vec<Frame>,
        mut objects: Option<&mut Vec<usize>>,
    ) -> Result<usize> {
        let o = self.opts;
        let mut c = self.cursor(pos);
        stack.clear();
        stack.push(Frame {
            owed: 1,
            level: false,
            refn: false,
        });
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(c.pos());
            };
            if top.owed == 0 {
                if top.level {
                    c.leave();
                }
                stack.pop();
                continue;
            }
            top.owed -= 1;
            let at = c.pos();
            let b = c.byte()?;
            let t = b & !TRACK_FLAG;
            if t == tag::PAD {
                top.owed += 1;
                continue;
            }
            // A REFN's referent takes the REFN's level, unless it is one
            // of Perl's immortals (read without a level).
            let referent = top.refn;
            if referent {
                top.refn = false;
                if !protocol::immortal_referent(b, o.use_undef) {
                    c.enter()?;
                    top.level = true;
                }
            }
            let open = |stack: &mut Vec<Frame>, owed: u64, level: bool| {
                stack.push(Frame {
                    owed,
                    level,
                    refn: false,
                })
            };
            match t {
                tag::POS_0..=tag::NEG_1
                | tag::UNDEF
                | tag::CANONICAL_UNDEF
                | tag::TRUE
                | tag::FALSE
                | tag::YES
                | tag::NO => {}
                tag::VARINT | tag::ZIGZAG => {
                    c.varint()?;
                }
                tag::REFP => {
                    let off = c.varint()?;
                    self.refp_target(&c, off, at)?;
                }
                tag::ALIAS | tag::COPY => {
                    let off = c.varint()?;
                    c.target(off, at, backref_name(t))?;
                }
                tag::FLOAT | tag::DOUBLE | tag::LONG_DOUBLE | tag::FLOAT_128 => {
                    c.take(float_len(t))?;
                }
                tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => {
                    c.take(usize::from(t & 31))?;
                }
                tag::BINARY | tag::STR_UTF8 => {
                    let n = self.string_len(&mut c)?;
                    c.take(n)?;
                }
                tag::REFN => stack.push(Frame {
                    owed: 1,
                    level: false,
                    refn: true,
                }),
                tag::WEAKEN => open(stack, 1, false),
                tag::OBJECT | tag::OBJECT_FREEZE => {
                    self.objects_allowed(at)?;
                    if let Some(o) = objects.as_deref_mut() {
                        o.push(at);
                    }
                    open(stack, 2, false);
                }
                tag::OBJECTV | tag::OBJECTV_FREEZE => {
                    self.objects_allowed(at)?;
                    if let Some(o) = objects.as_deref_mut() {
                        o.push(at);
                    }
                    let off = c.varint()?;
                    c.target(off, at, "OBJECTV")?;
                    open(stack, 1, false);
                }
                tag::REGEXP => open(stack, 2, false),
                tag::ARRAY | tag::HASH => {
                    // A REFN's referent is at the REFN's level.
                    if !referent {
                        c.enter()?;
                    }
                    let n = self.count(&mut c, t)?;
                    let owed = if t == tag::HASH {
                        2 * n as u64
                    } else {
                        n as u64
                    };
                    open(stack, owed, !referent);
                }
                tag::ARRAYREF_0..=tag::HASHREF_15 => {
                    c.enter()?;
                    let n = u64::from(t & 15);
                    let hash = t >= tag::HASHREF_0;
                    self.short_count(n, hash, at)?;
                    open(stack, if hash { 2 * n } else { n }, true);
                }
                _ => return Err(c.error_at(ErrorKind::UnexpectedTag(t, "as a value"), at)),
            }
        }
    }

    /// A `BINARY` or `STR_UTF8` length, read at the cursor and checked
    /// against `max_string_length`.
    #[inline]
    pub fn string_len(&self, c: &mut Cursor<&'v [u8]>) -> Result<usize> {
        let at = c.pos();
        let n = c.varint()?;
        if let Some(kind) = string_over_limit(n, self.opts.max_string_length, true) {
            return Err(c.error_at(kind, at));
        }
        usize::try_from(n).map_err(|_| c.error_at(ErrorKind::Truncated, at))
    }

    /// The count of an `ARRAY` or `HASH` (tag `t`), read at the cursor and
    /// checked against its limit and the bytes left.
    #[inline]
    pub fn count(&self, c: &mut Cursor<&'v [u8]>, t: u8) -> Result<usize> {
        if t == tag::HASH {
            c.count(self.opts.max_num_hash_entries, "hash", 2)
        } else {
            c.count(self.opts.max_num_array_entries, "array", 1)
        }
    }

    /// The count of an `ARRAYREF_n` or `HASHREF_n` at `at`, checked against
    /// its limit.
    fn short_count(&self, n: u64, hash: bool, at: usize) -> Result<()> {
        let (limit, what) = if hash {
            (self.opts.max_num_hash_entries, "hash")
        } else {
            (self.opts.max_num_array_entries, "array")
        };
        match over_limit(n, limit, what) {
            Some(kind) => Err(self.error(kind, at)),
            None => Ok(()),
        }
    }

    /// `refuse_objects` refuses the object whose tag is at `at`.
    fn objects_allowed(&self, at: usize) -> Result<()> {
        if self.opts.refuse_objects {
            return Err(self.error(ErrorKind::ObjectRefused, at));
        }
        Ok(())
    }

    /// The item at `pos` with its `ALIAS`es and `COPY`s followed, and a
    /// back-reference to a frozen object's values read as the object (as
    /// the decoder reads them): the tag of the item whose value it is, and
    /// the cursor past that tag. `hops` counts the indirections followed,
    /// against the depth limit.
    pub fn resolve(&self, pos: usize, hops: &mut usize) -> Result<(Tag, Cursor<&'v [u8]>)> {
        let mut pos = pos;
        let mut aliased = false;
        loop {
            let (tag, mut c) = self.tag(pos)?;
            let object = match tag.t {
                tag::ALIAS | tag::COPY => {
                    self.hop(hops, tag.at)?;
                    let off = c.varint()?;
                    pos = c.target(off, tag.at, backref_name(tag.t))?;
                    aliased = tag.t == tag::ALIAS;
                    continue;
                }
                tag::REFP => {
                    let mut peek = c.clone();
                    let off = peek.varint()?;
                    self.frozen_values_of(self.refp_target(&peek, off, tag.at)?)?
                }
                tag::ARRAY if aliased => self.frozen_values_of(tag.at)?,
                _ => None,
            };
            match object {
                Some(object) => {
                    self.hop(hops, tag.at)?;
                    pos = object;
                    aliased = false;
                }
                None => return Ok((tag, c)),
            }
        }
    }

    /// One more indirection followed, found at `at`.
    pub fn hop(&self, hops: &mut usize, at: usize) -> Result<()> {
        *hops += 1;
        let max = protocol::depth_limit(self.opts.max_recursion_depth);
        if *hops > max {
            return Err(self.error(ErrorKind::DepthExceeded(max), at));
        }
        Ok(())
    }

    /// The string at `pos` (a hash key, a class name, a value), `COPY`s
    /// followed; `None` if it is not a string.
    pub fn text(&self, pos: usize) -> Result<Option<Text<'v>>> {
        let (tag, mut c) = self.resolve(pos, &mut 0)?;
        let (len, utf8) = match tag.t {
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => (usize::from(tag.t & 31), false),
            tag::BINARY | tag::STR_UTF8 => (self.string_len(&mut c)?, tag.t == tag::STR_UTF8),
            _ => return Ok(None),
        };
        let bytes = c.slice(len)?;
        Ok(Some(Text { bytes, utf8 }))
    }

    /// The string a hash key or class name at `pos` is: it must be one.
    pub fn name(&self, pos: usize, what: &'static str) -> Result<Text<'v>> {
        match self.text(pos)? {
            Some(t) => Ok(t),
            None => {
                let (tag, _) = self.tag(pos)?;
                Err(self.error(ErrorKind::UnexpectedTag(tag.t, what), tag.at))
            }
        }
    }

    /// The array or hash the item at `pos` is, or refers to (through
    /// references, weak ones, objects and aliases): what a path step reads.
    pub fn container(&self, pos: usize) -> Result<Option<Container>> {
        let mut hops = 0;
        let mut pos = pos;
        loop {
            let (tag, mut c) = self.resolve(pos, &mut hops)?;
            let inline = |c: &mut Cursor<&'v [u8]>, t: u8| -> Result<Option<Container>> {
                let n = match t {
                    tag::ARRAY | tag::HASH => self.count(c, t)?,
                    _ => usize::from(t & 15),
                };
                Ok(Some(Container {
                    hash: matches!(t, tag::HASH | tag::HASHREF_0..=tag::HASHREF_15),
                    count: n,
                    first: c.pos(),
                }))
            };
            match tag.t {
                tag::ARRAY | tag::HASH | tag::ARRAYREF_0..=tag::HASHREF_15 => {
                    return inline(&mut c, tag.t)
                }
                tag::REFN => {
                    let (inner, mut c) = self.tag(c.pos())?;
                    return match inner.t {
                        tag::ARRAY | tag::HASH => inline(&mut c, inner.t),
                        _ => Ok(None),
                    };
                }
                tag::REFP => {
                    let off = c.varint()?;
                    let x = self.refp_target(&c, off, tag.at)?;
                    // A tracked ARRAY or HASH is the referent of the REFN
                    // before it; a tracked ARRAYREF_n or HASHREF_n is the
                    // reference itself, so a REFP to one is a reference to
                    // a reference (as Perl tracks the item it fills).
                    let (inner, mut c) = self.tag(x)?;
                    return match inner.t {
                        tag::ARRAY | tag::HASH => inline(&mut c, inner.t),
                        _ => Ok(None),
                    };
                }
                t => match self.prefixed(t, &mut c)? {
                    Some(value) => pos = value,
                    None => return Ok(None),
                },
            }
            self.hop(&mut hops, tag.at)?;
        }
    }

    /// Where the value the prefix tag `t` (read by `c`) holds starts: a
    /// `WEAKEN`'s, an `OBJECT`'s after its class, an `OBJECTV`'s after its
    /// offset; `None` for any other tag.
    fn prefixed(&self, t: u8, c: &mut Cursor<&'v [u8]>) -> Result<Option<usize>> {
        Ok(match t {
            tag::WEAKEN => Some(c.pos()),
            tag::OBJECT => Some(self.skip(c.pos())?),
            tag::OBJECTV => {
                c.varint()?;
                Some(c.pos())
            }
            _ => None,
        })
    }

    /// The array of values of the frozen object (`OBJECT_FREEZE`) at `pos`.
    pub fn frozen(&self, pos: usize) -> Result<Option<Container>> {
        let (tag, c) = self.tag(pos)?;
        let value = match tag.t {
            tag::OBJECT_FREEZE => self.key(c.pos())?.1,
            tag::OBJECTV_FREEZE => {
                let mut c = c;
                c.varint()?;
                c.pos()
            }
            _ => return Ok(None),
        };
        self.container(value)
    }

    /// Where the scalar the reference at `pos` refers to is written, when
    /// it is written there: after its `REFN` (through `WEAKEN` and
    /// `OBJECT`).
    pub fn referent(&self, pos: usize) -> Result<Option<usize>> {
        let mut hops = 0;
        let mut pos = pos;
        loop {
            let (tag, mut c) = self.tag(pos)?;
            match tag.t {
                tag::REFN => return Ok(Some(c.pos())),
                t => match self.prefixed(t, &mut c)? {
                    Some(value) => pos = value,
                    None => return Ok(None),
                },
            }
            self.hop(&mut hops, tag.at)?;
        }
    }

    /// Whether the item at `pos` is a regexp or a reference to one.
    pub fn regexp(&self, pos: usize) -> Result<bool> {
        let (tag, c) = self.resolve(pos, &mut 0)?;
        Ok(match tag.t {
            tag::REGEXP => true,
            tag::REFN => self.tag(c.pos())?.0.t == tag::REGEXP,
            _ => false,
        })
    }

    /// The class of the object the item at `pos` is (or refers to, as
    /// [`container`](Self::container) follows them), if it is one: named
    /// by its own `OBJECT`, or, for a reference without one (a second
    /// reference to an object), by the last object that blesses its
    /// referent.
    pub fn class(&self, pos: usize) -> Result<Option<Text<'v>>> {
        let mut hops = 0;
        let mut pos = pos;
        loop {
            let (tag, mut c) = self.resolve(pos, &mut hops)?;
            let referent = match tag.t {
                tag::OBJECT | tag::OBJECT_FREEZE => {
                    return self.name(c.pos(), "as a class name").map(Some)
                }
                tag::OBJECTV | tag::OBJECTV_FREEZE => {
                    let off = c.varint()?;
                    let x = c.target(off, tag.at, "OBJECTV")?;
                    return self.name(x, "as a class name").map(Some);
                }
                tag::WEAKEN => {
                    pos = c.pos();
                    self.hop(&mut hops, tag.at)?;
                    continue;
                }
                tag::REFP => {
                    let off = c.varint()?;
                    self.refp_target(&c, off, tag.at)?
                }
                tag::REFN => match self.tag(c.pos())? {
                    (r, _) if r.tracked => r.at,
                    _ => return Ok(None),
                },
                _ => return Ok(None),
            };
            match self.blessing(referent)? {
                Some(object) => pos = object,
                None => return Ok(None),
            }
            self.hop(&mut hops, tag.at)?;
        }
    }
}

/// The bytes of a float tag's number: `FLOAT` 4, `DOUBLE` 8, `LONG_DOUBLE`
/// and `FLOAT_128` 16.
pub(crate) fn float_len(t: u8) -> usize {
    match t {
        tag::FLOAT => 4,
        tag::DOUBLE => 8,
        _ => 16,
    }
}

/// The name errors give a back-reference tag.
pub(crate) fn backref_name(t: u8) -> &'static str {
    match t {
        tag::REFP => "REFP",
        tag::ALIAS => "ALIAS",
        _ => "COPY",
    }
}

impl<'v> Body<'v> {
    /// The hash key (or class name) at `pos`, a string or a `COPY` of one,
    /// and where it ends.
    pub fn key(&self, pos: usize) -> Result<(Text<'v>, usize)> {
        let (tag, mut c) = self.tag(pos)?;
        let (len, utf8) = match tag.t {
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => (usize::from(tag.t & 31), false),
            tag::BINARY | tag::STR_UTF8 => (self.string_len(&mut c)?, tag.t == tag::STR_UTF8),
            tag::COPY => {
                let off = c.varint()?;
                let x = c.target(off, tag.at, "COPY")?;
                return Ok((self.name(x, "as a hash key")?, c.pos()));
            }
            t => return Err(self.error(ErrorKind::UnexpectedTag(t, "as a hash key"), tag.at)),
        };
        let bytes = c.slice(len)?;
        Ok((Text { bytes, utf8 }, c.pos()))
    }

    /// The positions of the first `n` items of `cont` (elements of an
    /// array, values of a hash), in order.
    pub fn items(&self, cont: &Container, n: usize, stack: &mut Vec<Frame>) -> Result<Vec<usize>> {
        let n = n.min(cont.count);
        let mut out = Vec::with_capacity(n);
        let mut pos = cont.first;
        for _ in 0..n {
            if cont.hash {
                pos = self.key(pos)?.1;
            }
            out.push(pos);
            pos = self.walk(pos, stack)?;
        }
        Ok(out)
    }

    /// The value of each of `keys` in the hash `cont`, in `found` (`None`
    /// for a key it does not have), and where its last entry ends: one
    /// walk of the hash. `known` remembers which key a key string names,
    /// by position, across hashes (the keys of later records are `COPY`s
    /// of the first's).
    pub fn lookup_all(
        &self,
        cont: &Container,
        keys: &[String],
        known: &mut KeyNames,
        found: &mut Vec<Option<usize>>,
        stack: &mut Vec<Frame>,
    ) -> Result<usize> {
        found.clear();
        found.resize(keys.len(), None);
        let mut pos = cont.first;
        for _ in 0..cont.count {
            let (tag, mut c) = self.tag(pos)?;
            let (which, value) = if tag.t == tag::COPY {
                let off = c.varint()?;
                let x = c.target(off, tag.at, "COPY")?;
                let which = match known.0.iter().find(|(p, _)| *p == x) {
                    Some(&(_, which)) => which,
                    None => {
                        let name = self.name(x, "as a hash key")?;
                        let which = keys.iter().position(|k| name.is(k));
                        if known.0.len() < KeyNames::MAX {
                            known.0.push((x, which));
                        }
                        which
                    }
                };
                (which, c.pos())
            } else {
                let (name, value) = self.key(pos)?;
                (keys.iter().position(|k| name.is(k)), value)
            };
            if let Some(i) = which {
                found[i].get_or_insert(value);
            }
            pos = self.walk(value, stack)?;
        }
        // a key asked for twice has the first one's answer
        for i in 1..keys.len() {
            if let Some(first) = keys[..i].iter().position(|k| *k == keys[i]) {
                found[i] = found[first];
            }
        }
        Ok(pos)
    }

    /// The position of the value whose key is `key` in the hash `cont`.
    pub fn lookup(
        &self,
        cont: &Container,
        key: &str,
        stack: &mut Vec<Frame>,
    ) -> Result<Option<usize>> {
        let mut pos = cont.first;
        for _ in 0..cont.count {
            let (k, value) = self.key(pos)?;
            if k.is(key) {
                return Ok(Some(value));
            }
            pos = self.walk(value, stack)?;
        }
        Ok(None)
    }
}
