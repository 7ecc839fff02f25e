//! [`EncoderOptions`]: Perl's `Sereal::Encoder` options, their defaults
//! and the checks of their combinations.

use super::*;

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
    /// Compression level: zlib 1 to 10 (default 6), zstd 1 to 22 (default
    /// 3); `None` or `Some(0)` is the default, as Perl's `compress_level => 0`.
    pub compress_level: Option<i32>,
    /// With Snappy compression and protocol 1, write protocol 1's original
    /// Snappy framing (document type 1: the compressed body without a
    /// length, which a reader can only decode whole), as Perl's `snappy`
    /// option does under protocol 1; `false` (the default) writes the
    /// length-prefixed framing of Perl's `snappy_incr`. Refused with any
    /// other compression or protocol version.
    pub legacy_snappy: bool,
    /// Write hash keys sorted (by length, UTF-8 keys first, then bytes), as
    /// Perl's `sort_keys => 1`.
    pub sort_keys: bool,
    /// Write hash keys in Perl's string order (`cmp`), as Perl's
    /// `sort_keys => 2` ([`KeyOrder::Cmp`]) and `sort_keys => 3`
    /// ([`KeyOrder::ReverseCmp`]); it takes precedence over `sort_keys`.
    /// As Perl then does, keys are written as strings rather than as hash
    /// keys: never as a `COPY` of an earlier key, and, with
    /// `dedupe_strings`, as a `COPY` (or `ALIAS`) of an equal earlier string,
    /// key or value. [`EncoderOptions::sort_keys_level`] sets it from Perl's
    /// number.
    pub key_order: Option<KeyOrder>,
    /// Never use the `ARRAYREF_n`/`HASHREF_n` short forms.
    pub canonical_refs: bool,
    /// Write a repeated string value (over 3 bytes) as `COPY` of the first.
    /// Perl's decoder reads a `COPY` of a string that is a shared scalar's
    /// body as the scalar that offset names from then on, so such a `COPY`
    /// is written only once every handle the scalar had when it was first
    /// written has been met (before that, the string is written whole).
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
    /// Maximum nesting (default 10000, as Perl), counted as Perl's encoder
    /// counts it, so that what Perl writes under a limit is written here
    /// under the same limit: the root takes a level, and so does every
    /// array element, hash value or FREEZE value that is not a plain scalar
    /// (a reference, undef, an immortal, a cell seen from several slots,
    /// data Sereal cannot carry); a reference that is the root or a scalar
    /// cell's content (a reference to a reference) takes none, up to 10000
    /// of those on one path beyond the limit. 0 means no limit, as for the
    /// decoder's limits (Perl reads 0 as its default).
    pub max_recursion_depth: usize,
    /// Write objects whose class has a FREEZE handler
    /// ([`Encoder::on_freeze`]) as `OBJECT_FREEZE` with the handler's values.
    pub freeze_callbacks: bool,
    /// Only these classes may have FREEZE called (implies
    /// `freeze_callbacks`); others are refused, or written as plain objects
    /// with `freeze_deny_serialize`.
    pub freeze_allow_classes: Option<Vec<String>>,
    /// Perl's `freeze_deny_action => 'serialize'`: a class outside
    /// `freeze_allow_classes` is written as a plain object instead of failing.
    pub freeze_deny_serialize: bool,
    /// Write values Sereal cannot carry ([`Value::Foreign`]) as undef.
    pub undef_unknown: bool,
    /// Write values Sereal cannot carry as strings, made by the stringify
    /// handler ([`Encoder::on_stringify`]) or, without one, `foreign(TYPE)`
    /// with the type's name (`"foreign(core::time::Duration)"`).
    pub stringify_unknown: bool,
    /// With `undef_unknown` or `stringify_unknown`, record a warning for
    /// each such value ([`Encoder::take_warnings`]).
    pub warn_unknown: bool,
    /// What callbacks may do to the graph while it is being written.
    pub policy: CallbackPolicy,
}

