//! The single-pass encoder.
//!
//! The encoder walks the graph once, writing into one output buffer, and
//! makes every choice Perl's `Sereal::Encoder` makes for the same data and
//! options: which nodes to track (by reference count), `REFN ARRAY` versus
//! `ARRAYREF_n`, `REFP`/`ALIAS`/`COPY`/`OBJECTV` placement, float widths.

use crate::compress::{self, Compression};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, tag, TRACK_FLAG};
use crate::value::{Body, Key, Node, Value};
use hashbrown::hash_map::Entry;
use hashbrown::{HashMap, HashTable};
use std::hash::{BuildHasher, Hasher};
use std::rc::Rc;

/// Encoder options, with the names and meaning of Perl's `Sereal::Encoder`
/// options.
///
/// ```
/// use sereal::{Compression, EncoderOptions};
/// let opts = EncoderOptions::new()
///     .protocol_version(3)
///     .sort_keys(true)
///     .compress(Compression::Zstd);
/// assert_eq!(opts.protocol_version, 3);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct EncoderOptions {
    /// Protocol version to write, 1 to 5 (default 5). Version 6 and later
    /// have no public specification and are refused.
    pub protocol_version: u8,
    /// Body compression (default none).
    pub compress: Compression,
    /// Bodies shorter than this many bytes are not compressed (default 1024).
    pub compress_threshold: usize,
    /// Compression level: zlib 1 to 10 (default 6), zstd 1 to 22 (default 3).
    pub compress_level: Option<i32>,
    /// Write hash keys sorted (by length, UTF-8 keys first, then bytes), as
    /// Perl's `sort_keys => 1`.
    pub sort_keys: bool,
    /// Never use the `ARRAYREF_n`/`HASHREF_n` short forms.
    pub canonical_refs: bool,
    /// Write a repeated string value (over 3 bytes) as `COPY` of the first.
    pub dedupe_strings: bool,
    /// As `dedupe_strings`, but with `ALIAS` (implies `dedupe_strings`).
    pub aliased_dedupe_strings: bool,
    /// Write every hash key in full instead of `COPY` of an earlier one.
    pub no_shared_hashkeys: bool,
    /// Refuse blessed objects with an error.
    pub croak_on_bless: bool,
    /// Write blessed objects as their plain referents.
    pub no_bless_objects: bool,
    /// Write long doubles as doubles (kept for option parity: this
    /// implementation's floats are doubles at most).
    pub use_standard_double: bool,
    /// Maximum nesting of references (default 10000, as Perl).
    pub max_recursion_depth: usize,
}

impl Default for EncoderOptions {
    fn default() -> Self {
        EncoderOptions {
            protocol_version: protocol::PROTOCOL_VERSION,
            compress: Compression::None,
            compress_threshold: 1024,
            compress_level: None,
            sort_keys: false,
            canonical_refs: false,
            dedupe_strings: false,
            aliased_dedupe_strings: false,
            no_shared_hashkeys: false,
            croak_on_bless: false,
            no_bless_objects: false,
            use_standard_double: false,
            max_recursion_depth: 10_000,
        }
    }
}

