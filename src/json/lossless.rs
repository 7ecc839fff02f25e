//! Lossless JSON: writing a graph as a node table, and reading one back.

use super::plain::json_number;
use super::*;

#[derive(Default)]
pub(super) struct Lossless {
    /// node address -> index in `nodes`
    ids: HashMap<usize, usize>,
    /// The nodes met, by id; holding them keeps their addresses unique.
    nodes: Vec<Ref>,
    /// The addresses of the nodes a document's [`Forms`] flag `refn` and
    /// `pad`.
    refn: hashbrown::HashSet<usize>,
    pad: hashbrown::HashSet<usize>,
}

impl Lossless {
    /// A writer that flags the nodes `forms` names.
    pub(super) fn with_forms(forms: &Forms) -> Lossless {
        Lossless {
            refn: forms.refn.iter().map(Ref::addr).collect(),
            pad: forms.pad.iter().copied().collect(),
            ..Lossless::default()
        }
    }

    /// The flags of `node` ([`Forms`]), in the order JSON's map has them.
    fn flags(&self, node: &Ref) -> Vec<&'static str> {
        let addr = node.addr();
        [("pad", &self.pad), ("refn", &self.refn)]
            .into_iter()
            .filter(|(_, set)| !set.is_empty() && set.contains(&addr))
            .map(|(name, _)| name)
            .collect()
    }

    fn id(&mut self, r: &Ref) -> usize {
        let next = self.nodes.len();
        if r.strong_count() == 1 && r.weak_count() == 0 {
            // the only handle on the node, met once: no other slot can
            // name it, so it needs no entry in `ids`
            self.nodes.push(r.clone());
            return next;
        }
        let id = *self.ids.entry(r.addr()).or_insert(next);
        if id == next {
            self.nodes.push(r.clone());
        }
        id
    }

    pub(super) fn slot(&mut self, v: &Value) -> Result<Json> {
        Ok(match v {
            Value::Undef => Json::Null,
            Value::CanonicalUndef => json!({"sv": "undef"}),
            Value::Bool(b) => Json::Bool(*b),
            Value::True => json!({"sv": "yes"}),
            Value::False => json!({"sv": "no"}),
            Value::Int(i) => Json::from(*i),
            Value::UInt(u) if i64::try_from(*u).is_ok() => json!({"uint": u}),
            Value::UInt(u) => Json::from(*u),
            Value::Float(f) => json!({"float": f32_text(*f)}),
            Value::Double(d) => double_json(*d),
            Value::LongDouble(b) => json!({"long_double": hex(&b[..])}),
            Value::Float128(b) => json!({"float128": hex(&b[..])}),
            Value::Bytes(s) => str_json(s.as_bytes(), false),
            Value::Utf8(s) => str_json(s.as_bytes(), true),
            Value::Ref(r) => json!({"ref": self.id(r)}),
            Value::Alias(r) => json!({"alias": self.id(r)}),
            Value::Weak(w) => match w.upgrade() {
                Some(r) => json!({"weak": self.id(&r)}),
                None => json!({"weak": null}),
            },
            Value::Foreign(x) => {
                return Err(Error::new(ErrorKind::Unsupported(format!(
                    "a value of type {} cannot be written as JSON",
                    x.type_name()
                ))))
            }
        })
    }

    fn slots(&mut self, items: &Array) -> Result<Json> {
        items
            .iter()
            .map(|v| self.slot(v))
            .collect::<Result<Vec<_>>>()
            .map(Json::Array)
    }

    /// Writes the JSON of a node of the table as [`Lossless::node`] makes
    /// it, compact, building the JSON of one element at a time. The keys
    /// come in the order of a JSON map's (sorted): `"class"` after
    /// `"array"`, before the other bodies.
    fn write_node(&mut self, node: &Ref, out: &mut dyn std::io::Write) -> Result<()> {
        let put = |out: &mut dyn std::io::Write, j: &Json| -> Result<()> {
            serde_json::to_writer(out, j).map_err(|e| Error::from(std::io::Error::from(e)))
        };
        let body = node.try_body()?;
        let class = node.class().map(|c| key_json(&c));
        let items: &[Value] = match &*body {
            Body::Array(a) | Body::Frozen(a) => a,
            Body::Hash(_) => &[],
            // small bodies: the whole node at once
            Body::Scalar(_) | Body::Regexp(_) => {
                drop(body);
                let j = self.node(node)?;
                return put(out, &j);
            }
        };
        let name = match &*body {
            Body::Array(_) => "array",
            Body::Frozen(_) => "frozen",
            _ => "hash",
        };
        out.write_all(b"{")?;
        let class_first = name != "array";
        if let Some(c) = class.as_ref().filter(|_| class_first) {
            out.write_all(b"\"class\":")?;
            put(out, c)?;
            out.write_all(b",")?;
        }
        write!(out, "\"{name}\":[")?;
        if let Body::Hash(h) = &*body {
            for (i, (k, v)) in h.iter().enumerate() {
                out.write_all(if i == 0 { b"[" } else { b",[" })?;
                if !write_plain_str(k.as_bytes(), k.is_utf8(), out)? {
                    put(out, &key_json(k))?;
                }
                out.write_all(b",")?;
                self.write_slot(v, out)?;
                out.write_all(b"]")?;
            }
        }
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            self.write_slot(v, out)?;
        }
        out.write_all(b"]")?;
        if let Some(c) = class.as_ref().filter(|_| !class_first) {
            out.write_all(b",\"class\":")?;
            put(out, c)?;
        }
        for flag in self.flags(node) {
            write!(out, ",\"{flag}\":true")?;
        }
        out.write_all(b"}")?;
        Ok(())
    }

    /// Writes the JSON [`Lossless::slot`] makes of `v`: the commonest
    /// values directly, the others through their JSON.
    fn write_slot(&mut self, v: &Value, out: &mut dyn std::io::Write) -> Result<()> {
        match v {
            Value::Undef => out.write_all(b"null")?,
            Value::Int(i) => write!(out, "{i}")?,
            Value::Ref(r) => write!(out, "{{\"ref\":{}}}", self.id(r))?,
            Value::Bytes(s) if write_plain_str(s.as_bytes(), false, out)? => {}
            Value::Utf8(s) if write_plain_str(s.as_bytes(), true, out)? => {}
            _ => serde_json::to_writer(out, &self.slot(v)?)
                .map_err(|e| Error::from(std::io::Error::from(e)))?,
        }
        Ok(())
    }

    /// The JSON of a node of the table.
    fn node(&mut self, node: &Ref) -> Result<Json> {
        let body = node.try_body()?;
        let mut m = Map::new();
        let (name, j) = match &*body {
            Body::Scalar(v) => ("scalar", self.slot(v)?),
            Body::Array(a) => ("array", self.slots(a)?),
            Body::Frozen(a) => ("frozen", self.slots(a)?),
            Body::Hash(h) => (
                "hash",
                Json::Array(
                    h.iter()
                        .map(|(k, v)| Ok(Json::Array(vec![key_json(k), self.slot(v)?])))
                        .collect::<Result<Vec<_>>>()?,
                ),
            ),
            Body::Regexp(re) => (
                "regexp",
                json!({
                    "pattern": str_json(re.pattern.as_bytes(), re.utf8),
                    "flags": str_json(re.flags.as_bytes(), false),
                }),
            ),
        };
        m.insert(name.into(), j);
        if let Some(c) = node.class() {
            m.insert("class".into(), key_json(&c));
        }
        for flag in self.flags(node) {
            m.insert(flag.into(), Json::Bool(true));
        }
        Ok(Json::Object(m))
    }
}

