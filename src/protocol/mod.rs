//! Protocol constants of the Sereal format and its variable-length integers.
//!
//! Tag values, header magic strings and document types are those of the
//! Sereal specification (`sereal_spec.pod`), protocol versions 1 to 5.
//! [`Cursor`] is the body reader's primitives, which every reader of tags
//! shares.

mod cursor;

pub use cursor::Cursor;
pub(crate) use cursor::{memory_exceeded, over_limit};

/// Newest protocol version this crate writes and reads; the encoder default.
pub const PROTOCOL_VERSION: u8 = 5;

/// Magic string of protocol versions 1 and 2.
pub const MAGIC_V1: &[u8; 4] = b"=srl";
/// Magic string of protocol versions 3 and later (`s` with its high bit set).
pub const MAGIC_V3: &[u8; 4] = b"=\xF3rl";
/// The version 3 magic after an accidental UTF-8 encoding of the document.
pub const MAGIC_V3_UTF8: &[u8; 5] = b"=\xC3\xB3rl";

/// Document type: raw, uncompressed body.
pub const TYPE_RAW: u8 = 0;
/// Document type: Snappy without a length prefix (protocol 1 only).
pub const TYPE_SNAPPY_LEGACY: u8 = 1;
/// Document type: Snappy with a varint length prefix.
pub const TYPE_SNAPPY: u8 = 2;
/// Document type: zlib with uncompressed and compressed length varints.
pub const TYPE_ZLIB: u8 = 3;
/// Document type: Zstandard with a varint length prefix.
pub const TYPE_ZSTD: u8 = 4;

/// Header bitfield bit: user header data follows.
pub const HEADER_USER_DATA: u8 = 1;

/// Track flag: the high bit of a tag marks an item referred to later.
pub const TRACK_FLAG: u8 = 0x80;

/// The tags of the Sereal body, with the spec's names.
#[allow(missing_docs)]
pub mod tag {
    pub const POS_0: u8 = 0x00;
    pub const POS_15: u8 = 0x0f;
    pub const NEG_16: u8 = 0x10;
    pub const NEG_1: u8 = 0x1f;
    pub const VARINT: u8 = 0x20;
    pub const ZIGZAG: u8 = 0x21;
    pub const FLOAT: u8 = 0x22;
    pub const DOUBLE: u8 = 0x23;
    pub const LONG_DOUBLE: u8 = 0x24;
    pub const UNDEF: u8 = 0x25;
    pub const BINARY: u8 = 0x26;
    pub const STR_UTF8: u8 = 0x27;
    pub const REFN: u8 = 0x28;
    pub const REFP: u8 = 0x29;
    pub const HASH: u8 = 0x2a;
    pub const ARRAY: u8 = 0x2b;
    pub const OBJECT: u8 = 0x2c;
    pub const OBJECTV: u8 = 0x2d;
    pub const ALIAS: u8 = 0x2e;
    pub const COPY: u8 = 0x2f;
    pub const WEAKEN: u8 = 0x30;
    pub const REGEXP: u8 = 0x31;
    pub const OBJECT_FREEZE: u8 = 0x32;
    pub const OBJECTV_FREEZE: u8 = 0x33;
    pub const NO: u8 = 0x34;
    pub const YES: u8 = 0x35;
    pub const RESERVED_0: u8 = 0x36;
    pub const RESERVED_1: u8 = 0x37;
    pub const FLOAT_128: u8 = 0x38;
    pub const CANONICAL_UNDEF: u8 = 0x39;
    pub const FALSE: u8 = 0x3a;
    pub const TRUE: u8 = 0x3b;
    pub const MANY: u8 = 0x3c;
    pub const PACKET_START: u8 = 0x3d;
    pub const EXTEND: u8 = 0x3e;
    pub const PAD: u8 = 0x3f;
    pub const ARRAYREF_0: u8 = 0x40;
    pub const ARRAYREF_15: u8 = 0x4f;
    pub const HASHREF_0: u8 = 0x50;
    pub const HASHREF_15: u8 = 0x5f;
    pub const SHORT_BINARY_0: u8 = 0x60;
    pub const SHORT_BINARY_31: u8 = 0x7f;
}

