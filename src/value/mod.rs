//! The value graph: everything a Sereal document can carry.
//!
//! A [`Value`] is what sits in one slot (an array element, a hash value, the
//! document root). Shared things with identity are [`Node`]s behind a
//! [`Ref`]: arrays, hashes, scalar cells and regexps, optionally blessed into
//! a class. A slot holds a node through a strong reference ([`Value::Ref`]), a
//! weak one ([`Value::Weak`]), or by being that node itself
//! ([`Value::Alias`], Perl's aliasing of one scalar in two places).
//!
//! The encoder decides what to track the way Perl does by reference count: a
//! node held by more than one strong handle (or by any weak one) is written
//! once and referred to by offset afterwards; a node held once costs nothing.
//!
//! # Reading: `get` clones, `get_ref` borrows
//!
//! One convention holds across [`Value`], [`Hash`](struct@Hash) and [`Array`]:
//!
//! - On a [`Value`], which is a handle into shared nodes, `get`/`at`
//!   return an owned clone of the slot (`Option<Value>`). It is cheap: a
//!   string of up to 22 bytes is inline and a node is a counted handle, so
//!   the clone shares the node, and no borrow outlives the call.
//! - `get_ref`/`at_ref`/`as_hash`/`as_array` on a `Value`, [`Ref::body`],
//!   [`Ref::as_hash`] and the like return a guard of the crate's own,
//!   [`Borrowed`] (or [`BorrowedMut`] for `body_mut`, `hash_mut`,
//!   `array_mut`), which reads as `&T` and keeps the node borrowed, as
//!   `RefCell`'s guards do: while it lives, the node cannot be changed
//!   (mutators return an error, never panic). [`Value::pointer`] and
//!   [`Value::pointer_mut`] return the same guards. `get` and `get_ref`
//!   reach the same slots: through strong and live weak references and
//!   aliases.
//! - [`Hash`](struct@Hash) and [`Array`] are a node's content, plain data
//!   reached through such a guard (or owned): their `get` borrows
//!   (`Option<&Value>`), as std's collections do, for as long as the guard
//!   or the owner lives; `.cloned()` gives the owned form.
//!
//! `Value` does not implement `Index` (`v["key"]`): `Index` must return a
//! plain `&Value`, and one into a node's `RefCell` could outlive a change
//! made through another handle on the same node, which would be unsound.
//! Index a borrowed hash instead (`v.as_hash().unwrap()["key"]`, `Undef`
//! when missing, as serde_json's map), or use [`Value::pointer`].
//!
//! ```
//! use sereal::{sereal, Value};
//! let v = sereal!({"name": "ann", "tags": ["a"]});
//! let owned: Value = v.get("name").unwrap();            // a clone
//! let tags = v.get_ref("tags").unwrap();                // Borrowed<'_, Value>
//! assert!(tags.at(0).unwrap() == "a");
//! assert!(v.as_strong_ref().unwrap().hash_mut().is_err()); // borrowed: no change
//! drop(tags);
//! let h = v.as_hash().unwrap();                         // Borrowed<'_, Hash>
//! let name: Option<&Value> = h.get("name");             // borrows from the guard
//! assert!(name.unwrap() == "ann" && owned == "ann");
//! assert!(h["missing"].is_undef());
//! ```
//!
//! ```
//! use sereal::{Value, Ref};
//! let shared = Ref::array(vec![Value::from(1), Value::from(2)]);
//! let root = Value::array([Value::from(shared.clone()), Value::from(shared.clone())]);
//! // the two slots refer to one array
//! let a = root.at(0).unwrap();
//! let b = root.at(1).unwrap();
//! assert!(a.as_strong_ref().unwrap().ptr_eq(b.as_strong_ref().unwrap()));
//! assert_eq!(format!("{root:?}"), "[#1=[1, 2], #1#]");
//! ```

