//! Inputs: files and standard input, the documents one after another in
//! each, and errors worded for a person, with offsets in the input.

use crate::walk::Fail;
use base64::Engine;
use sereal::protocol::{MAGIC_V1, MAGIC_V3};
use sereal::view::View;
use sereal::{Decoder, Error, ErrorKind, Position};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The options every document is decoded with, set once from the
/// command line.
static DECODER_OPTIONS: std::sync::OnceLock<sereal::DecoderOptions> = std::sync::OnceLock::new();

/// Sets the options every document is decoded with (before any is read).
pub fn set_decoder_options(o: sereal::DecoderOptions) {
    // Set once, before the command runs.
    let _ = DECODER_OPTIONS.set(o);
}

/// A decoder with the command line's options.
pub fn decoder() -> sereal::Decoder {
    sereal::Decoder::new(DECODER_OPTIONS.get().cloned().unwrap_or_default())
}

/// A failed command or input: its message (printed as is), or a quiet stop
/// when the reader of the output went away.
pub enum Stop {
    Msg(String),
    /// A failure the command has already reported.
    Failed,
    BrokenPipe,
}

pub type Res<T = ()> = Result<T, Stop>;

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Stop {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Stop::BrokenPipe
        } else {
            Stop::Msg(format!("error: {e}"))
        }
    }
}

pub fn msg<T>(m: impl Into<String>) -> Res<T> {
    Err(Stop::Msg(m.into()))
}

/// The inputs to read: the files named, or standard input when there are
/// none.
pub fn paths(files: &[PathBuf]) -> Vec<PathBuf> {
    if files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        files.to_vec()
    }
}

/// The bytes of a file, or of standard input for `-`.
pub fn read(path: &Path) -> Res<Vec<u8>> {
    let read = if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map(|_| buf)
    } else {
        std::fs::read(path)
    };
    read.or_else(|e| msg(format!("error: cannot read {}: {e}", path.display())))
}

/// The bytes of an input: read, or (a file) mapped into memory.
pub enum Source {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl Source {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Source::Read(v) => v,
            Source::Mapped(m) => m,
        }
    }

    /// Says that `part` (of these bytes, or of other memory) will not be
    /// read for a while: a mapped file's whole pages in it leave the
    /// process's memory, to be read from the file again if they are
    /// needed. So a walk over a large file holds a few pages of it, not
    /// the whole file.
    pub fn release(&self, part: &[u8]) {
        let Source::Mapped(m) = self else { return };
        const PAGE: usize = 4096;
        let base = m.as_ptr() as usize;
        let start = part.as_ptr() as usize;
        if start < base || start + part.len() > base + m.len() {
            return;
        }
        let from = (start - base).div_ceil(PAGE) * PAGE;
        let to = (start - base + part.len()) / PAGE * PAGE;
        if to > from {
            // SAFETY: the mapping is read-only and never written through,
            // so dropping its pages loses nothing: they read again from
            // the file.
            let _ = unsafe {
                m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
            };
        }
    }
}

/// A file mapped into memory, if it is a regular file that maps.
fn map(path: &Path) -> Option<Source> {
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() == 0 {
        return None;
    }
    // SAFETY: the mapping is only read. Were the file changed while it is
    // read, the bytes seen could change, as they could between reads;
    // every access is checked against the mapping's length.
    unsafe { memmap2::Mmap::map(&file) }
        .ok()
        .map(Source::Mapped)
}

/// The bytes of a Sereal input, decoded from base64 text when `base64`; a
/// file (not base64) is mapped into memory.
pub fn read_documents(path: &Path, base64: bool) -> Res<Source> {
    if !base64 && path.as_os_str() != "-" {
        if let Some(mapped) = map(path) {
            return Ok(mapped);
        }
    }
    let bytes = read(path)?;
    if !base64 {
        return Ok(Source::Read(bytes));
    }
    let text: Vec<u8> = bytes
        .into_iter()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let config = base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent);
    let url_safe = text.iter().any(|&b| b == b'-' || b == b'_');
    let alphabet = if url_safe {
        &base64::alphabet::URL_SAFE
    } else {
        &base64::alphabet::STANDARD
    };
    base64::engine::GeneralPurpose::new(alphabet, config)
        .decode(&text)
        .map(Source::Read)
        .or_else(|e| {
            msg(format!(
                "error: {} is not base64 text ({e}; whitespace is ignored)",
                path.display()
            ))
        })
}