/// The spec's name of a tag byte (the track flag is ignored).
///
/// ```
/// assert_eq!(sereal::protocol::tag_name(0x2b), "ARRAY");
/// assert_eq!(sereal::protocol::tag_name(0x80 | 0x63), "SHORT_BINARY_3");
/// ```
pub fn tag_name(byte: u8) -> std::borrow::Cow<'static, str> {
    use std::borrow::Cow;
    let t = byte & !TRACK_FLAG;
    let fixed = match t {
        tag::VARINT => "VARINT",
        tag::ZIGZAG => "ZIGZAG",
        tag::FLOAT => "FLOAT",
        tag::DOUBLE => "DOUBLE",
        tag::LONG_DOUBLE => "LONG_DOUBLE",
        tag::UNDEF => "UNDEF",
        tag::BINARY => "BINARY",
        tag::STR_UTF8 => "STR_UTF8",
        tag::REFN => "REFN",
        tag::REFP => "REFP",
        tag::HASH => "HASH",
        tag::ARRAY => "ARRAY",
        tag::OBJECT => "OBJECT",
        tag::OBJECTV => "OBJECTV",
        tag::ALIAS => "ALIAS",
        tag::COPY => "COPY",
        tag::WEAKEN => "WEAKEN",
        tag::REGEXP => "REGEXP",
        tag::OBJECT_FREEZE => "OBJECT_FREEZE",
        tag::OBJECTV_FREEZE => "OBJECTV_FREEZE",
        tag::NO => "NO",
        tag::YES => "YES",
        tag::RESERVED_0 => "RESERVED_0",
        tag::RESERVED_1 => "RESERVED_1",
        tag::FLOAT_128 => "FLOAT_128",
        tag::CANONICAL_UNDEF => "CANONICAL_UNDEF",
        tag::FALSE => "FALSE",
        tag::TRUE => "TRUE",
        tag::MANY => "MANY",
        tag::PACKET_START => "PACKET_START",
        tag::EXTEND => "EXTEND",
        tag::PAD => "PAD",
        _ => "",
    };
    if !fixed.is_empty() {
        return Cow::Borrowed(fixed);
    }
    Cow::Owned(match t {
        tag::POS_0..=tag::POS_15 => format!("POS_{t}"),
        tag::NEG_16..=tag::NEG_1 => format!("NEG_{}", 32 - t),
        tag::ARRAYREF_0..=tag::ARRAYREF_15 => format!("ARRAYREF_{}", t & 15),
        tag::HASHREF_0..=tag::HASHREF_15 => format!("HASHREF_{}", t & 15),
        _ => format!("SHORT_BINARY_{}", t & 31),
    })
}

/// Longest varint of a `u64`: ten bytes.
pub const MAX_VARINT_LEN: usize = 10;

/// Appends `n` as a varint (seven bits a byte, least significant first).
///
/// ```
/// let mut out = Vec::new();
/// sereal::protocol::write_varint(&mut out, 300);
/// assert_eq!(out, [0xac, 0x02]);
/// ```
#[inline]
pub fn write_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Appends the start of a document's header: the magic string of protocol
/// `version` and the version-and-type byte of a raw body (compression, if
/// any, sets its type when the body is framed).
#[inline]
pub(crate) fn write_magic(out: &mut Vec<u8>, version: u8) {
    out.extend_from_slice(if version >= 3 { MAGIC_V3 } else { MAGIC_V1 });
    out.push(version);
}

/// Reads a varint from the start of `buf`: the value and the bytes it took,
/// or `None` when `buf` ends inside it or it does not fit in 64 bits.
///
/// ```
/// assert_eq!(sereal::protocol::read_varint(&[0xac, 0x02, 9]), Some((300, 2)));
/// assert_eq!(sereal::protocol::read_varint(&[0x80]), None);
/// ```
#[inline(always)]
pub fn read_varint(buf: &[u8]) -> Option<(u64, usize)> {
    let mut n: u64 = 0;
    for (i, &b) in buf.iter().enumerate().take(MAX_VARINT_LEN) {
        let bits = u64::from(b & 0x7f);
        if i == 9 && b > 1 {
            return None;
        }
        n |= bits << (7 * i);
        if b & 0x80 == 0 {
            return Some((n, i + 1));
        }
    }
    None
}

