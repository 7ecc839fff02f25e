//! Serde deserialization straight from Sereal bytes.
//!
//! Accepts what Perl writes: numbers in any integer or float tag when the
//! target can hold them (an integral float for an integer), strings from
//! `BINARY`/`SHORT_BINARY` or `STR_UTF8` (validated), `REFN`, `REFP`,
//! `ALIAS`, `COPY` and `WEAKEN` followed transparently, objects as their
//! referent, booleans from `TRUE`/`FALSE`/`YES`/`NO` and, for `bool`, from
//! `0`/`1` and `""`/`"0"`/`"1"` as Perl writes them. `&str` and `&[u8]`
//! borrow from an uncompressed input.

use crate::decoder::{Decoder, DecoderOptions, Header};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, tag, TRACK_FLAG};
use crate::stack::{HasStack, Stack};
use serde::de::{self, DeserializeSeed, IgnoredAny, Visitor};
use std::borrow::Cow;

/// How a value is wanted: what conversions Perl's data may need.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    Any,
    Int,
    Bool,
}

/// A serde deserializer over one Sereal document.
///
/// ```
/// use serde::Deserialize;
/// #[derive(Deserialize, Debug, PartialEq)]
/// struct User<'a> { id: u32, name: &'a str }
/// let doc = sereal::encode(&sereal::Value::hash([("id", sereal::Value::from(7)), ("name", "ann".into())])).unwrap();
/// let user: User = sereal::from_slice(&doc).unwrap();
/// assert_eq!(user, User { id: 7, name: "ann" });
/// ```
pub struct Deserializer<'de> {
    body: Cow<'de, [u8]>,
    pos: usize,
    // body offset of body[0]
    shift: usize,
    depth: usize,
    max_depth: usize,
    // tags left to read: REFP/ALIAS re-read their targets, so a document
    // could otherwise expand exponentially
    budget: usize,
    opts: DecoderOptions,
    stack: Stack,
}

impl HasStack for Deserializer<'_> {
    fn stack(&mut self) -> &mut Stack {
        &mut self.stack
    }
}

/// Bytes of a string: from the input (borrowable for `'de`) or from a
/// decompressed copy.
enum Bytes<'de, 'a> {
    Input(&'de [u8]),
    Copy(&'a [u8]),
}

impl<'de> Deserializer<'de> {
    /// A deserializer for the document `input`, with `opts`' limits.
    pub fn from_slice_with(input: &'de [u8], opts: DecoderOptions) -> Result<Deserializer<'de>> {
        let header = Header::parse(input)?;
        let dec = Decoder::new(opts.clone());
        let (body, shift) = dec.body_bytes(input, &header)?;
        let budget = body.len().saturating_mul(64).saturating_add(1 << 16);
        let max_depth = if opts.max_recursion_depth == 0 {
            usize::MAX
        } else {
            opts.max_recursion_depth
        };
        Ok(Deserializer {
            body,
            pos: 0,
            shift,
            depth: 0,
            max_depth,
            budget,
            opts,
            stack: Stack::new(),
        })
    }

    /// Checks that the whole body was read.
    pub fn end(&self) -> Result<()> {
        if self.pos != self.body.len() {
            return Err(Error::at(ErrorKind::TrailingData, self.pos));
        }
        Ok(())
    }

    fn err(&self, kind: ErrorKind) -> Error {
        Error::at(kind, self.pos)
    }

    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .body
            .get(self.pos)
            .ok_or_else(|| self.err(ErrorKind::Truncated))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64> {
        match protocol::read_varint(&self.body[self.pos..]) {
            Some((n, len)) => {
                self.pos += len;
                Ok(n)
            }
            None => Err(self.err(ErrorKind::Truncated)),
        }
    }

    fn take(&mut self, n: usize) -> Result<std::ops::Range<usize>> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.body.len())
            .ok_or_else(|| self.err(ErrorKind::Truncated))?;
        let r = self.pos..end;
        self.pos = end;
        Ok(r)
    }

    fn bytes(&self, r: std::ops::Range<usize>) -> Bytes<'de, '_> {
        match &self.body {
            Cow::Borrowed(b) => {
                let b: &'de [u8] = b;
                Bytes::Input(&b[r])
            }
            Cow::Owned(v) => Bytes::Copy(&v[r]),
        }
    }

    /// Where the item an offset names starts; it must be before `at`.
    fn target(&self, off: u64, at: usize) -> Result<usize> {
        usize::try_from(off)
            .ok()
            .and_then(|o| o.checked_sub(self.shift))
            .filter(|&p| p < at)
            .ok_or_else(|| Error::at(ErrorKind::BadOffset(off, "REFP/ALIAS/COPY"), at))
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(self.err(ErrorKind::DepthExceeded(self.max_depth)));
        }
        Ok(())
    }

