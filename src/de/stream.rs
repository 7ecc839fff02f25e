//! Documents one after another into serde types: [`Deserializer`] over a
//! slice or a reader of concatenated documents, the iterator it turns
//! into ([`StreamDeserializer`]), and the typed takes of the push and pull
//! streams ([`Incremental::next_as`], [`ReadDocuments::next_as`]).

use super::*;
use crate::decoder::Decoder;
use crate::stream::{Framer, Incremental, ReadDocuments, Ready};
use std::marker::PhantomData;

/// A serde deserializer over a stream of concatenated Sereal documents
/// (Perl's `incremental` option, a queue's or a socket's messages): each
/// read takes the next document, as `serde_json::Deserializer` takes the
/// next JSON value.
///
/// Made over a slice ([`from_slice`](Deserializer::from_slice)) or a
/// reader ([`from_reader`](Deserializer::from_reader)), with the default
/// [`DecoderOptions`] or the caller's (the `_with` constructors, or
/// [`Decoder::deserializer`] and [`Decoder::deserializer_from_reader`]:
/// limits, refusals). [`into_iter`](Deserializer::into_iter) turns it into an
/// iterator of `Result<T>`, one per document; `T::deserialize(&mut de)`
/// reads one document, and [`end`](Deserializer::end) checks that no
/// other follows.
///
/// Each document is read as [`from_slice`](crate::from_slice) reads one:
/// the same values, limits and errors, and from a slice the same
/// borrowing (`&str` and `&[u8]` fields borrow from an uncompressed
/// document). A weak reference to an item that is being read (one on the
/// path from the document's root to the weak reference: Perl's
/// child-to-parent link, `weaken($p->{kid}{up})`) reads as undef, which the
/// target type takes as it takes a missing value: `None` for an `Option`,
/// `()` for a unit, undef for a [`Value`](crate::Value), an ignored field
/// skipped. A weak reference to any other item reads as that item, as a
/// strong one does. (A strong reference back into the path is a cycle that
/// no tree type can hold: it is an error.) Hash keys are strings in
/// Sereal; a map whose key type is an integer (any width), a float, `bool`
/// or `char` parses them, as the serializer writes them (`"1"`, `"true"`,
/// `"x"`).
///
/// Errors carry stream offsets: the offset of the defect, or of the value
/// being read when the target type refused it, counted from the first
/// byte of the stream (for an error inside a compressed body, from the
/// start of the decompressed body, which the error's message says). The
/// first error ends the stream, as in `serde_json`: where a document
/// fails, where the next one starts is not always known. A consumer that
/// must go on past a document its type refuses takes the documents' bytes
/// ([`Incremental::next_raw`], [`ReadDocuments::next_raw`],
/// `codec::RawCodec` with the `tokio` feature) and deserializes each with
/// [`from_slice`](crate::from_slice).
///
/// ```
/// use serde::Deserialize;
/// #[derive(Deserialize, Debug, PartialEq)]
/// struct User<'a> { id: u32, name: &'a str }
/// let mut buf = sereal::to_vec(&sereal::Value::hash([("id", sereal::Value::from(7)), ("name", "ann".into())])).unwrap();
/// buf.extend(sereal::to_vec(&sereal::Value::hash([("id", sereal::Value::from(8)), ("name", "bo".into())])).unwrap());
///
/// let mut it = sereal::Deserializer::from_slice(&buf).into_iter::<User>();
/// assert_eq!(it.next().unwrap().unwrap(), User { id: 7, name: "ann" });
/// assert_eq!(it.next().unwrap().unwrap(), User { id: 8, name: "bo" });
/// assert!(it.next().is_none());
/// assert_eq!(it.byte_offset(), buf.len());
/// ```
#[derive(Debug)]
pub struct Deserializer<R> {
    read: R,
}

/// The input of a [`Deserializer`] made over a slice: the documents' bytes,
/// how far they have been read, and the options they are read with.
#[derive(Debug)]
pub struct SliceRead<'de> {
    input: &'de [u8],
    pos: usize,
    opts: DecoderOptions,
    failed: bool,
}

/// The input of a [`Deserializer`] made over a reader: the documents as
/// [`ReadDocuments`] reads them.
#[derive(Debug)]
pub struct IoRead<R> {
    docs: ReadDocuments<R>,
}

