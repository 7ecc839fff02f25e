//! Perl objects for the private protocol of [`crate::blessed`], read from
//! the graph as the byte deserializer reads them (see `de/object.rs`): a
//! slot holding a blessed node is visited as an enum whose variant is the
//! class and whose newtype content is the slot read as its referent.

use super::{Item, Want};
use crate::blessed::protocol::VALUE;
use crate::error::{Error, ErrorKind, Result};
use crate::value::{Body, Key, Value};
use serde::de::value::{BytesDeserializer, StrDeserializer};
use serde::de::{self, DeserializeSeed, Visitor};

impl Item<'_, '_> {
    /// Reads the newtype `name` of the private protocol: an object as an
    /// enum; anything else as a `Value` reads it, or, for a `Blessed`, an
    /// error.
    pub(super) fn object<'de, V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        let here = self.value as *const Value as usize;
        let unwrapped = self.walk.unwrapped == Some(here);
        if unwrapped {
            self.walk.unwrapped = None;
        } else if let Some(class) = self.class() {
            return visitor.visit_enum(Object { item: self, class });
        }
        if name == VALUE {
            return self.read(visitor, Want::Any);
        }
        let what = match unwrapped {
            true => "a Blessed value directly inside a Blessed value is not read (bless a reference to it)",
            false => "expected a Perl object, found a value that is not blessed",
        };
        Err(Error::new(ErrorKind::Invalid(what.into())))
    }

    /// Whether the object being read as its referent here (see
    /// [`Referent`]) is a blessed reference to undef, which an `Option`
    /// reads as `None`.
    pub(super) fn undef_object(&self) -> bool {
        let here = self.value as *const Value as usize;
        if self.walk.unwrapped != Some(here) {
            return false;
        }
        let Value::Ref(r) = self.value else {
            return false;
        };
        matches!(
            r.try_body().as_deref(),
            Ok(Body::Scalar(Value::Undef | Value::CanonicalUndef))
        )
    }

    /// The class of the node the slot refers to, where the encoder writes
    /// an object: a reference, or an alias of a cell holding one where the
    /// cell is written (elsewhere the `ALIAS` reads as its target's value,
    /// unblessed). A weak reference reads as its referent, unblessed, as
    /// the byte path does not look through a `WEAKEN`.
    fn class(&self) -> Option<Key> {
        match self.value {
            Value::Ref(r) => r.class(),
            Value::Alias(cell) if self.walk.written_at(cell, self.at) => {
                match &*cell.try_body().ok()? {
                    Body::Scalar(Value::Ref(r)) => r.class(),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// An object as an enum: the class, then the slot read as its referent.
struct Object<'w, 'v> {
    item: Item<'w, 'v>,
    class: Key,
}

impl<'de, 'w, 'v> de::EnumAccess<'de> for Object<'w, 'v> {
    type Error = Error;
    type Variant = Referent<'w, 'v>;
    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self::Variant)> {
        let class = self.class.as_bytes();
        let v = match std::str::from_utf8(class) {
            Ok(s) => seed.deserialize(StrDeserializer::<Error>::new(s)),
            Err(_) => seed.deserialize(BytesDeserializer::<Error>::new(class)),
        }?;
        Ok((v, Referent(self.item)))
    }
}

fn not_newtype() -> Error {
    Error::new(ErrorKind::Invalid(
        "a Perl object is read as a newtype of its referent".into(),
    ))
}

/// The slot of an object, read as its referent.
struct Referent<'w, 'v>(Item<'w, 'v>);

impl<'de> de::VariantAccess<'de> for Referent<'_, '_> {
    type Error = Error;
    fn unit_variant(self) -> Result<()> {
        Err(not_newtype())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        // Read where it is, as its referent: a `Value` or `Blessed` asking
        // here again is told it has its class.
        let Item { walk, value, at } = self.0;
        let here = value as *const Value as usize;
        walk.unwrapped = Some(here);
        let v = seed.deserialize(Item {
            walk: &mut *walk,
            value,
            at,
        });
        if walk.unwrapped == Some(here) {
            walk.unwrapped = None;
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
