//! Perl objects for the private protocol of [`crate::blessed`]: a
//! [`Blessed`](crate::Blessed) or a [`Value`](crate::Value) asks by a
//! newtype name, and at a blessed referent (an `OBJECT`, `OBJECTV`, their
//! `_FREEZE` forms, or a `REFP` to the referent of one read before) is
//! visited an enum whose variant is the class name and whose newtype
//! content is the object read as its referent, as any other target reads
//! it.

use super::*;
use crate::blessed::protocol::{BLESSED, VALUE};
use serde::de::value::{BytesDeserializer, StrDeserializer};

/// Whether `name` is a newtype name of the private protocol.
#[inline]
pub(super) fn private(name: &str) -> bool {
    name == BLESSED || name == VALUE
}

impl<'de> Body<'de> {
    /// Reads the newtype `name` of the private protocol: an object as an
    /// enum; anything else as a `Value` reads it, or, for a `Blessed`, an
    /// error.
    pub(super) fn object<V: Visitor<'de>>(
        &mut self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        let at = self.cur.pos();
        let unwrapped = match self.seen.as_mut() {
            Some(s) if s.unwrapped == Some(at) => s.unwrapped.take().is_some(),
            _ => false,
        };
        if !unwrapped {
            if let Some(class) = self.class_here(at)? {
                let object = Object {
                    de: &mut *self,
                    class,
                    at,
                };
                return visitor
                    .visit_enum(object)
                    .map_err(|e| self.cur.place(e, at));
            }
        }
        if name == VALUE {
            return self.parse(visitor, Want::Any);
        }
        let what = match unwrapped {
            true => "a Blessed value directly inside a Blessed value is not read (bless a reference to it)",
            false => "expected a Perl object, found a value that is not blessed",
        };
        Err(self.cur.error_at(ErrorKind::Invalid(what.into()), at))
    }

    /// The class of the object at `at`, if one is there: the bytes of its
    /// class name. The position is left as it was.
    fn class_here(&mut self, at: usize) -> Result<Option<Vec<u8>>> {
        let Some(Item { t, p, .. }) = self.item_at(at) else {
            return Ok(None);
        };
        let class_at = match t {
            tag::OBJECT | tag::OBJECT_FREEZE => None,
            tag::OBJECTV | tag::OBJECTV_FREEZE | tag::REFP => {
                self.cur.set_pos(p + 1);
                let r = match t {
                    tag::REFP => self.object_by_refp(p),
                    _ => self.class_of_objectv(p).map(Some),
                };
                self.cur.set_pos(at);
                match r? {
                    Some(c) => Some(c),
                    None => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        self.cur.set_pos(class_at.unwrap_or(p + 1));
        let r = self.class_name();
        self.cur.set_pos(at);
        let (_, bytes) = r?;
        Ok(Some(self.cur.bytes()[bytes].to_vec()))
    }

    /// Whether the object being read as its referent here (see
    /// [`Object`]) is a blessed reference to undef, which an `Option`
    /// reads as `None`.
    pub(super) fn undef_object(&mut self) -> bool {
        let at = self.cur.pos();
        if self.seen.as_ref().is_none_or(|s| s.unwrapped != Some(at)) {
            return false;
        }
        let Some(Item { t, p, .. }) = self.item_at(at) else {
            return false;
        };
        self.cur.set_pos(p + 1);
        let class = match t {
            tag::OBJECT => self.class_name().map(drop),
            tag::OBJECTV => self.class_of_objectv(p).map(drop),
            _ => Err(not_newtype()),
        };
        let next = self.cur.pos();
        self.cur.set_pos(at);
        let refn = match class.ok().and(self.item_at(next)) {
            Some(Item {
                t: tag::REFN, p, ..
            }) => self.item_at(p + 1),
            _ => None,
        };
        matches!(
            refn,
            Some(Item {
                t: tag::UNDEF | tag::CANONICAL_UNDEF,
                ..
            })
        )
    }

    /// The class position of the object whose referent the `REFP` at `p`
    /// names, if it names one.
    fn object_by_refp(&mut self, p: usize) -> Result<Option<usize>> {
        let off = self.cur.varint()?;
        let target = self.tracked_target(off, p, "REFP")?;
        Ok(self
            .seen
            .as_ref()
            .and_then(|s| s.objects.get(&target).copied()))
    }

    /// The position of the class name the `OBJECTV` at `at` names, read
    /// from its offset (a class name read before, or an error).
    pub(super) fn class_of_objectv(&mut self, at: usize) -> Result<usize> {
        let off = self.cur.varint()?;
        let p = self.cur.target(off, at, "OBJECTV")?;
        if !self.seen.as_ref().is_some_and(|s| s.classes.contains(&p)) {
            let kind = ErrorKind::BadOffset(off, "OBJECTV class name");
            return Err(self.cur.error_at(kind, at));
        }
        Ok(p)
    }

    /// After an object's class, at its reference: records the class of a
    /// tracked referent, for a `REFP` to it read by a `Blessed` or a
    /// `Value`.
    pub(super) fn note_object(&mut self, class: usize) {
        let Some(item) = self.item_at(self.cur.pos()) else {
            return;
        };
        let referent = match item.t {
            tag::REFN => self.item_at(item.p + 1).filter(|r| r.tracked),
            // A referent written before (a scalar blessed after it was
            // written): what a later plain `REFP` to it names too.
            tag::REFP => {
                let off = self
                    .cur
                    .bytes()
                    .get(item.p + 1..)
                    .and_then(protocol::read_varint);
                let target = off.and_then(|(off, _)| self.cur.position_of(off));
                target.map(|start| Item { start, ..item })
            }
            _ => Some(item).filter(|r| r.tracked),
        };
        if let (Some(Item { start, .. }), Some(seen)) = (referent, self.seen.as_mut()) {
            seen.objects.insert(start, class);
        }
    }

    /// The item at `p`, after `PAD`s; `None` at the end of the input.
    fn item_at(&self, mut p: usize) -> Option<Item> {
        let mut tracked_pad = None;
        loop {
            let b = *self.cur.bytes().get(p)?;
            if b & !TRACK_FLAG != tag::PAD {
                return Some(Item {
                    t: b & !TRACK_FLAG,
                    p,
                    start: tracked_pad.unwrap_or(p),
                    tracked: tracked_pad.is_some() || b & TRACK_FLAG != 0,
                });
            }
            if b & TRACK_FLAG != 0 {
                tracked_pad = Some(p);
            }
            p += 1;
        }
    }
}

/// An item found ahead: its tag (without the track flag) and where it is,
/// where it counts from as a tracked item (a tracked `PAD` before it, or
/// its tag), and whether it is tracked.
#[derive(Clone, Copy)]
struct Item {
    t: u8,
    p: usize,
    start: usize,
    tracked: bool,
}

/// An object as an enum: the class, then the object read as its referent.
struct Object<'a, 'de> {
    de: &'a mut Body<'de>,
    class: Vec<u8>,
    at: usize,
}

impl<'de> de::EnumAccess<'de> for Object<'_, 'de> {
    type Error = Error;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let v = match std::str::from_utf8(&self.class) {
            Ok(s) => seed.deserialize(StrDeserializer::<Error>::new(s)),
            Err(_) => seed.deserialize(BytesDeserializer::<Error>::new(&self.class)),
        }?;
        Ok((v, self))
    }
}

fn not_newtype() -> Error {
    Error::new(ErrorKind::Invalid(
        "a Perl object is read as a newtype of its referent".into(),
    ))
}

impl<'de> de::VariantAccess<'de> for Object<'_, 'de> {
    type Error = Error;
    fn unit_variant(self) -> Result<()> {
        Err(not_newtype())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        // The object is read where it is, as its referent: a `Value` or
        // `Blessed` asking here again is told it has its class.
        let at = self.at;
        self.de.seen.get_or_insert_with(Default::default).unwrapped = Some(at);
        let v = seed.deserialize(&mut *self.de);
        if let Some(s) = self.de.seen.as_mut() {
            s.unwrapped = s.unwrapped.filter(|&p| p != at);
        }
        v
    }
    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value> {
        Err(not_newtype())
    }
    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], _: V) -> Result<V::Value> {
        Err(not_newtype())
    }
}
