//! JSON views of a Sereal graph: a plain one for people, and a lossless one
//! that converts back to the same graph, and so to the same bytes.
//!
//! **Plain** JSON is what a person wants to read: hashes become objects,
//! arrays arrays, strings strings, numbers numbers, undef `null`. References
//! are followed (a node met twice is written twice; a reference back into a
//! node being written, a cycle, becomes `null`), classes, weak references and
//! the difference between byte and UTF-8 strings are dropped. Reading plain
//! JSON makes a fresh tree: objects become hash references, arrays array
//! references.
//!
//! **Lossless** JSON keeps everything the graph holds: every scalar kind with
//! its exact bits, byte versus UTF-8 strings (even invalid UTF-8), shared
//! nodes and cycles, weak references and aliases, classes, hash key order and
//! flags, regexps and frozen objects, and for a [`Document`] the protocol
//! version, compression and user header. Nodes are listed once, in a table,
//! and referred to by their index there; so the JSON is never nested deeper
//! than a few levels, however deep the graph. The shapes:
//!
//! | JSON | Sereal value |
//! |---|---|
//! | `null`, `true`, `false` | `Undef`, `Bool` |
//! | an integer | `Int` (`UInt` above `i64::MAX`) |
//! | `{"uint": 7}` | `UInt` of a value that fits an `i64` |
//! | a number with a fraction or exponent | `Double` |
//! | `{"double": "NaN"}`, `{"float": "0.1"}` | `Double`, `Float`: Rust's float syntax (`inf`, `-inf`, `NaN`), or `0x` and the exact bits in hex |
//! | `{"long_double": hex}`, `{"float128": hex}` | the 16 opaque bytes, 32 hex digits |
//! | `{"sv": "yes"}`, `{"sv": "no"}`, `{"sv": "undef"}` | `True`, `False`, `CanonicalUndef` |
//! | a string | `Bytes` if ASCII, `Utf8` otherwise (as `Value::from(&str)`) |
//! | `{"utf8": "abc"}` | `Utf8` of ASCII text |
//! | `{"bytes": "caf\u00e9"}` | `Bytes` not all ASCII: one character U+0000 to U+00FF per byte |
//! | `{"utf8_bytes": "\u00ff"}` | `Utf8` whose bytes are not valid UTF-8, one character per byte |
//! | `{"ref": 3}`, `{"weak": 3}`, `{"alias": 3}` | `Ref`, `Weak`, `Alias` of node 3 |
//! | `{"weak": null}` | a weak reference whose node is gone |
//!
//! A node is an object with one body and an optional `"class"` (a string in
//! the forms above): `{"array": [...]}`, `{"hash": [[key, value], ...]}` (keys
//! in order, each key a string in the forms above), `{"scalar": value}`,
//! `{"regexp": {"pattern": string, "flags": string}}` or `{"frozen": [...]}`.
//! A document is
//!
//! ```json
//! {"format": "sereal-lossless-1", "protocol": 5, "compression": "none",
//!  "header": value, "body": value, "nodes": [node, node, ...]}
//! ```
//!
//! with `"header"` present only when the document has user header data, and
//! `"protocol"`, `"compression"` and `"nodes"` optional. `"compression"` is
//! `"none"`, `"snappy"`, `"zlib"`, `"zstd"`, or `"snappy_legacy"` for
//! protocol 1's non-incremental Snappy framing.
//!
//! ```
//! use sereal::{json, Ref, Value};
//! let shared = Ref::array(vec![Value::from(1), Value::utf8("é")]);
//! let v = Value::array([Value::from(&shared), Value::from(&shared)]);
//! drop(shared);
//! let j = json::to_json(&v, true).unwrap();
//! assert_eq!(
//!     j,
//!     serde_json::json!({
//!         "format": "sereal-lossless-1",
//!         "body": {"ref": 0},
//!         "nodes": [{"array": [{"ref": 1}, {"ref": 1}]}, {"array": [1, "é"]}],
//!     })
//! );
//! let back = json::from_json(&j, true).unwrap();
//! assert_eq!(sereal::encode(&back).unwrap(), sereal::encode(&v).unwrap());
//! assert_eq!(json::to_json(&v, false).unwrap().to_string(), r#"[[1,"é"],[1,"é"]]"#);
//! ```

