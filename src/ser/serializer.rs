//! serde's `Serializer` for [`Serializer`]: each of serde's data model
//! types written as the tags the module docs' table gives.

use super::*;

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error::new(ErrorKind::Message(msg.to_string()))
    }
}

impl<'a, 'w> ser::Serializer for &'a mut Serializer<'w> {
    type Ok = ();
    type Error = Error;
    compound_types!('a, 'w);

    /// Sereal is a binary format: types with a compact form (addresses,
    /// UUIDs and the like) write it, as they do for bincode or MessagePack.
    fn is_human_readable(&self) -> bool {
        false
    }

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<()> {
        if self.opts.protocol_version >= 5 {
            self.out.push(if v { tag::YES } else { tag::NO });
        } else {
            self.out.push(if v { 1 } else { tag::SHORT_BINARY_0 });
        }
        Ok(())
    }
    #[inline]
    fn serialize_i8(self, v: i8) -> Result<()> {
        self.int(v.into());
        Ok(())
    }
    #[inline]
    fn serialize_i16(self, v: i16) -> Result<()> {
        self.int(v.into());
        Ok(())
    }
    #[inline]
    fn serialize_i32(self, v: i32) -> Result<()> {
        self.int(v.into());
        Ok(())
    }
    #[inline]
    fn serialize_i64(self, v: i64) -> Result<()> {
        self.int(v);
        Ok(())
    }
    #[inline]
    fn serialize_u8(self, v: u8) -> Result<()> {
        self.uint(v.into());
        Ok(())
    }
    #[inline]
    fn serialize_u16(self, v: u16) -> Result<()> {
        self.uint(v.into());
        Ok(())
    }
    #[inline]
    fn serialize_u32(self, v: u32) -> Result<()> {
        self.uint(v.into());
        Ok(())
    }
    #[inline]
    fn serialize_u64(self, v: u64) -> Result<()> {
        self.uint(v);
        Ok(())
    }
    /// Sereal integers are 64 bits wide: an `i128` in `i64`'s range (or a
    /// positive one in `u64`'s) is written as that integer, anything wider
    /// is an error.
    fn serialize_i128(self, v: i128) -> Result<()> {
        if let Ok(n) = i64::try_from(v) {
            self.serialize_i64(n)
        } else if let Ok(n) = u64::try_from(v) {
            self.serialize_u64(n)
        } else {
            Err(ser::Error::custom(format_args!(
                "the integer {v} does not fit in Sereal's 64 bits"
            )))
        }
    }
    /// As `serialize_i128`: a `u128` in `u64`'s
    /// range is written as that integer, anything wider is an error.
    fn serialize_u128(self, v: u128) -> Result<()> {
        match u64::try_from(v) {
            Ok(n) => self.serialize_u64(n),
            Err(_) => Err(ser::Error::custom(format_args!(
                "the integer {v} does not fit in Sereal's 64 bits"
            ))),
        }
    }
    #[inline]
    fn serialize_f32(self, v: f32) -> Result<()> {
        self.out.push(tag::FLOAT);
        self.out.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
    #[inline]
    fn serialize_f64(self, v: f64) -> Result<()> {
        let f = v as f32;
        if f64::from(f) == v || v.is_nan() {
            self.serialize_f32(f)
        } else {
            self.out.push(tag::DOUBLE);
            self.out.extend_from_slice(&v.to_le_bytes());
            Ok(())
        }
    }
    #[inline]
    fn serialize_char(self, v: char) -> Result<()> {
        self.text(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        self.text(v);
        Ok(())
    }
    #[inline]
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        self.string(v, false);
        Ok(())
    }
    #[inline]
    fn serialize_none(self) -> Result<()> {
        self.out.push(tag::UNDEF);
        Ok(())
    }
    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }
    #[inline]
    fn serialize_unit(self) -> Result<()> {
        self.serialize_none()
    }
    #[inline]
    fn serialize_unit_struct(self, _: &'static str) -> Result<()> {
        self.serialize_none()
    }
    #[inline]
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<()> {
        self.serialize_str(variant)
    }
    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<()> {
        if name == crate::blessed::protocol::BLESSED {
            return self.object(v);
        }
        v.serialize(self)
    }
    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<()> {
        self.open_variant(variant)?;
        v.serialize(&mut *self)?;
        self.close(None, 1)
    }
    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a, 'w>> {
        let patch = self.open(tag::ARRAYREF_0, tag::ARRAY, len)?;
        Ok(Compound::new(self, patch, false))
    }
    #[inline]
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, 'w>> {
        self.serialize_seq(Some(len))
    }
    #[inline]
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'a, 'w>> {
        self.serialize_seq(Some(len))
    }
    #[inline]
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'w>> {
        self.open_variant(variant)?;
        let mut c = self.serialize_seq(Some(len))?;
        c.variant = true;
        Ok(c)
    }
    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a, 'w>> {
        let patch = self.open(tag::HASHREF_0, tag::HASH, len)?;
        self.begin_hash(len);
        Ok(Compound::new(self, patch, true))
    }
    #[inline]
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'a, 'w>> {
        self.serialize_map(Some(len))
    }
    #[inline]
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'a, 'w>> {
        self.open_variant(variant)?;
        let mut c = self.serialize_map(Some(len))?;
        c.variant = true;
        Ok(c)
    }
}