/// One document of an input.
#[derive(Clone)]
pub struct Doc<'a> {
    /// The input's name as given (`-` for standard input).
    pub name: &'a str,
    /// How many inputs the command was given.
    pub inputs: usize,
    /// Its number in the input, from 1.
    pub index: usize,
    /// Its offset in the input.
    pub offset: usize,
    /// The input from the document's first byte to the input's end.
    pub bytes: &'a [u8],
    /// Where the bytes come from.
    pub source: &'a Source,
}

impl Doc<'_> {
    /// Whether the input holds other documents, this one being `len`
    /// bytes long (`None`: unknown, as for a document that fails).
    /// Whitespace after it (see [`only_whitespace`]) is not another.
    pub fn several(&self, len: Option<usize>) -> bool {
        self.index > 1
            || len.is_some_and(|l| {
                self.bytes
                    .get(l..)
                    .is_some_and(|rest| !only_whitespace(rest))
            })
    }

    /// The input's name, with the document's number and offset when the
    /// input holds several.
    pub fn label(&self, len: Option<usize>) -> String {
        if self.several(len) {
            format!(
                "{}, document {} at offset {}",
                self.name, self.index, self.offset
            )
        } else {
            self.name.to_owned()
        }
    }

    /// The label of a document that needs one to be told from the others
    /// in the output: of an input among several, or of several documents.
    pub fn heading(&self, len: Option<usize>) -> Option<String> {
        (self.inputs > 1 || self.several(len)).then(|| self.label(len))
    }

    /// ` (document N)` after a stream offset, for documents after the first.
    fn which(&self) -> String {
        if self.index > 1 {
            format!(" (document {})", self.index)
        } else {
            String::new()
        }
    }

    /// A decoder error on this document's bytes, its offset made an offset
    /// in the input: `error at offset N: ...`.
    pub fn error(&self, e: &Error) -> Stop {
        Stop::Msg(self.error_text(e))
    }

    /// [`Doc::error`] named as [`Doc::named_error_text`] names it.
    pub fn named_error(&self, e: &Error, len: Option<usize>) -> Stop {
        Stop::Msg(self.named_error_text(e, len))
    }

    /// [`Doc::error_text`] after the document's label (see [`Doc::label`];
    /// `len`: the document's length, if known), as `validate` prints it:
    /// `FILE: error at offset N: ...`, `FILE, document 2 at offset 12:
    /// error ...`.
    pub fn named_error_text(&self, e: &Error, len: Option<usize>) -> String {
        format!("{}: {}", self.label(len), self.error_text(e))
    }

    /// The text of [`Doc::error`].
    pub fn error_text(&self, e: &Error) -> String {
        let kind = e.kind();
        match e.position() {
            Some(Position::DecompressedBody(o)) => format!(
                "error at decompressed body offset {o}{}: {kind}",
                self.body_of()
            ),
            Some(Position::Document(o)) => format!(
                "error at offset {}{}: {kind}{}",
                self.offset + o,
                self.which(),
                self.hint(kind, o)
            ),
            None => format!("error{}: {kind}", self.which()),
        }
    }

    /// ` of the document at offset N`, for a document after the first.
    fn body_of(&self) -> String {
        if self.index > 1 {
            format!(" (document {} at offset {})", self.index, self.offset)
        } else {
            String::new()
        }
    }

    /// What the bytes look like when they are not Sereal.
    fn hint(&self, kind: &ErrorKind, at: usize) -> &'static str {
        if at != 0 {
            return "";
        }
        match kind {
            ErrorKind::Truncated if self.bytes.is_empty() => " (the input is empty)",
            ErrorKind::BadMagic if looks_like_json(self.bytes) => {
                "; this looks like JSON: `sereal from-json` reads JSON"
            }
            ErrorKind::BadMagic if looks_like_base64(self.bytes) => {
                "; this looks like base64 text of a Sereal document: add --base64 (or pipe it through `base64 -d`)"
            }
            _ => "",
        }
    }

    /// A tag walker failure at position `pos` of a buffer whose first byte
    /// is at this document's offset `start` (`None`: a decompressed body)
    /// and has body offset `shift`.
    pub fn walk_error(&self, f: Fail, start: Option<usize>, shift: usize) -> Stop {
        match f {
            Fail::Io(e) => Stop::from(e),
            Fail::Bad(pos, m) | Fail::Refused(_, pos, m) => Stop::Msg(match start {
                Some(s) => format!(
                    "error at offset {}{} (body offset {}): {m}",
                    self.offset + s + pos,
                    self.which(),
                    pos + shift
                ),
                None => format!(
                    "error at decompressed body offset {pos}{} (body offset {}): {m}",
                    self.body_of(),
                    pos + shift
                ),
            }),
        }
    }
}

