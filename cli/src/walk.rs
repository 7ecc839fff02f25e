//! A tag walker over a Sereal body, for `info` and `dump`: reads one tag
//! after another with an explicit stack (no recursion), through the
//! library's body reader (`sereal::protocol::Cursor`, which checks every
//! length, count and offset against the buffer, as the decoder's reads do),
//! and reports each tag with its nesting.
//! It does not build values; as it goes, [`Rules`] checks what else the
//! decoder would refuse.

use crate::rules::{self, Rules};
use sereal::protocol::{self, tag, Cursor, TRACK_FLAG};
use sereal::ErrorKind;

/// What an item is to the item holding it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    Value,
    Key,
    Class,
    Pattern,
    Flags,
}

/// What follows a tag.
pub enum Detail<'a> {
    None,
    Int(i64),
    UInt(u64),
    Float(f32),
    Double(f64),
    Opaque(&'a [u8]),
    /// A string's bytes (the tag says which kind).
    Str(&'a [u8]),
    /// The element count of `ARRAY`, or the entry count of `HASH`.
    Count(u64),
    /// The offset a `REFP`, `ALIAS`, `COPY` or `OBJECTV` names, and the item there.
    Target(u64, Target<'a>),
}

/// The item a back-reference points to.
pub struct Target<'a> {
    /// Its tag byte.
    pub tag: u8,
    /// Its string, if it is one.
    pub string: Option<&'a [u8]>,
}

/// One tag of the body.
pub struct Item<'a> {
    /// Its body offset, as the format counts them.
    pub offset: usize,
    /// The tag byte, track flag included.
    pub tag: u8,
    /// Nesting depth, 0 for the top-level value.
    pub depth: usize,
    pub role: Role,
    pub detail: Detail<'a>,
}

/// Totals over a body.
#[derive(Default, Debug)]
pub struct Stats {
    /// Items that are values (not hash keys, class names or regexp parts).
    pub values: u64,
    pub keys: u64,
    pub max_depth: usize,
    /// Tags with the track flag.
    pub tracked: u64,
    pub refp: u64,
    pub alias: u64,
    pub copy: u64,
    pub objects: u64,
    pub objectv: u64,
    pub weaken: u64,
}

/// Why a walk stopped.
pub enum Fail {
    /// The body is malformed at this position of the buffer.
    Bad(usize, String),
    /// The body walked to its end (the first field), but the decoder
    /// refuses it at this position, for this reason.
    Refused(usize, usize, String),
    /// Writing the listing failed.
    Io(std::io::Error),
}

/// `n bytes`, or `1 byte`.
pub fn bytes(n: u64) -> String {
    if n == 1 {
        "1 byte".into()
    } else {
        format!("{n} bytes")
    }
}

/// Nesting beyond this many levels is refused (each level takes a byte, so
/// only hostile input gets here).
pub const MAX_DEPTH: usize = 1_000_000;

#[derive(Clone, Copy)]
enum Kind {
    Root,
    Array,
    Hash,
    /// REFN, WEAKEN, OBJECTV: one value.
    One,
    /// OBJECT, OBJECT_FREEZE: a class name, then a value.
    Object,
    Regexp,
}

struct Frame<'a> {
    kind: Kind,
    left: u64,
    index: u64,
    rules: rules::Open<'a>,
}

impl Frame<'_> {
    fn role(&self) -> Role {
        match (self.kind, self.index) {
            (Kind::Hash, i) if i % 2 == 0 => Role::Key,
            (Kind::Object, 0) => Role::Class,
            (Kind::Regexp, 0) => Role::Pattern,
            (Kind::Regexp, _) => Role::Flags,
            _ => Role::Value,
        }
    }
}

/// The walker's reads: the library's body reader, with messages that say
/// what was expected where it fails.
struct Walker<'a> {
    cur: Cursor<&'a [u8]>,
}

impl<'a> Walker<'a> {
    fn bad<T>(&self, at: usize, msg: impl Into<String>) -> Result<T, Fail> {
        Err(Fail::Bad(at, msg.into()))
    }

    /// The failure of a read: the reader's error, at its position.
    fn failed(e: sereal::Error) -> Fail {
        Fail::Bad(e.offset().unwrap_or_default(), e.kind().to_string())
    }

    fn byte(&mut self) -> Result<u8, Fail> {
        self.cur.byte().map_err(Walker::failed)
    }

    fn varint(&mut self) -> Result<u64, Fail> {
        let cut = self.cur.varint_cut();
        self.cur.varint().map_err(|e| match e.kind() {
            ErrorKind::Truncated if cut => Fail::Bad(
                e.offset().unwrap_or_default(),
                "unexpected end of input (inside a varint)".into(),
            ),
            _ => Walker::failed(e),
        })
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], Fail> {
        let left = self.cur.left();
        match usize::try_from(n).map(|n| self.cur.slice(n)) {
            Ok(Ok(s)) => Ok(s),
            _ => self.bad(
                self.cur.pos(),
                format!("unexpected end of input ({} needed, {left} left)", bytes(n)),
            ),
        }
    }