impl<'de> Deserializer<SliceRead<'de>> {
    /// A deserializer over the documents in `input`, with the default
    /// options.
    ///
    /// ```
    /// let mut buf = sereal::to_vec(&1u8).unwrap();
    /// buf.extend(sereal::to_vec(&2u8).unwrap());
    /// let mut de = sereal::Deserializer::from_slice(&buf);
    /// let one: u8 = serde::Deserialize::deserialize(&mut de).unwrap();
    /// let two: u8 = serde::Deserialize::deserialize(&mut de).unwrap();
    /// assert_eq!((one, two), (1, 2));
    /// de.end().unwrap();
    /// ```
    pub fn from_slice(input: &'de [u8]) -> Self {
        Deserializer::from_slice_with(input, DecoderOptions::default())
    }

    /// A deserializer over the documents in `input`, read with `opts`.
    ///
    /// ```
    /// use sereal::{DecoderOptions, ErrorKind};
    /// let buf = sereal::to_vec(&vec![0u8; 100]).unwrap();
    /// let opts = DecoderOptions::new().max_num_array_entries(10);
    /// let mut it = sereal::Deserializer::from_slice_with(&buf, opts).into_iter::<Vec<u8>>();
    /// let e = it.next().unwrap().unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)));
    /// assert!(it.next().is_none(), "the first error ends the stream");
    /// ```
    pub fn from_slice_with(input: &'de [u8], opts: DecoderOptions) -> Self {
        Deserializer {
            read: SliceRead {
                input,
                pos: 0,
                opts,
                failed: false,
            },
        }
    }