impl<'a> Doc<'a> {
    /// A view of this document (see `sereal::view`), and the document's
    /// length: its input may hold more after it. The document is walked
    /// through and checked as the decoder reads it (the walk tells where
    /// a raw body ends), but no value is built. Errors are named
    /// ([`Doc::named_error`]).
    pub fn view<'v>(&self, dec: &'v Decoder) -> Res<(View<'v>, usize)>
    where
        'a: 'v,
    {
        let fail = |e: Error| self.named_error(&e, None);
        let (view, framed) = match dec.view(self.bytes) {
            // A compressed document followed by more: its frame's end is
            // in its header, and the view refuses what follows it.
            Err(e) if e.kind() == &ErrorKind::TrailingData => match e.position() {
                Some(Position::Document(end)) => (dec.view(&self.bytes[..end]), end),
                _ => (Err(e), 0),
            },
            view => (view, self.bytes.len()),
        };
        let view = view.map_err(fail)?;
        let root = view.root();
        match root.position() {
            // A raw body ends where its root value does.
            Position::Document(start) => {
                let len = start + root.raw().map_err(fail)?.len();
                if len == framed {
                    return Ok((view, len));
                }
                Ok((dec.view(&self.bytes[..len]).map_err(fail)?, len))
            }
            // A decompressed body fills its frame.
            Position::DecompressedBody(_) => {
                view.check().map_err(fail)?;
                Ok((view, framed))
            }
        }
    }
}

fn looks_like_json(b: &[u8]) -> bool {
    let text = b.trim_ascii_start();
    matches!(text.first(), Some(b'{' | b'[' | b'"')) && std::str::from_utf8(b).is_ok()
}

/// Whether the bytes start with base64 text of a Sereal magic string.
fn looks_like_base64(b: &[u8]) -> bool {
    let text = b.trim_ascii_start();
    let Some(head) = text.get(..8) else {
        return false;
    };
    let engine = if head.iter().any(|&c| c == b'-' || c == b'_') {
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
    } else {
        &base64::engine::general_purpose::STANDARD_NO_PAD
    };
    engine
        .decode(head)
        .is_ok_and(|m| m.starts_with(MAGIC_V1) || m.starts_with(MAGIC_V3))
}

/// Whether `rest`, the bytes after a document, are ASCII whitespace only
/// (space, tab, line feed, form feed, carriage return; or none at all),
/// such as the newline `redis-cli --raw` or `echo` ends its output with.
/// Such a tail is not a document: the input ends with the document before
/// it. Whitespace before a document, or between two, is not skipped.
pub fn only_whitespace(rest: &[u8]) -> bool {
    rest.iter().all(u8::is_ascii_whitespace)
}

/// Runs `each` on the documents of every input in turn, writing to `out`;
/// `each` returns the length of its document. An input stops at its first
/// failed document (where the next would start is unknown), which is
/// reported on standard error after what was written; the next input is
/// read. Returns how many inputs failed (0: every document of every input
/// succeeded), an input that cannot be read among them.
pub fn each_document(
    files: &[PathBuf],
    base64: bool,
    out: &mut Output,
    mut each: impl FnMut(&Doc, &mut dyn Write) -> Res<usize>,
) -> Res<usize> {
    let paths = paths(files);
    let mut failed = 0;
    for path in &paths {
        let name = path.display().to_string();
        let result = read_documents(path, base64).and_then(|source| {
            documents_of(&name, paths.len(), &source, |doc| each(doc, out.writer()))
        });
        match result {
            Ok(()) => {}
            Err(Stop::BrokenPipe) => return Err(Stop::BrokenPipe),
            Err(Stop::Failed) => failed += 1,
            Err(Stop::Msg(m)) => {
                failed += 1;
                out.flush()?;
                eprintln!("{m}");
            }
        }
    }
    Ok(failed)
}

