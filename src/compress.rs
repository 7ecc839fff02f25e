//! Body compression: Snappy, zlib and Zstandard, with Sereal's framing.
//!
//! [`Compression`] names the codec the encoder compresses a body with
//! ([`EncoderOptions::compress`](crate::EncoderOptions::compress)); the
//! decoder reads whichever one a document's header names. Each codec is a
//! cargo feature (`snappy`, `zlib`, `zstd`, all on by default):
//! [`Compression::is_available`] says whether this build has one, and a
//! document or an encoder that needs one the build leaves out gets
//! [`ErrorKind::MissingFeature`].

use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, TYPE_RAW, TYPE_SNAPPY, TYPE_ZLIB, TYPE_ZSTD};
#[cfg(any(feature = "zlib", feature = "zstd"))]
use std::io::Read;
#[cfg(feature = "zlib")]
use std::io::Write;

/// Body compression, Perl's `compress` option.
///
/// ```
/// use sereal::{Compression, Encoder, EncoderOptions, Header, Value};
/// # fn main() -> Result<(), sereal::Error> {
/// let opts = EncoderOptions::new().compress(Compression::Zlib).compress_threshold(0);
/// let text = "hello ".repeat(50);
/// let doc = Encoder::new(opts)?.encode(&Value::from(&text))?;
/// assert_eq!(Header::parse(&doc)?.compression, Compression::Zlib);
/// assert!(doc.len() < text.len());
/// assert_eq!(sereal::decode(&doc)?.as_str(), Some(text.as_str()));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compression {
    /// No compression (`SRL_UNCOMPRESSED`).
    #[default]
    None,
    /// Snappy with a length prefix (`SRL_SNAPPY`, document type 2).
    Snappy,
    /// zlib (`SRL_ZLIB`, document type 3; protocol 3 and later).
    Zlib,
    /// Zstandard (`SRL_ZSTD`, document type 4; protocol 3 and later).
    Zstd,
}

impl Compression {
    /// The document type written in the header for this compression.
    ///
    /// ```
    /// use sereal::{Compression, Encoder, EncoderOptions, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// assert_eq!(Compression::Zstd.doc_type(), 4);
    /// let opts = EncoderOptions::new().compress(Compression::Zstd).compress_threshold(0);
    /// let doc = Encoder::new(opts)?.encode(&Value::from("x".repeat(100)))?;
    /// // the header's byte after the magic: document type, then protocol version
    /// assert_eq!(doc[4], Compression::Zstd.doc_type() << 4 | 5);
    /// # Ok(())
    /// # }
    /// ```
    pub fn doc_type(self) -> u8 {
        match self {
            Compression::None => TYPE_RAW,
            Compression::Snappy => TYPE_SNAPPY,
            Compression::Zlib => TYPE_ZLIB,
            Compression::Zstd => TYPE_ZSTD,
        }
    }
}

impl Compression {
    /// The cargo feature that builds this codec in (`None` for no
    /// compression).
    ///
    /// ```
    /// assert_eq!(sereal::Compression::Zstd.feature(), Some("zstd"));
    /// ```
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Compression::None => None,
            Compression::Snappy => Some("snappy"),
            Compression::Zlib => Some("zlib"),
            Compression::Zstd => Some("zstd"),
        }
    }

    /// Whether this build of the crate can compress and decompress with this
    /// codec: its cargo feature is on (always true for `None`).
    ///
    /// ```
    /// assert!(sereal::Compression::None.is_available());
    /// ```
    pub fn is_available(self) -> bool {
        match self {
            Compression::None => true,
            Compression::Snappy => cfg!(feature = "snappy"),
            Compression::Zlib => cfg!(feature = "zlib"),
            Compression::Zstd => cfg!(feature = "zstd"),
        }
    }

    /// The compression of a document type, `None` for raw and unknown types.
    fn of_doc_type(t: u8) -> Option<Compression> {
        match t {
            TYPE_SNAPPY | protocol::TYPE_SNAPPY_LEGACY => Some(Compression::Snappy),
            TYPE_ZLIB => Some(Compression::Zlib),
            TYPE_ZSTD => Some(Compression::Zstd),
            _ => None,
        }
    }
}