macro_rules! setters {
    ($($(#[$m:meta])* $name:ident: $t:ty),* $(,)?) => {$(
        $(#[$m])*
        pub fn $name(mut self, v: $t) -> Self {
            self.$name = v;
            self
        }
    )*};
}

impl EncoderOptions {
    /// The defaults (those of Perl's encoder).
    pub fn new() -> Self {
        Self::default()
    }

    setters! {
        /// Sets `protocol_version`.
        protocol_version: u8,
        /// Sets `compress`.
        compress: Compression,
        /// Sets `compress_threshold`.
        compress_threshold: usize,
        /// Sets `compress_level`.
        compress_level: Option<i32>,
        /// Sets `sort_keys`.
        sort_keys: bool,
        /// Sets `canonical_refs`.
        canonical_refs: bool,
        /// Sets `dedupe_strings`.
        dedupe_strings: bool,
        /// Sets `aliased_dedupe_strings`.
        aliased_dedupe_strings: bool,
        /// Sets `no_shared_hashkeys`.
        no_shared_hashkeys: bool,
        /// Sets `croak_on_bless`.
        croak_on_bless: bool,
        /// Sets `no_bless_objects`.
        no_bless_objects: bool,
        /// Sets `use_standard_double`.
        use_standard_double: bool,
        /// Sets `max_recursion_depth`.
        max_recursion_depth: usize,
    }

    /// Perl's `canonical`: sets both `sort_keys` and `canonical_refs`.
    pub fn canonical(mut self, on: bool) -> Self {
        self.sort_keys = on;
        self.canonical_refs = on;
        self
    }

    fn validate(&self) -> Result<()> {
        let v = self.protocol_version;
        if v >= 6 {
            return Err(Error::new(ErrorKind::NoPublicSpec(v)));
        }
        if v == 0 {
            return Err(Error::new(ErrorKind::UnsupportedVersion(v)));
        }
        compress::check(self.compress, v, self.compress_level)
    }
}

/// The identity hasher for seen tables keyed by addresses.
#[derive(Default, Clone, Copy)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

impl BuildHasher for AddrHasher {
    type Hasher = AddrHasher;
    fn build_hasher(&self) -> AddrHasher {
        AddrHasher(0)
    }
}

type AddrMap = HashMap<usize, u64, AddrHasher>;

/// String values already written, for `dedupe_strings`: the strings are
/// copied into one arena so the table owns what it compares.
#[derive(Default)]
struct Dedupe {
    arena: Vec<u8>,
    // (hash, arena start, length, utf8 key flag, body offset)
    table: HashTable<(u64, usize, usize, bool, u64)>,
    hasher: hashbrown::DefaultHashBuilder,
}

impl Dedupe {
    fn clear(&mut self) {
        self.arena.clear();
        self.table.clear();
    }

    /// The offset of an equal string written before, or `None` after
    /// recording this one at `offset`. Equality is Perl's hash-key equality:
    /// a UTF-8 string equals the byte string of its Latin-1 downgrade.
    fn find_or_insert(&mut self, bytes: &[u8], utf8: bool, offset: u64) -> Option<u64> {
        let downgraded;
        let (key, key_utf8): (&[u8], bool) = if utf8 && !bytes.is_ascii() {
            match latin1_downgrade(bytes) {
                Some(d) => {
                    downgraded = d;
                    (&downgraded, false)
                }
                None => (bytes, true),
            }
        } else {
            (bytes, false)
        };
        let mut h = self.hasher.build_hasher();
        h.write(key);
        h.write_u8(key_utf8 as u8);
        let hash = h.finish();
        let arena = &self.arena;
        if let Some(e) = self.table.find(hash, |e| {
            e.0 == hash && e.3 == key_utf8 && &arena[e.1..e.1 + e.2] == key
        }) {
            return Some(e.4);
        }
        let start = self.arena.len();
        self.arena.extend_from_slice(key);
        self.table
            .insert_unique(hash, (hash, start, key.len(), key_utf8, offset), |e| e.0);
        None
    }
}

fn latin1_downgrade(utf8: &[u8]) -> Option<Vec<u8>> {
    let s = std::str::from_utf8(utf8).ok()?;
    s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect()
}

/// The encoder's per-document state, kept between documents so its tables'
/// memory is reused.
struct Seen {
    refs: AddrMap,
    weak: AddrMap,
    keys: AddrMap,
    // a direct-mapped cache in front of `keys`: (key address, offset)
    key_cache: Box<[(usize, u64); KEY_CACHE]>,
    classes: AddrMap,
    objects: AddrMap,
    dedupe: Dedupe,
}

const KEY_CACHE: usize = 64;

impl Default for Seen {
    fn default() -> Seen {
        Seen {
            refs: AddrMap::default(),
            weak: AddrMap::default(),
            keys: AddrMap::default(),
            key_cache: Box::new([(0, 0); KEY_CACHE]),
            classes: AddrMap::default(),
            objects: AddrMap::default(),
            dedupe: Dedupe::default(),
        }
    }
}

impl Seen {
    fn clear(&mut self) {
        self.refs.clear();
        self.weak.clear();
        self.keys.clear();
        self.key_cache.fill((0, 0));
        self.classes.clear();
        self.objects.clear();
        self.dedupe.clear();
    }
}

/// A reusable Sereal encoder.
///
/// ```
/// use sereal::{Encoder, EncoderOptions, Value};
/// let mut enc = Encoder::new(EncoderOptions::new().protocol_version(5)).unwrap();
/// let bytes = enc.encode(&Value::array([1, 2])).unwrap();
/// assert_eq!(bytes, b"=\xF3rl\x05\x00\x42\x01\x02");
/// ```
pub struct Encoder {
    opts: EncoderOptions,
    seen: Seen,
    scratch: Vec<u8>,
    // size of the last document, the starting capacity of the next one
    size_hint: usize,
}

/// How the encoder reached a node.
#[derive(Clone, Copy)]
enum Via {
    /// The node is the slot itself: a repeat is an `ALIAS`.
    Slot,
    /// Through a reference whose bytes start at this buffer position: a
    /// repeat rewinds there and writes `REFP`.
    Ref { rewrite: usize },
}

struct Writer<'e> {
    opts: &'e EncoderOptions,
    seen: &'e mut Seen,
    out: &'e mut Vec<u8>,
    base: usize,
    depth: usize,
}

impl Encoder {
    /// An encoder with `options`; errors on an invalid combination.
    pub fn new(options: EncoderOptions) -> Result<Encoder> {
        options.validate()?;
        Ok(Encoder {
            opts: options,
            seen: Seen::default(),
            scratch: Vec::new(),
            size_hint: 64,
        })
    }

    /// The options in use.
    pub fn options(&self) -> &EncoderOptions {
        &self.opts
    }

    /// Encodes `value` as a complete document.
    pub fn encode(&mut self, value: &Value) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.size_hint);
        self.encode_to(value, None, &mut out)?;
        Ok(out)
    }

    /// Encodes `value` with `header` as the document's user header data
    /// (protocol 2 and later).
    ///
    /// ```
    /// use sereal::{Decoder, Encoder, Value};
    /// let mut enc = Encoder::new(Default::default()).unwrap();
    /// let doc = enc.encode_with_header(&Value::from(1), &Value::from("meta")).unwrap();
    /// let (header, body) = Decoder::default().decode_with_header(&doc).unwrap();
    /// assert_eq!(header, Some(Value::from("meta")));
    /// assert_eq!(body, Value::from(1));
    /// ```
    pub fn encode_with_header(&mut self, value: &Value, header: &Value) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.size_hint);
        self.encode_to(value, Some(header), &mut out)?;
        Ok(out)
    }

    /// Appends the document for `value` (and optional user header data) to
    /// `out`. On error `out` is left as it was.
    pub fn encode_to(
        &mut self,
        value: &Value,
        header: Option<&Value>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let start = out.len();
        let r = self.encode_inner(value, header, out);
        self.seen.clear();
        match r {
            Ok(()) => self.size_hint = (out.len() - start).max(64),
            Err(_) => out.truncate(start),
        }
        r
    }

    fn encode_inner(
        &mut self,
        value: &Value,
        header: Option<&Value>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let version = self.opts.protocol_version;
        let doc_start = out.len();
        out.extend_from_slice(if version >= 3 {
            protocol::MAGIC_V3
        } else {
            protocol::MAGIC_V1
        });
        out.push(version);
        match header {
            None => out.push(0),
            Some(h) => {
                if version < 2 {
                    return Err(Error::new(ErrorKind::BadOption(
                        "user header data needs protocol version 2 or later".into(),
                    )));
                }
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.clear();
                let r = self.write_body(h, &mut scratch, 0);
                self.seen.clear();
                if let Err(e) = r {
                    self.scratch = scratch;
                    return Err(e);
                }
                protocol::write_varint(out, scratch.len() as u64 + 1);
                out.push(protocol::HEADER_USER_DATA);
                out.extend_from_slice(&scratch);
                self.scratch = scratch;
            }
        }
        let body_start = out.len();
        // Protocol 1 offsets count from the document start, later ones from
        // the byte before the body (so the first body byte is offset 1).
        let base = if version == 1 {
            doc_start
        } else {
            body_start - 1
        };
        self.write_body(value, out, base)?;
        if self.opts.compress != Compression::None
            && out.len() - body_start >= self.opts.compress_threshold
        {
            let framed = compress::compress_body(
                self.opts.compress,
                self.opts.compress_level,
                &out[body_start..],
            )?;
            if let Some(framed) = framed {
                out.truncate(body_start);
                out.extend_from_slice(&framed);
                out[doc_start + 4] = version | (self.opts.compress.doc_type() << 4);
            }
        }
        Ok(())
    }

    fn write_body(&mut self, value: &Value, out: &mut Vec<u8>, base: usize) -> Result<()> {
        let mut w = Writer {
            opts: &self.opts,
            seen: &mut self.seen,
            out,
            base,
            depth: 0,
        };
        w.enter()?;
        w.value(value)?;
        w.fix_weak_refs();
        Ok(())
    }
}

