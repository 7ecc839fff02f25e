//! `show`: a document in Perl's own notation, as Data::Dumper prints it
//! (with `$Data::Dumper::Indent = 1` and `$Data::Dumper::Sortkeys = 1`):
//! `$VAR1 = ...;`, `bless( ..., 'Class' )`, and a node met again written as
//! the path where it was first printed (`$VAR1->[0]{'group'}`). What Perl's
//! notation cannot say is a comment at the end of the line: `# weak`,
//! `# utf8` (a UTF-8 string of ASCII text), `# alias`.

use crate::input::{Doc, Res, Stop};
use sereal::{Body, Key, Ref, Value};
use std::collections::HashMap;
use std::io::{self, Write};

/// Prints one document (or with `header` its user header data) as
/// `$VARn = ...;`, n being the document's number in its input.
pub fn show(doc: &Doc, header: bool, out: &mut dyn Write) -> Res<usize> {
    let dec = crate::input::decoder();
    let fail = |e| doc.error(&e);
    let user = dec.decode_header(doc.bytes).map_err(fail)?;
    let (body, used) = dec.decode_prefix(doc.bytes).map_err(fail)?;
    let root = if header {
        user.as_ref().ok_or_else(|| {
            Stop::Msg(format!(
                "error: {} has no user header data",
                doc.heading(Some(used))
                    .unwrap_or_else(|| "the document".into())
            ))
        })?
    } else {
        &body
    };
    if let Some(label) = doc.heading(Some(used)) {
        writeln!(out, "# {label}")?;
    }
    let name = format!("$VAR{}", doc.index);
    write!(out, "{name} = ")?;
    let mut p = Printer {
        out,
        root: name,
        path: Vec::new(),
        seen: HashMap::new(),
    };
    let note = p.value(root, 0)?;
    p.out.write_all(b";")?;
    p.end_line(note)?;
    Ok(used)
}

/// A step from a slot to a slot inside what it refers to.
enum Step {
    Index(usize),
    /// A hash key, quoted.
    Key(String),
    /// The scalar a scalar reference refers to.
    Deref,
}

/// Where a shared node was first printed.
struct Place {
    path: String,
    /// The path names the node itself (an alias), not a reference to it.
    itself: bool,
}

struct Printer<'w> {
    out: &'w mut dyn Write,
    root: String,
    path: Vec<Step>,
    /// Shared nodes printed so far, by identity.
    seen: HashMap<usize, Place>,
}

/// Indentation stops growing after this many levels, so that a deep
/// document does not make gigabytes of spaces.
const MAX_INDENT: usize = 32;

/// A node's identity: the address of its body, which lives in the node.
pub fn id(r: &Ref) -> usize {
    &*r.body() as *const Body as usize
}

/// Whether more than one handle reaches the node (only those are tracked).
pub fn shared(r: &Ref) -> bool {
    r.strong_count() > 1 || r.weak_count() > 0
}

