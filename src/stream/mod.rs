//! Streams of concatenated documents, decoded as their bytes arrive: a push
//! API, [`Incremental`], that takes bytes in whatever pieces they come, and a
//! pull API, [`ReadDocuments`], over any [`std::io::Read`].
//!
//! Both rest on a resumable scanner that finds where each document ends
//! without building any values: the header (magic string, version and type
//! byte, header suffix), then for a compressed document the length of its
//! frame, and for a raw body a walk over the tag structure that counts the
//! items each container still owes. The scanner keeps its state between
//! calls, so every byte is scanned once however the input is chunked, and
//! knows a lower bound of the bytes the current document still needs
//! ([`Incremental::needed`]). When a document is complete it is decoded once,
//! by [`Decoder::decode_prefix`] on exactly its bytes: values, validation and
//! errors are those of [`Decoder::decode`] and [`Decoder::documents`].
//!
//! The scanner enforces `max_recursion_depth` (counted as the decoder counts
//! it), `max_num_array_entries`, `max_num_hash_entries`, `max_string_length`,
//! `refuse_objects` and the `refuse_*` compression options as soon as the
//! bytes that break them arrive, with the decoder's errors; and
//! `max_document_size` and `max_memory` as soon as a length or count says
//! the document needs more (the document's bytes, which a stream buffers,
//! count against `max_memory` with what the decoder will build of them),
//! with the offset of that length or count. It never
//! recurses and never allocates for a count it reads: a count of 2^60 items
//! is a number to count down while bytes arrive. What it buffers is what it
//! was given.
//!
//! Protocol 1's legacy Snappy framing (document type 1) has no length: such
//! a document can only be taken to end where the input ends, so it is
//! decoded at [`Incremental::finish`] (or the reader's end of file), and must
//! be the last document of its stream.
//!
//! Errors carry offsets in the stream (counted from the first byte ever
//! fed or read), except errors inside a compressed body, which count into the
//! decompressed body and say so, as everywhere in this crate;
//! [`Incremental::offset`] and [`ReadDocuments::offset`] give the stream
//! offset of the document being read. A stream stops at its first error:
//! where the next document would start is unknown.
//!
//! ```
//! use sereal::{encode, stream::Incremental, Value};
//! let mut bytes = encode(&Value::from("first")).unwrap();
//! bytes.extend(encode(&Value::array([1, 2])).unwrap());
//!
//! let mut inc = Incremental::default();
//! let mut docs = Vec::new();
//! for piece in bytes.chunks(3) {
//!     inc.feed(piece);
//!     while let Some(doc) = inc.next_document() {
//!         docs.push(doc.unwrap());
//!     }
//! }
//! assert_eq!(docs, [Value::from("first"), Value::array([1, 2])]);
//! ```

use crate::compress::Compression;
use crate::decoder::{memory, Decoder, DecoderOptions, Header};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{
    self, memory_exceeded, over_limit, tag, MAGIC_V1, MAGIC_V3, MAGIC_V3_UTF8, TRACK_FLAG,
};
use crate::value::Document;
use std::io::Read;

mod framer;
mod scan;
pub(crate) use framer::Framer;
pub(crate) use scan::key_positions;
use scan::{Scan, Scanner};

/// What [`Incremental::ready`] found of the next document.
pub(crate) enum Ready {
    /// Its bytes, scanned to their end, are the first this many.
    Scanned(usize),
    /// The scanner refused it (with its error, when the decoder may find
    /// only that the bytes end early), or only the end of the input ends
    /// it: the decoder reads this many bytes to tell.
    Refused(usize, Option<Error>),
}

impl Ready {
    /// Where the document at the start of `input`, all the input there
    /// will be, ends.
    #[cfg(feature = "serde")]
    pub(crate) fn of(input: &[u8], o: &DecoderOptions) -> Ready {
        match Scanner::default().run(input, o) {
            Scan::End(len) => Ready::Scanned(len),
            Scan::Invalid { len, fallback } => Ready::Refused(len, fallback),
            Scan::More => Ready::Refused(input.len(), None),
        }
    }

