//! Serde serialization straight to Sereal bytes.
//!
//! Structs and maps become hashes (field names as keys, repeated keys written
//! as `COPY` as Perl does), sequences and tuples arrays, `None` and `()`
//! undef, unit variants strings, other variants one-key hashes (serde_json's
//! externally tagged shape), a [`Blessed`](crate::Blessed) (or a blessed
//! `Value`) an `OBJECT`/`OBJECTV` before its reference. No value graph is
//! built on the way.
//!
//! # Scalars: what is written, and what Perl sees
//!
//! Each Rust scalar is written as Perl writes the scalar it would hold, and
//! [`to_value`] and [`Value::from`](crate::Value::from) give the graph that
//! encodes to the same tags (`tests/perl_scalars.rs` checks Perl's view of
//! each row with Perl's Sereal):
//!
//! | Rust | Written as | `to_value` / `Value::from` | Perl sees |
//! |---|---|---|---|
//! | `String`, `&str`, `char`, a unit variant, ASCII | `SHORT_BINARY`/`BINARY` | `Value::Bytes` | a string, no UTF-8 flag (as Perl's own `"abc"`) |
//! | the same, not ASCII | `STR_UTF8` | `Value::Utf8` | a string with the UTF-8 flag |
//! | `&[u8]` (`serde_bytes`) | `SHORT_BINARY`/`BINARY` | `Value::Bytes` | a byte string |
//! | `i8`..`i64`, `u8`..`u64` (`i128`/`u128` that fit) | `POS`/`NEG`/`VARINT`/`ZIGZAG` | `Value::Int` (`UInt` past `i64::MAX`) | an integer (`IOK`) |
//! | `f32`; `f64` that single precision holds | `FLOAT` | `Value::Float` | a number (`NOK`) |
//! | other `f64` | `DOUBLE` | `Value::Double` (`Value::from(f64)`, which the encoder writes as `FLOAT` when it can) | a number (`NOK`) |
//! | `bool` | `YES`/`NO` (protocol 5); `1`/`""` before | `Value::Bool` | Perl's booleans: `1` and `""`, numerically 1 and 0 (`builtin::is_bool` from Perl 5.36) |
//! | `None`, `()`, a unit struct | `UNDEF` | `Value::Undef` | undef |
//! | `Some(v)` | as `v` | as `v` | as `v` |
//!
//! A `bool` stays a boolean: Perl's own `!!1` and `!!0` (5.36 writes them as
//! `TRUE`/`FALSE`, which its decoder reads as it reads `YES`/`NO`), so a
//! self-describing reader (`sereal::Value`, `serde_json::Value`, the JSON
//! conversion) still sees `true` and `false`. Perl prints the false one as
//! `""`; a Perl reader that wants the `0`/`1` it wrote itself gets them
//! from a field written with [`perl_flag`]. Both read back into a `bool`.

use crate::compress::{self, Compression};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, tag};
use hashbrown::HashTable;
use serde::ser::{self, Serialize};
use smallvec::SmallVec;
use std::hash::{BuildHasher, Hasher};

// The containers of a serializer writing bytes: all one `Compound`.
macro_rules! compound_types {
    ($a:lifetime, $w:lifetime) => {
        type SerializeSeq = Compound<$a, $w>;
        type SerializeTuple = Compound<$a, $w>;
        type SerializeTupleStruct = Compound<$a, $w>;
        type SerializeTupleVariant = Compound<$a, $w>;
        type SerializeMap = Compound<$a, $w>;
        type SerializeStruct = Compound<$a, $w>;
        type SerializeStructVariant = Compound<$a, $w>;
    };
}

mod compound;
mod key;
mod object;
mod options;
mod serializer;
mod strings;
mod value;

pub use compound::Compound;
use key::KeySerializer;
pub use options::SerializerOptions;
use strings::Tables;
pub use value::to_value;