impl Printer<'_> {
    fn path(&self) -> String {
        let mut s = self.root.clone();
        let mut arrow = true;
        for step in &self.path {
            match step {
                Step::Index(i) => {
                    s.push_str(if arrow { "->[" } else { "[" });
                    s.push_str(&i.to_string());
                    s.push(']');
                    arrow = false;
                }
                Step::Key(k) => {
                    s.push_str(if arrow { "->{" } else { "{" });
                    s.push_str(k);
                    s.push('}');
                    arrow = false;
                }
                Step::Deref => {
                    s = format!("${{{s}}}");
                    arrow = true;
                }
            }
        }
        s
    }

    fn indent(&mut self, depth: usize) -> io::Result<()> {
        for _ in 0..depth.min(MAX_INDENT) {
            self.out.write_all(b"  ")?;
        }
        Ok(())
    }

    fn end_line(&mut self, note: Option<&str>) -> io::Result<()> {
        match note {
            Some(n) => writeln!(self.out, " # {n}"),
            None => writeln!(self.out),
        }
    }

    /// Writes a value at the current path; returns the comment it needs.
    fn value(&mut self, v: &Value, depth: usize) -> io::Result<Option<&'static str>> {
        let out = &mut *self.out;
        match v {
            Value::Undef | Value::CanonicalUndef => out.write_all(b"undef")?,
            Value::Bool(b) => out.write_all(if *b { b"!!1" } else { b"!!0" })?,
            Value::True => out.write_all(b"!!1")?,
            Value::False => out.write_all(b"!!0")?,
            Value::Int(i) => integer(out, &i.to_string())?,
            Value::UInt(u) => integer(out, &u.to_string())?,
            Value::Float(f) => write!(out, "'{}'", perl_number(f64::from(*f)))?,
            Value::Double(d) => write!(out, "'{}'", perl_number(*d))?,
            Value::LongDouble(b) | Value::Float128(b) => {
                write!(out, "'0x{}'", hex(&b[..]))?;
                return Ok(Some("long double, bytes in hex"));
            }
            Value::Bytes(s) => out.write_all(quote(Latin1(s.as_bytes()), false).as_bytes())?,
            Value::Utf8(s) => match std::str::from_utf8(s.as_bytes()) {
                Ok(t) => {
                    out.write_all(quote(t.chars(), true).as_bytes())?;
                    if t.is_ascii() {
                        return Ok(Some("utf8"));
                    }
                }
                Err(_) => {
                    out.write_all(quote(Latin1(s.as_bytes()), false).as_bytes())?;
                    return Ok(Some("utf8 flag on bytes that are not UTF-8"));
                }
            },
            Value::Ref(r) => return self.node(r, false, depth),
            Value::Weak(w) => {
                match w.upgrade() {
                    Some(r) => self.node(&r, false, depth)?,
                    None => {
                        out.write_all(b"undef")?;
                        return Ok(Some("weak, its referent is gone"));
                    }
                };
                return Ok(Some("weak"));
            }
            Value::Alias(r) => {
                self.node(r, true, depth)?;
                return Ok(Some("alias"));
            }
            Value::Foreign(x) => {
                out.write_all(b"undef")?;
                return Ok(Some(x.type_name()));
            }
        }
        Ok(None)
    }

    /// Writes a node reached by a reference, or with `itself` (an alias)
    /// the node in the slot; returns the comment a scalar in it needs.
    fn node(&mut self, r: &Ref, itself: bool, depth: usize) -> io::Result<Option<&'static str>> {
        let id = id(r);
        if let Some(at) = self.seen.get(&id) {
            let text = match (at.itself, itself) {
                (true, false) => format!("\\{}", at.path),
                (false, true) => format!("${{{}}}", at.path),
                _ => at.path.clone(),
            };
            self.out.write_all(text.as_bytes())?;
            return Ok(None);
        }
        if shared(r) {
            let path = self.path();
            self.seen.insert(id, Place { path, itself });
        }
        let class = r.class();
        let body = r.body();
        let class = match (&*body, class) {
            // Perl's qr// objects are blessed into Regexp
            (Body::Regexp(_), Some(c)) if c.as_bytes() == b"Regexp" => None,
            (_, c) => c,
        };
        if class.is_some() {
            self.out.write_all(b"bless( ")?;
        }
        let mut note = None;
        match &*body {
            Body::Array(a) | Body::Frozen(a) => {
                let items = a.iter().enumerate().map(|(i, v)| (Step::Index(i), v));
                self.container(b"[", b"]", None, items, depth)?
            }
            Body::Hash(h) => {
                let mut entries: Vec<(String, &Key, &Value)> =
                    h.iter().map(|(k, v)| (chars(k), k, v)).collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                let items = entries.into_iter().map(|(_, k, v)| (Step::Key(key(k)), v));
                self.container(b"{", b"}", Some(" => "), items, depth)?
            }
            Body::Scalar(v) if itself => note = self.value(v, depth)?,
            Body::Scalar(v) => {
                self.out.write_all(if class.is_some() {
                    b"do{\\(my $o = "
                } else {
                    b"\\"
                })?;
                self.path.push(Step::Deref);
                let inner = self.value(v, depth);
                self.path.pop();
                note = inner?;
                if class.is_some() {
                    self.out.write_all(b")}")?;
                }
            }
            Body::Regexp(re) => {
                let pattern = slashes_escaped(&String::from_utf8_lossy(re.pattern.as_bytes()));
                let flags = String::from_utf8_lossy(re.flags.as_bytes());
                write!(self.out, "qr/{pattern}/{flags}")?;
            }
        }
        if let Some(c) = class {
            write!(self.out, ", {} )", key(&c))?;
        }
        Ok(note)
    }

    /// Writes an array or hash: its items one per line, indented.
    fn container<'v>(
        &mut self,
        open: &[u8],
        close: &[u8],
        key_sep: Option<&str>,
        items: impl ExactSizeIterator<Item = (Step, &'v Value)>,
        depth: usize,
    ) -> io::Result<()> {
        self.out.write_all(open)?;
        let n = items.len();
        if n == 0 {
            return self.out.write_all(close);
        }
        self.out.write_all(b"\n")?;
        for (i, (step, v)) in items.enumerate() {
            self.indent(depth + 1)?;
            if let (Some(sep), Step::Key(k)) = (key_sep, &step) {
                write!(self.out, "{k}{sep}")?;
            }
            self.path.push(step);
            let note = self.value(v, depth + 1);
            self.path.pop();
            let note = note?;
            if i + 1 < n {
                self.out.write_all(b",")?;
            }
            self.end_line(note)?;
        }
        self.indent(depth)?;
        self.out.write_all(close)
    }
}

