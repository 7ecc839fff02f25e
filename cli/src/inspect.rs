//! `info` and `dump`: a document's header, sizes and counts, and its tags
//! one per line, read with the tag walker (no graph is built for them:
//! the walker checks the decoder's rules as it goes, see `rules.rs`).

use crate::input::{msg, Doc, Res, Stop};
use crate::walk::{self, Detail, Item, Role, Stats};
use sereal::protocol::{self, tag, TRACK_FLAG};
use sereal::Header;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;

/// The name of a document type (the high nibble of the version byte).
fn type_name(doc_type: u8) -> &'static str {
    match doc_type {
        0 => "raw",
        1 => "snappy (protocol 1 framing)",
        2 => "snappy",
        3 => "zlib",
        4 => "zstd",
        _ => "unknown",
    }
}

fn doc_type_name(h: &Header) -> &'static str {
    type_name(if h.legacy_snappy {
        1
    } else {
        h.compression.doc_type()
    })
}

/// A document's body: its bytes (decompressed), their body offset shift,
/// and where the document ends in its input.
struct Body<'a> {
    bytes: Cow<'a, [u8]>,
    shift: usize,
    /// The offset of the body's first byte in the document, for a raw body.
    start: Option<usize>,
    /// The document's length, when the framing tells (a compressed body).
    len: Option<usize>,
}

fn body<'a>(doc: &Doc<'a>, h: &Header) -> Res<Body<'a>> {
    let (bytes, shift, len) = crate::input::decoder()
        .body_frame(doc.bytes, h)
        .map_err(|e| doc.error(&e))?;
    Ok(Body {
        bytes,
        shift,
        start: len.is_none().then_some(h.len),
        len,
    })
}

/// Walks a body with `each`: the document's length (a compressed body must
/// fill its frame exactly) and, for a body that walks but that the decoder
/// refuses, the error.
fn walk_body<'a>(
    doc: &Doc,
    b: &'a Body,
    stats: &mut Stats,
    each: impl FnMut(&Item<'a>) -> std::io::Result<()>,
) -> Res<(usize, Option<Stop>)> {
    let walked = walk::walk(&b.bytes, b.shift, stats, each, |part| {
        doc.source.release(part)
    });
    let (end, refused) = match walked {
        Ok(end) => (end, None),
        Err(f @ walk::Fail::Refused(end, ..)) => (end, Some(doc.walk_error(f, b.start, b.shift))),
        Err(f) => return Err(doc.walk_error(f, b.start, b.shift)),
    };
    match (b.start, b.len) {
        (Some(start), _) => Ok((start + end, refused)),
        (None, Some(len)) if end == b.bytes.len() => Ok((len, refused)),
        _ => Err(doc.walk_error(
            walk::Fail::Bad(end, "trailing data after the document body".into()),
            None,
            b.shift,
        )),
    }
}

/// The length of a walk that the decoder would accept, or its error.
fn accepted((len, refused): (usize, Option<Stop>)) -> Res<usize> {
    refused.map_or(Ok(len), Err)
}

/// Prints the summary of one document: everything that parsed, then (for a
/// damaged document) fails with the error.
pub fn info(doc: &Doc, out: &mut dyn Write) -> Res<usize> {
    let mut s = String::new();
    let result = summarize(doc, &mut s);
    writeln!(out, "file:              {}", doc.name)?;
    if doc.several(result.as_ref().ok().copied()) {
        writeln!(
            out,
            "document:          {} at offset {}",
            doc.index, doc.offset
        )?;
    }
    out.write_all(s.as_bytes())?;
    result
}

