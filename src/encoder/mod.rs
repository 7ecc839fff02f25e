//! The single-pass encoder.
//!
//! The encoder walks the graph once, writing into one output buffer, and
//! makes every choice Perl's `Sereal::Encoder` makes for the same data and
//! options: which nodes to track (by reference count), `REFN ARRAY` versus
//! `ARRAYREF_n`, `REFP`/`ALIAS`/`COPY`/`OBJECTV` placement, float widths.

mod held;
mod options;
mod order;
mod seen;
mod strings;
mod writer;

use crate::compress::{self, Compression};
use crate::error::{Error, ErrorKind, Result};
use crate::local::{elsewhere, Handler, ThreadBound};
use crate::protocol;
use crate::value::{ClassMap, ClassNames, Foreign, Key, Ref, Value};
pub use options::{CallbackPolicy, EncoderOptions, KeyOrder};
use seen::{Seen, Spare};

type FreezeFn = dyn FnMut(&Ref) -> Result<Vec<Value>>;
type StringifyFn = dyn FnMut(&Foreign) -> Result<String>;
type Freeze = Handler<Box<dyn FnMut(&Ref) -> Result<Vec<Value>> + Send + Sync>, Box<FreezeFn>>;
type Stringify =
    Handler<Box<dyn FnMut(&Foreign) -> Result<String> + Send + Sync>, Box<StringifyFn>>;

/// The predicate of [`Encoder::freeze_allow_if`].
type FreezeAllow = Box<dyn Fn(&Key, &Ref) -> bool + Send + Sync>;

/// The user code an encoder may call.
#[derive(Default)]
struct Callbacks {
    freeze: ClassMap<Freeze>,
    stringify: Option<Stringify>,
    /// Perl's code-reference form of `freeze_allow_classes`.
    allow: Option<FreezeAllow>,
}

impl Callbacks {
    /// The FREEZE handler of `class`, which the caller knows is registered;
    /// an error for one bound to another thread.
    fn freeze(&mut self, class: &Key) -> Result<&mut FreezeFn> {
        let h = self.freeze.get_mut(class).expect("a FREEZE handler");
        h.get_mut(|f| &mut **f as &mut FreezeFn, |f| &mut **f)
            .ok_or_else(|| elsewhere("FREEZE handler", Some(class), "on_freeze_shared"))
    }

    /// The stringify handler, which the caller knows is registered; an
    /// error for one bound to another thread.
    fn stringify(&mut self) -> Result<&mut StringifyFn> {
        let h = self.stringify.as_mut().expect("a stringify handler");
        h.get_mut(|f| &mut **f as &mut StringifyFn, |f| &mut **f)
            .ok_or_else(|| elsewhere("stringify handler", None, "on_stringify_shared"))
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
    // `freeze_allow_classes`, as Perl compares them
    allowed: Option<ClassNames>,
    seen: Seen,
    // the memory of the last body's `Retained`
    spare: Spare,
    callbacks: Callbacks,
    active: Vec<seen::Addr>,
    warnings: Vec<String>,
    scratch: Vec<u8>,
    // size of the last document, the starting capacity of the next one
    size_hint: usize,
    // nodes whose strong references are written after a `PAD` (see
    // `with_pads`); empty but for lossless JSON's documents
    pads: hashbrown::HashSet<usize>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.callbacks;
        f.debug_struct("Encoder")
            .field("opts", &self.opts)
            .field("freeze_classes", &c.freeze.names().collect::<Vec<_>>())
            .field("on_stringify", &c.stringify.is_some())
            .field("freeze_allow_if", &c.allow.is_some())
            .finish()
    }
}

impl Encoder {
    /// An encoder with `options`; errors on an invalid combination.
    ///
    /// ```
    /// use sereal::{Compression, Encoder, EncoderOptions, ErrorKind};
    /// assert!(Encoder::new(EncoderOptions::new().compress(Compression::Zstd)).is_ok());
    /// // zstd is not in protocol 2
    /// let e = Encoder::new(EncoderOptions::new().protocol_version(2).compress(Compression::Zstd)).unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::BadOption(_)));
    /// ```
    pub fn new(options: EncoderOptions) -> Result<Encoder> {
        options.validate()?;
        let allowed = options.freeze_allow_classes.as_deref().map(ClassNames::new);
        Ok(Encoder {
            opts: options,
            allowed,
            seen: Seen::default(),
            spare: Spare::default(),
            callbacks: Callbacks::default(),
            active: Vec::new(),
            warnings: Vec::new(),
            scratch: Vec::new(),
            size_hint: 64,
            pads: hashbrown::HashSet::new(),
        })
    }

