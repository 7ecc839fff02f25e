//! Serde serialization straight to Sereal bytes.
//!
//! Structs and maps become hashes (field names as keys, repeated keys written
//! as `COPY` as Perl does), sequences and tuples arrays, `None` and `()`
//! undef, unit variants strings, other variants one-key hashes (serde_json's
//! externally tagged shape), byte slices binary strings, `char` and strings
//! UTF-8 strings. No value graph is built on the way.

use crate::compress::{self, Compression};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, tag};
use hashbrown::HashTable;
use serde::ser::{self, Serialize};
use std::hash::{BuildHasher, Hasher};

/// Options for [`Serializer`]: a subset of the encoder's that applies to
/// serde data (which has no sharing, objects or callbacks).
///
/// ```
/// use sereal::ser::SerializerOptions;
/// let opts = SerializerOptions::new().protocol_version(3).sort_keys(true);
/// let bytes = sereal::to_vec_with(&[1, 2, 3], &opts).unwrap();
/// assert_eq!(bytes[4], 3);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SerializerOptions {
    /// Protocol version, 1 to 5 (default 5).
    pub protocol_version: u8,
    /// Body compression (default none).
    pub compress: Compression,
    /// Bodies shorter than this are not compressed (default 1024).
    pub compress_threshold: usize,
    /// Compression level (see [`crate::EncoderOptions::compress_level`]).
    pub compress_level: Option<i32>,
    /// Protocol 1's Snappy framing (see
    /// [`crate::EncoderOptions::legacy_snappy`]).
    pub legacy_snappy: bool,
    /// Write map and struct keys sorted as Perl's `sort_keys` does (by
    /// length, UTF-8 keys first, then bytes).
    pub sort_keys: bool,
    /// Write a repeated string value (over 3 bytes) as `COPY` of the first.
    pub dedupe_strings: bool,
}

impl Default for SerializerOptions {
    fn default() -> Self {
        SerializerOptions {
            protocol_version: protocol::PROTOCOL_VERSION,
            compress: Compression::None,
            compress_threshold: 1024,
            compress_level: None,
            legacy_snappy: false,
            sort_keys: false,
            dedupe_strings: false,
        }
    }
}

impl SerializerOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `protocol_version`.
    pub fn protocol_version(mut self, v: u8) -> Self {
        self.protocol_version = v;
        self
    }

    /// Sets `compress`.
    pub fn compress(mut self, c: Compression) -> Self {
        self.compress = c;
        self
    }

    /// Sets `compress_threshold`.
    pub fn compress_threshold(mut self, n: usize) -> Self {
        self.compress_threshold = n;
        self
    }

    /// Sets `compress_level`.
    pub fn compress_level(mut self, level: Option<i32>) -> Self {
        self.compress_level = level;
        self
    }

    /// Sets `legacy_snappy`.
    pub fn legacy_snappy(mut self, on: bool) -> Self {
        self.legacy_snappy = on;
        self
    }

    /// Sets `sort_keys`.
    pub fn sort_keys(mut self, on: bool) -> Self {
        self.sort_keys = on;
        self
    }

    /// Sets `dedupe_strings`.
    pub fn dedupe_strings(mut self, on: bool) -> Self {
        self.dedupe_strings = on;
        self
    }

    fn framing(&self) -> compress::Framing {
        compress::Framing {
            compress: self.compress,
            threshold: self.compress_threshold,
            level: self.compress_level,
            legacy_snappy: self.legacy_snappy,
        }
    }
}

/// Strings already written (hash keys, and values with `dedupe_strings`):
/// where their bytes are in the output, and their body offsets. A document
/// with no keys and no deduplicated strings never builds the table.
#[derive(Default)]
struct Strings {
    /// `(hash, position of the bytes in the output, length, utf8, offset)`
    table: HashTable<(u64, usize, u32, bool, u64)>,
    hasher: Option<hashbrown::DefaultHashBuilder>,
}