/// Writes a `bool` as Perl code keeps a flag, the integer `1` or `0`
/// (Perl prints `0` for false, where it prints `""` for a boolean): for
/// `#[serde(serialize_with = "sereal::ser::perl_flag")]`. The field reads
/// back into a `bool` as it is.
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
/// struct Row { #[serde(serialize_with = "sereal::ser::perl_flag")] active: bool }
/// let bytes = sereal::to_vec(&Row { active: false }).unwrap();
/// assert_eq!(sereal::decode(&bytes).unwrap().get("active"), Some(sereal::Value::from(0)));
/// assert_eq!(sereal::from_slice::<Row>(&bytes).unwrap(), Row { active: false });
/// ```
pub fn perl_flag<S: ser::Serializer>(v: &bool, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_u8(u8::from(*v))
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
/// assert_eq!(sereal::decode(&out).unwrap().get("name"), Some(sereal::Value::from("ann")));
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
    // before a second began: (position, length, utf8, offset); a small
    // first hash (a document of one map) records them without allocating
    maps: u8,
    first_keys: SmallVec<[(usize, u32, bool, u64); 16]>,
    depth: usize,
    // Writes no COPY: for values serialized apart (sort_keys) and spliced in
    // elsewhere, where offsets would be wrong.
    no_copies: bool,
    // Writes every hash key in full: no_copies, or `no_shared_hashkeys`.
    plain_keys: bool,
}

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
    ///
    /// ```
    /// use serde::Serialize;
    /// use sereal::ser::SerializerOptions;
    /// use sereal::Serializer;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let mut out = b"frame:".to_vec(); // appends after what is there
    /// let mut ser = Serializer::new(&mut out, SerializerOptions::new().protocol_version(3))?;
    /// (1, "two").serialize(&mut ser)?;
    /// ser.finish()?;
    /// assert_eq!(&out[..11], b"frame:=\xF3rl\x03");
    /// let back: (u8, String) = sereal::from_slice(&out[6..])?;
    /// assert_eq!(back, (1, "two".to_string()));
    /// assert!(Serializer::new(&mut Vec::new(), SerializerOptions::new().protocol_version(9)).is_err());
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn new(out: &'w mut Vec<u8>, opts: SerializerOptions) -> Result<Serializer<'w>> {
        check_options(&opts)?;
        Ok(Serializer::start(out, opts))
    }

    /// A serializer over `out` with options [`check_options`] accepted.
    #[inline(always)]
    fn start(out: &'w mut Vec<u8>, opts: SerializerOptions) -> Serializer<'w> {
        let v = opts.protocol_version;
        let plain_keys = opts.no_shared_hashkeys;
        let doc_start = out.len();
        protocol::write_magic(out, v);
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
            first_keys: SmallVec::new(),
            depth: 0,
            no_copies: false,
            plain_keys,
        }
    }

    /// Completes the document (compressing its body if the options say so).
    ///
    /// ```
    /// use serde::Serialize;
    /// use sereal::ser::SerializerOptions;
    /// use sereal::{Compression, Serializer};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let opts = SerializerOptions::new().compress(Compression::Zstd).compress_threshold(0);
    /// let mut out = Vec::new();
    /// let mut ser = Serializer::new(&mut out, opts)?;
    /// vec!["same text"; 50].serialize(&mut ser)?;
    /// ser.finish()?; // compresses the body written so far
    /// assert_eq!(out[4], 0x45); // zstd, protocol 5
    /// assert_eq!(sereal::from_slice::<Vec<String>>(&out)?.len(), 50);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn finish(self) -> Result<()> {
        // The common case in line: the serializer is large (its first
        // hash's keys are noted inline), and framing it out of line costs
        // some 50 instructions a document even when there is nothing to do.
        if self.opts.compress == Compression::None {
            return Ok(());
        }
        self.finish_framing()
    }

    #[inline(never)]
    fn finish_framing(self) -> Result<()> {
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

    #[inline]
    fn string(&mut self, bytes: &[u8], utf8: bool) {
        if self.dedupes(bytes) {
            return self.deduped_string(bytes, utf8);
        }
        self.pv(bytes, utf8);
    }

    /// Text, as Perl writes its strings: ASCII without the UTF-8 flag.
    #[inline]
    fn text(&mut self, s: &str) {
        if self.dedupes(s.as_bytes()) {
            return self.deduped_string(s.as_bytes(), !s.is_ascii());
        }
        protocol::write_text(self.out, s);
    }

    /// Whether a string value of these bytes is written through the
    /// `dedupe_strings` table (those of 3 bytes or fewer never gain).
    #[inline(always)]
    fn dedupes(&self, bytes: &[u8]) -> bool {
        self.opts.dedupe_strings && !self.no_copies && bytes.len() > 3
    }

    /// A string with `dedupe_strings`: a `COPY` of an equal one written
    /// before, or the string, recorded.
    #[inline(never)]
    fn deduped_string(&mut self, bytes: &[u8], utf8: bool) {
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
    }

    /// A struct field name: as [`Serializer::key`], with a cache keyed by
    /// the name's address, which is fixed for a `&'static str`.
    #[inline]
    fn field(&mut self, k: &'static str) {
        if self.plain_keys {
            return self.pv(k.as_bytes(), !k.is_ascii());
        }
        let addr = k.as_ptr() as usize;
        if let Some(off) = self
            .strings
            .as_ref()
            .and_then(|t| t.fields.get(addr, k.len()))
        {
            self.tag_varint(tag::COPY, off);
            return;
        }
        if let (Some(off), Some(t)) = (self.key(k), &mut self.strings) {
            t.fields.put(addr, k.len(), off);
        }
    }

    /// A hash key, as Perl writes it: a byte string when ASCII, and a `COPY`
    /// of its first writing when repeated. Returns the offset of a COPY.
    #[inline]
    fn key(&mut self, k: &str) -> Option<u64> {
        let utf8 = !k.is_ascii();
        if self.plain_keys {
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
    #[inline]
    fn begin_hash(&mut self, len: Option<usize>) {
        if self.plain_keys {
            return;
        }
        if self.maps < 2 {
            return self.begin_early_hash(len);
        }
        if let (Some(n), Some(strings)) = (len, &mut self.strings) {
            strings.keys.reserve(n);
        }
    }

    /// [`Serializer::begin_hash`] of the document's first and second hash.
    #[inline(never)]
    fn begin_early_hash(&mut self, len: Option<usize>) {
        match self.maps {
            0 => self.maps = 1,
            _ => {
                self.maps = 2;
                let keys = &mut self.strings.get_or_insert_with(Default::default).keys;
                keys.reserve(self.first_keys.len() + len.unwrap_or(0));
                for (pos, n, utf8, offset) in self.first_keys.drain(..) {
                    let bytes = &self.out[pos..pos + n as usize];
                    if let Err(hash) = keys.find(self.out, bytes, utf8) {
                        keys.record(hash, pos, n as usize, utf8, offset);
                    }
                }
            }
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

    #[inline]
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth >= protocol::depth_limit(self.opts.max_recursion_depth) {
            return Err(Error::new(ErrorKind::DepthExceeded(
                self.opts.max_recursion_depth,
            )));
        }
        Ok(())
    }

    /// Opens a container reference: `ARRAYREF_n`/`HASHREF_n` for a known
    /// count under 16, `REFN ARRAY/HASH n` otherwise. Returns where a count
    /// must be filled in later when it is not known now.
    #[inline]
    fn open(&mut self, short: u8, long: u8, len: Option<usize>) -> Result<Option<usize>> {
        self.enter()?;
        match len {
            Some(n) if n < 16 => {
                self.out.push(short + n as u8);
                Ok(None)
            }
            _ => self.open_long(long, len),
        }
    }

    /// [`Serializer::open`] of a container of 16 or more, or of an unknown
    /// count.
    #[inline(never)]
    fn open_long(&mut self, long: u8, len: Option<usize>) -> Result<Option<usize>> {
        match len {
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
                return Err(Error::new(ErrorKind::LimitExceeded(
                    "container too large".into(),
                )));
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
    to_vec_with(value, SerializerOptions::default())
}

/// Serializes `value` with `opts`: [`SerializerOptions`], or the
/// [`EncoderOptions`](crate::EncoderOptions) the value encoder takes.
///
/// ```
/// use sereal::{Compression, EncoderOptions};
/// let opts = EncoderOptions::new().compress(Compression::Zstd).compress_threshold(0);
/// let bytes = sereal::to_vec_with(&vec!["abc"; 100], &opts).unwrap();
/// assert_eq!(bytes[4] >> 4, 4); // document type 4: zstd
/// assert_eq!(sereal::from_slice::<Vec<String>>(&bytes).unwrap(), ["abc"; 100]);
/// ```
#[inline]
pub fn to_vec_with<T: Serialize + ?Sized>(
    value: &T,
    opts: impl Into<SerializerOptions>,
) -> Result<Vec<u8>> {
    // In line, so that `to_vec`'s options are constants here rather than a
    // struct its caller stores field by field and this reads back wide.
    let opts = opts.into();
    check_options(&opts)?;
    let mut out = Vec::with_capacity(128);
    let mut ser = Serializer::start(&mut out, opts);
    value.serialize(&mut ser)?;
    ser.finish()?;
    // The vector goes back as its three words, each read as it was stored
    // (`black_box` keeps the reads apart): moved whole, it is copied with a
    // wide load over two of those stores, which waits until they are done,
    // a third of a tiny document's time.
    let mut out = std::mem::ManuallyDrop::new(out);
    let ptr = std::hint::black_box(out.as_mut_ptr());
    let cap = std::hint::black_box(out.capacity());
    // SAFETY: the parts of a vector that is not dropped.
    Ok(unsafe { Vec::from_raw_parts(ptr, out.len(), cap) })
}

/// Serializes `value` into `writer` with the default options.
///
/// ```
/// let mut out = Vec::new();
/// sereal::to_writer(&mut out, &[1, 2]).unwrap();
/// assert_eq!(sereal::from_slice::<Vec<u8>>(&out).unwrap(), [1, 2]);
/// ```
pub fn to_writer<W: std::io::Write, T: Serialize + ?Sized>(writer: W, value: &T) -> Result<()> {
    to_writer_with(writer, value, SerializerOptions::default())
}

/// Serializes `value` into `writer` with `opts` (as [`to_vec_with`]). A failed write is an
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
    opts: impl Into<SerializerOptions>,
) -> Result<()> {
    let bytes = to_vec_with(value, opts)?;
    writer.write_all(&bytes).map_err(|e| Error::io("write", e))
}