/// Perl's string orders for hash keys (see [`EncoderOptions::key_order`]).
///
/// Keys compare as Perl's `cmp` compares strings: by code point, a byte
/// string's bytes being code points 0 to 255 (Latin-1), so a byte string
/// and a UTF-8 key of the same text are equal (Perl holds them as one key;
/// here the byte string comes first).
///
/// ```
/// use sereal::{EncoderOptions, KeyOrder, Value};
/// let opts = EncoderOptions::new().key_order(Some(KeyOrder::Cmp));
/// let doc = sereal::encode_with(&Value::hash([("b", 1), ("aa", 2)]), &opts).unwrap();
/// let back = sereal::decode(&doc).unwrap();
/// let keys: Vec<String> = back.as_hash().unwrap().keys().map(|k| k.to_string()).collect();
/// assert_eq!(keys, ["aa", "b"]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    /// Ascending `cmp` order: Perl's `sort_keys => 2`.
    Cmp,
    /// Descending `cmp` order: Perl's `sort_keys => 3`.
    ReverseCmp,
}

/// What callbacks (FREEZE and stringify handlers) may do to the graph
/// being encoded.
///
/// ```
/// use sereal::{CallbackPolicy, Encoder, EncoderOptions, Ref, Value};
/// let point = Value::from(Ref::hash([("x", 1)].into()).blessed("Point"));
/// let list = Ref::array(vec![point]);
/// for policy in [CallbackPolicy::Guard, CallbackPolicy::Snapshot] {
///     let opts = EncoderOptions::new().freeze_callbacks(true).policy(policy);
///     let mut enc = Encoder::new(opts).unwrap();
///     let handle = list.clone();
///     // a FREEZE that adds to the array being written
///     enc.on_freeze("Point", move |_| {
///         handle.array_mut()?.push(Value::from("late"));
///         Ok(vec![Value::from(1)])
///     });
///     let written = enc.encode(&Value::from(&list));
///     match policy {
///         CallbackPolicy::Guard => assert!(written.unwrap_err().to_string().contains("cannot be changed")),
///         CallbackPolicy::Snapshot => {
///             // written as it was when the encoder entered it; changed after
///             assert_eq!(sereal::decode(&written.unwrap()).unwrap().as_array().unwrap().len(), 1);
///             assert_eq!(list.as_array().unwrap().len(), 2);
///         }
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CallbackPolicy {
    /// The default. Containers being written are locked while a callback
    /// runs: an attempt to change one gets [`ErrorKind::Locked`] and fails
    /// the encode with an error naming the callback. Nothing is copied, and
    /// an encode in which no callback runs does no guard work beyond keeping
    /// the list of containers being written.
    #[default]
    Guard,
    /// Callbacks may change anything: each container is copied when the
    /// encoder enters it, and written as it was then. Costs a copy of every
    /// container when callbacks are possible.
    Snapshot,
}

