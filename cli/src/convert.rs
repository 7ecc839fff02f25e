//! `to-json` and `from-json`: plain and lossless JSON.

use crate::input::{msg, read, Doc, Res, Stop};
use crate::Compress;
use sereal::json::{Document, LosslessNodes};
use sereal::protocol;
use sereal::{Body, Encoder, EncoderOptions, Key, Ref, Str, Value};
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// What `to-json` writes.
pub struct ToJson {
    pub lossless: bool,
    pub header: bool,
    pub compact: bool,
    /// The most values plain JSON may write again for shared nodes met
    /// again (0: no limit).
    pub max_repeat: u64,
}

/// Writes one document as JSON, on a line of its own (a stream of
/// documents becomes a stream of JSON texts), as the graph is walked: the
/// JSON text is never held whole.
pub fn to_json(doc: &Doc, o: &ToJson, out: &mut dyn Write) -> Res<usize> {
    let dec = crate::input::decoder();
    let fail = |e| doc.error(&e);
    if o.lossless {
        let (jd, used) = Document::decode_prefix(doc.bytes, &dec).map_err(fail)?;
        let (head, nodes) = jd
            .lossless_parts()
            .map_err(|e| Stop::Msg(format!("error: {}", e.kind())))?;
        write_lossless(&mut *out, &head, nodes, o.compact)?;
        writeln!(out)?;
        return Ok(used);
    }
    let header = dec.decode_header(doc.bytes).map_err(fail)?;
    let (body, used) = dec.decode_prefix(doc.bytes).map_err(fail)?;
    let root = match (&header, o.header) {
        (_, false) => &body,
        (Some(h), true) => h,
        (None, true) => {
            return Err(Stop::Msg(format!(
                "error: {} has no user header data",
                doc.heading(Some(used))
                    .unwrap_or_else(|| "the document".into())
            )))
        }
    };
    write_plain(&mut *out, root, o.compact, o.max_repeat)?;
    writeln!(out)?;
    Ok(used)
}

/// Writes `v` as plain JSON (see [`Plain`]), on one line if `compact`;
/// `max_repeat` as [`ToJson::max_repeat`].
pub fn write_plain(out: &mut dyn Write, v: &Value, compact: bool, max_repeat: u64) -> Res {
    Plain {
        out,
        compact,
        max_repeat,
        repeated: 0,
        in_repeat: 0,
        open: HashSet::new(),
        written: HashSet::new(),
    }
    .value(v, 0)
}

/// Plain JSON written as the graph is walked: what `sereal::json::to_json`
/// makes of a value (keys sorted, a cycle closing as `null`), without
/// holding the JSON text. Scalars and regexps are converted by the library.
struct Plain<'w> {
    out: &'w mut dyn Write,
    compact: bool,
    max_repeat: u64,
    /// Values written inside shared nodes met again.
    repeated: u64,
    /// How many shared nodes met again are being written.
    in_repeat: usize,
    /// Nodes being written: meeting one again is a cycle.
    open: HashSet<usize>,
    /// Shared nodes written so far.
    written: HashSet<usize>,
}

