//! The serializer's options.

use super::*;

/// Options for [`Serializer`]: the encoder's options that apply to serde
/// data (which has no sharing, objects or callbacks).
///
/// Every function that takes them ([`to_vec_with`], [`to_writer_with`])
/// takes `&EncoderOptions` as well, so one set of options can configure
/// both encoding paths; the encoder's options that do not apply to serde
/// data are then ignored.
///
/// ```
/// use sereal::{ser::SerializerOptions, EncoderOptions};
/// let opts = SerializerOptions::new().protocol_version(3).sort_keys(true);
/// let bytes = sereal::to_vec_with(&[1, 2, 3], &opts).unwrap();
/// assert_eq!(bytes[4], 3);
/// let enc = EncoderOptions::new().protocol_version(3).sort_keys(true);
/// assert_eq!(sereal::to_vec_with(&[1, 2, 3], &enc).unwrap(), bytes);
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
    /// Write every hash key in full, never as a `COPY` of an earlier one
    /// (see [`crate::EncoderOptions::no_shared_hashkeys`]).
    pub no_shared_hashkeys: bool,
    /// Maximum nesting of sequences, maps and structs (default 10000, as
    /// the encoder's; 0: no limit).
    pub max_recursion_depth: usize,
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
            no_shared_hashkeys: false,
            max_recursion_depth: 10_000,
        }
    }
}

