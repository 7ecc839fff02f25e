//! Codecs for [`tokio_util::codec`] (feature `tokio`): a socket, pipe or
//! file of concatenated Sereal documents as a `Stream` of items with
//! `FramedRead`, and a `Sink` of them with `FramedWrite`.
//!
//! - [`SerealCodec<T>`](SerealCodec): each document as a `T` (serde, as
//!   [`from_slice`](crate::from_slice) reads it); writes any `Serialize`
//!   value as [`to_vec_with`](crate::to_vec_with) does.
//! - [`RawCodec`]: each document's bytes, as they came, as a
//!   [`Bytes`] split off the read buffer without a copy (to forward, store
//!   or route them); writes bytes as they are.
//! - [`DocumentCodec`]: each document as a [`SendDocument`], the graph
//!   (shared references, cycles, objects) in a form that a task may hold
//!   across an `.await` on a multi-threaded runtime.
//!
//! They frame as [`Incremental`](crate::stream::Incremental) does, with
//! the same scanner (see [`crate::stream`]): a document split across
//! reads is scanned on from where the last read stopped, never from its
//! start again, so the work is linear however the bytes arrive; the
//! decoder's limits apply as soon as the bytes that break them arrive, and
//! a document longer than `max_document_size` (or `max_memory`) is refused
//! as soon as a length or count says so, before the rest of it is read.
//! While a document is incomplete, a codec reserves room in the read
//! buffer for the bytes the document is known to still need, at most 64
//! KiB at a time (the need comes from lengths the input claims).
//!
//! At the end of the input (`decode_eof`) the documents still buffered
//! are yielded, then a protocol 1 Snappy document (which ends only where
//! the input does), or the error of a document cut short
//! ([`ErrorKind::Truncated`]).
//!
//! Errors carry stream offsets, counted from the first byte the codec was
//! given ([`SerealCodec::offset`] is where the next document starts), as
//! [`Incremental`](crate::stream::Incremental)'s do. A document that fails
//! ends the stream: where the next one starts is unknown. `FramedRead`
//! yields the error, then `None`; polled again after that, it reads on,
//! and the codec drops what it is given and yields nothing more. A read
//! error of the underlying reader comes as an
//! [`ErrorKind::Io`] error (without an offset), and
//! ends the stream too. A consumer that must go on past a document its
//! type refuses reads with [`RawCodec`] and deserializes each document
//! with [`from_slice`](crate::from_slice).
//!
//! ```
//! use futures::StreamExt;
//! use tokio_util::codec::FramedRead;
//! use sereal::codec::SerealCodec;
//!
//! #[derive(serde::Deserialize, Debug, PartialEq)]
//! struct Rec { id: u32, name: String }
//!
//! let mut input = Vec::new();
//! for (id, name) in [(1, "ann"), (2, "bo")] {
//!     input.extend(sereal::to_vec(&sereal::Value::hash([
//!         ("id", sereal::Value::from(id)),
//!         ("name", name.into()),
//!     ])).unwrap());
//! }
//! let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let recs: Vec<Rec> = rt.block_on(async {
//!     // any `AsyncRead`: a `TcpStream`, a `ChildStdout`, a `File`
//!     let reader = &input[..];
//!     FramedRead::new(reader, SerealCodec::<Rec>::default())
//!         .map(|rec| rec.unwrap())
//!         .collect()
//!         .await
//! });
//! assert_eq!(recs, [Rec { id: 1, name: "ann".into() }, Rec { id: 2, name: "bo".into() }]);
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::ser::SerializerOptions;
use crate::stream::{Framer, Ready};
use crate::{Decoder, SendDocument};
use bytes::{Buf, Bytes, BytesMut};
use serde::{de::DeserializeOwned, Serialize};
use std::fmt;
use std::marker::PhantomData;
use tokio_util::codec;

/// The most a codec reserves in its read buffer at a time for the bytes
/// the current document still needs.
const RESERVE: usize = 64 * 1024;