    /// An iterator of the documents as `T`s, one `Result` per document, until
    /// the input ends or a document fails.
    ///
    /// ```
    /// let mut buf = Vec::new();
    /// for word in ["a", "bb", "ccc"] {
    ///     buf.extend(sereal::to_vec(word).unwrap());
    /// }
    /// let words: Vec<&str> = sereal::Deserializer::from_slice(&buf)
    ///     .into_iter()
    ///     .collect::<Result<_, _>>()
    ///     .unwrap();
    /// assert_eq!(words, ["a", "bb", "ccc"]);
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn into_iter<T: de::Deserialize<'de>>(self) -> StreamDeserializer<'de, SliceRead<'de>, T> {
        StreamDeserializer::new(self)
    }

    /// Where the next document starts: the bytes read so far.
    ///
    /// ```
    /// let buf = sereal::to_vec(&"x").unwrap();
    /// let mut de = sereal::Deserializer::from_slice(&buf);
    /// let _: String = serde::Deserialize::deserialize(&mut de).unwrap();
    /// assert_eq!(de.byte_offset(), buf.len());
    /// ```
    pub fn byte_offset(&self) -> usize {
        self.read.pos
    }

    /// Checks that no document is left: a byte left over is a
    /// [`ErrorKind::TrailingData`] error at its offset.
    ///
    /// ```
    /// let buf = [sereal::to_vec(&1).unwrap(), b"junk".to_vec()].concat();
    /// let mut de = sereal::Deserializer::from_slice(&buf);
    /// let _: i32 = serde::Deserialize::deserialize(&mut de).unwrap();
    /// assert_eq!(de.end().unwrap_err().kind(), &sereal::ErrorKind::TrailingData);
    /// ```
    pub fn end(&self) -> Result<()> {
        let SliceRead { input, pos, .. } = self.read;
        if pos == input.len() {
            return Ok(());
        }
        Err(Error::at(ErrorKind::TrailingData, pos))
    }

    /// Reads the next document by `read`, which is called once or twice:
    /// first on the document read open, its end found by the read itself;
    /// if that fails, again on the document's bytes as the stream scanner
    /// delimits them, whose read is `from_slice`'s (and whose error is
    /// the one given).
    fn document<X>(&mut self, mut read: impl FnMut(&mut Body<'de>) -> Result<X>) -> Result<X> {
        let r = &mut self.read;
        if !r.failed {
            if let Some((v, used)) = attempt(&r.input[r.pos..], &r.opts, false, &mut read) {
                r.pos += used;
                return Ok(v);
            }
        }
        self.delimited(read)
    }

    /// Reads the next document by `read` on its bytes as the stream
    /// scanner delimits them.
    fn delimited<X>(&mut self, read: impl FnOnce(&mut Body<'de>) -> Result<X>) -> Result<X> {
        let r = &mut self.read;
        if r.failed {
            let m = "the stream is over: a document failed before".into();
            return Err(Error::at(ErrorKind::Invalid(m), r.pos));
        }
        let rest = &r.input[r.pos..];
        if rest.is_empty() {
            return Err(Error::at(ErrorKind::Truncated, r.pos));
        }
        let opts = &r.opts;
        match Ready::of(rest, opts).read(rest, |doc| closed(doc, opts, 0, read)) {
            Ok((v, used)) => {
                r.pos += used;
                Ok(v)
            }
            Err(e) => {
                r.failed = true;
                Err(e.shifted(r.pos, false))
            }
        }
    }
}

/// Reads the document at the start of `input`, which may be followed by
/// more documents, by `read`: its value and its length, when the read
/// finds them. A raw body is read open (the document ends where its value
/// does; its tag budget grows with the bytes read); a compressed one is
/// inflated from its frame and must be read to its end. A `buffered`
/// document (a stream's) counts its bytes against `max_memory` once its
/// length is known. Any failure is `None`: the caller reads the document
/// as the scanner delimits it, which gives `from_slice`'s value or error.
/// (A read that succeeds here succeeds there, with the same value: its
/// budgets of tags and of memory are no larger.)
fn attempt<'de, X>(
    input: &'de [u8],
    opts: &DecoderOptions,
    buffered: bool,
    read: impl FnOnce(&mut Body<'de>) -> Result<X>,
) -> Option<(X, usize)> {
    let framed = match Header::raw_len(input) {
        Some(len) => Framed::raw(input, len),
        None => Framed::parsed(input, opts, 0).ok()?,
    };
    // A compressed body (read in the decompressed body) ends with its
    // frame; a raw one is read open.
    let end = framed.in_body.then_some(match framed.trailing_at {
        0 => input.len(),
        end => end,
    });
    let framed = Framed {
        open: !framed.in_body,
        ..framed
    };
    let base = framed.base;
    let mut de = Body::over(framed, opts, Stack::lazy(), 0);
    let v = read(&mut de).ok()?;
    let used = match end {
        Some(end) => {
            de.body_end().ok()?;
            end
        }
        None => base + de.cur.pos(),
    };
    document_size_check(opts, used).ok()?;
    if buffered {
        de.cur.charge(used, "the document", 0).ok()?;
    }
    Some((v, used))
}

/// Reads the document of `doc`'s bytes by `read`, as `from_slice` reads
/// it, for a read that holds `held` bytes of `max_memory` already (a
/// stream's buffered document): its value and length.
fn closed<'a, X>(
    doc: &'a [u8],
    opts: &DecoderOptions,
    held: usize,
    read: impl FnOnce(&mut Body<'a>) -> Result<X>,
) -> Result<(X, usize)> {
    let mut de = Body::over(Body::framed(doc, opts, held)?, opts, Stack::lazy(), held);
    let v = read(&mut de).map_err(|e| de.cur.place(e, 0))?;
    de.end()?;
    Ok((v, doc.len()))
}

impl<R: std::io::Read> Deserializer<IoRead<R>> {
    /// A deserializer over the documents `reader` delivers, with the
    /// default options. It asks the reader for at most 64 KiB at a time,
    /// and only when the bytes it holds do not complete the next document:
    /// it never waits for bytes past the document it reads, so over a
    /// socket or a pipe each document is read as soon as its last byte is
    /// in. Bytes read past it stay buffered for the next document (a
    /// reader that is used again afterwards should not be shared with
    /// it).
    ///
    /// ```
    /// #[derive(serde::Deserialize, Debug, PartialEq)]
    /// struct Rec { id: u32 }
    /// let mut buf = Vec::new();
    /// for id in [1, 2, 3] {
    ///     buf.extend(sereal::to_vec(&sereal::Value::hash([("id", id)])).unwrap());
    /// }
    /// let recs: Vec<Rec> = sereal::Deserializer::from_reader(&buf[..])
    ///     .into_iter()
    ///     .collect::<Result<_, _>>()
    ///     .unwrap();
    /// assert_eq!(recs, [Rec { id: 1 }, Rec { id: 2 }, Rec { id: 3 }]);
    /// ```
    pub fn from_reader(reader: R) -> Self {
        Deserializer::from_reader_with(reader, DecoderOptions::default())
    }

    /// A deserializer over the documents `reader` delivers, read with
    /// `opts`. A document is refused as soon as its bytes break a limit,
    /// before the rest of it is read (see [`crate::stream`]).
    ///
    /// ```
    /// use sereal::{DecoderOptions, ErrorKind};
    /// let buf = sereal::to_vec(&"x".repeat(1000)).unwrap();
    /// let opts = DecoderOptions::new().max_document_size(100);
    /// let mut it = sereal::Deserializer::from_reader_with(&buf[..], opts).into_iter::<String>();
    /// assert!(matches!(it.next().unwrap().unwrap_err().kind(), ErrorKind::LimitExceeded(_)));
    /// ```
    pub fn from_reader_with(reader: R, opts: DecoderOptions) -> Self {
        Deserializer {
            read: IoRead {
                docs: ReadDocuments::new(reader, Decoder::new(opts)),
            },
        }
    }

    /// An iterator of the documents as `T`s, one `Result` per document, until
    /// the input ends or a document fails (an error of the reader is
    /// yielded, and the iteration may go on: see [`ReadDocuments`]).
    ///
    /// ```
    /// let mut buf = sereal::to_vec(&(1u8, "a")).unwrap();
    /// buf.extend(sereal::to_vec(&(2u8, "b")).unwrap());
    /// let mut it = sereal::Deserializer::from_reader(&buf[..]).into_iter::<(u8, String)>();
    /// assert_eq!(it.next().unwrap().unwrap(), (1, "a".to_string()));
    /// assert_eq!(it.byte_offset(), buf.len() / 2);
    /// ```
    #[allow(clippy::should_implement_trait)]
    pub fn into_iter<T: de::DeserializeOwned>(self) -> StreamDeserializer<'static, IoRead<R>, T> {
        StreamDeserializer::new(self)
    }

    /// Where the next document starts: the bytes of the documents read so
    /// far.
    ///
    /// ```
    /// let buf = sereal::to_vec(&[1, 2]).unwrap();
    /// let mut de = sereal::Deserializer::from_reader(&buf[..]);
    /// let _: Vec<u8> = serde::Deserialize::deserialize(&mut de).unwrap();
    /// assert_eq!(de.byte_offset(), buf.len());
    /// ```
    pub fn byte_offset(&self) -> usize {
        self.read.docs.offset()
    }

    /// Checks that no document is left, reading to the end of the input:
    /// a document (or bytes) left over is a [`ErrorKind::TrailingData`]
    /// error at its offset.
    ///
    /// ```
    /// let buf = sereal::to_vec(&1).unwrap();
    /// let mut de = sereal::Deserializer::from_reader(&buf[..]);
    /// let _: i32 = serde::Deserialize::deserialize(&mut de).unwrap();
    /// de.end().unwrap();
    /// ```
    pub fn end(&mut self) -> Result<()> {
        match self.read.docs.ready() {
            None => Ok(()),
            Some(Ok(_)) => Err(Error::at(ErrorKind::TrailingData, self.byte_offset())),
            Some(Err(e)) => Err(e),
        }
    }

    /// Reads the next document by `read`, over a copy of its body (the
    /// value read may outlive the buffer).
    fn delimited<'de, X>(&mut self, read: impl FnOnce(&mut Body<'de>) -> Result<X>) -> Result<X> {
        let ready = match self.read.docs.ready() {
            Some(ready) => ready?,
            None => return Err(Error::at(ErrorKind::Truncated, self.byte_offset())),
        };
        self.read.docs.incremental().take(ready, |dec, doc| {
            let f = Body::framed(doc, dec.options(), doc.len())?;
            let owned = Framed {
                body: Cow::Owned(f.body.into_owned()),
                ..f
            };
            let mut de = Body::over(owned, dec.options(), Stack::lazy(), doc.len());
            let v = read(&mut de).map_err(|e| de.cur.place(e, 0))?;
            de.end()?;
            Ok((v, doc.len()))
        })
    }
}

