//! Perl objects: what the serializers write for a
//! [`Blessed`](crate::Blessed) or a blessed [`Value`] (the private
//! protocol of [`crate::blessed`]).

use super::value::Builder;
use super::*;
use crate::blessed::protocol::{ask_parts, Capture, ObjectSink, BLESSED};
use crate::value::{Key, Value};

impl Serializer<'_> {
    /// Writes `OBJECT class`, or `OBJECTV` and the offset of the class
    /// name when it was written before in the document, as Perl's encoder
    /// does (not in a value serialized apart, whose offsets would be
    /// wrong). The name is flagged UTF-8 when it is not ASCII.
    pub(super) fn class(&mut self, class: &str) {
        let (bytes, utf8) = (class.as_bytes(), !class.is_ascii());
        if self.no_copies {
            self.out.push(tag::OBJECT);
            return self.pv(bytes, utf8);
        }
        let classes = &mut self.strings.get_or_insert_with(Default::default).classes;
        match classes.find(self.out, bytes, utf8) {
            Ok(off) => protocol::write_tag_varint(self.out, tag::OBJECTV, off),
            Err(hash) => {
                self.out.push(tag::OBJECT);
                let here = (self.out.len() - self.base) as u64;
                protocol::write_pv(self.out, bytes, utf8);
                let pos = self.out.len() - bytes.len();
                classes.record(hash, pos, bytes.len(), utf8, here);
            }
        }
    }

    /// Writes the object whose parts (see [`crate::blessed::protocol`])
    /// `parts` serializes as.
    pub(super) fn object<T: Serialize + ?Sized>(&mut self, parts: &T) -> Result<()> {
        let sink = Bytes {
            ser: self,
            classed: false,
        };
        ask_parts(parts, Capture(sink))
    }
}

/// The byte serializer's object: its class, then its referent.
struct Bytes<'a, 'w> {
    ser: &'a mut Serializer<'w>,
    classed: bool,
}

fn no_class() -> Error {
    Error::new(ErrorKind::Message(
        "a Perl object's value came before its class".into(),
    ))
}

impl ObjectSink for Bytes<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn class(&mut self, class: &str) -> Result<()> {
        self.ser.class(class);
        self.classed = true;
        Ok(())
    }
    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        if !self.classed {
            return Err(no_class());
        }
        value.serialize(Referent(&mut *self.ser))
    }
    fn end(self) -> Result<()> {
        Ok(())
    }
}

/// The referent of an object: a container is written as its reference,
/// which the object applies to; anything else (a number, a string, undef,
/// another object) after a `REFN`, as a blessed reference to it.
struct Referent<'a, 'w>(&'a mut Serializer<'w>);

impl Referent<'_, '_> {
    fn refn(&mut self) {
        self.0.out.push(tag::REFN);
    }
}

// Scalars: a reference to them.
macro_rules! scalars {
    ($($m:ident($($arg:ident: $t:ty),*);)*) => {$(
        fn $m(mut self, $($arg: $t),*) -> Result<()> {
            self.refn();
            self.0.$m($($arg),*)
        }
    )*};
}

// Containers: as they are written anywhere.
macro_rules! containers {
    ($($m:ident($($arg:ident: $t:ty),*) -> $r:ident;)*) => {$(
        fn $m(self, $($arg: $t),*) -> Result<Self::$r> {
            self.0.$m($($arg),*)
        }
    )*};
}

impl<'a, 'w> ser::Serializer for Referent<'a, 'w> {
    type Ok = ();
    type Error = Error;
    compound_types!('a, 'w);

    fn is_human_readable(&self) -> bool {
        false
    }

    scalars! {
        serialize_bool(v: bool); serialize_i8(v: i8); serialize_i16(v: i16);
        serialize_i32(v: i32); serialize_i64(v: i64); serialize_i128(v: i128);
        serialize_u8(v: u8); serialize_u16(v: u16); serialize_u32(v: u32); serialize_u64(v: u64);
        serialize_u128(v: u128); serialize_f32(v: f32); serialize_f64(v: f64);
        serialize_char(v: char); serialize_str(v: &str); serialize_bytes(v: &[u8]);
        serialize_none(); serialize_unit(); serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, i: u32, variant: &'static str);
    }

    containers! {
        serialize_seq(len: Option<usize>) -> SerializeSeq;
        serialize_tuple(len: usize) -> SerializeTuple;
        serialize_tuple_struct(name: &'static str, len: usize) -> SerializeTupleStruct;
        serialize_tuple_variant(name: &'static str, i: u32, variant: &'static str, len: usize)
            -> SerializeTupleVariant;
        serialize_map(len: Option<usize>) -> SerializeMap;
        serialize_struct(name: &'static str, len: usize) -> SerializeStruct;
        serialize_struct_variant(name: &'static str, i: u32, variant: &'static str, len: usize)
            -> SerializeStructVariant;
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        mut self,
        name: &'static str,
        v: &T,
    ) -> Result<()> {
        if name == BLESSED {
            // An object blessed again: a reference to the inner one.
            self.refn();
            return self.0.serialize_newtype_struct(name, v);
        }
        v.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        i: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<()> {
        // A one-key hash: a reference already.
        self.0.serialize_newtype_variant(name, i, variant, v)
    }
}

impl<'b> Builder<'b> {
    /// The graph of the object whose parts `parts` serializes as: what
    /// decoding the byte serializer's object gives.
    pub(super) fn object<T: Serialize + ?Sized>(self, parts: &T) -> Result<Value> {
        let sink = Graph {
            builder: Some(self),
            class: None,
            value: None,
        };
        ask_parts(parts, Capture(sink))
    }
}

/// The graph serializer's object.
struct Graph<'b> {
    builder: Option<Builder<'b>>,
    class: Option<Key>,
    value: Option<Value>,
}

impl ObjectSink for Graph<'_> {
    type Ok = Value;
    type Error = Error;
    fn class(&mut self, class: &str) -> Result<()> {
        self.class = Some(Key::new(class.as_bytes(), !class.is_ascii()));
        Ok(())
    }
    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let builder = self.builder.take().filter(|_| self.class.is_some());
        self.value = Some(value.serialize(builder.ok_or_else(no_class)?)?);
        Ok(())
    }
    fn end(self) -> Result<Value> {
        let (Some(class), Some(value)) = (self.class, self.value) else {
            return Err(no_class());
        };
        Ok(crate::blessed::protocol::bless(value, class))
    }
}
