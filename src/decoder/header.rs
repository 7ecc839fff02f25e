//! A document's header: magic, version and type, and the optional user
//! header suffix.

use super::*;

/// The parsed header of a document.
///
/// ```
/// use sereal::{Compression, Header};
/// let h = Header::parse(b"=\xF3rl\x05\x00\x01").unwrap();
/// assert_eq!((h.version, h.compression), (5, Compression::None));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Protocol version, 1 to 5.
    pub version: u8,
    /// Body compression.
    pub compression: Compression,
    /// Whether the body uses protocol 1's Snappy framing (no length prefix).
    pub legacy_snappy: bool,
    /// Byte range of the user header data body, if present.
    pub user_data: Option<Range<usize>>,
    /// Length of the header: the body starts here.
    pub len: usize,
}

impl Header {
    /// Parses the header at the start of `input`.
    ///
    /// ```
    /// let h = sereal::Header::parse(b"=\xF3rl\x05\x00\x01").unwrap();
    /// assert_eq!((h.version, h.len), (5, 6));
    /// ```
    #[inline(always)]
    pub fn parse(input: &[u8]) -> Result<Header> {
        if let Some(len) = Header::raw_len(input) {
            return Ok(Header {
                version: input[4],
                compression: Compression::None,
                legacy_snappy: false,
                user_data: None,
                len,
            });
        }
        Header::parse_any(input)
    }

    /// The length of the common header (protocol 3 to 5, raw body, no
    /// suffix): the magic, the version-type byte, a zero suffix length.
    pub(crate) const RAW_LEN: usize = 6;

    /// The length of the header at the start of `input` when it is the
    /// common one ([`RAW_LEN`](Header::RAW_LEN)).
    #[inline(always)]
    pub(crate) fn raw_len(input: &[u8]) -> Option<usize> {
        // Two loads: the magic as a word, the version-type byte and the
        // suffix length (a varint: 0 for none) as a half word, the length
        // high, so one comparison takes both.
        let &[m0, m1, m2, m3, version, suffix] = input.first_chunk::<6>()?;
        let vf = u16::from_le_bytes([version, suffix]);
        ([m0, m1, m2, m3] == *protocol::MAGIC_V3 && vf.wrapping_sub(3) < 3)
            .then_some(Header::RAW_LEN)
    }

    #[inline(never)]
    pub(super) fn parse_any(input: &[u8]) -> Result<Header> {
        if input.len() >= 5 && input[..5] == protocol::MAGIC_V3_UTF8[..] {
            return Err(Error::at(ErrorKind::Utf8MangledMagic, 0));
        }
        if input.len() < 4 {
            let is_prefix =
                protocol::MAGIC_V1.starts_with(input) || protocol::MAGIC_V3.starts_with(input);
            let kind = if is_prefix {
                ErrorKind::Truncated
            } else {
                ErrorKind::BadMagic
            };
            return Err(Error::at(kind, 0));
        }
        let new_magic = match &input[..4] {
            m if m == protocol::MAGIC_V3 => true,
            m if m == protocol::MAGIC_V1 => false,
            _ => return Err(Error::at(ErrorKind::BadMagic, 0)),
        };
        let vt = *input
            .get(4)
            .ok_or_else(|| Error::at(ErrorKind::Truncated, 4))?;
        let (version, doc_type) = (vt & 15, vt >> 4);
        match version {
            0 => return Err(Error::at(ErrorKind::UnsupportedVersion(0), 4)),
            6.. => return Err(Error::at(ErrorKind::NoPublicSpec(version), 4)),
            _ => {}
        }
        if new_magic != (version >= 3) {
            return Err(Error::at(
                ErrorKind::BadHeader(format!(
                    "magic string does not match protocol version {version}"
                )),
                0,
            ));
        }
        let compression = match doc_type {
            protocol::TYPE_RAW => Compression::None,
            protocol::TYPE_SNAPPY_LEGACY | protocol::TYPE_SNAPPY => Compression::Snappy,
            protocol::TYPE_ZLIB if version >= 3 => Compression::Zlib,
            protocol::TYPE_ZSTD if version >= 3 => Compression::Zstd,
            t => return Err(Error::at(ErrorKind::BadDocumentType(t), 4)),
        };
        // Input that ends inside the suffix length or the suffix is cut
        // short (Perl: "Unexpected termination of packet while reading
        // header"), whatever length the suffix claims.
        let (suffix, n) = protocol::varint_at(input, 5).map_err(|kind| Error::at(kind, 5))?;
        let start = 5 + n;
        let end = usize::try_from(suffix)
            .ok()
            .and_then(|s| start.checked_add(s))
            .filter(|&e| e <= input.len())
            .ok_or_else(|| Error::at(ErrorKind::Truncated, 5))?;
        let user_data =
            (version >= 2 && end > start && input[start] & protocol::HEADER_USER_DATA != 0)
                .then(|| start + 1..end);
        Ok(Header {
            version,
            compression,
            legacy_snappy: doc_type == protocol::TYPE_SNAPPY_LEGACY,
            user_data,
            len: end,
        })
    }
}