/// Reads the varint at `buf[pos..]`: its value and length, or what is wrong
/// (`Truncated` when the input ends inside it, `BadVarint` when it is too
/// long or overflows), for the readers to place at `pos`.
#[inline(always)]
pub(crate) fn varint_at(buf: &[u8], pos: usize) -> Result<(u64, usize), crate::ErrorKind> {
    let rest = buf.get(pos..).unwrap_or_default();
    // The error is made only on failure: an `ErrorKind` built eagerly (as
    // `ok_or` does) is also dropped on every success.
    match read_varint(rest) {
        Some(v) => Ok(v),
        None if rest.len() < MAX_VARINT_LEN => Err(crate::ErrorKind::Truncated),
        None => Err(crate::ErrorKind::BadVarint),
    }
}

/// Appends `tag` followed by `n` as a varint.
#[inline]
pub(crate) fn write_tag_varint(out: &mut Vec<u8>, t: u8, mut n: u64) {
    let len = out.len();
    if out.capacity() - len < 1 + MAX_VARINT_LEN {
        return write_tag_varint_growing(out, t, n);
    }
    // Room for the longest: no capacity check per byte.
    let spare = &mut out.spare_capacity_mut()[..1 + MAX_VARINT_LEN];
    spare[0].write(t);
    let mut i = 1;
    while n >= 0x80 {
        spare[i].write((n as u8) | 0x80);
        n >>= 7;
        i += 1;
    }
    spare[i].write(n as u8);
    // SAFETY: the `i + 1` bytes after `len` were written just above, within
    // the spare capacity checked on entry.
    unsafe { out.set_len(len + i + 1) };
}

/// [`write_tag_varint`] near the end of the buffer: grows it only as far
/// as this needs, so a buffer sized for a document is not outgrown.
#[cold]
#[inline(never)]
fn write_tag_varint_growing(out: &mut Vec<u8>, t: u8, n: u64) {
    out.push(t);
    write_varint(out, n);
}

/// Appends an integer as Perl writes it: `POS_n`/`NEG_n` when small, else
/// `VARINT` (non-negative) or `ZIGZAG`.
#[inline(always)]
pub(crate) fn write_int(out: &mut Vec<u8>, i: i64) {
    if i >= 0 {
        write_uint(out, i as u64);
    } else if i >= -16 {
        out.push((i + 32) as u8);
    } else {
        write_tag_varint(out, tag::ZIGZAG, zigzag_encode(i));
    }
}

/// Appends an unsigned integer: `POS_n` when up to 15, else `VARINT`.
#[inline]
pub(crate) fn write_uint(out: &mut Vec<u8>, u: u64) {
    if u <= 15 {
        out.push(u as u8);
    } else {
        write_tag_varint(out, tag::VARINT, u);
    }
}

/// Appends a string as Perl writes it: `STR_UTF8` when flagged UTF-8, else
/// `SHORT_BINARY_n` up to 31 bytes and `BINARY` beyond.
#[inline]
pub(crate) fn write_pv(out: &mut Vec<u8>, bytes: &[u8], utf8: bool) {
    let n = bytes.len();
    if utf8 {
        write_tag_varint(out, tag::STR_UTF8, n as u64);
    } else if n <= 31 {
        out.push(tag::SHORT_BINARY_0 | n as u8);
    } else {
        write_tag_varint(out, tag::BINARY, n as u64);
    }
    out.extend_from_slice(bytes);
}

