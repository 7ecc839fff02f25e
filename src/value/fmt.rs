//! A readable `Debug` for values and nodes, with sharing made visible.

use super::str::write_quoted;
use super::{Body, Ref, Value};
use hashbrown::HashMap;
use std::fmt;

/// Prints a graph. A node met more than once is labelled `#n=` where it is
/// first printed and written `#n#` afterwards, so cycles print finitely.
struct Printer {
    // node address -> label (0 until printed), for nodes met twice or more
    labels: HashMap<usize, usize>,
    next: usize,
    /// `{:#?}`: one item per line, indented, as std's pretty `Debug`.
    pretty: bool,
    depth: usize,
}

fn count_meetings(root: &Value) -> HashMap<usize, usize> {
    let mut seen: HashMap<usize, usize> = HashMap::new();
    let mut stack = vec![root.clone()];
    while let Some(v) = stack.pop() {
        let Some(node) = v.node() else { continue };
        let n = seen.entry(node.addr()).or_insert(0);
        *n += 1;
        if *n > 1 {
            continue;
        }
        let Ok(body) = node.try_body() else { continue };
        match &*body {
            Body::Scalar(v) => stack.push(v.clone()),
            Body::Array(a) | Body::Frozen(a) => stack.extend(a.iter().cloned()),
            Body::Hash(h) => stack.extend(h.values().cloned()),
            Body::Regexp(_) => {}
        }
    }
    seen
}

impl Printer {
    fn new(root: &Value, f: &fmt::Formatter<'_>) -> Printer {
        let labels = count_meetings(root)
            .into_iter()
            .filter(|&(_, n)| n > 1)
            .map(|(a, _)| (a, 0))
            .collect();
        Printer {
            labels,
            next: 0,
            pretty: f.alternate(),
            depth: 0,
        }
    }

    /// Before item `i` of a container: a separator, or in the pretty form
    /// a new line and the indentation.
    fn item(&self, f: &mut fmt::Formatter<'_>, i: usize) -> fmt::Result {
        if self.pretty {
            f.write_str(if i == 0 { "\n" } else { ",\n" })?;
            for _ in 0..self.depth {
                f.write_str("    ")?;
            }
            Ok(())
        } else if i > 0 {
            f.write_str(", ")
        } else {
            Ok(())
        }
    }

