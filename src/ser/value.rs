//! Serde serialization straight to a [`Value`] graph: the graph that
//! decoding [`to_vec`](super::to_vec)'s bytes gives, built without them.
//!
//! Each shape becomes what the byte serializer writes for it, as the
//! decoder reads that back: `bool` a [`Value::Bool`] (`YES`/`NO`),
//! integers [`Value::Int`] (or [`Value::UInt`] past `i64::MAX`), `i128`
//! and `u128` the same when they fit in 64 bits (an error otherwise), `f32`
//! a [`Value::Float`], `f64` a `Float` when single precision holds it
//! exactly (as the serializer writes `FLOAT` then) and a [`Value::Double`]
//! otherwise, `str`, `char` and unit variants as [`Value::from`] makes
//! them (byte strings when ASCII, as Perl has them, UTF-8 strings
//! otherwise), bytes byte strings, `None`, `()` and unit structs undef, sequences and tuples
//! arrays, maps and structs hashes (keys as the serializer writes them:
//! UTF-8 flagged only when not ASCII), and a variant with content a hash of
//! one key. A map that gives one key twice is the decoder's
//! [`ErrorKind::DuplicateKey`], reported once the value is built, as the
//! decode of the bytes would report it after the serializer is done.

use super::key::KeySerializer;
use super::SerializerOptions;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol;
use crate::value::{Array, Hash, Key, Ref, Value};
use serde::ser::{self, Serialize};

/// Serializes `value` into a [`Value`] graph: exactly what decoding
/// [`to_vec`](super::to_vec)'s output gives (the same values, variants and
/// UTF-8 flags), built directly, without the bytes in between. It fails
/// where `to_vec` fails (a map key the serializer refuses, an `i128`
/// wider than 64 bits, nesting past 10,000 levels) and where decoding would
/// (a map that gives one key twice).
///
/// ```
/// use sereal::Value;
/// #[derive(serde::Serialize)]
/// enum Shape { Dot, Circle { r: f64 } }
/// let v = sereal::to_value(&(7u8, "é", vec![Shape::Dot, Shape::Circle { r: 0.1 }])).unwrap();
/// let circle = Value::hash([("Circle", Value::hash([("r", Value::Double(0.1))]))]);
/// let dot = Value::from("Dot"); // ASCII: no UTF-8 flag, as Perl writes it
/// assert_eq!(v, Value::array([Value::Int(7), Value::utf8("é"), Value::array([dot, circle])]));
/// // what the bytes would have given
/// let bytes = sereal::to_vec(&(7u8, "é", vec![Shape::Dot, Shape::Circle { r: 0.1 }])).unwrap();
/// assert_eq!(v, sereal::decode(&bytes).unwrap());
/// ```
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value> {
    let mut build = Build {
        max_depth: protocol::depth_limit(SerializerOptions::default().max_recursion_depth),
        limit: SerializerOptions::default().max_recursion_depth,
        duplicate: None,
    };
    let v = value.serialize(Builder {
        build: &mut build,
        depth: 0,
    })?;
    match build.duplicate {
        Some(k) => Err(Error::new(ErrorKind::DuplicateKey(k.as_bytes().to_vec()))),
        None => Ok(v),
    }
}

/// What the whole build shares: the depth limit and the first key a map
/// gave twice.
struct Build {
    max_depth: usize,
    limit: usize,
    duplicate: Option<Key>,
}

/// Builds the value of one slot, `depth` containers deep.
pub(super) struct Builder<'b> {
    build: &'b mut Build,
    depth: usize,
}

impl<'b> Builder<'b> {
    /// One container deeper, as the serializer's `enter` counts.
    fn deeper(self) -> Result<Builder<'b>> {
        let depth = self.depth + 1;
        if depth >= self.build.max_depth {
            return Err(Error::new(ErrorKind::DepthExceeded(self.build.limit)));
        }
        Ok(Builder {
            build: self.build,
            depth,
        })
    }

    /// A builder for a slot inside the current container.
    fn slot(&mut self) -> Builder<'_> {
        Builder {
            build: &mut *self.build,
            depth: self.depth,
        }
    }
}

/// A variant's content, wrapped in the one-key hash that names it.
fn variant(name: &'static str, content: Value) -> Value {
    let mut h = Hash::with_capacity(1);
    h.insert(map_key(name), content);
    Value::from(h)
}

/// A hash key as the serializer writes it: UTF-8 flagged when not ASCII.
fn map_key(text: &str) -> Key {
    Key::new(text.as_bytes(), !text.is_ascii())
}

fn too_wide(v: impl std::fmt::Display) -> Error {
    ser::Error::custom(format_args!(
        "the integer {v} does not fit in Sereal's 64 bits"
    ))
}

impl<'b> ser::Serializer for Builder<'b> {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = Seq<'b>;
    type SerializeTuple = Seq<'b>;
    type SerializeTupleStruct = Seq<'b>;
    type SerializeTupleVariant = Seq<'b>;
    type SerializeMap = Map<'b>;
    type SerializeStruct = Map<'b>;
    type SerializeStructVariant = Map<'b>;

    /// As the byte serializer: compact forms.
    fn is_human_readable(&self) -> bool {
        false
    }

