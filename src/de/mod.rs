//! Serde deserialization straight from Sereal bytes.
//!
//! Accepts what Perl writes: numbers in any integer or float tag when the
//! target can hold them (an integral float for an integer), strings from
//! `BINARY`/`SHORT_BINARY` or `STR_UTF8`, `REFN`, `REFP`,
//! `ALIAS`, `COPY` and `WEAKEN` followed transparently (except a weak
//! reference back into the path being read, which reads as undef), objects
//! as their referent (with their class for a [`Blessed`](crate::Blessed)
//! or a `Value`, see [`crate::blessed`]), `LONG_DOUBLE` and `FLOAT_128` as their 16 bytes,
//! booleans from `TRUE`/`FALSE`/`YES`/`NO` and, for `bool`, from `0`/`1`
//! and `""`/`"0"`/`"1"` as Perl writes them. Hash keys are strings: integer,
//! float, bool and char key types parse them. `&str` and `&[u8]` borrow
//! from an uncompressed input.
//!
//! # Perl's scalars into Rust types
//!
//! Perl is weakly typed: DBI gives every column as a string (`"12"`),
//! flags as `""` and `"1"`, NULL as undef. So by default a typed target
//! reads a scalar as Perl would use it, in [`from_slice`], the typed
//! streams and [`from_value`] alike. What each tag reads into:
//!
//! | Tag | integer | `f32`/`f64` | `bool` | `String`/`&str` | bytes | `Option<T>` |
//! |---|---|---|---|---|---|---|
//! | `POS`, `NEG`, `VARINT`, `ZIGZAG` | in range | yes | `0`/`1`; any, true if not 0 ¹ | decimal text ¹ | no | `Some` |
//! | `FLOAT`, `DOUBLE` | integral and in range | yes | true if not 0 ¹ | Perl's `%.15g`: `0.1`, `1e+21`, `3` ¹ | no | `Some` |
//! | a string that is an integer (`"12"`, `" -5 "`, `"18446744073709551615"`, `"2.00"`, `"1e3"`) | in range ¹ | yes ¹ | `"0"`/`"1"` | yes | yes | `Some` |
//! | a string that is another number (`"2.50"`, `"1e-3"`, `"Inf"`) | error: "string \"2.5\" is not an integer" ¹ | yes ¹ | no | yes | yes | `Some` |
//! | any other string (`"abc"`, `""`) | error: "string \"abc\" is not a number" ¹ | error, the same ¹ | `""` | yes | yes | `Some` |
//! | `TRUE`, `FALSE`, `YES`, `NO` | no | no | yes | no | no | `Some` |
//! | `UNDEF`, `CANONICAL_UNDEF` | no | no | no | no | no | `None` (and `()`) |
//! | `LONG_DOUBLE`, `FLOAT_128` | no | no | no | no | their 16 bytes | `Some` |
//!
//! ¹ Not with [`DecoderOptions::strict_types`], which reads only what each
//! tag is (the "no" cells, and these, are serde's type errors then).
//! "in range" is the target's: `"300"` into a `u8` is the visitor's
//! out-of-range error. On the byte path every error carries the offset of
//! the value.
//!
//! A number in a string is one by Perl's `looks_like_number`, exactly and
//! conservatively: whitespace before and after (as Perl takes it), a
//! sign, digits with an optional fraction and exponent, `Inf`/`Infinity`/
//! `NaN` in any case, and `"0 but true"`; not hex, underscores or trailing
//! text (which Perl numifies with a warning). An integer target takes a string
//! whose exact value is an integer, decided on its digits (no float in
//! between): `"2.00"` (a `DECIMAL` column) and `"1e3"` read into a `u32`,
//! `"2.5"` and `"1.0000000000000000001"` do not. The same rule gives [`Value::to_i64`],
//! [`Value::to_u64`], [`Value::to_f64`], [`Value::to_bool`] and
//! [`Value::to_perl_string`], the lenient accessors beside the strict
//! `as_*` ones.
//!
//! Untouched: self-describing targets (`deserialize_any`: `sereal::Value`,
//! `serde_json::Value`, untagged enums) get each scalar as it is, a string
//! as a string; `char` and field and variant names read text only; hash
//! keys parse as before (Rust's `str::parse` for number key types). The
//! conversions are reached only when the typed path misses (a string where
//! a number is wanted), out of line.
//!
//! [`Value::to_i64`]: crate::Value::to_i64
//! [`Value::to_u64`]: crate::Value::to_u64
//! [`Value::to_f64`]: crate::Value::to_f64
//! [`Value::to_bool`]: crate::Value::to_bool
//! [`Value::to_perl_string`]: crate::Value::to_perl_string
//!
//! A `STR_UTF8` string whose bytes are not valid UTF-8 (Perl's decoder
//! takes those as they are, as [`decode`](crate::decode) does) is an
//! `InvalidUtf8` error for a target that wants text (`String`, `&str`,
//! `char`, a field name, a key parsed as a number) and is visited as bytes
//! by one that takes anything (`Value`, `IgnoredAny`, bytes; `InvalidUtf8`
//! when the visitor takes no bytes, as `serde_json::Value`'s); with
//! `validate_utf8` every target refuses one that Perl's rule refuses (see
//! [`DecoderOptions::validate_utf8`]). One that Perl's rule takes but Rust
//! text cannot hold (a surrogate, a code point past U+10FFFF) stays no
//! text with the option: text targets refuse it, the others get its
//! bytes. Serde's buffered forms (`flatten`, untagged and internally
//! tagged enums) take the bytes first, so a `String` inside them fails
//! with serde's type error.