impl Default for EncoderOptions {
    fn default() -> Self {
        EncoderOptions {
            protocol_version: protocol::PROTOCOL_VERSION,
            compress: Compression::None,
            compress_threshold: 1024,
            compress_level: None,
            legacy_snappy: false,
            sort_keys: false,
            key_order: None,
            canonical_refs: false,
            dedupe_strings: false,
            aliased_dedupe_strings: false,
            no_shared_hashkeys: false,
            croak_on_bless: false,
            no_bless_objects: false,
            use_standard_double: false,
            max_recursion_depth: 10_000,
            freeze_callbacks: false,
            freeze_allow_classes: None,
            freeze_deny_serialize: false,
            undef_unknown: false,
            stringify_unknown: false,
            warn_unknown: false,
            policy: CallbackPolicy::Guard,
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
    ///
    /// ```
    /// use sereal::{Compression, EncoderOptions};
    /// let o = EncoderOptions::new();
    /// assert_eq!((o.protocol_version, o.compress, o.compress_threshold), (5, Compression::None, 1024));
    /// assert_eq!(o.max_recursion_depth, 10_000);
    /// assert_eq!(o, EncoderOptions::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    setters! {
        /// Sets `protocol_version`.
        ///
        /// ```
        /// use sereal::{Encoder, EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let v2 = Encoder::new(EncoderOptions::new().protocol_version(2))?.encode(&Value::from(1))?;
        /// assert_eq!(&v2[..5], b"=srl\x02"); // versions 1 and 2 have the old magic
        /// let v3 = Encoder::new(EncoderOptions::new().protocol_version(3))?.encode(&Value::from(1))?;
        /// assert_eq!(&v3[..5], b"=\xF3rl\x03");
        /// assert!(Encoder::new(EncoderOptions::new().protocol_version(6)).is_err());
        /// # Ok(())
        /// # }
        /// ```
        protocol_version: u8,
        /// Sets `compress`.
        ///
        /// ```
        /// use sereal::{Compression, Encoder, EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let text = Value::from("abc".repeat(400));
        /// let mut enc = Encoder::new(EncoderOptions::new().compress(Compression::Zstd))?;
        /// let doc = enc.encode(&text)?;
        /// assert_eq!(doc[4], 0x45); // document type 4 (zstd), protocol 5
        /// assert!(doc.len() < 100);
        /// assert_eq!(sereal::decode(&doc)?, text);
        /// # Ok(())
        /// # }
        /// ```
        compress: Compression,
        /// Sets `compress_threshold`.
        ///
        /// ```
        /// use sereal::{Compression, Encoder, EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let opts = EncoderOptions::new().compress(Compression::Snappy);
        /// let text = Value::from("abc".repeat(100)); // a 300-byte body
        /// assert_eq!(Encoder::new(opts.clone())?.encode(&text)?[4], 0x05); // under 1024: raw
        /// let doc = Encoder::new(opts.compress_threshold(0))?.encode(&text)?;
        /// assert_eq!(doc[4], 0x25); // Snappy
        /// # Ok(())
        /// # }
        /// ```
        compress_threshold: usize,
        /// Sets `compress_level`.
        ///
        /// ```
        /// use sereal::{Compression, Encoder, EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let zlib = EncoderOptions::new().compress(Compression::Zlib);
        /// let text = Value::from("abc".repeat(400));
        /// let doc = Encoder::new(zlib.clone().compress_level(Some(9)))?.encode(&text)?;
        /// assert_eq!(sereal::decode(&doc)?, text);
        /// let e = Encoder::new(zlib.compress_level(Some(11))).unwrap_err();
        /// assert_eq!(e.to_string(), "invalid option: compress_level for zlib must be between 1 and 10");
        /// # Ok(())
        /// # }
        /// ```
        compress_level: Option<i32>,
        /// Sets `legacy_snappy`.
        ///
        /// ```
        /// use sereal::{Compression, Encoder, EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let v1 = EncoderOptions::new().protocol_version(1).compress(Compression::Snappy);
        /// let text = Value::from("abc".repeat(400));
        /// assert_eq!(Encoder::new(v1.clone())?.encode(&text)?[4], 0x21); // type 2: snappy_incr
        /// let doc = Encoder::new(v1.legacy_snappy(true))?.encode(&text)?;
        /// assert_eq!(doc[4], 0x11); // type 1: Perl's `snappy` under protocol 1
        /// assert_eq!(sereal::decode(&doc)?, text);
        /// // only with Snappy and protocol 1
        /// assert!(Encoder::new(EncoderOptions::new().legacy_snappy(true)).is_err());
        /// # Ok(())
        /// # }
        /// ```
        legacy_snappy: bool,
        /// Sets `sort_keys`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let h = Value::hash([("b", 1), ("aa", 2), ("é", 3), ("c", 4)]);
        /// let doc = sereal::encode_with(&h, &EncoderOptions::new().sort_keys(true))?;
        /// let back = sereal::decode(&doc)?;
        /// let keys: Vec<String> = back.as_hash().unwrap().keys().map(|k| k.to_string()).collect();
        /// // by length, then UTF-8 keys first ("é" is 2 bytes), then bytes
        /// assert_eq!(keys, ["b", "c", "é", "aa"]);
        /// # Ok(())
        /// # }
        /// ```
        sort_keys: bool,
        /// Sets `key_order`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, KeyOrder, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let h = Value::hash([("b", 1), ("aa", 2), ("c", 3)]);
        /// let opts = EncoderOptions::new().key_order(Some(KeyOrder::ReverseCmp));
        /// let back = sereal::decode(&sereal::encode_with(&h, &opts)?)?;
        /// let keys: Vec<String> = back.as_hash().unwrap().keys().map(|k| k.to_string()).collect();
        /// assert_eq!(keys, ["c", "b", "aa"]);
        /// # Ok(())
        /// # }
        /// ```
        key_order: Option<KeyOrder>,
        /// Sets `canonical_refs`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let v = Value::array([1, 2]);
        /// assert_eq!(&sereal::encode(&v)?[6..], b"\x42\x01\x02"); // ARRAYREF_2
        /// let doc = sereal::encode_with(&v, &EncoderOptions::new().canonical_refs(true))?;
        /// assert_eq!(&doc[6..], b"\x28\x2b\x02\x01\x02"); // REFN, ARRAY of 2
        /// # Ok(())
        /// # }
        /// ```
        canonical_refs: bool,
        /// Sets `dedupe_strings`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let v = Value::array(["abcd", "abcd"]);
        /// assert_eq!(&sereal::encode(&v)?[6..], b"\x42\x64abcd\x64abcd");
        /// let doc = sereal::encode_with(&v, &EncoderOptions::new().dedupe_strings(true))?;
        /// assert_eq!(&doc[6..], b"\x42\x64abcd\x2f\x02"); // COPY of body offset 2
        /// assert_eq!(sereal::decode(&doc)?, v);
        /// # Ok(())
        /// # }
        /// ```
        dedupe_strings: bool,
        /// Sets `aliased_dedupe_strings`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let v = Value::array(["abcd", "abcd"]);
        /// let doc = sereal::encode_with(&v, &EncoderOptions::new().aliased_dedupe_strings(true))?;
        /// // the first string is tracked (its tag's high bit), the second an ALIAS of it
        /// assert_eq!(&doc[6..], b"\x42\xe4abcd\x2e\x02");
        /// // decoded, both slots are one scalar, as in Perl
        /// let back = sereal::decode(&doc)?;
        /// let (a, b) = (back.at(0).unwrap(), back.at(1).unwrap());
        /// assert!(a.node().unwrap().ptr_eq(&b.node().unwrap()));
        /// # Ok(())
        /// # }
        /// ```
        aliased_dedupe_strings: bool,
        /// Sets `no_shared_hashkeys`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let v = Value::array([Value::hash([("name", 1)]), Value::hash([("name", 2)])]);
        /// // by default the second "name" is a COPY of the first
        /// assert_eq!(&sereal::encode(&v)?[6..], b"\x42\x51\x64name\x01\x51\x2f\x03\x02");
        /// let doc = sereal::encode_with(&v, &EncoderOptions::new().no_shared_hashkeys(true))?;
        /// assert_eq!(&doc[6..], b"\x42\x51\x64name\x01\x51\x64name\x02");
        /// # Ok(())
        /// # }
        /// ```
        no_shared_hashkeys: bool,
        /// Sets `croak_on_bless`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, ErrorKind, Ref, Value};
        /// let obj = Value::from(Ref::hash([("x", 1)].into()).blessed("Point"));
        /// let e = sereal::encode_with(&obj, &EncoderOptions::new().croak_on_bless(true)).unwrap_err();
        /// assert_eq!(e.kind(), &ErrorKind::BlessRefused);
        /// ```
        croak_on_bless: bool,
        /// Sets `no_bless_objects`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, Ref, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let obj = Value::from(Ref::hash([("x", 1)].into()).blessed("Point"));
        /// let doc = sereal::encode_with(&obj, &EncoderOptions::new().no_bless_objects(true))?;
        /// assert_eq!(sereal::decode(&doc)?, Value::hash([("x", 1)])); // no class
        /// # Ok(())
        /// # }
        /// ```
        no_bless_objects: bool,
        /// Sets `use_standard_double`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// // doubles are the widest floats here: the option changes nothing
        /// let v = Value::from(0.1);
        /// let doc = sereal::encode_with(&v, &EncoderOptions::new().use_standard_double(true))?;
        /// assert_eq!(doc, sereal::encode(&v)?);
        /// assert_eq!(doc[6], 0x23); // DOUBLE
        /// # Ok(())
        /// # }
        /// ```
        use_standard_double: bool,
        /// Sets `max_recursion_depth`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, ErrorKind, Value};
        /// let nested = Value::array([Value::array([Value::array([1])])]);
        /// let e = sereal::encode_with(&nested, &EncoderOptions::new().max_recursion_depth(3)).unwrap_err();
        /// assert_eq!(e.kind(), &ErrorKind::DepthExceeded(3));
        /// assert!(sereal::encode_with(&nested, &EncoderOptions::new().max_recursion_depth(4)).is_ok());
        /// ```
        max_recursion_depth: usize,
        /// Sets `freeze_callbacks`.
        ///
        /// ```
        /// use sereal::{Encoder, EncoderOptions, Ref, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let point = Value::from(Ref::hash([("x", 1)].into()).blessed("Point"));
        /// for on in [false, true] {
        ///     let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(on))?;
        ///     enc.on_freeze("Point", |_| Ok(vec![Value::from(1)]));
        ///     let tag = enc.encode(&point)?[6];
        ///     // off: the handler is not called, the object is written as it is
        ///     assert_eq!(tag, if on { 0x32 } else { 0x2c }); // OBJECT_FREEZE or OBJECT
        /// }
        /// # Ok(())
        /// # }
        /// ```
        freeze_callbacks: bool,
        /// Sets `freeze_deny_serialize`.
        ///
        /// ```
        /// use sereal::{Encoder, EncoderOptions, ErrorKind, Ref, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let point = Value::from(Ref::hash([("x", 1)].into()).blessed("Point"));
        /// let only_other = EncoderOptions::new().freeze_allow_classes(["Other"]);
        /// let mut strict = Encoder::new(only_other.clone())?;
        /// strict.on_freeze("Point", |_| Ok(vec![Value::from(1)]));
        /// assert!(matches!(strict.encode(&point).unwrap_err().kind(), ErrorKind::Callback(_)));
        /// let mut lenient = Encoder::new(only_other.freeze_deny_serialize(true))?;
        /// lenient.on_freeze("Point", |_| Ok(vec![Value::from(1)]));
        /// assert_eq!(sereal::decode(&lenient.encode(&point)?)?, point); // a plain object
        /// # Ok(())
        /// # }
        /// ```
        freeze_deny_serialize: bool,
        /// Sets `undef_unknown`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, Foreign, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let v = Value::array([Value::Foreign(Foreign::new(std::time::Instant::now()))]);
        /// assert!(sereal::encode(&v).is_err());
        /// let doc = sereal::encode_with(&v, &EncoderOptions::new().undef_unknown(true))?;
        /// assert_eq!(sereal::decode(&doc)?, Value::array([Value::Undef]));
        /// # Ok(())
        /// # }
        /// ```
        undef_unknown: bool,
        /// Sets `stringify_unknown`.
        ///
        /// ```
        /// use sereal::{EncoderOptions, Foreign, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let v = Value::array([Value::Foreign(Foreign::new(std::time::Duration::from_secs(3)))]);
        /// let doc = sereal::encode_with(&v, &EncoderOptions::new().stringify_unknown(true))?;
        /// // without a stringify handler: "foreign(" and the type name
        /// assert_eq!(sereal::decode(&doc)?.at(0).unwrap(), "foreign(core::time::Duration)");
        /// # Ok(())
        /// # }
        /// ```
        stringify_unknown: bool,
        /// Sets `warn_unknown`.
        ///
        /// ```
        /// use sereal::{Encoder, EncoderOptions, Foreign, Value};
        /// # fn main() -> Result<(), sereal::Error> {
        /// let v = Value::array([Value::Foreign(Foreign::new(std::time::Duration::from_secs(3)))]);
        /// let mut enc = Encoder::new(EncoderOptions::new().undef_unknown(true).warn_unknown(true))?;
        /// enc.encode(&v)?;
        /// let warnings = enc.take_warnings();
        /// assert_eq!(warnings.len(), 1);
        /// assert!(warnings[0].ends_with("encoded as an undefined value"));
        /// # Ok(())
        /// # }
        /// ```
        warn_unknown: bool,
        /// Sets `policy`.
        ///
        /// ```
        /// use sereal::{CallbackPolicy, EncoderOptions};
        /// let o = EncoderOptions::new().policy(CallbackPolicy::Snapshot);
        /// assert_eq!(o.policy, CallbackPolicy::Snapshot);
        /// assert_eq!(EncoderOptions::new().policy, CallbackPolicy::Guard);
        /// ```
        policy: CallbackPolicy,
    }

    /// Sets `freeze_allow_classes` (and `freeze_callbacks`).
    ///
    /// ```
    /// use sereal::{Encoder, EncoderOptions, Ref, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let opts = EncoderOptions::new().freeze_allow_classes(["Point"]);
    /// assert!(opts.freeze_callbacks);
    /// let mut enc = Encoder::new(opts)?;
    /// enc.on_freeze("Point", |_| Ok(vec![Value::from(1)]));
    /// enc.on_freeze("Secret", |_| Ok(vec![Value::from(2)]));
    /// let point = Value::from(Ref::hash([("x", 1)].into()).blessed("Point"));
    /// let secret = Value::from(Ref::hash([("k", 1)].into()).blessed("Secret"));
    /// assert_eq!(enc.encode(&point)?[6], 0x32); // OBJECT_FREEZE
    /// let e = enc.encode(&secret).unwrap_err();
    /// assert!(e.to_string().contains("not in freeze_allow_classes"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn freeze_allow_classes<S: Into<String>>(
        mut self,
        classes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.freeze_allow_classes = Some(classes.into_iter().map(Into::into).collect());
        self.freeze_callbacks = true;
        self
    }

