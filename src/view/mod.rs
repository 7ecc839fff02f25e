//! Reading a document without decoding it: a borrowed [`View`] answers by
//! key, index and [`Path`], straight from the bytes; [`merge`] and
//! [`Splitter`] join and cut documents on their bytes.
//!
//! A view walks the tags between the root and what is asked for, and
//! builds nothing: asking for the `email` of the last of 200,000 records
//! walks past the others without making a value of them. Strings are
//! borrowed from the input (or from the body, decompressed once when the
//! view is made). What is found is an [`Item`]: read its scalar in place
//! (`as_str`, `as_i64`...), step further, or hand it out whole as a
//! [`Value`](crate::Value) ([`Item::decode`]), as any `T: Deserialize`
//! (`Item::deserialize`, with the `serde` feature), or as a document of its own
//! ([`Item::to_document`]).
//!
//! ```
//! use sereal::{sereal, view::View};
//! # fn main() -> Result<(), sereal::Error> {
//! let bytes = sereal::encode(&sereal!([
//!     {"id": 1, "email": "ann@example.com", "tags": ["admin"]},
//!     {"id": 2, "email": "bob@example.com", "tags": []},
//! ]))?;
//! let view = View::new(&bytes)?;
//! let emails: Vec<&str> = view
//!     .select("$[*].email")?
//!     .iter()
//!     .map(|item| item.as_str().map(Option::unwrap_or_default))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(emails, ["ann@example.com", "bob@example.com"]);
//! let second = view.root().index(1)?.unwrap();
//! assert_eq!(second.get("id")?.unwrap().as_i64()?, Some(2));
//! assert_eq!(*second.decode()?, sereal!({"id": 2, "email": "bob@example.com", "tags": []}));
//! # Ok(())
//! # }
//! ```
//!
//! # Checks
//!
//! A view checks what it walks as the decoder does, with the same
//! [`DecoderOptions`](crate::DecoderOptions) limits, errors and positions:
//! every tag, length, count and back-reference offset between the root and
//! the answer, and the nesting depth of each item it walks past. What it
//! does not walk, it does not check: a document cut short after the answer,
//! or malformed beyond it, still answers. [`View::check`] walks the whole
//! document (trailing data included) for the caller who wants every
//! structural error first. What only building the values finds (a
//! duplicate hash key, a string that is not UTF-8 under `validate_utf8`,
//! a class refused by a thaw hook) is found when an item is decoded, by
//! the decoder itself.
//!
//! Reading a view never panics and never recurses on the input's nesting;
//! the memory it takes beside the input is the decompressed body (limited
//! as the decoder's is) and one small frame per open container of the
//! item it walks.

mod copy;
mod fast;
mod item;
mod merge;
mod objects;
mod path;
mod split;
mod walk;
mod whole;

pub use item::{Item, Kind};
pub use merge::{merge, MergeOptions};
pub use path::Path;
pub use split::Splitter;

use crate::decoder::{document_size_check, frame, Decoder, Header};
use crate::error::{Error, ErrorKind, Result};
use objects::Objects;
use std::borrow::Cow;
use std::sync::OnceLock;
use walk::Body;

/// A document read without decoding it: see the [module docs](self).
///
/// Made by [`View::new`] (the default options) or [`Decoder::view`], which
/// read the header and decompress a compressed body once; each question is
/// answered by walking the body's tags.
///
/// ```
/// use sereal::{sereal, view::View};
/// let bytes = sereal::encode(&sereal!({"name": "ann", "roles": ["admin", "ops"]})).unwrap();
/// let view = View::new(&bytes).unwrap();
/// let roles = view.root().get("roles").unwrap().unwrap();
/// assert_eq!(roles.len().unwrap(), Some(2));
/// assert_eq!(roles.index(1).unwrap().unwrap().as_str().unwrap(), Some("ops"));
/// ```
#[derive(Clone)]
pub struct View<'a> {
    body: Cow<'a, [u8]>,
    shift: usize,
    base: usize,
    in_body: bool,
    version: u8,
    input: &'a [u8],
    dec: &'a Decoder,
    objects: OnceLock<Objects>,
}

impl std::fmt::Debug for View<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View")
            .field("version", &self.version)
            .field("body_len", &self.body.len())
            .field("compressed", &self.in_body)
            .finish()
    }
}

impl<'a> View<'a> {
    /// A view of the document `input`, read with the default options:
    /// its header is read and a compressed body decompressed (within
    /// `max_uncompressed_size` and `max_memory`); its body is not walked.
    ///
    /// ```
    /// use sereal::{view::View, ErrorKind};
    /// let view = View::new(b"=\xF3rl\x05\x00\x42\x01\x61a").unwrap(); // [1, "a"]
    /// assert_eq!(view.root().len().unwrap(), Some(2));
    /// assert_eq!(View::new(b"{}").unwrap_err().kind(), &ErrorKind::BadMagic);
    /// ```
    pub fn new(input: &'a [u8]) -> Result<View<'a>> {
        View::open(crate::decoder::default_decoder(), input)
    }

    pub(crate) fn open(dec: &'a Decoder, input: &'a [u8]) -> Result<View<'a>> {
        let header = Header::parse(input)?;
        let opts = dec.options();
        document_size_check(opts, input.len())?;
        let (body, shift, frame_end) = frame(opts, input, &header, 0)?;
        if let Some(end) = frame_end.filter(|&e| e != input.len()) {
            return Err(Error::at(ErrorKind::TrailingData, end));
        }
        let in_body = frame_end.is_some();
        Ok(View {
            body,
            shift,
            base: if in_body { 0 } else { header.len },
            in_body,
            version: header.version,
            input,
            dec,
            objects: OnceLock::new(),
        })
    }

