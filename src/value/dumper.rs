//! Perl's own notation for a value, as Data::Dumper prints it (with
//! `$Data::Dumper::Sortkeys = 1`): `Display` for [`Value`] and [`Document`],
//! and what `sereal show` prints. One printer serves both.
//!
//! [`Document`]: super::Document

use super::fmt::hex;
use super::perl::float_string;
use super::{Body, Key, Ref, Value};
use hashbrown::HashMap;
use std::fmt::{self, Write};

/// A value in Perl's notation, as Data::Dumper prints it: `{}` as with
/// `$Data::Dumper::Indent = 0` (one line), `{:#}` as with `Indent = 1`
/// (one item per line, indented by two spaces, and a `# comment` at the end
/// of a line for what Perl's notation cannot say: `# weak`, `# utf8` for a
/// UTF-8 string of ASCII text, `# alias`). Hash keys are sorted
/// (`Sortkeys = 1`). A node met again is written as the path where it was
/// first printed (`$VAR1->{'a'}`), so cycles print finitely.
///
/// [`Value`]'s `Display` prints the value alone; [`Dumper::var`] names the
/// variable and prints a whole statement, `$VAR1 = ...;`.
///
/// ```
/// use sereal::{sereal, Ref, Value};
/// let v = sereal!({"city": "Oslo", "ids": [1, 2], "none": null});
/// assert_eq!(v.to_string(), "{'city' => 'Oslo','ids' => [1,2],'none' => undef}");
/// let obj = Value::from(Ref::hash([("x", 1)].into()).blessed("Point"));
/// assert_eq!(obj.dumper().var("$p").to_string(), "$p = bless( {'x' => 1}, 'Point' );");
/// assert_eq!(format!("{:#}", obj), "bless( {\n  'x' => 1\n}, 'Point' )");
/// ```
#[derive(Clone, Copy)]
pub struct Dumper<'a> {
    value: &'a Value,
    var: Option<&'a str>,
}

impl Value {
    /// This value in Perl's notation, to print: see [`Dumper`].
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let shared = Ref::array([1]);
    /// let v = Value::array([Value::from(&shared), Value::from(&shared)]);
    /// // a node met again prints as its path, as Data::Dumper prints it
    /// assert_eq!(v.dumper().to_string(), "[[1],$VAR1->[0]]");
    /// assert_eq!(v.dumper().var("$data").to_string(), "$data = [[1],$data->[0]];");
    /// ```
    pub fn dumper(&self) -> Dumper<'_> {
        Dumper {
            value: self,
            var: None,
        }
    }
}

impl<'a> Dumper<'a> {
    /// Prints a statement, `name = ...;`, with `name` (such as `$VAR3`) in
    /// the paths of nodes met again (which are otherwise `$VAR1`).
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let node = Ref::hash(Default::default());
    /// node.hash_mut().unwrap().insert("me", Value::from(&node)); // a cycle
    /// let v = Value::from(&node);
    /// assert_eq!(v.dumper().var("$self").to_string(), "$self = {'me' => $self};");
    /// # v.dismantle();
    /// ```
    pub fn var(self, name: &'a str) -> Dumper<'a> {
        Dumper {
            var: Some(name),
            ..self
        }
    }
}

impl fmt::Display for Dumper<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut p = Printer {
            pretty: f.alternate(),
            out: f,
            root: self.var.unwrap_or("$VAR1"),
            path: Vec::new(),
            seen: HashMap::new(),
        };
        if let Some(name) = self.var {
            write!(p.out, "{name} = ")?;
        }
        let note = p.value(self.value, 0)?;
        if self.var.is_some() {
            p.out.write_str(";")?;
            p.note(note)?;
        }
        Ok(())
    }
}

impl fmt::Display for Value {
    /// Perl's notation: see [`Dumper`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.dumper(), f)
    }
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

struct Printer<'f, 'g> {
    out: &'f mut fmt::Formatter<'g>,
    pretty: bool,
    root: &'f str,
    path: Vec<Step>,
    /// Shared nodes printed so far, by identity.
    seen: HashMap<usize, Place>,
}

/// Indentation stops growing after this many levels, so that a deep
/// document does not make gigabytes of spaces.
const MAX_INDENT: usize = 32;

/// Whether more than one handle reaches the node (only those are tracked).
fn shared(r: &Ref) -> bool {
    r.strong_count() > 1 || r.weak_count() > 0
}

type Note = Option<&'static str>;

impl Printer<'_, '_> {
    fn path(&self) -> String {
        let mut s = self.root.to_owned();
        let mut arrow = true;
        for step in &self.path {
            let (open, text, close) = match step {
                Step::Index(i) => ("[", i.to_string(), "]"),
                Step::Key(k) => ("{", k.clone(), "}"),
                Step::Deref => {
                    s = format!("${{{s}}}");
                    arrow = true;
                    continue;
                }
            };
            if arrow {
                s.push_str("->");
            }
            s.push_str(open);
            s.push_str(&text);
            s.push_str(close);
            arrow = false;
        }
        s
    }

    fn indent(&mut self, depth: usize) -> fmt::Result {
        for _ in 0..depth.min(MAX_INDENT) {
            self.out.write_str("  ")?;
        }
        Ok(())
    }

    /// The comment at the end of a line, in the multi-line form only.
    fn note(&mut self, note: Note) -> fmt::Result {
        match note {
            Some(n) if self.pretty => write!(self.out, " # {n}"),
            _ => Ok(()),
        }
    }