impl SerializerOptions {
    /// The defaults.
    ///
    /// ```
    /// use sereal::ser::SerializerOptions;
    /// use sereal::Compression;
    /// let o = SerializerOptions::new();
    /// assert_eq!((o.protocol_version, o.compress, o.max_recursion_depth), (5, Compression::None, 10_000));
    /// assert_eq!(o, SerializerOptions::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `protocol_version`.
    ///
    /// ```
    /// use sereal::ser::SerializerOptions;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let doc = sereal::to_vec_with(&"hi", &SerializerOptions::new().protocol_version(1))?;
    /// assert_eq!(doc, b"=srl\x01\x00\x62hi"); // ASCII text: SHORT_BINARY, as Perl writes it
    /// assert!(sereal::to_vec_with(&"hi", &SerializerOptions::new().protocol_version(6)).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn protocol_version(mut self, v: u8) -> Self {
        self.protocol_version = v;
        self
    }

    /// Sets `compress`.
    ///
    /// ```
    /// use sereal::ser::SerializerOptions;
    /// use sereal::Compression;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let rows = vec!["the same row"; 200];
    /// let doc = sereal::to_vec_with(&rows, &SerializerOptions::new().compress(Compression::Snappy))?;
    /// assert_eq!(doc[4], 0x25); // Snappy, protocol 5
    /// assert!(doc.len() < 200);
    /// assert_eq!(sereal::from_slice::<Vec<String>>(&doc)?, rows);
    /// # Ok(())
    /// # }
    /// ```
    pub fn compress(mut self, c: Compression) -> Self {
        self.compress = c;
        self
    }

    /// Sets `compress_threshold`.
    ///
    /// ```
    /// use sereal::ser::SerializerOptions;
    /// use sereal::Compression;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let zlib = SerializerOptions::new().compress(Compression::Zlib);
    /// let short = "abc".repeat(20);
    /// assert_eq!(sereal::to_vec_with(&short, &zlib)?[4], 0x05); // under 1024 bytes: raw
    /// assert_eq!(sereal::to_vec_with(&short, &zlib.compress_threshold(0))?[4], 0x35); // zlib
    /// # Ok(())
    /// # }
    /// ```
    pub fn compress_threshold(mut self, n: usize) -> Self {
        self.compress_threshold = n;
        self
    }

    /// Sets `compress_level`.
    ///
    /// ```
    /// use sereal::ser::SerializerOptions;
    /// use sereal::Compression;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let zstd = SerializerOptions::new().compress(Compression::Zstd).compress_threshold(0);
    /// let text = "abc".repeat(400);
    /// let doc = sereal::to_vec_with(&text, &zstd.clone().compress_level(Some(19)))?;
    /// assert_eq!(sereal::from_slice::<String>(&doc)?, text);
    /// assert!(sereal::to_vec_with(&text, &zstd.compress_level(Some(23))).is_err()); // zstd: 1 to 22
    /// # Ok(())
    /// # }
    /// ```
    pub fn compress_level(mut self, level: Option<i32>) -> Self {
        self.compress_level = level;
        self
    }

    /// Sets `legacy_snappy`.
    ///
    /// ```
    /// use sereal::ser::SerializerOptions;
    /// use sereal::Compression;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let opts = SerializerOptions::new()
    ///     .protocol_version(1)
    ///     .compress(Compression::Snappy)
    ///     .compress_threshold(0)
    ///     .legacy_snappy(true);
    /// let doc = sereal::to_vec_with(&"abc".repeat(100), &opts)?;
    /// assert_eq!(doc[4], 0x11); // document type 1, protocol 1
    /// # Ok(())
    /// # }
    /// ```
    pub fn legacy_snappy(mut self, on: bool) -> Self {
        self.legacy_snappy = on;
        self
    }

    /// Sets `sort_keys`.
    ///
    /// ```
    /// use serde::Serialize;
    /// use sereal::ser::SerializerOptions;
    /// # fn main() -> Result<(), sereal::Error> {
    /// #[derive(Serialize)]
    /// struct Row { name: &'static str, id: u32, ok: bool }
    /// let doc = sereal::to_vec_with(&Row { name: "ann", id: 1, ok: true }, &SerializerOptions::new().sort_keys(true))?;
    /// let keys: Vec<String> = sereal::decode(&doc)?.as_hash().unwrap().keys().map(|k| k.to_string()).collect();
    /// assert_eq!(keys, ["id", "ok", "name"]); // by length, then bytes
    /// # Ok(())
    /// # }
    /// ```
    pub fn sort_keys(mut self, on: bool) -> Self {
        self.sort_keys = on;
        self
    }

    /// Sets `dedupe_strings`.
    ///
    /// ```
    /// use sereal::ser::SerializerOptions;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let tags = ["abcd", "abcd"];
    /// assert_eq!(&sereal::to_vec(&tags)?[6..], b"\x42\x64abcd\x64abcd");
    /// let doc = sereal::to_vec_with(&tags, &SerializerOptions::new().dedupe_strings(true))?;
    /// assert_eq!(&doc[6..], b"\x42\x64abcd\x2f\x02"); // COPY of body offset 2
    /// # Ok(())
    /// # }
    /// ```
    pub fn dedupe_strings(mut self, on: bool) -> Self {
        self.dedupe_strings = on;
        self
    }

    /// Sets `no_shared_hashkeys`.
    ///
    /// ```
    /// use serde::Serialize;
    /// use sereal::ser::SerializerOptions;
    /// # fn main() -> Result<(), sereal::Error> {
    /// #[derive(Serialize)]
    /// struct Row { name: u8 }
    /// let rows = [Row { name: 1 }, Row { name: 2 }];
    /// // by default the second "name" is a COPY of the first
    /// assert_eq!(&sereal::to_vec(&rows)?[6..], b"\x42\x51\x64name\x01\x51\x2f\x03\x02");
    /// let doc = sereal::to_vec_with(&rows, &SerializerOptions::new().no_shared_hashkeys(true))?;
    /// assert_eq!(&doc[6..], b"\x42\x51\x64name\x01\x51\x64name\x02");
    /// # Ok(())
    /// # }
    /// ```
    pub fn no_shared_hashkeys(mut self, on: bool) -> Self {
        self.no_shared_hashkeys = on;
        self
    }

    /// Sets `max_recursion_depth`.
    ///
    /// ```
    /// use sereal::ser::SerializerOptions;
    /// use sereal::ErrorKind;
    /// // as in Perl's encoder, a limit of n admits n - 1 nested containers
    /// let nested = vec![vec![vec![1]]];
    /// let e = sereal::to_vec_with(&nested, &SerializerOptions::new().max_recursion_depth(3)).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::DepthExceeded(3));
    /// assert!(sereal::to_vec_with(&nested, &SerializerOptions::new().max_recursion_depth(4)).is_ok());
    /// ```
    pub fn max_recursion_depth(mut self, depth: usize) -> Self {
        self.max_recursion_depth = depth;
        self
    }

    pub(super) fn framing(&self) -> compress::Framing {
        compress::Framing {
            compress: self.compress,
            threshold: self.compress_threshold,
            level: self.compress_level,
            legacy_snappy: self.legacy_snappy,
        }
    }
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
            no_shared_hashkeys: opts.no_shared_hashkeys,
            max_recursion_depth: opts.max_recursion_depth,
        }
    }
}

impl From<&SerializerOptions> for SerializerOptions {
    /// A copy, so that the functions taking `impl Into<SerializerOptions>`
    /// take `&SerializerOptions` too.
    fn from(opts: &SerializerOptions) -> SerializerOptions {
        opts.clone()
    }
}
