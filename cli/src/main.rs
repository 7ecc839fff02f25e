//! `sereal`: inspect, convert, validate and check Sereal documents.

mod walk;

use clap::{Parser, Subcommand, ValueEnum};
use sereal::conformance::{read_cases, Report};
use sereal::json::Document;
use sereal::protocol::{self, tag, TRACK_FLAG};
use sereal::{Compression, Decoder, Encoder, EncoderOptions, Error, Header};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use walk::{Detail, Fail, Item, Role, Stats};

const EXAMPLES: &str = "\
Examples:
  sereal info doc.srl                         header, sizes and counts
  sereal dump doc.srl                         one line per tag, with offsets
  sereal to-json doc.srl                      the data as plain JSON
  sereal to-json --lossless doc.srl -o doc.json
  sereal from-json --lossless doc.json -o again.srl
  echo '{\"id\": [1, 2]}' | sereal from-json --compress zstd - > doc.srl
  sereal validate cache/*.srl

FILE `-` is standard input. Bad input gets `error at offset N: ...` and exit status 1.";

#[derive(Parser)]
#[command(
    name = "sereal",
    version,
    about = "Inspect, convert, validate and check Sereal documents",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Summarize a document: version, type, sizes, counts.
    ///
    /// Prints the protocol version, document type, compression and ratio,
    /// header size, whether there is user header data, body size, and counts
    /// of values, hash keys, nesting depth, tracked items, back-references,
    /// objects and weak references. Exits 1 (after the summary) if the document does not decode.
    #[command(after_help = "Example:\n  sereal info doc.srl\n  curl -s $URL | sereal info -")]
    Info {
        /// The document (`-` for standard input).
        file: PathBuf,
    },
    /// List a document's body, one tag per line.
    ///
    /// Each line has the body offset (as the
    /// format counts them: from 1 at the body's first byte, or from the
    /// document's start in protocol 1), `*` when the tag's track bit is set
    /// (something refers to it later), the tag name, and its value, length
    /// or count, indented by nesting. REFP, ALIAS, COPY and OBJECTV show the
    /// offset they point to and what is there. Compressed bodies are listed
    /// decompressed.
    #[command(
        after_help = "Example:\n  sereal dump doc.srl | less\n  sereal dump --header doc.srl"
    )]
    Dump {
        /// The document (`-` for standard input).
        file: PathBuf,
        /// List the user header data instead of the body.
        #[arg(long)]
        header: bool,
    },
    /// Convert a document to JSON.
    ///
    /// Plain JSON (the default) is for reading: hashes become objects, arrays
    /// arrays, strings strings; references are followed, and classes, weak
    /// references and string kinds dropped. `--lossless` writes everything
    /// the document holds (shared nodes and cycles, weak references, classes,
    /// byte versus UTF-8 strings, exact numbers, aliases, the protocol
    /// version and user header), which `from-json --lossless` turns back into
    /// the same bytes. The README describes the lossless format.
    #[command(
        after_help = "Examples:\n  sereal to-json doc.srl\n  sereal to-json --lossless doc.srl -o doc.json\n  sereal to-json --header doc.srl     (plain JSON of the user header data)"
    )]
    ToJson {
        /// The document (`-` for standard input).
        file: PathBuf,
        /// Write lossless JSON.
        #[arg(long)]
        lossless: bool,
        /// Plain JSON of the user header data instead of the body (lossless
        /// JSON always includes it).
        #[arg(long)]
        header: bool,
        /// One line, no indentation.
        #[arg(long)]
        compact: bool,
        /// Write to this file instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Convert JSON to a Sereal document.
    ///
    /// Plain JSON (the default) becomes a fresh tree: objects become hashes,
    /// arrays arrays, strings strings (ASCII ones as byte strings, others
    /// UTF-8), integers integers, other numbers doubles. With `--lossless`
    /// the input must be lossless JSON, as `to-json --lossless` writes it;
    /// its protocol version and compression are used unless the options
    /// below say otherwise. Writes the document to standard output (not a
    /// terminal) or to `-o FILE`.
    #[command(
        after_help = "Examples:\n  sereal from-json --lossless doc.json -o doc.srl\n  sereal from-json --protocol 3 --sort-keys data.json > data.srl\n  echo '[1, \"two\"]' | sereal from-json - | sereal dump -"
    )]
    FromJson {
        /// The JSON file (`-` for standard input).
        file: PathBuf,
        /// Read lossless JSON.
        #[arg(long)]
        lossless: bool,
        /// Protocol version to write, 1 to 5 (default: the lossless
        /// document's, or 5).
        #[arg(long, value_name = "N")]
        protocol: Option<u8>,
        /// Body compression (default: the lossless document's, or none).
        #[arg(long, value_enum)]
        compress: Option<Compress>,
        /// With --compress: bodies shorter than this many bytes stay
        /// uncompressed (default 1024, as Perl's Sereal).
        #[arg(long, value_name = "BYTES")]
        compress_threshold: Option<usize>,
        /// Compression level: zlib 1 to 10, zstd 1 to 22.
        #[arg(long, value_name = "N")]
        compress_level: Option<i32>,
        /// Write hash keys sorted (Perl's `sort_keys`).
        #[arg(long)]
        sort_keys: bool,
        /// Perl's `canonical`: sorted keys, and `REFN ARRAY`/`REFN HASH`
        /// instead of the short `ARRAYREF_n`/`HASHREF_n` forms.
        #[arg(long)]
        canonical: bool,
        /// Write a repeated string (over 3 bytes) as a COPY of the first
        /// (Perl's `dedupe_strings`).
        #[arg(long)]
        dedupe_strings: bool,
        /// As --dedupe-strings, with ALIAS (Perl's `aliased_dedupe_strings`).
        #[arg(long)]
        aliased_dedupe_strings: bool,
        /// Write every hash key in full (Perl's `no_shared_hashkeys`).
        #[arg(long)]
        no_shared_hashkeys: bool,
        /// Write to this file instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Decode each FILE fully: OK, or the error and its offset.
    ///
    /// Prints one line per file. Exits 1 if any file fails. `-` reads stdin.
    ///
    /// Example: sereal validate cache/*.srl
    Validate {
        /// Documents to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run the conformance checks on corpus files written by Perl's Sereal.
    ///
    /// The files are zstd-compressed JSON Lines (see tests/corpus/README.md): decode
    /// `canon`, re-encode it with the case's options and require Perl's
    /// exact bytes; decode `srl` and require the same graph. Prints each
    /// failure and `N passed, M failed`; exits 1 on any failure.
    ///
    /// Example: sereal conformance tests/corpus/perl-sereal-5.003/*.jsonl.zst
    Conformance {
        /// Corpus files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Compress {
    None,
    Snappy,
    Zlib,
    Zstd,
}

/// A failed command: its message (printed as is), or a quiet stop when the
/// reader of the output went away.
enum Stop {
    Msg(String),
    BrokenPipe,
}

type Res<T = ()> = Result<T, Stop>;

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Stop {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Stop::BrokenPipe
        } else {
            Stop::Msg(format!("error: {e}"))
        }
    }
}

fn msg<T>(m: impl Into<String>) -> Res<T> {
    Err(Stop::Msg(m.into()))
}

fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf)?;
        Ok(buf)
    } else {
        std::fs::read(path)
    }
}

fn read_file(path: &Path) -> Res<Vec<u8>> {
    read_input(path).or_else(|e| msg(format!("error: cannot read {}: {e}", path.display())))
}

/// A decoder error as `error at offset N: ...`.
fn decode_error(e: &Error) -> Stop {
    let in_body = e.to_string().contains("at decompressed body offset");
    Stop::Msg(match e.offset() {
        Some(o) if in_body => format!("error at decompressed body offset {o}: {}", e.kind()),
        Some(o) => format!("error at offset {o}: {}", e.kind()),
        None => format!("error: {}", e.kind()),
    })
}

/// The parsed header and the (decompressed) body of a document, with the
/// body offset of its first byte.
struct Parsed {
    header: Header,
    body: Vec<u8>,
    shift: usize,
}

fn parse(doc: &[u8]) -> Res<Parsed> {
    let header = Header::parse(doc).map_err(|e| decode_error(&e))?;
    let (body, shift) = Decoder::default()
        .body_bytes(doc, &header)
        .map_err(|e| decode_error(&e))?;
    Ok(Parsed {
        body: body.into_owned(),
        header,
        shift,
    })
}

/// A walker failure at buffer position `pos` of a body whose first byte is
/// at document offset `doc_start` (`None`: a decompressed body).
fn walk_error(f: Fail, doc_start: Option<usize>, shift: usize) -> Stop {
    match f {
        Fail::Io(e) => Stop::from(e),
        Fail::Bad(pos, m) => Stop::Msg(match doc_start {
            Some(s) => format!(
                "error at offset {} (body offset {}): {m}",
                s + pos,
                pos + shift
            ),
            None => format!(
                "error at decompressed body offset {pos} (body offset {}): {m}",
                pos + shift
            ),
        }),
    }
}

fn doc_type_name(h: &Header) -> &'static str {
    match h.compression {
        Compression::None => "raw",
        Compression::Snappy if h.legacy_snappy => "snappy (protocol 1 framing)",
        Compression::Snappy => "snappy",
        Compression::Zlib => "zlib",
        Compression::Zstd => "zstd",
    }
}

fn info(file: &Path, out: &mut dyn Write) -> Res {
    let doc = read_file(file)?;
    let p = parse(&doc)?;
    let h = &p.header;
    let compressed = h.compression != Compression::None;
    let doc_start = (!compressed).then_some(h.len);
    let stats =
        walk::walk(&p.body, p.shift, |_| Ok(())).map_err(|f| walk_error(f, doc_start, p.shift))?;
    let user = match &h.user_data {
        Some(r) => {
            let s = walk::walk(&doc[r.clone()], 1, |_| Ok(()))
                .map_err(|f| walk_error(f, Some(r.start), 1))?;
            format!("yes, {} bytes, {} values", r.len(), s.values)
        }
        None => "no".into(),
    };
    writeln!(out, "file:              {}", file.display())?;
    writeln!(out, "protocol version:  {}", h.version)?;
    writeln!(
        out,
        "document type:     {} ({})",
        doc[4] >> 4,
        doc_type_name(h)
    )?;
    if compressed {
        let packed = doc.len() - h.len;
        writeln!(
            out,
            "compression:       {} bytes -> {packed} bytes (ratio {:.2})",
            p.body.len(),
            p.body.len() as f64 / packed.max(1) as f64
        )?;
    } else {
        writeln!(out, "compression:       none")?;
    }
    writeln!(out, "header size:       {} bytes", h.len)?;
    writeln!(out, "user header data:  {user}")?;
    writeln!(out, "body size:         {} bytes", p.body.len())?;
    write_stats(out, &stats)?;
    let dec = Decoder::default();
    match dec.decode_with_header(&doc) {
        Ok((hv, v)) => {
            writeln!(out, "decodes:           yes")?;
            v.dismantle();
            if let Some(hv) = hv {
                hv.dismantle();
            }
            Ok(())
        }
        Err(e) => {
            writeln!(out, "decodes:           no")?;
            Err(decode_error(&e))
        }
    }
}

fn write_stats(out: &mut dyn Write, s: &Stats) -> Res {
    writeln!(out, "values:            {}", s.values)?;
    writeln!(out, "hash keys:         {}", s.keys)?;
    writeln!(out, "max depth:         {}", s.max_depth)?;
    writeln!(out, "tracked items:     {}", s.tracked)?;
    writeln!(
        out,
        "back-references:   {} REFP, {} ALIAS, {} COPY, {} OBJECTV",
        s.refp, s.alias, s.copy, s.objectv
    )?;
    writeln!(out, "objects:           {}", s.objects)?;
    writeln!(out, "weak references:   {}", s.weaken)?;
    Ok(())
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
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s.push('"');
    if bytes.len() > MAX {
        s.push_str(&format!("... ({} bytes)", bytes.len()));
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

fn dump(file: &Path, header: bool, out: &mut dyn Write) -> Res {
    let doc = read_file(file)?;
    let p = parse(&doc)?;
    let h = &p.header;
    let compressed = h.compression != Compression::None;
    let (buf, shift, doc_start) = if header {
        let Some(r) = h.user_data.clone() else {
            return msg("error: the document has no user header data");
        };
        writeln!(
            out,
            "# user header data of {} at offset {}; offsets count from 1 at its first byte",
            walk::bytes(r.len() as u64),
            r.start
        )?;
        (&doc[r.clone()], 1, Some(r.start))
    } else {
        let base = if h.version == 1 {
            "offsets count from the document's start (protocol 1)".to_string()
        } else {
            "offsets count from 1 at the body's first byte".to_string()
        };
        let kind = if compressed {
            format!(
                "{} body, {} bytes decompressed",
                doc_type_name(h),
                p.body.len()
            )
        } else {
            format!(
                "body of {} at offset {}",
                walk::bytes(p.body.len() as u64),
                h.len
            )
        };
        writeln!(out, "# protocol {}, {kind}; {base}", h.version)?;
        (&p.body[..], p.shift, (!compressed).then_some(h.len))
    };
    writeln!(out, "# * = track bit set (the item is referred to later)")?;
    walk::walk(buf, shift, |item| dump_line(out, item))
        .map_err(|f| walk_error(f, doc_start, shift))?;
    Ok(())
}

/// Runs `f` with the output: standard output, or a file written whole
/// only when `f` succeeds.
fn with_output(output: Option<&Path>, binary: bool, f: impl FnOnce(&mut dyn Write) -> Res) -> Res {
    match output {
        Some(path) if path.as_os_str() != "-" => {
            let mut buf = Vec::new();
            f(&mut buf)?;
            std::fs::write(path, buf)
                .or_else(|e| msg(format!("error: cannot write {}: {e}", path.display())))
        }
        _ => {
            let stdout = std::io::stdout();
            if binary && stdout.is_terminal() {
                return msg(
                    "error: not writing a binary document to a terminal; use -o FILE or a pipe",
                );
            }
            let mut w = std::io::BufWriter::new(stdout.lock());
            f(&mut w)?;
            w.flush()?;
            Ok(())
        }
    }
}

fn to_json(file: &Path, lossless: bool, header: bool, compact: bool, out: &mut dyn Write) -> Res {
    let bytes = read_file(file)?;
    let doc = Document::decode(&bytes, &Decoder::default()).map_err(|e| decode_error(&e))?;
    let result = if header && !lossless {
        match &doc.header {
            Some(h) => sereal::json::to_json(h, false),
            None => return msg("error: the document has no user header data"),
        }
    } else {
        doc.to_json(lossless)
    };
    doc.body.dismantle();
    if let Some(h) = &doc.header {
        h.dismantle();
    }
    let j = result.map_err(|e| Stop::Msg(format!("error: {}", e.kind())))?;
    if compact {
        serde_json::to_writer(&mut *out, &j).map_err(std::io::Error::from)?;
    } else if lossless {
        write_lossless(&mut *out, &j)?;
    } else {
        write_pretty(&mut *out, &j, 0)?;
    }
    writeln!(out)?;
    Ok(())
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
    Stop::Msg(format!(
        "error at offset {offset} (line {line}, column {col}): {m}"
    ))
}

struct FromJsonArgs<'a> {
    file: &'a Path,
    lossless: bool,
    protocol: Option<u8>,
    compress: Option<Compress>,
    compress_threshold: Option<usize>,
    compress_level: Option<i32>,
    sort_keys: bool,
    canonical: bool,
    dedupe_strings: bool,
    aliased_dedupe_strings: bool,
    no_shared_hashkeys: bool,
}

fn from_json(a: &FromJsonArgs, out: &mut dyn Write) -> Res {
    let text = read_file(a.file)?;
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

/// Prints a line; a closed output is not worth a panic.
fn say(line: std::fmt::Arguments) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

fn validate(files: &[PathBuf]) -> ExitCode {
    let dec = Decoder::default();
    let mut failed = 0;
    for f in files {
        let result = read_input(f).map_err(|e| e.to_string()).and_then(|doc| {
            dec.decode_with_header(&doc)
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        match result {
            Ok(()) => say(format_args!("{}: OK", f.display())),
            Err(e) => {
                failed += 1;
                say(format_args!("{}: {e}", f.display()));
            }
        }
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn conformance(files: &[PathBuf]) -> ExitCode {
    let mut report = Report::default();
    for f in files {
        match read_cases(f) {
            Ok(cases) => report.add(&cases),
            Err(e) => {
                eprintln!("sereal: cannot read {}: {e}", f.display());
                return ExitCode::FAILURE;
            }
        }
    }
    for (id, name, profile, what, at) in &report.failed {
        let at = at
            .map(|o| format!(" (first difference at byte {o})"))
            .unwrap_or_default();
        say(format_args!(
            "FAIL case {id} [{profile}] {name}: {what}{at}"
        ));
    }
    say(format_args!("{}", report.summary()));
    if report.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run(cli: Cli) -> ExitCode {
    let result = match &cli.command {
        Command::Validate { files } => return validate(files),
        Command::Conformance { files } => return conformance(files),
        Command::Info { file } => with_output(None, false, |out| info(file, out)),
        Command::Dump { file, header } => with_output(None, false, |out| dump(file, *header, out)),
        Command::ToJson {
            file,
            lossless,
            header,
            compact,
            output,
        } => with_output(output.as_deref(), false, |out| {
            to_json(file, *lossless, *header, *compact, out)
        }),
        Command::FromJson {
            file,
            lossless,
            protocol,
            compress,
            compress_threshold,
            compress_level,
            sort_keys,
            canonical,
            dedupe_strings,
            aliased_dedupe_strings,
            no_shared_hashkeys,
            output,
        } => {
            let args = FromJsonArgs {
                file,
                lossless: *lossless,
                protocol: *protocol,
                compress: *compress,
                compress_threshold: *compress_threshold,
                compress_level: *compress_level,
                sort_keys: *sort_keys,
                canonical: *canonical,
                dedupe_strings: *dedupe_strings,
                aliased_dedupe_strings: *aliased_dedupe_strings,
                no_shared_hashkeys: *no_shared_hashkeys,
            };
            with_output(output.as_deref(), true, |out| from_json(&args, out))
        }
    };
    match result {
        Ok(()) | Err(Stop::BrokenPipe) => ExitCode::SUCCESS,
        Err(Stop::Msg(m)) => {
            eprintln!("{m}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Deep documents make deep JSON, which serde_json writes and frees
    // recursively: run on a thread with room for it.
    let worker = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || run(cli));
    match worker {
        Ok(handle) => handle.join().unwrap_or(ExitCode::FAILURE),
        Err(_) => {
            eprintln!("error: cannot start the worker thread");
            ExitCode::FAILURE
        }
    }
}
