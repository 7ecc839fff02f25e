//! How a decode counts the memory it holds against
//! [`max_memory`](crate::DecoderOptions::max_memory).
//!
//! A decode counts what it holds beyond its input, by what it reads,
//! before it allocates:
//!
//! | what | counted |
//! |---|---|
//! | a stream's document, while it is buffered | its length |
//! | a decompressed body | its length |
//! | an array element (`ARRAY`, `ARRAYREF_n`, an `OBJECT_FREEZE`'s values) | [`ELEMENT`] bytes |
//! | a hash entry (`HASH`, `HASHREF_n`) | [`ENTRY`] bytes, and [`LARGE_ENTRY`] more in a hash of more than 64 |
//! | a hash key written out (not a `COPY` of an earlier key), a class name (not an `OBJECTV`) | [`KEY`] bytes |
//! | a node: the referent of a reference, an aliased or tracked scalar, a regexp | [`NODE`] bytes |
//! | a string, hash key or class name longer than 22 bytes, each time it is read (a `COPY` too) | its length |
//!
//! These are the sizes of what [`decode`](crate::decode) builds (a
//! [`Value`](crate::Value) is 24 bytes, a hash entry 32 and its index
//! about 8, a key 32, a node 72 with its reference counts, and a large
//! hash's keys' positions and hashes 16 while it is read), so the heap a decoded
//! [`Document`](crate::Document) holds stays within the count plus the
//! allocator's rounding and the block of at most 1,024 nodes (72 KiB)
//! being filled. The serde deserializer counts the same for the same
//! document, whatever the target type: a target that takes more per
//! element than a [`Value`](crate::Value) (`serde_json::Value` takes 32
//! bytes) holds proportionally more.
//!
//! Every count is made when a tag, count or length is read, so a
//! document is refused at the first item that would take it past the
//! limit: an `ARRAY` of 200,000,000 elements at its count, before any of
//! them is read. Under the default 256 MiB a document holds at most
//! 256 MiB of memory beyond its input, however it is compressed; an
//! uncompressed body counts nothing for itself (it is the input), and
//! each of its bytes counts at most [`NODE`] plus [`ELEMENT`] bytes (an
//! `ARRAYREF_0` in an array), except the bytes of a `COPY`, which count the
//! string they copy.
//!
//! ```
//! use sereal::{decoder::memory, Decoder, DecoderOptions, ErrorKind, Value};
//! let doc = sereal::encode(&Value::array(vec![Value::from(0); 1000])).unwrap();
//! // The array's node and its 1,000 elements.
//! let counted = memory::NODE + 1000 * memory::ELEMENT;
//! let tight = Decoder::new(DecoderOptions::new().max_memory(counted - 1));
//! let e = tight.decode(&doc).unwrap_err();
//! assert!(matches!(e.kind(), ErrorKind::LimitExceeded(m) if m.contains("max_memory")));
//! assert!(Decoder::new(DecoderOptions::new().max_memory(counted)).decode(&doc).is_ok());
//! ```

/// The bytes counted for each array element.
pub const ELEMENT: usize = 24;
/// The bytes counted for each hash entry.
pub const ENTRY: usize = 40;
/// The bytes counted, beside [`ENTRY`], for each entry of a hash of more
/// than 64 entries.
pub const LARGE_ENTRY: usize = 16;
/// The bytes counted for each hash key written out.
pub const KEY: usize = 32;
/// The bytes counted for each node.
pub const NODE: usize = 72;
/// Strings up to this long are kept inline, and count nothing of their own.
pub const INLINE: usize = 22;

/// The bytes counted for the entries of a hash of `n` entries.
#[inline(always)]
pub(crate) fn entries(n: usize) -> usize {
    let each = if n > 64 { ENTRY + LARGE_ENTRY } else { ENTRY };
    n.saturating_mul(each)
}

/// The bytes counted for the node and items of an `ARRAYREF_n` (`i` is
/// `n`) or `HASHREF_n` (`i` is 16 + `n`), by `i`.
pub(crate) const SHORT_CONTAINER: [usize; 32] = {
    let mut t = [0; 32];
    let mut i = 0;
    while i < 32 {
        let each = if i < 16 { ELEMENT } else { ENTRY };
        t[i] = NODE + (i % 16) * each;
        i += 1;
    }
    t
};