use crate::compress::Compression;
use crate::decoder::{Decoder, Header};
use crate::encoder::Encoder;
use crate::error::{Error, ErrorKind, Result};
use crate::value::{
    latin1_to_string, string_to_latin1, Array, Body, Hash, Key, Ref, Regexp, Str, Value,
};
use hashbrown::HashMap;
use serde_json::{json, Map, Number, Value as Json};

mod lossless;
mod plain;

pub use lossless::LosslessNodes;
use lossless::{Builder, Lossless};
use plain::{plain_from_json, Plain};

/// The `"format"` of a lossless document.
pub const LOSSLESS_FORMAT: &str = "sereal-lossless-1";

/// The most JSON values plain output may hold: shared nodes are written out
/// again at each meeting, so a small document can stand for a huge tree.
pub const PLAIN_MAX_VALUES: usize = 10_000_000;

/// The deepest plain output may nest arrays and objects: 127, the deepest
/// `serde_json` reads JSON text by default, so what [`to_json`] writes
/// reads back. `serde_json::Value`'s
/// `Drop`, `Debug` and serialization recurse once per level, several
/// hundred bytes of stack a level in a debug build, so a much deeper tree
/// could overflow the stack of the thread that receives it; lossless JSON,
/// whose nodes sit side by side in one table, has no such limit.
pub const PLAIN_MAX_DEPTH: usize = 127;

/// A decoded Sereal document: the header fields that matter for writing it
/// again, the user header data, and the body.
///
/// ```
/// use sereal::json::Document;
/// use sereal::{Decoder, Encoder, EncoderOptions, Value};
/// let mut enc = Encoder::new(EncoderOptions::new().protocol_version(3)).unwrap();
/// let bytes = enc.encode_with_header(&Value::array([1, 2]), &Value::from("meta")).unwrap();
/// let doc = Document::decode(&bytes, &Decoder::default()).unwrap();
/// let j = doc.to_json(true).unwrap();
/// assert_eq!(j["protocol"], 3);
/// let again = Document::from_json(&j, true).unwrap();
/// assert_eq!(again.encode(&mut enc).unwrap(), bytes);
/// ```
#[derive(Debug, Default)]
pub struct Document {
    /// The forms of writing the document's bytes chose that its graph does
    /// not keep (see [`Forms`]): [`Document::encode`] writes them again.
    /// (Declared first, so that its handles go before the body's nodes are
    /// freed.)
    pub forms: Forms,
    /// The protocol version, when known.
    pub protocol: Option<u8>,
    /// The body compression, when known.
    pub compression: Option<Compression>,
    /// Whether the body is in protocol 1's non-incremental Snappy framing
    /// ([`EncoderOptions::legacy_snappy`](crate::EncoderOptions::legacy_snappy);
    /// `"compression": "snappy_legacy"` in lossless JSON).
    pub legacy_snappy: bool,
    /// The user header data, if the document has any.
    pub header: Option<crate::Document>,
    /// The body.
    pub body: crate::Document,
    /// Nodes that the JSON reaches only through weak references but that
    /// were alive when it was written (something outside the graph held
    /// them): held here so those references keep working while the document
    /// lives. Empty for decoded documents.
    pub keep_alive: Vec<Ref>,
}