/// Writes the summary lines into `s` as each part of the document parses.
pub(crate) fn summarize(doc: &Doc, s: &mut String) -> Res<usize> {
    macro_rules! put {
        ($($t:tt)*) => {{ let _ = writeln!(s, $($t)*); }};
    }
    let h = match Header::parse(doc.bytes) {
        Ok(h) => h,
        Err(e) => {
            // past the version byte, that byte was good
            if e.offset().is_some_and(|o| o > 4) {
                let vt = doc.bytes[4];
                put!("protocol version:  {}", vt & 15);
                put!("document type:     {} ({})", vt >> 4, type_name(vt >> 4));
            }
            return Err(doc.error(&e));
        }
    };
    put!("protocol version:  {}", h.version);
    put!(
        "document type:     {} ({})",
        doc.bytes[4] >> 4,
        doc_type_name(&h)
    );
    let b = match body(doc, &h) {
        Ok(b) => b,
        Err(e) => {
            put!("compression:       {} (damaged)", doc_type_name(&h));
            return Err(e);
        }
    };
    match b.len {
        Some(len) => {
            let packed = len - h.len;
            put!(
                "compression:       {} bytes -> {packed} bytes (ratio {:.2})",
                b.bytes.len(),
                b.bytes.len() as f64 / packed.max(1) as f64
            );
        }
        None => put!("compression:       none"),
    }
    put!("header size:       {} bytes", h.len);
    // the decoder reads the user header data first: its refusal comes first
    let mut refused = None;
    match &h.user_data {
        Some(r) => {
            let mut us = Stats::default();
            let user = Body {
                bytes: Cow::Borrowed(&doc.bytes[r.clone()]),
                shift: 1,
                start: Some(r.start),
                len: None,
            };
            let end = walk_body(doc, &user, &mut us, |_| Ok(()));
            match end {
                Ok((end, why)) if end == r.end => {
                    refused = why;
                    put!(
                        "user header data:  yes, {} bytes, {} values",
                        r.len(),
                        us.values
                    )
                }
                Ok((end, _)) => {
                    put!("user header data:  yes, {} bytes (damaged)", r.len());
                    return Err(doc.walk_error(
                        walk::Fail::Bad(
                            end - r.start,
                            "trailing data after the user header data".into(),
                        ),
                        Some(r.start),
                        1,
                    ));
                }
                Err(e) => {
                    put!("user header data:  yes, {} bytes (damaged)", r.len());
                    return Err(e);
                }
            }
        }
        None => put!("user header data:  no"),
    }
    let mut stats = Stats::default();
    let walked = walk_body(doc, &b, &mut stats, |_| Ok(()));
    match (&walked, b.start) {
        (Ok((len, _)), Some(start)) => put!("body size:         {} bytes", len - start),
        (Err(_), Some(_)) => put!("body size:         unknown (damaged; counts up to the error)"),
        (_, None) => put!("body size:         {} bytes", b.bytes.len()),
    }
    write_stats(s, &stats);
    let decoded = walked.and_then(|(len, why)| accepted((len, refused.or(why))));
    put!(
        "decodes:           {}",
        if decoded.is_ok() { "yes" } else { "no" }
    );
    decoded
}

fn write_stats(s: &mut String, st: &Stats) {
    let _ = write!(
        s,
        "values:            {}\n\
         hash keys:         {}\n\
         max depth:         {}\n\
         tracked items:     {}\n\
         back-references:   {} REFP, {} ALIAS, {} COPY, {} OBJECTV\n\
         objects:           {}\n\
         weak references:   {}\n",
        st.values,
        st.keys,
        st.max_depth,
        st.tracked,
        st.refp,
        st.alias,
        st.copy,
        st.objectv,
        st.objects,
        st.weaken
    );
}

