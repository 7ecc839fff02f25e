//! `to-json` and `from-json`: plain and lossless JSON.

use crate::input::{read, Doc, Res, Stop};
use crate::Compress;
use sereal::json::Document;
use sereal::protocol;
use sereal::{Compression, Decoder, Encoder, EncoderOptions, Header};
use std::io::Write;
use std::path::Path;

/// What `to-json` writes.
pub struct ToJson {
    pub lossless: bool,
    pub header: bool,
    pub compact: bool,
}

/// Writes one document as JSON, on a line of its own (a stream of
/// documents becomes a stream of JSON texts).
pub fn to_json(doc: &Doc, o: &ToJson, out: &mut dyn Write) -> Res<usize> {
    let dec = Decoder::default();
    let fail = |e| doc.error(&e);
    let h = Header::parse(doc.bytes).map_err(fail)?;
    let header = dec.decode_header(doc.bytes).map_err(fail)?;
    let (body, used) = dec.decode_prefix(doc.bytes).map_err(fail)?;
    let jd = Document {
        protocol: Some(h.version),
        compression: Some(h.compression),
        header,
        body,
        keep_alive: Vec::new(),
    };
    let result = if o.header && !o.lossless {
        match &jd.header {
            Some(h) => sereal::json::to_json(h, false),
            None => {
                return Err(Stop::Msg(format!(
                    "error: {} has no user header data",
                    doc.heading(Some(used))
                        .unwrap_or_else(|| "the document".into())
                )))
            }
        }
    } else {
        jd.to_json(o.lossless)
    };
    drop(jd);
    let j = result.map_err(|e| Stop::Msg(format!("error: {}", e.kind())))?;
    if o.compact {
        serde_json::to_writer(&mut *out, &j).map_err(std::io::Error::from)?;
    } else if o.lossless {
        write_lossless(&mut *out, &j)?;
    } else {
        write_pretty(&mut *out, &j, 0)?;
    }
    writeln!(out)?;
    Ok(used)
}

/// Indented JSON whose indentation stops growing after 32 levels, so that a
/// deep document does not make gigabytes of spaces.
fn write_pretty(out: &mut dyn Write, j: &serde_json::Value, depth: usize) -> std::io::Result<()> {
    let indent = |out: &mut dyn Write, d: usize| -> std::io::Result<()> {
        out.write_all(b"\n")?;
        for _ in 0..d.min(32) {
            out.write_all(b"  ")?;
        }
        Ok(())
    };
    match j {
        serde_json::Value::Array(a) if !a.is_empty() => {
            out.write_all(b"[")?;
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                indent(out, depth + 1)?;
                write_pretty(out, v, depth + 1)?;
            }
            indent(out, depth)?;
            out.write_all(b"]")
        }
        serde_json::Value::Object(m) if !m.is_empty() => {
            out.write_all(b"{")?;
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                indent(out, depth + 1)?;
                serde_json::to_writer(&mut *out, k).map_err(std::io::Error::from)?;
                out.write_all(b": ")?;
                write_pretty(out, v, depth + 1)?;
            }
            indent(out, depth)?;
            out.write_all(b"}")
        }
        _ => serde_json::to_writer(out, j).map_err(std::io::Error::from),
    }
}

/// Lossless JSON laid out for reading: the document's fields in a fixed
/// order, one node per line.
fn write_lossless(out: &mut dyn Write, j: &serde_json::Value) -> std::io::Result<()> {
    let compact = |out: &mut dyn Write, v: &serde_json::Value| {
        serde_json::to_writer(out, v).map_err(std::io::Error::from)
    };
    let Some(m) = j.as_object() else {
        return compact(out, j);
    };
    let order = [
        "format",
        "protocol",
        "compression",
        "header",
        "body",
        "nodes",
    ];
    let mut first = true;
    let mut field = |out: &mut dyn Write, k: &str, v: &serde_json::Value| {
        let sep = if first { "{\n" } else { ",\n" };
        first = false;
        write!(out, "{sep}  {}: ", serde_json::Value::from(k))?;
        match v.as_array() {
            Some(nodes) if k == "nodes" && !nodes.is_empty() => {
                out.write_all(b"[\n")?;
                for (i, n) in nodes.iter().enumerate() {
                    out.write_all(b"    ")?;
                    compact(&mut *out, n)?;
                    out.write_all(if i + 1 < nodes.len() { b",\n" } else { b"\n" })?;
                }
                out.write_all(b"  ]")?;
            }
            _ => compact(&mut *out, v)?,
        }
        Ok::<_, std::io::Error>(())
    };
    for k in order {
        if let Some(v) = m.get(k) {
            field(&mut *out, k, v)?;
        }
    }
    for (k, v) in m.iter().filter(|(k, _)| !order.contains(&k.as_str())) {
        field(&mut *out, k, v)?;
    }
    out.write_all(if first { b"{}" } else { b"\n}" })
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
            opts.compress = match c {
                Compress::None => Compression::None,
                Compress::Snappy => Compression::Snappy,
                Compress::Zlib => Compression::Zlib,
                Compress::Zstd => Compression::Zstd,
            };
            opts.compress_threshold = a.compress_threshold.unwrap_or(1024);
        }
        None => {
            // A lossless document that was compressed is compressed again.
            opts.compress = doc.compression.unwrap_or_default();
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
