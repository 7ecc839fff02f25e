//! Hash keys read from the graph.

use super::Walk;
use crate::de::{text, Want};
use crate::error::{Error, ErrorKind, Result};
use crate::value::Key;
use serde::de::{self, IntoDeserializer, Unexpected, Visitor};

/// A hash key. Keys are strings in Sereal: integer, float, bool and char
/// key types parse them; other types read the string.
pub(super) struct MapKey<'w, 'v> {
    pub(super) walk: &'w Walk,
    pub(super) key: &'v Key,
}

impl MapKey<'_, '_> {
    /// Visits what `parse` makes of the key's text, or fails with the
    /// visitor's type error.
    fn parsed<'de, V: Visitor<'de>, T>(
        self,
        visitor: V,
        parse: impl FnOnce(&str) -> Option<T>,
        visit: impl FnOnce(V, T) -> Result<V::Value>,
    ) -> Result<V::Value> {
        let b = self.key.as_bytes();
        let text = text(b);
        if self.key.is_utf8() && text.is_none() {
            return Err(Error::new(ErrorKind::InvalidUtf8));
        }
        visit_parsed(text, b, visitor, parse, visit)
    }

    fn string<'de, V: Visitor<'de>>(self, visitor: V, want: Want) -> Result<V::Value> {
        let key = self.key;
        self.walk
            .string(visitor, key.as_bytes(), key.is_utf8(), want)
    }
}

/// The key's parsed text visited, or the visitor's type error: `text`
/// is the key's text when its bytes are UTF-8 (`bytes` either way).
pub(in crate::de) fn visit_parsed<'de, V: Visitor<'de>, T>(
    text: Option<&str>,
    bytes: &[u8],
    visitor: V,
    parse: impl FnOnce(&str) -> Option<T>,
    visit: impl FnOnce(V, T) -> Result<V::Value>,
) -> Result<V::Value> {
    match text.and_then(parse) {
        Some(v) => visit(visitor, v),
        None => Err(de::Error::invalid_type(
            text.map_or(Unexpected::Bytes(bytes), Unexpected::Str),
            &visitor,
        )),
    }
}

/// The rules both key deserializers (over bytes, over the graph) share:
/// integer, float, `bool` and `char` key types parse the key's text, an
/// `Option` is `Some` of the key, an enum's key names a unit variant.
/// The type has `parsed(visitor, parse, visit)`, which reads the key and
/// hands its text to [`visit_parsed`].
macro_rules! parsed_key_methods {
    () => {
        $crate::de::value::key::parsed_key_methods!(@numbers
            deserialize_i8 => visit_i8: i8, deserialize_i16 => visit_i16: i16,
            deserialize_i32 => visit_i32: i32, deserialize_i64 => visit_i64: i64,
            deserialize_i128 => visit_i128: i128, deserialize_u8 => visit_u8: u8,
            deserialize_u16 => visit_u16: u16, deserialize_u32 => visit_u32: u32,
            deserialize_u64 => visit_u64: u64, deserialize_u128 => visit_u128: u128,
            deserialize_f32 => visit_f32: f32, deserialize_f64 => visit_f64: f64);

        fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let truth = |s: &str| match s {
                "true" | "1" => Some(true),
                "false" | "0" | "" => Some(false),
                _ => None,
            };
            self.parsed(visitor, truth, |v, b| v.visit_bool(b))
        }

        fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let one = |s: &str| {
                let mut chars = s.chars();
                chars.next().filter(|_| chars.next().is_none())
            };
            self.parsed(visitor, one, |v, c| v.visit_char(c))
        }

        fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            visitor.visit_some(self)
        }

        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            visitor: V,
        ) -> Result<V::Value> {
            visitor.visit_newtype_struct(self)
        }

        /// A key names a unit variant.
        fn deserialize_enum<V: Visitor<'de>>(
            self,
            _: &'static str,
            _: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value> {
            self.parsed(
                visitor,
                |s| Some(s.to_owned()),
                |v, s| v.visit_enum(IntoDeserializer::<Error>::into_deserializer(s)),
            )
        }

        serde::forward_to_deserialize_any! {
            bytes byte_buf unit unit_struct seq tuple tuple_struct map struct ignored_any
        }
    };
    (@numbers $($m:ident => $visit:ident: $t:ty),*) => {$(
        fn $m<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            self.parsed(visitor, |s| s.parse::<$t>().ok(), |v, n| v.$visit(n))
        }
    )*};
}
pub(in crate::de) use parsed_key_methods;

impl<'de> de::Deserializer<'de> for MapKey<'_, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.string(visitor, Want::Any)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.string(visitor, Want::Text)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.string(visitor, Want::Text)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.string(visitor, Want::Text)
    }

    parsed_key_methods!();
}