impl Strings {
    fn hash(&mut self, bytes: &[u8], utf8: bool) -> u64 {
        let mut h = self
            .hasher
            .get_or_insert_with(Default::default)
            .build_hasher();
        h.write(bytes);
        h.write_u8(utf8 as u8);
        h.finish()
    }

    /// The offset of a string equal to `bytes` written before into `out`,
    /// or the hash to [`record`](Self::record) it with.
    #[inline]
    fn find(&mut self, out: &[u8], bytes: &[u8], utf8: bool) -> std::result::Result<u64, u64> {
        let hash = self.hash(bytes, utf8);
        match self.table.find(hash, |e| {
            e.0 == hash && e.3 == utf8 && out.get(e.1..e.1 + e.2 as usize) == Some(bytes)
        }) {
            Some(e) => Ok(e.4),
            None => Err(hash),
        }
    }

    /// Records the string whose `len` bytes are at `pos` in the output,
    /// and whose item starts at body offset `offset`.
    #[inline]
    fn record(&mut self, hash: u64, pos: usize, len: usize, utf8: bool, offset: u64) {
        let entry = (hash, pos, len as u32, utf8, offset);
        self.table.insert_unique(hash, entry, |e| e.0);
    }

    /// Room for `n` more strings without growing the table.
    fn reserve(&mut self, n: usize) {
        self.table.reserve(n, |e| e.0);
    }
}

/// The strings a document with more than one hash, or with deduplicated
/// strings, records: hash keys, string values, and a direct-mapped cache
/// of struct field names by address (fixed for a `&'static str`), so that
/// a repeated field name is found without hashing its text.
#[derive(Default)]
struct Tables {
    keys: Strings,
    values: Strings,
    /// `(address, length, offset)`, 0 for an empty slot.
    fields: [(usize, usize, u64); FIELD_SLOTS],
}

const FIELD_SLOTS: usize = 32;

/// The field cache slot of a name's address.
#[inline]
fn field_slot(addr: usize) -> usize {
    ((addr as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 59) as usize
}

/// A serde serializer writing one Sereal document.
///
/// ```
/// use serde::Serialize;
/// #[derive(Serialize)]
/// struct User { id: u32, name: String }
/// let mut out = Vec::new();
/// let mut ser = sereal::Serializer::new(&mut out, Default::default()).unwrap();
/// User { id: 1, name: "ann".into() }.serialize(&mut ser).unwrap();
/// ser.finish().unwrap();
/// assert_eq!(sereal::decode(&out).unwrap().get("name"), Some(sereal::Value::utf8("ann")));
/// ```
pub struct Serializer<'w> {
    opts: SerializerOptions,
    out: &'w mut Vec<u8>,
    doc_start: usize,
    body_start: usize,
    base: usize,
    // hash keys and deduplicated values, made at the first of either
    strings: Option<Box<Tables>>,
    // hashes begun (counting to 2), and the keys the first one wrote
    // before a second began: (position, length, utf8, offset)
    maps: u8,
    first_keys: Vec<(usize, u32, bool, u64)>,
    depth: usize,
    // Writes no COPY: for values serialized apart (sort_keys) and spliced in
    // elsewhere, where offsets would be wrong.
    no_copies: bool,
}

const MAX_DEPTH: usize = 10_000;

/// Refuses a protocol version or compression the serializer cannot write.
#[inline]
fn check_options(opts: &SerializerOptions) -> Result<()> {
    let v = opts.protocol_version;
    if v >= 6 {
        return Err(Error::new(ErrorKind::NoPublicSpec(v)));
    }
    if v == 0 {
        return Err(Error::new(ErrorKind::UnsupportedVersion(0)));
    }
    opts.framing().check(v)
}