impl Incremental {
    /// The next complete document, read as a `T` (as
    /// [`from_slice`] reads it, with the decoder's
    /// options): `None` as for [`next_document`](Self::next_document),
    /// whose rules it follows (a document that fails yields its error and
    /// ends the stream).
    ///
    /// ```
    /// use sereal::stream::Incremental;
    /// let doc = sereal::to_vec(&("id", 7u32)).unwrap();
    /// let mut inc = Incremental::default();
    /// inc.feed(&doc[..5]);
    /// assert!(inc.next_as::<(String, u32)>().is_none());
    /// inc.feed(&doc[5..]);
    /// assert_eq!(inc.next_as::<(String, u32)>().unwrap().unwrap(), ("id".to_string(), 7));
    /// ```
    pub fn next_as<T: de::DeserializeOwned>(&mut self) -> Option<Result<T>> {
        if let Some(v) = self.try_framed(|framer, doc| framer.read_open(doc)) {
            return Some(Ok(v));
        }
        let ready = self.ready()?;
        Some(self.framed(|framer, doc| framer.deserialize(doc, ready)))
    }
}

impl Framer {
    /// Reads the document at the start of `doc` as a `T` open, when its
    /// scan has not started and the read finds it whole: the document is
    /// then scanned and read once (see [`attempt`]); its value and the
    /// bytes it used.
    pub(crate) fn read_open<T: de::DeserializeOwned>(&mut self, doc: &[u8]) -> Option<(T, usize)> {
        if !self.fresh() {
            return None;
        }
        let opts = self.decoder().options();
        let (v, used) = attempt(doc, opts, true, |de| T::deserialize(de))?;
        self.advance(used);
        Some((v, used))
    }