use crate::decoder::{
    document_size_check, frame, memory, string_over_limit, DecoderOptions, Header, DEFAULTS,
};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::{self, over_limit, tag, Cursor, TRACK_FLAG};
use crate::stack::{HasStack, Stack};
use serde::de::{self, DeserializeSeed, IgnoredAny, IntoDeserializer, Visitor};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::mem::ManuallyDrop;
use std::ops::Range;

mod access;
mod item;
mod object;
mod perl;
mod read;
mod root;
mod stream;
mod strings;
mod value;

use access::{Elements, Entries};
use read::Options;
pub use read::{
    from_reader, from_reader_with, from_slice, from_slice_with, from_value, from_value_with,
};
use root::Root;
pub use stream::{Deserializer, IoRead, SliceRead, StreamDeserializer};

/// How a value is wanted: what conversions Perl's data may need.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    /// Whatever the document holds. A string flagged UTF-8 whose bytes are
    /// not (Perl's decoder takes such bytes as they are) is visited as
    /// bytes, unless `validate_utf8` is set.
    Any,
    /// Text: a string flagged UTF-8 whose bytes are not is an error
    /// (`char`, an identifier).
    Text,
    /// Text for a `str` or `String`: as `Text`, and a number reads as
    /// Perl's text of it (unless `strict_types`).
    Str,
    /// An integer: a string reads as the integer Perl reads from it
    /// (unless `strict_types`).
    Int,
    /// A float: a string reads as the number Perl reads from it (unless
    /// `strict_types`).
    Float,
    /// A `bool`: also `0`/`1` and `""`/`"0"`/`"1"`, and any number
    /// (unless `strict_types`).
    Bool,
}

impl Want {
    /// Whether the target wants text (`Text` or `Str`).
    #[inline(always)]
    fn text(self) -> bool {
        matches!(self, Want::Text | Want::Str)
    }
}

/// The reader of one document's body: the serde `Deserializer` that
/// target types and their fields, elements and entries are read through.
/// ([`Deserializer`] frames documents and hands each body to one.)
pub(crate) struct Body<'de> {
    // the body, its offset shift, where its errors count from and the depth
    cur: Cursor<Cow<'de, [u8]>>,
    // for a compressed document followed by more input, where its frame
    // ends (0: nothing follows the body)
    trailing_at: usize,
    // tags left to read: REFP/ALIAS re-read their targets, so a document
    // could otherwise expand exponentially. A container pays for its
    // elements when it starts (so the scalars among them are read without
    // a charge), and every other tag for itself: a nested container is
    // charged twice, which the budget allows for. The budget granted in
    // all is 128 tags per body byte and 2^17 more; for an open body (see
    // `Framed::open`) the bytes are those up to the furthest read, `far`,
    // so the budget grows as the read goes on.
    budget: usize,
    granted: usize,
    far: usize,
    opts: Limits,
    stack: Stack,
    // made at the first tracked item, class name or hash key COPY
    seen: Rare<Seen>,
}

