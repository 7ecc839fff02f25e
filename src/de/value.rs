//! A serde deserializer over a [`Value`] graph: what [`from_slice`] reads
//! from the graph's encoding, read from the graph itself.
//!
//! The rules are the byte deserializer's (see the module docs of
//! [`de`](crate::de)), applied to what each slot of the graph encodes as:
//! integers and floats into number targets (an integral float into an
//! integer), a `Double` that single precision holds as the `FLOAT` it is
//! written as, byte strings and UTF-8 strings with `Want::Text` refusing
//! a UTF-8 string whose bytes are not, `bool` from the boolean variants and
//! from `0`/`1` and `""`/`"0"`/`"1"`, hash keys parsed for integer, float,
//! bool and char key types, enums from a string (a unit variant) or a hash
//! of one key, undef as `None`, objects as their referent, references and
//! aliases followed, `LongDouble`/`Float128` as their 16 bytes, a weak
//! reference whose node is gone as undef.
//!
//! Identity is read as the encoder writes it: a node held more than once
//! (or weakly) is tracked; a weak reference to a node on the path being
//! read reads as undef, and a strong one (or an alias) is a cycle no tree
//! holds, an error. The encoder writes a tracked node where it meets it
//! first and a back-reference elsewhere, and the byte reader reads a few
//! things differently there (an aliased undef is `None` where it is written
//! and `Some` through an `ALIAS`; a reference to a scalar cell takes a
//! nesting level only where it is written; an enum is read through a
//! reference only where the hash is written): so the first slot each
//! tracked node is met in is kept, in the encoder's order, which is the
//! order of this walk.
//!
//! [`from_slice`]: super::from_slice

use super::{float, perl, text, Want};
use crate::decoder::DecoderOptions;
use crate::error::{Error, ErrorKind, Result};
use crate::protocol;
use crate::stack::{HasStack, Stack};
use crate::value::perl::Number;
use crate::value::{Body, Key, Ref, Value};
use serde::de::{self, DeserializeSeed, IgnoredAny, Visitor};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

mod enums;
pub(super) mod key;
mod object;

use enums::enum_from;
use key::MapKey;

/// Reads a `T` from `value`, with `opts`' depth limit, `validate_utf8`
/// and `strict_types`.
pub(super) fn read<T: de::DeserializeOwned>(value: &Value, opts: &DecoderOptions) -> Result<T> {
    let mut walk = Walk {
        depth: 0,
        max_depth: protocol::depth_limit(opts.serde_depth()),
        budget: BASE + PER_VALUE,
        path: HashSet::new(),
        met: HashMap::new(),
        fresh: true,
        validate_utf8: opts.validate_utf8,
        perl: !opts.strict_types,
        stack: Stack::lazy(),
        unwrapped: None,
    };
    T::deserialize(Item {
        walk: &mut walk,
        value,
        at: ROOT,
    })
}

/// The read allowance a graph starts with, as a document's (2^17 tags).
const BASE: usize = 1 << 17;
/// The allowance each distinct value adds, as each byte of a document
/// does.
const PER_VALUE: usize = 128;

/// A slot of the graph: the node whose body holds it (its address) and
/// its index there; the root is `ROOT`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct At {
    node: usize,
    index: usize,
}

const ROOT: At = At { node: 0, index: 0 };

/// The state of one read.
struct Walk {
    depth: usize,
    max_depth: usize,
    /// Values left to read. A shared node is read once per reference to
    /// it, so a graph can expand exponentially as a tree: each value read
    /// costs one, and each value met for the first time adds
    /// `PER_VALUE`.
    budget: usize,
    /// The tracked nodes being read (a reference to one closes a cycle).
    path: HashSet<usize>,
    /// The tracked nodes met so far, and the slot each was met in first.
    met: HashMap<usize, At>,
    /// Whether the node being read is met for the first time (its values
    /// add to the budget).
    fresh: bool,
    validate_utf8: bool,
    /// Perl's scalars read as Perl reads them (not `strict_types`).
    perl: bool,
    stack: Stack,
    /// The slot (its address) of an object being read as its referent, by
    /// a `Blessed` or a `Value` that took its class (see `object.rs`).
    unwrapped: Option<usize>,
}

impl HasStack for Walk {
    fn stack(&mut self) -> &mut Stack {
        &mut self.stack
    }
}

/// How a slot holds a node.
#[derive(Clone, Copy, PartialEq)]
enum Link {
    Strong,
    Weak,
    /// The slot is the node (`Value::Alias`).
    Slot,
}

/// Whether a node is tracked, as the encoder decides: held more than once,
/// or weakly.
fn tracked(r: &Ref) -> bool {
    r.strong_count() > 1 || r.weak_count() > 0
}

