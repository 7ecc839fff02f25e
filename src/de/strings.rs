//! Strings, hash keys and class names, as the serde deserializer reads
//! them.

use super::*;

impl<'de> Body<'de> {
    pub(super) fn string<V: Visitor<'de>>(
        &mut self,
        visitor: V,
        r: Range<usize>,
        utf8: bool,
        want: Want,
    ) -> Result<V::Value> {
        if want == Want::Bool && matches!(&self.cur.bytes()[r.clone()], b"" | b"0" | b"1") {
            return visitor.visit_bool(&self.cur.bytes()[r] == b"1");
        }
        if perl::numeric(want) && self.opts.perl {
            return perl::string(visitor, &self.cur.bytes()[r], want);
        }
        // Bytes flagged UTF-8 that are not: text cannot take them, and
        // `validate_utf8` refuses those Perl's rule refuses; anything else
        // is offered them as bytes, as the decoder keeps them, and a visitor
        // that takes no bytes (`serde_json::Value`) is told what is wrong
        // with them.
        let refused = |b: &[u8]| {
            utf8 && (want.text() || self.opts.validate_utf8 && !protocol::is_perl_utf8(b))
        };
        let bad_utf8 = || self.cur.error_at(ErrorKind::InvalidUtf8, r.start);
        let offered = |v: Result<V::Value>| if utf8 { v.map_err(|_| bad_utf8()) } else { v };
        match self.bytes(r.clone()) {
            Bytes::Input(b) => match text(b) {
                Some(s) => visitor.visit_borrowed_str(s),
                None if refused(b) => Err(bad_utf8()),
                None => offered(visitor.visit_borrowed_bytes(b)),
            },
            Bytes::Copy(b) => match text(b) {
                Some(s) => visitor.visit_str(s),
                None if refused(b) => Err(bad_utf8()),
                None => offered(visitor.visit_bytes(b)),
            },
        }
    }

    /// The rest of a string item whose tag `t` was just read: its bytes and
    /// whether it is UTF-8; `None` for a tag that is not a string's (a
    /// tracked one included). `max_string_length` applies where the decoder
    /// applies it (`limited`: not to hash keys and class names).
    #[inline(always)]
    pub(super) fn string_body(
        &mut self,
        t: u8,
        limited: bool,
    ) -> Result<Option<(Range<usize>, bool)>> {
        let len = match t {
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => (t & 31) as usize,
            tag::BINARY | tag::STR_UTF8 => {
                let at = self.cur.pos();
                let n = self.cur.varint()?;
                if let Some(kind) = string_over_limit(n, self.opts.max_string_length, limited) {
                    return Err(self.cur.error_at(kind, at));
                }
                usize::try_from(n).map_err(|_| self.cur.error_at(ErrorKind::Truncated, at))?
            }
            _ => return Ok(None),
        };
        let at = self.cur.pos();
        let r = self.cur.take(len)?;
        if len > memory::INLINE {
            self.cur.charge_tag(len, t, at)?;
        }
        Ok(Some((r, t == tag::STR_UTF8)))
    }

    /// A string item (after `PAD`s); `what` names its place for the error.
    pub(super) fn string_item(&mut self, what: &'static str) -> Result<(Range<usize>, bool)> {
        let (t, at) = self.next_tag()?;
        self.string_body(t, true)?
            .ok_or_else(|| self.cur.error_at(ErrorKind::UnexpectedTag(t, what), at))
    }

    /// The next tag after `PAD`s, without the track flag, and its position
    /// (as the decoder has it: that of a tracked `PAD` before it, if any).
    #[inline]
    pub(super) fn next_tag(&mut self) -> Result<(u8, usize)> {
        let mut tracked_pad = None;
        loop {
            let at = self.cur.pos();
            let b = self.cur.byte()?;
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
    pub(super) fn string_at(
        &mut self,
        p: usize,
        at: usize,
        what: &'static str,
        limited: bool,
    ) -> Result<(Range<usize>, bool)> {
        let back = self.cur.pos();
        self.cur.set_pos(p);
        let read = self
            .cur
            .byte()
            .and_then(|b| Ok((b, self.string_body(b & !TRACK_FLAG, limited)?)));
        let end = self.cur.pos();
        self.cur.set_pos(back);
        let (t, s) = read?;
        let s = s.ok_or_else(|| self.cur.error_at(ErrorKind::UnexpectedTag(t, what), p))?;
        if end > at {
            return Err(self.cur.error_at(
                ErrorKind::BadOffset(
                    (p + self.cur.shift()) as u64,
                    "COPY target (it must end before the COPY)",
                ),
                at,
            ));
        }
        Ok(s)
    }

    /// A hash key: a string, or a `COPY` of an earlier one.
    #[inline]
    pub(super) fn key(&mut self) -> Result<KeyRef> {
        // The common case first: a COPY (with a one-byte offset) of a key
        // met before.
        if let (Some(&tag::COPY), Some(&off @ 0..=127)) = (
            self.cur.bytes().get(self.cur.pos()),
            self.cur.bytes().get(self.cur.pos() + 1),
        ) {
            if let Some(p) = (off as usize).checked_sub(self.cur.shift()) {
                let copies = self.seen.as_deref().and_then(|s| s.key_copies.as_deref());
                if let Some(set) = copies.map(|k| &k[key_set(p)]) {
                    if set[0].0 == p + 1 {
                        self.cur.set_pos(self.cur.pos() + 2);
                        return Ok(set[0].1.clone());
                    }
                }
            }
        }
        self.key_slow()
    }

    pub(super) fn key_slow(&mut self) -> Result<KeyRef> {
        let (t, at) = self.next_tag()?;
        if t == tag::COPY {
            let off = self.cur.varint()?;
            let p = self.cur.target(off, at, "COPY")?;
            // Every record's keys COPY the first record's: remember the
            // last few targets. A target checked once ends before every
            // later COPY too.
            let sets = self
                .seen
                .get_or_insert_with(Default::default)
                .key_copies
                .get_or_insert_with(|| Box::new(std::array::from_fn(|_| Default::default())));
            let set = &mut sets[key_set(p)];
            if set[0].0 == p + 1 {
                return Ok(set[0].1.clone());
            }
            if set[1].0 == p + 1 {
                set.swap(0, 1);
                return Ok(set[0].1.clone());
            }
            let (bytes, utf8) = self.string_at(p, at, "as the target of a hash key COPY", false)?;
            let key = self.key_ref(bytes, utf8);
            let sets = self
                .seen
                .as_deref_mut()
                .and_then(|s| s.key_copies.as_deref_mut());
            let set = &mut sets.expect("made above")[key_set(p)];
            set[1] = std::mem::replace(&mut set[0], (p + 1, key.clone()));
            return Ok(key);
        }
        let (bytes, utf8) = self.string_body(t, false)?.ok_or_else(|| {
            self.cur
                .error_at(ErrorKind::UnexpectedTag(t, "as a hash key"), at)
        })?;
        Ok(self.key_ref(bytes, utf8))
    }

    #[inline]
    pub(super) fn key_ref(&self, bytes: Range<usize>, utf8: bool) -> KeyRef {
        let text = text(&self.cur.bytes()[bytes.clone()]).is_some();
        KeyRef { bytes, utf8, text }
    }

    /// Visits a key read by `key` as a string, or as bytes when it is not
    /// valid UTF-8 (flagged so, only where `want` allows: see `string`).
    #[inline]
    pub(super) fn visit_key<V: Visitor<'de>>(
        &mut self,
        visitor: V,
        key: KeyRef,
        want: Want,
    ) -> Result<V::Value> {
        if !key.text {
            return self.string(visitor, key.bytes, key.utf8, want);
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
}