/// The node table of lossless JSON, a node at a time: see
/// [`Document::lossless_parts`]. Every node met, including those met while
/// the table is written; an error (a node borrowed for writing, a value
/// JSON cannot carry) ends it.
///
/// ```
/// use sereal::json::Document;
/// use sereal::{Decoder, Value};
/// # fn main() -> Result<(), sereal::Error> {
/// let bytes = sereal::encode(&Value::array([Value::hash([("k", 1)])]))?;
/// let doc = Document::decode(&bytes, &Decoder::default())?;
/// let (_, nodes) = doc.lossless_parts()?;
/// let table = nodes.collect::<Result<Vec<_>, _>>()?;
/// assert_eq!(table, [serde_json::json!({"array": [{"ref": 1}]}), serde_json::json!({"hash": [["k", 1]]})]);
/// # Ok(())
/// # }
/// ```
pub struct LosslessNodes {
    w: Lossless,
    next: usize,
}

impl LosslessNodes {
    /// The table of the nodes `w` has met, from the first.
    pub(super) fn new(w: Lossless) -> LosslessNodes {
        LosslessNodes { w, next: 0 }
    }
}

impl LosslessNodes {
    /// Writes the next node of the table to `out` as compact JSON, the text
    /// `serde_json::to_writer` makes of the node [`Iterator::next`] gives,
    /// without building the JSON of the node's elements all at once (an
    /// array of a million elements is written one element at a time).
    /// `None` after the last node, or after an error.
    ///
    /// ```
    /// use sereal::json::Document;
    /// use sereal::{Decoder, Value};
    /// let bytes = sereal::encode(&Value::array([Value::array([1]), Value::from("x")])).unwrap();
    /// let doc = Document::decode(&bytes, &Decoder::default()).unwrap();
    /// let (_, mut nodes) = doc.lossless_parts().unwrap();
    /// let mut out = Vec::new();
    /// while let Some(done) = nodes.write_next(&mut out) {
    ///     done.unwrap();
    ///     out.push(b'\n');
    /// }
    /// assert_eq!(out, b"{\"array\":[{\"ref\":1},\"x\"]}\n{\"array\":[1]}\n");
    /// ```
    pub fn write_next(&mut self, out: &mut dyn std::io::Write) -> Option<Result<()>> {
        if self.is_finished() {
            return None;
        }
        let node = self.w.nodes.get(self.next)?.clone();
        self.next += 1;
        let done = self.w.write_node(&node, out);
        if done.is_err() {
            self.next = self.w.nodes.len();
        }
        Some(done)
    }
}