mod access;
mod array;
mod borrow;
mod chunks;
pub(crate) mod collect;
mod compare;
mod convert;
mod document;
mod dumper;
mod eq;
mod fmt;
mod foreign;
mod free;
mod handle;
use handle::mutation_refused;
pub(crate) mod guard;
mod hash;
mod key;
mod keybox;
mod macros;
mod noderc;
pub(crate) mod perl;
mod pointer;
pub(crate) mod prefetch;
mod send;
#[cfg(feature = "serde")]
mod serde;
mod str;

pub use self::array::Array;
pub use self::borrow::{Borrowed, BorrowedMut};
pub(crate) use self::chunks::ChunkPool;
pub use self::document::Document;
pub use self::dumper::Dumper;
pub use self::foreign::Foreign;
pub use self::hash::Hash;
pub(crate) use self::key::content_hash;
pub use self::key::Key;
pub(crate) use self::key::{ClassMap, ClassNames};
pub(crate) use self::keybox::KeyChunks;
pub(crate) use self::noderc::{NodeChunks, NodeRc, NodeWeak};
pub use self::send::{NotSendable, SendDocument};
#[cfg(feature = "json")]
pub(crate) use self::str::latin1_to_string;
pub(crate) use self::str::string_to_latin1;
pub(crate) use self::str::write_quoted;
pub use self::str::Str;

use crate::error::{Error, ErrorKind, Result};
use std::cell::{self, RefCell, UnsafeCell};

/// One slot of a Sereal document: a scalar, or a handle on a [`Node`].
///
/// `Value` is 24 bytes; strings of up to 22 bytes live inside it.
///
/// Equality (`==`) is structural: the same shape, the same sharing, the
/// same classes, and scalars of the same variant and value (integers of
/// either signedness and floats of either width compare by value, as the
/// format picks those widths itself). [`Value::perl_eq`] is Perl's looser
/// view (a boolean equals the `1` or `""` Perl writes for it before
/// protocol 5, the two undefs are equal, an alias equals its cell's value).
/// Both are equivalence relations: reflexive, symmetric and transitive.
///
/// `v["name"]` is not offered: a node's body lives in a `RefCell` (the
/// graph may be shared and changed through any handle), so a plain
/// `&Value` into it could outlive a change made through another handle.
/// [`Value::get_ref`] and [`Value::at_ref`] borrow (the guard reads as
/// `&Value`), [`Value::get`] and [`Value::at`] clone (cheap: a string of up
/// to 22 bytes is inline, a node is a counted handle), and
/// [`Value::as_hash`] borrows a [`Hash`](struct@Hash) that indexes as serde_json's map
/// does (`v.as_hash().unwrap()["name"]`, `Undef` when missing). For a tree that indexes like `serde_json::Value`, decode into
/// one: `sereal::from_slice::<serde_json::Value>(bytes)`.
///
/// ```
/// use sereal::{decode, encode, Ref, Value};
/// let tags = Ref::array(vec![Value::from("a")]);
/// let v = Value::hash([
///     ("id", Value::from(7)),
///     ("name", Value::from("Zoë")),            // UTF-8 string
///     ("mine", Value::Ref(tags.clone())),
///     ("theirs", Value::Ref(tags)),            // the same array, shared
/// ]);
/// let back = decode(&encode(&v).unwrap()).unwrap();
/// assert_eq!(back, v);
/// assert_eq!(back.get("id").and_then(|x| x.as_i64()), Some(7));
/// assert_eq!(back.get_ref("name").unwrap().as_str(), Some("Zoë"));
/// let (a, b) = (back.get("mine").unwrap(), back.get("theirs").unwrap());
/// assert!(a.node().unwrap().ptr_eq(&b.node().unwrap()));
/// ```
#[derive(Clone, Default)]
pub enum Value {
    /// An undefined value (`UNDEF`).
    #[default]
    Undef,
    /// Perl's one shared undefined value, `PL_sv_undef` (`CANONICAL_UNDEF`,
    /// written as `UNDEF` before protocol 3).
    CanonicalUndef,
    /// A boolean (`YES`/`NO` in protocol 5; `1` and `""` before it, as Perl
    /// writes its booleans there).
    Bool(bool),
    /// Perl's immortal true, `PL_sv_yes` (`TRUE`).
    True,
    /// Perl's immortal false, `PL_sv_no` (`FALSE`).
    False,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer above `i64::MAX` (smaller ones may also be here).
    UInt(u64),
    /// A single-precision float (`FLOAT`).
    Float(f32),
    /// A double. Written as `FLOAT` when the value is exact in single
    /// precision (as Perl does), `DOUBLE` otherwise.
    Double(f64),
    /// An x86 long double payload (`LONG_DOUBLE`), kept as opaque bytes.
    LongDouble(Box<[u8; 16]>),
    /// A quad-precision payload (`FLOAT_128`), kept as opaque bytes.
    Float128(Box<[u8; 16]>),
    /// A byte string (`SHORT_BINARY`/`BINARY`), Perl's non-UTF-8 string.
    Bytes(Str),
    /// A UTF-8 flagged string (`STR_UTF8`). The bytes are what the document
    /// held; [`Value::as_str`] validates them.
    Utf8(Str),
    /// A strong reference to a node.
    Ref(Ref),
    /// A weak reference to a node (`WEAKEN`); it does not keep the node alive.
    Weak(WeakRef),
    /// This slot is the node itself: the same scalar cell seen from several
    /// slots (`ALIAS`), or a container stored without a reference.
    Alias(Ref),
    /// Rust data the format cannot carry (Perl's code refs and globs play
    /// this part). The encoder refuses it unless `undef_unknown` or
    /// `stringify_unknown` says what to write.
    Foreign(Foreign),
}