/// Takes the next document out of `src` by `take`, which is given the
/// framer, the buffer (the document starts at its first byte) and how the
/// document is ready, and splits or advances the buffer past it. `None`
/// when more bytes are needed (then room is reserved for them) or when the
/// stream is over (then `src`'s bytes are dropped, not kept). `at_end`: no
/// more bytes will come.
fn next<X>(
    framer: &mut Framer,
    src: &mut BytesMut,
    at_end: bool,
    take: impl FnOnce(&mut Framer, &mut BytesMut, Ready) -> Result<X>,
) -> Result<Option<X>> {
    if framer.failed() {
        src.clear();
        return Ok(None);
    }
    match framer.ready(src, at_end) {
        Some(ready) => take(framer, src, ready).map(Some),
        None => {
            src.reserve(framer.needed(src.len()).min(RESERVE));
            Ok(None)
        }
    }
}

/// What every codec has over its framer: the `Decoder` impl (its
/// `next(src, at_end)` takes the next document out of `src`), `new` (by
/// its `over(framer)`), and the `decoder` and `offset` accessors.
/// `$example`: how the examples name the codec.
macro_rules! framed_codec {
    (impl$(<$t:ident: $bound:path>)? for $codec:ty => $item:ty, $example:literal) => {
        impl$(<$t>)? $codec {
            /// A codec that reads with `decoder`: its options, limits and
            /// THAW handlers (and, for a codec that writes, the default
            /// options to write with).
            ///
            /// ```
            /// use sereal::{Decoder, DecoderOptions};
            /// let strict = Decoder::new(DecoderOptions::untrusted());
            #[doc = concat!("let codec = sereal::codec::", $example, "::new(strict);")]
            /// assert_eq!(codec.decoder().options(), &DecoderOptions::untrusted());
            /// ```
            pub fn new(decoder: Decoder) -> Self {
                Self::over(Framer::new(decoder))
            }

            /// The decoder documents are read with: its options, limits
            /// and THAW handlers.
            ///
            /// ```
            #[doc = concat!("let codec = sereal::codec::", $example, "::default();")]
            /// assert_eq!(codec.decoder().options().max_recursion_depth, 10_000);
            /// ```
            pub fn decoder(&self) -> &Decoder {
                self.framer.decoder()
            }

            /// The stream offset of the next document: the bytes of the
            /// documents read so far.
            ///
            /// ```
            /// use tokio_util::codec::Decoder;
            /// let doc = sereal::to_vec("x").unwrap();
            #[doc = concat!("let mut codec = sereal::codec::", $example, "::default();")]
            /// codec.decode(&mut doc[..].into()).unwrap();
            /// assert_eq!(codec.offset(), doc.len());
            /// ```
            pub fn offset(&self) -> usize {
                self.framer.offset()
            }
        }

        impl$(<$t: $bound>)? codec::Decoder for $codec {
            type Item = $item;
            type Error = Error;

            /// The next complete document of `src`; `None` when `src` does
            /// not hold all of it yet, or when the stream is over.
            fn decode(&mut self, src: &mut BytesMut) -> Result<Option<$item>> {
                self.next(src, false)
            }

            /// As `decode`, at the end of the input: the bytes left must
            /// make whole documents.
            fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<$item>> {
                self.next(src, true)
            }
        }
    };
}

framed_codec!(impl<T: DeserializeOwned> for SerealCodec<T> => T, "SerealCodec::<String>");
framed_codec!(impl for RawCodec => Bytes, "RawCodec");
framed_codec!(impl for DocumentCodec => SendDocument, "DocumentCodec");

/// A codec of concatenated Sereal documents as `T`s: a
/// [`Decoder`](codec::Decoder) that reads each document as a `T` (with
/// the options and limits of a [`Decoder`]; see [the module](self)), and
/// an [`Encoder`](codec::Encoder) of `T`s, if `T` is [`Serialize`] too
/// (with [`SerializerOptions`]), so one codec serves both halves of a
/// `Framed` connection.
///
/// ```
/// use bytes::BytesMut;
/// use tokio_util::codec::{Decoder, Encoder};
/// use sereal::codec::SerealCodec;
///
/// let mut codec = SerealCodec::<(String, u32)>::default();
/// let mut buf = BytesMut::new();
/// codec.encode(("ann".to_string(), 7), &mut buf).unwrap();
/// codec.encode(("bo".to_string(), 8), &mut buf).unwrap();
/// let rest = buf.split_off(5);
/// assert_eq!(codec.decode(&mut buf).unwrap(), None); // cut short
/// buf.unsplit(rest);
/// assert_eq!(codec.decode(&mut buf).unwrap(), Some(("ann".to_string(), 7)));
/// assert_eq!(codec.decode(&mut buf).unwrap(), Some(("bo".to_string(), 8)));
/// assert_eq!(codec.decode_eof(&mut buf).unwrap(), None);
/// ```
pub struct SerealCodec<T> {
    framer: Framer,
    ser: SerializerOptions,
    item: PhantomData<fn() -> T>,
}