impl Document {
    /// Decodes a document: its header fields, user header data, body, and
    /// the [`Forms`] its bytes chose.
    ///
    /// ```
    /// use sereal::json::Document;
    /// use sereal::{Compression, Decoder, Encoder, EncoderOptions, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let opts = EncoderOptions::new().protocol_version(4).compress(Compression::Zlib).compress_threshold(0);
    /// let bytes = Encoder::new(opts)?.encode(&Value::from("hello ".repeat(20)))?;
    /// let doc = Document::decode(&bytes, &Decoder::default())?;
    /// assert_eq!((doc.protocol, doc.compression), (Some(4), Some(Compression::Zlib)));
    /// assert!(doc.header.is_none());
    /// assert_eq!(doc.body.as_str(), Some("hello ".repeat(20).as_str()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn decode(input: &[u8], decoder: &Decoder) -> Result<Document> {
        Ok(Document::read(input, decoder, false)?.0)
    }

    /// As [`Document::decode`], for the document at the start of `input`,
    /// which may be followed by more data (a stream of concatenated
    /// documents): also returns the number of bytes it took.
    ///
    /// ```
    /// use sereal::json::Document;
    /// use sereal::{encode, Decoder, Value};
    /// let mut stream = encode(&Value::from(1)).unwrap();
    /// stream.extend(encode(&Value::from("two")).unwrap());
    /// let (first, used) = Document::decode_prefix(&stream, &Decoder::default()).unwrap();
    /// assert_eq!(*first.body, Value::from(1));
    /// assert_eq!(used, stream.len() / 2 - 1);
    /// ```
    pub fn decode_prefix(input: &[u8], decoder: &Decoder) -> Result<(Document, usize)> {
        Document::read(input, decoder, true)
    }

    fn read(input: &[u8], decoder: &Decoder, prefix: bool) -> Result<(Document, usize)> {
        let h = Header::parse(input)?;
        let (header, body, used, forms) = decoder.decode_with_forms(input, prefix)?;
        let doc = Document {
            forms,
            protocol: Some(h.version),
            compression: Some(h.compression),
            legacy_snappy: h.legacy_snappy,
            header,
            body,
            keep_alive: Vec::new(),
        };
        Ok((doc, used))
    }

    /// Encodes the document with `encoder` (its options decide the protocol
    /// and compression), with the user header data if there is any, and
    /// the document's [`Forms`].
    ///
    /// ```
    /// use sereal::json::Document;
    /// use sereal::{Decoder, Encoder, EncoderOptions};
    /// # fn main() -> Result<(), sereal::Error> {
    /// // Perl's [[1, 2]] with the inner array written as REFN ARRAY, not ARRAYREF_2
    /// let perl = b"=\xF3rl\x05\x00\x41\x28\x2b\x02\x01\x02";
    /// let mut doc = Document::decode(perl, &Decoder::default())?;
    /// let mut enc = Encoder::new(EncoderOptions::new())?;
    /// assert_eq!(doc.encode(&mut enc)?, perl); // the document's forms kept
    /// doc.forms = Default::default(); // the graph alone: the short form
    /// assert_eq!(doc.encode(&mut enc)?, b"=\xF3rl\x05\x00\x41\x42\x01\x02");
    /// # Ok(())
    /// # }
    /// ```
    pub fn encode(&self, encoder: &mut Encoder) -> Result<Vec<u8>> {
        encoder.with_pads(&self.forms.pad, |encoder| match &self.header {
            Some(h) => encoder.encode_with_header(&self.body, h),
            None => encoder.encode(&self.body),
        })
    }

    /// The document as JSON: lossless, with the header fields, user header
    /// and node table; or plain, the body alone.
    ///
    /// ```
    /// use sereal::json::Document;
    /// use sereal::{Decoder, Value};
    /// use serde_json::json;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let bytes = sereal::encode(&Value::hash([("name", Value::utf8("ann"))]))?;
    /// let doc = Document::decode(&bytes, &Decoder::default())?;
    /// assert_eq!(doc.to_json(false)?, json!({"name": "ann"}));
    /// assert_eq!(
    ///     doc.to_json(true)?,
    ///     json!({
    ///         "format": "sereal-lossless-1",
    ///         "protocol": 5,
    ///         "compression": "none",
    ///         "body": {"ref": 0},
    ///         "nodes": [{"hash": [["name", {"utf8": "ann"}]]}],
    ///     })
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub fn to_json(&self, lossless: bool) -> Result<Json> {
        if !lossless {
            return to_json(&self.body, false);
        }
        let (mut j, nodes) = self.lossless_parts()?;
        j["nodes"] = Json::Array(nodes.collect::<Result<_>>()?);
        Ok(j)
    }

    /// Lossless JSON a node at a time, to write it without holding its
    /// text: the document's object as [`Document::to_json`] makes it, with
    /// an empty `"nodes"` array, and the node table, each node made as the
    /// iterator reaches it. The table grows as it is read (a node lists the
    /// nodes it refers to, which come later), so the iterator holds an
    /// index of the graph's nodes, not their JSON.
    ///
    /// ```
    /// use sereal::json::Document;
    /// use sereal::{Decoder, Value};
    /// let bytes = sereal::encode(&Value::array([Value::array([1]), Value::array([2])])).unwrap();
    /// let doc = Document::decode(&bytes, &Decoder::default()).unwrap();
    /// let (head, nodes) = doc.lossless_parts().unwrap();
    /// assert_eq!(head["body"], serde_json::json!({"ref": 0}));
    /// let lines: Vec<String> = nodes.map(|n| n.unwrap().to_string()).collect();
    /// assert_eq!(lines, [r#"{"array":[{"ref":1},{"ref":2}]}"#, r#"{"array":[1]}"#, r#"{"array":[2]}"#]);
    /// ```
    pub fn lossless_parts(&self) -> Result<(Json, LosslessNodes)> {
        let mut w = Lossless::with_forms(&self.forms);
        let header = self.header.as_ref().map(|h| w.slot(h)).transpose()?;
        let body = w.slot(&self.body)?;
        let mut m = Map::new();
        m.insert("format".into(), LOSSLESS_FORMAT.into());
        if let Some(p) = self.protocol {
            m.insert("protocol".into(), p.into());
        }
        if let Some(c) = self.compression {
            let name = match c {
                Compression::Snappy if self.legacy_snappy => LEGACY_SNAPPY,
                c => compression_name(c),
            };
            m.insert("compression".into(), name.into());
        }
        if let Some(h) = header {
            m.insert("header".into(), h);
        }
        m.insert("body".into(), body);
        m.insert("nodes".into(), Json::Array(Vec::new()));
        Ok((Json::Object(m), LosslessNodes::new(w)))
    }

    /// A document from JSON written by [`Document::to_json`] (lossless), or
    /// from any JSON (plain: the body, with no header fields).
    ///
    /// ```
    /// use sereal::json::Document;
    /// use sereal::{Encoder, Value};
    /// use serde_json::json;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let plain = Document::from_json(&json!({"ids": [1, 2]}), false)?;
    /// assert_eq!(plain.body, Value::hash([("ids", Value::array([1, 2]))]));
    /// assert_eq!(plain.protocol, None);
    ///
    /// let lossless = json!({
    ///     "format": "sereal-lossless-1",
    ///     "protocol": 2,
    ///     "body": {"ref": 0},
    ///     "nodes": [{"array": [1, {"ref": 0}], "class": "Loop"}],
    /// });
    /// let doc = Document::from_json(&lossless, true)?;
    /// let node = doc.body.node().unwrap();
    /// assert_eq!(node.class().unwrap().as_str(), Some("Loop"));
    /// assert!(doc.body.at(1).unwrap().node().unwrap().ptr_eq(&node)); // the cycle
    /// assert!(Document::from_json(&json!({"body": 1}), true).is_err()); // no "format"
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_json(json: &Json, lossless: bool) -> Result<Document> {
        if !lossless {
            return Ok(Document {
                body: from_json(json, false)?.into(),
                ..Document::default()
            });
        }
        let top = json
            .as_object()
            .ok_or_else(|| invalid("", "a lossless document is a JSON object"))?;
        match top.get("format").and_then(Json::as_str) {
            Some(LOSSLESS_FORMAT) => {}
            Some(other) => {
                return Err(invalid(
                    "/format",
                    &format!("unknown format {other:?} (this version reads {LOSSLESS_FORMAT:?})"),
                ))
            }
            None => {
                return Err(invalid(
                    "/format",
                    &format!("not a lossless document (no \"format\": {LOSSLESS_FORMAT:?}); read it as plain JSON"),
                ))
            }
        }
        for k in top.keys() {
            if !matches!(
                k.as_str(),
                "format" | "protocol" | "compression" | "header" | "body" | "nodes"
            ) {
                return Err(invalid(&format!("/{k}"), "unknown field"));
            }
        }
        let protocol = match top.get("protocol") {
            None | Some(Json::Null) => None,
            Some(p) => Some(
                p.as_u64()
                    .and_then(|v| u8::try_from(v).ok())
                    .filter(|v| (1..=5).contains(v))
                    .ok_or_else(|| invalid("/protocol", "the protocol version is 1 to 5"))?,
            ),
        };
        let name = top.get("compression").and_then(Json::as_str);
        let legacy_snappy = name == Some(LEGACY_SNAPPY);
        let compression = match top.get("compression") {
            None | Some(Json::Null) => None,
            _ if legacy_snappy => Some(Compression::Snappy),
            Some(_) => Some(name.and_then(compression_from_name).ok_or_else(|| {
                invalid(
                    "/compression",
                    "expected \"none\", \"snappy\", \"snappy_legacy\", \"zlib\" or \"zstd\"",
                )
            })?),
        };
        let mut b = Builder::new(top.get("nodes"))?;
        let header = top
            .get("header")
            .map(|h| b.slot(h, &mut Path::root("header")))
            .transpose()?;
        let body = b.slot(
            top.get("body").ok_or_else(|| invalid("/body", "missing"))?,
            &mut Path::root("body"),
        )?;
        b.fill_nodes()?;
        let (keep_alive, cycles, forms) = b.finish();
        // Header and body share the node table: each document holds every
        // candidate, so the one dropped last frees the cycles the other's
        // handles kept.
        let document = |root| crate::Document::new(root, cycles.clone(), Vec::new());
        Ok(Document {
            forms,
            protocol,
            compression,
            legacy_snappy,
            header: header.map(document),
            body: document(body),
            keep_alive,
        })
    }
}