/// A shared, identity-bearing part of the graph: a scalar cell, array,
/// hash or regexp, with an optional class.
///
/// Nodes live behind [`Ref`] handles. Their content is read with
/// [`Ref::body`] and changed with [`Ref::body_mut`] (or the typed helpers),
/// which report a clean error instead of panicking when the node is in use.
///
/// ```
/// use sereal::{Body, Ref};
/// let cell = Ref::scalar(1);
/// let reading = cell.body();
/// assert!(matches!(&*reading, Body::Scalar(v) if v.as_i64() == Some(1)));
/// assert!(cell.body_mut().is_err()); // in use: a clean error
/// drop(reading);
/// cell.set(Body::Scalar(2.into())).unwrap();
/// ```
pub struct Node {
    // Only ever replaced or cloned whole, never borrowed out to callers.
    class: UnsafeCell<Option<Key>>,
    body: RefCell<Body>,
}

/// The content of a [`Node`].
///
/// ```
/// use sereal::{Body, Value};
/// let v = Value::array([1, 2]);
/// match &*v.node().unwrap().body() {
///     Body::Array(a) => assert_eq!(a.len(), 2),
///     _ => unreachable!(),
/// }
/// ```
#[derive(Clone)]
pub enum Body {
    /// A scalar cell (the referent of `\$x`).
    Scalar(Value),
    /// An array.
    Array(Array),
    /// A hash.
    Hash(Hash),
    /// A compiled regular expression (`REGEXP`).
    Regexp(Box<Regexp>),
    /// The values a FREEZE callback returned for an object, awaiting THAW
    /// (an `OBJECT_FREEZE` decoded with no THAW handler for its class). It
    /// is written back as `OBJECT_FREEZE` with the same values (see
    /// [`crate::Decoder::on_thaw`] for the one case where the bytes differ).
    Frozen(Array),
}

