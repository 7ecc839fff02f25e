//! The decoder: every tag of protocols 1 to 5, compressed bodies and user
//! header data, into a [`Value`] graph that re-encodes to the same bytes.
//!
//! [`decode`] reads a document with the default options; a [`Decoder`]
//! keeps [`DecoderOptions`] (Perl's decoder options, and the limits for
//! input you do not control: [`memory`] says how a decode counts what it
//! holds) and THAW handlers, and reads user header data, concatenated
//! documents ([`Decoder::documents`]) and `bytes::Bytes` buffers without
//! copying long strings ([`decode_bytes`]). Documents that arrive in pieces
//! are read by [`crate::stream`].

use crate::compress::Compression;
use crate::error::{Error, ErrorKind, Result};
use crate::local::{elsewhere, Handler, ThreadBound};
use crate::protocol;
use crate::value::{ClassMap, ClassNames, Document, Key, Value};
use bytes::Bytes;
use std::borrow::Cow;
use std::ops::Range;
use std::rc::Rc;
use std::sync::Arc;

mod documents;
mod frame;
mod header;
pub mod memory;
mod options;
pub(crate) mod reader;
mod scratch;

pub use documents::Documents;
pub use frame::looks_like_sereal;
pub(crate) use frame::{document_size_check, frame};
pub use header::Header;

#[cfg(feature = "serde")]
pub(crate) use options::DEFAULTS;
pub use options::{DecoderOptions, ThawOrder};

pub(crate) use reader::string_over_limit;
pub(crate) use reader::Forms;
use reader::Reader;
use scratch::Scratch;

/// A THAW handler: the class and the values FREEZE returned, to the object.
type ThawFn = dyn Fn(&Key, Vec<Value>) -> Result<Value>;
type Thaw = Handler<Arc<dyn Fn(&Key, Vec<Value>) -> Result<Value> + Send + Sync>, Rc<ThawFn>>;

/// Runs the THAW handler `h` of `class`, unless it is bound to another
/// thread.
pub(crate) fn thaw(h: &Thaw, class: &Key, values: Vec<Value>) -> Result<Value> {
    match h.get(|f| &**f as &ThawFn, |f| &**f) {
        Some(f) => f(class, values),
        None => Err(elsewhere("THAW handler", Some(class), "on_thaw_shared")),
    }
}

/// A reusable decoder.
///
/// A decoder keeps, from one decode to the next, the scratch space it read
/// its largest hash of more than 64 entries in (16 bytes a key), and the
/// blocks it wrote nodes and the keys of hashes of 256 entries or more in
/// (1,024 nodes in 72 KiB, 1,024 keys in 32 KiB), as they come back free
/// when the documents holding them are dropped, up to as many as one
/// decode has used: a server that decodes such documents with one decoder
/// writes each into memory already in use, as Perl's arenas are reused.
/// A node or key kept after its document keeps its block. All of it is
/// freed with the decoder (a clone starts with none); [`decode`] and
/// [`decode_bytes`] keep none. One decoder may decode on several threads
/// at once.
///
/// ```
/// use sereal::{encode, Decoder, Value};
/// let doc = encode(&Value::array(["a", "b"])).unwrap();
/// let v = Decoder::default().decode(&doc).unwrap();
/// assert_eq!(v.at(1), Some(Value::from("b")));
/// ```
#[derive(Clone, Default)]
pub struct Decoder {
    opts: DecoderOptions,
    thaw: ClassMap<Thaw>,
    // `thaw_allow_classes`, as Perl compares them
    thaw_allowed: Option<ClassNames>,
    // Perl's predicate form of `thaw_allow_classes`
    thaw_allow_if: Option<ThawAllow>,
    scratch: Scratch,
}

/// The predicate of [`Decoder::thaw_allow_if`].
type ThawAllow = Arc<dyn Fn(&Key) -> bool + Send + Sync>;

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("opts", &self.opts)
            .field("thaw_classes", &self.thaw.names().collect::<Vec<_>>())
            .finish()
    }
}

/// Decodes the body of a document with the default options.
///
/// The [`Document`] dereferences to the root [`Value`] and frees the
/// graph's cycles when dropped.
///
/// ```
/// let doc = sereal::decode(b"=\xF3rl\x05\x00\x42\x01\x61a").unwrap();
/// assert_eq!(doc, sereal::Value::array([sereal::Value::from(1), "a".into()]));
/// ```
pub fn decode(input: &[u8]) -> Result<Document> {
    default_decoder().decode(input)
}