/// Perl's immortals, which the encoder writes by tag wherever a cell
/// holding one is met (never a back-reference, and no nesting level).
fn immortal(v: &Value) -> bool {
    matches!(v, Value::True | Value::False | Value::CanonicalUndef)
}

fn cycle(link: Link) -> Error {
    let what = if link == Link::Slot {
        "an alias of a node"
    } else {
        "a reference"
    };
    Error::new(ErrorKind::Invalid(format!(
        "{what} back into the value being read (a strong cycle)"
    )))
}

#[cold]
fn too_expanded() -> Error {
    Error::new(ErrorKind::LimitExceeded(
        "value graph expands too much (its shared nodes are read as a tree)".into(),
    ))
}

impl Walk {
    fn charge(&mut self) -> Result<()> {
        self.budget = self.budget.checked_sub(1).ok_or_else(too_expanded)?;
        Ok(())
    }

    /// Whether `r` (tracked) is met here for the first time or was met here
    /// first, that is whether the encoder writes it here; records the
    /// meeting.
    fn meet(&mut self, r: &Ref, at: At) -> (bool, bool) {
        match self.met.entry(r.addr()) {
            Entry::Vacant(e) => {
                e.insert(at);
                (true, true)
            }
            Entry::Occupied(e) => (*e.get() == at, false),
        }
    }

    /// Whether the encoder writes `r` at `at` (rather than a back-reference
    /// to it), without recording a meeting.
    fn written_at(&self, r: &Ref, at: At) -> bool {
        !tracked(r) || self.met.get(&r.addr()).is_none_or(|&first| first == at)
    }

    fn on_path(&self, r: &Ref) -> bool {
        !self.path.is_empty() && self.path.contains(&r.addr())
    }

    /// A string's bytes, flagged UTF-8 or not, for a target that wants
    /// `want`; see the byte deserializer's rules in the module docs of
    /// [`de`](crate::de).
    fn string<'de, V: Visitor<'de>>(
        &self,
        visitor: V,
        b: &[u8],
        utf8: bool,
        want: Want,
    ) -> Result<V::Value> {
        if want == Want::Bool && matches!(b, b"" | b"0" | b"1") {
            return visitor.visit_bool(b == b"1");
        }
        if perl::numeric(want) && self.perl {
            return perl::string(visitor, b, want);
        }
        if let Some(s) = text(b) {
            return visitor.visit_str(s);
        }
        if !utf8 {
            return visitor.visit_bytes(b);
        }
        if want.text() || self.validate_utf8 && !protocol::is_perl_utf8(b) {
            return Err(Error::new(ErrorKind::InvalidUtf8));
        }
        // A visitor that takes no bytes is told what is wrong with them.
        visitor
            .visit_bytes(b)
            .map_err(|_: Error| Error::new(ErrorKind::InvalidUtf8))
    }
}

/// One slot being read.
struct Item<'w, 'v> {
    walk: &'w mut Walk,
    value: &'v Value,
    at: At,
}

