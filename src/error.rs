//! The error type of every encoding and decoding operation.
//!
//! An [`Error`] is one pointer wide: [`Error::kind`] says what failed,
//! [`Error::position`] where (in the document, or in a compressed
//! document's decompressed body), and [`Error::classify`] sorts it into a
//! [`Category`] (`Io`, `Eof`, `Syntax`, `Data`, `Limit`, `Callback`,
//! `Unsupported`), as serde_json sorts its errors, so that a server maps
//! errors to answers without matching every kind.

use std::fmt;

/// What went wrong, without the position.
///
/// ```
/// use sereal::{decode, DecoderOptions, Decoder, ErrorKind};
/// assert_eq!(decode(b"").unwrap_err().kind(), &ErrorKind::Truncated);
/// let deep = Decoder::new(DecoderOptions::new().max_recursion_depth(1));
/// let nested = sereal::encode(&sereal::Value::array([sereal::Value::array([1])])).unwrap();
/// assert!(matches!(deep.decode(&nested).unwrap_err().kind(), ErrorKind::DepthExceeded(1)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended before the document did.
    Truncated,
    /// The input does not start with a Sereal magic string.
    BadMagic,
    /// The input starts with the version 3 magic string encoded as UTF-8:
    /// the document was mangled by a text conversion.
    Utf8MangledMagic,
    /// The protocol version is not one of 1 to 5.
    UnsupportedVersion(u8),
    /// Protocol version 6 and later have no public specification.
    NoPublicSpec(u8),
    /// The document type (compression) is unknown or not allowed for its version.
    BadDocumentType(u8),
    /// A malformed header suffix.
    BadHeader(String),
    /// A tag that may not appear where it does.
    UnexpectedTag(u8, &'static str),
    /// A malformed varint.
    BadVarint,
    /// A REFP, ALIAS, COPY or OBJECTV offset that points nowhere usable.
    BadOffset(u64, &'static str),
    /// A compressed body that does not decompress.
    Decompression(String),
    /// Compression of the body failed.
    Compression(String),
    /// A decoded structure exceeds a configured limit.
    LimitExceeded(String),
    /// Nesting deeper than `max_recursion_depth`.
    DepthExceeded(usize),
    /// A `STR_UTF8` string that is not UTF-8: refused with `validate_utf8`
    /// (by Perl's rule, see `DecoderOptions::validate_utf8`) and, whatever
    /// the options, by serde targets that take no bytes (`String`, `&str`).
    InvalidUtf8,
    /// Trailing bytes after the document body.
    TrailingData,
    /// A blessed object met with `croak_on_bless`.
    BlessRefused,
    /// An invalid option or combination of options.
    BadOption(String),
    /// A container was borrowed for writing while the encoder needed it.
    Borrowed,
    /// A callback tried to change a container the encoder is writing.
    Locked,
    /// A FREEZE, stringify or THAW callback failed or broke the rules; the
    /// message names the class (or value type) and what happened.
    Callback(String),
    /// A value the format cannot carry (see `undef_unknown`,
    /// `stringify_unknown`).
    Unsupported(String),
    /// The document is compressed with a codec this build of the crate
    /// leaves out: the name of the cargo feature that builds it in.
    MissingFeature(&'static str),
    /// Reading the input or writing the output failed; the
    /// [`std::io::Error`] is the error's [`source`](std::error::Error::source).
    Io(IoError),
    /// A hash of the document holds the same key twice: the key's bytes.
    DuplicateKey(Vec<u8>),
    /// The document holds an object and the decoder was told to refuse
    /// objects (`refuse_objects`).
    ObjectRefused,
    /// The document is compressed with a codec the decoder was told to
    /// refuse (`refuse_snappy`, `refuse_zlib`, `refuse_zstd`).
    CompressionRefused(crate::Compression),
    /// A node's body is not what the operation needs: `array_mut` on a
    /// hash, say. The kind of body that was expected.
    WrongBody(&'static str),
    /// A message from serde: a `Serialize` or `Deserialize` implementation
    /// (or a visitor) refused the data, as `serde_json`'s data errors do.
    Message(String),
    /// A lossless or plain JSON text that does not describe a document:
    /// where in it (a JSON pointer) and what is wrong.
    Json(String),
    /// Any other inconsistency in the document.
    Invalid(String),
    /// A path (see [`crate::view::Path`]) is malformed or asks for what
    /// the path language does not have: the byte offset in the path where
    /// it went wrong (0 for its first character), and why.
    BadPath(usize, String),
}

/// The broad kind of an [`Error`], as [`Error::classify`] sorts it: what a
/// server needs to answer a request (a client's bad input, a limit, its
/// own failure), in the spirit of `serde_json`'s `Category`.
///
/// Every [`ErrorKind`] has one category:
///
/// | category | kinds |
/// |---|---|
/// | `Io` | `Io` |
/// | `Eof` | `Truncated` |
/// | `Syntax` | `BadMagic`, `Utf8MangledMagic`, `BadDocumentType`, `BadHeader`, `UnexpectedTag`, `BadVarint`, `BadOffset`, `Decompression`, `TrailingData`, `Invalid`, `Json` |
/// | `Data` | `BadPath`, `Message`, `DuplicateKey`, `ObjectRefused`, `CompressionRefused`, `InvalidUtf8`, `WrongBody`, `BlessRefused`, `Unsupported`, `BadOption`, `Borrowed`, `Compression` |
/// | `Limit` | `LimitExceeded`, `DepthExceeded` |
/// | `Callback` | `Callback`, `Locked` |
/// | `Unsupported` | `UnsupportedVersion`, `NoPublicSpec`, `MissingFeature` |
///
/// ```
/// use sereal::Category;
/// let cut = sereal::decode(b"=\xF3rl\x05\x00\x42\x01").unwrap_err();
/// assert_eq!(cut.classify(), Category::Eof);
/// assert!(cut.is_eof());
/// assert_eq!(sereal::decode(b"{}").unwrap_err().classify(), Category::Syntax);
/// let v6 = sereal::decode(b"=\xF3rl\x06\x00\x01").unwrap_err();
/// assert_eq!(v6.classify(), Category::Unsupported);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Category {
    /// Reading the input or writing the output failed: the peer hung up,
    /// the disk failed. Nothing is known of the data.
    Io,
    /// The input ended before the document did: more bytes would help (a
    /// stream cut short, a partial read).
    Eof,
    /// The input is not valid Sereal: a bad magic string, tag, varint,
    /// offset, header or compressed body, or bytes after the document.
    Syntax,
    /// Valid Sereal that does not fit: the target type refused it (a serde
    /// data error), or the options refuse its content (a duplicate key, an
    /// object under `refuse_objects`, a refused codec, text that is not
    /// UTF-8); on the encoding side, a value or an option the format or
    /// the encoder cannot take.
    Data,
    /// The document is over a limit of the options: `max_memory`, a size,
    /// count or length limit, or the nesting depth.
    Limit,
    /// A FREEZE, THAW or stringify handler failed, or broke the rules (it
    /// changed a container being encoded).
    Callback,
    /// The document needs what this build does not have: a protocol
    /// version it does not read (6 and later), or a codec left out of the
    /// build (a cargo feature).
    Unsupported,
}

/// Where an [`Error`] happened: the byte offset and the space it counts in.
///
/// ```
/// use sereal::Position;
/// let e = sereal::decode(b"=\xF3rl\x05\x00\x42\x01").unwrap_err();
/// assert_eq!(e.position(), Some(Position::Document(8)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Position {
    /// An offset from the document's first byte (its magic string).
    Document(usize),
    /// An offset into the decompressed body of a compressed document.
    DecompressedBody(usize),
}

impl Position {
    /// The offset, whichever space it counts in.
    ///
    /// ```
    /// use sereal::Position;
    /// // a Snappy-compressed document whose body, an array of 2, holds one item
    /// let body = snap::raw::Encoder::new().compress_vec(b"\x42\x01").unwrap();
    /// let mut doc = b"=\xF3rl\x25\x00".to_vec();
    /// doc.push(body.len() as u8);
    /// doc.extend(&body);
    /// let e = sereal::decode(&doc).unwrap_err();
    /// assert_eq!(e.position(), Some(Position::DecompressedBody(2)));
    /// assert_eq!(e.position().unwrap().offset(), 2);
    /// ```
    pub fn offset(self) -> usize {
        match self {
            Position::Document(o) | Position::DecompressedBody(o) => o,
        }
    }
}

/// An I/O failure inside an [`Error`]: the [`std::io::Error`], shared so
/// that errors stay `Clone`. Two are equal when their kinds and messages are.
///
/// ```
/// use sereal::ErrorKind;
/// struct HungUp;
/// impl std::io::Read for HungUp {
///     fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
///         Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "peer hung up"))
///     }
/// }
/// let e = sereal::from_reader::<_, sereal::Value>(HungUp).unwrap_err();
/// let ErrorKind::Io(io) = e.kind() else { unreachable!() };
/// assert_eq!(io.get().kind(), std::io::ErrorKind::ConnectionReset);
/// assert_eq!(e.to_string(), "read failed: peer hung up");
/// let copy = e.clone(); // shared, not copied
/// assert_eq!(copy, e);
/// ```
#[derive(Clone, Debug)]
pub struct IoError {
    error: std::sync::Arc<std::io::Error>,
    // "read", "write", or "I/O" when not known
    op: &'static str,
}

impl IoError {
    /// The underlying error.
    ///
    /// ```
    /// use sereal::ErrorKind;
    /// struct Closed;
    /// impl std::io::Write for Closed {
    ///     fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
    ///         Err(std::io::ErrorKind::BrokenPipe.into())
    ///     }
    ///     fn flush(&mut self) -> std::io::Result<()> {
    ///         Ok(())
    ///     }
    /// }
    /// let e = sereal::to_writer(Closed, &[1, 2, 3]).unwrap_err();
    /// let ErrorKind::Io(io) = e.kind() else { unreachable!() };
    /// assert_eq!(io.get().kind(), std::io::ErrorKind::BrokenPipe);
    /// ```
    pub fn get(&self) -> &std::io::Error {
        &self.error
    }
}

impl PartialEq for IoError {
    fn eq(&self, other: &IoError) -> bool {
        self.op == other.op
            && self.error.kind() == other.error.kind()
            && self.error.to_string() == other.error.to_string()
    }
}

impl Error {
    /// An [`ErrorKind::Io`] error of a read or a write (`op`).
    pub(crate) fn io(op: &'static str, e: std::io::Error) -> Error {
        Error::new(ErrorKind::Io(IoError {
            error: std::sync::Arc::new(e),
            op,
        }))
    }
}

impl Eq for IoError {}

impl From<std::io::Error> for Error {
    /// An [`ErrorKind::Io`] error, without a position.
    ///
    /// ```
    /// use std::error::Error as _;
    /// let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "gone");
    /// let e = sereal::Error::from(io);
    /// assert!(matches!(e.kind(), sereal::ErrorKind::Io(_)));
    /// assert_eq!(e.source().unwrap().to_string(), "gone");
    /// assert_eq!(e.to_string(), "I/O failed: gone");
    /// ```
    fn from(e: std::io::Error) -> Error {
        Error::io("I/O", e)
    }
}

/// An error, with the byte offset in the input where decoding failed
/// (offsets count from the start of the document; for a compressed document,
/// body offsets count into the decompressed body and say so).
///
/// An `Error` is one pointer, so a `Result<Value>` stays small on the
/// decoder's hot paths.
///
/// ```
/// let e = sereal::decode(b"=\xF3rl\x05\x00\x42\x01").unwrap_err(); // a 2-array, one item
/// assert_eq!(e.kind(), &sereal::ErrorKind::Truncated);
/// assert_eq!(e.offset(), Some(8));
/// assert_eq!(e.to_string(), "unexpected end of input at offset 8");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<Inner>);

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    offset: Option<usize>,
    in_body: bool,
    // What a callback returned when it failed.
    source: Option<Error>,
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("offset", &self.0.offset)
            .field("in_body", &self.0.in_body)
            .field("source", &self.0.source)
            .finish()
    }
}

