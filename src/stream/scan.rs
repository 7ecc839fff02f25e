//! The scanner: where a document of a stream ends, found a byte at a time
//! without decoding it.

use super::*;

mod tags;

/// The smallest document: magic string (4 bytes), version and type (1),
/// header suffix length (1) and a body of at least one byte.
const MIN_DOCUMENT: usize = 7;

/// What the next item of a frame may be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// Any value (an array element, a hash value, the body).
    Value,
    /// The referent of a `REFN`: it takes a nesting level whatever its tag
    /// (but an immortal right after the `REFN`).
    Node,
    /// A hash key: a string or a `COPY`.
    Key,
    /// An `OBJECT` class name: a string or a `COPY`.
    Class,
    /// A regexp pattern: a string.
    Pattern,
    /// Regexp flags: a string.
    Flags,
    /// The `REFN` of an `OBJECT_FREEZE`.
    FrozenRefn,
    /// The `ARRAY` of an `OBJECT_FREEZE`.
    FrozenArray,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Array elements, the body.
    Items,
    /// What the `WEAKEN` at `at` applies to.
    Weaken { at: usize },
    /// Hash entries: keys and values in turn.
    Entries,
    /// Class, then the value the object is made of: `referent` if the
    /// object is a `REFN`'s referent (whose level it took), `chain` if it
    /// takes a level when its class is read (a prefix directly inside
    /// another; see `Scanner::value`).
    Object {
        referent: bool,
        chain: bool,
        at: usize,
    },
    /// Class, `REFN`, then `ARRAY` and its values.
    Freeze,
    /// Pattern, then flags.
    Regexp,
    /// The referent of a `REFN`.
    Ref,
}

/// An open container: the items it still owes, and the nesting levels it
/// holds until they are read.
#[derive(Clone, Copy)]
struct Frame {
    kind: Kind,
    /// Items not yet started; each takes at least one byte.
    slots: u128,
    levels: u8,
}

impl Frame {
    fn ctx(&self) -> Ctx {
        match (self.kind, self.slots) {
            (Kind::Items | Kind::Weaken { .. }, _) => Ctx::Value,
            (Kind::Entries, s) if s % 2 == 0 => Ctx::Key,
            (Kind::Entries, _) => Ctx::Value,
            (Kind::Object { .. }, 2) => Ctx::Class,
            (Kind::Object { .. }, _) => Ctx::Value,
            (Kind::Freeze, 3) => Ctx::Class,
            (Kind::Freeze, 2) => Ctx::FrozenRefn,
            (Kind::Freeze, _) => Ctx::FrozenArray,
            (Kind::Regexp, 2) => Ctx::Pattern,
            (Kind::Regexp, _) => Ctx::Flags,
            (Kind::Ref, _) => Ctx::Node,
        }
    }
}

/// What a varint being read is.
#[derive(Clone, Copy)]
enum Then {
    /// The whole item (`VARINT`, `REFP`, `COPY`, an `OBJECTV` class offset...).
    Item,
    /// A string length.
    Str,
    /// An `ARRAY` count.
    Array,
    /// A `HASH` count.
    Hash,
    /// The header suffix length.
    Suffix,
    /// The compressed length of a frame.
    FrameLen,
    /// The uncompressed length of a zlib frame (its compressed length follows).
    ZlibLen,
}

/// What bytes being skipped are.
#[derive(Clone, Copy)]
enum Skipped {
    /// The rest of an item (string bytes, a float).
    Item,
    /// The header suffix: the header ends after it.
    Suffix,
    /// A compressed frame: the document ends after it.
    Frame,
}

#[derive(Clone, Copy)]
enum Step {
    /// The first five bytes: magic string, version and type.
    Magic,
    /// A varint starting at `at`.
    Varint { at: usize, then: Then },
    /// Bytes to pass over.
    Skip { left: u64, then: Skipped },
    /// The next tag of the body; `tracked`: a tracked `PAD` came before it.
    Tag { tracked: bool },
    /// A protocol 1 Snappy body, which runs to the end of the input.
    ToEnd,
}

/// What a scan found.
pub(super) enum Scan {
    /// The document goes on past the bytes given.
    More,
    /// The document is the first `n` bytes.
    End(usize),
    /// The first `len` bytes cannot start a valid document. The decoder's
    /// error on them is the answer; `fallback` is for when the decoder
    /// only says they are truncated (it checks counts against the bytes
    /// left, and a prefix holds fewer).
    Invalid { len: usize, fallback: Option<Error> },
}

