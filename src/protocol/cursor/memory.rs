//! The cursor's count of the memory a walk may take (`max_memory`).

use super::Cursor;
use crate::error::{Error, ErrorKind, Result};

impl<B: AsRef<[u8]>> Cursor<B> {
    /// Limits the memory [`charge`](Cursor::charge) allows to `max` bytes
    /// (0: no limit, as `max_memory` has it), of which `held` are already
    /// taken (a decompressed body, a buffered document). Past the limit
    /// already, every charge fails.
    #[inline]
    pub fn max_memory(self, max: usize, held: usize) -> Self {
        let max = if max == 0 { usize::MAX } else { max };
        Cursor {
            memory: max.saturating_sub(held),
            max_memory: max,
            ..self
        }
    }

    /// Counts `bytes` more of memory against the limit
    /// [`max_memory`](Cursor::max_memory) set, for `what` at buffer
    /// position `at`: over it is a `LimitExceeded` error at `at`, naming
    /// `what` and the `max_memory` option. Nothing is counted then.
    ///
    /// ```
    /// use sereal::protocol::Cursor;
    /// let mut c = Cursor::new(&[0u8][..], 1).max_memory(100, 40);
    /// c.charge(60, "an array", 0).unwrap();
    /// let e = c.charge(1, "a string", 0).unwrap_err();
    /// assert!(e.to_string().contains("max_memory (100 bytes)"));
    /// ```
    #[inline]
    pub fn charge(&mut self, bytes: usize, what: &str, at: usize) -> Result<()> {
        if self.take_memory(bytes) {
            return Ok(());
        }
        Err(self.over_memory(bytes, what, at))
    }

    /// Counts `bytes` if they are left.
    #[inline(always)]
    fn take_memory(&mut self, bytes: usize) -> bool {
        match self.memory.checked_sub(bytes) {
            Some(left) => {
                self.memory = left;
                true
            }
            None => false,
        }
    }

    /// As [`charge`](Cursor::charge), for the item of tag `t`, which the
    /// error names.
    #[inline]
    pub(crate) fn charge_tag(&mut self, bytes: usize, t: u8, at: usize) -> Result<()> {
        if self.take_memory(bytes) {
            return Ok(());
        }
        Err(self.over_memory_tag(bytes, t, at))
    }

    #[cold]
    #[inline(never)]
    fn over_memory_tag(&self, bytes: usize, t: u8, at: usize) -> Error {
        self.over_memory(bytes, &crate::protocol::tag_name(t), at)
    }

    #[cold]
    fn over_memory(&self, bytes: usize, what: &str, at: usize) -> Error {
        self.error_at(
            memory_exceeded(what, bytes, self.memory, self.max_memory),
            at,
        )
    }
}

/// The error of a decode with `left` bytes left of `max`, the limit of
/// `max_memory`, that needs `bytes` more for `what`.
#[cold]
pub(crate) fn memory_exceeded(what: &str, bytes: usize, left: usize, max: usize) -> ErrorKind {
    ErrorKind::LimitExceeded(format!(
        "{what} needs {bytes} bytes, more than the {left} left of max_memory ({max} bytes): raise max_memory for larger documents"
    ))
}