/// A string for a listing: quoted, escaped, cut after 60 bytes.
fn quote(bytes: &[u8]) -> String {
    const MAX: usize = 60;
    let shown = &bytes[..bytes.len().min(MAX)];
    let mut s = String::from("\"");
    for chunk in shown.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                c if c.is_control() => s.extend(c.escape_default()),
                c => s.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(s, "\\x{b:02x}");
        }
    }
    s.push('"');
    if bytes.len() > MAX {
        let _ = write!(s, "... ({} bytes)", bytes.len());
    }
    s
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn dump_line(out: &mut dyn Write, item: &Item) -> std::io::Result<()> {
    let mark = if item.tag & TRACK_FLAG != 0 { '*' } else { ' ' };
    let indent = "  ".repeat(item.depth.min(40));
    let role = match item.role {
        Role::Value => "",
        Role::Key => "key ",
        Role::Class => "class ",
        Role::Pattern => "pattern ",
        Role::Flags => "flags ",
    };
    let bare = item.tag & !TRACK_FLAG;
    let name = protocol::tag_name(item.tag);
    let detail = match &item.detail {
        Detail::None => String::new(),
        Detail::Int(i) => format!(" {i}"),
        Detail::UInt(u) => format!(" {u}"),
        Detail::Float(f) => format!(" {f:?}"),
        Detail::Double(d) => format!(" {d:?}"),
        Detail::Opaque(b) => format!(" 0x{}", hex(b)),
        Detail::Str(b) if bare == tag::BINARY || bare == tag::STR_UTF8 => {
            format!(" len {} {}", b.len(), quote(b))
        }
        Detail::Str(b) => format!(" {}", quote(b)),
        Detail::Count(1) if bare == tag::HASH => " 1 entry".into(),
        Detail::Count(n) if bare == tag::HASH => format!(" {n} entries"),
        Detail::Count(1) => " 1 element".into(),
        Detail::Count(n) => format!(" {n} elements"),
        Detail::Target(off, t) => {
            let mut s = format!(" -> {off}: {}", protocol::tag_name(t.tag));
            if let Some(b) = t.string {
                s.push(' ');
                s.push_str(&quote(b));
            }
            if matches!(bare, tag::REFP | tag::ALIAS) && t.tag & TRACK_FLAG == 0 {
                s.push_str(" (not tracked)");
            }
            s
        }
    };
    let depth_note = if item.depth > 40 {
        format!(" [depth {}]", item.depth)
    } else {
        String::new()
    };
    writeln!(
        out,
        "{:>7} {mark} {indent}{role}{name}{detail}{depth_note}",
        item.offset
    )
}

/// Lists one document's body, or with `header` its user header data.
pub fn dump(doc: &Doc, header: bool, out: &mut dyn Write) -> Res<usize> {
    let h = Header::parse(doc.bytes).map_err(|e| doc.error(&e))?;
    let b = body(doc, &h)?;
    // A raw body's length is known once it is walked: a first walk, silent,
    // finds it (a damaged body is listed up to the damage).
    let walked = match b.len {
        Some(len) => Ok(len),
        None => walk_body(doc, &b, &mut Stats::default(), |_| Ok(())).map(|(len, _)| len),
    };
    let len = walked.as_ref().ok().copied();
    if let Some(label) = doc.heading(len) {
        writeln!(out, "# {label}")?;
    }
    let mut stats = Stats::default();
    if header {
        let Some(r) = h.user_data.clone() else {
            return msg(format!(
                "error{}: the document has no user header data",
                doc.heading(len)
                    .map(|l| format!(" in {l}"))
                    .unwrap_or_default()
            ));
        };
        writeln!(
            out,
            "# user header data of {} at offset {}; offsets count from 1 at its first byte",
            walk::bytes(r.len() as u64),
            doc.offset + r.start
        )?;
        writeln!(out, "# * = track bit set (the item is referred to later)")?;
        let user = Body {
            bytes: Cow::Borrowed(&doc.bytes[r.clone()]),
            shift: 1,
            start: Some(r.start),
            len: None,
        };
        accepted(walk_body(doc, &user, &mut stats, |item| {
            dump_line(out, item)
        })?)?;
        walked
    } else {
        let base = if h.version == 1 {
            "offsets count from the document's start (protocol 1)"
        } else {
            "offsets count from 1 at the body's first byte"
        };
        let kind = match (b.start, len) {
            (None, _) => format!(
                "{} body, {} bytes decompressed",
                doc_type_name(&h),
                b.bytes.len()
            ),
            (Some(start), len) => format!(
                "body of {} at offset {}",
                walk::bytes((len.unwrap_or(doc.bytes.len()) - start) as u64),
                doc.offset + start
            ),
        };
        writeln!(out, "# protocol {}, {kind}; {base}", h.version)?;
        writeln!(out, "# * = track bit set (the item is referred to later)")?;
        accepted(walk_body(doc, &b, &mut stats, |item| dump_line(out, item))?)
    }
}
