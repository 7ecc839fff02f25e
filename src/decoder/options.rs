//! [`DecoderOptions`]: Perl's decoder options, with their names.

/// Decoder options, with the names and meaning of Perl's `Sereal::Decoder`
/// options. A limit of 0 means no limit.
///
/// The defaults are for input the caller does not control. Whatever the
/// document, one decode (a [`Decoder`](crate::Decoder), the serde
/// deserializer, a stream, the `sereal` command) never allocates for a
/// count or length the rest of the input cannot back, never nests past
/// `max_recursion_depth` (past `max_serde_depth` in serde), never inflates
/// a body past `max_uncompressed_size`, and holds at most `max_memory`
/// (256 MiB) beyond its input: a stream's buffered document, a
/// decompressed body and the decoded values, counted as
/// [`memory`](crate::decoder::memory) describes, so that a document of a
/// few KB cannot grow into GBs. An ordinary document of up to about 10 MB
/// decodes under them whatever its shape (the benchmark's 16 MB `records`
/// document counts 110 MB); a larger one needs only `max_memory` raised.
///
/// Two presets: [`DecoderOptions::trusted`], Perl's own unlimited
/// behaviour, for data you wrote yourself, and
/// [`DecoderOptions::untrusted`], stricter than the defaults.
///
/// ```
/// use sereal::{Decoder, DecoderOptions};
/// let dec = Decoder::new(DecoderOptions::new().refuse_objects(true).max_num_array_entries(1000));
/// let big = Decoder::new(DecoderOptions::new().max_memory(4 << 30));
/// # let _ = (dec, big);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecoderOptions {
    /// Refuse Snappy-compressed documents.
    pub refuse_snappy: bool,
    /// Refuse zlib-compressed documents.
    pub refuse_zlib: bool,
    /// Refuse Zstandard-compressed documents.
    pub refuse_zstd: bool,
    /// Refuse documents that contain blessed objects.
    pub refuse_objects: bool,
    /// Decode objects as their plain, unblessed referents.
    pub no_bless_objects: bool,
    /// Check that `STR_UTF8` strings are UTF-8 by Perl's rule (its
    /// `is_utf8_string`): Perl's extended UTF-8, which takes surrogates and
    /// code points past U+10FFFF, and refuses overlong forms and broken or
    /// cut sequences, with [`ErrorKind::InvalidUtf8`](crate::ErrorKind::InvalidUtf8).
    /// Values, hash keys, class names and regexps are checked (Perl's
    /// decoder checks values only).
    pub validate_utf8: bool,
    /// Maximum nesting depth (default 10000, as Perl). Levels are counted
    /// as Perl's decoder counts them, so a document Perl decodes under a
    /// limit decodes here under the same limit: a reference's referent takes
    /// a level (except the immortal `TRUE`, `FALSE` and `CANONICAL_UNDEF`,
    /// and `UNDEF` under `use_undef`), as do `ARRAYREF_n`/`HASHREF_n`, an
    /// array or hash that is no reference's referent, and an object written
    /// directly inside another object's tag; `WEAKEN`, `OBJECT` and tracking
    /// take none.
    ///
    /// The serde deserializer nests no deeper than `max_serde_depth` either.
    pub max_recursion_depth: usize,
    /// Maximum nesting depth of the serde deserializer (default 128, as
    /// `serde_json`'s): any type deserialized, however it drops (by
    /// recursion, as `serde_json::Value` and most recursive types do), is
    /// built and dropped on a small thread stack in any build profile. The
    /// smaller of it and `max_recursion_depth` applies (0 is no limit);
    /// the setter [`max_recursion_depth`](Self::max_recursion_depth) sets
    /// both. The value decoder ignores it: its graphs drop without
    /// recursion.
    pub max_serde_depth: usize,
    /// Maximum memory one decode holds beyond its input, in bytes (default
    /// 256 MiB): a stream's buffered document, a decompressed body, and the
    /// decoded values as [`memory`](crate::decoder::memory) counts them
    /// (for the serde deserializer, what the value decoder would hold for
    /// the same document). A document that needs more is refused, with a
    /// [`LimitExceeded`](crate::ErrorKind::LimitExceeded) error naming
    /// `max_memory`, as soon as a count, a length or a body size says so:
    /// before the memory is taken.
    pub max_memory: usize,
    /// Maximum entries in one hash (default: none).
    pub max_num_hash_entries: usize,
    /// Maximum elements in one array (default: none).
    pub max_num_array_entries: usize,
    /// Maximum length of one string, in bytes (default: none). As in Perl,
    /// it applies to strings written with a length (`BINARY`, `STR_UTF8`),
    /// values and regexp patterns, including a `COPY` of one; short strings
    /// (under 32 bytes), hash keys and class names are not limited by it.
    pub max_string_length: usize,
    /// Perl's `thaw_allow_classes`: the classes whose THAW handler may run
    /// (default: every class with one). A frozen object of another class
    /// fails the decode, or with `thaw_deny_raw` stays frozen. Names
    /// compare as text, as in Perl.
    pub thaw_allow_classes: Option<Vec<String>>,
    /// Perl's `thaw_deny_action => 'raw'`: a frozen object whose class
    /// `thaw_allow_classes` leaves out decodes as it does without a
    /// handler (a node of its class with a [`Body::Frozen`](crate::Body::Frozen)
    /// body) instead of failing the decode.
    pub thaw_deny_raw: bool,
    /// Maximum size of one document as read, header and (compressed) body
    /// (default: none of its own). The stream decoders refuse a document as
    /// soon as it is known to be longer, before they buffer it, at the
    /// offset of the length or count that says so; the slice decoders
    /// refuse an input or a document of a stream that is longer. A stream
    /// holds the document it buffers, so `max_memory` bounds it too: under
    /// the defaults, a stream refuses a document longer than 256 MiB.
    pub max_document_size: usize,
    /// Maximum size of a decompressed body (default 256 MiB). A zlib or
    /// Snappy header claiming more, a zstd frame declaring more, or a zstd
    /// body producing more, is refused before the memory is taken.
    pub max_uncompressed_size: usize,
    /// Perl's `no_thaw_objects`: a frozen object decodes to what its THAW
    /// would have been given, an array of the FREEZE values followed by the
    /// class name, blessed into `Sereal::Decoder::THAW_args`; no THAW
    /// handler runs.
    pub no_thaw_objects: bool,
    /// Perl's `use_undef`: an `UNDEF` decodes as Perl's shared undef,
    /// [`Value::CanonicalUndef`](crate::Value::CanonicalUndef) (which writes back as `CANONICAL_UNDEF`
    /// from protocol 3 on).
    pub use_undef: bool,
    /// Perl's `alias_smallint`: the integers -16 to 15 (`POS` and `NEG`
    /// tags) decode as aliases of one cell per value, shared across the
    /// document ([`Value::Alias`](crate::Value::Alias)), so each value is stored once; they
    /// write back as Perl writes its aliased integers (the first tracked,
    /// the others `ALIAS`). Perl makes the shared cells read-only; here a
    /// change through one alias is seen through all of them.
    pub alias_smallint: bool,
    /// Perl's `alias_varint_under`: above 0, as `alias_smallint`, and also
    /// `VARINT` integers below this value (below 16 when it is smaller).
    pub alias_varint_under: u64,
    /// Perl's `set_readonly`. Accepted for Perl's option sets, and without
    /// effect: a decoded graph belongs to the caller, and Rust says what may
    /// change it (who holds `&mut`, and the handles given out) where Perl
    /// needs a flag on each value.
    pub set_readonly: bool,
    /// Perl's `set_readonly_scalars`: as `set_readonly`, without effect.
    pub set_readonly_scalars: bool,
    /// When THAW handlers run, and so what each is given: by default
    /// ([`ThawOrder::Immediate`]) as soon as each frozen object's data has
    /// been read; or, as Perl's decoder does, once the whole document is
    /// read, in Perl 5.004's order or Perl 5.003's.
    pub thaw_order: ThawOrder,
    /// The serde deserializers (`from_slice`, `from_value` and the typed
    /// streams, with the `serde` feature) read only
    /// what each tag is: no number from a string, no string from a number,
    /// no `bool` from an integer other than 0 and 1 (default false: Perl's
    /// scalars are read as Perl reads them; the table in the docs of the
    /// `de` module says what changes). The value decoder ignores it.
    pub strict_types: bool,
}