/// What a document's bytes chose that its value graph does not say, kept
/// so that writing the graph again gives the same bytes (lossless JSON
/// carries it as flags on the nodes it concerns):
///
/// - `"refn": true` on an array or hash of fewer than 16 items: written as
///   `REFN` + `ARRAY`/`HASH` rather than `ARRAYREF_n`/`HASHREF_n`, though
///   no other reference in the document names it. Perl writes that form
///   for a container something outside the data held when it was written
///   (a temporary, say); the document holds a handle on the node, which
///   the encoder, like Perl's, then writes in the long form.
/// - `"pad": true` on a node: its strong reference is written after a
///   `PAD`. Perl writes that for a weak reference whose referent only weak
///   references held, which a decoder then reads as a strong one.
///
/// [`Document::decode`] notes them; [`Document::from_json`] reads them;
/// [`Document::encode`] writes them.
///
/// ```
/// use sereal::json::Document;
/// use sereal::{Decoder, Encoder, EncoderOptions};
/// // Perl's `[[1, 2]]` where it held the inner array elsewhere: REFN ARRAY.
/// let perl = b"=\xF3rl\x05\x00\x41\x28\x2b\x02\x01\x02";
/// let doc = Document::decode(perl, &Decoder::default()).unwrap();
/// let j = doc.to_json(true).unwrap();
/// assert_eq!(j["nodes"][1], serde_json::json!({"array": [1, 2], "refn": true}));
/// let back = Document::from_json(&j, true).unwrap();
/// let mut enc = Encoder::new(EncoderOptions::new()).unwrap();
/// assert_eq!(back.encode(&mut enc).unwrap(), perl);
/// ```
pub use crate::decoder::reader::Forms;