    pub(crate) fn reader(&self) -> Body<'_> {
        Body {
            buf: &self.body,
            shift: self.shift,
            base: self.base,
            in_body: self.in_body,
            opts: self.dec.options(),
            objects: &self.objects,
        }
    }

    /// The document's protocol version.
    ///
    /// ```
    /// let bytes = sereal::encode(&sereal::Value::from(1)).unwrap();
    /// assert_eq!(sereal::view::View::new(&bytes).unwrap().version(), 5);
    /// ```
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The document's root value.
    ///
    /// ```
    /// use sereal::view::{Kind, View};
    /// let bytes = sereal::encode(&sereal::sereal!({"a": 1})).unwrap();
    /// assert_eq!(View::new(&bytes).unwrap().root().kind().unwrap(), Kind::Hash);
    /// ```
    pub fn root(&self) -> Item<'_> {
        Item { view: self, pos: 0 }
    }

    /// The items `path` selects, in order; see [`Path`] for the language.
    /// A malformed path is an [`ErrorKind::BadPath`]; a path that matches
    /// nothing gives no items.
    ///
    /// ```
    /// use sereal::{sereal, view::View};
    /// let bytes = sereal::encode(&sereal!({"rows": [[1, 2], [3, 4], [5, 6]]})).unwrap();
    /// let view = View::new(&bytes).unwrap();
    /// let firsts: Vec<i64> = view
    ///     .select("$.rows[*][0]")
    ///     .unwrap()
    ///     .iter()
    ///     .map(|i| i.as_i64().unwrap().unwrap())
    ///     .collect();
    /// assert_eq!(firsts, [1, 3, 5]);
    /// assert!(view.select("$.nothing[0]").unwrap().is_empty());
    /// ```
    pub fn select(&self, path: &str) -> Result<Vec<Item<'_>>> {
        self.root().select(path)
    }

    /// [`select`](Self::select) with a path parsed once, for many documents.
    ///
    /// ```
    /// use sereal::{sereal, view::{Path, View}};
    /// let path = Path::parse("$.id").unwrap();
    /// for id in [1, 2] {
    ///     let bytes = sereal::encode(&sereal!({"id": id})).unwrap();
    ///     let found = View::new(&bytes).unwrap().select_path(&path).unwrap()[0].as_i64().unwrap();
    ///     assert_eq!(found, Some(id));
    /// }
    /// ```
    pub fn select_path(&self, path: &Path) -> Result<Vec<Item<'_>>> {
        self.root().select_path(path)
    }

    /// Walks the whole body as the decoder reads it: every tag, length,
    /// count, offset and limit, and nothing after the root item. A view
    /// that passes it answers every question without a structural error.
    ///
    /// ```
    /// use sereal::{view::View, ErrorKind};
    /// let mut bytes = sereal::encode(&sereal::sereal!([1, 2])).unwrap();
    /// assert!(View::new(&bytes).unwrap().check().is_ok());
    /// bytes.push(0x01);
    /// let e = View::new(&bytes).unwrap().check().unwrap_err();
    /// assert_eq!((e.kind(), e.offset()), (&ErrorKind::TrailingData, Some(bytes.len() - 1)));
    /// ```
    pub fn check(&self) -> Result<()> {
        self.checked_end().map(|_| ())
    }

    /// [`check`](Self::check), and where the root item ends (the body's end).
    pub(crate) fn checked_end(&self) -> Result<usize> {
        let end = self.reader().walk(0, &mut Vec::new())?;
        if end != self.body.len() {
            return Err(self.reader().error(ErrorKind::TrailingData, end));
        }
        Ok(end)
    }

    /// The decoder the view reads with.
    pub(crate) fn decoder(&self) -> &'a Decoder {
        self.dec
    }

    /// The document the view reads.
    pub(crate) fn input(&self) -> &'a [u8] {
        self.input
    }
}

impl Decoder {
    /// A [`View`] of the document `input`, read with this decoder's
    /// options (limits, `refuse_objects`...); items it decodes go through
    /// this decoder, its thaw hooks included.
    ///
    /// ```
    /// use sereal::{Decoder, DecoderOptions, ErrorKind};
    /// let bytes = sereal::encode(&sereal::sereal!([[1, 2, 3]])).unwrap();
    /// let dec = Decoder::new(DecoderOptions::new().max_num_array_entries(2));
    /// let view = dec.view(&bytes).unwrap();
    /// let e = view.select("$[0][0]").unwrap_err();
    /// assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)));
    /// ```
    pub fn view<'a>(&'a self, input: &'a [u8]) -> Result<View<'a>> {
        View::open(self, input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Position;

    /// An item the decoder refuses fails with the error decoding the
    /// whole document gives, at its offset in the document (not in the
    /// item's bytes copied into a document of their own).
    #[test]
    fn a_refused_item_fails_at_its_offset_in_the_document() {
        // [1, {"a" => 1, "a" => 2}]: the second "a" is at offset 12
        let doc = b"=\xF3rl\x05\x00\x42\x01\x52\x61a\x01\x61a\x02";
        let whole = crate::decode(doc).unwrap_err();
        assert_eq!(whole.position(), Some(Position::Document(12)));
        let view = View::new(doc).unwrap();
        let e = view.root().index(1).unwrap().unwrap().decode().unwrap_err();
        assert_eq!((e.kind(), e.position()), (whole.kind(), whole.position()));
    }
}
