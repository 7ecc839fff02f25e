//! The path language: Sereal::Path's subset of JSONPath, parsed once and
//! applied to a view.

use super::walk::{Body, Frame, KeyNames};
use crate::error::{Error, ErrorKind, Result};
use std::fmt;
use std::str::FromStr;

/// A path: where in a document the values to read are, in the subset of
/// JSONPath that Perl's `Sereal::Path` reads.
///
/// | syntax | selects |
/// |---|---|
/// | `$` | the document's root (first, and only there) |
/// | `.key`, `['key']`, `["key"]`, `[key]` | the value of a hash entry |
/// | `[n]`, `[-n]` | an array element; from the end when negative |
/// | `[*]`, `.*` | every element of an array, every value of a hash |
/// | `[a:b]`, `[a:b:step]` | the elements from `a` to before `b`, as Python's slices count (any part may be left out; negative counts from the end) |
/// | `[k1,k2]`, `[0,2,-1]` | several keys, or several indexes and slices, in the order given |
///
/// Each step reads the arrays and hashes the values it has, through
/// references, weak references, objects and aliases, as Perl's `->`
/// does; a step finds nothing in a value it does not apply to (a key of
/// an array, an index of a scalar). Keys match as Perl's do: by their
/// characters, whether the document has them as UTF-8 or as Latin-1
/// bytes. A name after `.` is any run of characters other than `.`, `[`,
/// `]`, quotes and white space (a key that has them is written in
/// brackets, quoted, with `\` before a quote or `\` in it).
///
/// Recursive descent (`..`), filters (`[?(...)]`) and the current node
/// (`@`) are refused, with [`ErrorKind::BadPath`] and the offset where they
/// start, as is anything malformed.
///
/// ```
/// use sereal::view::Path;
/// let p: Path = "$.users[0:2].email".parse().unwrap();
/// assert_eq!(p.to_string(), "$['users'][0:2]['email']");
/// let e = "$..email".parse::<Path>().unwrap_err();
/// assert_eq!(e.to_string(), "bad path at offset 1: recursive descent (..) is not supported");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    steps: Vec<Step>,
}