    /// Writes a value at the current path; returns the comment it needs.
    fn value(&mut self, v: &Value, depth: usize) -> Result<Note, fmt::Error> {
        let out = &mut *self.out;
        match v {
            Value::Undef | Value::CanonicalUndef => out.write_str("undef")?,
            Value::Bool(b) => out.write_str(if *b { "!!1" } else { "!!0" })?,
            Value::True => out.write_str("!!1")?,
            Value::False => out.write_str("!!0")?,
            Value::Int(i) => integer(out, &i.to_string())?,
            Value::UInt(u) => integer(out, &u.to_string())?,
            Value::Float(x) => write!(out, "'{}'", float_string(f64::from(*x)))?,
            Value::Double(d) => write!(out, "'{}'", float_string(*d))?,
            Value::LongDouble(b) | Value::Float128(b) => {
                write!(out, "'0x{}'", hex(&b[..]))?;
                return Ok(Some("long double, bytes in hex"));
            }
            Value::Bytes(s) => out.write_str(&quote(Latin1(s.as_bytes()), false))?,
            Value::Utf8(s) => match std::str::from_utf8(s.as_bytes()) {
                Ok(t) => {
                    out.write_str(&quote(t.chars(), true))?;
                    if t.is_ascii() {
                        return Ok(Some("utf8"));
                    }
                }
                Err(_) => {
                    out.write_str(&quote(Latin1(s.as_bytes()), false))?;
                    return Ok(Some("utf8 flag on bytes that are not UTF-8"));
                }
            },
            Value::Ref(r) => return self.node(r, false, depth),
            Value::Weak(w) => {
                match w.upgrade() {
                    Some(r) => self.node(&r, false, depth)?,
                    None => {
                        out.write_str("undef")?;
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
                out.write_str("undef")?;
                return Ok(Some(x.type_name()));
            }
        }
        Ok(None)
    }

    /// Writes a node reached by a reference, or with `itself` (an alias)
    /// the node in the slot; returns the comment a scalar in it needs.
    fn node(&mut self, r: &Ref, itself: bool, depth: usize) -> Result<Note, fmt::Error> {
        let id = r.addr();
        if let Some(at) = self.seen.get(&id) {
            match (at.itself, itself) {
                (true, false) => write!(self.out, "\\{}", at.path)?,
                (false, true) => write!(self.out, "${{{}}}", at.path)?,
                _ => self.out.write_str(&at.path)?,
            }
            return Ok(None);
        }
        if shared(r) {
            let path = self.path();
            self.seen.insert(id, Place { path, itself });
        }
        let Ok(body) = r.try_body() else {
            self.out.write_str("undef")?;
            return Ok(Some("borrowed for writing, not readable"));
        };
        let class = match (&*body, r.class()) {
            // Perl's qr// objects are blessed into Regexp
            (Body::Regexp(_), Some(c)) if c.as_bytes() == b"Regexp" => None,
            (_, c) => c,
        };
        if class.is_some() {
            self.out.write_str("bless( ")?;
        }
        let note = crate::stack::deeper(|| self.body(&body, itself, class.is_some(), depth))?;
        if let Some(c) = class {
            write!(self.out, ", {} )", key(&c))?;
        }
        Ok(note)
    }

    fn body(
        &mut self,
        body: &Body,
        itself: bool,
        blessed: bool,
        depth: usize,
    ) -> Result<Note, fmt::Error> {
        match body {
            Body::Array(a) | Body::Frozen(a) => {
                let items = a.iter().enumerate().map(|(i, v)| (Step::Index(i), v));
                self.container("[", "]", items, depth)?
            }
            Body::Hash(h) => {
                let mut entries: Vec<(String, &Key, &Value)> =
                    h.iter().map(|(k, v)| (chars(k), k, v)).collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                let items = entries.into_iter().map(|(_, k, v)| (Step::Key(key(k)), v));
                self.container("{", "}", items, depth)?
            }
            Body::Scalar(v) if itself => return self.value(v, depth),
            Body::Scalar(v) => {
                self.out
                    .write_str(if blessed { "do{\\(my $o = " } else { "\\" })?;
                self.path.push(Step::Deref);
                let note = self.value(v, depth);
                self.path.pop();
                if blessed {
                    self.out.write_str(")}")?;
                }
                return note;
            }
            Body::Regexp(re) => {
                let pattern = slashes_escaped(&String::from_utf8_lossy(re.pattern.as_bytes()));
                let flags = String::from_utf8_lossy(re.flags.as_bytes());
                write!(self.out, "qr/{pattern}/{flags}")?;
            }
        }
        Ok(None)
    }

    /// Writes an array or hash: on one line, or its items one per line,
    /// indented.
    fn container<'v>(
        &mut self,
        open: &str,
        close: &str,
        items: impl ExactSizeIterator<Item = (Step, &'v Value)>,
        depth: usize,
    ) -> fmt::Result {
        self.out.write_str(open)?;
        let n = items.len();
        if n == 0 {
            return self.out.write_str(close);
        }
        if self.pretty {
            self.out.write_str("\n")?;
        }
        for (i, (step, v)) in items.enumerate() {
            if self.pretty {
                self.indent(depth + 1)?;
            }
            if let Step::Key(k) = &step {
                write!(self.out, "{k} => ")?;
            }
            self.path.push(step);
            let note = self.value(v, depth + 1);
            self.path.pop();
            let note = note?;
            if i + 1 < n {
                self.out.write_str(",")?;
            }
            if self.pretty {
                self.note(note)?;
                self.out.write_str("\n")?;
            }
        }
        if self.pretty {
            self.indent(depth)?;
        }
        self.out.write_str(close)
    }
}

/// An integer as Data::Dumper writes it: bare when its text is at most 10
/// characters, quoted when longer (so that a 32-bit Perl reading it copes).
fn integer(out: &mut impl Write, digits: &str) -> fmt::Result {
    if digits.len() <= 10 {
        out.write_str(digits)
    } else {
        write!(out, "'{digits}'")
    }
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
