//! The body reader's primitives: a position in a body, and the reads that
//! check what they take against what is left.

mod memory;

pub(crate) use memory::memory_exceeded;

use super::{varint_at, MAX_VARINT_LEN};
use crate::error::{Error, ErrorKind, Result};
use std::ops::Range;

/// A position in a document body and the reads every walker of its tags
/// makes: bytes, varints, lengths and counts checked against what is left,
/// the offsets back-references name checked to point before where they are
/// read, and the nesting depth checked against a limit. The value decoder,
/// the serde deserializer and the `sereal` command's tag walker read bodies
/// through it.
///
/// `B` is the body: a `&[u8]`, or anything that dereferences to one. Its
/// first byte has body offset `shift` (1 from protocol 2 on, the header's
/// length in protocol 1), which is what back-reference offsets count in.
/// Errors are placed at buffer positions plus `base` (see
/// [`placed_at`](Cursor::placed_at)); every error has a position.
///
/// ```
/// use sereal::protocol::Cursor;
/// use sereal::ErrorKind;
/// // ARRAY of 2: the small integers 1 and 300 as varints
/// let body = [0x2b, 0x02, 0x01, 0xac, 0x02];
/// let mut c = Cursor::new(&body[..], 1);
/// assert_eq!(c.byte().unwrap(), 0x2b);
/// assert_eq!(c.count(0, "array", 1).unwrap(), 2);
/// assert_eq!((c.varint().unwrap(), c.varint().unwrap()), (1, 300));
/// let e = c.byte().unwrap_err();
/// assert_eq!((e.kind(), e.offset()), (&ErrorKind::Truncated, Some(5)));
/// // an offset must name an earlier item: body offset 1 is position 0
/// assert_eq!(c.target(1, 3, "COPY").unwrap(), 0);
/// assert!(c.target(4, 3, "COPY").is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Cursor<B> {
    buf: B,
    pos: usize,
    shift: usize,
    base: usize,
    in_body: bool,
    depth: usize,
    max_depth: usize,
    // bytes the walk may still count, and its limit (`usize::MAX`: none)
    memory: usize,
    max_memory: usize,
}