impl LosslessNodes {
    /// Whether every node met so far has been given (or an error ended the
    /// table). Writing a node can meet new ones, so the table may go on
    /// after a node that was last when it began.
    ///
    /// ```
    /// use sereal::json::Document;
    /// use sereal::{Decoder, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let bytes = sereal::encode(&Value::array([Value::array([1])]))?;
    /// let doc = Document::decode(&bytes, &Decoder::default())?;
    /// let (_, mut nodes) = doc.lossless_parts()?;
    /// nodes.next().unwrap()?; // the outer array: it meets the inner one
    /// assert!(!nodes.is_finished());
    /// nodes.next().unwrap()?;
    /// assert!(nodes.is_finished());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_finished(&self) -> bool {
        self.next >= self.w.nodes.len()
    }
}

impl Iterator for LosslessNodes {
    type Item = Result<Json>;

    fn next(&mut self) -> Option<Result<Json>> {
        let node = self.w.nodes.get(self.next)?.clone();
        self.next += 1;
        let j = self.w.node(&node);
        if j.is_err() {
            self.next = self.w.nodes.len();
        }
        Some(j)
    }
}

// ---------------------------------------------------------------------------
// Lossless reading

pub(super) struct Builder<'j> {
    entries: &'j [Json],
    /// Every node of the table, made up front so references can be resolved
    /// in any order; dropped before returning so that each node is held by
    /// exactly the handles the JSON mentions.
    nodes: Vec<Ref>,
    /// The nodes flagged `refn` and `pad` ([`Forms`]), by index.
    refn: Vec<usize>,
    pad: Vec<usize>,
}