/// An integer as Data::Dumper writes it: bare when its text is at most 10
/// characters, quoted when longer (so that a 32-bit Perl reading it copes).
fn integer(out: &mut dyn Write, digits: &str) -> io::Result<()> {
    if digits.len() <= 10 {
        out.write_all(digits.as_bytes())
    } else {
        write!(out, "'{digits}'")
    }
}

/// A float as Perl prints it (`%.15g`; `NaN`, `Inf`, `-Inf`): the
/// library's rule, [`Value::to_perl_string`].
fn perl_number(d: f64) -> String {
    Value::Double(d).to_perl_string().unwrap_or_default()
}

/// A regexp pattern for `qr/.../`: its bare slashes escaped, as
/// Data::Dumper does (an escaped character stays as it is).
fn slashes_escaped(pattern: &str) -> String {
    let mut s = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                s.push(c);
                s.extend(chars.next());
            }
            '/' => s.push_str("\\/"),
            c => s.push(c),
        }
    }
    s
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The characters of a byte string: one per byte, as Perl sees it.
#[derive(Clone)]
struct Latin1<'a>(&'a [u8]);

impl Iterator for Latin1<'_> {
    type Item = char;
    fn next(&mut self) -> Option<char> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(char::from(b))
    }
}

/// A string in Perl's notation: `'text'` when it is printable ASCII, else
/// `"..."` with escapes; characters above U+007F are written as themselves
/// (printable ones) in a UTF-8 string, and as `\x{..}` in a byte string.
fn quote(chars: impl Iterator<Item = char> + Clone, utf8: bool) -> String {
    let plain = chars.clone().all(|c| c == ' ' || c.is_ascii_graphic());
    let mut s = String::new();
    if plain {
        s.push('\'');
        for c in chars {
            if c == '\'' || c == '\\' {
                s.push('\\');
            }
            s.push(c);
        }
        s.push('\'');
        return s;
    }
    s.push('"');
    for c in chars {
        match c {
            '"' | '\\' | '$' | '@' => {
                s.push('\\');
                s.push(c);
            }
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            '\r' => s.push_str("\\r"),
            ' ' => s.push(' '),
            c if c.is_ascii_graphic() => s.push(c),
            c if utf8 && !c.is_ascii() && !c.is_control() && !c.is_whitespace() => s.push(c),
            c => s.push_str(&format!("\\x{{{:x}}}", c as u32)),
        }
    }
    s.push('"');
    s
}

/// A hash key's characters, for sorting as Perl's `sort` does.
fn chars(k: &Key) -> String {
    match (k.is_utf8(), k.as_str()) {
        (true, Some(s)) => s.to_owned(),
        _ => Latin1(k.as_bytes()).collect(),
    }
}

/// A hash key (or class name), quoted.
fn key(k: &Key) -> String {
    match (k.is_utf8(), k.as_str()) {
        (true, Some(s)) => quote(s.chars(), true),
        _ => quote(Latin1(k.as_bytes()), false),
    }
}