/// The resumable scanner of one document. Positions count from the
/// document's first byte.
pub(super) struct Scanner {
    step: Step,
    /// Bytes scanned.
    pub(super) pos: usize,
    /// Where the referent of the last `REFN` starts.
    referent_at: usize,
    stack: Vec<Frame>,
    /// Nesting depth, as the decoder counts it.
    depth: usize,
    /// Levels taken by the item being read, until it completes or opens a frame.
    levels: u8,
    /// Items owed by the open frames, each at least one byte.
    owed: u128,
    /// Where to note the positions of hash keys written as strings.
    keys: Option<Vec<usize>>,
    /// The memory the decoder will count for what was scanned (a part of
    /// it: containers and long strings), beside the document's own bytes.
    charged: u128,
}

/// The positions in `body` (the start of a document body, uncompressed,
/// perhaps cut short) of the hash keys written as strings rather than as
/// `COPY`s: what an encoder that did not note its keys as it wrote them
/// needs to write later ones as `COPY`s.
pub(crate) fn key_positions(body: &[u8]) -> Vec<usize> {
    // A raw protocol 5 header with no suffix; body syntax is the same in
    // every protocol.
    let header_len = MAGIC_V3.len() + 2;
    let mut doc = Vec::with_capacity(header_len + body.len());
    doc.extend_from_slice(MAGIC_V3);
    doc.extend_from_slice(&[5, 0]);
    doc.extend_from_slice(body);
    let mut scanner = Scanner {
        keys: Some(Vec::new()),
        ..Scanner::default()
    };
    let unlimited = DecoderOptions::trusted().max_recursion_depth(0);
    scanner.run(&doc, &unlimited);
    let mut keys = scanner.keys.unwrap_or_default();
    for k in &mut keys {
        *k -= header_len;
    }
    keys
}

/// Whether `have` (at most five bytes) can start a magic string, the
/// UTF-8-mangled one included (the decoder names that one).
fn magic_prefix(have: &[u8]) -> bool {
    let four = &have[..have.len().min(4)];
    MAGIC_V1.starts_with(four) || MAGIC_V3.starts_with(four) || MAGIC_V3_UTF8.starts_with(have)
}

fn refused(o: &DecoderOptions, c: Compression) -> bool {
    match c {
        Compression::None => false,
        Compression::Snappy => o.refuse_snappy,
        Compression::Zlib => o.refuse_zlib,
        Compression::Zstd => o.refuse_zstd,
    }
}

pub(super) fn saturate(n: u128) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner {
            step: Step::Magic,
            pos: 0,
            stack: Vec::new(),
            depth: 0,
            referent_at: 0,
            levels: 0,
            owed: 0,
            keys: None,
            charged: 0,
        }
    }
}

impl std::fmt::Debug for Scanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field("scanned", &self.pos)
            .field("open_frames", &self.stack.len())
            .field("needed", &self.needed())
            .finish()
    }
}

impl Scanner {
    /// Forgets the document: ready for the next one (the stack keeps its memory).
    pub(super) fn reset(&mut self) {
        self.step = Step::Magic;
        self.pos = 0;
        self.stack.clear();
        self.depth = 0;
        self.levels = 0;
        self.owed = 0;
        self.charged = 0;
    }

    /// At least how many bytes past the `pos` scanned the document needs.
    pub(super) fn needed(&self) -> usize {
        let owed = self.owed;
        saturate(match self.step {
            Step::Magic => (MIN_DOCUMENT - self.pos) as u128,
            // the suffix length's last byte and a body byte; or the rest of
            // a zlib length and the compressed length
            Step::Varint {
                then: Then::Suffix | Then::ZlibLen,
                ..
            } => 2,
            Step::Varint {
                then: Then::FrameLen,
                ..
            } => 1,
            Step::Varint { .. } => 1 + owed,
            Step::Skip {
                left,
                then: Skipped::Suffix,
            } => u128::from(left) + 1,
            Step::Skip {
                left,
                then: Skipped::Frame,
            } => u128::from(left),
            Step::Skip {
                left,
                then: Skipped::Item,
            } => u128::from(left) + owed,
            Step::Tag { .. } => owed,
            Step::ToEnd => 0,
        })
    }

