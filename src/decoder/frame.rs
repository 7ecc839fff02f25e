//! The document layer around a body: its size against
//! `max_document_size`, and its frame, decompressed (within the limits)
//! when the header says it is compressed.

use super::{Decoder, DecoderOptions, Header};
use crate::compress::{Compression, Inflate};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol;
use std::borrow::Cow;

impl Decoder {
    /// Decompresses (if needed) and returns the body bytes of a document,
    /// with the offset its first byte has in the body's offset space.
    ///
    /// ```
    /// use sereal::{Compression, Decoder, Encoder, EncoderOptions, Header, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let opts = EncoderOptions::new().compress(Compression::Zstd).compress_threshold(0);
    /// let doc = Encoder::new(opts)?.encode(&Value::from("z".repeat(40)))?;
    /// let header = Header::parse(&doc)?;
    /// let (body, shift) = Decoder::default().body_bytes(&doc, &header)?;
    /// // BINARY, length 40, the bytes; its first byte is body offset 1
    /// assert_eq!(&body[..2], b"\x26\x28");
    /// assert_eq!(&body[2..], "z".repeat(40).as_bytes());
    /// assert_eq!(shift, 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn body_bytes<'a>(
        &self,
        input: &'a [u8],
        header: &Header,
    ) -> Result<(Cow<'a, [u8]>, usize)> {
        frame(&self.opts, input, header, 0).map(|(body, shift, _)| (body, shift))
    }

    /// As [`body_bytes`](Self::body_bytes), for a document that may be
    /// followed by more data (a stream of concatenated documents): also
    /// returns where a compressed document ends in `input`, its frame's
    /// length being known. A raw body (`None`) ends where its value does,
    /// which only a walk of its tags can tell.
    ///
    /// ```
    /// use sereal::{Compression, Decoder, Encoder, EncoderOptions, Header, Value};
    /// let opts = EncoderOptions::new().compress(Compression::Zlib).compress_threshold(0);
    /// let text = "zipped ".repeat(100);
    /// let mut stream = Encoder::new(opts).unwrap().encode(&Value::from(&text)).unwrap();
    /// let first = stream.len();
    /// stream.extend(sereal::encode(&Value::from(2)).unwrap());
    /// let dec = Decoder::default();
    /// let h = Header::parse(&stream).unwrap();
    /// let (body, shift, end) = dec.body_frame(&stream, &h).unwrap();
    /// assert_eq!((&body[3..], shift, end), (text.as_bytes(), 1, Some(first)));
    /// let h = Header::parse(&stream[first..]).unwrap();
    /// assert_eq!(dec.body_frame(&stream[first..], &h).unwrap().2, None);
    /// ```
    pub fn body_frame<'a>(
        &self,
        input: &'a [u8],
        header: &Header,
    ) -> Result<(Cow<'a, [u8]>, usize, Option<usize>)> {
        frame(&self.opts, input, header, 0)
    }
}

/// Whether `input` starts like a Sereal document: a valid header (magic
/// string, protocol version 1 to 5, document type, header suffix) and a
/// body. Perl's `looks_like_sereal`.
///
/// ```
/// assert!(sereal::decoder::looks_like_sereal(&sereal::encode(&sereal::Value::Undef).unwrap()));
/// assert!(!sereal::decoder::looks_like_sereal(b"{\"json\": 1}"));
/// assert!(!sereal::decoder::looks_like_sereal(b"=\xC3\xB3rl\x05\x00\x01"));
/// ```
pub fn looks_like_sereal(input: &[u8]) -> bool {
    Header::parse(input).is_ok_and(|h| h.len < input.len())
}

/// The error for a document of `len` bytes over `max_document_size`, at
/// the offset where the limit is passed.
#[inline]
pub(crate) fn document_size_check(o: &DecoderOptions, len: usize) -> Result<()> {
    let max = o.max_document_size;
    if max != 0 && len > max {
        return Err(document_too_big(len, max));
    }
    Ok(())
}

#[cold]
fn document_too_big(len: usize, max: usize) -> Error {
    let m = format!("document of {len} bytes (limit {max})");
    Error::at(ErrorKind::LimitExceeded(m), max)
}

/// The body bytes of a document, their offset shift, and for a compressed
/// body the input offset where its frame ends (a raw body ends where its
/// value does). `held`: the bytes of `max_memory` the decode holds already
/// (a stream's buffered document).
#[inline]
pub(crate) fn frame<'a>(
    o: &DecoderOptions,
    input: &'a [u8],
    header: &Header,
    held: usize,
) -> Result<(Cow<'a, [u8]>, usize, Option<usize>)> {
    // Protocol 1 offsets count from the start of the document.
    let shift = if header.version == 1 { header.len } else { 1 };
    if header.compression == Compression::None {
        return Ok((Cow::Borrowed(&input[header.len..]), shift, None));
    }
    inflate(o, input, header, shift, held)
}

fn inflate<'a>(
    o: &DecoderOptions,
    input: &'a [u8],
    header: &Header,
    shift: usize,
    held: usize,
) -> Result<(Cow<'a, [u8]>, usize, Option<usize>)> {
    let refused = match header.compression {
        Compression::Snappy => o.refuse_snappy,
        Compression::Zlib => o.refuse_zlib,
        Compression::Zstd => o.refuse_zstd,
        Compression::None => false,
    };
    if refused {
        return Err(Error::at(
            ErrorKind::CompressionRefused(header.compression),
            4,
        ));
    }
    let data = &input[header.len..];
    let doc_type = if header.legacy_snappy {
        protocol::TYPE_SNAPPY_LEGACY
    } else {
        header.compression.doc_type()
    };
    let limit = |max: usize| if max == 0 { usize::MAX } else { max };
    let size = limit(o.max_uncompressed_size);
    // The body is held beside what the decode builds: it counts against
    // max_memory too (`held` of it is taken already).
    let memory = limit(o.max_memory).saturating_sub(held);
    let inflate = if memory < size {
        Inflate {
            max_size: memory,
            option: "what is left of max_memory",
        }
    } else {
        Inflate {
            max_size: size,
            option: "max_uncompressed_size",
        }
    };
    let (body, used) = inflate
        .body(doc_type, data)
        .map_err(|e| e.shifted(header.len, false))?;
    Ok((Cow::Owned(body), shift, Some(header.len + used)))
}
