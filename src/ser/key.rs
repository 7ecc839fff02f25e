//! Map keys, written as the text Perl uses for a hash key.

use super::*;

/// Writes a map key as the text Perl would use as a hash key: into `buf`
/// (for a map whose entries are sorted before they are written), or, with
/// `to`, as the hash key itself, written by the serializer (text keys go
/// there directly; other keys are formatted in `buf` first).
pub(super) struct KeySerializer<'b, 's, 'w> {
    pub(super) buf: &'b mut String,
    pub(super) to: Option<&'s mut Serializer<'w>>,
}

impl KeySerializer<'_, '_, '_> {
    /// The key is `text`.
    #[inline]
    fn text(self, text: &str) -> Result<()> {
        match self.to {
            Some(ser) => {
                ser.key(text);
            }
            None => self.buf.push_str(text),
        }
        Ok(())
    }

    /// The key is what was formatted into the buffer.
    #[inline]
    fn formatted(self) -> Result<()> {
        if let Some(ser) = self.to {
            ser.key(self.buf);
        }
        Ok(())
    }
}

macro_rules! key_to_string {
    ($($m:ident: $t:ty),*) => {$(
        fn $m(self, v: $t) -> Result<()> {
            use std::fmt::Write;
            self.buf.clear();
            write!(self.buf, "{v}").map_err(<Error as ser::Error>::custom)?;
            self.formatted()
        }
    )*};
}

impl ser::Serializer for KeySerializer<'_, '_, '_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    key_to_string!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
        serialize_f32: f32, serialize_f64: f64, serialize_char: char, serialize_i128: i128,
        serialize_u128: u128);

    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        self.text(v)
    }

    #[inline]
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        let text = std::str::from_utf8(v)
            .map_err(|_| <Error as ser::Error>::custom("a hash key must be text"))?;
        self.text(text)
    }
    #[inline]
    fn serialize_none(self) -> Result<()> {
        Err(ser::Error::custom("a hash key cannot be None"))
    }
    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }
    #[inline]
    fn serialize_unit(self) -> Result<()> {
        Err(ser::Error::custom("a hash key cannot be ()"))
    }
    #[inline]
    fn serialize_unit_struct(self, name: &'static str) -> Result<()> {
        self.text(name)
    }
    #[inline]
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<()> {
        self.text(variant)
    }
    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<()> {
        v.serialize(self)
    }
    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<()> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    #[inline]
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    #[inline]
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    #[inline]
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    #[inline]
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    #[inline]
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    #[inline]
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    #[inline]
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
}
