//! The scanner's walk over a raw body: each tag read as far as its own
//! bytes go, the frames it opens, and the depth and limits the decoder
//! would check there.

use super::*;

impl Scanner {
    /// Reads tags from `pos` until one needs more than its tag byte.
    pub(super) fn tags(
        &mut self,
        doc: &[u8],
        mut tracked: bool,
        o: &DecoderOptions,
    ) -> Result<(), Scan> {
        while let Some(&b) = doc.get(self.pos) {
            let at = self.pos;
            self.pos += 1;
            if b & !TRACK_FLAG == tag::PAD {
                // A tracked PAD tracks the item after it.
                tracked |= b & TRACK_FLAG != 0;
                continue;
            }
            let Some(top) = self.stack.last_mut() else {
                return Err(Scan::End(at));
            };
            let ctx = top.ctx();
            let parent = top.kind;
            top.slots -= 1;
            self.owed -= 1;
            self.item(ctx, parent, b, at, o)?;
            // What the item adds to the document's known size is checked
            // at its tag, however the input was cut.
            self.check_size(at, o)?;
            if !matches!(self.step, Step::Tag { .. }) {
                return Ok(());
            }
            tracked = false;
        }
        self.step = Step::Tag { tracked };
        Err(Scan::More)
    }

    /// The item whose tag byte `b` was read at `at`, in context `ctx` of a
    /// frame of kind `parent`.
    fn item(
        &mut self,
        ctx: Ctx,
        parent: Kind,
        b: u8,
        at: usize,
        o: &DecoderOptions,
    ) -> Result<(), Scan> {
        let t = b & !TRACK_FLAG;
        let unexpected = |s: &Self, t: u8, what: &'static str| {
            Err(s.invalid(ErrorKind::UnexpectedTag(t, what), at))
        };
        match ctx {
            Ctx::Node => {
                let immortal =
                    at == self.referent_at && protocol::immortal_referent(b, o.use_undef);
                self.value(t, parent, !immortal, o)
            }
            Ctx::Value => self.value(t, parent, false, o),
            Ctx::Key | Ctx::Class | Ctx::Pattern | Ctx::Flags => {
                let (copy_ok, what, shown) = match ctx {
                    Ctx::Key => (true, "as a hash key", t),
                    Ctx::Class => (true, "as a class name", t),
                    Ctx::Pattern => (false, "as a regexp pattern", b),
                    _ => (false, "as regexp flags", b),
                };
                if ctx == Ctx::Key && t != tag::COPY {
                    if let Some(keys) = &mut self.keys {
                        keys.push(at);
                    }
                }
                match t {
                    tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => self.skip(u64::from(t & 31), o),
                    tag::BINARY | tag::STR_UTF8 => self.varint(Then::Str),
                    tag::COPY if copy_ok => self.varint(Then::Item),
                    _ => unexpected(self, shown, what),
                }
            }
            Ctx::FrozenRefn if t == tag::REFN => self.complete(o),
            Ctx::FrozenRefn if t == tag::ARRAY => {
                // An object written without a reference (a slot that is the
                // object, see `Decoder`): its ARRAY comes at once.
                let top = self.stack.last_mut().expect("the OBJECT_FREEZE frame");
                top.slots -= 1;
                self.owed -= 1;
                self.enter(1, o)?;
                self.varint(Then::Array)
            }
            Ctx::FrozenRefn => unexpected(self, b, "after OBJECT_FREEZE (expected REFN)"),
            Ctx::FrozenArray if t == tag::ARRAY => {
                self.enter(1, o)?;
                self.varint(Then::Array)
            }
            Ctx::FrozenArray => unexpected(self, b, "in an OBJECT_FREEZE (expected ARRAY)"),
        }
    }

    /// A value whose (untracked) tag `t` was read at `at` in a frame of
    /// kind `parent`; `referent`: it is a `REFN`'s referent that takes a
    /// level. Levels count as the decoder counts them
    /// ([`protocol::immortal_referent`]).
    fn value(
        &mut self,
        t: u8,
        parent: Kind,
        referent: bool,
        o: &DecoderOptions,
    ) -> Result<(), Scan> {
        let at = self.pos - 1;
        let base = u8::from(referent);
        let chain = match parent {
            Kind::Object { .. } => protocol::nested_prefix_level(tag::OBJECT, t),
            _ => false,
        };
        let referent_slot = matches!(parent, Kind::Object { referent: true, .. });
        match t {
            tag::POS_0..=tag::NEG_1
            | tag::UNDEF
            | tag::CANONICAL_UNDEF
            | tag::YES
            | tag::NO
            | tag::TRUE
            | tag::FALSE => {
                self.enter(base, o)?;
                self.complete(o)
            }
            tag::VARINT | tag::ZIGZAG | tag::REFP | tag::ALIAS | tag::COPY => {
                self.enter(base, o)?;
                self.varint(Then::Item)
            }
            tag::FLOAT | tag::DOUBLE | tag::LONG_DOUBLE | tag::FLOAT_128 => {
                self.enter(base, o)?;
                let n = match t {
                    tag::FLOAT => 4,
                    tag::DOUBLE => 8,
                    _ => 16,
                };
                self.skip(n, o)
            }
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => {
                self.enter(base, o)?;
                self.skip(u64::from(t & 31), o)
            }
            tag::BINARY | tag::STR_UTF8 => {
                self.enter(base, o)?;
                self.varint(Then::Str)
            }
            tag::REFN => {
                self.enter(base, o)?;
                self.push(Kind::Ref, 1);
                self.referent_at = self.pos;
                Ok(())
            }
            // a level of its own, or its referent's
            tag::ARRAY | tag::HASH => {
                self.enter(u8::from(!referent_slot), o)?;
                self.varint(if t == tag::ARRAY {
                    Then::Array
                } else {
                    Then::Hash
                })
            }
            tag::REGEXP => {
                self.enter(base, o)?;
                self.push(Kind::Regexp, 2);
                Ok(())
            }
            tag::ARRAYREF_0..=tag::HASHREF_15 => {
                self.enter(base + 1, o)?;
                let (limit, what, each) = if t <= tag::ARRAYREF_15 {
                    (o.max_num_array_entries, "array", memory::ELEMENT)
                } else {
                    (o.max_num_hash_entries, "hash", memory::ENTRY)
                };
                if let Some(kind) = over_limit(u64::from(t & 15), limit, what) {
                    return Err(self.invalid(kind, at));
                }
                let n = u128::from(t & 15);
                self.charge(n * each as u128 + memory::NODE as u128, at, o)?;
                match (n, t <= tag::ARRAYREF_15) {
                    (0, _) => self.complete(o),
                    (_, true) => {
                        self.push(Kind::Items, n);
                        Ok(())
                    }
                    (_, false) => {
                        self.push(Kind::Entries, 2 * n);
                        Ok(())
                    }
                }
            }
            tag::OBJECT | tag::OBJECTV | tag::OBJECT_FREEZE | tag::OBJECTV_FREEZE => {
                self.enter(base, o)?;
                if o.refuse_objects {
                    return Err(Scan::Invalid {
                        len: self.pos,
                        fallback: None,
                    });
                }
                let (kind, slots) = match t {
                    tag::OBJECT | tag::OBJECTV => {
                        let referent = referent || referent_slot;
                        (
                            Kind::Object {
                                referent,
                                chain,
                                at,
                            },
                            2,
                        )
                    }
                    _ => (Kind::Freeze, 3),
                };
                self.push(kind, slots);
                if t == tag::OBJECTV || t == tag::OBJECTV_FREEZE {
                    // The class is an offset: the varint is the class item.
                    if let Some(top) = self.stack.last_mut() {
                        top.slots -= 1;
                        self.owed -= 1;
                    }
                    return self.varint(Then::Item);
                }
                Ok(())
            }
            tag::WEAKEN => {
                // A weak reference is not a reference: neither weakened
                // nor blessed.
                let refused = match parent {
                    Kind::Weaken { at } => Some(("WEAKEN of a non-reference", at)),
                    Kind::Object { at, .. } => Some(("an object must be a reference", at)),
                    _ => None,
                };
                if let Some((m, at)) = refused {
                    return Err(self.invalid(ErrorKind::Invalid(m.into()), at));
                }
                self.enter(base, o)?;
                self.push(Kind::Weaken { at }, 1);
                Ok(())
            }
            _ => Err(self.invalid(ErrorKind::UnexpectedTag(t, "as a value"), at)),
        }
    }
}