    /// Reads a nested value one level deeper, on a grown stack when the
    /// current one runs low (visitors recurse too).
    fn nested<V: Visitor<'de>>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<V::Value>,
    ) -> Result<V::Value> {
        self.enter()?;
        let v = Stack::run(self, f);
        self.depth -= 1;
        v
    }

    fn count(&mut self, limit: usize, min_bytes: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.varint()?;
        if limit != 0 && n > limit as u64 {
            return Err(Error::at(
                ErrorKind::LimitExceeded(format!("{n} entries (limit {limit})")),
                at,
            ));
        }
        if n.saturating_mul(min_bytes as u64) > (self.body.len() - self.pos) as u64 {
            return Err(Error::at(ErrorKind::Truncated, at));
        }
        Ok(n as usize)
    }

    /// Reads one value and hands it to `visitor`.
    fn parse<V: Visitor<'de>>(&mut self, visitor: V, want: Want) -> Result<V::Value> {
        loop {
            self.budget = self.budget.checked_sub(1).ok_or_else(|| {
                self.err(ErrorKind::LimitExceeded("document expands too much".into()))
            })?;
            let at = self.pos;
            let t = self.byte()? & !TRACK_FLAG;
            return match t {
                tag::PAD | tag::WEAKEN => continue,
                tag::REFN => self.nested::<V>(|de| de.parse(visitor, want)),
                tag::REFP | tag::ALIAS | tag::COPY => {
                    let off = self.varint()?;
                    let p = self.target(off, at)?;
                    let back = self.pos;
                    self.pos = p;
                    let v = self.nested::<V>(|de| de.parse(visitor, want));
                    self.pos = back;
                    v
                }
                tag::OBJECT | tag::OBJECT_FREEZE => {
                    self.skip_class()?;
                    continue;
                }
                tag::OBJECTV | tag::OBJECTV_FREEZE => {
                    self.varint()?;
                    continue;
                }
                tag::POS_0..=tag::POS_15 if want == Want::Bool && t <= 1 => {
                    visitor.visit_bool(t == 1)
                }
                tag::POS_0..=tag::POS_15 => visitor.visit_u64(u64::from(t)),
                tag::NEG_16..=tag::NEG_1 => visitor.visit_i64(i64::from(t) - 32),
                tag::VARINT => visitor.visit_u64(self.varint()?),
                tag::ZIGZAG => visitor.visit_i64(protocol::zigzag_decode(self.varint()?)),
                tag::FLOAT => {
                    let r = self.take(4)?;
                    let f = f32::from_le_bytes(self.body[r].try_into().expect("4 bytes"));
                    float(visitor, f64::from(f), want, Some(f))
                }
                tag::DOUBLE => {
                    let r = self.take(8)?;
                    let d = f64::from_le_bytes(self.body[r].try_into().expect("8 bytes"));
                    float(visitor, d, want, None)
                }
                tag::UNDEF | tag::CANONICAL_UNDEF => visitor.visit_unit(),
                tag::TRUE | tag::YES => visitor.visit_bool(true),
                tag::FALSE | tag::NO => visitor.visit_bool(false),
                tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 | tag::BINARY | tag::STR_UTF8 => {
                    let len = if t == tag::BINARY || t == tag::STR_UTF8 {
                        let n = self.varint()?;
                        let max = self.opts.max_string_length;
                        if max != 0 && n > max as u64 {
                            return Err(Error::at(
                                ErrorKind::LimitExceeded(format!("string of {n} bytes")),
                                at,
                            ));
                        }
                        usize::try_from(n).map_err(|_| self.err(ErrorKind::Truncated))?
                    } else {
                        (t & 31) as usize
                    };
                    let r = self.take(len)?;
                    self.string(visitor, r, t == tag::STR_UTF8, want, at)
                }
                tag::ARRAYREF_0..=tag::ARRAYREF_15 | tag::ARRAY => {
                    let n = if t == tag::ARRAY {
                        self.count(self.opts.max_num_array_entries, 1)?
                    } else {
                        (t & 15) as usize
                    };
                    self.nested::<V>(|de| de.seq(visitor, n))
                }
                tag::HASHREF_0..=tag::HASHREF_15 | tag::HASH => {
                    let n = if t == tag::HASH {
                        self.count(self.opts.max_num_hash_entries, 2)?
                    } else {
                        (t & 15) as usize
                    };
                    self.nested::<V>(|de| visitor.visit_map(Entries { de, left: n }))
                }
                tag::REGEXP => {
                    // A regexp reads as its pattern; the flags are skipped.
                    let pattern = self.skip_string()?;
                    self.skip_string()?;
                    self.string(visitor, pattern.0, pattern.1, want, at)
                }
                _ => Err(Error::at(
                    ErrorKind::UnexpectedTag(t, "in a serde value"),
                    at,
                )),
            };
        }
    }

    fn seq<V: Visitor<'de>>(&mut self, visitor: V, n: usize) -> Result<V::Value> {
        let mut access = Elements { de: self, left: n };
        let v = visitor.visit_seq(&mut access)?;
        // A visitor that stopped early (a fixed-size tuple, say): skip the rest.
        while access.left > 0 {
            access.left -= 1;
            access.de.parse(IgnoredAny, Want::Any)?;
        }
        Ok(v)
    }

    fn string<V: Visitor<'de>>(
        &mut self,
        visitor: V,
        r: std::ops::Range<usize>,
        utf8: bool,
        want: Want,
        at: usize,
    ) -> Result<V::Value> {
        if want == Want::Bool && matches!(&self.body[r.clone()], b"" | b"0" | b"1") {
            return visitor.visit_bool(&self.body[r] == b"1");
        }
        let bad_utf8 = || Error::at(ErrorKind::InvalidUtf8, at);
        match self.bytes(r) {
            Bytes::Input(b) => match std::str::from_utf8(b) {
                Ok(s) => visitor.visit_borrowed_str(s),
                Err(_) if utf8 => Err(bad_utf8()),
                Err(_) => visitor.visit_borrowed_bytes(b),
            },
            Bytes::Copy(b) => match std::str::from_utf8(b) {
                Ok(s) => visitor.visit_str(s),
                Err(_) if utf8 => Err(bad_utf8()),
                Err(_) => visitor.visit_bytes(b),
            },
        }
    }

    /// Skips a string item (or a COPY of one), returning its range and kind.
    fn skip_string(&mut self) -> Result<(std::ops::Range<usize>, bool)> {
        let at = self.pos;
        let t = self.byte()? & !TRACK_FLAG;
        let len = match t {
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => (t & 31) as usize,
            tag::BINARY | tag::STR_UTF8 => {
                usize::try_from(self.varint()?).map_err(|_| self.err(ErrorKind::Truncated))?
            }
            tag::COPY => {
                let off = self.varint()?;
                let p = self.target(off, at)?;
                let back = self.pos;
                self.pos = p;
                let r = self.skip_string();
                self.pos = back;
                return r;
            }
            _ => {
                return Err(Error::at(
                    ErrorKind::UnexpectedTag(t, "where a string was expected"),
                    at,
                ))
            }
        };
        Ok((self.take(len)?, t == tag::STR_UTF8))
    }

    fn skip_class(&mut self) -> Result<()> {
        if self.opts.refuse_objects {
            return Err(self.err(ErrorKind::Invalid(
                "objects are refused (refuse_objects)".into(),
            )));
        }
        self.skip_string().map(|_| ())
    }

    /// Whether the next value (after PADs and references) is undefined.
    fn next_is_undef(&self) -> bool {
        let mut p = self.pos;
        while let Some(&b) = self.body.get(p) {
            match b & !TRACK_FLAG {
                tag::PAD => p += 1,
                tag::UNDEF | tag::CANONICAL_UNDEF => return true,
                _ => return false,
            }
        }
        false
    }
}