/// Decodes the body of a document held in a shared buffer, with the
/// default options, keeping its long strings as slices of that buffer
/// instead of copies: see [`Decoder::decode_bytes`].
///
/// ```
/// use bytes::Bytes;
/// use sereal::Value;
/// let page = "<p>".repeat(400);
/// let input = Bytes::from(sereal::encode(&Value::array([page.as_str()])).unwrap());
/// let doc = sereal::decode_bytes(&input).unwrap();
/// assert_eq!(doc, Value::array([page.as_str()]));
/// ```
pub fn decode_bytes(input: &Bytes) -> Result<Document> {
    default_decoder().decode_bytes(input)
}

/// One default decoder for the process: it holds no handler, so it is the
/// same on every thread, and keeps no scratch space between decodes.
pub(crate) fn default_decoder() -> &'static Decoder {
    static DEFAULT: std::sync::LazyLock<Decoder> = std::sync::LazyLock::new(|| Decoder {
        scratch: Scratch::none(),
        ..Decoder::default()
    });
    &DEFAULT
}

impl Decoder {
    /// A decoder with `options`.
    ///
    /// ```
    /// use sereal::{Decoder, DecoderOptions, ErrorKind, Ref, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let dec = Decoder::new(DecoderOptions::new().refuse_objects(true));
    /// let obj = sereal::encode(&Value::from(Ref::hash([("x", 1)].into()).blessed("Point")))?;
    /// assert_eq!(dec.decode(&obj).unwrap_err().kind(), &ErrorKind::ObjectRefused);
    /// assert_eq!(dec.decode(&sereal::encode(&Value::from(1))?)?, Value::from(1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(options: DecoderOptions) -> Decoder {
        let thaw_allowed = options.thaw_allow_classes.as_deref().map(ClassNames::new);
        Decoder {
            opts: options,
            thaw: ClassMap::default(),
            thaw_allowed,
            thaw_allow_if: None,
            scratch: Scratch::kept(),
        }
    }

    /// Perl's code-reference form of `thaw_allow_classes`: `allow` is asked,
    /// once per frozen object whose class has a THAW handler, whether the
    /// handler may run; a refused object fails the decode, or with
    /// `thaw_deny_raw` stays frozen. With `thaw_allow_classes` too, both
    /// must allow. (Perl's hash form is the list of its true keys.)
    ///
    /// ```
    /// use sereal::{Decoder, DecoderOptions, Encoder, EncoderOptions, Ref, Value};
    /// let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    /// enc.on_freeze("App::Point", |_| Ok(vec![Value::from(1)]));
    /// let doc = enc.encode(&Value::Ref(Ref::hash(Default::default()).blessed("App::Point"))).unwrap();
    ///
    /// let mut dec = Decoder::new(DecoderOptions::new().thaw_deny_raw(true));
    /// dec.on_thaw_shared("App::Point", |_, _| Ok(Value::from("thawed")));
    /// dec.thaw_allow_if(|class| class.as_bytes().starts_with(b"Trusted::"));
    /// let v = dec.decode(&doc).unwrap(); // refused: it stays frozen
    /// assert_eq!(v.node().unwrap().class().unwrap().to_string(), "App::Point");
    /// ```
    pub fn thaw_allow_if(
        &mut self,
        allow: impl Fn(&Key) -> bool + Send + Sync + 'static,
    ) -> &mut Self {
        self.thaw_allow_if = Some(Arc::new(allow));
        self
    }

    /// Registers the THAW handler of `class` (Perl's `THAW` class method):
    /// an `OBJECT_FREEZE` of the class decodes to what the handler makes of
    /// the values its FREEZE returned. Without a handler such an object
    /// decodes to a node of class `class` with a [`Body::Frozen`](crate::Body::Frozen) body, which
    /// encodes back as the same `OBJECT_FREEZE` and values. (The bytes can
    /// differ in one case: where FREEZE returned a container its object also
    /// held, Perl wrote it as shared; decoded, only the frozen values hold it.)
    /// Class names compare as text, as Perl compares package names and as
    /// `thaw_allow_classes` matches them: `"Café"` is also the class Perl
    /// writes as the Latin-1 bytes `Caf\xe9`.
    ///
    /// ```
    /// use sereal::{Decoder, Encoder, EncoderOptions, Ref, Value};
    /// let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    /// enc.on_freeze("Celsius", |t| Ok(vec![t.as_hash().unwrap().get("deg").cloned().unwrap()]));
    /// let t = Value::Ref(Ref::hash([("deg", 21)].into_iter().collect()).blessed("Celsius"));
    /// let doc = enc.encode(&t).unwrap();
    ///
    /// let mut dec = Decoder::default();
    /// dec.on_thaw("Celsius", |class, mut vals| {
    ///     let deg = vals.pop().unwrap_or_default();
    ///     Ok(Value::Ref(Ref::hash([("deg", deg)].into_iter().collect()).blessed(class)))
    /// });
    /// assert_eq!(dec.decode(&doc).unwrap(), t);
    /// ```
    ///
    /// The handler is bound to the thread that registers it, so it may hold
    /// non-thread-safe state. On another thread (a decoder moved there, or
    /// shared behind an `Arc`), an object of the class fails the decode with
    /// a [`Callback`](ErrorKind::Callback) error saying so; register with
    /// [`Decoder::on_thaw_shared`] to run the handler on any thread.
    pub fn on_thaw(
        &mut self,
        class: impl Into<Key>,
        handler: impl Fn(&Key, Vec<Value>) -> Result<Value> + 'static,
    ) -> &mut Self {
        self.thaw.insert(
            &class.into(),
            Handler::Local(ThreadBound::new(Rc::new(handler))),
        );
        self
    }

    /// As [`Decoder::on_thaw`], for a `Send + Sync` handler that runs on any
    /// thread: a decoder configured with it can sit in a server's shared
    /// state.
    ///
    /// ```
    /// use sereal::{Decoder, Encoder, EncoderOptions, Ref, Value};
    /// use std::sync::Arc;
    /// let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    /// enc.on_freeze("Id", |id| Ok(vec![id.as_hash().unwrap().get("n").cloned().unwrap()]));
    /// let doc = enc.encode(&Value::Ref(Ref::hash([("n", 7)].into_iter().collect()).blessed("Id"))).unwrap();
    ///
    /// let mut dec = Decoder::default();
    /// dec.on_thaw_shared("Id", |_, mut vals| Ok(vals.pop().unwrap_or_default()));
    /// let dec = Arc::new(dec);
    /// let n = std::thread::spawn(move || dec.decode(&doc).unwrap().as_i64()).join().unwrap();
    /// assert_eq!(n, Some(7));
    /// ```
    pub fn on_thaw_shared(
        &mut self,
        class: impl Into<Key>,
        handler: impl Fn(&Key, Vec<Value>) -> Result<Value> + Send + Sync + 'static,
    ) -> &mut Self {
        self.thaw
            .insert(&class.into(), Handler::Shared(Arc::new(handler)));
        self
    }

    /// The options in use.
    ///
    /// ```
    /// use sereal::{Decoder, DecoderOptions};
    /// let dec = Decoder::new(DecoderOptions::new().max_num_array_entries(100));
    /// assert_eq!(dec.options().max_num_array_entries, 100);
    /// assert_eq!(Decoder::default().options(), &DecoderOptions::default());
    /// ```
    pub fn options(&self) -> &DecoderOptions {
        &self.opts
    }

    /// Decodes the document's body.
    ///
    /// ```
    /// use sereal::{Decoder, ErrorKind, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let dec = Decoder::default();
    /// let doc = dec.decode(b"=\xF3rl\x05\x00\x42\x01\x61a")?; // [1, "a"]
    /// assert_eq!(doc, Value::array([Value::from(1), Value::from("a")]));
    /// // the input is one document: nothing may follow it
    /// let e = dec.decode(b"=\xF3rl\x05\x00\x01\x02").unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::TrailingData);
    /// # Ok(())
    /// # }
    /// ```
    pub fn decode(&self, input: &[u8]) -> Result<Document> {
        let header = Header::parse(input)?;
        self.body(input, &header)
    }

    /// Decodes the document's body from a shared buffer (what network
    /// libraries hand out, a `Bytes` of a socket read or an HTTP body),
    /// keeping each string too long to be stored inline (over 22 bytes) as
    /// a slice of that buffer instead of a copy: no allocation and no copy
    /// per long string. The body of a compressed document is decompressed
    /// once into a buffer of its own, which its strings share in the same
    /// way.
    ///
    /// Each such string holds the buffer: the memory stays allocated while
    /// any of them lives, even after the rest of the document is dropped.
    /// Copy a string that outlives its document ([`Str::new`] of its
    /// bytes) to let the buffer go. Hash keys, class names and regexps are
    /// copied as [`decode`](Self::decode) copies them. The graph, the
    /// errors and every option are those of [`decode`](Self::decode).
    ///
    /// ```
    /// use bytes::Bytes;
    /// use sereal::{Decoder, Value};
    /// let body = "a long string, as a web page or a JSON blob would be".repeat(20);
    /// let input = Bytes::from(sereal::encode(&Value::hash([("body", body.as_str())])).unwrap());
    /// let doc = Decoder::default().decode_bytes(&input).unwrap();
    /// let Some(Value::Bytes(s) | Value::Utf8(s)) = doc.get("body") else { unreachable!() };
    /// assert!(s.is_shared());
    /// assert_eq!(s.as_bytes(), body.as_bytes());
    /// ```
    ///
    /// [`Str::new`]: crate::Str::new
    pub fn decode_bytes(&self, input: &Bytes) -> Result<Document> {
        let header = Header::parse(input)?;
        document_size_check(&self.opts, input.len())?;
        let (v, end, _) = self.shared_body_prefix(input, &header, Some(input), false, 0)?;
        if end != input.len() {
            return Err(Error::at(ErrorKind::TrailingData, end));
        }
        Ok(v)
    }

    /// Decodes the user header data and the body.
    ///
    /// ```
    /// use sereal::{Decoder, Encoder, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let mut enc = Encoder::new(Default::default())?;
    /// let doc = enc.encode_with_header(&Value::array([1, 2]), &Value::hash([("v", 2)]))?;
    /// let (header, body) = Decoder::default().decode_with_header(&doc)?;
    /// assert_eq!(header.unwrap().get("v"), Some(Value::from(2)));
    /// assert_eq!(body, Value::array([1, 2]));
    /// // a document without user header data
    /// let (header, _) = Decoder::default().decode_with_header(&enc.encode(&Value::Undef)?)?;
    /// assert!(header.is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn decode_with_header(&self, input: &[u8]) -> Result<(Option<Document>, Document)> {
        let header = Header::parse(input)?;
        let user = self.user_header(input, &header)?;
        Ok((user, self.body(input, &header)?))
    }

    /// The document at the start of `input` (followed by more data if
    /// `prefix`, else alone), as [`decode_with_header`] reads it, with the
    /// bytes it took and the forms of writing its user header data and body
    /// chose that their graphs do not keep.
    ///
    /// [`decode_with_header`]: Self::decode_with_header
    #[cfg(feature = "json")]
    pub(crate) fn decode_with_forms(
        &self,
        input: &[u8],
        prefix: bool,
    ) -> Result<(Option<Document>, Document, usize, Forms)> {
        let header = Header::parse(input)?;
        let (user, forms) = self.user_header_forms(input, &header, true)?;
        if !prefix {
            // The input is the document: refused before it is read.
            document_size_check(&self.opts, input.len())?;
        }
        let (body, used, more) = self.shared_body_prefix(input, &header, None, true, 0)?;
        if !prefix && used != input.len() {
            return Err(Error::at(ErrorKind::TrailingData, used));
        }
        document_size_check(&self.opts, used)?;
        let mut forms = forms.map(|f| *f).unwrap_or_default();
        if let Some(f) = more {
            forms.append(*f);
        }
        Ok((user, body, used, forms))
    }

    /// Decodes only the user header data (`None` if the document has none);
    /// the body is not read.
    ///
    /// ```
    /// use sereal::{Decoder, Encoder, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let mut enc = Encoder::new(Default::default())?;
    /// let mut doc = enc.encode_with_header(&Value::from("a large body"), &Value::from("type=A"))?;
    /// doc.truncate(doc.len() - 3); // even a damaged body: it is not read
    /// let header = Decoder::default().decode_header(&doc)?;
    /// assert_eq!(header.unwrap(), Value::from("type=A"));
    /// assert!(Decoder::default().decode(&doc).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn decode_header(&self, input: &[u8]) -> Result<Option<Document>> {
        let header = Header::parse(input)?;
        self.user_header(input, &header)
    }

    fn user_header(&self, input: &[u8], header: &Header) -> Result<Option<Document>> {
        Ok(self.user_header_forms(input, header, false)?.0)
    }

    /// The user header data, with its forms if `capture`.
    fn user_header_forms(
        &self,
        input: &[u8],
        header: &Header,
        capture: bool,
    ) -> Result<(Option<Document>, Option<Box<Forms>>)> {
        match &header.user_data {
            None => Ok((None, None)),
            Some(r) => {
                let at = r.start;
                let mut reader = Reader::new(&input[r.clone()], 1, self);
                if capture {
                    reader = reader.capturing();
                }
                let (v, forms) = reader.whole().map_err(|e| e.shifted(at, false))?;
                Ok((Some(v), forms))
            }
        }
    }

    /// Decodes the document at the start of `input`, which may be followed
    /// by more data: returns its body and the number of bytes it took.
    ///
    /// ```
    /// use sereal::{encode, Decoder, Value};
    /// let mut stream = encode(&Value::from(1)).unwrap();
    /// stream.extend(encode(&Value::from("two")).unwrap());
    /// let (first, used) = Decoder::default().decode_prefix(&stream).unwrap();
    /// assert_eq!(first, Value::from(1));
    /// assert_eq!(Decoder::default().decode(&stream[used..]).unwrap(), Value::from("two"));
    /// ```
    pub fn decode_prefix(&self, input: &[u8]) -> Result<(Document, usize)> {
        self.decode_prefix_held(input, 0)
    }

    /// As [`decode_prefix`](Self::decode_prefix), for a decode that holds
    /// `held` bytes of `max_memory` already (a stream's buffered document).
    pub(crate) fn decode_prefix_held(
        &self,
        input: &[u8],
        held: usize,
    ) -> Result<(Document, usize)> {
        let header = Header::parse(input)?;
        let (doc, used, _) = self.shared_body_prefix(input, &header, None, false, held)?;
        document_size_check(&self.opts, used)?;
        Ok((doc, used))
    }

    fn any_body_prefix(&self, input: &[u8], header: &Header) -> Result<(Document, usize)> {
        let (doc, end, _) = self.shared_body_prefix(input, header, None, false, 0)?;
        Ok((doc, end))
    }

    /// As `any_body_prefix`; `shared`, when given, is the buffer `input`
    /// is the bytes of, whose long strings the document keeps as slices;
    /// with the forms of the body if `capture`; `held`: the bytes of
    /// `max_memory` the decode holds already.
    fn shared_body_prefix(
        &self,
        input: &[u8],
        header: &Header,
        shared: Option<&Bytes>,
        capture: bool,
        held: usize,
    ) -> Result<(Document, usize, Option<Box<Forms>>)> {
        let (body, shift, end) = frame(&self.opts, input, header, held)?;
        // A decompressed body is held while the graph is built.
        let held = match &body {
            Cow::Owned(b) => held.saturating_add(b.len()),
            Cow::Borrowed(_) => held,
        };
        // A decompressed body becomes the shared buffer itself.
        let inflated = match (shared, body) {
            (Some(_), Cow::Owned(mut body)) => {
                // Its strings may hold it long: without the spare capacity
                // decompression left.
                body.shrink_to_fit();
                Ok(Bytes::from(body))
            }
            (_, body) => Err(body),
        };
        let (buf, source): (&[u8], _) = match &inflated {
            Ok(body) => (body, Some(body)),
            Err(body) => (body, shared),
        };
        let mut reader = Reader::new(buf, shift, self).sharing(source).holding(held);
        if capture {
            reader = reader.capturing();
        }
        match end {
            None => {
                let (v, used, forms) = reader.prefix().map_err(|e| e.shifted(header.len, false))?;
                Ok((v, header.len + used, forms))
            }
            Some(end) => {
                let (v, forms) = reader.whole().map_err(|e| e.shifted(0, true))?;
                Ok((v, end, forms))
            }
        }
    }

    fn body(&self, input: &[u8], header: &Header) -> Result<Document> {
        // The input is the document: refused before it is read.
        document_size_check(&self.opts, input.len())?;
        let (v, end) = self.any_body_prefix(input, header)?;
        if end != input.len() {
            return Err(Error::at(ErrorKind::TrailingData, end));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcut for the common header gives what the full parse gives,
    /// for every version-and-type byte, both magic strings and suffixes.
    #[test]
    fn common_header_shortcut_agrees_with_the_full_parse() {
        for magic in [protocol::MAGIC_V1, protocol::MAGIC_V3] {
            for vt in 0..=255u8 {
                for suffix in [&[0u8][..], &[1, 0], &[1, 1], &[2, 1, 7], &[]] {
                    let mut input = magic.to_vec();
                    input.push(vt);
                    input.extend_from_slice(suffix);
                    input.push(0x01);
                    let full = Header::parse_any(&input);
                    let fast = Header::parse(&input);
                    assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{input:02x?}");
                    if let Some(len) = Header::raw_len(&input) {
                        assert_eq!(full.unwrap().len, len);
                    }
                }
            }
        }
    }
}