impl<'w> Serializer<'w> {
    /// A serializer appending a document to `out`; call [`Serializer::finish`]
    /// after serializing the one value.
    #[inline]
    pub fn new(out: &'w mut Vec<u8>, opts: SerializerOptions) -> Result<Serializer<'w>> {
        check_options(&opts)?;
        Ok(Serializer::start(out, opts))
    }

    /// A serializer over `out` with options [`check_options`] accepted.
    #[inline(always)]
    fn start(out: &'w mut Vec<u8>, opts: SerializerOptions) -> Serializer<'w> {
        let v = opts.protocol_version;
        let doc_start = out.len();
        out.extend_from_slice(if v >= 3 {
            protocol::MAGIC_V3
        } else {
            protocol::MAGIC_V1
        });
        out.push(v);
        out.push(0);
        let body_start = out.len();
        let base = if v == 1 { doc_start } else { body_start - 1 };
        Serializer {
            opts,
            out,
            doc_start,
            body_start,
            base,
            strings: None,
            maps: 0,
            first_keys: Vec::new(),
            depth: 0,
            no_copies: false,
        }
    }

    /// Completes the document (compressing its body if the options say so).
    pub fn finish(self) -> Result<()> {
        self.opts.framing().finish(
            self.out,
            self.doc_start,
            self.body_start,
            self.opts.protocol_version,
        )
    }

    #[inline]
    fn offset(&self) -> u64 {
        (self.out.len() - self.base) as u64
    }

    #[inline]
    fn tag_varint(&mut self, t: u8, n: u64) {
        protocol::write_tag_varint(self.out, t, n);
    }

    #[inline]
    fn pv(&mut self, bytes: &[u8], utf8: bool) {
        protocol::write_pv(self.out, bytes, utf8);
    }

    fn string(&mut self, bytes: &[u8], utf8: bool) {
        if self.opts.dedupe_strings && !self.no_copies && bytes.len() > 3 {
            let here = self.offset();
            let values = &mut self.strings.get_or_insert_with(Default::default).values;
            match values.find(self.out, bytes, utf8) {
                Ok(off) => protocol::write_tag_varint(self.out, tag::COPY, off),
                Err(hash) => {
                    protocol::write_pv(self.out, bytes, utf8);
                    let pos = self.out.len() - bytes.len();
                    values.record(hash, pos, bytes.len(), utf8, here);
                }
            }
            return;
        }
        self.pv(bytes, utf8);
    }

    /// A struct field name: as [`Serializer::key`], with a cache keyed by
    /// the name's address, which is fixed for a `&'static str`.
    #[inline]
    fn field(&mut self, k: &'static str) {
        if self.no_copies {
            return self.pv(k.as_bytes(), !k.is_ascii());
        }
        let addr = k.as_ptr() as usize;
        let slot = field_slot(addr);
        if let Some(t) = &self.strings {
            let (a, len, off) = t.fields[slot];
            if a == addr && len == k.len() {
                self.tag_varint(tag::COPY, off);
                return;
            }
        }
        if let (Some(off), Some(t)) = (self.key(k), &mut self.strings) {
            t.fields[slot] = (addr, k.len(), off);
        }
    }

    /// A hash key, as Perl writes it: a byte string when ASCII, and a `COPY`
    /// of its first writing when repeated. Returns the offset of a COPY.
    fn key(&mut self, k: &str) -> Option<u64> {
        let utf8 = !k.is_ascii();
        if self.no_copies {
            self.pv(k.as_bytes(), utf8);
            return None;
        }
        let here = self.offset();
        if self.maps < 2 {
            // The keys of the document's first hash, while no other has
            // begun: one hash holds each key once, so they are only noted
            // here, and recorded when a second hash begins.
            protocol::write_pv(self.out, k.as_bytes(), utf8);
            let pos = self.out.len() - k.len();
            self.first_keys.push((pos, k.len() as u32, utf8, here));
            return None;
        }
        let keys = &mut self.strings.get_or_insert_with(Default::default).keys;
        match keys.find(self.out, k.as_bytes(), utf8) {
            Ok(off) => {
                protocol::write_tag_varint(self.out, tag::COPY, off);
                Some(off)
            }
            Err(hash) => {
                protocol::write_pv(self.out, k.as_bytes(), utf8);
                let pos = self.out.len() - k.len();
                keys.record(hash, pos, k.len(), utf8, here);
                None
            }
        }
    }

    /// A hash begins: from the second on, keys are recorded, the first
    /// hash's own ones included.
    fn begin_hash(&mut self, len: Option<usize>) {
        if self.no_copies {
            return;
        }
        if self.maps < 2 {
            self.maps += 1;
            if self.maps < 2 {
                return;
            }
            let keys = &mut self.strings.get_or_insert_with(Default::default).keys;
            keys.reserve(self.first_keys.len() + len.unwrap_or(0));
            for (pos, n, utf8, offset) in self.first_keys.drain(..) {
                let bytes = &self.out[pos..pos + n as usize];
                if let Err(hash) = keys.find(self.out, bytes, utf8) {
                    keys.record(hash, pos, n as usize, utf8, offset);
                }
            }
        } else if let (Some(n), Some(strings)) = (len, &mut self.strings) {
            strings.keys.reserve(n);
        }
    }

    #[inline]
    fn int(&mut self, i: i64) {
        protocol::write_int(self.out, i);
    }

    #[inline]
    fn uint(&mut self, u: u64) {
        protocol::write_uint(self.out, u);
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth >= MAX_DEPTH {
            return Err(Error::new(ErrorKind::DepthExceeded(MAX_DEPTH)));
        }
        Ok(())
    }

    /// Opens a container reference: `ARRAYREF_n`/`HASHREF_n` for a known
    /// count under 16, `REFN ARRAY/HASH n` otherwise. Returns where a count
    /// must be filled in later when it is not known now.
    fn open(&mut self, short: u8, long: u8, len: Option<usize>) -> Result<Option<usize>> {
        self.enter()?;
        match len {
            Some(n) if n < 16 => {
                self.out.push(short + n as u8);
                Ok(None)
            }
            Some(n) => {
                self.out.push(tag::REFN);
                self.tag_varint(long, n as u64);
                Ok(None)
            }
            None => {
                self.out.push(tag::REFN);
                self.out.push(long);
                let at = self.out.len();
                // A count patched in when the container ends: a padded varint.
                self.out.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x00]);
                Ok(Some(at))
            }
        }
    }