    /// Reads the document this says starts `input` by `read`, given its
    /// bytes: what it made of them, and the bytes it used. Its error is
    /// the scanner's when the scanner saw a defect and `read` only saw the
    /// bytes end.
    pub(crate) fn read<'a, X>(
        self,
        input: &'a [u8],
        read: impl FnOnce(&'a [u8]) -> Result<(X, usize)>,
    ) -> Result<(X, usize)> {
        let (len, fallback) = match self {
            Ready::Scanned(len) => (len, None),
            Ready::Refused(len, fallback) => (len, fallback),
        };
        read(&input[..len]).map_err(|e| match fallback {
            Some(f) if *e.kind() == ErrorKind::Truncated => f,
            _ => e,
        })
    }
}

/// How much [`ReadDocuments`] asks its reader for at a time.
const READ_CHUNK: usize = 64 * 1024;

/// A push decoder for a stream of concatenated documents (Perl's
/// `incremental` option): feed it bytes as they arrive, in pieces of any
/// size, and take each document as soon as its last byte is in.
///
/// Each byte is scanned once, however the input is cut, and each document
/// is decoded once, by the [`Decoder`] it was made with (so its options and
/// THAW handlers apply). Documents are taken out in order; a document that
/// fails yields its error, with its stream offset, and ends the stream.
///
/// ```
/// use sereal::{encode, stream::Incremental, Decoder, DecoderOptions, Value};
/// let doc = encode(&Value::array(["a", "b"])).unwrap();
/// let mut inc = Incremental::new(Decoder::new(DecoderOptions::new().max_num_array_entries(10)));
/// inc.feed(&doc[..4]);
/// assert!(inc.next_document().is_none());
/// assert!(inc.needed() >= 1);
/// inc.feed(&doc[4..]);
/// assert_eq!(inc.next_document().unwrap().unwrap(), Value::array(["a", "b"]));
/// assert!(inc.next_document().is_none());
/// ```
#[derive(Debug, Default)]
pub struct Incremental {
    /// The scanner and decoder of the current document, and its stream offset.
    framer: Framer,
    /// Bytes fed and not yet taken out; the current document starts at `start`.
    buf: Vec<u8>,
    start: usize,
    /// No more input will come.
    finished: bool,
}

impl Incremental {
    /// A push decoder that decodes with `decoder`.
    ///
    /// ```
    /// use sereal::{stream::Incremental, Decoder, DecoderOptions};
    /// let inc = Incremental::new(Decoder::new(DecoderOptions::new().refuse_objects(true)));
    /// assert_eq!(inc.offset(), 0);
    /// ```
    pub fn new(decoder: Decoder) -> Incremental {
        Incremental {
            framer: Framer::new(decoder),
            ..Incremental::default()
        }
    }

