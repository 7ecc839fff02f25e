//! Moving a document to another thread: [`Document::into_send`].

use super::{Body, Document, Key, Node, NodeRc, NodeWeak, Ref, Value, WeakRef};
use hashbrown::HashMap;
use std::fmt;
use std::mem::ManuallyDrop;

/// A [`Document`] that can be sent to another thread, sharing, cycles and
/// weak references intact: made by [`Document::into_send`], and a
/// `Document` again, on the receiving thread, with
/// [`SendDocument::into_document`].
///
/// The graph is built of counted handles that are not thread-safe (as
/// `Rc`'s are not); what makes it safe to move is that `into_send` has
/// checked that no handle on any of its nodes or keys exists outside it, so
/// it moves as one piece and nothing left behind can touch its reference
/// counts.
///
/// ```
/// use sereal::{decode, Value};
/// // Perl: my $h = {name => "ann"}; $h->{self} = $h; encode_sereal([$h, $h])
/// let doc = decode(b"=\xF3rl\x05\x00\x42\x28\xaa\x02\x64name\x63ann\x64self\x29\x03\x29\x03").unwrap();
/// let sent = doc.into_send().unwrap();
/// let names = std::thread::spawn(move || {
///     let doc = sent.into_document();
///     let (a, b) = (doc.at(0).unwrap(), doc.at(1).unwrap());
///     assert!(a.node().unwrap().ptr_eq(&b.node().unwrap())); // still one hash
///     a.get("name").unwrap().as_str().map(str::to_owned)
/// })
/// .join()
/// .unwrap();
/// assert_eq!(names.as_deref(), Some("ann"));
/// ```
pub struct SendDocument(Document);

// SAFETY: `Document::into_send` built this only after checking that every
// strong and weak handle on every node of the graph, and every handle on
// every key, is held from inside the graph (the counts match the graph's
// own edges exactly); it replaced the keys that anything else could hold
// (the thread's key interner holds interned ones) with private copies and
// dangling weak references with empty ones, and it refused `Foreign` data,
// whose type may not be `Send`. Nothing outside the value can reach a
// reference count the graph uses, and the graph is reachable only through
// `into_document`, which takes the value whole.
unsafe impl Send for SendDocument {}

impl SendDocument {
    /// The document, on the thread that received it.
    ///
    /// ```
    /// use sereal::Value;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let doc = sereal::decode(&sereal::encode(&Value::hash([("id", 7)]))?)?;
    /// let sent = doc.into_send().ok().unwrap();
    /// let id = std::thread::spawn(move || sent.into_document().get("id").and_then(|v| v.as_i64()))
    ///     .join()
    ///     .unwrap();
    /// assert_eq!(id, Some(7));
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_document(self) -> Document {
        self.0
    }
}

impl fmt::Debug for SendDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendDocument { .. }")
    }
}

/// Why [`Document::into_send`] refused a document, with the document back.
///
/// ```
/// use sereal::Value;
/// # fn main() -> Result<(), sereal::Error> {
/// let doc = sereal::decode(&sereal::encode(&Value::array([Value::array([1])]))?)?;
/// let kept = doc.at(0).unwrap(); // a handle on a node of the document
/// let refused = doc.into_send().err().unwrap();
/// drop(kept);
/// assert!(refused.into_document().into_send().is_ok()); // nothing outside now
/// # Ok(())
/// # }
/// ```
pub struct NotSendable {
    document: Document,
    reason: &'static str,
}

impl NotSendable {
    /// The document, unchanged but for keys replaced by equal private
    /// copies and dead weak references by empty ones.
    ///
    /// ```
    /// use sereal::{Foreign, Value};
    /// let doc = sereal::Document::from(Value::array([Value::Foreign(Foreign::new(1u8))]));
    /// let refused = doc.into_send().err().unwrap();
    /// let back = refused.into_document(); // the document, to keep using here
    /// assert!(matches!(back.at(0), Some(Value::Foreign(_))));
    /// ```
    pub fn into_document(self) -> Document {
        self.document
    }

    /// What holds the graph from outside.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let doc = sereal::decode(&sereal::encode(&Value::array([Value::array([1])]))?)?;
    /// let node: Ref = doc.at(0).unwrap().node().unwrap();
    /// let refused = doc.into_send().err().unwrap();
    /// assert_eq!(refused.reason(), "a node of it is also held from outside it");
    /// # drop(node);
    /// # Ok(())
    /// # }
    /// ```
    pub fn reason(&self) -> &'static str {
        self.reason
    }
}

