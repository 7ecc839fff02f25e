//! Strings, hash keys and class names: their tags, `COPY`s of them, and
//! the keys read so far that later `COPY`s and `OBJECTV`s name.

use super::{memory, Reader, StrKind};
use crate::error::{ErrorKind, Result};
use crate::protocol::{self, tag, TRACK_FLAG};
use crate::value::{Body, Key, Regexp, Str, Value};
use std::sync::Arc;

impl<'a> Reader<'a, '_> {
    /// The string whose tag `t` was just read, or `None` for a tag that is
    /// not a string. `max_string_length` applies where Perl applies it: to
    /// `BINARY` and `STR_UTF8` strings that are not hash keys (`limited`).
    #[inline]
    pub(super) fn string(&mut self, t: u8, limited: bool) -> Result<Option<(&'a [u8], StrKind)>> {
        let (len, kind) = match t {
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => ((t & 31) as usize, StrKind::Bytes),
            tag::BINARY | tag::STR_UTF8 => {
                let at = self.cur.pos();
                let n = self.cur.varint()?;
                if let Some(kind) = string_over_limit(n, self.opts.max_string_length, limited) {
                    return Err(self.cur.error_at(kind, at));
                }
                let n =
                    usize::try_from(n).map_err(|_| self.cur.error_at(ErrorKind::Truncated, at))?;
                (
                    n,
                    if t == tag::BINARY {
                        StrKind::Bytes
                    } else {
                        StrKind::Utf8
                    },
                )
            }
            _ => return Ok(None),
        };
        let at = self.cur.pos();
        let bytes = self.cur.slice(len)?;
        if len > memory::INLINE {
            self.cur.charge_tag(len, t, at)?;
        }
        if kind == StrKind::Utf8 && self.opts.validate_utf8 && !protocol::is_perl_utf8(bytes) {
            return Err(self.cur.error_at(ErrorKind::InvalidUtf8, at));
        }
        Ok(Some((bytes, kind)))
    }

    /// A string at an earlier position `pos` (the target of a COPY or
    /// OBJECTV read at `at`): it must end before `at`.
    pub(super) fn string_at(
        &mut self,
        pos: usize,
        at: usize,
        what: &'static str,
        limited: bool,
    ) -> Result<(&'a [u8], StrKind)> {
        let saved = self.cur.pos();
        self.cur.set_pos(pos);
        // The target may carry the track flag: Perl writes a COPY of a
        // string that is also a shared or aliased scalar.
        let t = self.cur.byte()?;
        let s = self.string(t & !TRACK_FLAG, limited);
        let end = self.cur.pos();
        self.cur.set_pos(saved);
        let s = s?.ok_or_else(|| self.cur.error_at(ErrorKind::UnexpectedTag(t, what), pos))?;
        if end > at {
            let off = self.cur.offset_of(pos) as u64;
            return Err(self.cur.error_at(
                ErrorKind::BadOffset(off, "COPY target (it must end before the COPY)"),
                at,
            ));
        }
        Ok(s)
    }

    /// Reads the string a `COPY` read at `at` names into `out`. COPY
    /// targets are strings: that is all Perl writes, and it keeps decoding
    /// linear (no copying of whole structures). When the target's tag
    /// carries the track flag, returns its position: Perl's decoder reads
    /// the target's tag again, flag included, so from here on the copy is
    /// what that offset names (a later `ALIAS` or `REFP` to it means the
    /// copy), and so it is here.
    pub(super) fn copy_into(&mut self, at: usize, out: &mut Value) -> Result<Option<usize>> {
        let off = self.cur.varint()?;
        let p = self.cur.target(off, at, "COPY")?;
        let (b, kind) = self.string_at(p, at, "as the target of a COPY", true)?;
        self.string_into(out, b, kind);
        Ok((self.cur.bytes()[p] & TRACK_FLAG != 0).then_some(p))
    }

    /// A hash key, with the position of its tag and whether it was written
    /// out (not a `COPY`), so that later `COPY`s can name it; a key not met
    /// before is made by `make`.
    #[inline]
    pub(super) fn read_key(
        &mut self,
        make: impl FnOnce(&[u8], bool) -> Key,
    ) -> Result<(Key, usize, bool)> {
        let (t, at) = self.next_tag()?;
        let t = t & !TRACK_FLAG;
        if t == tag::COPY {
            // A key COPY names an earlier key, or any string that ends
            // before it: one written before the hash, or a value of this
            // hash (Perl's `dedupe_strings` writes a key equal to an
            // earlier value as a COPY of it).
            let off = self.cur.varint()?;
            let p = self.cur.target(off, at, "COPY")?;
            if let Some(k) = self.keys.at(p) {
                return Ok((k.clone(), at, false));
            }
            if let Some(k) = self.large_key_at(p, at) {
                return Ok((k, at, false));
            }
            let (b, kind) = self.string_at(p, at, "as the target of a hash key COPY", false)?;
            return Ok((make(b, kind == StrKind::Utf8), at, false));
        }
        match self.string(t, false)? {
            Some((b, kind)) => {
                self.cur.charge(memory::KEY, "a hash key", at)?;
                Ok((make(b, kind == StrKind::Utf8), at, true))
            }
            None => Err(self
                .cur
                .error_at(ErrorKind::UnexpectedTag(t, "as a hash key"), at)),
        }
    }

    pub(super) fn class_name(&mut self) -> Result<Key> {
        let (t, at) = self.next_tag()?;
        let t = t & !TRACK_FLAG;
        self.cur.charge(memory::KEY, "a class name", at)?;
        let k = if t == tag::COPY {
            let off = self.cur.varint()?;
            let p = self.cur.target(off, at, "COPY")?;
            let (b, kind) = self.string_at(p, at, "as the target of a class name COPY", false)?;
            Key::new(b, kind == StrKind::Utf8)
        } else {
            match self.string(t, false)? {
                Some((b, kind)) => Key::new(b, kind == StrKind::Utf8),
                None => {
                    return Err(self
                        .cur
                        .error_at(ErrorKind::UnexpectedTag(t, "as a class name"), at))
                }
            }
        };
        self.classes.push((at, k.clone()));
        Ok(k)
    }

    pub(super) fn regexp(&mut self) -> Result<Body> {
        let (t, at) = self.next_tag()?;
        let (pattern, kind) = self.string(t & !TRACK_FLAG, true)?.ok_or_else(|| {
            self.cur
                .error_at(ErrorKind::UnexpectedTag(t, "as a regexp pattern"), at)
        })?;
        let (t, at) = self.next_tag()?;
        let (flags, _) = self.string(t & !TRACK_FLAG, true)?.ok_or_else(|| {
            self.cur
                .error_at(ErrorKind::UnexpectedTag(t, "as regexp flags"), at)
        })?;
        Ok(Body::Regexp(Box::new(Regexp {
            pattern: Str::new(pattern),
            utf8: kind == StrKind::Utf8,
            flags: Str::new(flags),
        })))
    }
}