impl<'v> Item<'_, 'v> {
    /// Reads the slot and hands it to `visitor`.
    fn read<'de, V: Visitor<'de>>(self, visitor: V, want: Want) -> Result<V::Value> {
        self.walk.charge()?;
        if self.walk.perl && perl::from_numbers(want) {
            if let Some(n) = number(self.value) {
                return perl::number(visitor, n, want);
            }
        }
        match self.value {
            Value::Undef | Value::CanonicalUndef => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::True => visitor.visit_bool(true),
            Value::False => visitor.visit_bool(false),
            Value::Int(i) => match u64::try_from(*i) {
                Ok(u) => unsigned(visitor, u, want),
                Err(_) => visitor.visit_i64(*i),
            },
            Value::UInt(u) => unsigned(visitor, *u, want),
            Value::Float(f) => float(visitor, f64::from(*f), want, Some(*f)),
            Value::Double(d) => {
                // Written as a FLOAT when single precision holds it.
                let f = *d as f32;
                if f64::from(f) == *d || d.is_nan() {
                    float(visitor, f64::from(f), want, Some(f))
                } else {
                    float(visitor, *d, want, None)
                }
            }
            Value::LongDouble(b) | Value::Float128(b) => visitor.visit_bytes(&b[..]),
            Value::Bytes(s) => self.walk.string(visitor, s.as_bytes(), false, want),
            Value::Utf8(s) => self.walk.string(visitor, s.as_bytes(), true, want),
            Value::Ref(r) => self.node(r, Link::Strong, visitor, want),
            Value::Alias(r) => self.node(r, Link::Slot, visitor, want),
            Value::Weak(w) => match w.upgrade() {
                // Gone: the encoder writes undef. Back into the path: read
                // as undef.
                None => visitor.visit_unit(),
                Some(r) if self.walk.on_path(&r) => visitor.visit_unit(),
                Some(r) => self.node(&r, Link::Weak, visitor, want),
            },
            Value::Foreign(x) => Err(Error::new(ErrorKind::Unsupported(format!(
                "found a value of type {}, which Sereal cannot carry",
                x.type_name()
            )))),
        }
    }

    /// Reads the node `r`, which the slot holds by `link`.
    fn node<'de, V: Visitor<'de>>(
        self,
        r: &Ref,
        link: Link,
        visitor: V,
        want: Want,
    ) -> Result<V::Value> {
        let walk = self.walk;
        let shared = tracked(r);
        let (written, fresh) = match shared {
            true => walk.meet(r, self.at),
            false => (true, walk.fresh),
        };
        if shared && walk.on_path(r) {
            return Err(cycle(link));
        }
        let body = r.try_body()?;
        let levels = match &*body {
            Body::Array(_) | Body::Hash(_) | Body::Frozen(_) => 1,
            Body::Scalar(v) if immortal(v) => 0,
            // a cell or regexp is read where the encoder writes it, after
            // a REFN (a level) or in the slot (none); elsewhere a
            // back-reference names it (none)
            _ => usize::from(written && link != Link::Slot),
        };
        // A blessed container (or regexp) in a slot is written with its
        // class before it, unreferenced, which the byte deserializer
        // refuses: an object must be a reference.
        if link == Link::Slot
            && written
            && r.class().is_some()
            && !matches!(&*body, Body::Scalar(_))
        {
            return Err(Error::new(ErrorKind::Invalid(
                "an object must be a reference (an alias of a blessed container)".into(),
            )));
        }
        if levels == 1 {
            if walk.depth >= walk.max_depth {
                return Err(Error::new(ErrorKind::DepthExceeded(walk.max_depth)));
            }
            walk.depth += 1;
        }
        if shared {
            walk.path.insert(r.addr());
        }
        let outer = std::mem::replace(&mut walk.fresh, fresh);
        let node = r.addr();
        let v = Stack::run(walk, |walk| match &*body {
            Body::Scalar(Value::Alias(_)) => Err(Error::new(ErrorKind::Unsupported(
                "a scalar cell holds an alias, which Sereal cannot carry".into(),
            ))),
            Body::Scalar(v) => {
                let at = At { node, index: 0 };
                Item { walk, value: v, at }.read(visitor, want)
            }
            Body::Array(items) | Body::Frozen(items) => {
                walk.grant(items.len());
                seq(walk, visitor, items, node)
            }
            Body::Hash(h) => {
                walk.grant(h.len());
                let mut entries = Entries {
                    walk,
                    entries: h.entries(),
                    next: 0,
                    node,
                };
                let v = visitor.visit_map(&mut entries)?;
                match entries.next == entries.entries.len() {
                    true => Ok(v),
                    false => Err(Error::new(ErrorKind::Invalid(
                        "the target type left entries of a hash unread".into(),
                    ))),
                }
            }
            Body::Regexp(re) => walk.string(visitor, re.pattern.as_bytes(), re.utf8, want),
        });
        walk.fresh = outer;
        if shared {
            walk.path.remove(&node);
        }
        walk.depth -= levels;
        v
    }

    /// Whether the slot reads as undef where an `Option` is wanted: undef,
    /// a weak reference whose node is gone or that leads back into the
    /// path, or an alias of a cell holding one of those where the encoder
    /// writes the cell in the slot (an `ALIAS` is `Some` of its target).
    fn is_none(&self) -> bool {
        match self.value {
            Value::Alias(r) => match r.try_body().as_deref() {
                Ok(Body::Scalar(v)) if immortal(v) || self.walk.written_at(r, self.at) => {
                    reads_as_undef(self.walk, v)
                }
                _ => false,
            },
            v => reads_as_undef(self.walk, v),
        }
    }
}

/// Whether `v` is undef, or a weak reference whose node is gone or on the
/// path.
fn reads_as_undef(walk: &Walk, v: &Value) -> bool {
    match v {
        Value::Undef | Value::CanonicalUndef => true,
        Value::Weak(w) => w.upgrade().is_none_or(|r| walk.on_path(&r)),
        _ => false,
    }
}