fn float<'de, V: Visitor<'de>>(
    visitor: V,
    d: f64,
    want: Want,
    single: Option<f32>,
) -> Result<V::Value> {
    if want == Want::Int && d.fract() == 0.0 {
        if (0.0..18_446_744_073_709_551_616.0).contains(&d) {
            return visitor.visit_u64(d as u64);
        }
        if (-9_223_372_036_854_775_808.0..0.0).contains(&d) {
            return visitor.visit_i64(d as i64);
        }
    }
    match single {
        Some(f) => visitor.visit_f32(f),
        None => visitor.visit_f64(d),
    }
}

/// Deserializes a `T` from the Sereal document `input` (borrowing strings
/// from it when it is not compressed).
///
/// ```
/// let doc = sereal::to_vec(&(1u8, "two", [3.5f64])).unwrap();
/// let (a, b, c): (u8, String, Vec<f64>) = sereal::from_slice(&doc).unwrap();
/// assert_eq!((a, b.as_str(), c), (1, "two", vec![3.5]));
/// ```
pub fn from_slice<'de, T: de::Deserialize<'de>>(input: &'de [u8]) -> Result<T> {
    from_slice_with(input, DecoderOptions::default())
}

/// As [`from_slice`], with decoder options (limits, refusals).
pub fn from_slice_with<'de, T: de::Deserialize<'de>>(
    input: &'de [u8],
    opts: DecoderOptions,
) -> Result<T> {
    let mut de = Deserializer::from_slice_with(input, opts)?;
    let v = T::deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// Reads a whole document from `reader` and deserializes a `T` (which owns
/// its data).
pub fn from_reader<R: std::io::Read, T: de::DeserializeOwned>(mut reader: R) -> Result<T> {
    let mut buf = Vec::new();
    reader
        .read_to_end(&mut buf)
        .map_err(|e| Error::new(ErrorKind::Invalid(format!("read failed: {e}"))))?;
    from_slice(&buf)
}

impl de::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error::new(ErrorKind::Invalid(msg.to_string()))
    }
}