/// Converts a value to JSON: lossless (see the [module](self) documentation
/// for the shapes) or plain.
///
/// Errors on data JSON cannot stand for: a [`Value::Foreign`], a node borrowed
/// for writing, or (plain) output of more than [`PLAIN_MAX_VALUES`] values or
/// nested more than [`PLAIN_MAX_DEPTH`] arrays and objects deep.
///
/// ```
/// use sereal::{json, Value};
/// let v = Value::hash([("id", Value::from(7)), ("name", Value::utf8("Zoë"))]);
/// assert_eq!(json::to_json(&v, false).unwrap(), serde_json::json!({"id": 7, "name": "Zoë"}));
/// let lossless = json::to_json(&v, true).unwrap();
/// assert_eq!(lossless["nodes"][0], serde_json::json!({"hash": [["id", 7], ["name", "Zoë"]]}));
/// ```
pub fn to_json(value: &Value, lossless: bool) -> Result<Json> {
    if !lossless {
        let mut p = Plain::default();
        return p.value(value);
    }
    let mut w = Lossless::default();
    let body = w.slot(value)?;
    let nodes = LosslessNodes::new(w).collect::<Result<Vec<_>>>()?;
    Ok(json!({"format": LOSSLESS_FORMAT, "body": body, "nodes": nodes}))
}