    /// Takes the document `ready` says is at the start of `doc` as a `T`
    /// (and the bytes it used).
    pub(crate) fn deserialize<T: de::DeserializeOwned>(
        &mut self,
        doc: &[u8],
        ready: Ready,
    ) -> Result<(T, usize)> {
        self.take(doc, ready, |dec, doc| {
            closed(doc, dec.options(), doc.len(), |de| T::deserialize(de))
        })
    }
}

impl<R: std::io::Read> ReadDocuments<R> {
    /// The next document, read as a `T` (see [`Incremental::next_as`]);
    /// `None` at the end of the input between documents, or when the
    /// stream is over.
    ///
    /// ```
    /// use sereal::{stream::ReadDocuments, Decoder};
    /// let buf = [sereal::to_vec(&[1u8, 2]).unwrap(), sereal::to_vec(&[3u8]).unwrap()].concat();
    /// let mut docs = ReadDocuments::new(&buf[..], Decoder::default());
    /// assert_eq!(docs.next_as::<Vec<u8>>().unwrap().unwrap(), [1, 2]);
    /// assert_eq!(docs.next_as::<Vec<u8>>().unwrap().unwrap(), [3]);
    /// assert!(docs.next_as::<Vec<u8>>().is_none());
    /// ```
    pub fn next_as<T: de::DeserializeOwned>(&mut self) -> Option<Result<T>> {
        loop {
            if let Some(r) = self.incremental().next_as() {
                return Some(r);
            }
            if let Err(e) = self.fill()? {
                return Some(Err(e));
            }
        }
    }
}

impl Decoder {
    /// A serde [`Deserializer`] over the documents in `input`, read with
    /// this decoder's options (its THAW handlers do not apply: serde reads
    /// an object as its referent).
    ///
    /// ```
    /// use sereal::{Decoder, DecoderOptions};
    /// let buf = [sereal::to_vec(&1u8).unwrap(), sereal::to_vec(&2u8).unwrap()].concat();
    /// let dec = Decoder::new(DecoderOptions::untrusted());
    /// let all: Vec<u8> = dec.deserializer(&buf).into_iter().collect::<Result<_, _>>().unwrap();
    /// assert_eq!(all, [1, 2]);
    /// ```
    pub fn deserializer<'de>(&self, input: &'de [u8]) -> Deserializer<SliceRead<'de>> {
        Deserializer::from_slice_with(input, self.options().clone())
    }

    /// A serde [`Deserializer`] over the documents `reader` delivers, read
    /// with this decoder's options (see
    /// [`Deserializer::from_reader`]).
    ///
    /// ```
    /// use sereal::{Decoder, DecoderOptions};
    /// let buf = sereal::to_vec(&vec![7u8; 100]).unwrap();
    /// let dec = Decoder::new(DecoderOptions::new().max_num_array_entries(10));
    /// let mut it = dec.deserializer_from_reader(&buf[..]).into_iter::<Vec<u8>>();
    /// assert!(it.next().unwrap().is_err());
    /// ```
    pub fn deserializer_from_reader<R: std::io::Read>(&self, reader: R) -> Deserializer<IoRead<R>> {
        Deserializer::from_reader_with(reader, self.options().clone())
    }
}