/// [`write_pv`] of the first `n` bytes of `data`, all of whose `N` bytes
/// are copied (a fixed-size copy, no call): the bytes past `n` land in the
/// spare capacity. Writes through `write_pv` when the buffer lacks room
/// for all `N`, so that a buffer sized for a document is not outgrown.
#[inline(always)]
pub(crate) fn write_padded_pv<const N: usize>(
    out: &mut Vec<u8>,
    data: &[u8; N],
    n: usize,
    utf8: bool,
) {
    const { assert!(N < 0x80) };
    let bytes = &data[..n];
    let len = out.len();
    if out.capacity() - len < 2 + N {
        return write_pv(out, bytes, utf8);
    }
    let (t, head) = if utf8 {
        (tag::STR_UTF8, 2)
    } else if n <= 31 {
        (tag::SHORT_BINARY_0 | n as u8, 1)
    } else {
        (tag::BINARY, 2)
    };
    let spare = &mut out.spare_capacity_mut()[..2 + N];
    spare[0].write(t);
    // The length byte of a two-byte head; the data's first byte overwrites
    // it after a one-byte head.
    spare[1].write(n as u8);
    // SAFETY: `spare` holds `2 + N` bytes from `len` and `head <= 2`, so
    // the `N` bytes written at `head` are within it; they and the head
    // cover the `head + n` bytes the length then includes (`n <= N`, as
    // `bytes` shows).
    unsafe {
        spare
            .as_mut_ptr()
            .add(head)
            .cast::<[u8; N]>()
            .write_unaligned(*data);
        out.set_len(len + head + n);
    }
}

/// Writes the text `s` as Perl writes a string that holds it: without the
/// UTF-8 flag when it is ASCII (`SHORT_BINARY`/`BINARY`, as Perl's own
/// `"abc"`), as `STR_UTF8` otherwise. Text of 1 to 16 bytes (names, codes,
/// keys: most of it) is tested for ASCII and copied in the same few loads
/// and stores, two overlapping words (or halves, or bytes) read once; no
/// call and no loop.
#[cfg(feature = "serde")]
#[inline(always)]
pub(crate) fn write_text(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    let n = b.len();
    let len = out.len();
    if !(1..=16).contains(&n) || out.capacity() - len < 2 + 16 {
        return write_pv(out, b, !b.is_ascii());
    }
    // The bytes as two overlapping pieces, each stored where it was read;
    // for 1 to 3 bytes, the first, middle and last (all of them).
    let w8 = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let w4 = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    let ascii = match n {
        1..=3 => (b[0] | b[n / 2] | b[n - 1]) < 0x80,
        4..=7 => (w4(0) | w4(n - 4)) & 0x8080_8080 == 0,
        _ => (w8(0) | w8(n - 8)) & 0x8080_8080_8080_8080 == 0,
    };
    let spare = &mut out.spare_capacity_mut()[..2 + 16];
    let head = if ascii {
        spare[0].write(tag::SHORT_BINARY_0 | n as u8);
        1
    } else {
        spare[0].write(tag::STR_UTF8);
        // the varint of a length under 128 is the length
        spare[1].write(n as u8);
        2
    };
    let to = spare[head..].as_mut_ptr().cast::<u8>();
    // SAFETY: `spare` holds 18 bytes from `len`, `to` is `head <= 2` bytes
    // in, and each store below ends within the first `n <= 16` bytes from
    // `to`: the head and the `n` bytes stored after it are the bytes the
    // new length includes, all written.
    unsafe {
        match n {
            1..=3 => {
                to.write(b[0]);
                to.add(n / 2).write(b[n / 2]);
                to.add(n - 1).write(b[n - 1]);
            }
            4..=7 => {
                to.cast::<u32>().write_unaligned(w4(0).to_le());
                to.add(n - 4)
                    .cast::<u32>()
                    .write_unaligned(w4(n - 4).to_le());
            }
            _ => {
                to.cast::<u64>().write_unaligned(w8(0).to_le());
                to.add(n - 8)
                    .cast::<u64>()
                    .write_unaligned(w8(n - 8).to_le());
            }
        }
        out.set_len(len + head + n);
    }
}