/// Converts JSON to a value: lossless JSON (as [`to_json`] writes it; a
/// [`Document`]'s header fields are ignored) back to the same graph, or any
/// JSON to a plain tree.
///
/// A lossless node reached only through weak references has no owner once
/// this returns, so those references are dead; [`Document::from_json`] keeps
/// such nodes alive.
///
/// ```
/// use sereal::{json, Value};
/// let j = serde_json::json!({"ids": [1, 2.5, null], "name": "Zoë"});
/// let v = json::from_json(&j, false).unwrap();
/// assert_eq!(v.get("name"), Some(Value::utf8("Zoë")));
/// assert_eq!(v.get("ids").unwrap().at(1), Some(Value::Double(2.5)));
/// let err = json::from_json(&serde_json::json!({"format": "sereal-lossless-1", "body": {"ref": 9}}), true);
/// assert_eq!(err.unwrap_err().to_string(), "at /body/ref: node 9 is not in the node table (0 nodes)");
/// ```
pub fn from_json(json: &Json, lossless: bool) -> Result<Value> {
    if !lossless {
        return plain_from_json(json);
    }
    Document::from_json(json, true).map(|d| d.body.into_value())
}

fn invalid(path: &str, msg: &str) -> Error {
    let at = if path.is_empty() { "/" } else { path };
    Error::new(ErrorKind::Json(format!("at {at}: {msg}")))
}

/// The lossless name of protocol 1's non-incremental Snappy framing.
const LEGACY_SNAPPY: &str = "snappy_legacy";

fn compression_name(c: Compression) -> &'static str {
    match c {
        Compression::None => "none",
        Compression::Snappy => "snappy",
        Compression::Zlib => "zlib",
        Compression::Zstd => "zstd",
    }
}

