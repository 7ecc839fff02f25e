//! The private protocol by which a Perl class crosses serde, which has no
//! notion of one (as serde_json's `RawValue` crosses it by a magic name).
//!
//! Writing: [`Blessed`](super::Blessed) (and a blessed [`Value`]) calls
//! `serialize_newtype_struct(BLESSED, parts)`, and `parts` serializes as a
//! struct of two fields, `class` (a string) and `value`. This crate's
//! serializers recognize the name and write the parts as an object
//! ([`Capture`] takes them apart); any other format sees a newtype around
//! that struct. A blessed `Value` keeps its plain shape for other formats:
//! its parts serialize as the struct only when the serializer just asked
//! for them ([`ask_parts`]), and as the referent otherwise.
//!
//! Reading: [`Blessed`](super::Blessed) calls
//! `deserialize_newtype_struct(BLESSED, ..)` and a [`Value`]
//! `deserialize_newtype_struct(VALUE, ..)`. This crate's deserializers, at
//! a blessed referent, visit an enum whose variant is the class and whose
//! newtype content is the referent (an object is an externally tagged
//! value: `{class => referent}`); at anything else, `BLESSED` is an error
//! and `VALUE` reads as `deserialize_any`. Other formats visit the newtype,
//! and `Blessed` reads the two-field struct from it.
//!
//! [`Value`]: crate::Value

use crate::value::{Key, Ref, Value};
use serde::ser::{self, Serialize, SerializeStruct};
use std::cell::Cell;

/// The newtype name of a blessed value.
pub(crate) const BLESSED: &str = "$sereal::private::Blessed";
/// The newtype name a [`Value`](crate::Value) reads through.
pub(crate) const VALUE: &str = "$sereal::private::Value";
/// The struct the parts serialize as, and its fields.
pub(crate) const PARTS: &str = "Blessed";
pub(crate) const FIELDS: &[&str] = &["class", "value"];

thread_local! {
    static PARTS_ASKED: Cell<bool> = const { Cell::new(false) };
}

/// Serializes `parts` (the value given with [`BLESSED`]) to `capture`,
/// telling a blessed `Value`'s parts to serialize as the struct.
pub(crate) fn ask_parts<T: Serialize + ?Sized, S: ser::Serializer>(
    parts: &T,
    capture: S,
) -> Result<S::Ok, S::Error> {
    PARTS_ASKED.with(|a| a.set(true));
    let r = parts.serialize(capture);
    PARTS_ASKED.with(|a| a.set(false));
    r
}

/// Whether this crate's serializer asked for the parts now (taken at once,
/// so that nothing serialized inside them sees it).
pub(crate) fn parts_asked() -> bool {
    PARTS_ASKED.with(|a| a.replace(false))
}

/// Writes the class and the value of a struct of [`FIELDS`].
pub(crate) fn write_parts<S: ser::Serializer, V: Serialize + ?Sized>(
    s: S,
    class: &str,
    value: &V,
) -> Result<S::Ok, S::Error> {
    let mut st = s.serialize_struct(PARTS, 2)?;
    st.serialize_field(FIELDS[0], class)?;
    st.serialize_field(FIELDS[1], value)?;
    st.end()
}

/// What a serializer of this crate does with an object's parts.
pub(crate) trait ObjectSink {
    type Ok;
    type Error: ser::Error;
    /// The class, which comes first.
    fn class(&mut self, class: &str) -> Result<(), Self::Error>;
    /// The referent, after the class.
    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Self::Error>;
    /// The object is complete.
    fn end(self) -> Result<Self::Ok, Self::Error>;
}

/// A serializer that takes the parts [`write_parts`] writes and hands them
/// to a sink; anything else is an error.
pub(crate) struct Capture<K>(pub(crate) K);

fn not_parts<E: ser::Error>() -> E {
    E::custom("a value named as a Perl object must be serialized as its class and value")
}

// Every shape but a struct: not the parts of an object.
macro_rules! refuse {
    ($($m:ident($($t:ty),*) -> $r:ty;)*) => {$(
        fn $m(self, $(_: $t),*) -> Result<$r, Self::Error> {
            Err(not_parts())
        }
    )*};
}