    /// A count of items each taking at least `min` bytes, checked against
    /// the bytes left.
    fn count(&mut self, min: usize, what: &str, unit: &str) -> Result<u64, Fail> {
        let at = self.cur.pos();
        let n = self.varint()?;
        self.cur.set_pos(at);
        match self.cur.count(0, what, min) {
            Ok(n) => Ok(n as u64),
            Err(_) => self.bad(
                at,
                format!(
                    "{what} of {n} {unit} claimed, but only {} left",
                    bytes(self.cur.left() as u64)
                ),
            ),
        }
    }

    /// The string at buffer position `p`, if a string tag is there.
    fn string_at(&self, p: usize) -> Option<&'a [u8]> {
        let buf: &'a [u8] = self.cur.buf();
        let t = *buf.get(p)? & !TRACK_FLAG;
        let (len, start) = match t {
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => ((t & 31) as u64, p + 1),
            tag::BINARY | tag::STR_UTF8 => {
                let (n, l) = protocol::read_varint(buf.get(p + 1..)?)?;
                (n, p + 1 + l)
            }
            _ => return None,
        };
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        buf.get(start..end)
    }

    /// Resolves an offset read for the tag at `at`: it must point before
    /// it (or, for REFP and ALIAS, at it: a tracked cell may hold a
    /// reference to itself). What is there is for [`Rules`] to check.
    fn target(&self, off: u64, at: usize, name: &str) -> Result<Target<'a>, Fail> {
        let upto = at + usize::from(matches!(name, "REFP" | "ALIAS"));
        let Some(p) = self.cur.position_of(off).filter(|&p| p < upto) else {
            return self.bad(
                at,
                format!("{name} offset {off} does not point to an earlier item"),
            );
        };
        Ok(Target {
            tag: self.cur.bytes()[p],
            string: self.string_at(p),
        })
    }
}

/// Bytes walked between calls of `walk`'s `done`.
const DONE_STEP: usize = 8 << 20;