fn compression_from_name(s: &str) -> Option<Compression> {
    Some(match s {
        "none" => Compression::None,
        "snappy" => Compression::Snappy,
        "zlib" => Compression::Zlib,
        "zstd" => Compression::Zstd,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// Strings, keys and floats

/// A string (or key) with its UTF-8 flag, in the lossless forms.
fn str_json(bytes: &[u8], utf8: bool) -> Json {
    match (utf8, std::str::from_utf8(bytes)) {
        (false, _) if bytes.is_ascii() => {
            Json::String(String::from_utf8(bytes.to_vec()).unwrap_or_default())
        }
        (false, _) => json!({"bytes": latin1_to_string(bytes)}),
        (true, Ok(s)) if s.is_ascii() => json!({"utf8": s}),
        (true, Ok(s)) => Json::String(s.to_owned()),
        (true, Err(_)) => json!({"utf8_bytes": latin1_to_string(bytes)}),
    }
}

/// The bytes and UTF-8 flag of a string in the lossless forms, or `None`
/// when `j` is not one.
fn str_from_json(j: &Json, path: &Path) -> Result<Option<(Vec<u8>, bool)>> {
    match j {
        Json::String(s) => Ok(Some((s.as_bytes().to_vec(), !s.is_ascii()))),
        Json::Object(m) if m.len() == 1 => {
            let (k, v) = m.iter().next().expect("one entry");
            let text = || {
                v.as_str()
                    .ok_or_else(|| invalid(&path.with(k), "expected a string"))
            };
            let bytes = |s: &str| {
                string_to_latin1(s).ok_or_else(|| {
                    invalid(
                        &path.with(k),
                        "a character above U+00FF (one character stands for one byte here)",
                    )
                })
            };
            Ok(Some(match k.as_str() {
                "utf8" => (text()?.as_bytes().to_vec(), true),
                "bytes" => (bytes(text()?)?, false),
                "utf8_bytes" => (bytes(text()?)?, true),
                _ => return Ok(None),
            }))
        }
        _ => Ok(None),
    }
}

fn key_json(k: &Key) -> Json {
    str_json(k.as_bytes(), k.is_utf8())
}

fn key_from_json(j: &Json, path: &Path) -> Result<Key> {
    match str_from_json(j, path)? {
        Some((b, utf8)) => Ok(Key::new(&b, utf8)),
        None => Err(invalid(&path.to_string(), "expected a string")),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn from_hex<const N: usize>(s: &str) -> Option<[u8; N]> {
    let s = s.as_bytes();
    if s.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        let pair = std::str::from_utf8(&s[2 * i..2 * i + 2]).ok()?;
        *o = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

/// Rust's float syntax when it reads back to the same bits, else the bits.
fn f64_text(d: f64) -> String {
    let t = format!("{d:?}");
    if t.parse::<f64>().is_ok_and(|p| p.to_bits() == d.to_bits()) {
        t
    } else {
        format!("0x{:016x}", d.to_bits())
    }
}

fn f32_text(f: f32) -> String {
    let t = format!("{f:?}");
    if t.parse::<f32>().is_ok_and(|p| p.to_bits() == f.to_bits()) {
        t
    } else {
        format!("0x{:08x}", f.to_bits())
    }
}

fn f64_from_text(s: &str) -> Option<f64> {
    match s.strip_prefix("0x") {
        Some(h) if h.len() == 16 => u64::from_str_radix(h, 16).ok().map(f64::from_bits),
        Some(_) => None,
        None => s.parse().ok(),
    }
}

fn f32_from_text(s: &str) -> Option<f32> {
    match s.strip_prefix("0x") {
        Some(h) if h.len() == 8 => u32::from_str_radix(h, 16).ok().map(f32::from_bits),
        Some(_) => None,
        None => s.parse().ok(),
    }
}

/// A double as a bare JSON number when JSON text of it reads back (with
/// this crate's JSON reader) as the same bits, else `{"double": text}`.
fn double_json(d: f64) -> Json {
    if let Some(n) = Number::from_f64(d) {
        let text = n.to_string();
        let back: std::result::Result<Json, _> = serde_json::from_str(&text);
        if let Ok(Json::Number(b)) = back {
            if b.is_f64() && b.as_f64().is_some_and(|x| x.to_bits() == d.to_bits()) {
                return Json::Number(n);
            }
        }
    }
    json!({"double": f64_text(d)})
}

// ---------------------------------------------------------------------------
// Paths

/// JSON Pointer-like paths for error messages, built only on error.
struct Path {
    parts: Vec<String>,
}

impl Path {
    fn root(first: &str) -> Path {
        Path {
            parts: vec![first.to_owned()],
        }
    }

    fn with(&self, part: impl std::fmt::Display) -> String {
        format!("{self}/{part}")
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for p in &self.parts {
            write!(f, "/{p}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