/// One step of a [`Path`].
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    /// Every element or value.
    All,
    /// These keys, in order.
    Keys(Vec<String>),
    /// These indexes and slices, in order.
    Indexes(Vec<Index>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Index {
    One(i64),
    Slice(Option<i64>, Option<i64>, i64),
}

impl FromStr for Path {
    type Err = Error;

    fn from_str(s: &str) -> Result<Path> {
        Path::parse(s)
    }
}

impl Path {
    /// Parses a path; see [`Path`] for the syntax.
    ///
    /// ```
    /// use sereal::{view::Path, ErrorKind};
    /// assert!(Path::parse("$[*]['first name']").is_ok());
    /// let e = Path::parse("$.a[1").unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::BadPath(5, "`]` expected".into()));
    /// ```
    pub fn parse(s: &str) -> Result<Path> {
        Parser { s, pos: 0 }.path()
    }

    /// The positions in `body` this path selects from the item at `root`,
    /// in order.
    pub(crate) fn select(&self, body: &Body<'_>, root: usize) -> Result<Vec<usize>> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut known = KeyNames::default();
        let mut found = Vec::new();
        let mut here = vec![root];
        let mut steps = self.steps.iter().peekable();
        while let Some(step) = steps.next() {
            let mut next = Vec::new();
            // Every element, then keys of each: one walk of each element
            // finds both its keys and its end.
            if let (Step::All, Some(Step::Keys(keys))) = (step, steps.peek()) {
                steps.next();
                for &pos in &here {
                    if let Some(cont) = body.container(pos)? {
                        let mut p = cont.first;
                        for _ in 0..cont.count {
                            if cont.hash {
                                p = body.key(p)?.1;
                            }
                            found.clear();
                            p = match body.container(p)? {
                                Some(c) if c.hash && c.first > p => {
                                    body.lookup_all(&c, keys, &mut known, &mut found, &mut stack)?
                                }
                                Some(c) if c.hash => {
                                    body.lookup_all(&c, keys, &mut known, &mut found, &mut stack)?;
                                    body.walk(p, &mut stack)?
                                }
                                _ => body.walk(p, &mut stack)?,
                            };
                            next.extend(found.iter().flatten());
                        }
                    }
                }
                here = next;
                continue;
            }
            for &pos in &here {
                let Some(cont) = body.container(pos)? else {
                    continue;
                };
                match step {
                    Step::All => next.extend(body.items(&cont, cont.count, &mut stack)?),
                    // one key: the walk stops where it is found
                    Step::Keys(keys) if cont.hash && keys.len() == 1 => {
                        next.extend(body.lookup(&cont, &keys[0], &mut stack)?);
                    }
                    Step::Keys(keys) if cont.hash => {
                        body.lookup_all(&cont, keys, &mut known, &mut found, &mut stack)?;
                        next.extend(found.iter().flatten());
                    }
                    Step::Keys(_) => {}
                    Step::Indexes(_) if cont.hash => {}
                    Step::Indexes(ix) => {
                        let picks: Vec<usize> =
                            ix.iter().flat_map(|i| i.picks(cont.count)).collect();
                        let upto = picks.iter().max().map_or(0, |&m| m + 1);
                        let items = body.items(&cont, upto, &mut stack)?;
                        next.extend(picks.iter().filter_map(|&i| items.get(i).copied()));
                    }
                }
            }
            here = next;
        }
        Ok(here)
    }
}

impl Index {
    /// The elements this index or slice picks of an array of `len`, in order.
    fn picks(&self, len: usize) -> Vec<usize> {
        let len = i64::try_from(len).unwrap_or(i64::MAX);
        let at = |i: i64| if i < 0 { i.saturating_add(len) } else { i };
        match *self {
            Index::One(i) => {
                let i = at(i);
                if (0..len).contains(&i) {
                    vec![i as usize]
                } else {
                    Vec::new()
                }
            }
            Index::Slice(a, b, step) => {
                // Python's bounds: clamped to the array, from either end.
                let (lo, hi) = if step > 0 { (0, len) } else { (-1, len - 1) };
                let clamp = |i: i64| at(i).clamp(lo, hi);
                let (start, end) = if step > 0 {
                    (a.map_or(0, clamp), b.map_or(len, clamp))
                } else {
                    (a.map_or(len - 1, clamp), b.map_or(-1, clamp))
                };
                let mut out = Vec::new();
                let mut i = start;
                while (step > 0 && i < end) || (step < 0 && i > end) {
                    out.push(i as usize);
                    i = i.saturating_add(step);
                }
                out
            }
        }
    }
}

struct Parser<'s> {
    s: &'s str,
    pos: usize,
}