    /// Runs `f` with a `PAD` written before every strong reference to the
    /// nodes at `pads` (Perl's `WEAKEN` made strong, which a document kept
    /// as one of its forms: see `json::Document`).
    #[cfg(feature = "json")]
    pub(crate) fn with_pads<R>(&mut self, pads: &[usize], f: impl FnOnce(&mut Self) -> R) -> R {
        self.pads.extend(pads.iter().copied());
        let r = f(self);
        self.pads.clear();
        r
    }

    /// The options in use.
    ///
    /// ```
    /// use sereal::{Encoder, EncoderOptions};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let enc = Encoder::new(EncoderOptions::new().sort_keys(true))?;
    /// assert!(enc.options().sort_keys);
    /// # Ok(())
    /// # }
    /// ```
    pub fn options(&self) -> &EncoderOptions {
        &self.opts
    }

    /// Registers the FREEZE handler of `class`: with `freeze_callbacks`, an
    /// object of the class is written as `OBJECT_FREEZE` followed by the
    /// values the handler returns (Perl's `FREEZE` method). The handler runs
    /// once per object, however often the object is met: a later meeting is
    /// written as a reference to the first writing, and the encoder drops
    /// the returned values once they are written (at its next callback, or
    /// when the document is done). It may read the graph; under the default
    /// [`CallbackPolicy::Guard`] it may not change containers being written
    /// (nor may the drop of a value it returned). Class names compare as
    /// Perl compares package names, as text: `"Café"` is also the class
    /// whose name is the Latin-1 bytes `Caf\xe9`.
    ///
    /// ```
    /// use sereal::{Decoder, Encoder, EncoderOptions, Ref, Value};
    /// let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    /// enc.on_freeze("Point", |p| {
    ///     let h = p.as_hash().unwrap();
    ///     Ok(vec![h.get("x").cloned().unwrap_or_default(), h.get("y").cloned().unwrap_or_default()])
    /// });
    /// let point = Value::Ref(Ref::hash([("x", 1), ("y", 2)].into_iter().collect()).blessed("Point"));
    /// let doc = enc.encode(&point).unwrap();
    /// assert_eq!(&doc[6..8], b"\x32\x65"); // OBJECT_FREEZE, "Point"
    /// ```
    ///
    /// The handler is bound to the thread that registers it, so it may hold
    /// graph handles (`Ref`, `Rc`, `Cell`). If the encoder moves to another
    /// thread, an object of the class fails the encode there with a
    /// [`Callback`](ErrorKind::Callback) error saying so; register with
    /// [`Encoder::on_freeze_shared`] to run the handler on any thread.
    pub fn on_freeze(
        &mut self,
        class: impl Into<Key>,
        handler: impl FnMut(&Ref) -> Result<Vec<Value>> + 'static,
    ) -> &mut Self {
        self.callbacks.freeze.insert(
            &class.into(),
            Handler::Local(ThreadBound::new(Box::new(handler))),
        );
        self
    }

    /// As [`Encoder::on_freeze`], for a handler that is `Send + Sync` and so
    /// runs on whichever thread the encoder is used.
    ///
    /// ```
    /// use sereal::{Encoder, EncoderOptions, Ref, Value};
    /// let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    /// enc.on_freeze_shared("Id", |id| Ok(vec![id.as_hash().unwrap().get("n").cloned().unwrap()]));
    /// let doc = std::thread::spawn(move || {
    ///     let id = Value::Ref(Ref::hash([("n", 7)].into_iter().collect()).blessed("Id"));
    ///     enc.encode(&id).unwrap()
    /// })
    /// .join()
    /// .unwrap();
    /// assert_eq!(&doc[6..8], b"\x32\x62"); // OBJECT_FREEZE, "Id"
    /// ```
    pub fn on_freeze_shared(
        &mut self,
        class: impl Into<Key>,
        handler: impl FnMut(&Ref) -> Result<Vec<Value>> + Send + Sync + 'static,
    ) -> &mut Self {
        self.callbacks
            .freeze
            .insert(&class.into(), Handler::Shared(Box::new(handler)));
        self
    }