    /// Scans on from `pos` over `doc`, the document's bytes so far.
    pub(super) fn run(&mut self, doc: &[u8], o: &DecoderOptions) -> Scan {
        loop {
            let outcome = match self.step {
                Step::Magic => self.magic(doc),
                Step::Varint { at, then } => match protocol::read_varint(&doc[at..]) {
                    Some((n, len)) => {
                        self.pos = at + len;
                        self.varint_done(n, at, then, o)
                    }
                    // only continuation bytes so far
                    None if doc.len() - at < protocol::MAX_VARINT_LEN => {
                        self.pos = doc.len();
                        Err(Scan::More)
                    }
                    None => Err(Scan::Invalid {
                        len: at + protocol::MAX_VARINT_LEN,
                        fallback: Some(Error::at(ErrorKind::BadVarint, at)),
                    }),
                },
                Step::Skip { left, then } => {
                    let avail = (doc.len() - self.pos) as u64;
                    if avail < left {
                        self.pos = doc.len();
                        self.step = Step::Skip {
                            left: left - avail,
                            then,
                        };
                        Err(Scan::More)
                    } else {
                        // left <= avail, so it fits in usize
                        self.pos += left as usize;
                        match then {
                            Skipped::Item => self.complete(o),
                            Skipped::Suffix => self.header(doc, o),
                            Skipped::Frame => Err(Scan::End(self.pos)),
                        }
                    }
                }
                Step::Tag { tracked } => self.tags(doc, tracked, o),
                Step::ToEnd => {
                    self.pos = doc.len();
                    Err(Scan::More)
                }
            };
            match outcome {
                // More input will be buffered: not past the limits.
                Err(Scan::More) => return self.check_size(self.pos, o).err().unwrap_or(Scan::More),
                Err(scan) => return scan,
                Ok(()) => {}
            }
        }
    }

    /// Checks what the document is known to need, at least (its bytes, and
    /// the memory the decoder will count for what was scanned), against
    /// `max_document_size` and `max_memory`, now that what was read at
    /// `at` (a length, a count) said it.
    fn check_size(&self, at: usize, o: &DecoderOptions) -> Result<(), Scan> {
        let least = self.pos as u128 + self.needed() as u128;
        let max = o.max_document_size;
        if max != 0 && least > max as u128 {
            let m = format!("document of at least {least} bytes (limit {max})");
            return Err(self.invalid(ErrorKind::LimitExceeded(m), at));
        }
        let held = least + self.charged;
        if o.max_memory != 0 && held > o.max_memory as u128 {
            let what = format!("a document of at least {least} bytes, and what it decodes to,");
            let kind = memory_exceeded(&what, saturate(held), o.max_memory, o.max_memory);
            return Err(self.invalid(kind, at));
        }
        Ok(())
    }

    /// Counts `bytes` the decoder will hold for an item read at `at`.
    fn charge(&mut self, bytes: u128, at: usize, o: &DecoderOptions) -> Result<(), Scan> {
        self.charged += bytes;
        self.check_size(at, o)
    }

    fn magic(&mut self, doc: &[u8]) -> Result<(), Scan> {
        let have = &doc[..doc.len().min(5)];
        self.pos = have.len();
        if !magic_prefix(have) {
            return Err(Scan::Invalid {
                len: have.len(),
                fallback: None,
            });
        }
        if have.len() < 5 {
            return Err(Scan::More);
        }
        // The first five bytes decide the magic string, the version and the
        // type; the header parser, given only them, reports their errors or
        // (for good ones) the missing suffix length.
        match Header::parse(have) {
            Err(e) if *e.kind() != ErrorKind::Truncated => Err(Scan::Invalid {
                len: 5,
                fallback: None,
            }),
            _ => {
                self.step = Step::Varint {
                    at: 5,
                    then: Then::Suffix,
                };
                Ok(())
            }
        }
    }

    /// The header is complete: parse it, and go on to the body or the frame.
    fn header(&mut self, doc: &[u8], o: &DecoderOptions) -> Result<(), Scan> {
        let invalid = Scan::Invalid {
            len: self.pos,
            fallback: None,
        };
        let Ok(h) = Header::parse(&doc[..self.pos]) else {
            return Err(invalid);
        };
        if refused(o, h.compression) {
            return Err(invalid);
        }
        let at = self.pos;
        self.step = match h.compression {
            Compression::None => {
                self.push(Kind::Items, 1);
                Step::Tag { tracked: false }
            }
            Compression::Snappy if h.legacy_snappy => Step::ToEnd,
            Compression::Snappy | Compression::Zstd => Step::Varint {
                at,
                then: Then::FrameLen,
            },
            Compression::Zlib => Step::Varint {
                at,
                then: Then::ZlibLen,
            },
        };
        Ok(())
    }