/// Walks the body at the start of `buf`, whose first byte has body offset
/// `shift`, calling `each` for every tag in order and counting in `stats`
/// (which, after a failure, holds the counts up to it). Every 8 MiB it
/// tells `done` which bytes it has gone past (what a COPY or REFP names
/// there may still be read again). Returns where the body's value ends:
/// what follows is not the walker's business.
pub fn walk<'a>(
    buf: &'a [u8],
    shift: usize,
    stats: &mut Stats,
    mut each: impl FnMut(&Item<'a>) -> std::io::Result<()>,
    mut done: impl FnMut(&'a [u8]),
) -> Result<usize, Fail> {
    let mut w = Walker {
        cur: Cursor::new(buf, shift),
    };
    let mut rules = Rules::new(buf, shift);
    let mut stack = vec![Frame {
        kind: Kind::Root,
        left: 1,
        index: 0,
        rules: rules::Open::default(),
    }];
    let mut next_done = DONE_STEP;
    loop {
        while stack.last().is_some_and(|f| f.left == 0) {
            let closed = stack.pop().expect("a frame");
            if let Some(parent) = stack.last_mut() {
                rules.close(closed.rules, &mut parent.rules);
            }
        }
        if w.cur.pos() >= next_done {
            done(&buf[..w.cur.pos() - DONE_STEP / 2]);
            next_done = w.cur.pos() + DONE_STEP;
        }
        let depth = stack.len().saturating_sub(1);
        let Some(frame) = stack.last_mut() else { break };
        let role = frame.role();
        let at = w.cur.pos();
        let t = w.byte()?;
        let tracked = t & TRACK_FLAG != 0;
        if tracked {
            stats.tracked += 1;
        }
        let bare = t & !TRACK_FLAG;
        let mut item = Item {
            offset: at + shift,
            tag: t,
            depth,
            role,
            detail: Detail::None,
        };
        if bare == tag::PAD {
            each(&item).map_err(Fail::Io)?;
            rules.item(&mut frame.rules, t, at, 0, &[]);
            continue;
        }
        frame.left -= 1;
        frame.index += 1;
        match role {
            Role::Value => stats.values += 1,
            Role::Key => stats.keys += 1,
            _ => {}
        }
        stats.max_depth = stats.max_depth.max(depth);
        let is_string = matches!(
            bare,
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 | tag::BINARY | tag::STR_UTF8
        );
        let allowed = match role {
            Role::Value => true,
            Role::Key | Role::Class => is_string || bare == tag::COPY,
            Role::Pattern | Role::Flags => is_string,
        };
        if !allowed {
            let what = match role {
                Role::Key => "as a hash key",
                Role::Class => "as a class name",
                Role::Pattern => "as a regexp pattern",
                _ => "as regexp flags",
            };
            return w.bad(
                at,
                format!(
                    "unexpected tag {} (0x{t:02x}) {what}",
                    protocol::tag_name(t)
                ),
            );
        }
        // (kind, count) of a frame to open after reporting the item
        let mut open: Option<(Kind, u64)> = None;
        match bare {
            tag::POS_0..=tag::POS_15 => item.detail = Detail::Int(i64::from(bare)),
            tag::NEG_16..=tag::NEG_1 => item.detail = Detail::Int(i64::from(bare) - 32),
            tag::VARINT => item.detail = Detail::UInt(w.varint()?),
            tag::ZIGZAG => item.detail = Detail::Int(protocol::zigzag_decode(w.varint()?)),
            tag::FLOAT => {
                let b = w.take(4)?;
                item.detail = Detail::Float(f32::from_le_bytes(b.try_into().expect("4 bytes")));
            }
            tag::DOUBLE => {
                let b = w.take(8)?;
                item.detail = Detail::Double(f64::from_le_bytes(b.try_into().expect("8 bytes")));
            }
            tag::LONG_DOUBLE | tag::FLOAT_128 => item.detail = Detail::Opaque(w.take(16)?),
            tag::UNDEF | tag::CANONICAL_UNDEF | tag::YES | tag::NO | tag::TRUE | tag::FALSE => {}
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 => {
                item.detail = Detail::Str(w.take(u64::from(bare & 31))?)
            }
            tag::BINARY | tag::STR_UTF8 => {
                let n = w.varint()?;
                item.detail = Detail::Str(w.take(n)?);
            }
            tag::REFN => open = Some((Kind::One, 1)),
            tag::WEAKEN => {
                stats.weaken += 1;
                open = Some((Kind::One, 1));
            }
            tag::REFP | tag::ALIAS => {
                if bare == tag::REFP {
                    stats.refp += 1;
                } else {
                    stats.alias += 1;
                }
                let off = w.varint()?;
                let name = protocol::tag_name(bare);
                item.detail = Detail::Target(off, w.target(off, at, &name)?);
            }
            tag::COPY => {
                stats.copy += 1;
                let off = w.varint()?;
                item.detail = Detail::Target(off, w.target(off, at, "COPY")?);
            }
            tag::ARRAY => {
                let n = w.count(1, "an array", "elements")?;
                item.detail = Detail::Count(n);
                open = Some((Kind::Array, n));
            }
            tag::HASH => {
                let n = w.count(2, "a hash", "entries")?;
                item.detail = Detail::Count(n);
                open = Some((Kind::Hash, 2 * n));
            }
            tag::ARRAYREF_0..=tag::ARRAYREF_15 => open = Some((Kind::Array, u64::from(bare & 15))),
            tag::HASHREF_0..=tag::HASHREF_15 => open = Some((Kind::Hash, 2 * u64::from(bare & 15))),
            tag::OBJECT | tag::OBJECT_FREEZE => {
                stats.objects += 1;
                open = Some((Kind::Object, 2));
            }
            tag::OBJECTV | tag::OBJECTV_FREEZE => {
                stats.objects += 1;
                stats.objectv += 1;
                let off = w.varint()?;
                item.detail = Detail::Target(off, w.target(off, at, "OBJECTV")?);
                open = Some((Kind::One, 1));
            }
            tag::REGEXP => open = Some((Kind::Regexp, 2)),
            _ => {
                return w.bad(
                    at,
                    format!(
                        "unexpected tag {} (0x{t:02x}) as a value",
                        protocol::tag_name(t)
                    ),
                )
            }
        }
        each(&item).map_err(Fail::Io)?;
        let (off, text) = match item.detail {
            Detail::Target(off, _) => (off, &[][..]),
            Detail::Str(s) => (0, s),
            _ => (0, &[][..]),
        };
        let state = rules.item(&mut frame.rules, t, at, off, text);
        if let Some((kind, left)) = open {
            if stack.len() >= MAX_DEPTH {
                return w.bad(at, format!("nesting deeper than {MAX_DEPTH} levels"));
            }
            // pushed even when empty: closing it is the rules' business
            stack.push(Frame {
                kind,
                left,
                index: 0,
                rules: state,
            });
        }
    }
    match rules.failure() {
        None => Ok(w.cur.pos()),
        Some((at, m)) => Err(Fail::Refused(w.cur.pos(), at, m)),
    }
}