/// Runs `each` on the documents of one input in turn, to its first
/// failure; `each` returns the length of its document.
fn documents_of<'a>(
    name: &'a str,
    inputs: usize,
    source: &'a Source,
    mut each: impl FnMut(&Doc<'a>) -> Res<usize>,
) -> Res {
    let bytes = source.bytes();
    let mut offset = 0;
    let mut index = 1;
    loop {
        let doc = Doc {
            name,
            inputs,
            index,
            offset,
            bytes: &bytes[offset..],
            source,
        };
        // at least one byte, or the empty loop would never end
        offset += each(&doc)?.max(1);
        if offset >= bytes.len() || only_whitespace(&bytes[offset..]) {
            return Ok(());
        }
        index += 1;
    }
}

/// Every input read (standard input when there are none), with its name:
/// for a command that reads all its input before it writes.
pub fn read_all(files: &[PathBuf], base64: bool) -> Res<Vec<(String, Source)>> {
    paths(files)
        .iter()
        .map(|p| Ok((p.display().to_string(), read_documents(p, base64)?)))
        .collect()
}

/// A document of an input read whole, walked through and checked.
pub struct Part<'a> {
    doc: Doc<'a>,
    /// Its length.
    len: usize,
}

impl<'a> Part<'a> {
    /// The document's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        &self.doc.bytes[..self.len]
    }

    /// An error about the document, named as [`Doc::named_error`] names it.
    pub fn error(&self, e: &Error) -> Stop {
        self.doc.named_error(e, Some(self.len))
    }
}

/// Every document of the inputs [`read_all`] read, each walked through
/// and checked ([`Doc::view`]), in order; the first that fails is the
/// error.
pub fn documents<'a>(inputs: &'a [(String, Source)], dec: &Decoder) -> Res<Vec<Part<'a>>> {
    let mut parts = Vec::new();
    for (name, source) in inputs {
        documents_of(name, inputs.len(), source, |doc| {
            let (_, len) = doc.view(dec)?;
            parts.push(Part {
                doc: doc.clone(),
                len,
            });
            Ok(len)
        })?;
    }
    Ok(parts)
}

/// Writes a binary document to `output`, or to standard output (`None`
/// or `-`) unless that is a terminal.
pub fn write_document(doc: &[u8], output: Option<&Path>) -> Res<bool> {
    use std::io::IsTerminal;
    if output.is_none_or(|p| p.as_os_str() == "-") && std::io::stdout().is_terminal() {
        return msg("error: not writing a binary document to a terminal; use -o FILE or a pipe");
    }
    let mut out = Output::open(output)?;
    out.writer().write_all(doc)?;
    out.close(true)?;
    Ok(true)
}

/// Where a command writes: standard output, or a file that is removed
/// again if the command fails.
pub struct Output {
    w: std::io::BufWriter<Box<dyn Write>>,
    file: Option<PathBuf>,
}

impl Output {
    pub fn open(path: Option<&Path>) -> Res<Output> {
        let (sink, file): (Box<dyn Write>, _) = match path {
            Some(p) if p.as_os_str() != "-" => {
                let f = std::fs::File::create(p)
                    .or_else(|e| msg(format!("error: cannot write {}: {e}", p.display())))?;
                (Box::new(f), Some(p.to_owned()))
            }
            _ => (Box::new(std::io::stdout()), None),
        };
        Ok(Output {
            w: std::io::BufWriter::with_capacity(1 << 16, sink),
            file,
        })
    }

    pub fn writer(&mut self) -> &mut dyn Write {
        &mut self.w
    }

    /// Flushes what was written, so that an error printed next comes after it.
    pub fn flush(&mut self) -> Res {
        self.w.flush().map_err(|e| self.write_error(e))
    }

    fn write_error(&self, e: std::io::Error) -> Stop {
        match &self.file {
            Some(p) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Stop::Msg(format!("error: cannot write {}: {e}", p.display()))
            }
            _ => Stop::from(e),
        }
    }

    /// Ends the output: flushed, or (after a failure) an output file removed.
    pub fn close(mut self, ok: bool) -> Res {
        if ok {
            return self.flush();
        }
        let Output { w, file } = self;
        drop(w);
        if let Some(p) = file {
            let _ = std::fs::remove_file(p);
        }
        Ok(())
    }
}
