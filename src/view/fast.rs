//! The fast walk: an item's end found by reading the buffer directly,
//! for items that are well-formed and within every limit; anything else is
//! left to the checked walk, which names the error.

use super::walk::{float_len, Body, Frame};
use crate::protocol::{self, tag, TRACK_FLAG};

impl Body<'_> {
    /// [`walk`](Self::walk) over well-formed items within every limit,
    /// reading the buffer directly: `None` at anything else (a cut, a
    /// malformed varint, a limit, a tag out of place), for the checked
    /// walk to name. It accepts only what the checked walk accepts.
    pub(super) fn fast_walk(&self, pos: usize, stack: &mut Vec<Frame>) -> Option<usize> {
        let o = self.opts;
        let buf = self.buf;
        let max_depth = protocol::depth_limit(o.max_recursion_depth);
        let limit = |max: usize| if max == 0 { u64::MAX } else { max as u64 };
        let (max_array, max_hash) = (
            limit(o.max_num_array_entries),
            limit(o.max_num_hash_entries),
        );
        let max_string = limit(o.max_string_length);
        let mut depth = 0usize;
        let mut p = pos;
        // The open frame, in registers; those around it on the stack.
        let mut top = Frame {
            owed: 1,
            level: false,
            refn: false,
        };
        stack.clear();
        loop {
            if top.owed == 0 {
                depth -= usize::from(top.level);
                top = match stack.pop() {
                    Some(f) => f,
                    None => return Some(p),
                };
                continue;
            }
            top.owed -= 1;
            let at = p;
            let b = *buf.get(p)?;
            p += 1;
            let t = b & !TRACK_FLAG;
            if t == tag::PAD {
                top.owed += 1;
                continue;
            }
            let referent = top.refn;
            if referent {
                top.refn = false;
                if !protocol::immortal_referent(b, o.use_undef) {
                    if depth >= max_depth {
                        return None;
                    }
                    depth += 1;
                    top.level = true;
                }
            }
            let mut open = |owed: u64, level: bool, refn: bool| {
                stack.push(top);
                top = Frame { owed, level, refn };
            };
            match t {
                tag::POS_0..=tag::NEG_1
                | tag::UNDEF
                | tag::CANONICAL_UNDEF
                | tag::TRUE
                | tag::FALSE
                | tag::YES
                | tag::NO => {}
                tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => {
                    p += usize::from(t & 31);
                    if p > buf.len() {
                        return None;
                    }
                }
                tag::VARINT | tag::ZIGZAG => p = skip_varint(buf, p)?,
                tag::REFP | tag::ALIAS | tag::COPY => {
                    let (off, len) = protocol::read_varint(buf.get(p..)?)?;
                    p += len;
                    self.fast_target(off, at)?;
                }
                tag::BINARY | tag::STR_UTF8 => {
                    let (n, len) = protocol::read_varint(buf.get(p..)?)?;
                    if n > max_string {
                        return None;
                    }
                    p = (p + len).checked_add(usize::try_from(n).ok()?)?;
                    if p > buf.len() {
                        return None;
                    }
                }
                tag::FLOAT | tag::DOUBLE | tag::LONG_DOUBLE | tag::FLOAT_128 => {
                    p += float_len(t);
                    if p > buf.len() {
                        return None;
                    }
                }
                tag::ARRAYREF_0..=tag::HASHREF_15 => {
                    let n = u64::from(t & 15);
                    let hash = t >= tag::HASHREF_0;
                    if depth >= max_depth || n > if hash { max_hash } else { max_array } {
                        return None;
                    }
                    depth += 1;
                    open(if hash { 2 * n } else { n }, true, false);
                }
                tag::ARRAY | tag::HASH => {
                    // a REFN's referent is at the REFN's level
                    if !referent {
                        if depth >= max_depth {
                            return None;
                        }
                        depth += 1;
                    }
                    let hash = t == tag::HASH;
                    let (n, len) = protocol::read_varint(buf.get(p..)?)?;
                    p += len;
                    let per = if hash { 2 } else { 1 };
                    if n > if hash { max_hash } else { max_array }
                        || n.checked_mul(per)? > (buf.len() - p) as u64
                    {
                        return None;
                    }
                    open(n * per, !referent, false);
                }
                tag::REFN => open(1, false, true),
                tag::WEAKEN => open(1, false, false),
                tag::REGEXP => open(2, false, false),
                tag::OBJECT | tag::OBJECT_FREEZE if !o.refuse_objects => open(2, false, false),
                tag::OBJECTV | tag::OBJECTV_FREEZE if !o.refuse_objects => {
                    let (off, len) = protocol::read_varint(buf.get(p..)?)?;
                    p += len;
                    self.fast_target(off, at)?;
                    open(1, false, false);
                }
                _ => return None,
            }
        }
    }

    /// The buffer position body offset `off` names, if it is before `at`.
    #[inline]
    fn fast_target(&self, off: u64, at: usize) -> Option<usize> {
        usize::try_from(off)
            .ok()?
            .checked_sub(self.shift)
            .filter(|&x| x < at)
    }
}

/// Where the varint at `p` ends, if it is well-formed (at most ten bytes,
/// within 64 bits).
#[inline]
fn skip_varint(buf: &[u8], p: usize) -> Option<usize> {
    match buf.get(p)? {
        0..=0x7f => Some(p + 1),
        _ => protocol::read_varint(buf.get(p..)?).map(|(_, n)| p + n),
    }
}
