//! [`Document`]: a decoded graph that frees its own cycles.

use super::collect::collect_cycles;
use super::{Ref, Value};
use std::fmt;
use std::ops::{Deref, DerefMut};

/// A decoded document: the root [`Value`], and what the decode knows about
/// the graph it built, so that dropping the document frees everything the
/// decode made, strong cycles included (Perl's `$h->{self} = $h`), with no
/// call to remember.
///
/// A `Document` dereferences to its root, compares equal to a `Value`, and
/// prints like one. Handles taken out of it stay whole after it is gone:
/// only nodes that nothing outside the document holds are freed.
///
/// ```
/// use sereal::{decode, Value};
/// // Perl: my $h = {}; $h->{self} = $h; encode($h)
/// let doc = decode(b"=\xF3rl\x05\x00\x28\xaa\x01\x64self\x29\x02").unwrap();
/// let inner = doc.get("self").unwrap();
/// assert!(inner.as_strong_ref().unwrap().ptr_eq(doc.as_strong_ref().unwrap()));
/// drop(inner);
/// drop(doc); // the cycle is freed here
///
/// let doc = decode(b"=\xF3rl\x05\x00\x28\xaa\x01\x64self\x29\x02").unwrap();
/// let kept: Value = doc.root().clone();
/// drop(doc); // `kept` still holds the hash, and the hash itself
/// assert!(kept.get("self").is_some());
/// kept.dismantle(); // a plain Value's cycles are the caller's to free
/// ```
#[derive(Clone, Default)]
pub struct Document {
    root: Value,
    // Boxed so that the common case, a document without cycles or kept
    // cells, stays one `Value` and a null pointer.
    extra: Option<Box<Extra>>,
}

#[derive(Clone, Default)]
struct Extra {
    /// Nodes a back-reference named while they were being read: every
    /// strong cycle the decode built passes through one of them.
    cycles: Vec<Ref>,
    /// Cells that weak references in the document point to and that Perl
    /// never frees (`\!!0`, `\!!1`, `\undef`): held, so they live as long
    /// as the document.
    keep: Vec<Ref>,
    /// For a document of a part of another's graph: that graph's root,
    /// which holds what the part's weak references point to.
    whole: Option<Value>,
}

impl Document {
    /// A document made by a decode: its root, the nodes through which its
    /// cycles pass, and the cells its weak references need alive.
    pub(crate) fn new(root: Value, cycles: Vec<Ref>, keep: Vec<Ref>) -> Document {
        let extra = (!cycles.is_empty() || !keep.is_empty()).then(|| {
            Box::new(Extra {
                cycles,
                keep,
                whole: None,
            })
        });
        Document { root, extra }
    }

    /// A document of `root`, a value of this one's graph, holding what
    /// this one holds to free its cycles: the graph's cycles are freed
    /// when the last of the two goes.
    pub(crate) fn with_root(&self, root: Value) -> Document {
        let mut extra = self.extra.clone().unwrap_or_default();
        extra.whole = Some(self.root.clone());
        Document {
            root,
            extra: Some(extra),
        }
    }

    /// The handles the document holds besides its root.
    pub(super) fn held(&self) -> impl Iterator<Item = &Ref> {
        self.extra
            .iter()
            .flat_map(|e| e.cycles.iter().chain(&e.keep))
    }

    /// The root value.
    ///
    /// ```
    /// use sereal::Value;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let doc = sereal::decode(&sereal::encode(&Value::array([1, 2]))?)?;
    /// let root: &Value = doc.root();
    /// assert_eq!(root, &Value::array([1, 2]));
    /// assert_eq!(doc.at(1), root.at(1)); // the document also dereferences to it
    /// # Ok(())
    /// # }
    /// ```
    pub fn root(&self) -> &Value {
        &self.root
    }

    /// Whether the decode built strong cycles (which dropping the document
    /// frees).
    ///
    /// ```
    /// use sereal::Value;
    /// # fn main() -> Result<(), sereal::Error> {
    /// // Perl: my $h = {}; $h->{self} = $h; encode($h)
    /// let looped = sereal::decode(b"=\xF3rl\x05\x00\x28\xaa\x01\x64self\x29\x02")?;
    /// assert!(looped.has_cycles());
    /// let tree = sereal::decode(&sereal::encode(&Value::array([Value::array([1])]))?)?;
    /// assert!(!tree.has_cycles());
    /// # Ok(())
    /// # }
    /// ```
    pub fn has_cycles(&self) -> bool {
        self.extra.as_ref().is_some_and(|e| !e.cycles.is_empty())
    }

    /// The root, with the document's care for its cycles given up: the
    /// caller then frees them with [`Value::dismantle`] (or keeps them for
    /// the life of the process), and weak references to Perl's immortal
    /// scalars die with the document. A cycle the root no longer reaches
    /// (among FREEZE values a THAW handler dropped) cannot be freed that
    /// way: to have it freed, drop the document instead.
    ///
    /// ```
    /// use sereal::Value;
    /// # fn main() -> Result<(), sereal::Error> {
    /// let doc = sereal::decode(b"=\xF3rl\x05\x00\x28\xaa\x01\x64self\x29\x02")?;
    /// let weak = doc.node().unwrap().downgrade();
    /// let v: Value = doc.into_value();
    /// v.dismantle(); // the cycle is the caller's to free now
    /// drop(v);
    /// assert!(weak.upgrade().is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_value(mut self) -> Value {
        self.extra = None;
        std::mem::take(&mut self.root)
    }
}

/// A document of a graph built in Rust: its cycles, if any, are the
/// caller's to free, as for any [`Value`].
impl From<Value> for Document {
    fn from(root: Value) -> Document {
        Document { root, extra: None }
    }
}

impl Drop for Document {
    fn drop(&mut self) {
        if let Some(extra) = &mut self.extra {
            // The root goes first, freeing what no cycle holds: what is
            // left of the graph is then held by cycles or from outside.
            drop(std::mem::take(&mut self.root));
            drop(extra.whole.take());
            collect_cycles(&extra.cycles);
        }
    }
}

impl Deref for Document {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.root
    }
}

/// A document lends its root, so that what takes a `Borrow<Value>`
/// (`from_value`, with the `serde` feature) takes a document too.
impl std::borrow::Borrow<Value> for Document {
    fn borrow(&self) -> &Value {
        &self.root
    }
}

impl DerefMut for Document {
    fn deref_mut(&mut self) -> &mut Value {
        &mut self.root
    }
}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.root.fmt(f)
    }
}

/// The root in Perl's notation, as [`Value`]'s `Display` (see
/// [`Dumper`](super::Dumper)).
///
/// ```
/// let doc = sereal::decode(&sereal::encode(&sereal::sereal!([1, "a"])).unwrap()).unwrap();
/// assert_eq!(doc.to_string(), "[1,'a']");
/// ```
impl fmt::Display for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.root, f)
    }
}

impl PartialEq for Document {
    fn eq(&self, other: &Document) -> bool {
        self.root == other.root
    }
}

impl PartialEq<Value> for Document {
    fn eq(&self, other: &Value) -> bool {
        &self.root == other
    }
}

impl PartialEq<Document> for Value {
    fn eq(&self, other: &Document) -> bool {
        self == &other.root
    }
}