impl fmt::Debug for NotSendable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NotSendable")
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for NotSendable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the document cannot move to another thread: {}",
            self.reason
        )
    }
}

impl std::error::Error for NotSendable {}

/// The handles the graph's own edges hold on a node.
#[derive(Default)]
struct Held {
    strong: usize,
    weak: usize,
}

/// Every node and key reachable from a set of roots, with the handles the
/// graph itself holds on each.
#[derive(Default)]
struct Census {
    nodes: HashMap<*const Node, Held>,
    keys: HashMap<usize, usize>,
    // nodes whose bodies are still to be walked
    pending: Vec<*const Node>,
}

impl Census {
    /// The count of handles on the node at `p`; a node met for the first
    /// time is queued for its body to be walked.
    fn held(&mut self, p: *const Node) -> &mut Held {
        self.nodes.entry(p).or_insert_with(|| {
            self.pending.push(p);
            Held::default()
        })
    }

    fn strong(&mut self, r: &Ref) {
        self.held(NodeRc::as_ptr(&r.0)).strong += 1;
    }

    fn value(&mut self, v: &Value) -> Result<(), &'static str> {
        match v {
            Value::Ref(r) | Value::Alias(r) => self.strong(r),
            Value::Weak(w) if w.0.strong_count() == 0 => {}
            Value::Weak(w) => self.held(w.0.as_ptr()).weak += 1,
            Value::Foreign(_) => return Err("it holds Foreign data, which may not be Send"),
            _ => {}
        }
        Ok(())
    }

    fn key(&mut self, k: &Key) {
        *self.keys.entry(k.addr()).or_default() += 1;
    }

    /// Walks everything reachable from the pending nodes.
    fn walk(&mut self) -> Result<(), &'static str> {
        while let Some(p) = self.pending.pop() {
            // SAFETY: the node is alive: a handle the graph holds names it
            // (a weak one only where its strong count was above zero, and no
            // code runs during the walk that could drop it).
            let node = unsafe { &*p };
            // SAFETY: no code runs during the walk that could borrow a body.
            if let Some(class) = unsafe { node.class_unguarded() } {
                self.key(class);
            }
            // A body borrowed at all, for reading too, is refused: a guard
            // still out (a leaked one) keeps its count in the node, and the
            // move replaces keys in the bodies in place.
            const BORROWED: &str = "a node of it is borrowed";
            if node.body.try_borrow_mut().is_err() {
                return Err(BORROWED);
            }
            // SAFETY: as above.
            let body = unsafe { node.body_unguarded() }.map_err(|_| BORROWED)?;
            match body {
                Body::Scalar(v) => self.value(v)?,
                Body::Array(a) | Body::Frozen(a) => a.iter().try_for_each(|v| self.value(v))?,
                Body::Hash(h) => {
                    for (k, v) in h.iter() {
                        self.key(k);
                        self.value(v)?;
                    }
                }
                Body::Regexp(_) => {}
            }
        }
        Ok(())
    }

    /// Whether the graph's own edges account for every handle on its nodes.
    fn nodes_exclusive(&self) -> bool {
        self.nodes.iter().all(|(&p, held)| {
            // SAFETY: alive, as in the walk; `ManuallyDrop` leaves the
            // counts as they are.
            let rc = ManuallyDrop::new(unsafe { NodeRc::from_raw(p) });
            NodeRc::strong_count(&rc) == held.strong && NodeRc::weak_count(&rc) == held.weak
        })
    }
}

/// Replaces the keys that something outside the graph may hold with
/// private copies (one per key, so the graph's own sharing stays), and dead
/// weak references with empty ones.
struct Privatize {
    keys: HashMap<usize, usize>,
    // each replaced key, held until the end so no address is reused, and
    // its copy
    copies: HashMap<usize, (Key, Key)>,
}

impl Privatize {
    /// The private copy to put in place of `k`, if it needs one. Decided at
    /// the first meeting of each key, before any of its handles is dropped.
    fn replacement(&mut self, k: &Key) -> Option<Key> {
        if let Some((_, copy)) = self.copies.get(&k.addr()) {
            return Some(copy.clone());
        }
        let uses = self.keys.get(&k.addr()).copied().unwrap_or(0);
        if k.is_private(uses) {
            return None;
        }
        let copy = k.private_copy();
        self.copies.insert(k.addr(), (k.clone(), copy.clone()));
        Some(copy)
    }

    fn value(v: &mut Value) {
        if matches!(v, Value::Weak(w) if w.0.strong_count() == 0) {
            *v = Value::Weak(WeakRef(NodeWeak::new()));
        }
    }