impl<'j> Builder<'j> {
    pub(super) fn new(nodes: Option<&'j Json>) -> Result<Builder<'j>> {
        let entries: &[Json] = match nodes {
            None | Some(Json::Null) => &[],
            Some(Json::Array(a)) => a,
            Some(_) => return Err(invalid("/nodes", "expected an array of nodes")),
        };
        let nodes = entries.iter().map(|_| Ref::scalar(Value::Undef)).collect();
        Ok(Builder {
            entries,
            nodes,
            refn: Vec::new(),
            pad: Vec::new(),
        })
    }

    fn node(&self, id: &Json, path: &Path, what: &str) -> Result<&Ref> {
        let n = id.as_u64().ok_or_else(|| {
            invalid(
                &path.with(what),
                "expected a node number (an index in /nodes)",
            )
        })?;
        usize::try_from(n)
            .ok()
            .and_then(|i| self.nodes.get(i))
            .ok_or_else(|| {
                invalid(
                    &path.with(what),
                    &format!(
                        "node {n} is not in the node table ({} nodes)",
                        self.nodes.len()
                    ),
                )
            })
    }

    pub(super) fn slot(&mut self, j: &Json, path: &mut Path) -> Result<Value> {
        let bad = |path: &Path| {
            let mut shown = j.to_string();
            if shown.len() > 60 {
                let mut cut = 57;
                while !shown.is_char_boundary(cut) {
                    cut -= 1;
                }
                shown.truncate(cut);
                shown.push_str("...");
            }
            invalid(&path.to_string(), &format!("not a lossless value: {shown}"))
        };
        Ok(match j {
            Json::Null => Value::Undef,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => json_number(n).ok_or_else(|| bad(path))?,
            Json::String(s) => Value::from(s.as_str()),
            Json::Array(_) => return Err(bad(path)),
            Json::Object(m) => {
                if let Some((b, utf8)) = str_from_json(j, path)? {
                    let s = Str::from_vec(b);
                    return Ok(if utf8 {
                        Value::Utf8(s)
                    } else {
                        Value::Bytes(s)
                    });
                }
                if m.len() != 1 {
                    return Err(bad(path));
                }
                let (k, v) = m.iter().next().expect("one entry");
                let text = || v.as_str().ok_or_else(|| bad(path));
                match k.as_str() {
                    "ref" => Value::Ref(self.node(v, path, k)?.clone()),
                    "alias" => Value::Alias(self.node(v, path, k)?.clone()),
                    "weak" if v.is_null() => {
                        // A weak reference to a node that is gone.
                        Value::Weak(Ref::scalar(Value::Undef).downgrade())
                    }
                    "weak" => Value::Weak(self.node(v, path, k)?.downgrade()),
                    "sv" => match v.as_str() {
                        Some("yes") => Value::True,
                        Some("no") => Value::False,
                        Some("undef") => Value::CanonicalUndef,
                        _ => return Err(bad(path)),
                    },
                    "uint" => Value::UInt(v.as_u64().ok_or_else(|| bad(path))?),
                    "double" => Value::Double(
                        match v {
                            Json::Number(n) => n.as_f64(),
                            Json::String(s) => f64_from_text(s),
                            _ => None,
                        }
                        .ok_or_else(|| bad(path))?,
                    ),
                    "float" => Value::Float(
                        match v {
                            Json::String(s) => f32_from_text(s),
                            _ => None,
                        }
                        .ok_or_else(|| bad(path))?,
                    ),
                    "long_double" => {
                        Value::LongDouble(Box::new(from_hex(text()?).ok_or_else(|| bad(path))?))
                    }
                    "float128" => {
                        Value::Float128(Box::new(from_hex(text()?).ok_or_else(|| bad(path))?))
                    }
                    _ => return Err(bad(path)),
                }
            }
        })
    }

    fn slots(&mut self, j: &Json, path: &mut Path) -> Result<Array> {
        let items = j
            .as_array()
            .ok_or_else(|| invalid(&path.to_string(), "expected an array"))?;
        let mut out = Array::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            path.parts.push(i.to_string());
            out.push(self.slot(item, path)?);
            path.parts.pop();
        }
        Ok(out)
    }

    fn body(&mut self, m: &Map<String, Json>, path: &mut Path) -> Result<Body> {
        let mut found = None;
        for (k, v) in m {
            match k.as_str() {
                "class" | "pad" | "refn" => {}
                "scalar" | "array" | "hash" | "regexp" | "frozen" if found.is_none() => {
                    found = Some((k.as_str(), v))
                }
                _ => {
                    return Err(invalid(
                        &path.with(k),
                        "a node has one of scalar, array, hash, regexp, frozen, and a class, pad and refn",
                    ))
                }
            }
        }
        let (kind, v) = found.ok_or_else(|| {
            invalid(
                &path.to_string(),
                "a node has one of scalar, array, hash, regexp, frozen",
            )
        })?;
        path.parts.push(kind.to_owned());
        let body = match kind {
            "scalar" => Body::Scalar(self.slot(v, path)?),
            "array" => Body::Array(self.slots(v, path)?),
            "frozen" => Body::Frozen(self.slots(v, path)?),
            "hash" => {
                let entries = v
                    .as_array()
                    .ok_or_else(|| invalid(&path.to_string(), "expected [[key, value], ...]"))?;
                let mut h = Hash::with_capacity(entries.len());
                for (i, e) in entries.iter().enumerate() {
                    path.parts.push(i.to_string());
                    let pair = e
                        .as_array()
                        .filter(|p| p.len() == 2)
                        .ok_or_else(|| invalid(&path.to_string(), "expected [key, value]"))?;
                    path.parts.push("0".into());
                    let k = key_from_json(&pair[0], path)?;
                    if h.get_key(&k).is_some() {
                        return Err(invalid(
                            &path.to_string(),
                            &format!("duplicate key {k:?} in a hash"),
                        ));
                    }
                    path.parts.pop();
                    path.parts.push("1".into());
                    let v = self.slot(&pair[1], path)?;
                    path.parts.pop();
                    h.push_new(k, v);
                    path.parts.pop();
                }
                Body::Hash(h)
            }
            _ => {
                let field = |name: &str| {
                    let p = path.with(name);
                    v.get(name)
                        .ok_or_else(|| invalid(&p, "missing"))
                        .and_then(|f| {
                            str_from_json(f, path)?.ok_or_else(|| invalid(&p, "expected a string"))
                        })
                };
                let (pattern, utf8) = field("pattern")?;
                let (flags, _) = field("flags")?;
                Body::Regexp(Box::new(Regexp {
                    pattern: Str::from_vec(pattern),
                    utf8,
                    flags: Str::from_vec(flags),
                }))
            }
        };
        path.parts.pop();
        Ok(body)
    }