/// A document's body as [`Body::framed`] finds it.
struct Framed<'de> {
    body: Cow<'de, [u8]>,
    // the body offset of its first byte
    shift: usize,
    // the offset its errors count from, in the decompressed body if
    // `in_body`
    base: usize,
    in_body: bool,
    // where a compressed frame followed by more input ends (0: none)
    trailing_at: usize,
    // the body runs on past the document (a raw body in a stream of
    // documents): the document ends where its value does
    open: bool,
}

/// The decoder options that apply once the body is framed.
#[derive(Clone, Copy)]
struct Limits {
    max_num_array_entries: usize,
    max_num_hash_entries: usize,
    max_string_length: usize,
    refuse_objects: bool,
    use_undef: bool,
    validate_utf8: bool,
    /// Perl's scalars read as Perl reads them (not `strict_types`).
    perl: bool,
}

/// Positions of the tracked items read so far (what REFP and ALIAS may
/// name), of those being read now, of class names, and of recent hash key
/// `COPY` targets.
#[derive(Default)]
struct Seen {
    tracked: HashSet<usize>,
    path: HashSet<usize>,
    classes: HashSet<usize>,
    /// The tracked referents of objects (what a `REFP` to an object
    /// names) and the positions of their class names.
    objects: HashMap<usize, usize>,
    /// An object being read as its referent, by a `Blessed` or a `Value`
    /// that took its class (see `object.rs`).
    unwrapped: Option<usize>,
    /// The targets of recent hash key COPYs, in `KEY_SETS` sets of two
    /// ways by a hash of the position: position + 1 (0: empty) and the
    /// key. Made at the first key COPY.
    key_copies: Option<Box<KeyCopies>>,
}

/// State that most documents never make: dropped out of line, so that
/// dropping a deserializer that never made it costs a test.
struct Rare<T>(ManuallyDrop<Option<Box<T>>>);

impl<T> Drop for Rare<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the field is not used again.
        if let Some(made) = unsafe { ManuallyDrop::take(&mut self.0) } {
            drop_made(made);
        }
    }
}

#[cold]
#[inline(never)]
fn drop_made<T>(made: Box<T>) {
    drop(made);
}