impl<T> SerealCodec<T> {
    /// The codec over `framer`, writing with the default options.
    fn over(framer: Framer) -> Self {
        SerealCodec {
            framer,
            ser: SerializerOptions::default(),
            item: PhantomData,
        }
    }

    /// A codec that reads with `decoder` and writes with `ser`
    /// ([`SerializerOptions`], or the value encoder's
    /// [`EncoderOptions`](crate::EncoderOptions)).
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use tokio_util::codec::Encoder;
    /// use sereal::{codec::SerealCodec, Compression, Decoder, EncoderOptions};
    /// let opts = EncoderOptions::new().compress(Compression::Zstd).compress_threshold(0);
    /// let mut codec = SerealCodec::<Vec<String>>::with_options(Decoder::default(), &opts);
    /// let mut buf = BytesMut::new();
    /// codec.encode(vec!["abc".to_string(); 100], &mut buf).unwrap();
    /// assert_eq!(buf[4] >> 4, 4); // document type 4: zstd
    /// assert_eq!(sereal::from_slice::<Vec<String>>(&buf).unwrap(), ["abc"; 100]);
    /// ```
    pub fn with_options(decoder: Decoder, ser: impl Into<SerializerOptions>) -> Self {
        SerealCodec {
            ser: ser.into(),
            ..SerealCodec::new(decoder)
        }
    }

    /// The options values are written with.
    ///
    /// ```
    /// let codec = sereal::codec::SerealCodec::<String>::default();
    /// assert_eq!(codec.serializer_options().protocol_version, 5);
    /// ```
    pub fn serializer_options(&self) -> &SerializerOptions {
        &self.ser
    }

    /// The next document of `src` as a `T`.
    fn next(&mut self, src: &mut BytesMut, at_end: bool) -> Result<Option<T>>
    where
        T: DeserializeOwned,
    {
        if let Some((v, used)) = self.framer.read_open(src) {
            src.advance(used);
            return Ok(Some(v));
        }
        next(&mut self.framer, src, at_end, |framer, src, ready| {
            let (v, used) = framer.deserialize(src, ready)?;
            src.advance(used);
            Ok(v)
        })
    }
}

impl<T> Default for SerealCodec<T> {
    /// A codec with the default [`DecoderOptions`](crate::DecoderOptions)
    /// and [`SerializerOptions`].
    fn default() -> Self {
        SerealCodec::new(Decoder::default())
    }
}

impl<T> fmt::Debug for SerealCodec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SerealCodec")
            .field("item", &std::any::type_name::<T>())
            .field("framer", &self.framer)
            .field("ser", &self.ser)
            .finish()
    }
}

/// Writes `item` as one document, as [`to_vec_with`](crate::to_vec_with)
/// does with the codec's options. (One `Encoder` impl, for `T` only, so
/// that `SinkExt::close` and `flush` on a `FramedWrite` need no type
/// annotation; a connection whose two directions carry different types
/// uses a codec for each half.)
impl<T: Serialize> codec::Encoder<T> for SerealCodec<T> {
    type Error = Error;

    fn encode(&mut self, item: T, dst: &mut BytesMut) -> Result<()> {
        let bytes = crate::to_vec_with(&item, &self.ser)?;
        dst.extend_from_slice(&bytes);
        Ok(())
    }
}