impl<B: AsRef<[u8]>> Cursor<B> {
    /// A cursor at the start of `buf`, whose first byte has body offset
    /// `shift`; errors at buffer positions, no depth limit.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// # fn main() -> Result<(), sereal::Error> {
    /// // the body of a protocol 5 document: its first byte is body offset 1
    /// let doc = sereal::encode(&sereal::Value::from("abc"))?;
    /// let mut c = Cursor::new(&doc[6..], 1);
    /// assert_eq!(c.byte()?, 0x63); // SHORT_BINARY of 3
    /// assert_eq!(c.slice(3)?, b"abc");
    /// assert_eq!(c.left(), 0);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn new(buf: B, shift: usize) -> Self {
        Cursor {
            buf,
            pos: 0,
            shift,
            base: 0,
            in_body: false,
            depth: 0,
            max_depth: usize::MAX,
            memory: usize::MAX,
            max_memory: usize::MAX,
        }
    }

    /// Places errors at `base` plus their buffer position, counted in the
    /// decompressed body when `in_body` (as their message then says).
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// use sereal::Position;
    /// // a body that starts at byte 6 of its document
    /// let mut c = Cursor::new(&[0x01][..], 1).placed_at(6, false);
    /// c.byte().unwrap();
    /// let e = c.byte().unwrap_err();
    /// assert_eq!(e.position(), Some(Position::Document(7)));
    /// let mut inflated = Cursor::new(&[][..], 1).placed_at(0, true);
    /// assert_eq!(inflated.byte().unwrap_err().position(), Some(Position::DecompressedBody(0)));
    /// ```
    #[inline]
    pub fn placed_at(self, base: usize, in_body: bool) -> Self {
        Cursor {
            base,
            in_body,
            ..self
        }
    }

    /// Limits the nesting depth [`enter`](Cursor::enter) allows (0: no
    /// limit, as `max_recursion_depth` has it).
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// use sereal::ErrorKind;
    /// let mut c = Cursor::new(&[0u8][..], 1).max_depth(2);
    /// c.enter().unwrap();
    /// c.enter().unwrap();
    /// assert_eq!(c.enter().unwrap_err().kind(), &ErrorKind::DepthExceeded(2));
    /// ```
    #[inline]
    pub fn max_depth(self, max: usize) -> Self {
        Cursor {
            max_depth: super::depth_limit(max),
            ..self
        }
    }

    /// The whole buffer.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let body = vec![0x01, 0x02];
    /// let c = Cursor::new(body, 1); // the cursor may own its buffer
    /// assert_eq!(c.buf(), &vec![0x01, 0x02]);
    /// ```
    #[inline]
    pub fn buf(&self) -> &B {
        &self.buf
    }

    /// The bytes of the buffer.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let c = Cursor::new(std::borrow::Cow::from(vec![0x01, 0x02]), 1);
    /// assert_eq!(c.bytes(), [0x01, 0x02]);
    /// ```
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        self.buf.as_ref()
    }

    /// The position of the next read.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let mut c = Cursor::new(&[0xac, 0x02, 0x05][..], 1);
    /// assert_eq!(c.varint().unwrap(), 300);
    /// assert_eq!(c.pos(), 2); // a two-byte varint
    /// ```
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Moves to `pos`, at most the buffer's length (past it, every read
    /// finds the end).
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// // a string, read once, then again from where it starts (as a COPY of it is read)
    /// let body = [0x61, b'x'];
    /// let mut c = Cursor::new(&body[..], 1);
    /// assert_eq!((c.byte().unwrap(), c.byte().unwrap()), (0x61, b'x'));
    /// c.set_pos(0);
    /// assert_eq!(c.byte().unwrap(), 0x61);
    /// c.set_pos(9); // past the end: every read finds the end
    /// assert!(c.byte().unwrap_err().is_eof());
    /// ```
    #[inline]
    pub fn set_pos(&mut self, pos: usize) {
        self.pos = pos;
    }

    /// The bytes left after the position.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let mut c = Cursor::new(&[1, 2, 3][..], 1);
    /// c.byte().unwrap();
    /// assert_eq!(c.left(), 2);
    /// ```
    #[inline]
    pub fn left(&self) -> usize {
        self.bytes().len().saturating_sub(self.pos)
    }

    /// The body offset of the buffer's first byte.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// # fn main() -> Result<(), sereal::Error> {
    /// // protocol 1 counts offsets from the document's start: a 6-byte header
    /// let doc = sereal::encode_with(&sereal::Value::from(1), &sereal::EncoderOptions::new().protocol_version(1))?;
    /// let c = Cursor::new(&doc[6..], 6);
    /// assert_eq!(c.shift(), 6);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn shift(&self) -> usize {
        self.shift
    }

    /// The body offset of buffer position `pos`.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let c = Cursor::new(&[0x42, 0x01, 0x02][..], 1);
    /// assert_eq!(c.offset_of(1), 2); // what a COPY of the second byte would name
    /// ```
    #[inline]
    pub fn offset_of(&self, pos: usize) -> usize {
        pos + self.shift
    }

    /// The current nesting depth.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let mut c = Cursor::new(&[0u8][..], 1);
    /// c.enter().unwrap();
    /// assert_eq!(c.depth(), 1);
    /// c.leave();
    /// assert_eq!(c.depth(), 0);
    /// ```
    #[inline]
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// An error of `kind` at buffer position `at`.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// use sereal::ErrorKind;
    /// let c = Cursor::new(&[0x3f][..], 1).placed_at(6, false);
    /// let e = c.error_at(ErrorKind::UnexpectedTag(0x3f, "in a hash key"), 0);
    /// assert_eq!(e.offset(), Some(6));
    /// ```
    #[cold]
    pub fn error_at(&self, kind: ErrorKind, at: usize) -> Error {
        Error::new(kind).or_at(self.base + at, self.in_body)
    }

    /// `e`, placed at buffer position `at` if it has no position yet (an
    /// error a callback raised).
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// use sereal::{Error, ErrorKind};
    /// let c = Cursor::new(&[0u8; 4][..], 1).placed_at(6, false);
    /// // an error without a position (a serde visitor's) gets the item's
    /// let e = c.place(Error::new(ErrorKind::Message("expected a u8".into())), 2);
    /// assert_eq!(e.offset(), Some(8));
    /// // one with a position keeps it
    /// assert_eq!(c.place(Error::at(ErrorKind::TrailingData, 3), 2).offset(), Some(3));
    /// ```
    #[inline]
    pub fn place(&self, e: Error, at: usize) -> Error {
        e.or_at(self.base + at, self.in_body)
    }

    /// An error of `kind` at the position.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// use sereal::ErrorKind;
    /// let mut c = Cursor::new(&[0x01, 0x02][..], 1);
    /// c.byte().unwrap();
    /// let e = c.error(ErrorKind::Invalid("not expected here".into()));
    /// assert_eq!(e.offset(), Some(1));
    /// ```
    #[cold]
    pub fn error(&self, kind: ErrorKind) -> Error {
        self.error_at(kind, self.pos)
    }

    /// The next byte.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// use sereal::ErrorKind;
    /// let mut c = Cursor::new(&[0x25][..], 1);
    /// assert_eq!(c.byte().unwrap(), 0x25); // UNDEF
    /// assert_eq!(c.byte().unwrap_err().kind(), &ErrorKind::Truncated);
    /// ```
    #[inline]
    pub fn byte(&mut self) -> Result<u8> {
        match self.bytes().get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.error(ErrorKind::Truncated)),
        }
    }

    /// The next varint: `Truncated` when the buffer ends inside it,
    /// `BadVarint` when it is longer than ten bytes or overflows 64 bits.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// use sereal::ErrorKind;
    /// assert_eq!(Cursor::new(&[0xac, 0x02][..], 1).varint().unwrap(), 300);
    /// assert_eq!(Cursor::new(&[0xac][..], 1).varint().unwrap_err().kind(), &ErrorKind::Truncated);
    /// assert_eq!(Cursor::new(&[0xff; 11][..], 1).varint().unwrap_err().kind(), &ErrorKind::BadVarint);
    /// ```
    #[inline]
    pub fn varint(&mut self) -> Result<u64> {
        // One byte (small counts, lengths, offsets and integers) in place.
        if let Some(&b @ 0..=0x7f) = self.bytes().get(self.pos) {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        self.long_varint()
    }

    // Out of line, with the general varint read inlined into it.
    #[inline(never)]
    fn long_varint(&mut self) -> Result<u64> {
        match varint_at(self.bytes(), self.pos) {
            Ok((n, len)) => {
                self.pos += len;
                Ok(n)
            }
            Err(kind) => Err(self.error(kind)),
        }
    }

    /// Whether the buffer ends inside the varint at the position (as
    /// opposed to holding a malformed one), for a reader that tells the two
    /// apart.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// assert!(Cursor::new(&[0x80, 0x80][..], 1).varint_cut()); // more bytes may finish it
    /// assert!(!Cursor::new(&[0xff; 11][..], 1).varint_cut()); // malformed, whatever follows
    /// ```
    pub fn varint_cut(&self) -> bool {
        self.left() < MAX_VARINT_LEN
    }

    /// The range of the next `n` bytes, which must be there.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let body = [0x63, b'a', b'b', b'c'];
    /// let mut c = Cursor::new(&body[..], 1);
    /// c.byte().unwrap();
    /// let r = c.take(3).unwrap();
    /// assert_eq!((r.clone(), &body[r]), (1..4, &b"abc"[..]));
    /// assert!(c.take(1).is_err());
    /// ```
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<Range<usize>> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes().len())
            .ok_or_else(|| self.error(ErrorKind::Truncated))?;
        let r = self.pos..end;
        self.pos = end;
        Ok(r)
    }

    /// The next `N` bytes.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// // DOUBLE: eight little-endian bytes
    /// let body = [0x23, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f];
    /// let mut c = Cursor::new(&body[..], 1);
    /// c.byte().unwrap();
    /// assert_eq!(f64::from_le_bytes(c.fixed().unwrap()), 1.5);
    /// ```
    #[inline]
    pub fn fixed<const N: usize>(&mut self) -> Result<[u8; N]> {
        let r = self.take(N)?;
        Ok(self.bytes()[r].try_into().expect("N bytes"))
    }

    /// A count read as a varint, checked against `limit` (0: none; over it
    /// is `LimitExceeded`, naming `what`) and against the bytes left: each
    /// of the items counted takes at least `min_bytes`, and more of them
    /// than fit is `Truncated`. Both errors are at the count.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// use sereal::ErrorKind;
    /// // a count of 3 items of at least 2 bytes each, and the 6 bytes they need
    /// let body = [0x03, 0, 0, 0, 0, 0, 0];
    /// assert_eq!(Cursor::new(&body[..], 1).count(0, "hash", 2).unwrap(), 3);
    /// let e = Cursor::new(&body[..], 1).count(2, "hash", 2).unwrap_err();
    /// assert_eq!(e.to_string(), "limit exceeded: hash of 3 entries (limit 2) at offset 0");
    /// let e = Cursor::new(&body[..6], 1).count(0, "hash", 2).unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::Truncated); // they cannot fit
    /// ```
    #[inline]
    pub fn count(&mut self, limit: usize, what: &str, min_bytes: usize) -> Result<usize> {
        let at = self.pos;
        let n = self.varint()?;
        if let Some(kind) = over_limit(n, limit, what) {
            return Err(self.error_at(kind, at));
        }
        match usize::try_from(n) {
            Ok(n) if n.saturating_mul(min_bytes) <= self.left() => Ok(n),
            _ => Err(self.error_at(ErrorKind::Truncated, at)),
        }
    }

    /// The buffer position the body offset `off` names, read for an item at
    /// buffer position `at`: it must be before `at`. Otherwise a `BadOffset`
    /// naming `what`, at `at`.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// use sereal::ErrorKind;
    /// let c = Cursor::new(&[0x01, 0x02, 0x03, 0x04][..], 1);
    /// assert_eq!(c.target(2, 2, "COPY").unwrap(), 1);
    /// // an offset must name an item before the one read at position 2
    /// let e = c.target(3, 2, "COPY").unwrap_err();
    /// assert_eq!((e.kind(), e.offset()), (&ErrorKind::BadOffset(3, "COPY"), Some(2)));
    /// ```
    #[inline]
    pub fn target(&self, off: u64, at: usize, what: &'static str) -> Result<usize> {
        self.position_of(off)
            .filter(|&p| p < at)
            .ok_or_else(|| self.error_at(ErrorKind::BadOffset(off, what), at))
    }

    /// The buffer position of body offset `off`, if it is in the buffer or
    /// at its end.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let c = Cursor::new(&[0x01, 0x02, 0x03, 0x04][..], 6); // protocol 1
    /// assert_eq!(c.position_of(6), Some(0));
    /// assert_eq!(c.position_of(10), Some(4)); // the end
    /// assert_eq!(c.position_of(5), None);
    /// ```
    #[inline]
    pub fn position_of(&self, off: u64) -> Option<usize> {
        usize::try_from(off)
            .ok()
            .and_then(|o| o.checked_sub(self.shift))
            .filter(|&p| p <= self.bytes().len())
    }

    /// One nesting level deeper, or `DepthExceeded` past the limit (the
    /// depth unchanged).
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let mut c = Cursor::new(&[0u8][..], 1).max_depth(1);
    /// c.enter().unwrap();
    /// assert!(c.enter().is_err());
    /// assert_eq!(c.depth(), 1); // a refused level is not entered
    /// ```
    #[inline]
    pub fn enter(&mut self) -> Result<()> {
        if self.depth >= self.max_depth {
            return Err(self.error(ErrorKind::DepthExceeded(self.max_depth)));
        }
        self.depth += 1;
        Ok(())
    }

    /// Back to nesting depth `depth` (a reader that leaves several levels
    /// at once).
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let mut c = Cursor::new(&[0u8][..], 1);
    /// let outer = c.depth();
    /// for _ in 0..3 {
    ///     c.enter().unwrap();
    /// }
    /// c.set_depth(outer); // done with three levels at once
    /// assert_eq!(c.depth(), 0);
    /// ```
    #[inline]
    pub fn set_depth(&mut self, depth: usize) {
        self.depth = depth;
    }

    /// One nesting level back (none at depth 0).
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let mut c = Cursor::new(&[0u8][..], 1).max_depth(1);
    /// c.enter().unwrap();
    /// c.leave();
    /// c.enter().unwrap(); // room again
    /// c.leave();
    /// c.leave(); // at 0: stays there
    /// assert_eq!(c.depth(), 0);
    /// ```
    #[inline]
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

impl<'a> Cursor<&'a [u8]> {
    /// The next `n` bytes, borrowed for as long as the buffer is.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let body = [0x62, b'h', b'i'];
    /// let s: &[u8] = {
    ///     let mut c = Cursor::new(&body[..], 1);
    ///     c.byte().unwrap();
    ///     c.slice(2).unwrap()
    /// };
    /// assert_eq!(s, b"hi"); // outlives the cursor: borrowed from `body`
    /// ```
    #[inline]
    pub fn slice(&mut self, n: usize) -> Result<&'a [u8]> {
        let buf: &'a [u8] = self.buf;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= buf.len())
            .ok_or_else(|| self.error(ErrorKind::Truncated))?;
        let s = &buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
}

/// The error for a count of `n` `what`s over `limit` (0: no limit), if it
/// is over.
#[inline]
pub(crate) fn over_limit(n: u64, limit: usize, what: &str) -> Option<ErrorKind> {
    (limit != 0 && n > limit as u64).then(|| too_many(n, limit, what))
}

#[cold]
fn too_many(n: u64, limit: usize, what: &str) -> ErrorKind {
    ErrorKind::LimitExceeded(format!("{what} of {n} entries (limit {limit})"))
}

#[cfg(test)]
mod tests;