    /// Perl's code-reference form of `freeze_allow_classes`: `allow` is
    /// asked, for each object whose class has a FREEZE handler, whether the
    /// handler may run (it gets the class and the object, and runs inside
    /// the callback boundary as FREEZE does). A refused object fails the
    /// encode, or with `freeze_deny_serialize` is written as if its class
    /// had no handler. Like the list form it sets `freeze_callbacks`
    /// (unless `no_bless_objects` is set); with the list too, both must
    /// allow.
    ///
    /// ```
    /// use sereal::{Encoder, EncoderOptions, Ref, Value};
    /// let mut enc = Encoder::new(EncoderOptions::new().freeze_deny_serialize(true)).unwrap();
    /// enc.on_freeze("Point", |_| Ok(vec![Value::from(1)]));
    /// enc.freeze_allow_if(|_, object| object.as_hash().is_some_and(|h| h.contains_key("x")));
    /// let with_x = Value::Ref(Ref::hash([("x", 1)].into_iter().collect()).blessed("Point"));
    /// let without = Value::Ref(Ref::hash(Default::default()).blessed("Point"));
    /// assert_eq!(enc.encode(&with_x).unwrap()[6], 0x32); // OBJECT_FREEZE
    /// assert_eq!(enc.encode(&without).unwrap()[6], 0x2c); // OBJECT
    /// ```
    pub fn freeze_allow_if(
        &mut self,
        allow: impl Fn(&Key, &Ref) -> bool + Send + Sync + 'static,
    ) -> &mut Self {
        self.callbacks.allow = Some(Box::new(allow));
        // as Perl's freeze_allow_classes, unless no_bless_objects excludes it
        self.opts.freeze_callbacks |= !self.opts.no_bless_objects;
        self
    }

    /// Registers the handler that turns a [`Value::Foreign`] into a string
    /// under `stringify_unknown` (Perl stringifies such values). Bound to
    /// the registering thread, as with [`Encoder::on_freeze`].
    ///
    /// ```
    /// use sereal::{Encoder, EncoderOptions, Foreign, Value};
    /// use std::time::Duration;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let mut enc = Encoder::new(EncoderOptions::new().stringify_unknown(true))?;
    /// enc.on_stringify(|f| match f.downcast_ref::<Duration>() {
    ///     Some(d) => Ok(format!("{}s", d.as_secs())),
    ///     None => Ok(f.type_name().to_string()),
    /// });
    /// let v = Value::array([Value::Foreign(Foreign::new(Duration::from_secs(3)))]);
    /// assert_eq!(sereal::decode(&enc.encode(&v)?)?, Value::array(["3s"]));
    /// # Ok(())
    /// # }
    /// ```
    pub fn on_stringify(
        &mut self,
        handler: impl FnMut(&Foreign) -> Result<String> + 'static,
    ) -> &mut Self {
        self.callbacks.stringify = Some(Handler::Local(ThreadBound::new(Box::new(handler))));
        self
    }

    /// As [`Encoder::on_stringify`], for a `Send + Sync` handler that runs on
    /// any thread.
    ///
    /// ```
    /// use sereal::{Encoder, EncoderOptions, Foreign, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let mut enc = Encoder::new(EncoderOptions::new().stringify_unknown(true))?;
    /// enc.on_stringify_shared(|f| Ok(format!("<{}>", f.type_name())));
    /// // the handler goes with the encoder to another thread
    /// let doc = std::thread::spawn(move || {
    ///     let v = Value::array([Value::Foreign(Foreign::new(7u8))]);
    ///     enc.encode(&v)
    /// })
    /// .join()
    /// .unwrap()?;
    /// assert_eq!(sereal::decode(&doc)?, Value::array(["<u8>"]));
    /// # Ok(())
    /// # }
    /// ```
    pub fn on_stringify_shared(
        &mut self,
        handler: impl FnMut(&Foreign) -> Result<String> + Send + Sync + 'static,
    ) -> &mut Self {
        self.callbacks.stringify = Some(Handler::Shared(Box::new(handler)));
        self
    }

    /// The warnings `warn_unknown` recorded since the last call.
    ///
    /// ```
    /// use sereal::{Encoder, EncoderOptions, Foreign, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let mut enc = Encoder::new(EncoderOptions::new().stringify_unknown(true).warn_unknown(true))?;
    /// let v = Value::array([Value::Foreign(Foreign::new(1u8)), Value::Foreign(Foreign::new(2u8))]);
    /// enc.encode(&v)?;
    /// assert_eq!(enc.take_warnings().len(), 2);
    /// assert!(enc.take_warnings().is_empty()); // taken
    /// # Ok(())
    /// # }
    /// ```
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Whether user code can run during an encode with these options.
    fn callbacks_possible(&self) -> bool {
        (self.opts.freeze_callbacks && !self.callbacks.freeze.is_empty())
            || (self.opts.stringify_unknown && self.callbacks.stringify.is_some())
    }