impl Parser<'_> {
    fn fail<T>(&self, at: usize, why: &str) -> Result<T> {
        Err(Error::new(ErrorKind::BadPath(at, why.into())))
    }

    fn peek(&self) -> Option<char> {
        self.s[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += self.peek().map_or(0, char::len_utf8);
        }
    }

    fn path(mut self) -> Result<Path> {
        if !self.eat('$') {
            return match self.peek() {
                Some('@') => self.fail(0, "the current node (@) is not supported"),
                _ => self.fail(0, "a path starts with `$`"),
            };
        }
        let mut steps = Vec::new();
        while let Some(c) = self.peek() {
            let at = self.pos;
            match c {
                '.' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('.') => {
                            return self.fail(at, "recursive descent (..) is not supported")
                        }
                        Some('*') => {
                            self.pos += 1;
                            steps.push(Step::All);
                        }
                        _ => {
                            let name = self.name();
                            if name.is_empty() {
                                return self.fail(self.pos, "a key name expected after `.`");
                            }
                            steps.push(Step::Keys(vec![name.to_owned()]));
                        }
                    }
                }
                '[' => {
                    self.pos += 1;
                    steps.push(self.bracket()?);
                }
                _ => return self.fail(at, "`.` or `[` expected"),
            }
        }
        Ok(Path { steps })
    }

    /// A name after `.`, or a bare key in brackets.
    fn name(&mut self) -> &str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if matches!(c, '.' | '[' | ']' | ',' | '\'' | '"' | '*' | ':') || c.is_whitespace() {
                break;
            }
            self.pos += c.len_utf8();
        }
        &self.s[start..self.pos]
    }

    /// What is between `[` and `]`, the `]` included.
    fn bracket(&mut self) -> Result<Step> {
        self.skip_space();
        if self.peek() == Some('?') {
            return self.fail(self.pos, "filter expressions are not supported");
        }
        if self.peek() == Some('(') {
            return self.fail(self.pos, "script expressions are not supported");
        }
        if self.eat('*') {
            self.close()?;
            return Ok(Step::All);
        }
        let mut keys = Vec::new();
        let mut indexes = Vec::new();
        loop {
            self.skip_space();
            let at = self.pos;
            match self.peek() {
                Some(q @ ('\'' | '"')) => {
                    self.pos += 1;
                    keys.push(self.quoted(q, at)?);
                }
                Some(c) if c == '-' || c == ':' || c.is_ascii_digit() => {
                    indexes.push(self.index()?);
                }
                _ => {
                    let name = self.name();
                    if name.is_empty() {
                        return self.fail(at, "a key, an index or a slice expected");
                    }
                    keys.push(name.to_owned());
                }
            }
            if !keys.is_empty() && !indexes.is_empty() {
                return self.fail(at, "keys and indexes cannot be mixed in one step");
            }
            self.skip_space();
            if !self.eat(',') {
                break;
            }
        }
        self.close()?;
        Ok(if keys.is_empty() {
            Step::Indexes(indexes)
        } else {
            Step::Keys(keys)
        })
    }

    fn close(&mut self) -> Result<()> {
        self.skip_space();
        if self.eat(']') {
            Ok(())
        } else {
            self.fail(self.pos, "`]` expected")
        }
    }

    /// A quoted key whose opening quote `q` was at `at`.
    fn quoted(&mut self, q: char, at: usize) -> Result<String> {
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return self.fail(at, "unterminated quoted key"),
                Some(c) if c == q => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(c @ ('\\' | '\'' | '"')) => {
                            self.pos += 1;
                            out.push(c);
                        }
                        _ => {
                            return self
                                .fail(self.pos - 1, "only \\\\, \\' and \\\" escapes are allowed")
                        }
                    }
                }
                Some(c) => {
                    self.pos += c.len_utf8();
                    out.push(c);
                }
            }
        }
    }

    /// An optional integer.
    fn int(&mut self) -> Result<Option<i64>> {
        self.skip_space();
        let start = self.pos;
        self.eat('-');
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let text = &self.s[start..self.pos];
        if text.is_empty() {
            return Ok(None);
        }
        match text.parse() {
            Ok(n) => Ok(Some(n)),
            Err(_) => self.fail(start, "an integer expected"),
        }
    }

    /// An index or a slice.
    fn index(&mut self) -> Result<Index> {
        let start = self.int()?;
        self.skip_space();
        if !self.eat(':') {
            return match start {
                Some(i) => Ok(Index::One(i)),
                None => self.fail(self.pos, "an index expected"),
            };
        }
        let end = self.int()?;
        self.skip_space();
        let mut step_at = self.pos;
        let step = if self.eat(':') {
            self.skip_space();
            step_at = self.pos;
            self.int()?.unwrap_or(1)
        } else {
            1
        };
        if step == 0 {
            return self.fail(step_at, "a slice's step cannot be 0");
        }
        Ok(Index::Slice(start, end, step))
    }
}