impl Plain<'_> {
    fn value(&mut self, v: &Value, depth: usize) -> Res {
        if self.in_repeat > 0 {
            self.repeated += 1;
            if self.max_repeat != 0 && self.repeated > self.max_repeat {
                return msg(format!(
                    "error: plain JSON writes a shared node out again at each meeting, and this \
                     document's would pass --max-repeat {} values written again; raise it (0: no \
                     limit), or write --lossless JSON, which writes each node once",
                    self.max_repeat
                ));
            }
        }
        match v {
            Value::Ref(r) | Value::Alias(r) => self.node(r, depth),
            Value::Weak(w) => match w.upgrade() {
                Some(r) => self.node(&r, depth),
                None => Ok(self.out.write_all(b"null")?),
            },
            Value::Int(i) => Ok(write!(self.out, "{i}")?),
            Value::Bytes(s) | Value::Utf8(s) => match std::str::from_utf8(s.as_bytes()) {
                Ok(t) => self.leaf(t),
                Err(_) => self.library(v),
            },
            _ => self.library(v),
        }
    }

    /// A string, escaped.
    fn leaf(&mut self, s: &str) -> Res {
        serde_json::to_writer(&mut *self.out, s).map_err(std::io::Error::from)?;
        Ok(())
    }

    /// A value the library converts (numbers, Latin-1 strings, regexps).
    fn library(&mut self, v: &Value) -> Res {
        let j = sereal::json::to_json(v, false)
            .map_err(|e| Stop::Msg(format!("error: {}", e.kind())))?;
        serde_json::to_writer(&mut *self.out, &j).map_err(std::io::Error::from)?;
        Ok(())
    }

    fn newline(&mut self, depth: usize) -> Res {
        if !self.compact {
            self.out.write_all(b"\n")?;
            for _ in 0..depth.min(MAX_INDENT) {
                self.out.write_all(b"  ")?;
            }
        }
        Ok(())
    }

    fn node(&mut self, r: &Ref, depth: usize) -> Res {
        let id = crate::show::id(r);
        if self.open.contains(&id) {
            return Ok(self.out.write_all(b"null")?);
        }
        let repeat = crate::show::shared(r) && !self.written.insert(id);
        self.in_repeat += usize::from(repeat);
        self.open.insert(id);
        let result = self.body(r, depth);
        self.open.remove(&id);
        self.in_repeat -= usize::from(repeat);
        result
    }

    fn body(&mut self, r: &Ref, depth: usize) -> Res {
        let body = r.body();
        match &*body {
            Body::Scalar(v) => self.value(v, depth),
            Body::Regexp(_) => self.library(&Value::Ref(r.clone())),
            Body::Array(a) | Body::Frozen(a) => {
                if a.is_empty() {
                    return Ok(self.out.write_all(b"[]")?);
                }
                self.out.write_all(b"[")?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        self.out.write_all(b",")?;
                    }
                    self.newline(depth + 1)?;
                    self.value(v, depth + 1)?;
                }
                self.newline(depth)?;
                Ok(self.out.write_all(b"]")?)
            }
            Body::Hash(h) => {
                if h.is_empty() {
                    return Ok(self.out.write_all(b"{}")?);
                }
                let mut entries: Vec<(String, &Value)> =
                    h.iter().map(|(k, v)| (key_text(k), v)).collect();
                // sorted; of keys equal as text, the last one stands (as
                // in a JSON object built by inserting them in turn)
                entries.reverse();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                entries.dedup_by(|a, b| a.0 == b.0);
                self.out.write_all(b"{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        self.out.write_all(b",")?;
                    }
                    self.newline(depth + 1)?;
                    self.leaf(k.as_str())?;
                    self.out
                        .write_all(if self.compact { b":" } else { b": " })?;
                    self.value(v, depth + 1)?;
                }
                self.newline(depth)?;
                Ok(self.out.write_all(b"}")?)
            }
        }
    }
}

/// Indentation stops growing after this many levels, so that a deep
/// document does not make gigabytes of spaces.
const MAX_INDENT: usize = 32;

/// A hash key as plain JSON writes it: its text (a byte string that is not
/// UTF-8 read as Latin-1), as the library converts a string of its bytes.
fn key_text(k: &Key) -> String {
    if let Some(s) = k.as_str() {
        return s.to_owned();
    }
    let v = if k.is_utf8() {
        Value::Utf8(Str::new(k.as_bytes()))
    } else {
        Value::Bytes(Str::new(k.as_bytes()))
    };
    match sereal::json::to_json(&v, false) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::from_utf8_lossy(k.as_bytes()).into_owned(),
    }
}

/// Lossless JSON written a node at a time: compact, the text
/// `serde_json` makes of the whole object; else laid out for reading, the
/// document's fields in a fixed order, one node per line.
fn write_lossless(
    out: &mut dyn Write,
    head: &serde_json::Value,
    nodes: LosslessNodes,
    compact: bool,
) -> Res {
    let put = |out: &mut dyn Write, v: &serde_json::Value| {
        serde_json::to_writer(out, v).map_err(std::io::Error::from)
    };
    let Some(m) = head.as_object() else {
        return Ok(put(out, head)?);
    };
    let order = [
        "format",
        "protocol",
        "compression",
        "header",
        "body",
        "nodes",
    ];
    let keys: Vec<&String> = if compact {
        m.keys().collect()
    } else {
        let known = order
            .iter()
            .filter_map(|k| m.get_key_value(*k).map(|e| e.0));
        known
            .chain(m.keys().filter(|k| !order.contains(&k.as_str())))
            .collect()
    };
    let (open, sep, close) = if compact {
        ("{", ",", "}")
    } else {
        ("{\n  ", ",\n  ", "\n}")
    };
    let mut nodes = Some(nodes);
    for (i, k) in keys.into_iter().enumerate() {
        out.write_all(if i == 0 { open } else { sep }.as_bytes())?;
        put(&mut *out, &serde_json::Value::from(k.as_str()))?;
        out.write_all(if compact { b":" } else { b": " })?;
        match nodes.take_if(|_| k == "nodes") {
            Some(nodes) => write_nodes(&mut *out, nodes, compact)?,
            None => put(&mut *out, &m[k])?,
        }
    }
    out.write_all(if m.is_empty() {
        b"{}"
    } else {
        close.as_bytes()
    })?;
    Ok(())
}

