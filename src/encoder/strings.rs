//! String values and hash keys: written whole, or as a `COPY` or `ALIAS`
//! of their first writing.

use super::seen::{key_slot, Addr};
use super::writer::Writer;
use crate::protocol::{self, tag};
use crate::value::{Key, Str};
use hashbrown::hash_map::Entry;

impl Writer<'_> {
    /// Writes a string value, or a hash key written as a string (`key`:
    /// Perl's `cmp` orders), deduplicated as the options say.
    #[inline]
    pub(super) fn write_string(&mut self, s: &Str, utf8: bool, key: bool) {
        let bytes = s.as_bytes();
        if self.dedupe && bytes.len() > 3 {
            let here = self.offset();
            if let Some(off) = self.seen.dedupe.find_or_insert(bytes, utf8, here) {
                if self.opts.aliased_dedupe_strings {
                    self.set_track_flag(off);
                    self.tag_varint(tag::ALIAS, off);
                    return;
                }
                if key || self.may_copy(off) {
                    self.tag_varint(tag::COPY, off);
                    return;
                }
            }
        }
        self.write_str(s, utf8);
    }

    /// Whether a `COPY` of the string at `off` reads back as written: the
    /// string is no tracked node's body, or every handle the node had when
    /// it was written has been met since (so no reference to it follows,
    /// unless a FREEZE callback returns more handles on it than it holds).
    fn may_copy(&self, off: u64) -> bool {
        self.seen
            .copy_targets
            .get(&(off as usize))
            .is_none_or(|&left| left == 0)
    }

    #[inline]
    pub(super) fn write_pv(&mut self, bytes: &[u8], utf8: bool) {
        protocol::write_pv(&mut self.out, bytes, utf8);
    }

    /// Writes a hash key, or `COPY` of its first writing. Perl remembers
    /// every key; a key no other hash holds cannot repeat and is not
    /// remembered, until a callback has run: it may make new hashes with the
    /// key (a FREEZE result, a key added to a hash not written yet). Before
    /// the first callback runs, the keys written unremembered are found in
    /// the output (`note_written_keys`).
    // Always inline: out of line, in this module of its own, the call cost
    // records 1.3% more instructions.
    #[inline(always)]
    pub(super) fn write_key(&mut self, k: &Key) {
        // A key in the cache was remembered: no need to ask whether it may
        // repeat.
        let addr = k.addr();
        let slot = key_slot(addr);
        let (cached, off) = self.seen.key_cache.get(slot);
        if cached == addr {
            self.tag_varint(tag::COPY, off);
            return;
        }
        if !self.opts.no_shared_hashkeys && (self.retained.on || k.may_repeat()) {
            let here = self.offset();
            match self.seen.keys.entry(Addr::key(k)) {
                Entry::Occupied(e) => {
                    let off = *e.get();
                    self.seen.key_cache.set(slot, (addr, off));
                    self.tag_varint(tag::COPY, off);
                    return;
                }
                Entry::Vacant(e) => {
                    e.insert(here);
                    self.retained.key(k);
                }
            }
        }
        self.write_str(k.as_str_value(), k.is_utf8());
    }

    /// Writes a string as it is, a short one with a fixed-size copy of its
    /// inline buffer.
    #[inline(always)]
    pub(super) fn write_str(&mut self, s: &Str, utf8: bool) {
        match s.inline() {
            Some((data, n)) => protocol::write_padded_pv(&mut self.out, data, n, utf8),
            None => self.write_pv(s.as_bytes(), utf8),
        }
    }

    /// Remembers every hash key written so far as a string, found by
    /// scanning the body written so far: a key no other hash held was not
    /// remembered when written, and a callback may now repeat it. Keys are
    /// remembered by content, as Perl's shared keys are; the first writing
    /// of each wins.
    pub(super) fn note_written_keys(&mut self) {
        if self.opts.no_shared_hashkeys {
            return;
        }
        let body = &self.out[self.body_start..];
        for p in crate::stream::key_positions(body) {
            let Some(&t) = body.get(p) else { continue };
            let (len, start) = match t {
                tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => (usize::from(t & 31), p + 1),
                _ => match protocol::read_varint(&body[p + 1..]) {
                    Some((n, used)) => (n as usize, p + 1 + used),
                    None => continue,
                },
            };
            let Some(bytes) = body.get(start..start + len) else {
                continue;
            };
            let off = (self.body_start + p - self.base) as u64;
            self.retained
                .note_key(self.seen, Key::new(bytes, t == tag::STR_UTF8), off);
        }
    }
}