/// The result type of this crate.
///
/// ```
/// fn user_id(doc: &[u8]) -> sereal::Result<Option<i64>> {
///     Ok(sereal::decode(doc)?.get("id").and_then(|v| v.as_i64()))
/// }
/// # fn main() -> sereal::Result<()> {
/// let doc = sereal::encode(&sereal::Value::hash([("id", 7)]))?;
/// assert_eq!(user_id(&doc)?, Some(7));
/// assert!(user_id(b"junk").is_err());
/// # Ok(())
/// # }
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error without a position (encoder and option errors).
    ///
    /// ```
    /// use sereal::{Category, Error, ErrorKind};
    /// // what a THAW handler returns for frozen values it cannot use
    /// let e = Error::new(ErrorKind::Invalid("a Point needs two values".into()));
    /// assert_eq!((e.offset(), e.classify()), (None, Category::Syntax));
    /// assert_eq!(e.to_string(), "a Point needs two values");
    /// ```
    #[cold]
    pub fn new(kind: ErrorKind) -> Self {
        Error(Box::new(Inner {
            kind,
            offset: None,
            in_body: false,
            source: None,
        }))
    }

    /// An error at a byte offset of the document.
    ///
    /// ```
    /// use sereal::{Error, ErrorKind, Position};
    /// let e = Error::at(ErrorKind::BadVarint, 7);
    /// assert_eq!(e.position(), Some(Position::Document(7)));
    /// assert_eq!(e.to_string(), "malformed varint at offset 7");
    /// ```
    #[cold]
    pub fn at(kind: ErrorKind, offset: usize) -> Self {
        Error(Box::new(Inner {
            kind,
            offset: Some(offset),
            in_body: false,
            source: None,
        }))
    }

    /// What went wrong.
    ///
    /// ```
    /// use sereal::ErrorKind;
    /// let e = sereal::decode(b"not sereal").unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::BadMagic);
    /// let e = sereal::decode(b"=\xF3rl\x06\x00\x01").unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::NoPublicSpec(6)));
    /// ```
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The broad kind of the error (see [`Category`] for the table).
    ///
    /// ```
    /// use sereal::{Category, Decoder, DecoderOptions};
    /// let doc = sereal::encode(&sereal::Value::array([1, 2, 3])).unwrap();
    /// let strict = Decoder::new(DecoderOptions::new().max_num_array_entries(2));
    /// assert_eq!(strict.decode(&doc).unwrap_err().classify(), Category::Limit);
    /// let e = sereal::from_slice::<String>(&doc).unwrap_err();
    /// assert_eq!(e.classify(), Category::Data);
    /// ```
    pub fn classify(&self) -> Category {
        self.0.kind.category()
    }

    /// Whether the input ended before the document did
    /// ([`Category::Eof`]): more bytes would help.
    ///
    /// ```
    /// # fn main() -> Result<(), sereal::Error> {
    /// let doc = sereal::encode(&sereal::Value::array(["a", "b"]))?;
    /// // a document cut short: wait for more bytes
    /// assert!(sereal::decode(&doc[..doc.len() - 1]).unwrap_err().is_eof());
    /// assert!(!sereal::decode(b"junk").unwrap_err().is_eof());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_eof(&self) -> bool {
        self.classify() == Category::Eof
    }

    /// Whether reading or writing failed ([`Category::Io`]).
    ///
    /// ```
    /// struct Closed;
    /// impl std::io::Write for Closed {
    ///     fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
    ///         Err(std::io::ErrorKind::BrokenPipe.into())
    ///     }
    ///     fn flush(&mut self) -> std::io::Result<()> {
    ///         Ok(())
    ///     }
    /// }
    /// let e = sereal::to_writer(Closed, &"hi").unwrap_err();
    /// assert!(e.is_io());
    /// assert_eq!(e.to_string(), "write failed: broken pipe");
    /// ```
    pub fn is_io(&self) -> bool {
        self.classify() == Category::Io
    }

    /// Whether the input is not valid Sereal ([`Category::Syntax`]).
    ///
    /// ```
    /// // a valid document followed by a byte more
    /// let e = sereal::decode(b"=\xF3rl\x05\x00\x01\x02").unwrap_err();
    /// assert!(e.is_syntax());
    /// assert_eq!(e.to_string(), "trailing data after the document body at offset 7");
    /// ```
    pub fn is_syntax(&self) -> bool {
        self.classify() == Category::Syntax
    }

    /// Whether valid Sereal did not fit ([`Category::Data`]).
    ///
    /// ```
    /// # fn main() -> Result<(), sereal::Error> {
    /// let doc = sereal::encode(&sereal::Value::from(300))?;
    /// let e = sereal::from_slice::<u8>(&doc).unwrap_err(); // valid, but not a u8
    /// assert!(e.is_data());
    /// assert_eq!(e.to_string(), "invalid value: integer `300`, expected u8 at offset 6");
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_data(&self) -> bool {
        self.classify() == Category::Data
    }

    /// The byte offset where decoding failed, if the error has one: from
    /// the document's start, or into its decompressed body (see
    /// [`Error::position`], which says which).
    ///
    /// ```
    /// use sereal::{Error, ErrorKind};
    /// let e = sereal::decode(b"=\xF3rl\x05\x00\x42\x01").unwrap_err();
    /// assert_eq!(e.offset(), Some(8)); // where the second item should be
    /// assert_eq!(Error::new(ErrorKind::Borrowed).offset(), None);
    /// ```
    pub fn offset(&self) -> Option<usize> {
        self.0.offset
    }

    /// Where decoding failed, and the space its offset counts in.
    ///
    /// ```
    /// use sereal::Position;
    /// let e = sereal::decode(b"=\xF3rl\x05\x00\x42\x01").unwrap_err();
    /// assert_eq!(e.position(), Some(Position::Document(8)));
    /// ```
    pub fn position(&self) -> Option<Position> {
        let e = &*self.0;
        e.offset.map(|o| {
            if e.in_body {
                Position::DecompressedBody(o)
            } else {
                Position::Document(o)
            }
        })
    }

    /// The error, with `source` as its [`source`](std::error::Error::source):
    /// what a user's callback returned when it failed.
    pub(crate) fn caused_by(mut self, source: Error) -> Self {
        self.0.source = Some(source);
        self
    }

    /// The error, placed at `offset` (a decompressed body offset when
    /// `in_body`) unless it already has a position: for errors raised where
    /// the position is not known (serde visitors), placed by their caller.
    pub(crate) fn or_at(mut self, offset: usize, in_body: bool) -> Self {
        let e = &mut *self.0;
        if e.offset.is_none() {
            e.offset = Some(offset);
            e.in_body = in_body;
        }
        self
    }

    pub(crate) fn shifted(mut self, by: usize, in_body: bool) -> Self {
        let e = &mut *self.0;
        if let Some(o) = e.offset.as_mut() {
            if !e.in_body {
                *o += by;
                e.in_body = in_body;
            }
        }
        self
    }
}