/// A regular expression: pattern and modifier flags (Perl's `qr//`).
///
/// ```
/// use sereal::{decode, encode, Body, Ref, Value};
/// # fn main() -> Result<(), sereal::Error> {
/// let doc = decode(&encode(&Value::from(Ref::regexp("^a+$", "i")))?)?;
/// let node = doc.node().unwrap();
/// let Body::Regexp(re) = &*node.body() else { unreachable!() };
/// assert_eq!(re.pattern.as_bytes(), b"^a+$");
/// assert_eq!(re.flags.as_bytes(), b"i");
/// assert!(!re.utf8);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Regexp {
    /// The pattern source.
    pub pattern: Str,
    /// Whether the pattern is UTF-8 flagged.
    pub utf8: bool,
    /// The modifiers, such as `"i"` or `"msix"`.
    pub flags: Str,
}

/// A strong handle on a [`Node`]. Cloning it shares the node.
///
/// ```
/// use sereal::{encode, Ref, Value};
/// let point = Ref::hash([("x", 1)].into_iter().collect()).blessed("Point");
/// point.hash_mut().unwrap().insert("y", 2);
/// let both = Value::array([Value::Ref(point.clone()), Value::Ref(point)]);
/// // the second is a reference to the first: REFN, then REFP
/// assert!(encode(&both).unwrap().contains(&0x29));
/// ```
#[derive(Clone)]
pub struct Ref(pub(crate) NodeRc);

/// A weak handle on a [`Node`]; see [`Value::Weak`].
///
/// ```
/// use sereal::{Ref, Value};
/// let parent = Ref::hash(Default::default());
/// let child = Value::hash([("up", Value::weak(&parent))]);
/// parent.hash_mut().unwrap().insert("kid", child); // no strong cycle
/// let up = parent.downgrade();
/// drop(parent);
/// assert!(up.upgrade().is_none()); // freed: the weak link held nothing
/// ```
#[derive(Clone)]
pub struct WeakRef(pub(crate) NodeWeak);

impl Value {
    /// A reference to a new array of `items`.
    ///
    /// ```
    /// use sereal::Value;
    /// let v = Value::array([1, 2, 3]);
    /// assert_eq!(v.at(2), Some(Value::Int(3)));
    /// ```
    pub fn array<V: Into<Value>>(items: impl IntoIterator<Item = V>) -> Value {
        Value::Ref(Ref::array(items.into_iter().collect::<Array>()))
    }

    /// A reference to a new hash of `entries`, in their order.
    ///
    /// ```
    /// use sereal::Value;
    /// let v = Value::hash([("id", Value::from(1)), ("name", Value::from("ann"))]);
    /// assert_eq!(v.get("name"), Some(Value::from("ann")));
    /// ```
    pub fn hash<K: Into<Key>, V: Into<Value>>(entries: impl IntoIterator<Item = (K, V)>) -> Value {
        Value::Ref(Ref::hash(entries.into_iter().collect()))
    }

    /// A reference to a new scalar cell holding `value` (Perl's `\$x`).
    ///
    /// ```
    /// use sereal::Value;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let v = Value::scalar_ref(5);
    /// assert_eq!(format!("{v:?}"), r"\5");
    /// assert_eq!(&sereal::encode(&v)?[6..], b"\x28\x05"); // REFN, 5
    /// # Ok(())
    /// # }
    /// ```
    pub fn scalar_ref(value: impl Into<Value>) -> Value {
        Value::Ref(Ref::scalar(value))
    }

    /// A byte string.
    ///
    /// ```
    /// use sereal::Value;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let v = Value::bytes([0xff, 0x00]);
    /// assert_eq!(v.as_bytes(), Some(&[0xff, 0x00][..]));
    /// assert_eq!(v.as_str(), None); // not UTF-8
    /// assert_eq!(&sereal::encode(&v)?[6..], b"\x62\xff\x00"); // SHORT_BINARY of 2
    /// # Ok(())
    /// # }
    /// ```
    pub fn bytes(bytes: impl AsRef<[u8]>) -> Value {
        Value::Bytes(Str::new(bytes.as_ref()))
    }