/// The number `v` holds, if it is one.
fn number(v: &Value) -> Option<Number> {
    Some(match *v {
        Value::Int(i) if i < 0 => Number::I(i),
        Value::Int(i) => Number::U(i as u64),
        Value::UInt(u) => Number::U(u),
        Value::Float(f) => Number::F(f64::from(f)),
        Value::Double(d) => Number::F(d),
        _ => return None,
    })
}

/// A non-negative integer: `0` and `1` are booleans where one is wanted.
fn unsigned<'de, V: Visitor<'de>>(visitor: V, u: u64, want: Want) -> Result<V::Value> {
    match (want, u) {
        (Want::Bool, 0 | 1) => visitor.visit_bool(u == 1),
        _ => visitor.visit_u64(u),
    }
}

impl Walk {
    /// A node met for the first time adds its `n` values (and itself) to
    /// the budget.
    fn grant(&mut self, n: usize) {
        if self.fresh {
            let more = n.saturating_add(1).saturating_mul(PER_VALUE);
            self.budget = self.budget.saturating_add(more);
        }
    }
}

/// Hands `items` to `visitor` as a sequence, and reads what it leaves.
fn seq<'de, V: Visitor<'de>>(
    walk: &mut Walk,
    visitor: V,
    items: &[Value],
    node: usize,
) -> Result<V::Value> {
    let mut elements = Elements {
        walk,
        items,
        next: 0,
        node,
    };
    let v = visitor.visit_seq(&mut elements)?;
    // A visitor that stopped early (a fixed-size tuple): read the rest.
    while de::SeqAccess::next_element::<IgnoredAny>(&mut elements)?.is_some() {}
    Ok(v)
}

/// The elements of an array.
struct Elements<'w, 'v> {
    walk: &'w mut Walk,
    items: &'v [Value],
    next: usize,
    node: usize,
}

impl<'de> de::SeqAccess<'de> for Elements<'_, '_> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let Some(value) = self.items.get(self.next) else {
            return Ok(None);
        };
        let at = At {
            node: self.node,
            index: self.next,
        };
        self.next += 1;
        let walk = &mut *self.walk;
        seed.deserialize(Item { walk, value, at }).map(Some)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.next)
    }
}

/// The entries of a hash.
struct Entries<'w, 'v> {
    walk: &'w mut Walk,
    entries: &'v [(Key, Value)],
    next: usize,
    node: usize,
}

impl<'de> de::MapAccess<'de> for Entries<'_, '_> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some((key, _)) = self.entries.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let walk = &*self.walk;
        seed.deserialize(MapKey { walk, key }).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let index = self.next.checked_sub(1).ok_or_else(|| {
            Error::new(ErrorKind::Invalid(
                "a hash value read before its key".into(),
            ))
        })?;
        let at = At {
            node: self.node,
            index,
        };
        let walk = &mut *self.walk;
        seed.deserialize(Item {
            walk,
            value: &self.entries[index].1,
            at,
        })
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len() - self.next)
    }
}

// `deserialize_*` methods that read the slot as `want` says, ignoring the
// arguments of the types given before the visitor.
macro_rules! wanting {
    ($want:expr; $($m:ident($($arg:ty),*)),*) => {$(
        fn $m<V: Visitor<'de>>(self, $(_: $arg,)* visitor: V) -> Result<V::Value> {
            self.read(visitor, $want)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Item<'_, '_> {
    type Error = Error;

    /// As the byte deserializer: the compact forms.
    fn is_human_readable(&self) -> bool {
        false
    }

    wanting!(Want::Any; deserialize_any(), deserialize_bytes(), deserialize_byte_buf(),
        deserialize_unit(), deserialize_ignored_any(), deserialize_seq(), deserialize_map(), deserialize_unit_struct(&'static str),
        deserialize_tuple(usize), deserialize_tuple_struct(&'static str, usize),
        deserialize_struct(&'static str, &'static [&'static str]));
    wanting!(Want::Text; deserialize_char(), deserialize_identifier());
    wanting!(Want::Str; deserialize_str(), deserialize_string());
    wanting!(Want::Float; deserialize_f32(), deserialize_f64());
    wanting!(Want::Int; deserialize_i8(), deserialize_i16(), deserialize_i32(), deserialize_i64(),
        deserialize_i128(), deserialize_u8(), deserialize_u16(), deserialize_u32(), deserialize_u64(),
        deserialize_u128());
    wanting!(Want::Bool; deserialize_bool());

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.is_none() || self.undef_object() {
            self.read(IgnoredAny, Want::Any)?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if crate::de::object::private(name) {
            return self.object(name, visitor);
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let Item { walk, value, at } = self;
        Stack::run(walk, |walk| {
            enum_from(walk, value, at, (value, at), visitor)
        })
    }
}