/// Encodes `value` with the default options.
///
/// ```
/// let bytes = sereal::encode(&sereal::Value::from("hi")).unwrap();
/// assert_eq!(&bytes[6..], b"\x62hi");
/// ```
pub fn encode(value: &Value) -> Result<Vec<u8>> {
    Encoder::new(EncoderOptions::default())?.encode(value)
}

/// Encodes `value` with `options`.
pub fn encode_with(value: &Value, options: &EncoderOptions) -> Result<Vec<u8>> {
    Encoder::new(options.clone())?.encode(value)
}

impl Writer<'_> {
    #[inline]
    fn offset(&self) -> u64 {
        (self.out.len() - self.base) as u64
    }

    #[inline]
    fn tag_varint(&mut self, t: u8, n: u64) {
        self.out.push(t);
        protocol::write_varint(self.out, n);
    }

    #[inline]
    fn set_track_flag(&mut self, offset: u64) {
        self.out[self.base + offset as usize] |= TRACK_FLAG;
    }

    #[inline]
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth >= self.opts.max_recursion_depth {
            return Err(Error::new(ErrorKind::DepthExceeded(
                self.opts.max_recursion_depth,
            )));
        }
        Ok(())
    }

    fn fix_weak_refs(&mut self) {
        // A node reached only through weak references would not survive
        // decoding: its last WEAKEN becomes PAD, making that reference strong.
        // Perl's encoder also drops the track flag the WEAKEN may carry,
        // leaving later REFP/ALIAS to that slot dangling; the flag is kept
        // here, which Perl's decoder reads as tracking the slot.
        for &off in self.seen.weak.values() {
            if off != 0 {
                let byte = &mut self.out[self.base + off as usize];
                *byte = tag::PAD | (*byte & TRACK_FLAG);
            }
        }
    }

    fn value(&mut self, v: &Value) -> Result<()> {
        let version = self.opts.protocol_version;
        match v {
            Value::Undef => self.out.push(tag::UNDEF),
            Value::CanonicalUndef => self.out.push(if version >= 3 {
                tag::CANONICAL_UNDEF
            } else {
                tag::UNDEF
            }),
            Value::Bool(b) => self.write_bool(*b),
            Value::True => self.out.push(tag::TRUE),
            Value::False => self.out.push(tag::FALSE),
            Value::Int(i) => self.write_int(*i),
            Value::UInt(u) => self.write_uint(*u),
            Value::Float(f) => {
                self.out.push(tag::FLOAT);
                self.out.extend_from_slice(&f.to_le_bytes());
            }
            Value::Double(d) => self.write_double(*d),
            Value::LongDouble(b) => {
                self.out.push(tag::LONG_DOUBLE);
                self.out.extend_from_slice(&b[..]);
            }
            Value::Float128(b) => {
                self.out.push(tag::FLOAT_128);
                self.out.extend_from_slice(&b[..]);
            }
            Value::Bytes(s) => self.write_string(s.as_bytes(), false),
            Value::Utf8(s) => self.write_string(s.as_bytes(), true),
            Value::Ref(r) => {
                self.enter()?;
                self.write_ref(&r.0, Rc::strong_count(&r.0), Rc::weak_count(&r.0), false)?;
                self.depth -= 1;
            }
            Value::Weak(w) => {
                let strong = w.0.strong_count();
                if strong == 0 {
                    // The node is gone: Perl sees an undefined value.
                    self.out.push(tag::UNDEF);
                } else {
                    self.enter()?;
                    // SAFETY: the strong count is non-zero, and no user code
                    // runs while the encoder holds this reference.
                    let node = unsafe { &*w.0.as_ptr() };
                    self.write_ref(node, strong, w.0.weak_count(), true)?;
                    self.depth -= 1;
                }
            }
            Value::Alias(r) => {
                self.enter()?;
                let (strong, weak) = (Rc::strong_count(&r.0), Rc::weak_count(&r.0));
                self.write_node(&r.0, strong, weak, 0, Via::Slot)?;
                self.depth -= 1;
            }
        }
        Ok(())
    }

    #[inline]
    fn write_bool(&mut self, b: bool) {
        if self.opts.protocol_version >= 5 {
            self.out.push(if b { tag::YES } else { tag::NO });
        } else {
            // Perl's booleans before protocol 5: 1 and the empty string.
            self.out.push(if b {
                tag::POS_0 + 1
            } else {
                tag::SHORT_BINARY_0
            });
        }
    }

    #[inline]
    fn write_int(&mut self, i: i64) {
        if i >= 0 {
            self.write_uint(i as u64);
        } else if i >= -16 {
            self.out.push((i + 32) as u8);
        } else {
            self.tag_varint(tag::ZIGZAG, protocol::zigzag_encode(i));
        }
    }

    #[inline]
    fn write_uint(&mut self, u: u64) {
        if u <= 15 {
            self.out.push(u as u8);
        } else {
            self.tag_varint(tag::VARINT, u);
        }
    }

    fn write_double(&mut self, d: f64) {
        let f = d as f32;
        if f64::from(f) == d || d.is_nan() {
            self.out.push(tag::FLOAT);
            self.out.extend_from_slice(&f.to_le_bytes());
        } else {
            self.out.push(tag::DOUBLE);
            self.out.extend_from_slice(&d.to_le_bytes());
        }
    }

    fn write_string(&mut self, bytes: &[u8], utf8: bool) {
        if (self.opts.dedupe_strings || self.opts.aliased_dedupe_strings) && bytes.len() > 3 {
            let here = self.offset();
            if let Some(off) = self.seen.dedupe.find_or_insert(bytes, utf8, here) {
                if self.opts.aliased_dedupe_strings {
                    self.set_track_flag(off);
                    self.tag_varint(tag::ALIAS, off);
                } else {
                    self.tag_varint(tag::COPY, off);
                }
                return;
            }
        }
        self.write_pv(bytes, utf8);
    }

    #[inline]
    fn write_pv(&mut self, bytes: &[u8], utf8: bool) {
        let n = bytes.len();
        if utf8 {
            self.tag_varint(tag::STR_UTF8, n as u64);
        } else if n <= 31 {
            self.out.push(tag::SHORT_BINARY_0 | n as u8);
        } else {
            self.tag_varint(tag::BINARY, n as u64);
        }
        self.out.extend_from_slice(bytes);
    }

    #[inline]
    fn write_key(&mut self, k: &Key) {
        if !self.opts.no_shared_hashkeys && k.may_repeat() {
            let addr = k.addr();
            let slot = (addr >> 4) % KEY_CACHE;
            let (cached, off) = self.seen.key_cache[slot];
            if cached == addr {
                self.tag_varint(tag::COPY, off);
                return;
            }
            let here = self.offset();
            match self.seen.keys.entry(addr) {
                Entry::Occupied(e) => {
                    let off = *e.get();
                    self.seen.key_cache[slot] = (addr, off);
                    self.tag_varint(tag::COPY, off);
                    return;
                }
                Entry::Vacant(e) => {
                    e.insert(here);
                }
            }
        }
        self.write_pv(k.as_bytes(), k.is_utf8());
    }

    /// Writes a reference (strong, or weak with `weak`) to `node`.
    fn write_ref(
        &mut self,
        node: &Node,
        strong: usize,
        weak_count: usize,
        weak: bool,
    ) -> Result<()> {
        let mut weak_ofs = 0;
        if weak {
            weak_ofs = self.offset();
            self.out.push(tag::WEAKEN);
        }
        let mut rewrite = self.out.len();
        // SAFETY: no user code runs while the encoder reads the graph.
        let class = unsafe { node.class_unguarded() };
        if let Some(class) = class {
            if self.opts.croak_on_bless {
                return Err(Error::new(ErrorKind::BlessRefused));
            }
            if !self.opts.no_bless_objects && self.write_class(node, class)? {
                rewrite = self.out.len();
            }
        }
        self.out.push(tag::REFN);
        if self.depth & 31 == 0 {
            stacker::maybe_grow(256 * 1024, 4 * 1024 * 1024, || {
                self.write_node(node, strong, weak_count, weak_ofs, Via::Ref { rewrite })
            })
        } else {
            self.write_node(node, strong, weak_count, weak_ofs, Via::Ref { rewrite })
        }
    }

    /// Writes `OBJECT class` or `OBJECTV offset` before a blessed referent.
    /// Returns whether a repeat of this (non-container) referent must keep the
    /// class, that is whether the reference rewrite point moves past it.
    fn write_class(&mut self, node: &Node, class: &Key) -> Result<bool> {
        let addr = node as *const Node as usize;
        // SAFETY: as in `write_ref`.
        let is_container = matches!(
            unsafe { node.body_unguarded() }?,
            Body::Array(_) | Body::Hash(_)
        );
        if !is_container && self.seen.objects.contains_key(&addr) {
            return Ok(false);
        }
        match self.seen.classes.get(&class.addr()) {
            Some(&off) => self.tag_varint(tag::OBJECTV, off),
            None => {
                self.out.push(tag::OBJECT);
                let here = self.offset();
                self.seen.classes.insert(class.addr(), here);
                self.write_pv(class.as_bytes(), class.is_utf8());
            }
        }
        if is_container {
            return Ok(false);
        }
        let here = self.offset();
        self.seen.objects.insert(addr, here);
        Ok(true)
    }

    /// Writes a node reached through a reference or as the slot itself.
    fn write_node(
        &mut self,
        node: &Node,
        strong: usize,
        weak_count: usize,
        weak_ofs: u64,
        via: Via,
    ) -> Result<()> {
        let addr = node as *const Node as usize;
        let mut refcount = strong;
        if weak_count > 0 {
            match self.seen.weak.entry(addr) {
                Entry::Vacant(e) => {
                    e.insert(weak_ofs);
                }
                Entry::Occupied(mut e) => {
                    if *e.get() != 0 {
                        e.insert(weak_ofs);
                    }
                }
            }
            refcount += 1;
        }
        // SAFETY: no user code runs while the encoder reads the graph.
        let body = unsafe { node.body_unguarded() }?;
        if refcount > 1 {
            if let Body::Scalar(v) = body {
                if let Some(t) = self.immortal_tag(v) {
                    self.out.push(t);
                    return Ok(());
                }
            }
            let here = self.offset();
            match self.seen.refs.entry(addr) {
                Entry::Occupied(e) => {
                    let off = *e.get();
                    match via {
                        Via::Ref { rewrite } => {
                            self.out.truncate(rewrite);
                            self.tag_varint(tag::REFP, off);
                        }
                        Via::Slot => self.tag_varint(tag::ALIAS, off),
                    }
                    self.set_track_flag(off);
                    return Ok(());
                }
                Entry::Vacant(e) => {
                    e.insert(here);
                }
            }
        }
        let short_form =
            matches!(via, Via::Ref { .. }) && refcount == 1 && !self.opts.canonical_refs;
        match body {
            Body::Scalar(v) => self.value(v),
            Body::Array(items) => {
                let n = items.len();
                if short_form && n < 16 {
                    self.out.pop();
                    self.out.push(tag::ARRAYREF_0 + n as u8);
                } else {
                    self.tag_varint(tag::ARRAY, n as u64);
                }
                self.out.reserve(n);
                items.iter().try_for_each(|v| self.value(v))
            }
            Body::Hash(h) => {
                let n = h.len();
                if short_form && n < 16 {
                    self.out.pop();
                    self.out.push(tag::HASHREF_0 + n as u8);
                } else {
                    self.tag_varint(tag::HASH, n as u64);
                }
                self.out.reserve(2 * n);
                if self.opts.sort_keys && n > 1 {
                    let mut order: Vec<&(Key, Value)> = h.entries().iter().collect();
                    order.sort_unstable_by(|(a, _), (b, _)| {
                        (a.as_bytes().len(), !a.is_utf8(), a.as_bytes()).cmp(&(
                            b.as_bytes().len(),
                            !b.is_utf8(),
                            b.as_bytes(),
                        ))
                    });
                    order.into_iter().try_for_each(|(k, v)| {
                        self.write_key(k);
                        self.value(v)
                    })
                } else {
                    h.entries().iter().try_for_each(|(k, v)| {
                        self.write_key(k);
                        self.value(v)
                    })
                }
            }
            Body::Regexp(re) => {
                self.out.push(tag::REGEXP);
                self.write_pv(re.pattern.as_bytes(), re.utf8);
                self.write_pv(re.flags.as_bytes(), false);
                Ok(())
            }
        }
    }

    /// Perl's immortals are written by tag, never tracked.
    fn immortal_tag(&self, v: &Value) -> Option<u8> {
        match v {
            Value::True => Some(tag::TRUE),
            Value::False => Some(tag::FALSE),
            Value::CanonicalUndef if self.opts.protocol_version >= 3 => Some(tag::CANONICAL_UNDEF),
            _ => None,
        }
    }
}