    /// Opens the one-key hash of a variant with content: `HASHREF_1` and
    /// the variant's name as its key.
    fn open_variant(&mut self, variant: &'static str) -> Result<()> {
        self.enter()?;
        self.out.push(tag::HASHREF_0 + 1);
        self.begin_hash(Some(1));
        self.field(variant);
        Ok(())
    }

    fn close(&mut self, patch: Option<usize>, count: usize) -> Result<()> {
        self.depth -= 1;
        if let Some(at) = patch {
            if count >= 1 << 35 {
                return Err(Error::new(ErrorKind::Invalid("container too large".into())));
            }
            let mut n = count as u64;
            for i in 0..5 {
                self.out[at + i] = (n as u8 & 0x7f) | if i < 4 { 0x80 } else { 0 };
                n >>= 7;
            }
        }
        Ok(())
    }
}

/// Serializes `value` as a Sereal document with the default options.
///
/// ```
/// let bytes = sereal::to_vec(&vec!["a", "b"]).unwrap();
/// assert_eq!(sereal::from_slice::<Vec<String>>(&bytes).unwrap(), ["a", "b"]);
/// ```
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    to_vec_with(value, &SerializerOptions::default())
}

/// Serializes `value` with `opts`.
pub fn to_vec_with<T: Serialize + ?Sized>(value: &T, opts: &SerializerOptions) -> Result<Vec<u8>> {
    check_options(opts)?;
    let mut out = Vec::with_capacity(128);
    let mut ser = Serializer::start(&mut out, opts.clone());
    value.serialize(&mut ser)?;
    ser.finish()?;
    Ok(out)
}

/// Serializes `value` into `writer` with the default options.
///
/// ```
/// let mut out = Vec::new();
/// sereal::to_writer(&mut out, &[1, 2]).unwrap();
/// assert_eq!(sereal::from_slice::<Vec<u8>>(&out).unwrap(), [1, 2]);
/// ```
pub fn to_writer<W: std::io::Write, T: Serialize + ?Sized>(writer: W, value: &T) -> Result<()> {
    to_writer_with(writer, value, &SerializerOptions::default())
}