macro_rules! forward {
    ($want:expr; $($m:ident),*) => {$(
        fn $m<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            self.parse(visitor, $want)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = Error;

    forward!(Want::Any; deserialize_any, deserialize_f32, deserialize_f64, deserialize_char,
        deserialize_str, deserialize_string, deserialize_bytes, deserialize_byte_buf, deserialize_unit,
        deserialize_seq, deserialize_map, deserialize_identifier, deserialize_ignored_any);
    forward!(Want::Int; deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64, deserialize_i128,
        deserialize_u8, deserialize_u16, deserialize_u32, deserialize_u64, deserialize_u128);
    forward!(Want::Bool; deserialize_bool);

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.next_is_undef() {
            self.parse(IgnoredAny, Want::Any)?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
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
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
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
        self.parse(visitor, Want::Any)
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

struct Elements<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Elements<'_, 'de> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

struct Entries<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    left: usize,
}

impl<'de> de::MapAccess<'de> for Entries<'_, 'de> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(&mut *self.de)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// An enum: a string names a unit variant; a one-key hash names a variant
/// and holds its content.
struct Variant<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

impl<'de> de::EnumAccess<'de> for Variant<'_, 'de> {
    type Error = Error;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        // Past references to the hash or string.
        while let Some(&b) = self.de.body.get(self.de.pos) {
            match b & !TRACK_FLAG {
                tag::PAD | tag::REFN | tag::WEAKEN => self.de.pos += 1,
                tag::HASHREF_0..=tag::HASHREF_15 | tag::HASH => {
                    let at = self.de.pos;
                    self.de.pos += 1;
                    let n = if b & !TRACK_FLAG == tag::HASH {
                        self.de.count(0, 2)?
                    } else {
                        (b & 15) as usize
                    };
                    if n != 1 {
                        return Err(Error::at(
                            ErrorKind::Invalid(format!(
                                "an enum variant with content is a hash of one key, not {n}"
                            )),
                            at,
                        ));
                    }
                    let v = seed.deserialize(&mut *self.de)?;
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