/// Keys (or class names) read so far, by the position of their tag, for
/// the COPYs and OBJECTVs that name them. Positions only grow, so the list
/// is sorted as it is built; repeated lookups of the same few positions
/// (every record's keys COPY the first record's) hit a small cache.
#[derive(Default)]
pub(super) struct ReadKeys {
    list: Vec<(usize, Key)>,
    // position + 1 (0: empty) and index in `list`, by position modulo 16
    cache: [(usize, u32); 16],
}

impl ReadKeys {
    pub(super) fn push(&mut self, (at, key): (usize, Key)) {
        self.list.push((at, key));
    }

    /// The key whose tag is at `pos`.
    #[inline]
    pub(super) fn at(&mut self, pos: usize) -> Option<&Key> {
        let slot = pos & 15;
        let (p, i) = self.cache[slot];
        if p == pos + 1 {
            return Some(&self.list[i as usize].1);
        }
        let i = self.list.binary_search_by_key(&pos, |&(at, _)| at).ok()?;
        self.cache[slot] = (pos + 1, i as u32);
        Some(&self.list[i].1)
    }
}

impl Reader<'_, '_> {
    /// Sets `out` to the string `b`, written in place (see `Str::assign`),
    /// or, reading from a shared buffer, to a slice of it when `b` is too
    /// long to be kept inline.
    #[inline]
    pub(super) fn string_into(&self, out: &mut Value, b: &[u8], kind: StrKind) {
        *out = match kind {
            StrKind::Bytes => Value::Bytes(Str::EMPTY),
            StrKind::Utf8 => Value::Utf8(Str::EMPTY),
        };
        if let Value::Bytes(s) | Value::Utf8(s) = out {
            s.assign(b, |b| {
                self.source
                    .and_then(|src| {
                        Str::shared(self.owner.get_or_init(|| Arc::new(src.clone())), b)
                    })
                    .unwrap_or_else(|| Str::new(b))
            });
        }
    }
}

/// The error for a string of `n` bytes over `max_string_length` (0: no
/// limit), if it is over and the string is one the limit applies to.
pub(crate) fn string_over_limit(n: u64, max: usize, limited: bool) -> Option<ErrorKind> {
    (limited && max != 0 && n > max as u64)
        .then(|| ErrorKind::LimitExceeded(format!("string of {n} bytes (limit {max})")))
}