/// The node table, each node written as it is made.
fn write_nodes(out: &mut dyn Write, nodes: LosslessNodes, compact: bool) -> Res {
    let (open, sep, close) = if compact {
        ("[", ",", "]")
    } else {
        ("[\n    ", ",\n    ", "\n  ]")
    };
    let mut first = true;
    let mut nodes = nodes;
    while !nodes.is_finished() {
        out.write_all(if first { open } else { sep }.as_bytes())?;
        first = false;
        if let Some(done) = nodes.write_next(&mut *out) {
            done.map_err(|e| Stop::Msg(format!("error: {}", e.kind())))?;
        }
    }
    out.write_all(if first { b"[]" } else { close.as_bytes() })?;
    Ok(())
}

/// A JSON syntax error as `error at offset N (line L, column C): ...`.
fn json_error(text: &[u8], e: &serde_json::Error) -> Stop {
    let (line, col) = (e.line(), e.column());
    let mut offset = 0;
    for (i, l) in text.split(|&b| b == b'\n').enumerate() {
        if i + 1 == line {
            offset += col.saturating_sub(1).min(l.len());
            break;
        }
        offset += l.len() + 1;
    }
    let full = e.to_string();
    let m = full
        .rsplit_once(" at line ")
        .map_or(full.as_str(), |(m, _)| m);
    let hint = if sereal::looks_like_sereal(text) {
        "; this is a Sereal document: `sereal to-json` converts it to JSON"
    } else {
        ""
    };
    Stop::Msg(format!(
        "error at offset {offset} (line {line}, column {col}): {m}{hint}"
    ))
}

pub struct FromJsonArgs<'a> {
    pub file: &'a Path,
    pub lossless: bool,
    pub protocol: Option<u8>,
    pub compress: Option<Compress>,
    pub compress_threshold: Option<usize>,
    pub compress_level: Option<i32>,
    pub sort_keys: bool,
    pub canonical: bool,
    pub dedupe_strings: bool,
    pub aliased_dedupe_strings: bool,
    pub no_shared_hashkeys: bool,
}

pub fn from_json(a: &FromJsonArgs, out: &mut dyn Write) -> Res {
    let text = read(a.file)?;
    let j: serde_json::Value = serde_json::from_slice(&text).map_err(|e| json_error(&text, &e))?;
    let doc = Document::from_json(&j, a.lossless)
        .map_err(|e| Stop::Msg(format!("error {}", e.kind())))?;
    drop(j);
    let mut opts = EncoderOptions::new()
        .canonical(a.canonical)
        .sort_keys(a.sort_keys || a.canonical)
        .dedupe_strings(a.dedupe_strings)
        .aliased_dedupe_strings(a.aliased_dedupe_strings)
        .no_shared_hashkeys(a.no_shared_hashkeys);
    opts.protocol_version = a
        .protocol
        .or(doc.protocol)
        .unwrap_or(protocol::PROTOCOL_VERSION);
    match a.compress {
        Some(c) => {
            opts.compress = c.into();
            opts.compress_threshold = a.compress_threshold.unwrap_or(1024);
        }
        None => {
            // A lossless document that was compressed is compressed again.
            opts.compress = doc.compression.unwrap_or_default();
            opts.legacy_snappy = doc.legacy_snappy;
            opts.compress_threshold = a.compress_threshold.unwrap_or(0);
        }
    }
    opts.compress_level = a.compress_level;
    let encoded = Encoder::new(opts).and_then(|mut enc| doc.encode(&mut enc));
    doc.body.dismantle();
    if let Some(h) = &doc.header {
        h.dismantle();
    }
    let bytes = encoded.map_err(|e| Stop::Msg(format!("error: {}", e.kind())))?;
    out.write_all(&bytes)?;
    Ok(())
}