    /// Appends the next bytes of the stream. Nothing is scanned until
    /// [`next_document`](Self::next_document) is called. Bytes fed after
    /// [`finish`](Self::finish) are ignored.
    ///
    /// ```
    /// let mut inc = sereal::stream::Incremental::default();
    /// inc.feed(b"=\xF3rl");
    /// assert!(inc.next_document().is_none());
    /// ```
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.finished || self.framer.failed() {
            return;
        }
        // Drop the bytes of documents taken out once they are at least as
        // many as those kept: each byte is moved at most once on average.
        if self.start > 0 && self.start >= self.buf.len() - self.start {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Marks the end of the input. The next calls to
    /// [`next_document`](Self::next_document) yield what is still buffered:
    /// complete documents, then a protocol 1 Snappy document (which ends
    /// only where the input does), or the error of an incomplete document
    /// ([`ErrorKind::Truncated`] when it is only cut short).
    ///
    /// ```
    /// use sereal::{encode, stream::Incremental, ErrorKind, Value};
    /// let doc = encode(&Value::from("cut short")).unwrap();
    /// let mut inc = Incremental::default();
    /// inc.feed(&doc[..8]);
    /// assert!(inc.next_document().is_none());
    /// inc.finish();
    /// let err = inc.next_document().unwrap().unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::Truncated);
    /// assert!(inc.next_document().is_none());
    /// ```
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// The next complete document, if its bytes are all in: `None` when
    /// more input is needed (or, after [`finish`](Self::finish) or an
    /// error, when the stream is over). A document that fails yields its
    /// error, and the stream is over; [`offset`](Self::offset) is then
    /// where the failed document starts (the offset of an error inside a
    /// compressed body counts into the decompressed body).
    ///
    /// ```
    /// use sereal::{encode, stream::Incremental, Value};
    /// let mut inc = Incremental::default();
    /// inc.feed(&encode(&Value::from(1)).unwrap());
    /// inc.feed(&encode(&Value::from(2)).unwrap());
    /// assert_eq!(inc.next_document().unwrap().unwrap(), Value::from(1));
    /// assert_eq!(inc.next_document().unwrap().unwrap(), Value::from(2));
    /// assert!(inc.next_document().is_none());
    /// ```
    pub fn next_document(&mut self) -> Option<Result<Document>> {
        let ready = self.ready()?;
        Some(self.document_from(ready))
    }

    /// Takes the document `ready` says is next as a graph.
    pub(crate) fn document_from(&mut self, ready: Ready) -> Result<Document> {
        self.framed(|framer, doc| framer.document(doc, ready))
    }

    /// The bytes of the next complete document, as they came (to forward,
    /// store or route without decoding): `None` as for
    /// [`next_document`](Self::next_document). The scanner has walked them:
    /// the header, and for a raw body the tags, with the limits of the
    /// options; a compressed body is taken by its frame's length, not
    /// inflated. A document the scanner refuses, or the last bytes at the
    /// end of the input, are decoded to tell: its error is yielded and the
    /// stream is over, as with `next_document`.
    ///
    /// ```
    /// use sereal::{encode, stream::Incremental, Value};
    /// let one = encode(&Value::from("one")).unwrap();
    /// let two = encode(&Value::array([2])).unwrap();
    /// let mut inc = Incremental::default();
    /// inc.feed(&[one.clone(), two.clone()].concat());
    /// assert_eq!(inc.next_raw().unwrap().unwrap(), &one[..]);
    /// assert_eq!(inc.next_raw().unwrap().unwrap(), &two[..]);
    /// assert!(inc.next_raw().is_none());
    /// ```
    pub fn next_raw(&mut self) -> Option<Result<&[u8]>> {
        let ready = self.ready()?;
        Some(self.raw_from(ready))
    }

    /// Takes the bytes of the document `ready` says is next.
    pub(crate) fn raw_from(&mut self, ready: Ready) -> Result<&[u8]> {
        let at = self.start;
        let len = self.framer.raw(&self.buf[at..], ready)?;
        self.start += len;
        Ok(&self.buf[at..at + len])
    }

    /// Whether the next document is complete, and how to take it; `None`
    /// when more input is needed or the stream is over.
    pub(crate) fn ready(&mut self) -> Option<Ready> {
        self.framer.ready(&self.buf[self.start..], self.finished)
    }

    /// Takes the document `ready` says is next by `read`, which is given
    /// the decoder and the document's bytes (the bytes up to the end of the
    /// input when the scanner could not end it) and returns what it made of
    /// them and how many bytes it used. An error is yielded at the stream
    /// offset of the document (the scanner's, when it saw the defect and
    /// the decoder only saw the bytes end), and ends the stream.
    #[cfg(feature = "serde")]
    pub(crate) fn take<X>(
        &mut self,
        ready: Ready,
        read: impl FnOnce(&Decoder, &[u8]) -> Result<(X, usize)>,
    ) -> Result<X> {
        self.framed(|framer, doc| framer.take(doc, ready, read))
    }

    /// Takes the next document by `take`, which is given the framer and
    /// the buffered bytes from the document's first byte on, and returns
    /// what it made of them and how many bytes it used.
    pub(crate) fn framed<X>(
        &mut self,
        take: impl FnOnce(&mut Framer, &[u8]) -> Result<(X, usize)>,
    ) -> Result<X> {
        let (v, used) = take(&mut self.framer, &self.buf[self.start..])?;
        self.start += used;
        Ok(v)
    }

    /// As [`framed`](Self::framed), for a take that may decline (`None`),
    /// leaving the buffer as it was.
    #[cfg(feature = "serde")]
    pub(crate) fn try_framed<X>(
        &mut self,
        take: impl FnOnce(&mut Framer, &[u8]) -> Option<(X, usize)>,
    ) -> Option<X> {
        let (v, used) = take(&mut self.framer, &self.buf[self.start..])?;
        self.start += used;
        Some(v)
    }

    /// At least how many more bytes the current document needs: 0 when
    /// the bytes fed may hold a complete document (call
    /// [`next_document`](Self::next_document)), when only the end of the
    /// input can end it (protocol 1 Snappy), or when the stream is over.
    /// Between documents, it is the size of the smallest document. It is a
    /// lower bound: feeding fewer bytes cannot complete the document. It is
    /// as large as the counts read claim (an array of 2^60 items needs
    /// 2^60 bytes more): do not size a buffer by it.
    ///
    /// ```
    /// use sereal::{encode, stream::Incremental, Value};
    /// let doc = encode(&Value::bytes([7u8; 1000])).unwrap();
    /// let mut inc = Incremental::default();
    /// inc.feed(&doc[..100]);
    /// assert!(inc.next_document().is_none());
    /// assert_eq!(inc.needed(), doc.len() - 100);
    /// ```
    pub fn needed(&self) -> usize {
        self.framer.needed(self.buf.len() - self.start)
    }

    /// The stream offset of the current document: where the next document
    /// to be taken out starts.
    ///
    /// ```
    /// use sereal::{encode, stream::Incremental, Value};
    /// let doc = encode(&Value::from(1)).unwrap();
    /// let mut inc = Incremental::default();
    /// inc.feed(&doc);
    /// inc.next_document();
    /// assert_eq!(inc.offset(), doc.len());
    /// ```
    pub fn offset(&self) -> usize {
        self.framer.offset()
    }

    /// The decoder in use.
    ///
    /// ```
    /// let inc = sereal::stream::Incremental::default();
    /// assert_eq!(inc.decoder().options().max_recursion_depth, 10_000);
    /// ```
    pub fn decoder(&self) -> &Decoder {
        self.framer.decoder()
    }
}

/// The documents of a stream read from a [`Read`], one at a time, as soon
/// as each is complete (see [`Decoder::documents_from_reader`]).
///
/// The reader is asked for at most 64 KiB at a time, and only when the
/// bytes already read do not hold a complete document: the iterator never
/// waits for bytes past the document it yields, so it suits sockets and
/// pipes. The end of input between documents ends the iteration; in the
/// middle of a document it is an [`ErrorKind::Truncated`] error with the
/// stream offset. An error from the reader is yielded as an
/// [`ErrorKind::Io`] error (the reader's error is its `source()`) at the
/// stream offset reached, and the
/// iteration may go on (a `WouldBlock` or `TimedOut` reader can be tried
/// again); `Interrupted` reads are retried. A document that fails ends the
/// iteration.
///
/// ```
/// use sereal::{encode, stream::ReadDocuments, Decoder, Value};
/// let mut bytes = encode(&Value::from(1)).unwrap();
/// bytes.extend(encode(&Value::hash([("k", "v")])).unwrap());
/// let docs: Vec<sereal::Document> = ReadDocuments::new(&bytes[..], Decoder::default())
///     .collect::<Result<_, _>>()
///     .unwrap();
/// assert_eq!(docs, [Value::from(1), Value::hash([("k", "v")])]);
/// ```
#[derive(Debug)]
pub struct ReadDocuments<R> {
    reader: R,
    inc: Incremental,
    chunk: Vec<u8>,
}

impl<R: Read> ReadDocuments<R> {
    /// The documents `reader` delivers, decoded with `decoder`.
    ///
    /// ```
    /// use sereal::{stream::ReadDocuments, Decoder};
    /// let mut docs = ReadDocuments::new(std::io::empty(), Decoder::default());
    /// assert!(docs.next().is_none());
    /// ```
    pub fn new(reader: R, decoder: Decoder) -> ReadDocuments<R> {
        ReadDocuments {
            reader,
            inc: Incremental::new(decoder),
            chunk: Vec::new(),
        }
    }