/// When the decoder runs THAW handlers ([`DecoderOptions::thaw_order`]).
///
/// Every order thaws the objects nested in another's FREEZE data before it
/// except [`ThawOrder::Perl5003`]. In the two orders of Perl's decoder every
/// THAW runs once the document is read, and as there, a THAW given a
/// reference to an object not thawed yet sees an unblessed array of that
/// object's FREEZE values; afterwards each strong reference the document
/// itself makes to a thawed object names THAW's result, except those made
/// inside the object's own FREEZE data (they name the array of its values),
/// and what THAW handlers built is left as they built it. A weak reference
/// to a frozen object keeps naming the array of its values, so it is gone
/// once nothing else holds that array (Perl's weak references to thawed
/// objects are left dangling too).
///
/// ```
/// use sereal::{DecoderOptions, ThawOrder};
/// let perl = DecoderOptions::new().thaw_order(ThawOrder::Perl5004);
/// assert_eq!(DecoderOptions::new().thaw_order, ThawOrder::Immediate);
/// # let _ = perl;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ThawOrder {
    /// Each THAW as soon as its object's data has been read: nested objects
    /// first, siblings in document order, and each THAW sees every object
    /// read before it already thawed.
    #[default]
    Immediate,
    /// Perl 5.004 and later (its t/091_thaw_order.t): from the object
    /// whose data starts last back to the first, so nested objects first
    /// and later siblings before earlier ones.
    Perl5004,
    /// Perl 5.003: from the object whose data ends last back to the first,
    /// so an object before the objects nested in its FREEZE data (it sees
    /// them still frozen); what the corpora Perl 5.003 wrote were read with.
    Perl5003,
}

