//! The serde traits: `Deserializer` for the document, sequence and map
//! access, map keys and enum variants.

use super::*;

impl de::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error::new(ErrorKind::Message(msg.to_string()))
    }
}

// `deserialize_*` methods that read by `parse` what `want` says, each with
// the attribute given, if any.
macro_rules! forward {
    (#[$attr:meta] $want:expr; $($m:ident),*) => {$( forward!(@one [#[$attr]] $want; $m); )*};
    ($want:expr; $($m:ident),*) => {$( forward!(@one [] $want; $m); )*};
    (@one [$($attr:tt)*] $want:expr; $m:ident) => {
        $($attr)*
        fn $m<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            self.parse(visitor, $want)
        }
    };
}

impl<'de> de::Deserializer<'de> for &mut Body<'de> {
    type Error = Error;

    /// As [`Serializer`](crate::Serializer): the compact forms, so what this
    /// crate wrote reads back.
    fn is_human_readable(&self) -> bool {
        false
    }

    #[inline]
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let at = self.cur.pos();
        if let Some(d) = self.double_at(at) {
            return visitor.visit_f64(d).map_err(|e| self.cur.place(e, at));
        }
        // Anything else the general way, out of line.
        self.parse_item(visitor, Want::Float, false)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_f64(visitor)
    }

    forward!(Want::Any; deserialize_any, deserialize_bytes, deserialize_byte_buf, deserialize_unit,
        deserialize_ignored_any);
    forward!(Want::Text; deserialize_char, deserialize_identifier);
    forward!(Want::Str; deserialize_str, deserialize_string);
    // Small enough to inline into a sequence's loop (see `parse`).
    forward!(#[inline] Want::Int; deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64, deserialize_i128,
        deserialize_u8, deserialize_u16, deserialize_u32, deserialize_u64, deserialize_u128);
    forward!(Want::Bool; deserialize_bool);

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.container(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.container(visitor)
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        // A plain UNDEF (no PAD, no track flag) is read in place.
        if let Some(&(tag::UNDEF | tag::CANONICAL_UNDEF)) = self.cur.bytes().get(self.cur.pos()) {
            self.cur.set_pos(self.cur.pos() + 1);
            return visitor.visit_none();
        }
        self.option(visitor)
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
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if object::private(name) {
            return self.object(name, visitor);
        }
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
        self.container(visitor)
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

pub(super) struct Elements<'a, 'de> {
    pub(super) de: &'a mut Body<'de>,
    pub(super) left: usize,
}

impl<'de> de::SeqAccess<'de> for Elements<'_, 'de> {
    type Error = Error;
    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let at = self.de.cur.pos();
        seed.deserialize(&mut *self.de)
            .map(Some)
            .map_err(|e| self.de.cur.place(e, at))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

pub(super) struct Entries<'a, 'de> {
    pub(super) de: &'a mut Body<'de>,
    pub(super) left: usize,
}

impl<'de> de::MapAccess<'de> for Entries<'_, 'de> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let at = self.de.cur.pos();
        seed.deserialize(MapKey { de: &mut *self.de })
            .map(Some)
            .map_err(|e| self.de.cur.place(e, at))
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let at = self.de.cur.pos();
        seed.deserialize(&mut *self.de)
            .map_err(|e| self.de.cur.place(e, at))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// A hash key. Keys are strings in Sereal: integer, float, bool and char
/// key types parse them (the serializer writes such keys as their text);
/// other types read the string.
pub(super) struct MapKey<'a, 'de> {
    pub(super) de: &'a mut Body<'de>,
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
        if key.utf8 && !key.text {
            // Flagged UTF-8 and not: no text to parse.
            return Err(self
                .de
                .cur
                .error_at(ErrorKind::InvalidUtf8, key.bytes.start));
        }
        let bytes = &self.de.cur.bytes()[key.bytes];
        // SAFETY: `key.text` says the bytes are UTF-8 (see `visit_key`).
        let text = key
            .text
            .then(|| unsafe { std::str::from_utf8_unchecked(bytes) });
        super::value::key::visit_parsed(text, bytes, visitor, parse, visit)
    }
}

impl<'de> de::Deserializer<'de> for MapKey<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let key = self.de.key()?;
        self.de.visit_key(visitor, key, Want::Any)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let key = self.de.key()?;
        self.de.visit_key(visitor, key, Want::Text)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    super::value::key::parsed_key_methods!();
}

/// An enum: a string names a unit variant; a one-key hash names a variant
/// and holds its content.
pub(super) struct Variant<'a, 'de> {
    pub(super) de: &'a mut Body<'de>,
}

impl<'de> de::EnumAccess<'de> for Variant<'_, 'de> {
    type Error = Error;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        // Past references to the hash or string.
        while let Some(&b) = self.de.cur.bytes().get(self.de.cur.pos()) {
            match b & !TRACK_FLAG {
                tag::PAD | tag::REFN | tag::WEAKEN => self.de.cur.set_pos(self.de.cur.pos() + 1),
                tag::HASHREF_0..=tag::HASHREF_15 | tag::HASH => {
                    let at = self.de.cur.pos();
                    self.de.cur.set_pos(self.de.cur.pos() + 1);
                    let n = if b & !TRACK_FLAG == tag::HASH {
                        self.de.cur.count(0, "hash", 2)?
                    } else {
                        (b & 15) as usize
                    };
                    if n != 1 {
                        return Err(self.de.cur.error_at(
                            ErrorKind::Invalid(format!(
                                "an enum variant with content is a hash of one key, not {n}"
                            )),
                            at,
                        ));
                    }
                    let key_at = self.de.cur.pos();
                    let v = seed
                        .deserialize(MapKey { de: &mut *self.de })
                        .map_err(|e| self.de.cur.place(e, key_at))?;
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