    /// The stream offset of the next document.
    ///
    /// ```
    /// use sereal::{encode, stream::ReadDocuments, Decoder, Value};
    /// let doc = encode(&Value::from("x")).unwrap();
    /// let mut docs = ReadDocuments::new(&doc[..], Decoder::default());
    /// docs.next();
    /// assert_eq!(docs.offset(), doc.len());
    /// ```
    pub fn offset(&self) -> usize {
        self.inc.offset()
    }

    /// The reader.
    ///
    /// ```
    /// use sereal::{stream::ReadDocuments, Decoder};
    /// let docs = ReadDocuments::new(std::io::empty(), Decoder::default());
    /// let _reader: &std::io::Empty = docs.get_ref();
    /// ```
    pub fn get_ref(&self) -> &R {
        &self.reader
    }
}

impl<R: Read> ReadDocuments<R> {
    /// The bytes of the next complete document, as they came (see
    /// [`Incremental::next_raw`]); `None` at the end of the input between
    /// documents, or when the stream is over.
    ///
    /// ```
    /// use sereal::{encode, stream::ReadDocuments, Decoder, Value};
    /// let doc = encode(&Value::hash([("k", "v")])).unwrap();
    /// let input = [doc.clone(), doc.clone()].concat();
    /// let mut docs = ReadDocuments::new(&input[..], Decoder::default());
    /// while let Some(raw) = docs.next_raw() {
    ///     assert_eq!(raw.unwrap(), &doc[..]);
    /// }
    /// assert_eq!(docs.offset(), input.len());
    /// ```
    pub fn next_raw(&mut self) -> Option<Result<&[u8]>> {
        match self.ready()? {
            Ok(ready) => Some(self.inc.raw_from(ready)),
            Err(e) => Some(Err(e)),
        }
    }