impl Default for DecoderOptions {
    fn default() -> Self {
        DEFAULTS
    }
}

/// The default options. A constant, not a static: the one-shot serde entry
/// points read their limits from it as immediates, and nothing is built.
pub(crate) const DEFAULTS: DecoderOptions = DecoderOptions {
    refuse_snappy: false,
    refuse_zlib: false,
    refuse_zstd: false,
    refuse_objects: false,
    no_bless_objects: false,
    validate_utf8: false,
    max_recursion_depth: 10_000,
    max_serde_depth: 128,
    max_memory: 256 << 20,
    max_num_hash_entries: 0,
    max_num_array_entries: 0,
    max_string_length: 0,
    thaw_allow_classes: None,
    thaw_deny_raw: false,
    max_document_size: 0,
    max_uncompressed_size: 256 << 20,
    no_thaw_objects: false,
    use_undef: false,
    alias_smallint: false,
    alias_varint_under: 0,
    set_readonly: false,
    set_readonly_scalars: false,
    thaw_order: ThawOrder::Immediate,
    strict_types: false,
};

macro_rules! setters {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[doc = concat!("Sets `", stringify!($name), "`.")]
        pub fn $name(mut self, v: $t) -> Self {
            self.$name = v;
            self
        }
    )*};
}

impl DecoderOptions {
    /// The defaults: for input the caller does not control (see
    /// [`DecoderOptions`]).
    ///
    /// ```
    /// use sereal::DecoderOptions;
    /// let o = DecoderOptions::new();
    /// assert_eq!(o, DecoderOptions::default());
    /// // bounded: 256 MiB of memory and of decompressed body a document
    /// assert_eq!((o.max_memory, o.max_uncompressed_size), (256 << 20, 256 << 20));
    /// assert_eq!(o.max_recursion_depth, 10_000);
    /// assert_eq!(DecoderOptions::trusted().max_memory, 0); // Perl's: no bound
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// For data you wrote yourself: Perl's `Sereal::Decoder` defaults,
    /// which bound nothing but depth. Each value, where it differs from
    /// the defaults:
    ///
    /// | option | value |
    /// |---|---|
    /// | `max_memory` | 0 (none) |
    /// | `max_uncompressed_size` | 0 (none) |
    /// | `max_serde_depth` | 10,000 (Perl's depth, as `max_recursion_depth`) |
    ///
    /// Every document Perl reads decodes under it, whatever its size. A
    /// serde target that drops by recursion may then need a larger stack
    /// than a small thread's for documents nested thousands deep.
    ///
    /// ```
    /// use sereal::DecoderOptions;
    /// let o = DecoderOptions::trusted();
    /// assert_eq!((o.max_memory, o.max_uncompressed_size, o.max_recursion_depth), (0, 0, 10_000));
    /// ```
    pub fn trusted() -> Self {
        DecoderOptions {
            max_memory: 0,
            max_uncompressed_size: 0,
            max_serde_depth: 10_000,
            ..Self::default()
        }
    }

