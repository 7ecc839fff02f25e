//! An item of a view: a position in the body, read when asked.

use super::walk::{Body, Container, Frame};
use super::{copy, whole, Path, View};
use crate::error::{Position, Result};
use crate::protocol::tag;
use crate::Document;
use std::borrow::Cow;

/// What an [`Item`] is, as a path step or a reader sees it: arrays and
/// hashes are seen through the references, weak references, objects and
/// aliases that hold them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// `UNDEF` or `CANONICAL_UNDEF`.
    Undef,
    /// `TRUE`, `FALSE`, `YES`, `NO`.
    Bool,
    /// An integer tag.
    Integer,
    /// `FLOAT`, `DOUBLE`, `LONG_DOUBLE`, `FLOAT_128`.
    Float,
    /// A string of either kind.
    String,
    /// An array, or a reference to one.
    Array,
    /// A hash, or a reference to one.
    Hash,
    /// A regexp, or a reference to one.
    Regexp,
    /// An object written by a `FREEZE` callback, or a second reference
    /// to one (which the decoder reads as the object).
    Frozen,
    /// Any other reference (to a scalar, to a reference).
    Reference,
}

/// A value in a [`View`]: a position in the body, read when asked.
///
/// Every method walks the bytes it needs and checks them, so each returns
/// a [`Result`]; the `Option` inside is `None` when the item is not of the
/// kind asked for (`get` on an array, `as_str` of an integer) or has no
/// such key or element. Strings are borrowed from the view.
///
/// ```
/// use sereal::{sereal, view::{Kind, View}};
/// # fn main() -> Result<(), sereal::Error> {
/// let bytes = sereal::encode(&sereal!({"n": 7, "s": "text", "f": 0.5, "u": null, "b": true}))?;
/// let view = View::new(&bytes)?;
/// let root = view.root();
/// let item = |k: &str| root.get(k).map(Option::unwrap);
/// assert_eq!(item("n")?.as_i64()?, Some(7));
/// assert_eq!(item("s")?.as_str()?, Some("text"));
/// assert_eq!(item("f")?.as_f64()?, Some(0.5));
/// assert!(item("u")?.is_undef()?);
/// assert_eq!(item("b")?.as_bool()?, Some(true));
/// assert_eq!(item("s")?.as_i64()?, None); // a string is not an integer here
/// assert_eq!(item("n")?.kind()?, Kind::Integer);
/// assert!(root.get("missing")?.is_none());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy)]
pub struct Item<'v> {
    pub(super) view: &'v View<'v>,
    pub(super) pos: usize,
}

impl std::fmt::Debug for Item<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Item")
            .field("position", &self.position())
            .finish()
    }
}

impl PartialEq for Item<'_> {
    /// The same position of the same view.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.view, other.view) && self.pos == other.pos
    }
}