    /// Perl's `sort_keys => n`: 0 leaves keys in the hash's order, 1 sorts
    /// them as `sort_keys` does, 2 and 3 in Perl's `cmp` order, ascending
    /// and descending (`key_order`); more than 3 is 3, as in Perl.
    ///
    /// ```
    /// use sereal::{EncoderOptions, KeyOrder};
    /// let o = EncoderOptions::new().sort_keys_level(3);
    /// assert!(o.sort_keys);
    /// assert_eq!(o.key_order, Some(KeyOrder::ReverseCmp));
    /// assert_eq!(EncoderOptions::new().sort_keys_level(1).key_order, None);
    /// ```
    pub fn sort_keys_level(mut self, n: u64) -> Self {
        self.sort_keys = n >= 1;
        self.key_order = match n {
            0 | 1 => None,
            2 => Some(KeyOrder::Cmp),
            _ => Some(KeyOrder::ReverseCmp),
        };
        self
    }

    /// Perl's `canonical`: sets both `sort_keys` and `canonical_refs`.
    ///
    /// ```
    /// use sereal::{EncoderOptions, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let o = EncoderOptions::new().canonical(true);
    /// assert!(o.sort_keys && o.canonical_refs);
    /// // the same data in any insertion order gives the same bytes
    /// let a = Value::hash([("x", 1), ("y", 2)]);
    /// let b = Value::hash([("y", 2), ("x", 1)]);
    /// assert_eq!(sereal::encode_with(&a, &o)?, sereal::encode_with(&b, &o)?);
    /// assert_ne!(sereal::encode(&a)?, sereal::encode(&b)?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn canonical(mut self, on: bool) -> Self {
        self.sort_keys = on;
        self.canonical_refs = on;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let v = self.protocol_version;
        if v >= 6 {
            return Err(Error::new(ErrorKind::NoPublicSpec(v)));
        }
        if v == 0 {
            return Err(Error::new(ErrorKind::UnsupportedVersion(v)));
        }
        let bad = |m: &str| Err(Error::new(ErrorKind::BadOption(m.into())));
        if self.no_bless_objects && (self.freeze_callbacks || self.freeze_allow_classes.is_some()) {
            return bad("no_bless_objects and freeze_callbacks are mutually exclusive");
        }
        if self.undef_unknown && self.stringify_unknown {
            return bad("undef_unknown and stringify_unknown are mutually exclusive");
        }
        self.framing().check(v)
    }

    pub(crate) fn framing(&self) -> compress::Framing {
        compress::Framing {
            compress: self.compress,
            threshold: self.compress_threshold,
            level: self.compress_level,
            legacy_snappy: self.legacy_snappy,
        }
    }
}