impl ErrorKind {
    /// The kind's [`Category`].
    ///
    /// ```
    /// use sereal::{Category, ErrorKind};
    /// assert_eq!(ErrorKind::Truncated.category(), Category::Eof);
    /// assert_eq!(ErrorKind::DepthExceeded(10).category(), Category::Limit);
    /// ```
    pub fn category(&self) -> Category {
        use ErrorKind as K;
        match self {
            K::Io(_) => Category::Io,
            K::Truncated => Category::Eof,
            K::BadMagic
            | K::Utf8MangledMagic
            | K::BadDocumentType(_)
            | K::BadHeader(_)
            | K::UnexpectedTag(..)
            | K::BadVarint
            | K::BadOffset(..)
            | K::Decompression(_)
            | K::TrailingData
            | K::Invalid(_)
            | K::Json(_) => Category::Syntax,
            K::BadPath(..) => Category::Data,
            K::Message(_)
            | K::DuplicateKey(_)
            | K::ObjectRefused
            | K::CompressionRefused(_)
            | K::InvalidUtf8
            | K::WrongBody(_)
            | K::BlessRefused
            | K::Unsupported(_)
            | K::BadOption(_)
            | K::Borrowed
            | K::Compression(_) => Category::Data,
            K::LimitExceeded(_) | K::DepthExceeded(_) => Category::Limit,
            K::Callback(_) | K::Locked => Category::Callback,
            K::UnsupportedVersion(_) | K::NoPublicSpec(_) | K::MissingFeature(_) => {
                Category::Unsupported
            }
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Truncated => write!(f, "unexpected end of input"),
            ErrorKind::BadMagic => write!(f, "not a Sereal document (bad magic string)"),
            ErrorKind::Utf8MangledMagic => write!(
                f,
                "bad magic string: this Sereal document was UTF-8 encoded after it was written"
            ),
            ErrorKind::UnsupportedVersion(v) => {
                write!(f, "unsupported Sereal protocol version {v} (supported: 1 to 5)")
            }
            ErrorKind::NoPublicSpec(v) => write!(
                f,
                "Sereal protocol version {v} has no public specification; versions 1 to 5 are supported"
            ),
            ErrorKind::BadDocumentType(t) => write!(f, "unknown or invalid document type {t}"),
            ErrorKind::BadHeader(m) => write!(f, "bad header: {m}"),
            ErrorKind::UnexpectedTag(t, ctx) => write!(
                f,
                "unexpected tag {} (0x{t:02x}) {ctx}",
                crate::protocol::tag_name(*t)
            ),
            ErrorKind::BadVarint => write!(f, "malformed varint"),
            ErrorKind::BadOffset(o, what) => write!(f, "{what} offset {o} is invalid"),
            ErrorKind::BadPath(at, why) => write!(f, "bad path at offset {at}: {why}"),
            ErrorKind::Decompression(m) => write!(f, "decompression failed: {m}"),
            ErrorKind::Compression(m) => write!(f, "compression failed: {m}"),
            ErrorKind::LimitExceeded(m) => write!(f, "limit exceeded: {m}"),
            ErrorKind::DepthExceeded(d) => {
                write!(f, "maximum recursion depth ({d}) exceeded")
            }
            ErrorKind::InvalidUtf8 => write!(f, "invalid UTF-8 in a STR_UTF8 string"),
            ErrorKind::TrailingData => write!(f, "trailing data after the document body"),
            ErrorKind::BlessRefused => write!(
                f,
                "attempted to serialize a blessed object with croak_on_bless set"
            ),
            ErrorKind::BadOption(m) => write!(f, "invalid option: {m}"),
            ErrorKind::Borrowed => {
                write!(f, "a container in the graph is mutably borrowed during encoding")
            }
            ErrorKind::Locked => write!(
                f,
                "a container being encoded cannot be changed by a callback (use the Snapshot policy to allow it)"
            ),
            ErrorKind::Callback(m) => write!(f, "{m}"),
            ErrorKind::Unsupported(m) => write!(f, "{m}"),
            ErrorKind::MissingFeature(name) => write!(
                f,
                "{name} compression is not built in: enable the `{name}` cargo feature of the sereal crate"
            ),
            ErrorKind::Io(e) => write!(f, "{} failed: {}", e.op, e.error),
            ErrorKind::DuplicateKey(k) => {
                f.write_str("duplicate key ")?;
                crate::value::write_quoted(f, k)?;
                f.write_str(" in hash")
            }
            ErrorKind::ObjectRefused => write!(f, "objects are refused (refuse_objects)"),
            ErrorKind::CompressionRefused(c) => {
                write!(f, "{c:?} compressed documents are refused")
            }
            ErrorKind::WrongBody(expected) => write!(f, "node is not {expected}"),
            ErrorKind::Message(m) | ErrorKind::Json(m) | ErrorKind::Invalid(m) => {
                write!(f, "{m}")
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &*self.0;
        match e.offset {
            Some(o) if e.in_body => write!(f, "{} at decompressed body offset {o}", e.kind),
            Some(o) => write!(f, "{} at offset {o}", e.kind),
            None => write!(f, "{}", e.kind),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Io(e) => Some(&*e.error),
            _ => self
                .0
                .source
                .as_ref()
                .map(|e| e as &(dyn std::error::Error + 'static)),
        }
    }
}