    /// Builds every node's body and class.
    pub(super) fn fill_nodes(&mut self) -> Result<()> {
        for i in 0..self.entries.len() {
            let mut path = Path::root("nodes");
            path.parts.push(i.to_string());
            let m = self.entries[i]
                .as_object()
                .ok_or_else(|| invalid(&path.to_string(), "a node is a JSON object"))?;
            let body = self.body(m, &mut path)?;
            let class = m
                .get("class")
                .map(|c| {
                    path.parts.push("class".into());
                    let k = key_from_json(c, &path);
                    path.parts.pop();
                    k
                })
                .transpose()?;
            for flag in ["pad", "refn"] {
                let on = match m.get(flag) {
                    None | Some(Json::Bool(false)) => false,
                    Some(Json::Bool(true)) => true,
                    Some(_) => return Err(invalid(&path.with(flag), "expected true or false")),
                };
                let container = matches!(body, Body::Array(_) | Body::Hash(_));
                match flag {
                    _ if !on => {}
                    "pad" => self.pad.push(i),
                    _ if container => self.refn.push(i),
                    _ => return Err(invalid(&path.with(flag), "refn is for arrays and hashes")),
                }
            }
            let node = &self.nodes[i];
            node.set_body(body);
            if let Some(c) = class {
                node.bless(c);
            }
        }
        Ok(())
    }

    /// Drops the table, returning the nodes only weak references reach.
    /// Nodes the JSON describes but nothing reaches may hold strong cycles
    /// among themselves (`[{"ref":0}]` as node 0 of a document whose body
    /// is elsewhere): those are freed.
    /// Also the nodes that more than one handle of the graph holds (every
    /// strong cycle the graph reaches passes through one of them, where its
    /// path from the root enters it), for a [`crate::Document`] to free the
    /// cycles when it is dropped; and the document's [`Forms`], for the
    /// nodes the JSON reaches.
    pub(super) fn finish(mut self) -> (Vec<Ref>, Vec<Ref>, Forms) {
        let nodes = std::mem::take(&mut self.nodes);
        let keep: Vec<Ref> = nodes
            .iter()
            .filter(|r| r.strong_count() == 1 && r.weak_count() > 0)
            .cloned()
            .collect();
        crate::value::collect::collect_cycles(&nodes);
        // The table's handle, and two or more in the graph (a node `keep`
        // holds has none there).
        let cycles: Vec<Ref> = nodes
            .iter()
            .filter(|r| r.strong_count() > 2)
            .cloned()
            .collect();
        // Reached: held by more than the table.
        let reached = |i: &&usize| nodes[**i].strong_count() > 1;
        let forms = Forms {
            refn: self
                .refn
                .iter()
                .filter(reached)
                .map(|&i| nodes[i].clone())
                .collect(),
            pad: self
                .pad
                .iter()
                .filter(reached)
                .map(|&i| nodes[i].addr())
                .collect(),
        };
        (keep, cycles, forms)
    }
}

/// A builder dropped before [`Builder::finish`] is one whose JSON failed
/// part-way: its nodes, some filled, may hold strong cycles among
/// themselves, so each is emptied (which frees them once the table goes).
impl Drop for Builder<'_> {
    fn drop(&mut self) {
        for node in &self.nodes {
            // Nothing else borrows the builder's nodes. The body is dropped
            // after the borrow ends: dropping it may drop other nodes.
            let body = node
                .body_mut()
                .map(|mut b| std::mem::replace(&mut *b, Body::Scalar(Value::Undef)));
            drop(body);
        }
    }
}

/// Writes a string that lossless JSON shows as a plain JSON string (a byte
/// string of ASCII, a UTF-8 string that is not all ASCII), as
/// [`str_json`] makes it; false (nothing written) for the other forms.
fn write_plain_str(bytes: &[u8], utf8: bool, out: &mut dyn std::io::Write) -> Result<bool> {
    let plain = match std::str::from_utf8(bytes) {
        Ok(s) if s.is_ascii() != utf8 => s,
        _ => return Ok(false),
    };
    serde_json::to_writer(out, plain).map_err(|e| Error::from(std::io::Error::from(e)))?;
    Ok(true)
}
