//! Merging documents into one on their bytes.

use super::copy::{write_header, Copied, Copier, Outside};
use crate::compress::Compression;
use crate::decoder::Decoder;
use crate::encoder::EncoderOptions;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, tag};
use hashbrown::HashMap;

/// How [`merge`] writes its document: whether the inputs' arrays are
/// joined (`flat`), its protocol version and compression, whether strings
/// are written once; and the decoder options the inputs are read with.
///
/// ```
/// use sereal::{view::MergeOptions, Compression};
/// let opts = MergeOptions::new().flat(true).compress(Compression::Zstd);
/// assert!(opts.is_flat());
/// ```
#[derive(Clone, Debug)]
pub struct MergeOptions {
    flat: bool,
    dedupe_strings: bool,
    encoder: EncoderOptions,
    decoder: Decoder,
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions::new()
    }
}

impl MergeOptions {
    /// The defaults: an array of the inputs, protocol 5, no compression,
    /// strings written as each input has them, inputs read with the
    /// default decoder options.
    pub fn new() -> MergeOptions {
        MergeOptions {
            flat: false,
            dedupe_strings: false,
            encoder: EncoderOptions::new(),
            decoder: Decoder::default(),
        }
    }

    /// Joins the inputs' arrays (each input's root must be an array, or a
    /// reference to one): `[A, B]` and `[C]` merge to `[A, B, C]`, where
    /// they merge to `[[A, B], [C]]` otherwise.
    pub fn flat(mut self, on: bool) -> Self {
        self.flat = on;
        self
    }

    /// Whether the inputs' arrays are joined.
    pub fn is_flat(&self) -> bool {
        self.flat
    }

    /// The protocol version written (default 5). It must be at least each
    /// input's: a body is not rewritten to an older protocol.
    pub fn protocol_version(mut self, version: u8) -> Self {
        self.encoder = self.encoder.protocol_version(version);
        self
    }

    /// How the merged body is compressed, as
    /// [`EncoderOptions::compress`].
    pub fn compress(mut self, c: Compression) -> Self {
        self.encoder = self.encoder.compress(c);
        self
    }

    /// The smallest body compressed, as
    /// [`EncoderOptions::compress_threshold`].
    pub fn compress_threshold(mut self, bytes: usize) -> Self {
        self.encoder = self.encoder.compress_threshold(bytes);
        self
    }

    /// The compression level, as [`EncoderOptions::compress_level`].
    pub fn compress_level(mut self, level: Option<i32>) -> Self {
        self.encoder = self.encoder.compress_level(level);
        self
    }

    /// Writes each string once, later ones as `COPY`s of the first where
    /// that is shorter, across all the inputs: hash keys, class names and
    /// values (default off, as the encoder's `dedupe_strings`; it costs a
    /// hash of every string). A regexp's pattern and flags, and strings
    /// something refers to, are written as they are.
    pub fn dedupe_strings(mut self, on: bool) -> Self {
        self.dedupe_strings = on;
        self
    }

    /// The decoder the inputs are read with (their limits and options).
    pub fn decoder(mut self, decoder: Decoder) -> Self {
        self.decoder = decoder;
        self
    }
}

/// Merges documents into one whose root is an array of their roots (or,
/// with [`MergeOptions::flat`], of their arrays' elements), straight from
/// their bytes: each input is walked and checked as the decoder would, its
/// tags copied and every back-reference rewritten, and no value is built.
/// Perl's decoder reads the result as the array of what it reads in each
/// input, sharing and cycles within each input kept. User header data of
/// the inputs is not kept.
///
/// ```
/// use sereal::{sereal, view::{merge, MergeOptions}};
/// # fn main() -> Result<(), sereal::Error> {
/// let a = sereal::encode(&sereal!([{"id": 1}, {"id": 2}]))?;
/// let b = sereal::encode(&sereal!([{"id": 3}]))?;
/// let both = merge(&[&a, &b], &MergeOptions::new())?;
/// assert_eq!(*sereal::decode(&both)?, sereal!([[{"id": 1}, {"id": 2}], [{"id": 3}]]));
/// let flat = merge(&[&a, &b], &MergeOptions::new().flat(true))?;
/// assert_eq!(*sereal::decode(&flat)?, sereal!([{"id": 1}, {"id": 2}, {"id": 3}]));
/// # Ok(())
/// # }
/// ```
pub fn merge<D: AsRef<[u8]>>(inputs: &[D], opts: &MergeOptions) -> Result<Vec<u8>> {
    let version = opts.encoder.protocol_version;
    opts.encoder.validate()?;
    let views = inputs
        .iter()
        .map(|d| opts.decoder.view(d.as_ref()))
        .collect::<Result<Vec<_>>>()?;
    // What each input adds to the root array: its root item, or the
    // elements of its array.
    let mut parts = Vec::with_capacity(views.len());
    let mut count = 0usize;
    for (i, view) in views.iter().enumerate() {
        if view.version() > version {
            return Err(Error::new(ErrorKind::BadOption(format!(
                "input {i} is a protocol {} document, newer than the protocol {version} asked for",
                view.version()
            ))));
        }
        let end = view.checked_end()?;
        let r = view.reader();
        let part = if opts.flat {
            let Some(c) = r.container(0)?.filter(|c| !c.hash && c.first > 0) else {
                return Err(Error::new(ErrorKind::Invalid(format!(
                    "a flat merge joins arrays, and input {i}'s root is not an array"
                ))));
            };
            count += c.count;
            (c.first, end)
        } else {
            count += 1;
            (0, end)
        };
        parts.push(part);
    }
    let mut out = Vec::new();
    let shift = write_header(&mut out, version);
    let body_start = out.len();
    write_array_ref(&mut out, count);
    let mut written = HashMap::new();
    for (i, (view, &(from, to))) in views.iter().zip(&parts).enumerate() {
        let mut copier = Copier::new(view.reader(), shift, body_start, Outside::Stop);
        if opts.dedupe_strings {
            copier = copier.dedupe(&mut written);
        }
        if let Copied::Outside(_) = copier.copy(from, to, &mut out)? {
            return Err(Error::new(ErrorKind::Invalid(format!(
                "input {i} refers to its root array, which a flat merge does not keep"
            ))));
        }
    }
    opts.encoder
        .framing()
        .finish(&mut out, 0, body_start, version)?;
    Ok(out)
}

/// The root of an array of `n` elements, as Perl's encoder writes a
/// reference to one: `ARRAYREF_n` up to 15, `REFN` and `ARRAY` beyond.
pub(crate) fn write_array_ref(out: &mut Vec<u8>, n: usize) {
    if n <= 15 {
        out.push(tag::ARRAYREF_0 + n as u8);
    } else {
        out.push(tag::REFN);
        out.push(tag::ARRAY);
        protocol::write_varint(out, n as u64);
    }
}