impl fmt::Display for Path {
    /// The path in the bracket notation, every key quoted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for step in &self.steps {
            match step {
                Step::All => f.write_str("[*]")?,
                Step::Keys(keys) => {
                    f.write_str("[")?;
                    for (i, k) in keys.iter().enumerate() {
                        let k = k.replace('\\', "\\\\").replace('\'', "\\'");
                        write!(f, "{}'{k}'", if i > 0 { "," } else { "" })?;
                    }
                    f.write_str("]")?;
                }
                Step::Indexes(ix) => {
                    f.write_str("[")?;
                    for (i, x) in ix.iter().enumerate() {
                        if i > 0 {
                            f.write_str(",")?;
                        }
                        match x {
                            Index::One(n) => write!(f, "{n}")?,
                            Index::Slice(a, b, s) => {
                                let part =
                                    |n: &Option<i64>| n.map(|n| n.to_string()).unwrap_or_default();
                                write!(f, "{}:{}", part(a), part(b))?;
                                if *s != 1 {
                                    write!(f, ":{s}")?;
                                }
                            }
                        }
                    }
                    f.write_str("]")?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(s: &str) -> (usize, String) {
        match Path::parse(s).unwrap_err().kind() {
            ErrorKind::BadPath(at, why) => (*at, why.clone()),
            k => panic!("{s}: {k:?}"),
        }
    }

    #[test]
    fn paths_parse_and_print_in_brackets() {
        for (text, shown) in [
            ("$", "$"),
            ("$.a.b", "$['a']['b']"),
            ("$['a b'][\"c\"]", "$['a b']['c']"),
            ("$[key]", "$['key']"),
            ("$[0][-1]", "$[0][-1]"),
            ("$[*].x", "$[*]['x']"),
            ("$.*", "$[*]"),
            ("$[1:3][::2][-2:][:4:-1]", "$[1:3][::2][-2:][:4:-1]"),
            ("$['a','b']", "$['a','b']"),
            ("$[0, 2, 4:6]", "$[0,2,4:6]"),
            ("$['it\\'s']", "$['it\\'s']"),
            ("$.café", "$['café']"),
        ] {
            let p = Path::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            // printing and parsing again gives the same path
            assert_eq!(Path::parse(&p.to_string()).unwrap(), p, "{text}");
            assert_eq!(p.to_string(), shown, "{text}");
        }
    }

    #[test]
    fn malformed_paths_say_where() {
        assert_eq!(bad(""), (0, "a path starts with `$`".into()));
        assert_eq!(bad("a.b"), (0, "a path starts with `$`".into()));
        assert_eq!(
            bad("@.a"),
            (0, "the current node (@) is not supported".into())
        );
        assert_eq!(
            bad("$..a"),
            (1, "recursive descent (..) is not supported".into())
        );
        assert_eq!(
            bad("$.a[?(@.b)]"),
            (4, "filter expressions are not supported".into())
        );
        assert_eq!(
            bad("$[(1)]"),
            (2, "script expressions are not supported".into())
        );
        assert_eq!(
            bad("$.a["),
            (4, "a key, an index or a slice expected".into())
        );
        assert_eq!(bad("$[1"), (3, "`]` expected".into()));
        assert_eq!(bad("$['a"), (2, "unterminated quoted key".into()));
        assert_eq!(bad("$[::0]"), (4, "a slice's step cannot be 0".into()));
        assert_eq!(
            bad("$['a',1]"),
            (6, "keys and indexes cannot be mixed in one step".into())
        );
        assert_eq!(bad("$x"), (1, "`.` or `[` expected".into()));
        assert_eq!(bad("$."), (2, "a key name expected after `.`".into()));
        assert_eq!(
            bad("$[99999999999999999999]"),
            (2, "an integer expected".into())
        );
        assert_eq!(
            bad("$['\\n']"),
            (3, "only \\\\, \\' and \\\" escapes are allowed".into())
        );
    }

    #[test]
    fn slices_count_as_python_does() {
        let all: Vec<i64> = (0..6).collect();
        let py = |a: Option<i64>, b: Option<i64>, s: i64| -> Vec<usize> {
            Index::Slice(a, b, s).picks(all.len())
        };
        assert_eq!(py(Some(1), Some(4), 1), [1, 2, 3]);
        assert_eq!(py(None, None, 2), [0, 2, 4]);
        assert_eq!(py(Some(-2), None, 1), [4, 5]);
        assert_eq!(py(None, None, -1), [5, 4, 3, 2, 1, 0]);
        assert_eq!(py(Some(4), Some(1), -2), [4, 2]);
        assert_eq!(py(Some(-100), Some(100), 1), [0, 1, 2, 3, 4, 5]);
        assert_eq!(py(Some(100), None, -1), [5, 4, 3, 2, 1, 0]);
        assert_eq!(py(Some(3), Some(3), 1), Vec::<usize>::new());
        assert_eq!(Index::One(-1).picks(6), [5]);
        assert_eq!(Index::One(6).picks(6), Vec::<usize>::new());
        assert_eq!(Index::One(-7).picks(6), Vec::<usize>::new());
    }
}