/// Serializes `value` into `writer` with `opts`. A failed write is an
/// [`ErrorKind::Io`] error whose `source()` is the [`std::io::Error`].
///
/// ```
/// use sereal::{ser::SerializerOptions, Compression};
/// let opts = SerializerOptions::new().compress(Compression::Zstd).compress_threshold(0);
/// let mut out = Vec::new();
/// sereal::to_writer_with(&mut out, &vec!["abc"; 100], &opts).unwrap();
/// assert_eq!(out[4] >> 4, 4); // document type 4: zstd
/// ```
pub fn to_writer_with<W: std::io::Write, T: Serialize + ?Sized>(
    mut writer: W,
    value: &T,
    opts: &SerializerOptions,
) -> Result<()> {
    let bytes = to_vec_with(value, opts)?;
    writer.write_all(&bytes).map_err(|e| Error::io("write", e))
}

/// Serializes `value` into a [`Value`](crate::Value) graph: what
/// decoding [`to_vec`]'s output gives (the value goes through its encoding).
///
/// ```
/// let v = sereal::to_value(&std::collections::BTreeMap::from([("id", 7)])).unwrap();
/// assert_eq!(v.get("id"), Some(sereal::Value::from(7)));
/// ```
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<crate::Value> {
    Ok(crate::decode(&to_vec(value)?)?.into_value())
}

impl From<&crate::EncoderOptions> for SerializerOptions {
    /// The options of `opts` that apply to serde data, so one set of
    /// encoder options can serve both encoding paths.
    ///
    /// ```
    /// use sereal::{ser::SerializerOptions, EncoderOptions};
    /// let enc = EncoderOptions::new().protocol_version(3).sort_keys(true);
    /// let bytes = sereal::to_vec_with(&[1], &SerializerOptions::from(&enc)).unwrap();
    /// assert_eq!(bytes[4], 3);
    /// ```
    fn from(opts: &crate::EncoderOptions) -> SerializerOptions {
        SerializerOptions {
            protocol_version: opts.protocol_version,
            compress: opts.compress,
            compress_threshold: opts.compress_threshold,
            compress_level: opts.compress_level,
            legacy_snappy: opts.legacy_snappy,
            sort_keys: opts.sort_keys,
            dedupe_strings: opts.dedupe_strings,
        }
    }
}

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error::new(ErrorKind::Invalid(msg.to_string()))
    }
}

/// A hash key: a struct field name (fixed address) or other text.
#[derive(Clone, Copy)]
enum Key<'k> {
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
    variant: bool,
}

impl<'a, 'w> Compound<'a, 'w> {
    fn new(ser: &'a mut Serializer<'w>, patch: Option<usize>, map: bool) -> Self {
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

    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        self.count += 1;
        v.serialize(&mut *self.ser)
    }