/// Zigzag-maps a signed integer so small magnitudes make small varints.
///
/// ```
/// use sereal::protocol::zigzag_encode;
/// # fn main() -> Result<(), sereal::Error> {
/// assert_eq!([0, -1, 1, -2, 2].map(zigzag_encode), [0, 1, 2, 3, 4]);
/// // -100 is written as ZIGZAG and the varint of 199 (0xc7 0x01)
/// assert_eq!(zigzag_encode(-100), 199);
/// assert_eq!(&sereal::encode(&sereal::Value::from(-100))?[6..], b"\x21\xc7\x01");
/// # Ok(())
/// # }
/// ```
#[inline]
pub fn zigzag_encode(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

/// Inverse of [`zigzag_encode`].
///
/// ```
/// use sereal::protocol::{zigzag_decode, zigzag_encode};
/// assert_eq!(zigzag_decode(199), -100);
/// for n in [i64::MIN, -1, 0, 1, i64::MAX] {
///     assert_eq!(zigzag_decode(zigzag_encode(n)), n);
/// }
/// ```
#[inline]
pub fn zigzag_decode(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

/// The nesting limit a `max_recursion_depth` of `max` sets: `max`, or none
/// for 0, as for every limit of this crate's options (Perl reads 0 as its
/// default of 10000).
///
/// ```
/// assert_eq!(sereal::protocol::depth_limit(0), usize::MAX);
/// assert_eq!(sereal::protocol::depth_limit(7), 7);
/// ```
#[inline]
pub fn depth_limit(max: usize) -> usize {
    if max == 0 {
        usize::MAX
    } else {
        max
    }
}

/// Whether the item whose tag byte `byte` (track flag included) comes
/// right after a `REFN` is its referent without a nesting level: one of
/// Perl's immortal scalars (`TRUE`, `FALSE`, `CANONICAL_UNDEF`, and
/// `UNDEF` under `use_undef`), which Perl's decoder refers to without
/// reading a value.
///
/// Every reader of this crate counts `max_recursion_depth` as Perl's
/// decoder does: one level for a `REFN`'s referent and one for each
/// `ARRAYREF_n`/`HASHREF_n`; none for a tracked item, a `WEAKEN` or an
/// `OBJECT`. Two forms Perl's encoder never writes, which its decoder
/// reads without counting (and so recurses without bound), take one: an
/// `ARRAY` or `HASH` that is not a referent (nor the value of an object
/// that is one), and a prefix directly inside another
/// ([`nested_prefix_level`]).
///
/// ```
/// use sereal::protocol::{immortal_referent, tag, TRACK_FLAG};
/// assert!(immortal_referent(tag::TRUE, false));
/// assert!(!immortal_referent(tag::TRUE | TRACK_FLAG, false));
/// assert!(immortal_referent(tag::UNDEF, true) && !immortal_referent(tag::UNDEF, false));
/// ```
#[inline]
pub fn immortal_referent(byte: u8, use_undef: bool) -> bool {
    matches!(byte, tag::TRUE | tag::FALSE | tag::CANONICAL_UNDEF) || byte == tag::UNDEF && use_undef
}

/// Whether the item with tag `inner` (track flag cleared), read directly
/// as the value of the prefix tag `outer` (`WEAKEN`, `OBJECT`, `OBJECTV`),
/// takes a nesting level: it does when both are objects (`OBJECT` or
/// `OBJECTV`). An object in a `WEAKEN` (a weak reference to an object, the
/// one chain Perl's encoder writes) takes none; a `WEAKEN` directly in a
/// `WEAKEN` or an object is refused, as soon as it is read, since a weak
/// reference is not a reference. Perl's decoder counts no prefix; a chain
/// of objects stays within the depth limit here. See
/// [`immortal_referent`] for the other levels.
///
/// ```
/// use sereal::protocol::{nested_prefix_level, tag};
/// assert!(!nested_prefix_level(tag::WEAKEN, tag::OBJECT));
/// assert!(nested_prefix_level(tag::OBJECT, tag::OBJECTV));
/// assert!(!nested_prefix_level(tag::OBJECT, tag::REFN));
/// ```
#[inline]
pub fn nested_prefix_level(outer: u8, inner: u8) -> bool {
    matches!(outer, tag::OBJECT | tag::OBJECTV) && matches!(inner, tag::OBJECT | tag::OBJECTV)
}

/// Whether `bytes` are UTF-8 by Perl's rule (`is_utf8_string`, what its
/// decoder's `validate_utf8` checks): Perl's extended UTF-8, which holds
/// every code point Perl can, surrogates and those past U+10FFFF included,
/// up to `IV_MAX` (2^63 - 1): lead bytes 0xF8 to 0xFB start five-byte
/// forms, 0xFC and 0xFD six-byte ones, 0xFE a seven-byte one and 0xFF a
/// thirteen-byte one. Overlong forms, continuation bytes out of place and
/// sequences cut short are refused. Every string that is valid UTF-8 in
/// Rust's sense is valid here too.
pub(crate) fn is_perl_utf8(bytes: &[u8]) -> bool {
    // Most strings are strictly UTF-8: checked fast, up to the first
    // sequence that is not.
    let mut i = match std::str::from_utf8(bytes) {
        Ok(_) => return true,
        Err(e) => e.valid_up_to(),
    };
    while let Some(&b) = bytes.get(i) {
        // the sequence's length, the lead byte's bits of the code point,
        // and the smallest code point of that length (below it: overlong)
        let (len, lead, least) = match b {
            0x00..=0x7f => {
                i += 1;
                continue;
            }
            0x80..=0xbf => return false,
            0xc0..=0xdf => (2, b & 0x1f, 0x80),
            0xe0..=0xef => (3, b & 0x0f, 0x800),
            0xf0..=0xf7 => (4, b & 0x07, 0x1_0000),
            0xf8..=0xfb => (5, b & 0x03, 0x20_0000),
            0xfc..=0xfd => (6, b & 0x01, 0x400_0000),
            0xfe => (7, 0, 0x8000_0000),
            0xff => (13, 0, 1 << 36),
        };
        let Some(tail) = bytes.get(i + 1..i + len) else {
            return false;
        };
        // Twelve continuation bytes carry 72 bits.
        let mut cp = u128::from(lead);
        for &c in tail {
            if c & 0xc0 != 0x80 {
                return false;
            }
            cp = cp << 6 | u128::from(c & 0x3f);
        }
        if cp < least || cp > i64::MAX as u128 {
            return false;
        }
        i += len;
    }
    true
}

#[cfg(test)]
mod tests {
    /// `write_text` writes what `write_pv` writes, at every length, with a
    /// non-ASCII character at every position, and with the buffer's spare
    /// room from none to plenty. (Under Miri, which checks the stores of
    /// each path, every length up to 33 with the character first, in the
    /// middle and last.)
    #[test]
    #[cfg(feature = "serde")]
    fn write_text_is_write_pv() {
        let lengths = if cfg!(miri) { 0..34 } else { 0..72 };
        for n in lengths {
            let mut texts = vec!["a".repeat(n)];
            let positions: Vec<usize> = match n.checked_sub(2) {
                None => vec![],
                Some(last) if cfg!(miri) => vec![0, last / 2, last],
                Some(last) => (0..=last).collect(),
            };
            for i in positions {
                texts.push(format!("{}é{}", "a".repeat(i), "a".repeat(n - i - 2)));
            }
            for t in &texts {
                for spare in [0, 1, 17, 18, 64] {
                    let mut want = b"head".to_vec();
                    super::write_pv(&mut want, t.as_bytes(), !t.is_ascii());
                    let mut got = Vec::with_capacity(4 + spare);
                    got.extend_from_slice(b"head");
                    super::write_text(&mut got, t);
                    assert_eq!(got, want, "{t:?} with {spare} spare");
                }
            }
        }
    }

    use super::*;

    #[test]
    fn perl_utf8_takes_extended_forms_and_refuses_overlongs() {
        let takes: [&[u8]; 12] = [
            b"",
            "plain \u{e9}\u{263a}\u{10348}".as_bytes(),
            b"\xed\xa0\x80",                 // U+D800, a surrogate
            b"\xf4\x90\x80\x80",             // U+110000
            b"\xf7\xbf\xbf\xbf",             // 2^21 - 1
            b"\xf8\x88\x80\x80\x80",         // 2^21
            b"\xfc\x84\x80\x80\x80\x80",     // 2^26
            b"\xfd\xbf\xbf\xbf\xbf\xbf",     // 2^31 - 1
            b"\xfe\x82\x80\x80\x80\x80\x80", // 2^31
            b"\xfe\xbf\xbf\xbf\xbf\xbf\xbf", // 2^36 - 1
            b"a\xff\x80\x80\x80\x80\x80\x81\x80\x80\x80\x80\x80\x80b", // 2^36
            b"\xff\x80\x87\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf", // 2^63 - 1
        ];
        for b in takes {
            assert!(is_perl_utf8(b), "{b:02x?}");
        }
        let refuses: [&[u8]; 14] = [
            b"\xc0\x80",                                             // overlong NUL
            b"\xe0\x9f\xbf",                                         // overlong U+7FF
            b"\xf0\x8f\xbf\xbf",                                     // overlong U+FFFF
            b"\xf8\x87\xbf\xbf\xbf",                                 // overlong 2^21 - 1
            b"\xfe\x81\xbf\xbf\xbf\xbf\xbf",                         // overlong 2^31 - 1
            b"\xff\x80\x80\x80\x80\x80\x80\xbf\xbf\xbf\xbf\xbf\xbf", // overlong 2^36 - 1
            b"\xff\x80\x88\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80", // 2^63
            b"\xff\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf", // 2^72 - 1
            b"a\x80",                                                // lone continuation
            b"\xe2\x82",                                             // cut short
            b"\xe2\x41\x82",                                         // not a continuation
            b"\xff\x80\x80\x80\x80\x80\x81\x80\x80\x80\x80\x80",     // cut short
            b"\xfe",
            b"\xff",
        ];
        for b in refuses {
            assert!(!is_perl_utf8(b), "{b:02x?}");
        }
    }

    #[test]
    fn padded_pv_writes_what_write_pv_writes_with_any_room_left() {
        let mut data = [0u8; 22];
        for (i, b) in data.iter_mut().enumerate() {
            *b = b'a' + i as u8;
        }
        for n in 0..=22 {
            for utf8 in [false, true] {
                let mut want = b"xy".to_vec();
                write_pv(&mut want, &data[..n], utf8);
                // From no spare room to more than the fixed-size copy needs.
                for spare in 0..30 {
                    let mut got = Vec::with_capacity(2 + spare);
                    got.extend_from_slice(b"xy");
                    let cap = got.capacity();
                    write_padded_pv(&mut got, &data, n, utf8);
                    assert_eq!(got, want, "n {n} utf8 {utf8} spare {spare}");
                    if spare >= 24 {
                        assert_eq!(got.capacity(), cap, "grew with room for the copy");
                    }
                }
            }
        }
    }

    #[test]
    fn tag_varint_writes_the_tag_then_the_varint_at_every_width() {
        let mut values: Vec<u64> = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1]).collect();
        values.extend([0, 127, 128, 16383, 16384, u64::MAX]);
        for n in values {
            let mut want = vec![tag::VARINT];
            write_varint(&mut want, n);
            let mut got = b"xy".to_vec();
            write_tag_varint(&mut got, tag::VARINT, n);
            assert_eq!(&got[2..], &want[..], "{n}");
            assert_eq!(read_varint(&got[3..]), Some((n, got.len() - 3)));
        }
    }

    #[test]
    fn varint_round_trip_and_limits() {
        for n in [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX] {
            let mut out = Vec::new();
            write_varint(&mut out, n);
            assert_eq!(read_varint(&out), Some((n, out.len())));
        }
        let mut max = Vec::new();
        write_varint(&mut max, u64::MAX);
        assert_eq!(max.len(), MAX_VARINT_LEN);
        // an eleventh byte, or bits beyond 64, are refused
        assert_eq!(read_varint(&[0xff; 11]), None);
        assert_eq!(
            read_varint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]),
            None
        );
        // a padded (non-canonical) varint is still read
        assert_eq!(read_varint(&[0x85, 0x80, 0x00]), Some((5, 3)));
    }

    #[test]
    fn zigzag_matches_spec() {
        assert_eq!(zigzag_encode(-1), 1);
        assert_eq!(zigzag_encode(1), 2);
        assert_eq!(zigzag_encode(-17), 33);
        for n in [0, -1, 1, i64::MIN, i64::MAX, -17] {
            assert_eq!(zigzag_decode(zigzag_encode(n)), n);
        }
    }

    #[test]
    fn tag_names() {
        assert_eq!(tag_name(0x10), "NEG_16");
        assert_eq!(tag_name(0x1f), "NEG_1");
        assert_eq!(tag_name(0x41), "ARRAYREF_1");
        assert_eq!(tag_name(0x5f), "HASHREF_15");
        assert_eq!(tag_name(0x7f), "SHORT_BINARY_31");
        assert_eq!(tag_name(0x80 | 0x28), "REFN");
    }
}