impl<T> std::ops::Deref for Rare<T> {
    type Target = Option<Box<T>>;
    fn deref(&self) -> &Option<Box<T>> {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Rare<T> {
    fn deref_mut(&mut self) -> &mut Option<Box<T>> {
        &mut self.0
    }
}

const KEY_SETS: usize = 64;

/// The sets of `Seen::key_copies`: two ways each, position + 1
/// (0: empty) and the key.
type KeyCopies = [[(usize, KeyRef); 2]; KEY_SETS];

/// The set of `key_copies` for the COPY target at `p`.
#[inline]
fn key_set(p: usize) -> usize {
    ((p as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

/// `b` as text, when it is valid UTF-8 (ASCII checked first: most keys
/// and strings are).
#[inline]
fn text(b: &[u8]) -> Option<&str> {
    if b.is_ascii() {
        // SAFETY: ASCII is valid UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(b) })
    } else {
        std::str::from_utf8(b).ok()
    }
}

/// A hash key read: its bytes in the body, whether it is flagged UTF-8, and
/// whether its bytes are valid UTF-8 (checked once per key, however many
/// COPYs name it).
#[derive(Clone, Default)]
struct KeyRef {
    bytes: Range<usize>,
    utf8: bool,
    text: bool,
}

impl HasStack for Body<'_> {
    fn stack(&mut self) -> &mut Stack {
        &mut self.stack
    }
}

/// Bytes of a string: from the input (borrowable for `'de`) or from a
/// decompressed copy.
enum Bytes<'de, 'a> {
    Input(&'de [u8]),
    Copy(&'a [u8]),
}

impl<'de> Framed<'de> {
    /// The body of a document with the common header (protocol 3 to 5, raw,
    /// no suffix) of `len` bytes, found without building a `Header`.
    #[inline(always)]
    fn raw(input: &'de [u8], len: usize) -> Framed<'de> {
        Framed {
            body: Cow::Borrowed(&input[len..]),
            shift: 1,
            base: len,
            in_body: false,
            trailing_at: 0,
            open: false,
        }
    }

    /// The body of any other document: its header parsed, its compressed
    /// frame inflated.
    fn parsed(input: &'de [u8], opts: &DecoderOptions, held: usize) -> Result<Framed<'de>> {
        let header = Header::parse(input)?;
        let (body, shift, frame_end) = frame(opts, input, &header, held)?;
        Ok(Framed {
            body,
            shift,
            base: if frame_end.is_some() { 0 } else { header.len },
            in_body: frame_end.is_some(),
            trailing_at: frame_end.filter(|&end| end != input.len()).unwrap_or(0),
            open: false,
        })
    }
}

impl<'de> Body<'de> {
    /// The body of the document `input`.
    #[inline(always)]
    fn framed(input: &'de [u8], opts: &DecoderOptions, held: usize) -> Result<Framed<'de>> {
        // The input is the document: refused before it is read.
        document_size_check(opts, input.len())?;
        match Header::raw_len(input) {
            Some(len) => Ok(Framed::raw(input, len)),
            None => Framed::parsed(input, opts, held),
        }
    }

    /// A deserializer over a framed body, whose walk starts from `stack`,
    /// for a read that holds `held` bytes of `max_memory` already.
    #[inline(always)]
    fn over(f: Framed<'de>, opts: &DecoderOptions, stack: Stack, held: usize) -> Body<'de> {
        // A decompressed body is held while the value is built.
        let held = match &f.body {
            Cow::Owned(b) => held.saturating_add(b.len()),
            Cow::Borrowed(_) => held,
        };
        // No body is near 2^56 bytes (no address space holds one), so in 64
        // bits neither step overflows (the wrapping add only spares the
        // arithmetic a check); a 32-bit target's budget saturates.
        let budget = tag_budget(if f.open { 0 } else { f.body.len() });
        Body {
            cur: Cursor::new(f.body, f.shift)
                .placed_at(f.base, f.in_body)
                .max_depth(opts.serde_depth())
                .max_memory(opts.max_memory, held),
            trailing_at: f.trailing_at,
            budget,
            granted: budget,
            far: 0,
            opts: Limits {
                max_num_array_entries: opts.max_num_array_entries,
                max_num_hash_entries: opts.max_num_hash_entries,
                max_string_length: opts.max_string_length,
                refuse_objects: opts.refuse_objects,
                use_undef: opts.use_undef,
                validate_utf8: opts.validate_utf8,
                perl: !opts.strict_types,
            },
            stack,
            seen: Rare(ManuallyDrop::new(None)),
        }
    }

    /// Checks that the whole body was read (and, for a compressed
    /// document, that nothing follows its compressed frame).
    #[inline]
    fn end(&self) -> Result<()> {
        self.body_end()?;
        match self.trailing_at {
            0 => Ok(()),
            end => Err(Error::at(ErrorKind::TrailingData, end)),
        }
    }

    /// Checks that the whole body was read.
    #[inline]
    fn body_end(&self) -> Result<()> {
        if self.cur.pos() != self.cur.bytes().len() {
            return Err(self.cur.error_at(ErrorKind::TrailingData, self.cur.pos()));
        }
        Ok(())
    }

    #[inline]
    fn bytes(&self, r: Range<usize>) -> Bytes<'de, '_> {
        match self.cur.buf() {
            Cow::Borrowed(b) => {
                let b: &'de [u8] = b;
                Bytes::Input(&b[r])
            }
            Cow::Owned(v) => Bytes::Copy(&v[r]),
        }
    }

    /// The body position of the tracked item a `REFP` or `ALIAS` read at
    /// `at` names: one read before.
    fn tracked_target(&self, off: u64, at: usize, what: &'static str) -> Result<usize> {
        self.cur
            .position_of(off)
            .filter(|p| self.seen.as_ref().is_some_and(|s| s.tracked.contains(p)))
            .ok_or_else(|| self.cur.error_at(ErrorKind::BadOffset(off, what), at))
    }

    /// Reads a nested value one level deeper, on a grown stack when the
    /// current one runs low (visitors recurse too).
    fn nested<V: Visitor<'de>>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<V::Value>,
    ) -> Result<V::Value> {
        self.cur.enter()?;
        let v = Stack::run(self, f);
        self.cur.leave();
        v
    }

    /// Whether the tracked item at `p` is being read (a reference to it
    /// closes a cycle).
    fn on_path(&self, p: usize) -> bool {
        self.seen.as_ref().is_some_and(|s| s.path.contains(&p))
    }

    /// After a `WEAKEN` at `p - 1`: if a `REFP` to an item on the current
    /// path follows, the position after it.
    fn weak_back(&self, mut p: usize) -> Option<usize> {
        while *self.cur.bytes().get(p)? & !TRACK_FLAG == tag::PAD {
            p += 1;
        }
        if self.cur.bytes()[p] != tag::REFP {
            return None;
        }
        let (off, len) = protocol::read_varint(&self.cur.bytes()[p + 1..])?;
        let target = usize::try_from(off).ok()?.checked_sub(self.cur.shift())?;
        self.on_path(target).then_some(p + 1 + len)
    }

    /// Whether the item at `p` (after `PAD`s) is a reference: what a
    /// `WEAKEN` (untracked, unless `tracked_ok`) or an `OBJECT` applies to.
    /// A truncated input says yes: the read that follows reports it.
    fn reference_follows(&self, p: usize, tracked_ok: bool) -> bool {
        let Some((b, tracked)) = self.peek_tag(p) else {
            return true;
        };
        (tracked_ok || !tracked)
            && matches!(
                b & !TRACK_FLAG,
                tag::REFN
                    | tag::REFP
                    | tag::ARRAYREF_0..=tag::ARRAYREF_15
                    | tag::HASHREF_0..=tag::HASHREF_15
                    | tag::OBJECT
                    | tag::OBJECTV
                    | tag::OBJECT_FREEZE
                    | tag::OBJECTV_FREEZE
            )
    }

    /// The tag at `p` after `PAD`s and whether it (or a `PAD` before it) is
    /// tracked; `None` at the end of the input.
    fn peek_tag(&self, mut p: usize) -> Option<(u8, bool)> {
        let mut tracked = false;
        loop {
            let b = *self.cur.bytes().get(p)?;
            tracked |= b & TRACK_FLAG != 0;
            if b & !TRACK_FLAG != tag::PAD {
                return Some((b, tracked));
            }
            p += 1;
        }
    }

    /// Reads the value a `WEAKEN` or `OBJECT` at `at` may not apply to,
    /// then fails as the decoder does: at once if it is a `WEAKEN`.
    fn not_a_reference<T>(&mut self, what: &str, at: usize) -> Result<T> {
        let (t, t_at) = self.next_tag()?;
        if t == tag::WEAKEN {
            // A weak reference is not a reference: a chain of them is
            // refused at its start.
        } else if t == tag::ALIAS {
            // Not followed: the decoder only looks its target up.
            let off = self.cur.varint()?;
            self.tracked_target(off, t_at, "ALIAS")?;
        } else {
            self.cur.set_pos(t_at);
            Stack::run(self, |de| de.parse(IgnoredAny, Want::Any))?;
        }
        Err(self.cur.error_at(ErrorKind::Invalid(what.into()), at))
    }

    fn seq<V: Visitor<'de>>(&mut self, visitor: V, n: usize) -> Result<V::Value> {
        let mut access = Elements { de: self, left: n };
        let v = visitor.visit_seq(&mut access)?;
        // A visitor that stopped early (a fixed-size tuple, say): skip the rest.
        while access.left > 0 {
            access.left -= 1;
            access.de.parse(IgnoredAny, Want::Any)?;
        }
        Ok(v)
    }

    /// The class name of an `OBJECT`: a string or a `COPY` of one. Gives
    /// its position (what an `OBJECTV` names) and its bytes.
    fn class_name(&mut self) -> Result<(usize, Range<usize>)> {
        let (t, at) = self.next_tag()?;
        let text = if t == tag::COPY {
            let off = self.cur.varint()?;
            let p = self.cur.target(off, at, "COPY")?;
            self.string_at(p, at, "as the target of a class name COPY", false)?
        } else {
            match self.string_body(t, false)? {
                Some(s) => s,
                None => {
                    return Err(self
                        .cur
                        .error_at(ErrorKind::UnexpectedTag(t, "as a class name"), at))
                }
            }
        };
        self.seen
            .get_or_insert_with(Default::default)
            .classes
            .insert(at);
        Ok((at, text.0))
    }

    /// Checks that an `OBJECT_FREEZE`'s values follow: `REFN ARRAY`.
    fn frozen_values(&mut self) -> Result<()> {
        let (refn, at) = self.next_tag()?;
        if refn != tag::REFN {
            let kind = ErrorKind::UnexpectedTag(refn, "after OBJECT_FREEZE (expected REFN)");
            return Err(self.cur.error_at(kind, at));
        }
        let (array, array_at) = self.next_tag()?;
        if array != tag::ARRAY {
            let kind = ErrorKind::UnexpectedTag(array, "in an OBJECT_FREEZE (expected ARRAY)");
            return Err(self.cur.error_at(kind, array_at));
        }
        self.cur.set_pos(at);
        Ok(())
    }

    fn refuse_objects(&self, at: usize) -> Result<()> {
        if self.opts.refuse_objects {
            return Err(self.cur.error_at(ErrorKind::ObjectRefused, at));
        }
        Ok(())
    }

    /// A plain `DOUBLE` at `at`, read (the common form of a float).
    #[inline]
    fn double_at(&mut self, at: usize) -> Option<f64> {
        let d = double(self.cur.bytes().get(at..)?)?;
        self.cur.set_pos(at + 9);
        Some(d)
    }

    /// An `Option` whose value is not a plain `UNDEF`: `None` for what
    /// reads as undef (after `PAD`s, or a weak reference back into the
    /// path), else `Some` of the value.
    #[inline(never)]
    fn option<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        if self.next_is_undef() || self.undef_object() {
            self.parse(IgnoredAny, Want::Any)?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    /// Whether the next value (after PADs) is undefined, or a weak
    /// reference back into the path, which reads as undef.
    fn next_is_undef(&self) -> bool {
        let mut p = self.cur.pos();
        while let Some(&b) = self.cur.bytes().get(p) {
            match b & !TRACK_FLAG {
                tag::PAD => p += 1,
                tag::UNDEF | tag::CANONICAL_UNDEF => return true,
                tag::WEAKEN => return self.weak_back(p + 1).is_some(),
                _ => return false,
            }
        }
        false
    }
}

/// The tags a body of `len` bytes may read in all.
#[inline(always)]
fn tag_budget(len: usize) -> usize {
    // No body is near 2^56 bytes (no address space holds one), so in 64
    // bits neither step overflows (the wrapping add only spares the
    // arithmetic a check); a 32-bit target's budget saturates.
    let budget = ((len as u64) << 7).wrapping_add(1 << 17);
    usize::try_from(budget).unwrap_or(usize::MAX)
}

/// The value of a plain `DOUBLE` at the start of `b`.
#[inline(always)]
fn double(b: &[u8]) -> Option<f64> {
    match *b.get(..9)? {
        [tag::DOUBLE, b0, b1, b2, b3, b4, b5, b6, b7] => {
            Some(f64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]))
        }
        _ => None,
    }
}

fn float<'de, V: Visitor<'de>>(
    visitor: V,
    d: f64,
    want: Want,
    single: Option<f32>,
) -> Result<V::Value> {
    if want == Want::Int && d.fract() == 0.0 {
        if (0.0..18_446_744_073_709_551_616.0).contains(&d) {
            return visitor.visit_u64(d as u64);
        }
        if (-9_223_372_036_854_775_808.0..0.0).contains(&d) {
            return visitor.visit_i64(d as i64);
        }
    }
    match single {
        Some(f) => visitor.visit_f32(f),
        None => visitor.visit_f64(d),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Row<'a> {
        name: String,
        #[serde(borrow)]
        tag: &'a str,
        by_id: BTreeMap<u32, String>,
    }

    /// Serde both ways over the paths with `unsafe` (`to_vec`'s vector,
    /// keys read as text borrowed from the input or copied, keys parsed
    /// as numbers, the state made for repeated keys): what goes in comes
    /// back.
    #[test]
    fn rows_round_trip_with_borrowed_copied_and_parsed_keys() {
        let rows: Vec<Row> = (0..4u32)
            .map(|i| Row {
                name: format!("row {i}: a name longer than the inline bytes"),
                tag: ["a", "b", "café"][i as usize % 3],
                by_id: (i..i + 3).map(|k| (k, format!("v{k}"))).collect(),
            })
            .collect();
        let bytes = crate::to_vec(&rows).unwrap();
        let back: Vec<Row> = crate::from_slice(&bytes).unwrap();
        assert_eq!(back, rows);
        let maps: Vec<BTreeMap<&str, i64>> = (0..3)
            .map(|i| [("x", i), ("né", -i)].into_iter().collect())
            .collect();
        let bytes = crate::to_vec(&maps).unwrap();
        assert_eq!(
            crate::from_slice::<Vec<BTreeMap<&str, i64>>>(&bytes).unwrap(),
            maps
        );
    }
}