    /// For input from anyone: stricter than the defaults, in the spirit of
    /// Perl's 7.x `paranoid` preset. Each value, where it differs from the
    /// defaults:
    ///
    /// | option | value | effect |
    /// |---|---|---|
    /// | `no_thaw_objects` | true | no THAW handler runs: a frozen object decodes to its FREEZE values |
    /// | `no_bless_objects` | true | no object is blessed: objects decode as their plain referents |
    /// | `validate_utf8` | true | a `STR_UTF8` string must be UTF-8 as Perl defines it |
    /// | `max_recursion_depth` | 128 | (and `max_serde_depth`) |
    /// | `max_memory` | 64 MiB | |
    /// | `max_uncompressed_size` | 32 MiB | |
    /// | `max_document_size` | 32 MiB | |
    /// | `max_string_length` | 16 MiB | |
    /// | `max_num_array_entries` | 1,048,576 | |
    /// | `max_num_hash_entries` | 1,048,576 | |
    ///
    /// ```
    /// use sereal::{Decoder, DecoderOptions, Ref, Value};
    /// let dec = Decoder::new(DecoderOptions::untrusted());
    /// let obj = Value::Ref(Ref::hash([("id", 1)].into_iter().collect()).blessed("App::User"));
    /// let v = dec.decode(&sereal::encode(&obj).unwrap()).unwrap();
    /// assert!(v.node().unwrap().class().is_none());
    /// ```
    pub fn untrusted() -> Self {
        DecoderOptions {
            no_thaw_objects: true,
            no_bless_objects: true,
            validate_utf8: true,
            max_recursion_depth: 128,
            max_serde_depth: 128,
            max_memory: 64 << 20,
            max_uncompressed_size: 32 << 20,
            max_document_size: 32 << 20,
            max_string_length: 16 << 20,
            max_num_array_entries: 1 << 20,
            max_num_hash_entries: 1 << 20,
            ..Self::default()
        }
    }

    /// Sets `max_recursion_depth`, and `max_serde_depth` to the same.
    ///
    /// ```
    /// use sereal::DecoderOptions;
    /// let o = DecoderOptions::new().max_recursion_depth(500);
    /// assert_eq!((o.max_recursion_depth, o.max_serde_depth), (500, 500));
    /// ```
    pub fn max_recursion_depth(mut self, depth: usize) -> Self {
        self.max_recursion_depth = depth;
        self.max_serde_depth = depth;
        self
    }

    /// The nesting limit of the serde deserializer: the smaller of
    /// `max_recursion_depth` and `max_serde_depth`, 0 only if both are.
    #[cfg(feature = "serde")]
    pub(crate) fn serde_depth(&self) -> usize {
        match (self.max_recursion_depth, self.max_serde_depth) {
            (0, d) | (d, 0) => d,
            (a, b) => a.min(b),
        }
    }

    /// Sets `thaw_allow_classes`.
    ///
    /// ```
    /// use sereal::DecoderOptions;
    /// let o = DecoderOptions::new().thaw_allow_classes(["My::Point"]);
    /// assert_eq!(o.thaw_allow_classes, Some(vec!["My::Point".to_string()]));
    /// ```
    pub fn thaw_allow_classes<S: Into<String>>(
        mut self,
        classes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.thaw_allow_classes = Some(classes.into_iter().map(Into::into).collect());
        self
    }

    setters! {
        no_thaw_objects: bool,
        use_undef: bool,
        alias_smallint: bool,
        alias_varint_under: u64,
        set_readonly: bool,
        set_readonly_scalars: bool,
        thaw_order: ThawOrder,
        refuse_snappy: bool,
        refuse_zlib: bool,
        refuse_zstd: bool,
        refuse_objects: bool,
        no_bless_objects: bool,
        validate_utf8: bool,
        max_serde_depth: usize,
        max_memory: usize,
        max_num_hash_entries: usize,
        max_num_array_entries: usize,
        max_string_length: usize,
        thaw_deny_raw: bool,
        strict_types: bool,
        max_document_size: usize,
        max_uncompressed_size: usize,
    }
}