    /// A UTF-8 flagged string, whatever its characters.
    ///
    /// ```
    /// use sereal::Value;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let v = Value::utf8("abc");
    /// assert!(matches!(v, Value::Utf8(_)));
    /// assert!(matches!(Value::from("abc"), Value::Bytes(_))); // ASCII text, unflagged
    /// assert_eq!(&sereal::encode(&v)?[6..], b"\x27\x03abc"); // STR_UTF8 of 3
    /// # Ok(())
    /// # }
    /// ```
    pub fn utf8(s: impl AsRef<str>) -> Value {
        Value::Utf8(Str::new(s.as_ref().as_bytes()))
    }

    /// A weak reference to `r`'s node.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let r = Ref::array(vec![Value::from(1)]);
    /// let v = Value::weak(&r);
    /// assert_eq!(v.at(0), Some(Value::Int(1))); // read through the live node
    /// drop(r);
    /// assert!(v.is_undef()); // the node is gone
    /// ```
    pub fn weak(r: &Ref) -> Value {
        Value::Weak(r.downgrade())
    }

    /// Empties every node reachable from this value, without recursion, so
    /// that reference cycles among them are freed once the last outside
    /// handles go. Decoded documents may hold strong cycles (a hash that
    /// refers to itself, say), which counted handles cannot free on their
    /// own: call this when done with such a graph. Nodes borrowed at the
    /// time are skipped.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let a = Ref::array(vec![]);
    /// a.array_mut().unwrap().push(Value::from(&a)); // a cycle
    /// let weak = a.downgrade();
    /// let v = Value::from(a);
    /// v.dismantle();
    /// drop(v);
    /// assert!(weak.upgrade().is_none());
    /// ```
    pub fn dismantle(&self) {
        let mut stack = vec![self.clone()];
        while let Some(v) = stack.pop() {
            let Some(node) = v.node() else { continue };
            let Ok(mut body) = node.body_mut() else {
                continue;
            };
            match &mut *body {
                Body::Scalar(x) => stack.push(x.take()),
                Body::Array(a) | Body::Frozen(a) => stack.extend(a.drain(..)),
                Body::Hash(h) => stack.extend(std::mem::take(h).into_iter().map(|(_, v)| v)),
                Body::Regexp(_) => {}
            }
        }
    }

    /// Takes the value out, leaving `Undef`.
    ///
    /// ```
    /// use sereal::{Hash, Value};
    /// let mut h = Hash::new();
    /// h.insert("k", "v");
    /// let taken = h.get_mut("k").unwrap().take();
    /// assert_eq!(taken, "v");
    /// assert!(h["k"].is_undef());
    /// ```
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Value>(), 24);
        assert_eq!(std::mem::size_of::<Body>(), 40);
        // with Rc's two counts, 72 bytes: an 80-byte malloc chunk
        assert_eq!(std::mem::size_of::<Node>(), 56);
        assert_eq!(std::mem::size_of::<(Key, Value)>(), 32);
    }

    #[test]
    fn deep_graph_drops_without_recursion() {
        // Miri runs the drops' code, not the machine's stack: fewer levels
        // check it there.
        let (arrays, hashes) = if cfg!(miri) {
            (500, 100)
        } else {
            (1_000_000, 200_000)
        };
        let mut v = Value::from(0);
        for _ in 0..arrays {
            v = Value::array([v]);
        }
        drop(v);
        let mut h = Value::Undef;
        for _ in 0..hashes {
            h = Value::hash([("k", h)]);
        }
        drop(h);
    }

    #[test]
    fn mutation_reports_borrows() {
        let r = Ref::array(vec![Value::from(1)]);
        let reading = r.body();
        assert_eq!(r.array_mut().unwrap_err().kind(), &ErrorKind::Borrowed);
        drop(reading);
        r.array_mut().unwrap().push(Value::from(2));
        assert_eq!(r.as_array().unwrap().len(), 2);
        assert!(r.hash_mut().is_err());
    }
}
