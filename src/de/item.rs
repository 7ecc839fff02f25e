//! Reading one value: the tag dispatcher of the serde deserializer.

use super::*;
use crate::value::perl::Number;

impl<'de> Body<'de> {
    /// Reads one value and hands it to `visitor`. The commonest untracked
    /// scalars (integers, short strings) are read here; the rest, and
    /// these when cut short, by `parse_item`. What is read here is not
    /// charged to the tag budget: the container it is in paid for it. An
    /// integer visitor refuses strings, so where one is wanted, strings are
    /// left to `parse_item` too.
    #[inline(always)]
    pub(super) fn parse<V: Visitor<'de>>(&mut self, visitor: V, want: Want) -> Result<V::Value> {
        let at = self.cur.pos();
        match self.cur.bytes().get(at) {
            Some(&t @ tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31) if want != Want::Int => {
                let end = at + 1 + (t & 31) as usize;
                if end <= self.cur.bytes().len() {
                    self.cur.set_pos(end);
                    return self
                        .string(visitor, at + 1..end, false, want)
                        .map_err(|e| self.cur.place(e, at));
                }
            }
            Some(&tag::STR_UTF8) if want != Want::Int => {
                // A length under 128 is one byte; a string over the
                // limit is refused by `parse_item`.
                if let Some(&n @ 0..=127) = self.cur.bytes().get(at + 1) {
                    let end = at + 2 + n as usize;
                    let max = self.opts.max_string_length;
                    if end <= self.cur.bytes().len() && (max == 0 || n as usize <= max) {
                        self.cur.set_pos(end);
                        return self
                            .string(visitor, at + 2..end, true, want)
                            .map_err(|e| self.cur.place(e, at));
                    }
                }
            }
            // One-byte integers as `u8`, which every integer visitor
            // takes without a range check.
            // (Where a `bool` or a string is wanted, `parse_item` reads
            // numbers.)
            Some(&t @ tag::POS_0..=tag::POS_15) if !perl::from_numbers(want) => {
                self.cur.set_pos(at + 1);
                return visitor.visit_u8(t).map_err(|e| self.cur.place(e, at));
            }
            Some(&t @ tag::NEG_16..=tag::NEG_1) if !perl::from_numbers(want) => {
                self.cur.set_pos(at + 1);
                return visitor
                    .visit_i64(i64::from(t) - 32)
                    .map_err(|e| self.cur.place(e, at));
            }
            // Varints of one or two bytes (integers under 16,384 and
            // over -8,193), inline: a call returning a `Result` through
            // memory stalls on reading it back. Longer ones, like every
            // other tag, are `parse_item`'s, out of line, which keeps this
            // small enough to inline where an integer is wanted.
            Some(&t @ (tag::VARINT | tag::ZIGZAG)) if !perl::from_numbers(want) => {
                let b = self.cur.bytes();
                let r = match (b.get(at + 1), b.get(at + 2)) {
                    (Some(&n @ 0..=0x7f), _) => Some((u64::from(n), 2)),
                    (Some(&lo), Some(&hi @ 0..=0x7f)) => {
                        Some((u64::from(lo & 0x7f) | u64::from(hi) << 7, 3))
                    }
                    _ => None,
                };
                if let Some((n, len)) = r {
                    self.cur.set_pos(at + len);
                    let v = match (t, len) {
                        (tag::VARINT, 2) => visitor.visit_u8(n as u8),
                        (tag::VARINT, _) => visitor.visit_u64(n),
                        _ => visitor.visit_i64(protocol::zigzag_decode(n)),
                    };
                    return v.map_err(|e| self.cur.place(e, at));
                }
            }
            _ => {}
        }
        self.parse_item(visitor, want, false)
    }

    /// Reads a value a sequence, map or struct is wanted from: an untracked
    /// array or hash reference here (short forms and `REFN ARRAY`/`REFN
    /// HASH`), as `parse_item` reads them, and anything else by `parse`.
    #[inline]
    pub(super) fn container<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        let at = self.cur.pos();
        match self.cur.bytes().get(at) {
            Some(&t @ tag::ARRAYREF_0..=tag::ARRAYREF_15) => {
                let n = self.short_container(t, at, self.opts.max_num_array_entries, "array")?;
                self.nested::<V>(|de| de.seq(visitor, n))
                    .map_err(|e| self.cur.place(e, at))
            }
            Some(&t @ tag::HASHREF_0..=tag::HASHREF_15) => {
                let n = self.short_container(t, at, self.opts.max_num_hash_entries, "hash")?;
                self.nested::<V>(|de| visitor.visit_map(Entries { de, left: n }))
                    .map_err(|e| self.cur.place(e, at))
            }
            // The long forms, untracked, without `parse_item`'s dispatch.
            Some(&tag::REFN) => match self.cur.bytes().get(at + 1) {
                Some(&tag::ARRAY) => {
                    let limit = self.opts.max_num_array_entries;
                    self.long_container(at, limit, "array", 1, |de, n| de.seq(visitor, n))
                }
                Some(&tag::HASH) => {
                    let limit = self.opts.max_num_hash_entries;
                    self.long_container(at, limit, "hash", 2, |de, n| {
                        visitor.visit_map(Entries { de, left: n })
                    })
                }
                _ => self.parse(visitor, Want::Any),
            },
            _ => self.parse(visitor, Want::Any),
        }
    }

    /// Reads the `REFN` at `at`, the `ARRAY` or `HASH` after it and its
    /// count, paying for both tags and for the elements and entering one
    /// level, in `parse_item`'s order (so a limit is met at the same
    /// offset); then the elements, by `f`.
    #[inline(always)]
    fn long_container<R>(
        &mut self,
        at: usize,
        limit: usize,
        what: &str,
        min_bytes: usize,
        f: impl FnOnce(&mut Self, usize) -> Result<R>,
    ) -> Result<R> {
        self.prepay(1, at)?;
        self.prepay(1, at + 1)?;
        self.cur.set_pos(at + 2);
        self.cur.enter()?;
        let v = match self.cur.count(limit, what, min_bytes) {
            Ok(n) => match self.prepay_container(n, min_bytes == 2, at + 1) {
                Ok(()) => Stack::run(self, |de| f(de, n)),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        self.cur.leave();
        v.map_err(|e| self.cur.place(e, at + 1))
    }

    /// The element count of the `ARRAYREF_n`/`HASHREF_n` tag `t` read at
    /// `at`, checked against `limit` and paid for (the tag itself is paid
    /// by the caller).
    #[inline(always)]
    fn short_count(&mut self, t: u8, at: usize, limit: usize, what: &str) -> Result<usize> {
        let n = (t & 15) as usize;
        if let Some(kind) = over_limit(n as u64, limit, what) {
            return Err(self.cur.error_at(kind, at));
        }
        self.prepay_container(n, t >= tag::HASHREF_0, at)?;
        Ok(n)
    }

    /// Steps over the `ARRAYREF_n`/`HASHREF_n` tag `t` at `at`, paying for
    /// it and its elements; gives their count.
    #[inline(always)]
    fn short_container(&mut self, t: u8, at: usize, limit: usize, what: &str) -> Result<usize> {
        self.prepay(1, at)?;
        let n = self.short_count(t, at, limit, what)?;
        self.cur.set_pos(at + 1);
        Ok(n)
    }

    /// Reads one value, a `REFN`'s referent if `referent`. Levels count as
    /// the decoder counts them, where it counts them
    /// ([`protocol::immortal_referent`]), and a `REFP` or `ALIAS` target's
    /// levels again where it is met again: only this reader reads a
    /// shared container twice (a shared scalar takes no level).
    pub(super) fn parse_item<V: Visitor<'de>>(
        &mut self,
        visitor: V,
        want: Want,
        referent: bool,
    ) -> Result<V::Value> {
        let depth = self.cur.depth();
        // The tracked items this call put on the path.
        let mut marks = Vec::new();
        let v = self.parse_marked(visitor, want, referent, &mut marks);
        if let Some(seen) = self.seen.as_mut() {
            for m in marks {
                seen.path.remove(&m);
            }
        }
        self.cur.set_depth(depth);
        v
    }

    pub(super) fn parse_marked<V: Visitor<'de>>(
        &mut self,
        visitor: V,
        want: Want,
        mut referent: bool,
        marks: &mut Vec<usize>,
    ) -> Result<V::Value> {
        // A tracked PAD tracks the item after it, at the PAD's offset.
        let mut tracked_pad = None;
        let start = self.cur.pos();
        // The prefix tag the item read now is directly inside.
        let mut prefix = None;
        // Whether the item read now is the slot of an object that is a
        // referent (whose level the referent took).
        let mut referent_slot = false;
        loop {
            let at = self.cur.pos();
            self.prepay(1, at)?;
            let b = self.cur.byte()?;
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
            let referent = std::mem::take(&mut referent);
            let immortal = at == start && protocol::immortal_referent(b, self.opts.use_undef);
            let object = matches!(t, tag::OBJECT | tag::OBJECTV);
            if referent && !immortal
                || matches!(t, tag::ARRAY | tag::HASH) && !referent && !referent_slot
            {
                self.cur.enter()?;
            }
            referent_slot = object && (referent || referent_slot);
            if object || t == tag::WEAKEN {
                if prefix.is_some_and(|outer| protocol::nested_prefix_level(outer, t)) {
                    self.cur.enter()?;
                }
                prefix = Some(t);
            }
            let v = match t {
                tag::WEAKEN => match self.weak_back(self.cur.pos()) {
                    Some(end) => {
                        self.cur.set_pos(end);
                        visitor.visit_unit()
                    }
                    None if self.reference_follows(self.cur.pos(), false) => continue,
                    None => return self.not_a_reference("WEAKEN of a non-reference", at),
                },
                tag::REFN => Stack::run(self, |de| de.parse_item(visitor, want, true)),
                tag::REFP | tag::ALIAS => {
                    let what = if t == tag::REFP { "REFP" } else { "ALIAS" };
                    let off = self.cur.varint()?;
                    let p = self.tracked_target(off, at, what)?;
                    if self.on_path(p) {
                        // A strong cycle: no tree holds it.
                        let m = format!("{what} back into the value being read (a strong cycle)");
                        return Err(self.cur.error_at(ErrorKind::Invalid(m), at));
                    }
                    let back = self.cur.pos();
                    self.far = self.far.max(back);
                    self.cur.set_pos(p);
                    // Read as the tracked item it is: a container takes
                    // its level again, a scalar none.
                    let v = Stack::run(self, |de| de.parse_item(visitor, want, false));
                    self.cur.set_pos(back);
                    v
                }
                tag::COPY => {
                    let off = self.cur.varint()?;
                    let p = self.cur.target(off, at, "COPY")?;
                    let (r, utf8) = self.string_at(p, at, "as the target of a COPY", true)?;
                    self.string(visitor, r, utf8, want)
                }
                tag::OBJECT | tag::OBJECTV | tag::OBJECT_FREEZE | tag::OBJECTV_FREEZE => {
                    self.refuse_objects(at)?;
                    let class = if matches!(t, tag::OBJECT | tag::OBJECT_FREEZE) {
                        self.class_name()?.0
                    } else {
                        self.class_of_objectv(at)?
                    };
                    if object {
                        if !self.reference_follows(self.cur.pos(), true) {
                            return self.not_a_reference("an object must be a reference", at);
                        }
                    } else {
                        self.frozen_values()?;
                    }
                    self.note_object(class);
                    // The object reads as its referent (the values FREEZE
                    // returned, for a frozen one).
                    continue;
                }
                tag::POS_0..=tag::POS_15 if want == Want::Bool && t <= 1 => {
                    visitor.visit_bool(t == 1)
                }
                tag::POS_0..=tag::DOUBLE if self.opts.perl && perl::from_numbers(want) => {
                    let n = self.number(t)?;
                    perl::number(visitor, n, want)
                }
                tag::POS_0..=tag::POS_15 => visitor.visit_u64(u64::from(t)),
                tag::NEG_16..=tag::NEG_1 => visitor.visit_i64(i64::from(t) - 32),
                tag::VARINT => visitor.visit_u64(self.cur.varint()?),
                tag::ZIGZAG => visitor.visit_i64(protocol::zigzag_decode(self.cur.varint()?)),
                tag::FLOAT => {
                    let r = self.cur.take(4)?;
                    let f = f32::from_le_bytes(self.cur.bytes()[r].try_into().expect("4 bytes"));
                    float(visitor, f64::from(f), want, Some(f))
                }
                tag::DOUBLE => {
                    let r = self.cur.take(8)?;
                    let d = f64::from_le_bytes(self.cur.bytes()[r].try_into().expect("8 bytes"));
                    float(visitor, d, want, None)
                }
                tag::LONG_DOUBLE | tag::FLOAT_128 => {
                    // No Rust type holds them: their bytes, as `Value`
                    // serializes them.
                    let r = self.cur.take(16)?;
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
                    let n = self
                        .cur
                        .count(self.opts.max_num_array_entries, "array", 1)?;
                    self.prepay_container(n, false, at)?;
                    Stack::run(self, |de| de.seq(visitor, n))
                }
                tag::HASH => {
                    let n = self.cur.count(self.opts.max_num_hash_entries, "hash", 2)?;
                    self.prepay_container(n, true, at)?;
                    Stack::run(self, |de| visitor.visit_map(Entries { de, left: n }))
                }
                tag::ARRAYREF_0..=tag::ARRAYREF_15 => {
                    let n = self.short_count(t, at, self.opts.max_num_array_entries, "array")?;
                    self.nested::<V>(|de| de.seq(visitor, n))
                }
                tag::HASHREF_0..=tag::HASHREF_15 => {
                    let n = self.short_count(t, at, self.opts.max_num_hash_entries, "hash")?;
                    self.nested::<V>(|de| visitor.visit_map(Entries { de, left: n }))
                }
                tag::REGEXP => {
                    // A regexp reads as its pattern; the flags are skipped.
                    let (pattern, utf8) = self.string_item("as a regexp pattern")?;
                    self.string_item("as regexp flags")?;
                    self.string(visitor, pattern, utf8, want)
                }
                _ => {
                    return Err(self
                        .cur
                        .error_at(ErrorKind::UnexpectedTag(t, "as a value"), at))
                }
            };
            return v.map_err(|e| self.cur.place(e, at));
        }
    }

    /// The number whose tag `t` (`POS_0` to `DOUBLE`) was just read.
    #[cold]
    fn number(&mut self, t: u8) -> Result<Number> {
        Ok(match t {
            tag::POS_0..=tag::POS_15 => Number::U(u64::from(t)),
            tag::NEG_16..=tag::NEG_1 => Number::I(i64::from(t) - 32),
            tag::VARINT => Number::U(self.cur.varint()?),
            tag::ZIGZAG => match protocol::zigzag_decode(self.cur.varint()?) {
                i if i < 0 => Number::I(i),
                i => Number::U(i as u64),
            },
            tag::FLOAT => {
                let r = self.cur.take(4)?;
                let f = f32::from_le_bytes(self.cur.bytes()[r].try_into().expect("4 bytes"));
                Number::F(f64::from(f))
            }
            _ => {
                let r = self.cur.take(8)?;
                Number::F(f64::from_le_bytes(
                    self.cur.bytes()[r].try_into().expect("8 bytes"),
                ))
            }
        })
    }

    /// Pays for the `n` elements (entries if `hash`) of the container at
    /// `at`: to the tag budget, and to `max_memory` what the value decoder
    /// would hold for them, as the target type is built from them.
    #[inline]
    fn prepay_container(&mut self, n: usize, hash: bool, at: usize) -> Result<()> {
        self.prepay(n, at)?;
        let each = if hash { memory::ENTRY } else { memory::ELEMENT };
        let bytes = n.saturating_mul(each).saturating_add(memory::NODE);
        let what = if hash { "a hash" } else { "an array" };
        self.cur.charge(bytes, what, at)
    }

    /// Charges `n` tags to the budget: a tag read here, or a container's
    /// `n` elements or values (which `parse` then reads free).
    #[inline]
    fn prepay(&mut self, n: usize, at: usize) -> Result<()> {
        match self.budget.checked_sub(n) {
            Some(left) => {
                self.budget = left;
                Ok(())
            }
            None => self.grow_budget(n, at),
        }
    }

    /// Charges `n` tags the budget left cannot pay: an open body's budget
    /// grows with the bytes read (the furthest position read, where a
    /// back-reference left the walk, or the current one).
    #[cold]
    #[inline(never)]
    fn grow_budget(&mut self, n: usize, at: usize) -> Result<()> {
        let due = tag_budget(self.far.max(self.cur.pos()));
        let more = due.saturating_sub(self.granted);
        self.granted = due.max(self.granted);
        match (self.budget + more).checked_sub(n) {
            Some(left) => {
                self.budget = left;
                Ok(())
            }
            None => {
                self.budget += more;
                Err(self.cur.error_at(too_expanded(), at))
            }
        }
    }
}

#[cold]
fn too_expanded() -> ErrorKind {
    ErrorKind::LimitExceeded("document expands too much".into())
}