/// The error for a codec this build leaves out.
fn missing(c: Compression) -> Error {
    Error::new(ErrorKind::MissingFeature(c.feature().unwrap_or("")))
}

/// How a document's body is compressed and framed: the encoder options
/// that both encoding paths (value graph and serde) share.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Framing {
    pub compress: Compression,
    pub threshold: usize,
    /// `None` or `Some(0)`: the codec's default.
    pub level: Option<i32>,
    /// Protocol 1's Snappy framing, without a length prefix.
    pub legacy_snappy: bool,
}

impl Framing {
    /// Checks the choice against the protocol version and level, with
    /// Perl's rules, and against the codecs this build has.
    #[inline]
    pub(crate) fn check(&self, version: u8) -> Result<()> {
        if self.compress == Compression::None && !self.legacy_snappy {
            return Ok(());
        }
        self.check_compression(version)
    }

    /// [`Framing::check`] for a document that asks for compression. A level
    /// of 0 is the codec's default, as in Perl.
    fn check_compression(&self, version: u8) -> Result<()> {
        let c = self.compress;
        let bad = |m: String| Err(Error::new(ErrorKind::BadOption(m)));
        let level = self.level.filter(|&l| l != 0);
        match c {
            _ if self.legacy_snappy && (c != Compression::Snappy || version != 1) => bad(format!(
                "legacy_snappy is protocol 1's Snappy framing: it needs Snappy compression and protocol version 1, not {c:?} and {version}"
            )),
            _ if !c.is_available() => Err(missing(c)),
            Compression::Zlib | Compression::Zstd if version < 3 => bad(format!(
                "{c:?} compression needs protocol version 3 or later, not {version}"
            )),
            Compression::Zlib if level.is_some_and(|l| !(1..=10).contains(&l)) => {
                bad("compress_level for zlib must be between 1 and 10".into())
            }
            Compression::Zstd if level.is_some_and(|l| !(1..=22).contains(&l)) => {
                bad("compress_level for zstd must be between 1 and 22".into())
            }
            _ => Ok(()),
        }
    }

    /// Compresses the body of the document at `out[doc_start..]` (its body
    /// starts at `body_start`) in place when it is long enough and
    /// compression makes it smaller, and sets the header's document type.
    #[inline]
    pub(crate) fn finish(
        &self,
        out: &mut Vec<u8>,
        doc_start: usize,
        body_start: usize,
        version: u8,
    ) -> Result<()> {
        if self.compress != Compression::None && out.len() - body_start >= self.threshold {
            if let Some(doc_type) = self.compress_in_place(out, body_start)? {
                out[doc_start + 4] = version | (doc_type << 4);
            }
        }
        Ok(())
    }

    /// Replaces the body at `out[body_start..]` by its compressed frame
    /// when that is smaller: the document type it then has.
    fn compress_in_place(&self, out: &mut Vec<u8>, body_start: usize) -> Result<Option<u8>> {
        let framed = compress_body(
            self.compress,
            self.level,
            self.legacy_snappy,
            &out[body_start..],
        )?;
        Ok(framed.map(|framed| {
            out.truncate(body_start);
            out.extend_from_slice(&framed);
            if self.legacy_snappy {
                protocol::TYPE_SNAPPY_LEGACY
            } else {
                self.compress.doc_type()
            }
        }))
    }
}

/// Perl's reserve for a length varint, as in its encoder.
const VARINT_RESERVE: usize = 11;

/// Worst-case compressed sizes, as the C libraries Perl uses compute them;
/// Perl sizes its length varints from these.
fn bound(c: Compression, n: usize) -> usize {
    match c {
        Compression::None => n,
        Compression::Snappy => 32 + n + n / 6,
        Compression::Zlib => (128 + n * 110 / 100).max(128 + n + (n / (31 * 1024) + 1) * 5),
        Compression::Zstd => {
            n + (n >> 8)
                + if n < 128 << 10 {
                    ((128 << 10) - n) >> 11
                } else {
                    0
                }
        }
    }
}

fn varint_len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