    fn serialize_bool(self, v: bool) -> Result<Value> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value> {
        Ok(Value::Int(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value> {
        Ok(Value::from(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value> {
        if let Ok(n) = i64::try_from(v) {
            Ok(Value::Int(n))
        } else {
            u64::try_from(v).map(Value::from).map_err(|_| too_wide(v))
        }
    }
    fn serialize_u128(self, v: u128) -> Result<Value> {
        u64::try_from(v).map(Value::from).map_err(|_| too_wide(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Value> {
        Ok(Value::Float(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Value> {
        // `FLOAT` when single precision holds it, as the serializer writes.
        let f = v as f32;
        Ok(if f64::from(f) == v || v.is_nan() {
            Value::Float(f)
        } else {
            Value::Double(v)
        })
    }
    fn serialize_char(self, v: char) -> Result<Value> {
        Ok(Value::from(&*v.encode_utf8(&mut [0; 4])))
    }
    fn serialize_str(self, v: &str) -> Result<Value> {
        Ok(Value::from(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value> {
        Ok(Value::bytes(v))
    }
    fn serialize_none(self) -> Result<Value> {
        Ok(Value::Undef)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Value> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value> {
        Ok(Value::Undef)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Value> {
        Ok(Value::Undef)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, name: &'static str) -> Result<Value> {
        Ok(Value::from(name))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<Value> {
        if name == crate::blessed::protocol::BLESSED {
            return self.object(v);
        }
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        v: &T,
    ) -> Result<Value> {
        Ok(variant(name, v.serialize(self.deeper()?)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'b>> {
        Ok(Seq::new(self.deeper()?, len, None))
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'b>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq<'b>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        len: usize,
    ) -> Result<Seq<'b>> {
        Ok(Seq::new(self.deeper()?.deeper()?, Some(len), Some(name)))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map<'b>> {
        Ok(Map::new(self.deeper()?, len, None))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Map<'b>> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        len: usize,
    ) -> Result<Map<'b>> {
        Ok(Map::new(self.deeper()?.deeper()?, Some(len), Some(name)))
    }
}

/// At most this many slots are reserved ahead from a length hint.
const MAX_RESERVE: usize = 4096;

/// A sequence, tuple or tuple variant being built.
pub(super) struct Seq<'b> {
    inner: Builder<'b>,
    items: Array,
    variant: Option<&'static str>,
}

impl<'b> Seq<'b> {
    fn new(inner: Builder<'b>, len: Option<usize>, variant: Option<&'static str>) -> Self {
        let items = Array::with_capacity(len.unwrap_or(0).min(MAX_RESERVE));
        Seq {
            inner,
            items,
            variant,
        }
    }

    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        let v = v.serialize(self.inner.slot())?;
        self.items.push(v);
        Ok(())
    }

    fn done(self) -> Result<Value> {
        let array = Value::Ref(Ref::array(self.items));
        Ok(match self.variant {
            Some(name) => variant(name, array),
            None => array,
        })
    }
}

macro_rules! seq_impls {
    ($($tr:ident :: $m:ident),*) => {$(
        impl ser::$tr for Seq<'_> {
            type Ok = Value;
            type Error = Error;
            fn $m<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
                self.push(v)
            }
            fn end(self) -> Result<Value> {
                self.done()
            }
        }
    )*};
}
seq_impls!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// A map, struct or struct variant being built.
pub(super) struct Map<'b> {
    inner: Builder<'b>,
    hash: Hash,
    // the key given by `serialize_key`, as text
    key: String,
    variant: Option<&'static str>,
}

impl<'b> Map<'b> {
    fn new(inner: Builder<'b>, len: Option<usize>, variant: Option<&'static str>) -> Self {
        Map {
            inner,
            hash: Hash::with_capacity(len.unwrap_or(0).min(MAX_RESERVE)),
            key: String::new(),
            variant,
        }
    }

    /// Adds the entry `key` => `v`; a key given twice is noted (the
    /// decoder refuses it), and the build goes on as the serializer's does.
    fn entry<T: Serialize + ?Sized>(&mut self, key: Key, v: &T) -> Result<()> {
        let v = v.serialize(self.inner.slot())?;
        match self.hash.push_slot(key) {
            Ok(slot) => *slot = v,
            Err(k) => {
                self.inner.build.duplicate.get_or_insert(k);
            }
        }
        Ok(())
    }

    fn done(self) -> Result<Value> {
        let hash = Value::from(self.hash);
        Ok(match self.variant {
            Some(name) => variant(name, hash),
            None => hash,
        })
    }
}

impl ser::SerializeMap for Map<'_> {
    type Ok = Value;
    type Error = Error;
    /// The key's text, as the serializer writes it (numbers and booleans
    /// formatted, other shapes refused by the same rules).
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key.clear();
        key.serialize(KeySerializer {
            buf: &mut self.key,
            to: None,
        })
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        let key = map_key(&self.key);
        self.entry(key, v)
    }
    fn end(self) -> Result<Value> {
        self.done()
    }
}

macro_rules! struct_impls {
    ($($tr:ident),*) => {$(
        impl ser::$tr for Map<'_> {
            type Ok = Value;
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, name: &'static str, v: &T) -> Result<()> {
                self.entry(map_key(name), v)
            }
            fn end(self) -> Result<Value> {
                self.done()
            }
        }
    )*};
}
struct_impls!(SerializeStruct, SerializeStructVariant);