    /// Opens a container of `n` items, runs `items`, and closes it.
    fn container(
        &mut self,
        f: &mut fmt::Formatter<'_>,
        (open, close): (&str, &str),
        n: usize,
        items: impl FnOnce(&mut Self, &mut fmt::Formatter<'_>) -> fmt::Result,
    ) -> fmt::Result {
        f.write_str(open)?;
        self.depth += 1;
        let done = items(self, f);
        self.depth -= 1;
        done?;
        if self.pretty && n > 0 {
            f.write_str(",\n")?;
            for _ in 0..self.depth {
                f.write_str("    ")?;
            }
        }
        f.write_str(close)
    }

    fn value(&mut self, f: &mut fmt::Formatter<'_>, v: &Value) -> fmt::Result {
        match v {
            Value::Undef => f.write_str("undef"),
            Value::CanonicalUndef => f.write_str("canonical_undef"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::True => f.write_str("sv_yes"),
            Value::False => f.write_str("sv_no"),
            Value::Int(i) => write!(f, "{i}"),
            Value::UInt(u) => write!(f, "{u}"),
            Value::Float(x) => write!(f, "{x:?}f32"),
            Value::Double(x) => write!(f, "{x:?}"),
            Value::LongDouble(b) => write!(f, "long_double({})", hex(&b[..])),
            Value::Float128(b) => write!(f, "float128({})", hex(&b[..])),
            Value::Bytes(s) => write_quoted(f, s.as_bytes()),
            Value::Utf8(s) => {
                f.write_str("u")?;
                write_quoted(f, s.as_bytes())
            }
            Value::Ref(r) => self.node(f, r),
            Value::Weak(w) => match w.upgrade() {
                Some(r) => {
                    f.write_str("weak(")?;
                    self.node(f, &r)?;
                    f.write_str(")")
                }
                None => f.write_str("weak(gone)"),
            },
            Value::Alias(r) => {
                f.write_str("alias(")?;
                self.node(f, r)?;
                f.write_str(")")
            }
            Value::Foreign(x) => write!(f, "{x:?}"),
        }
    }

    fn node(&mut self, f: &mut fmt::Formatter<'_>, r: &Ref) -> fmt::Result {
        if let Some(label) = self.labels.get_mut(&r.addr()) {
            if *label != 0 {
                return write!(f, "#{label}#");
            }
            self.next += 1;
            *label = self.next;
            write!(f, "#{}=", self.next)?;
        }
        let class = r.class();
        if class.is_some() {
            f.write_str("bless(")?;
        }
        match r.try_body() {
            Err(_) => f.write_str("<borrowed>")?,
            Ok(body) => crate::stack::deeper(|| self.body(f, &body))?,
        }
        if let Some(c) = class {
            f.write_str(", ")?;
            write_quoted(f, c.as_bytes())?;
            f.write_str(")")?;
        }
        Ok(())
    }

    fn body(&mut self, f: &mut fmt::Formatter<'_>, body: &Body) -> fmt::Result {
        match body {
            Body::Scalar(v) => {
                f.write_str("\\")?;
                self.value(f, v)
            }
            Body::Array(a) | Body::Frozen(a) => {
                if matches!(body, Body::Frozen(_)) {
                    f.write_str("frozen")?;
                }
                self.container(f, ("[", "]"), a.len(), |p, f| {
                    for (i, v) in a.iter().enumerate() {
                        p.item(f, i)?;
                        p.value(f, v)?;
                    }
                    Ok(())
                })
            }
            Body::Hash(h) => self.container(f, ("{", "}"), h.len(), |p, f| {
                for (i, (k, v)) in h.iter().enumerate() {
                    p.item(f, i)?;
                    if k.is_utf8() {
                        f.write_str("u")?;
                    }
                    write_quoted(f, k.as_bytes())?;
                    f.write_str(": ")?;
                    p.value(f, v)?;
                }
                Ok(())
            }),
            Body::Regexp(re) => {
                f.write_str("qr/")?;
                f.write_str(&String::from_utf8_lossy(re.pattern.as_bytes()))?;
                f.write_str("/")?;
                f.write_str(&String::from_utf8_lossy(re.flags.as_bytes()))
            }
        }
    }
}

pub(super) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl fmt::Debug for Value {
    /// A Perl-like rendering: `[1, "a"]`, `{"k": 1}`, `\5` for a scalar
    /// reference, `bless([...], "Class")`, `weak(...)`, `alias(...)`, and
    /// `#n=`/`#n#` labels for shared nodes. UTF-8 strings print as `u"..."`.
    /// `{:#?}` prints one item per line, indented by four spaces, as std's
    /// pretty `Debug` does.
    ///
    /// ```
    /// let v = sereal::sereal!({"a": [1, 2], "b": {}});
    /// assert_eq!(format!("{v:?}"), r#"{"a": [1, 2], "b": {}}"#);
    /// assert_eq!(format!("{v:#?}"), "{\n    \"a\": [\n        1,\n        2,\n    ],\n    \"b\": {},\n}");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Printer::new(self, f).value(f, self)
    }
}

impl fmt::Debug for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = Value::Ref(self.clone());
        Printer::new(&v, f).value(f, &v)
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = Value::Ref(Ref::new(self.clone()));
        Printer::new(&v, f).value(f, &v)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Ref, Value};

    #[test]
    fn debug_shows_sharing_cycles_and_kinds() {
        let a = Ref::hash(Default::default());
        a.hash_mut().unwrap().insert("self", Value::weak(&a));
        let v = Value::array([
            Value::from(&a),
            Value::utf8("é"),
            Value::from(Ref::array(vec![]).blessed("K")),
            Value::scalar_ref(1.5),
            Value::True,
        ]);
        assert_eq!(
            format!("{v:?}"),
            r#"[#1={"self": weak(#1#)}, u"é", bless([], "K"), \1.5, sv_yes]"#
        );
    }
}