/// Writes `n` as a varint of exactly `width` bytes, padding with
/// continuation bytes as Perl does when it fills a reserved varint.
fn write_padded_varint(out: &mut Vec<u8>, mut n: u64, width: usize) {
    for _ in 1..width {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Compresses `body` and frames it as Sereal does, with Perl's padded length
/// varints (with `bare`, protocol 1's Snappy framing: no length); `None`
/// when compression does not make the body smaller, in which case Perl (and
/// this crate) writes the document uncompressed.
#[cfg_attr(
    not(any(feature = "snappy", feature = "zlib", feature = "zstd")),
    allow(unreachable_code, unused_variables)
)]
fn compress_body(
    c: Compression,
    level: Option<i32>,
    bare: bool,
    body: &[u8],
) -> Result<Option<Vec<u8>>> {
    let level = level.filter(|&l| l != 0);
    let fail = |e: &dyn std::fmt::Display| Error::new(ErrorKind::Compression(e.to_string()));
    #[allow(unreachable_patterns)] // every codec built in
    let packed: Vec<u8> = match c {
        Compression::None => return Ok(None),
        #[cfg(feature = "snappy")]
        Compression::Snappy => snap::raw::Encoder::new()
            .compress_vec(body)
            .map_err(|e| fail(&e))?,
        #[cfg(feature = "zlib")]
        Compression::Zlib => {
            let lvl = level.unwrap_or(6).clamp(1, 10) as u32;
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(lvl));
            z.write_all(body).map_err(|e| fail(&e))?;
            z.finish().map_err(|e| fail(&e))?
        }
        #[cfg(feature = "zstd")]
        Compression::Zstd => {
            zstd::bulk::compress(body, level.unwrap_or(3)).map_err(|e| fail(&e))?
        }
        _ => return Err(missing(c)),
    };
    if packed.len() >= body.len() {
        return Ok(None);
    }
    if bare {
        return Ok(Some(packed));
    }
    let mut reserve = bound(c, body.len()) + VARINT_RESERVE;
    let mut framed = Vec::with_capacity(packed.len() + 2 * protocol::MAX_VARINT_LEN);
    if c == Compression::Zlib {
        protocol::write_varint(&mut framed, body.len() as u64);
        reserve += VARINT_RESERVE;
    }
    write_padded_varint(&mut framed, packed.len() as u64, varint_len(reserve as u64));
    framed.extend_from_slice(&packed);
    Ok(Some(framed))
}

/// Limits for decompression.
#[cfg_attr(
    not(any(feature = "snappy", feature = "zlib", feature = "zstd")),
    allow(dead_code)
)]
pub(crate) struct Inflate {
    pub max_size: usize,
    /// The option that sets `max_size`, for the error past it.
    pub option: &'static str,
}

impl Inflate {
    #[cfg(any(feature = "snappy", feature = "zlib", feature = "zstd"))]
    fn too_big(&self, n: u64, at: usize) -> Error {
        let m = format!(
            "uncompressed body of {n} bytes exceeds {} ({})",
            self.option, self.max_size
        );
        Error::at(ErrorKind::LimitExceeded(m), at)
    }

