//! Containers being written: sequences, maps and structs.

use super::*;

/// A hash key: a struct field name (fixed address) or other text.
#[derive(Clone, Copy)]
pub(super) enum Key<'k> {
    Field(&'static str),
    Text(&'k str),
}

impl Key<'_> {
    fn text(&self) -> &str {
        match self {
            Key::Field(k) => k,
            Key::Text(k) => k,
        }
    }
}

/// A container being written; counts what is written for an unknown length.
///
/// ```
/// use serde::ser::{SerializeSeq, Serializer as _};
/// use sereal::{Serializer, Value};
/// # fn main() -> Result<(), sereal::Error> {
/// let mut out = Vec::new();
/// let mut ser = Serializer::new(&mut out, Default::default())?;
/// // a sequence of a length not known beforehand, holding a map
/// let mut seq = (&mut ser).serialize_seq(None)?;
/// seq.serialize_element(&1)?;
/// seq.serialize_element(&std::collections::BTreeMap::from([("k", "v")]))?;
/// SerializeSeq::end(seq)?;
/// ser.finish()?;
/// let expected = Value::array([Value::from(1), Value::hash([("k", Value::from("v"))])]);
/// assert_eq!(sereal::decode(&out)?, expected);
/// # Ok(())
/// # }
/// ```
pub struct Compound<'a, 'w> {
    ser: &'a mut Serializer<'w>,
    patch: Option<usize>,
    count: usize,
    // With sort_keys: the map's entries, each serialized to bytes, sorted
    // when the map ends.
    sorted: Option<Vec<(String, Vec<u8>)>>,
    // The current map key as text, one buffer for the whole map.
    key_buf: String,
    // For a variant with content: the one-key hash is closed with the value.
    pub(super) variant: bool,
}

impl<'a, 'w> Compound<'a, 'w> {
    pub(super) fn new(ser: &'a mut Serializer<'w>, patch: Option<usize>, map: bool) -> Self {
        let sorted = (map && ser.opts.sort_keys).then(Vec::new);
        Compound {
            ser,
            patch,
            count: 0,
            sorted,
            key_buf: String::new(),
            variant: false,
        }
    }

    #[inline]
    fn end_container(self) -> Result<()> {
        let variant = self.variant;
        let Compound {
            ser,
            patch,
            count,
            sorted,
            ..
        } = self;
        if let Some(mut entries) = sorted {
            entries.sort_by(|(a, _), (b, _)| {
                (a.len(), a.is_ascii(), a.as_bytes()).cmp(&(b.len(), b.is_ascii(), b.as_bytes()))
            });
            for (k, v) in &entries {
                ser.key(k);
                // Serialized apart, without COPYs, so the bytes fit anywhere.
                ser.out.extend_from_slice(v);
            }
        }
        ser.close(patch, count)?;
        if variant {
            ser.close(None, 1)?;
        }
        Ok(())
    }

    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        self.count += 1;
        v.serialize(&mut *self.ser)
    }

    #[inline]
    fn entry<T: Serialize + ?Sized>(&mut self, key: Key<'_>, v: &T) -> Result<()> {
        self.count += 1;
        if self.sorted.is_some() {
            return self.sorted_entry(key, v);
        }
        match key {
            Key::Field(k) => self.ser.field(k),
            Key::Text(k) => {
                self.ser.key(k);
            }
        }
        v.serialize(&mut *self.ser)
    }
}

impl Compound<'_, '_> {
    /// An entry of a map whose entries are sorted when it ends: its value
    /// serialized apart, kept with its key.
    #[inline(never)]
    fn sorted_entry<T: Serialize + ?Sized>(&mut self, key: Key<'_>, v: &T) -> Result<()> {
        let mut bytes = Vec::new();
        let opts = SerializerOptions {
            compress: Compression::None,
            ..self.ser.opts.clone()
        };
        let mut sub = Serializer::new(&mut bytes, opts)?;
        sub.no_copies = true;
        sub.plain_keys = true;
        sub.depth = self.ser.depth;
        v.serialize(&mut sub)?;
        let body = bytes[6..].to_vec();
        if let Some(entries) = &mut self.sorted {
            entries.push((key.text().to_owned(), body));
        }
        Ok(())
    }
}

macro_rules! seq_impls {
    ($($tr:ident :: $m:ident),*) => {$(
        impl ser::$tr for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            #[inline]
            fn $m<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
                self.element(v)
            }
            #[inline]
            fn end(self) -> Result<()> {
                self.end_container()
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

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key_buf.clear();
        key.serialize(KeySerializer {
            buf: &mut self.key_buf,
            to: None,
        })
    }
    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        let key = std::mem::take(&mut self.key_buf);
        let r = self.entry(Key::Text(&key), v);
        self.key_buf = key;
        r
    }
    /// The key is written as it is serialized (no copy through the key
    /// buffer), unless the entries are sorted before they are written.
    #[inline]
    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<()> {
        if self.sorted.is_some() {
            self.serialize_key(key)?;
            return self.serialize_value(value);
        }
        self.count += 1;
        key.serialize(KeySerializer {
            buf: &mut self.key_buf,
            to: Some(&mut *self.ser),
        })?;
        value.serialize(&mut *self.ser)
    }
    #[inline]
    fn end(self) -> Result<()> {
        self.end_container()
    }
}

macro_rules! struct_impls {
    ($($tr:ident),*) => {$(
        impl ser::$tr for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            #[inline]
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<()> {
                self.entry(Key::Field(key), v)
            }
            #[inline]
            fn end(self) -> Result<()> {
                self.end_container()
            }
        }
    )*};
}
struct_impls!(SerializeStruct, SerializeStructVariant);