/// A codec of concatenated Sereal documents as their bytes: a
/// [`Decoder`](codec::Decoder) whose items are the documents, each split
/// off the read buffer as it came (no copy, no decode: the scanner has
/// walked the header and a raw body's tags with the decoder's limits; a
/// compressed body is taken by its frame's length, not inflated), and an
/// [`Encoder`](codec::Encoder) that writes bytes as they are.
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use tokio_util::codec::{Decoder, Encoder};
/// use sereal::codec::RawCodec;
///
/// let one = Bytes::from(sereal::to_vec(&1).unwrap());
/// let two = Bytes::from(sereal::to_vec("two").unwrap());
/// let mut codec = RawCodec::default();
/// let mut buf = BytesMut::new();
/// codec.encode(one.clone(), &mut buf).unwrap();
/// codec.encode(two.clone(), &mut buf).unwrap();
/// assert_eq!(codec.decode(&mut buf).unwrap(), Some(one));
/// assert_eq!(codec.decode(&mut buf).unwrap(), Some(two));
/// assert_eq!(codec.decode_eof(&mut buf).unwrap(), None);
/// ```
///
/// The decoder's limits apply as the bytes arrive:
///
/// ```
/// use bytes::BytesMut;
/// use tokio_util::codec::Decoder;
/// use sereal::{codec::RawCodec, DecoderOptions, ErrorKind};
/// let doc = sereal::to_vec(&vec![0u8; 100]).unwrap();
/// let opts = DecoderOptions::new().max_num_array_entries(10);
/// let mut codec = RawCodec::new(sereal::Decoder::new(opts));
/// // refused at the array's count, before its elements arrive
/// let err = codec.decode(&mut BytesMut::from(&doc[..10])).unwrap_err();
/// assert!(matches!(err.kind(), ErrorKind::LimitExceeded(_)));
/// ```
#[derive(Debug, Default)]
pub struct RawCodec {
    framer: Framer,
}

impl RawCodec {
    fn over(framer: Framer) -> Self {
        RawCodec { framer }
    }

    /// The next document of `src`, split off it.
    fn next(&mut self, src: &mut BytesMut, at_end: bool) -> Result<Option<Bytes>> {
        next(&mut self.framer, src, at_end, |framer, src, ready| {
            let len = framer.raw(src, ready)?;
            Ok(src.split_to(len).freeze())
        })
    }
}

/// Writes the bytes as they are (one or more documents, or a part of one).
/// (`Bytes` only, so that `SinkExt::close` and `flush` need no type
/// annotation: `Bytes::from(vec)` takes a `Vec<u8>` without a copy.)
impl codec::Encoder<Bytes> for RawCodec {
    type Error = Error;

    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<()> {
        dst.extend_from_slice(&item);
        Ok(())
    }
}

/// A codec that reads concatenated Sereal documents as graphs: a
/// [`Decoder`](codec::Decoder) whose items are [`SendDocument`]s, each
/// document as [`Decoder::decode`] builds it (shared references, cycles,
/// weak references, objects and THAW handlers) and then made sendable by
/// [`Document::into_send`](crate::Document::into_send), so that a task
/// on a multi-threaded runtime can hold it across an `.await` (a
/// [`Document`](crate::Document) is not `Send`). Call
/// [`SendDocument::into_document`] to use it. It only reads: write
/// documents with [`RawCodec`] (the bytes of
/// [`Encoder::encode`](crate::Encoder::encode)) or [`SerealCodec`].
///
/// A document whose THAW handlers put data in it that cannot be sent
/// (a [`Foreign`](crate::Value::Foreign) value, a node also held outside
/// the document) is an [`ErrorKind::Callback`] error, and ends the stream.
///
/// ```
/// use bytes::BytesMut;
/// use tokio_util::codec::Decoder;
/// use sereal::{codec::DocumentCodec, encode, Value};
///
/// let mut buf = BytesMut::from(&encode(&Value::array([1, 2]))?[..]);
/// let sent = DocumentCodec::default().decode(&mut buf)?.unwrap();
/// let same = std::thread::spawn(move || sent.into_document() == Value::array([1, 2]));
/// assert!(same.join().unwrap());
/// # Ok::<(), sereal::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct DocumentCodec {
    framer: Framer,
}

impl DocumentCodec {
    /// The next document of `src`, decoded and made sendable.
    fn next(&mut self, src: &mut BytesMut, at_end: bool) -> Result<Option<SendDocument>> {
        next(&mut self.framer, src, at_end, |framer, src, ready| {
            let (doc, used) = framer.take(src, ready, |dec, doc| {
                let (doc, used) = dec.decode_prefix_held(doc, doc.len())?;
                let sent = doc.into_send().map_err(|refused| {
                    let m = format!(
                        "a THAW handler made a document that cannot be sent to another thread: {}",
                        refused.reason()
                    );
                    Error::at(ErrorKind::Callback(m), 0)
                })?;
                Ok((sent, used))
            })?;
            src.advance(used);
            Ok(doc)
        })
    }

    fn over(framer: Framer) -> Self {
        DocumentCodec { framer }
    }
}