    /// Decompresses a body of document type `doc_type` from `data` (which
    /// starts right after the header): the body, and the bytes of `data` its
    /// frame took. Errors carry offsets into `data`.
    #[cfg_attr(
        not(any(feature = "snappy", feature = "zlib", feature = "zstd")),
        allow(unreachable_code, unused_variables)
    )]
    pub(crate) fn body(&self, doc_type: u8, data: &[u8]) -> Result<(Vec<u8>, usize)> {
        let trunc = || Error::at(ErrorKind::Truncated, data.len());
        let varint_at = |pos: usize| {
            let rest = &data[pos.min(data.len())..];
            protocol::read_varint(rest).ok_or_else(|| {
                // Input ending inside the varint is truncation, not corruption.
                let cut =
                    rest.len() < protocol::MAX_VARINT_LEN && rest.iter().all(|b| b & 0x80 != 0);
                Error::at(
                    if cut {
                        ErrorKind::Truncated
                    } else {
                        ErrorKind::BadVarint
                    },
                    pos,
                )
            })
        };
        let bad = |pos: usize, e: &dyn std::fmt::Display| {
            Error::at(ErrorKind::Decompression(e.to_string()), pos)
        };
        if let Some(c) = Compression::of_doc_type(doc_type).filter(|c| !c.is_available()) {
            return Err(missing(c).or_at(0, false));
        }
        #[allow(unreachable_patterns)] // every codec built in
        match doc_type {
            #[cfg(feature = "snappy")]
            protocol::TYPE_SNAPPY_LEGACY => Ok((self.snappy(data, 0)?, data.len())),
            #[cfg(feature = "snappy")]
            TYPE_SNAPPY => {
                let (len, n) = varint_at(0)?;
                let end = n
                    .checked_add(len as usize)
                    .filter(|&e| e <= data.len())
                    .ok_or_else(trunc)?;
                Ok((self.snappy(&data[n..end], n)?, end))
            }
            #[cfg(feature = "zlib")]
            TYPE_ZLIB => {
                let (ulen, n1) = varint_at(0)?;
                let (clen, n2) = varint_at(n1)?;
                let start = n1 + n2;
                let end = start
                    .checked_add(clen as usize)
                    .filter(|&e| e <= data.len())
                    .ok_or_else(trunc)?;
                if ulen > self.max_size as u64 {
                    return Err(self.too_big(ulen, 0));
                }
                // Deflate expands at most about 1032 to 1: a claim beyond
                // that is a lie the input cannot back, refused before any
                // allocation.
                if ulen > (end - start) as u64 * 1100 + 1024 {
                    return Err(bad(
                        0,
                        &format!(
                            "a zlib body of {} bytes cannot hold {ulen} bytes",
                            end - start
                        ),
                    ));
                }
                let mut out = Vec::with_capacity(ulen as usize);
                let mut z = flate2::read::ZlibDecoder::new(&data[start..end]).take(ulen + 1);
                z.read_to_end(&mut out).map_err(|e| bad(start, &e))?;
                if out.len() as u64 != ulen {
                    return Err(bad(
                        start,
                        &format!("zlib body is {} bytes, header says {ulen}", out.len()),
                    ));
                }
                Ok((out, end))
            }
            #[cfg(feature = "zstd")]
            TYPE_ZSTD => {
                let (clen, n) = varint_at(0)?;
                let end = n
                    .checked_add(clen as usize)
                    .filter(|&e| e <= data.len())
                    .ok_or_else(trunc)?;
                let frame = &data[n..end];
                let limit = self.max_size as u64;
                if let Ok(Some(declared)) = zstd::zstd_safe::get_frame_content_size(frame) {
                    if declared > limit {
                        return Err(self.too_big(declared, n));
                    }
                }
                let mut z =
                    zstd::stream::read::Decoder::with_buffer(frame).map_err(|e| bad(n, &e))?;
                // Grow the output by doubling, but never past the limit: a body
                // that would exceed it is refused before the memory is taken.
                let mut out: Vec<u8> = Vec::new();
                let mut chunk = [0u8; 64 * 1024];
                loop {
                    let got = z.read(&mut chunk).map_err(|e| bad(n, &e))?;
                    if got == 0 {
                        break;
                    }
                    if (out.len() + got) as u64 > limit {
                        return Err(self.too_big((out.len() + got) as u64, n));
                    }
                    if out.capacity() < out.len() + got {
                        let want = (out.capacity() * 2)
                            .max(out.len() + got)
                            .min(limit as usize);
                        out.reserve_exact(want - out.len());
                    }
                    out.extend_from_slice(&chunk[..got]);
                }
                Ok((out, end))
            }
            t => Err(Error::at(ErrorKind::BadDocumentType(t), 0)),
        }
    }

    #[cfg(feature = "snappy")]
    fn snappy(&self, blob: &[u8], at: usize) -> Result<Vec<u8>> {
        let len = snap::raw::decompress_len(blob)
            .map_err(|e| Error::at(ErrorKind::Decompression(e.to_string()), at))?;
        if len > self.max_size {
            return Err(self.too_big(len as u64, at));
        }
        // A Snappy element of at most 5 bytes yields at most 64: a preamble
        // claiming more than that ratio allows is refused before allocating.
        if len > blob.len().saturating_mul(64) + 64 {
            return Err(Error::at(
                ErrorKind::Decompression(format!(
                    "a Snappy body of {} bytes cannot hold {len} bytes",
                    blob.len()
                )),
                at,
            ));
        }
        snap::raw::Decoder::new()
            .decompress_vec(blob)
            .map_err(|e| Error::at(ErrorKind::Decompression(e.to_string()), at))
    }
}