// Every shape but a string and a struct, with `Ok` = `$ok`.
macro_rules! refuse_all {
    ($ok:ty) => {
        refuse! {
            serialize_bool(bool) -> $ok; serialize_i8(i8) -> $ok; serialize_i16(i16) -> $ok;
            serialize_i32(i32) -> $ok; serialize_i64(i64) -> $ok; serialize_u8(u8) -> $ok;
            serialize_u16(u16) -> $ok; serialize_u32(u32) -> $ok; serialize_u64(u64) -> $ok;
            serialize_f32(f32) -> $ok; serialize_f64(f64) -> $ok; serialize_char(char) -> $ok;
            serialize_bytes(&[u8]) -> $ok; serialize_none() -> $ok;
            serialize_unit() -> $ok; serialize_unit_struct(&'static str) -> $ok;
            serialize_unit_variant(&'static str, u32, &'static str) -> $ok;
            serialize_seq(Option<usize>) -> Self::SerializeSeq;
            serialize_tuple(usize) -> Self::SerializeTuple;
            serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
            serialize_tuple_variant(&'static str, u32, &'static str, usize)
                -> Self::SerializeTupleVariant;
            serialize_map(Option<usize>) -> Self::SerializeMap;
            serialize_struct_variant(&'static str, u32, &'static str, usize)
                -> Self::SerializeStructVariant;
        }
        refuse_values!(Result<$ok, Self::Error>);
    };
}

// The methods with a value: not the parts of an object either.
macro_rules! refuse_values {
    ($r:ty) => {
        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> $r {
            Err(not_parts())
        }
        fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, _: &T) -> $r {
            Err(not_parts())
        }
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> $r {
            Err(not_parts())
        }
    };
}

impl<K: ObjectSink> ser::Serializer for Capture<K> {
    type Ok = K::Ok;
    type Error = K::Error;
    type SerializeSeq = ser::Impossible<K::Ok, K::Error>;
    type SerializeTuple = ser::Impossible<K::Ok, K::Error>;
    type SerializeTupleStruct = ser::Impossible<K::Ok, K::Error>;
    type SerializeTupleVariant = ser::Impossible<K::Ok, K::Error>;
    type SerializeMap = ser::Impossible<K::Ok, K::Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = ser::Impossible<K::Ok, K::Error>;

    refuse_all!(K::Ok);
    refuse! { serialize_str(&str) -> K::Ok; }

    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Self, K::Error> {
        match name {
            PARTS => Ok(self),
            _ => Err(not_parts()),
        }
    }
}

impl<K: ObjectSink> SerializeStruct for Capture<K> {
    type Ok = K::Ok;
    type Error = K::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), K::Error> {
        if key == FIELDS[0] {
            let class = value.serialize(ClassName).map_err(ser::Error::custom)?;
            self.0.class(&class)
        } else {
            self.0.value(value)
        }
    }
    fn end(self) -> Result<K::Ok, K::Error> {
        self.0.end()
    }
}

/// Takes a class name: a string.
struct ClassName;

impl ser::Serializer for ClassName {
    type Ok = String;
    type Error = crate::Error;
    type SerializeSeq = ser::Impossible<String, crate::Error>;
    type SerializeTuple = ser::Impossible<String, crate::Error>;
    type SerializeTupleStruct = ser::Impossible<String, crate::Error>;
    type SerializeTupleVariant = ser::Impossible<String, crate::Error>;
    type SerializeMap = ser::Impossible<String, crate::Error>;
    type SerializeStruct = ser::Impossible<String, crate::Error>;
    type SerializeStructVariant = ser::Impossible<String, crate::Error>;

    fn serialize_str(self, v: &str) -> crate::Result<String> {
        Ok(v.to_owned())
    }

    refuse_all!(String);
    refuse! { serialize_struct(&'static str, usize) -> Self::SerializeStruct; }
}

/// `value` blessed into `class`, as the decoder makes an object of the
/// referent serde read: a container the referent read is blessed (it is
/// the object's own), anything else is referred to by a blessed scalar
/// cell.
pub(crate) fn bless(value: Value, class: Key) -> Value {
    match value {
        Value::Ref(r) if r.class().is_none() => {
            r.bless(class);
            Value::Ref(r)
        }
        v => Value::Ref(Ref::scalar(v).blessed(class)),
    }
}