/// The documents of a [`Deserializer`] as `T`s, one `Result` per document
/// (made by [`Deserializer::into_iter`]). The first error ends the
/// iteration, except an error of a reader, after which it may go on.
pub struct StreamDeserializer<'de, R, T> {
    de: Deserializer<R>,
    output: PhantomData<fn() -> T>,
    lifetime: PhantomData<&'de ()>,
}

impl<'de, R, T> StreamDeserializer<'de, R, T> {
    fn new(de: Deserializer<R>) -> Self {
        StreamDeserializer {
            de,
            output: PhantomData,
            lifetime: PhantomData,
        }
    }
}

impl<'de, T> StreamDeserializer<'de, SliceRead<'de>, T> {
    /// Where the next document starts: after the last document read, the
    /// bytes read so far.
    ///
    /// ```
    /// let buf = [sereal::to_vec(&1).unwrap(), sereal::to_vec(&2).unwrap()].concat();
    /// let mut it = sereal::Deserializer::from_slice(&buf).into_iter::<i32>();
    /// it.next();
    /// assert_eq!(it.byte_offset(), buf.len() / 2);
    /// ```
    pub fn byte_offset(&self) -> usize {
        self.de.byte_offset()
    }
}

impl<R: std::io::Read, T> StreamDeserializer<'_, IoRead<R>, T> {
    /// Where the next document starts: the bytes of the documents read so
    /// far.
    ///
    /// ```
    /// let buf = [sereal::to_vec(&1).unwrap(), sereal::to_vec(&2).unwrap()].concat();
    /// let mut it = sereal::Deserializer::from_reader(&buf[..]).into_iter::<i32>();
    /// it.next();
    /// it.next();
    /// assert_eq!(it.byte_offset(), buf.len());
    /// ```
    pub fn byte_offset(&self) -> usize {
        self.de.byte_offset()
    }
}

impl<'de, T: de::Deserialize<'de>> Iterator for StreamDeserializer<'de, SliceRead<'de>, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        let r = &self.de.read;
        if r.failed || r.pos == r.input.len() {
            return None;
        }
        Some(self.de.document(|de| T::deserialize(de)))
    }
}

impl<R: std::io::Read, T: de::DeserializeOwned> Iterator for StreamDeserializer<'_, IoRead<R>, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        self.de.read.docs.next_as()
    }
}

// The `deserialize_*` methods of a stream: each reads the next document
// by the body's method of the same name.
macro_rules! by_document {
    ($($m:ident($($arg:ident: $t:ty),*);)*) => {$(
        fn $m<V: Visitor<'de>>(self, $($arg: $t,)* visitor: V) -> Result<V::Value> {
            self.delimited(|de| de.$m($($arg,)* visitor))
        }
    )*};
}

// The `deserialize_*` methods, with the arguments they take before the
// visitor.
macro_rules! stream_deserializer {
    () => {
        type Error = Error;

        /// As the body's: binary forms.
        fn is_human_readable(&self) -> bool {
            false
        }

        by_document! {
            deserialize_any(); deserialize_bool(); deserialize_i8(); deserialize_i16();
            deserialize_i32(); deserialize_i64(); deserialize_i128(); deserialize_u8();
            deserialize_u16(); deserialize_u32(); deserialize_u64(); deserialize_u128();
            deserialize_f32(); deserialize_f64(); deserialize_char(); deserialize_str();
            deserialize_string(); deserialize_bytes(); deserialize_byte_buf();
            deserialize_option(); deserialize_unit(); deserialize_seq(); deserialize_map();
            deserialize_identifier(); deserialize_ignored_any();
            deserialize_unit_struct(name: &'static str);
            deserialize_newtype_struct(name: &'static str);
            deserialize_tuple(len: usize);
            deserialize_tuple_struct(name: &'static str, len: usize);
            deserialize_struct(name: &'static str, fields: &'static [&'static str]);
            deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        }
    };
}

/// Reads the next document of the slice.
impl<'de> de::Deserializer<'de> for &mut Deserializer<SliceRead<'de>> {
    stream_deserializer!();
}

/// Reads the next document of the reader (into types that own their data,
/// or copy it: a string borrowed for `'de` is refused, as a compressed
/// document's is).
impl<'de, R: std::io::Read> de::Deserializer<'de> for &mut Deserializer<IoRead<R>> {
    stream_deserializer!();
}