    /// Opens a frame owing `slots` items, with the levels of the item that opens it.
    fn push(&mut self, kind: Kind, slots: u128) {
        self.stack.push(Frame {
            kind,
            slots,
            levels: self.levels,
        });
        self.levels = 0;
        self.owed += slots;
    }

    /// Takes `k` nesting levels for the item being read, as the decoder
    /// does after reading its tag.
    fn enter(&mut self, k: u8, o: &DecoderOptions) -> Result<(), Scan> {
        self.levels += k;
        self.depth += usize::from(k);
        self.check_depth(o)
    }

    fn check_depth(&self, o: &DecoderOptions) -> Result<(), Scan> {
        let max = protocol::depth_limit(o.max_recursion_depth);
        if self.depth > max {
            return Err(self.invalid(ErrorKind::DepthExceeded(max), self.pos));
        }
        Ok(())
    }

    fn invalid(&self, kind: ErrorKind, at: usize) -> Scan {
        Scan::Invalid {
            len: self.pos,
            fallback: Some(Error::at(kind, at)),
        }
    }

    /// The item being read is complete: close the frames it completes.
    fn complete(&mut self, o: &DecoderOptions) -> Result<(), Scan> {
        self.depth -= usize::from(self.levels);
        self.levels = 0;
        loop {
            let Some(top) = self.stack.last_mut() else {
                return Err(Scan::End(self.pos));
            };
            if top.slots == 0 {
                self.depth -= usize::from(top.levels);
                self.stack.pop();
                continue;
            }
            if let (Kind::Object { chain: true, .. }, 1) = (top.kind, top.slots) {
                // The class is read: the object's value is one level deeper.
                top.levels += 1;
                self.depth += 1;
                self.check_depth(o)?;
            }
            self.step = Step::Tag { tracked: false };
            return Ok(());
        }
    }

    fn varint(&mut self, then: Then) -> Result<(), Scan> {
        self.step = Step::Varint { at: self.pos, then };
        Ok(())
    }

    fn skip(&mut self, n: u64, o: &DecoderOptions) -> Result<(), Scan> {
        if n == 0 {
            return self.complete(o);
        }
        self.step = Step::Skip {
            left: n,
            then: Skipped::Item,
        };
        Ok(())
    }

    /// A varint `n` read at `at` is complete.
    fn varint_done(
        &mut self,
        n: u64,
        at: usize,
        then: Then,
        o: &DecoderOptions,
    ) -> Result<(), Scan> {
        let over = |limit: usize| limit != 0 && n > limit as u64;
        match then {
            Then::Item => self.complete(o),
            Then::Str if over(o.max_string_length) => Err(self.invalid(
                ErrorKind::LimitExceeded(format!(
                    "string of {n} bytes (limit {})",
                    o.max_string_length
                )),
                at,
            )),
            Then::Str => {
                self.skip(n, o)?;
                let long = n > memory::INLINE as u64;
                self.charge(if long { u128::from(n) } else { 0 }, at, o)
            }
            Then::Array | Then::Hash => {
                let (what, limit) = match then {
                    Then::Array => ("array", o.max_num_array_entries),
                    _ => ("hash", o.max_num_hash_entries),
                };
                if over(limit) {
                    return Err(self.invalid(
                        ErrorKind::LimitExceeded(format!("{what} of {n} entries (limit {limit})")),
                        at,
                    ));
                }
                let each = match then {
                    Then::Array => memory::ELEMENT,
                    _ => memory::ENTRY,
                };
                // Checked with the items it owes open: the count says the
                // document needs at least a byte for each, whether or not
                // they are buffered yet (so the error is the same however
                // the bytes are cut).
                let charge = u128::from(n) * each as u128 + memory::NODE as u128;
                match (n, then) {
                    (0, _) => {
                        self.charge(charge, at, o)?;
                        return self.complete(o);
                    }
                    (_, Then::Array) => self.push(Kind::Items, u128::from(n)),
                    _ => self.push(Kind::Entries, 2 * u128::from(n)),
                }
                self.step = Step::Tag { tracked: false };
                self.charge(charge, at, o)
            }
            Then::Suffix | Then::FrameLen => {
                self.step = Step::Skip {
                    left: n,
                    then: match then {
                        Then::Suffix => Skipped::Suffix,
                        _ => Skipped::Frame,
                    },
                };
                self.check_size(at, o)
            }
            Then::ZlibLen => {
                // The body the decoder will inflate.
                self.charge(u128::from(n), at, o)?;
                self.varint(Then::FrameLen)
            }
        }
    }
}