    fn entry<T: Serialize + ?Sized>(&mut self, key: Key<'_>, v: &T) -> Result<()> {
        self.count += 1;
        if let Some(entries) = &mut self.sorted {
            let mut bytes = Vec::new();
            let opts = SerializerOptions {
                compress: Compression::None,
                ..self.ser.opts.clone()
            };
            let mut sub = Serializer::new(&mut bytes, opts)?;
            sub.no_copies = true;
            sub.depth = self.ser.depth;
            v.serialize(&mut sub)?;
            let body = bytes[6..].to_vec();
            entries.push((key.text().to_owned(), body));
            return Ok(());
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

macro_rules! seq_impls {
    ($($tr:ident :: $m:ident),*) => {$(
        impl ser::$tr for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn $m<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
                self.element(v)
            }
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
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key_buf.clear();
        key.serialize(KeySerializer(&mut self.key_buf))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        let key = std::mem::take(&mut self.key_buf);
        let r = self.entry(Key::Text(&key), v);
        self.key_buf = key;
        r
    }
    fn end(self) -> Result<()> {
        self.end_container()
    }
}

macro_rules! struct_impls {
    ($($tr:ident),*) => {$(
        impl ser::$tr for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<()> {
                self.entry(Key::Field(key), v)
            }
            fn end(self) -> Result<()> {
                self.end_container()
            }
        }
    )*};
}
struct_impls!(SerializeStruct, SerializeStructVariant);

impl<'a, 'w> ser::Serializer for &'a mut Serializer<'w> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, 'w>;
    type SerializeTuple = Compound<'a, 'w>;
    type SerializeTupleStruct = Compound<'a, 'w>;
    type SerializeTupleVariant = Compound<'a, 'w>;
    type SerializeMap = Compound<'a, 'w>;
    type SerializeStruct = Compound<'a, 'w>;
    type SerializeStructVariant = Compound<'a, 'w>;

    /// Sereal is a binary format: types with a compact form (addresses,
    /// UUIDs and the like) write it, as they do for bincode or MessagePack.
    fn is_human_readable(&self) -> bool {
        false
    }

    fn serialize_bool(self, v: bool) -> Result<()> {
        if self.opts.protocol_version >= 5 {
            self.out.push(if v { tag::YES } else { tag::NO });
        } else {
            self.out.push(if v { 1 } else { tag::SHORT_BINARY_0 });
        }
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<()> {
        self.int(v.into());
        Ok(())
    }
    fn serialize_i16(self, v: i16) -> Result<()> {
        self.int(v.into());
        Ok(())
    }
    fn serialize_i32(self, v: i32) -> Result<()> {
        self.int(v.into());
        Ok(())
    }
    fn serialize_i64(self, v: i64) -> Result<()> {
        self.int(v);
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result<()> {
        self.uint(v.into());
        Ok(())
    }
    fn serialize_u16(self, v: u16) -> Result<()> {
        self.uint(v.into());
        Ok(())
    }
    fn serialize_u32(self, v: u32) -> Result<()> {
        self.uint(v.into());
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> Result<()> {
        self.uint(v);
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<()> {
        self.out.push(tag::FLOAT);
        self.out.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
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
    fn serialize_char(self, v: char) -> Result<()> {
        self.string(v.encode_utf8(&mut [0; 4]).as_bytes(), true);
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<()> {
        self.string(v.as_bytes(), true);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        self.string(v, false);
        Ok(())
    }
    fn serialize_none(self) -> Result<()> {
        self.out.push(tag::UNDEF);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<()> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<()> {
        self.serialize_none()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<()> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<()> {
        v.serialize(self)
    }
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
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a, 'w>> {
        let patch = self.open(tag::ARRAYREF_0, tag::ARRAY, len)?;
        Ok(Compound::new(self, patch, false))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, 'w>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'a, 'w>> {
        self.serialize_seq(Some(len))
    }
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
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a, 'w>> {
        let patch = self.open(tag::HASHREF_0, tag::HASH, len)?;
        self.begin_hash(len);
        Ok(Compound::new(self, patch, true))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'a, 'w>> {
        self.serialize_map(Some(len))
    }
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

/// Writes a map key, as the text Perl would use as a hash key, into a buffer.
struct KeySerializer<'b>(&'b mut String);

macro_rules! key_to_string {
    ($($m:ident: $t:ty),*) => {$(
        fn $m(self, v: $t) -> Result<()> {
            use std::fmt::Write;
            write!(self.0, "{v}").map_err(ser::Error::custom)
        }
    )*};
}

impl ser::Serializer for KeySerializer<'_> {
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

    fn serialize_str(self, v: &str) -> Result<()> {
        self.0.push_str(v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        let text = std::str::from_utf8(v)
            .map_err(|_| <Error as ser::Error>::custom("a hash key must be text"))?;
        self.0.push_str(text);
        Ok(())
    }
    fn serialize_none(self) -> Result<()> {
        Err(ser::Error::custom("a hash key cannot be None"))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<()> {
        Err(ser::Error::custom("a hash key cannot be ()"))
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<()> {
        self.0.push_str(name);
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<()> {
        self.0.push_str(variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<()> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct> {
        Err(ser::Error::custom("a hash key must be a string or number"))
    }
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