    /// Reads until the next document is complete, the input ends, or the
    /// reader fails; `None` when the stream is over.
    pub(crate) fn ready(&mut self) -> Option<Result<Ready>> {
        loop {
            if let Some(ready) = self.inc.ready() {
                return Some(Ok(ready));
            }
            if let Err(e) = self.fill()? {
                return Some(Err(e));
            }
        }
    }

    /// Reads once more into the push decoder (the end of the input
    /// finishes it); `None` when the stream is over.
    pub(crate) fn fill(&mut self) -> Option<Result<()>> {
        if self.inc.finished || self.inc.framer.failed() {
            return None;
        }
        self.chunk.resize(READ_CHUNK, 0);
        match self.reader.read(&mut self.chunk) {
            Ok(0) => self.inc.finish(),
            Ok(n) => self.inc.feed(&self.chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let at = self.inc.offset() + (self.inc.buf.len() - self.inc.start);
                return Some(Err(Error::io("read", e).or_at(at, false)));
            }
        }
        Some(Ok(()))
    }

    /// The push decoder the documents are read through.
    #[cfg(feature = "serde")]
    pub(crate) fn incremental(&mut self) -> &mut Incremental {
        &mut self.inc
    }
}

impl<R: Read> Iterator for ReadDocuments<R> {
    type Item = Result<Document>;

    fn next(&mut self) -> Option<Result<Document>> {
        match self.ready()? {
            Ok(ready) => Some(self.inc.document_from(ready)),
            Err(e) => Some(Err(e)),
        }
    }
}

impl Decoder {
    /// The documents of a stream read from `reader`, one at a time as each
    /// is complete, decoded with (a clone of) this decoder: see
    /// [`ReadDocuments`].
    ///
    /// ```
    /// use sereal::{encode, Decoder, Value};
    /// let mut bytes = encode(&Value::from("a")).unwrap();
    /// bytes.extend(encode(&Value::from("b")).unwrap());
    /// let mut docs = Decoder::default().documents_from_reader(&bytes[..]);
    /// assert_eq!(docs.next().unwrap().unwrap(), Value::from("a"));
    /// assert_eq!(docs.next().unwrap().unwrap(), Value::from("b"));
    /// assert!(docs.next().is_none());
    /// ```
    pub fn documents_from_reader<R: Read>(&self, reader: R) -> ReadDocuments<R> {
        ReadDocuments::new(reader, self.clone())
    }

    /// A push decoder of a stream, decoding with (a clone of) this decoder:
    /// see [`Incremental`].
    ///
    /// ```
    /// use sereal::{encode, Decoder, Value};
    /// let mut inc = Decoder::default().incremental();
    /// inc.feed(&encode(&Value::Undef).unwrap());
    /// assert_eq!(inc.next_document().unwrap().unwrap(), Value::Undef);
    /// ```
    pub fn incremental(&self) -> Incremental {
        Incremental::new(self.clone())
    }
}