    /// Encodes `value` as a complete document.
    ///
    /// ```
    /// use sereal::{Encoder, EncoderOptions, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let mut enc = Encoder::new(EncoderOptions::new())?;
    /// // one encoder for many documents: its tables are reused
    /// for n in 0..3 {
    ///     let doc = enc.encode(&Value::hash([("n", n)]))?;
    ///     assert_eq!(sereal::decode(&doc)?.get("n"), Some(Value::from(n)));
    /// }
    /// # Ok(())
    /// # }
    /// ```
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
    /// assert_eq!(header.as_deref(), Some(&Value::from("meta")));
    /// assert_eq!(body, Value::from(1));
    /// ```
    pub fn encode_with_header(&mut self, value: &Value, header: &Value) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.size_hint);
        self.encode_to(value, Some(header), &mut out)?;
        Ok(out)
    }

    /// Appends the document for `value` (and optional user header data) to
    /// `out`. On error `out` is left as it was. After an error, or a panic in
    /// a callback, the encoder is ready for the next document: its tables
    /// are empty and whatever it kept alive is released.
    ///
    /// ```
    /// use sereal::{Encoder, Foreign, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let mut enc = Encoder::new(Default::default())?;
    /// let mut out = b"frame:".to_vec();
    /// enc.encode_to(&Value::from(1), Some(&Value::from("h")), &mut out)?;
    /// assert_eq!(&out[..6], b"frame:");
    /// let (header, body) = sereal::Decoder::default().decode_with_header(&out[6..])?;
    /// assert_eq!((header.unwrap().into_value(), body.into_value()), (Value::from("h"), Value::from(1)));
    /// // a failed encode leaves `out` as it was
    /// let len = out.len();
    /// assert!(enc.encode_to(&Value::Foreign(Foreign::new(())), None, &mut out).is_err());
    /// assert_eq!(out.len(), len);
    /// # Ok(())
    /// # }
    /// ```
    pub fn encode_to(
        &mut self,
        value: &Value,
        header: Option<&Value>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let start = out.len();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.encode_inner(value, header, out)
        }));
        self.seen.clear();
        self.active.clear();
        match r {
            Ok(Ok(())) => {
                self.size_hint = (out.len() - start).max(64);
                Ok(())
            }
            Ok(Err(e)) => {
                out.truncate(start);
                Err(e)
            }
            Err(panic) => {
                out.truncate(start);
                std::panic::resume_unwind(panic)
            }
        }
    }

    fn encode_inner(
        &mut self,
        value: &Value,
        header: Option<&Value>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let version = self.opts.protocol_version;
        let doc_start = out.len();
        protocol::write_magic(out, version);
        match header {
            None => out.push(0),
            Some(h) => {
                if version < 2 {
                    return Err(Error::new(ErrorKind::BadOption(
                        "user header data needs protocol version 2 or later".into(),
                    )));
                }
                // The user data starts with its flag byte; offsets count
                // from that byte (Perl's), so the first data byte is offset 1.
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.clear();
                scratch.push(protocol::HEADER_USER_DATA);
                let r = writer::Writer::new(self, &mut scratch, 0, 1).body(h);
                self.seen.clear();
                self.active.clear();
                if let Err(e) = r {
                    self.scratch = scratch;
                    return Err(e);
                }
                protocol::write_varint(out, scratch.len() as u64);
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
        writer::Writer::new(self, out, base, body_start).body(value)?;
        self.opts
            .framing()
            .finish(out, doc_start, body_start, version)?;
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
///
/// ```
/// use sereal::{EncoderOptions, Value};
/// # fn main() -> Result<(), sereal::Error> {
/// let opts = EncoderOptions::new().protocol_version(1);
/// let doc = sereal::encode_with(&Value::from("hi"), &opts)?;
/// assert_eq!(doc, b"=srl\x01\x00\x62hi");
/// # Ok(())
/// # }
/// ```
pub fn encode_with(value: &Value, options: &EncoderOptions) -> Result<Vec<u8>> {
    Encoder::new(options.clone())?.encode(value)
}