    fn node(&mut self, node: &Node) {
        // SAFETY: no code runs that could change the class meanwhile.
        if let Some(copy) = unsafe { node.class_unguarded() }.and_then(|c| self.replacement(c)) {
            node.set_class(Some(copy));
        }
        let mut body = node.body.borrow_mut();
        match &mut *body {
            Body::Scalar(v) => Self::value(v),
            Body::Array(a) | Body::Frozen(a) => a.iter_mut().for_each(Self::value),
            Body::Hash(h) => {
                for (k, v) in h.entries_mut() {
                    if let Some(copy) = self.replacement(k) {
                        *k = copy;
                    }
                    Self::value(v);
                }
            }
            Body::Regexp(_) => {}
        }
    }
}

impl Document {
    /// The document, made ready to move to another thread: refused, with
    /// the document back, if anything outside it holds one of its nodes (a
    /// [`Ref`] or [`WeakRef`] kept elsewhere, another document sharing a
    /// node), a node's body is still borrowed (a guard from
    /// [`Ref::body`] or [`Ref::body_mut`] not dropped, or leaked), or it
    /// holds [`Foreign`](Value::Foreign) data.
    ///
    /// What `decode` returns always qualifies while nothing else has been
    /// given a handle on it. Hash keys and class names are shared with the
    /// thread's other documents through its key interner: those the
    /// document uses are replaced by private copies (equal, and shared
    /// within the document as before), so it re-encodes to the same bytes.
    /// The check and the copies take one walk of the graph.
    ///
    /// ```
    /// use sereal::{decode, Value};
    /// let doc = decode(b"=\xF3rl\x05\x00\x51\x62id\x01").unwrap();
    /// let kept = doc.root().node().unwrap(); // a handle outside the document
    /// let refused = doc.into_send().unwrap_err();
    /// drop(kept);
    /// let sent = refused.into_document().into_send().unwrap();
    /// let id = std::thread::spawn(move || sent.into_document().get("id").and_then(|v| v.as_i64()));
    /// assert_eq!(id.join().unwrap(), Some(1));
    /// ```
    pub fn into_send(mut self) -> Result<SendDocument, NotSendable> {
        let mut census = Census::default();
        let checked = census
            .value(self.root())
            .and_then(|()| {
                self.held().for_each(|r| census.strong(r));
                census.walk()
            })
            .and_then(|()| {
                if census.nodes_exclusive() {
                    Ok(())
                } else {
                    Err("a node of it is also held from outside it")
                }
            });
        if let Err(reason) = checked {
            return Err(NotSendable {
                document: self,
                reason,
            });
        }
        let Census { nodes, keys, .. } = census;
        let mut privatize = Privatize {
            keys,
            copies: HashMap::new(),
        };
        Privatize::value(&mut self);
        for &p in nodes.keys() {
            // SAFETY: alive, as in the walk; its body is not borrowed (the
            // walk found it free and no code ran since).
            privatize.node(unsafe { &*p });
        }
        drop(privatize);
        Ok(SendDocument(self))
    }
}

#[cfg(test)]
mod tests {
    use crate::{decode_bytes, encode, Document, Hash, Ref, Value};
    use bytes::Bytes;

    /// A decoded document with sharing, a cycle, a weak reference, a class,
    /// long strings sharing the input and a hash large enough for unshared
    /// keys in chunks crosses to another thread and re-encodes to the same
    /// bytes there, where it is freed, its cycle too (and, under Miri,
    /// nothing is raced, used after it is freed, or leaked).
    #[test]
    fn a_document_crosses_threads_whole() {
        let long = "a string longer than the twenty-two inline bytes";
        let big: Hash = (0..300)
            .map(|i| (format!("key{i}"), Value::from(i)))
            .collect();
        let shared = Ref::hash([("name", Value::from(long))].into_iter().collect());
        let cell = Ref::array(vec![Value::from(long)]).blessed("Cell");
        cell.array_mut().unwrap().push(Value::Ref(cell.clone()));
        let root = Value::array([
            Value::Ref(shared.clone()),
            Value::Ref(shared.clone()),
            Value::weak(&shared),
            Value::Ref(cell.clone()),
            Value::from(big),
        ]);
        let bytes = encode(&root).unwrap();
        cell.array_mut().unwrap().pop();
        drop((root, shared, cell));
        let doc = decode_bytes(&Bytes::from(bytes.clone())).unwrap();
        let sent = doc.into_send().unwrap();
        // The document frees its cycle when dropped, on that thread.
        let back = std::thread::spawn(move || {
            let doc: Document = sent.into_document();
            encode(&doc).unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(back, bytes);
    }
}
