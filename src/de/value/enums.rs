//! Enums read from the graph: a one-key hash names a variant with its
//! content, anything else a unit variant.

use super::key::MapKey;
use super::{immortal, tracked, At, Item, Link, Walk};
use crate::de::Want;
use crate::error::{Error, ErrorKind, Result};
use crate::stack::Stack;
use crate::value::{Body, Key, Value};
use serde::de::{self, DeserializeSeed, Unexpected, Visitor};

/// Reads an enum from `value` at `at`, as the byte deserializer finds one:
/// the one-key hash of a variant with content, directly in the slot or
/// through the references (and scalar cells) written there, unblessed;
/// anything else (a string, a back-reference, an object) is the slot
/// `whole`, read as a unit variant's name.
pub(super) fn enum_from<'de, V: Visitor<'de>>(
    walk: &mut Walk,
    value: &Value,
    at: At,
    whole: (&Value, At),
    visitor: V,
) -> Result<V::Value> {
    let unit = |walk: &mut Walk, visitor: V| {
        let (value, at) = whole;
        visitor.visit_enum(Item { walk, value, at })
    };
    let upgraded;
    let (node, link) = match value {
        Value::Ref(r) => (r, Link::Strong),
        Value::Alias(r) => (r, Link::Slot),
        Value::Weak(w) => match w.upgrade() {
            Some(r) => {
                upgraded = r;
                (&upgraded, Link::Weak)
            }
            None => return unit(walk, visitor),
        },
        _ => return unit(walk, visitor),
    };
    // A node met before is a back-reference here (no cycle is followed).
    if tracked(node) && !walk.meet(node, at).0 {
        return unit(walk, visitor);
    }
    let body = node.try_body()?;
    // A blessed cell in a slot is written as its content; any other object
    // with its class first.
    let in_slot = link == Link::Slot && matches!(&*body, Body::Scalar(_));
    if node.class().is_some() && !in_slot {
        return unit(walk, visitor);
    }
    match &*body {
        Body::Hash(h) => match h.entries() {
            [(key, value)] => {
                let at = At {
                    node: node.addr(),
                    index: 0,
                };
                visitor.visit_enum(Variant {
                    walk,
                    key,
                    value,
                    at,
                })
            }
            other => Err(Error::new(ErrorKind::Invalid(format!(
                "an enum variant with content is a hash of one key, not {}",
                other.len()
            )))),
        },
        Body::Scalar(v) if !immortal(v) => {
            let at = At {
                node: node.addr(),
                index: 0,
            };
            Stack::run(walk, |walk| enum_from(walk, v, at, whole, visitor))
        }
        _ => unit(walk, visitor),
    }
}

impl<'de> de::EnumAccess<'de> for Item<'_, '_> {
    type Error = Error;
    type Variant = Self;
    /// The slot names a unit variant.
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let walk = &mut *self.walk;
        let v = seed.deserialize(Item {
            walk,
            value: self.value,
            at: self.at,
        })?;
        Ok((v, self))
    }
}

/// A variant named by a slot that holds no content for it.
fn no_content(what: &'static str) -> Error {
    de::Error::invalid_type(Unexpected::UnitVariant, &what)
}

impl<'de> de::VariantAccess<'de> for Item<'_, '_> {
    type Error = Error;
    fn unit_variant(self) -> Result<()> {
        Ok(())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value> {
        Err(no_content("a newtype variant (a hash of one key)"))
    }
    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value> {
        Err(no_content("a tuple variant (a hash of one key)"))
    }
    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], _: V) -> Result<V::Value> {
        Err(no_content("a struct variant (a hash of one key)"))
    }
}

/// The one-key hash of a variant with content: its key names the variant,
/// its value holds the content.
struct Variant<'w, 'v> {
    walk: &'w mut Walk,
    key: &'v Key,
    value: &'v Value,
    at: At,
}

impl<'de> de::EnumAccess<'de> for Variant<'_, '_> {
    type Error = Error;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let walk = &*self.walk;
        let v = seed.deserialize(MapKey {
            walk,
            key: self.key,
        })?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'_, '_> {
    type Error = Error;
    /// The byte deserializer leaves the value unread, which always fails
    /// further on: refused here.
    fn unit_variant(self) -> Result<()> {
        Err(Error::new(ErrorKind::Invalid(
            "a unit variant given as a hash of one key (with content)".into(),
        )))
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self.content())
    }
    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        self.content().read(visitor, Want::Any)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.content().read(visitor, Want::Any)
    }
}

impl<'w, 'v> Variant<'w, 'v> {
    fn content(self) -> Item<'w, 'v> {
        Item {
            walk: self.walk,
            value: self.value,
            at: self.at,
        }
    }
}