impl<'v> Item<'v> {
    fn at(&self, pos: usize) -> Item<'v> {
        Item {
            view: self.view,
            pos,
        }
    }

    fn reader(&self) -> Body<'v> {
        self.view.reader()
    }

    /// Where the item starts, as errors count positions: in the document,
    /// or in the decompressed body of a compressed one.
    ///
    /// ```
    /// use sereal::{Position, view::View};
    /// let bytes = sereal::encode(&sereal::sereal!([10, 20])).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// // header (6 bytes), ARRAYREF_2, then the elements
    /// assert_eq!(view.root().index(1).unwrap().unwrap().position(), Position::Document(8));
    /// ```
    pub fn position(&self) -> Position {
        let at = self.view.base + self.pos;
        if self.view.in_body {
            Position::DecompressedBody(at)
        } else {
            Position::Document(at)
        }
    }

    /// What the item is.
    ///
    /// ```
    /// use sereal::{sereal, view::{Kind, View}};
    /// let bytes = sereal::encode(&sereal!([1, "a", [2], {"k": 3}, null])).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// let kinds: Vec<Kind> = view.root().items().unwrap().unwrap().iter().map(|i| i.kind().unwrap()).collect();
    /// assert_eq!(kinds, [Kind::Integer, Kind::String, Kind::Array, Kind::Hash, Kind::Undef]);
    /// ```
    pub fn kind(&self) -> Result<Kind> {
        let r = self.reader();
        let (t, _) = r.resolve(self.pos, &mut 0)?;
        Ok(match t.t {
            tag::POS_0..=tag::NEG_1 | tag::VARINT | tag::ZIGZAG => Kind::Integer,
            tag::FLOAT | tag::DOUBLE | tag::LONG_DOUBLE | tag::FLOAT_128 => Kind::Float,
            tag::UNDEF | tag::CANONICAL_UNDEF => Kind::Undef,
            tag::TRUE | tag::FALSE | tag::YES | tag::NO => Kind::Bool,
            tag::SHORT_BINARY_0..=tag::SHORT_BINARY_31 | tag::BINARY | tag::STR_UTF8 => {
                Kind::String
            }
            tag::REGEXP => Kind::Regexp,
            tag::OBJECT_FREEZE | tag::OBJECTV_FREEZE => Kind::Frozen,
            _ => match r.container(self.pos)? {
                Some(Container { hash: true, .. }) => Kind::Hash,
                Some(_) => Kind::Array,
                None if r.regexp(self.pos)? => Kind::Regexp,
                None => Kind::Reference,
            },
        })
    }

    fn container(&self) -> Result<Option<Container>> {
        self.reader().container(self.pos)
    }

    /// The value of the hash entry `key` (matched by its characters, as
    /// Perl matches keys), in the hash this item is or refers to.
    ///
    /// ```
    /// use sereal::{sereal, view::View};
    /// let bytes = sereal::encode(&sereal!({"café": 1})).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// assert_eq!(view.root().get("café").unwrap().unwrap().as_i64().unwrap(), Some(1));
    /// ```
    pub fn get(&self, key: &str) -> Result<Option<Item<'v>>> {
        match self.container()? {
            Some(c) if c.hash => Ok(self
                .reader()
                .lookup(&c, key, &mut Vec::new())?
                .map(|p| self.at(p))),
            _ => Ok(None),
        }
    }

    /// Element `i` of the array this item is or refers to.
    ///
    /// ```
    /// use sereal::{sereal, view::View};
    /// let bytes = sereal::encode(&sereal!(["a", "b"])).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// assert_eq!(view.root().index(1).unwrap().unwrap().as_str().unwrap(), Some("b"));
    /// assert!(view.root().index(2).unwrap().is_none());
    /// ```
    pub fn index(&self, i: usize) -> Result<Option<Item<'v>>> {
        match self.container()? {
            Some(c) if !c.hash && i < c.count => {
                let items = self.reader().items(&c, i + 1, &mut Vec::new())?;
                Ok(items.last().map(|&p| self.at(p)))
            }
            _ => Ok(None),
        }
    }

    /// The number of elements (or hash entries) of the array (or hash)
    /// this item is or refers to, read from its header.
    ///
    /// ```
    /// use sereal::{sereal, view::View};
    /// let bytes = sereal::encode(&sereal!({"a": 1, "b": [1, 2, 3]})).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// assert_eq!(view.root().len().unwrap(), Some(2));
    /// assert_eq!(view.select("$.b").unwrap()[0].len().unwrap(), Some(3));
    /// assert_eq!(view.select("$.a").unwrap()[0].len().unwrap(), None);
    /// ```
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> Result<Option<usize>> {
        Ok(self.container()?.map(|c| c.count))
    }

    /// The elements of an array, or the values of a hash, in order.
    ///
    /// ```
    /// use sereal::{sereal, view::View};
    /// let bytes = sereal::encode(&sereal!([1, 2, 3])).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// let sum: i64 = view.root().items().unwrap().unwrap().iter().map(|i| i.as_i64().unwrap().unwrap()).sum();
    /// assert_eq!(sum, 6);
    /// ```
    pub fn items(&self) -> Result<Option<Vec<Item<'v>>>> {
        let Some(c) = self.container()? else {
            return Ok(None);
        };
        let items = self.reader().items(&c, c.count, &mut Vec::new())?;
        Ok(Some(items.into_iter().map(|p| self.at(p)).collect()))
    }

    /// The entries of a hash, in the document's order: each key (a string
    /// item, `COPY`s followed) and its value.
    ///
    /// ```
    /// use sereal::{sereal, view::View};
    /// let bytes = sereal::encode(&sereal!({"a": 1})).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// let entries = view.root().entries().unwrap().unwrap();
    /// assert_eq!(entries[0].0.as_str().unwrap(), Some("a"));
    /// assert_eq!(entries[0].1.as_i64().unwrap(), Some(1));
    /// ```
    pub fn entries(&self) -> Result<Option<Vec<(Item<'v>, Item<'v>)>>> {
        let Some(c) = self.container()?.filter(|c| c.hash) else {
            return Ok(None);
        };
        let r = self.reader();
        let mut stack: Vec<Frame> = Vec::new();
        let mut out = Vec::with_capacity(c.count);
        let mut pos = c.first;
        for _ in 0..c.count {
            let value = r.key(pos)?.1;
            out.push((self.at(pos), self.at(value)));
            pos = r.walk(value, &mut stack)?;
        }
        Ok(Some(out))
    }

    /// The class of the object this item is (or refers to), as the
    /// decoder blesses it: named by the item's own `OBJECT` or `OBJECTV`,
    /// or, for a second reference to an object (a `REFP`, which names no
    /// class), by the object that blesses what it refers to. Finding that
    /// one walks the whole document once per view, the first time a
    /// reference without a class of its own is asked.
    ///
    /// ```
    /// use sereal::{view::View, Ref, Value};
    /// let user = Ref::hash([("id", 1)].into()).blessed("My::User");
    /// let bytes = sereal::encode(&Value::array([&user, &user])).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// // the first is written as an object, the second as a REFP to it
    /// for item in view.select("$[*]").unwrap() {
    ///     assert_eq!(item.class().unwrap().as_deref(), Some("My::User"));
    /// }
    /// assert_eq!(view.select("$[1].id").unwrap()[0].as_i64().unwrap(), Some(1));
    /// ```
    pub fn class(&self) -> Result<Option<Cow<'v, str>>> {
        Ok(self.reader().class(self.pos)?.map(|t| t.to_str()))
    }

    /// Whether the item is undef.
    pub fn is_undef(&self) -> Result<bool> {
        let (t, _) = self.reader().resolve(self.pos, &mut 0)?;
        Ok(matches!(t.t, tag::UNDEF | tag::CANONICAL_UNDEF))
    }

    /// The item as an `i64`, for integers that fit (as
    /// [`Value::as_i64`](crate::Value::as_i64): a string is not read as one).
    pub fn as_i64(&self) -> Result<Option<i64>> {
        Ok(match self.integer()? {
            Some(Int::Signed(i)) => Some(i),
            Some(Int::Unsigned(u)) => i64::try_from(u).ok(),
            None => None,
        })
    }

    /// The item as a `u64`, for non-negative integers.
    pub fn as_u64(&self) -> Result<Option<u64>> {
        Ok(match self.integer()? {
            Some(Int::Signed(i)) => u64::try_from(i).ok(),
            Some(Int::Unsigned(u)) => Some(u),
            None => None,
        })
    }

    fn integer(&self) -> Result<Option<Int>> {
        let (t, mut c) = self.reader().resolve(self.pos, &mut 0)?;
        Ok(match t.t {
            tag::POS_0..=tag::POS_15 => Some(Int::Signed(i64::from(t.t))),
            tag::NEG_16..=tag::NEG_1 => Some(Int::Signed(i64::from(t.t) - 32)),
            tag::VARINT => Some(Int::Unsigned(c.varint()?)),
            tag::ZIGZAG => Some(Int::Signed(crate::protocol::zigzag_decode(c.varint()?))),
            _ => None,
        })
    }

    /// The item as an `f64`, for any number.
    pub fn as_f64(&self) -> Result<Option<f64>> {
        let (t, mut c) = self.reader().resolve(self.pos, &mut 0)?;
        Ok(match t.t {
            tag::FLOAT => Some(f64::from(f32::from_le_bytes(c.fixed()?))),
            tag::DOUBLE => Some(f64::from_le_bytes(c.fixed()?)),
            _ => match self.integer()? {
                Some(Int::Signed(i)) => Some(i as f64),
                Some(Int::Unsigned(u)) => Some(u as f64),
                None => None,
            },
        })
    }

    /// The item as a boolean, for the boolean tags (not Perl's truth).
    pub fn as_bool(&self) -> Result<Option<bool>> {
        let (t, _) = self.reader().resolve(self.pos, &mut 0)?;
        Ok(match t.t {
            tag::TRUE | tag::YES => Some(true),
            tag::FALSE | tag::NO => Some(false),
            _ => None,
        })
    }

    /// The bytes of a string item (either kind), borrowed from the view.
    ///
    /// ```
    /// use sereal::{view::View, Value};
    /// let bytes = sereal::encode(&Value::bytes(b"\xff\x00")).unwrap();
    /// assert_eq!(View::new(&bytes).unwrap().root().as_bytes().unwrap(), Some(&b"\xff\x00"[..]));
    /// ```
    pub fn as_bytes(&self) -> Result<Option<&'v [u8]>> {
        Ok(self.reader().text(self.pos)?.map(|t| t.bytes))
    }

    /// A string item as text, when its bytes are valid UTF-8 (as
    /// [`Value::as_str`](crate::Value::as_str)), borrowed from the view.
    pub fn as_str(&self) -> Result<Option<&'v str>> {
        Ok(self.as_bytes()?.and_then(|b| std::str::from_utf8(b).ok()))
    }

    /// The items `path` selects from this one; see [`View::select`].
    ///
    /// ```
    /// use sereal::{sereal, view::View};
    /// let bytes = sereal::encode(&sereal!({"a": {"b": [1, 2]}})).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// let a = view.root().get("a").unwrap().unwrap();
    /// assert_eq!(a.select("$.b[-1]").unwrap()[0].as_i64().unwrap(), Some(2));
    /// ```
    pub fn select(&self, path: &str) -> Result<Vec<Item<'v>>> {
        self.select_path(&Path::parse(path)?)
    }

    /// [`select`](Self::select) with a parsed path.
    pub fn select_path(&self, path: &Path) -> Result<Vec<Item<'v>>> {
        let found = path.select(&self.reader(), self.pos)?;
        Ok(found.into_iter().map(|p| self.at(p)).collect())
    }

    /// The item's own bytes in the body, from its first tag to its end.
    /// Back-references in them name offsets of the whole body; see
    /// [`to_document`](Self::to_document) for bytes that stand alone.
    ///
    /// ```
    /// use sereal::{sereal, view::View};
    /// let bytes = sereal::encode(&sereal!({"k": "v"})).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// assert_eq!(view.select("$.k").unwrap()[0].raw().unwrap(), b"\x61v");
    /// ```
    pub fn raw(&self) -> Result<&'v [u8]> {
        let end = self.reader().skip(self.pos)?;
        Ok(&self.view.body[self.pos..end])
    }

    /// The item as a value graph, as decoding the whole document and
    /// walking to it would give: the same value, sharing and cycles, class
    /// names and weak references; hash keys and class names the item
    /// shares with the rest of the document are read from there. It goes
    /// through the view's decoder, with its options, checks and hooks.
    ///
    /// The item's bytes are decoded on their own when every reference
    /// inside it points inside it. An item that refers to a value outside
    /// it (a second reference to an object held elsewhere, a cycle through
    /// its parent) is found by decoding the whole document, which takes the
    /// time and memory a [`decode`](crate::decode) takes. So is an item
    /// whose bytes the decoder refuses (a hash key written twice), so that
    /// the error is the whole document's, at its offset in the document.
    ///
    /// ```
    /// use sereal::{sereal, view::View, Ref, Value};
    /// let shared = Ref::hash([("name", Value::from("core"))].into_iter().collect());
    /// let doc = sereal!({"a": {"team": (&shared)}, "b": {"team": (&shared), "lead": (&shared)}});
    /// let bytes = sereal::encode(&doc).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// let b = view.root().get("b").unwrap().unwrap().decode().unwrap();
    /// assert_eq!(*b, doc.get("b").unwrap()); // the same shape and sharing
    /// let team = b.get("team").unwrap().node().unwrap();
    /// assert!(team.ptr_eq(&b.get("lead").unwrap().node().unwrap()));
    /// ```
    pub fn decode(&self) -> Result<Document> {
        match copy::extract(self.view, self.pos)? {
            // The error of the item's own document would count its offset
            // in that document, not in the view's.
            Some(doc) => {
                let item = self.view.dec.decode(&doc);
                item.or_else(|_| whole::decode_whole(self.view, self.pos))
            }
            None => whole::decode_whole(self.view, self.pos),
        }
    }

    /// The item as a document of its own, in the view's protocol version
    /// (uncompressed): what [`decode`](Self::decode) gives, written so that
    /// any Sereal decoder reads it alone.
    ///
    /// ```
    /// use sereal::{sereal, view::View};
    /// let bytes = sereal::encode(&sereal!([{"id": 1}, {"id": 2}])).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// let second = view.root().index(1).unwrap().unwrap().to_document().unwrap();
    /// assert_eq!(*sereal::decode(&second).unwrap(), sereal!({"id": 2}));
    /// ```
    pub fn to_document(&self) -> Result<Vec<u8>> {
        match copy::extract(self.view, self.pos)? {
            Some(doc) => Ok(doc),
            None => {
                let value = whole::decode_whole(self.view, self.pos)?;
                let opts = crate::EncoderOptions::new().protocol_version(self.view.version);
                crate::encode_with(&value, &opts)
            }
        }
    }

    /// The item deserialized into `T` through serde, as
    /// [`from_slice`](crate::from_slice) would read it alone, with the
    /// view's decoder options. When that fails, the item is read from the
    /// whole document's graph (as [`from_value_with`](crate::from_value_with)
    /// reads it), so that an error in the bytes is the whole document's,
    /// at its offset there.
    ///
    /// ```
    /// use serde::Deserialize;
    /// use sereal::{sereal, view::View};
    /// #[derive(Deserialize, Debug, PartialEq)]
    /// struct User { id: u32, email: String }
    /// let bytes = sereal::encode(&sereal!([{"id": 1, "email": "a@x"}, {"id": "2", "email": "b@x"}])).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// let last: User = view.select("$[-1]").unwrap()[0].deserialize().unwrap();
    /// assert_eq!(last, User { id: 2, email: "b@x".into() }); // Perl's "2" reads as 2
    /// ```
    #[cfg(feature = "serde")]
    pub fn deserialize<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        let opts = self.view.dec.options();
        let whole = || crate::from_value_with(&*whole::decode_whole(self.view, self.pos)?, opts);
        match copy::extract(self.view, self.pos)? {
            // An error of the item's own document would count its offset
            // in that document: the whole document's names it in the view's.
            Some(doc) => crate::from_slice_with(&doc, opts.clone()).or_else(|_| whole()),
            None => whole(),
        }
    }
}

/// An integer as its tag holds it.
enum Int {
    Signed(i64),
    Unsigned(u64),
}
