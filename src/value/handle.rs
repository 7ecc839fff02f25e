//! What the handles on a node do: [`Ref`]'s constructors, reads and
//! mutators, [`Node`]'s class, and [`WeakRef`]; and the errors a refused
//! borrow gives.

use super::*;

fn borrowed() -> Error {
    Error::new(ErrorKind::Borrowed)
}

/// The error for a node that cannot be borrowed for writing: `Locked` (and
/// recorded, so the encode fails) when a running encoder callback holds the
/// node locked, `Borrowed` otherwise.
pub(super) fn mutation_refused(node: &Node) -> Error {
    if guard::note_refused_mutation(node as *const Node as usize) {
        Error::new(ErrorKind::Locked)
    } else {
        borrowed()
    }
}

impl Ref {
    /// A new node with `body`.
    ///
    /// ```
    /// use sereal::{Body, Ref, Value};
    /// let cell = Ref::new(Body::Scalar(Value::from(5)));
    /// assert_eq!(Value::from(cell), Value::scalar_ref(5));
    /// ```
    pub fn new(body: Body) -> Ref {
        Ref(NodeRc::written(|| Node {
            class: UnsafeCell::new(None),
            body: RefCell::new(body),
        }))
    }

    /// A new node with `body`, in a box of `chunks` (see `Chunks`).
    #[inline(always)]
    pub(crate) fn new_in(chunks: &mut NodeChunks, body: Body) -> Ref {
        Ref(NodeRc::written_in(chunks, || Node {
            class: UnsafeCell::new(None),
            body: RefCell::new(body),
        }))
    }

    /// Completes the body of a new node in place, before any other handle
    /// exists: what `fill` reads lands in the node's memory, with no move
    /// of the body once it is read.
    ///
    /// # Panics
    /// If another handle on the node exists.
    #[inline(always)]
    pub(crate) fn fill<E>(
        &mut self,
        fill: impl FnOnce(&mut Body) -> Result<(), E>,
    ) -> Result<(), E> {
        let node = NodeRc::get_mut(&mut self.0).expect("a new node is unique");
        fill(node.body.get_mut())
    }

    /// A new array node.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let r = Ref::array(vec![Value::from(1), Value::from("a")]);
    /// assert_eq!(r.as_array().unwrap().len(), 2);
    /// assert_eq!(Value::from(r), Value::array([Value::from(1), Value::from("a")]));
    /// ```
    pub fn array(items: impl Into<Array>) -> Ref {
        Ref::new(Body::Array(items.into()))
    }

    /// A new hash node, holding `hash` as it is: a [`Hash`](struct@Hash) built or
    /// collected beforehand, or the entries [`Value::hash`] takes through
    /// `.into()`.
    ///
    /// ```
    /// use sereal::{Hash, Ref};
    /// let a = Ref::hash([("name", "ann")].into());
    /// let b = Ref::hash((1..=3).map(|i| (format!("k{i}"), i)).collect());
    /// let c = Ref::hash(Hash::new());
    /// assert_eq!((a.as_hash().unwrap().len(), b.as_hash().unwrap().len(), c.as_hash().unwrap().len()), (1, 3, 0));
    /// ```
    pub fn hash(hash: Hash) -> Ref {
        Ref::new(Body::Hash(hash))
    }

    /// A new scalar cell holding `value`.
    ///
    /// ```
    /// use sereal::{Body, Ref, Value};
    /// let cell = Ref::scalar("hi");
    /// assert!(matches!(&*cell.body(), Body::Scalar(v) if v == "hi"));
    /// assert_eq!(format!("{:?}", Value::from(cell)), r#"\"hi""#);
    /// ```
    pub fn scalar(value: impl Into<Value>) -> Ref {
        Ref::new(Body::Scalar(value.into()))
    }

    /// A new regexp node blessed into `Regexp`, as Perl's `qr//` is.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let re = Ref::regexp(r"^\d+$", "x");
    /// assert_eq!(re.class().unwrap().as_str(), Some("Regexp"));
    /// assert_eq!(format!("{:?}", Value::from(re)), r#"bless(qr/^\d+$/x, "Regexp")"#);
    /// ```
    pub fn regexp(pattern: &str, flags: &str) -> Ref {
        let r = Ref::new(Body::Regexp(Box::new(Regexp {
            pattern: Str::from(pattern),
            utf8: !pattern.is_ascii(),
            flags: Str::from(flags),
        })));
        r.bless("Regexp");
        r
    }

    /// Blesses the node into `class` and returns the handle (builder style).
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let obj = Ref::array(vec![]).blessed("My::Class");
    /// assert_eq!(obj.class().unwrap().to_string(), "My::Class");
    /// ```
    pub fn blessed(self, class: impl Into<Key>) -> Ref {
        self.bless(class);
        self
    }

    /// Blesses the node into `class` (Perl's `bless`).
    ///
    /// ```
    /// use sereal::{Hash, Ref};
    /// let obj = Ref::hash(Hash::new());
    /// let other = obj.clone();
    /// obj.bless("My::Obj");
    /// // the class belongs to the node: every handle sees it
    /// assert_eq!(other.class().unwrap().as_str(), Some("My::Obj"));
    /// ```
    pub fn bless(&self, class: impl Into<Key>) {
        self.0.set_class(Some(class.into()));
    }

    /// Removes the node's class.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let obj = Ref::array(vec![]).blessed("Point");
    /// obj.unbless();
    /// assert!(obj.class().is_none());
    /// assert_eq!(Value::from(obj), Value::array(Vec::<Value>::new()));
    /// ```
    pub fn unbless(&self) {
        self.0.set_class(None);
    }

    /// The node's class, if blessed.
    ///
    /// ```
    /// use sereal::{decode, encode, Ref, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let obj = Value::from(Ref::hash([("x", 1)].into()).blessed("Point"));
    /// let back = decode(&encode(&obj)?)?;
    /// assert_eq!(back.node().unwrap().class().unwrap().as_str(), Some("Point"));
    /// assert!(Ref::scalar(1).class().is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn class(&self) -> Option<Key> {
        // SAFETY: the class is only read whole or replaced whole, on the
        // node's one thread, and no reference into it outlives this call.
        unsafe { (*self.0.class.get()).clone() }
    }

    /// Reads the node's content.
    ///
    /// # Panics
    /// If the node is borrowed for writing at the same time; use
    /// [`Ref::try_body`] to get an error instead.
    ///
    /// ```
    /// use sereal::{Body, Value};
    /// let v = Value::array([1, 2]);
    /// let node = v.node().unwrap();
    /// let body = node.body();
    /// match &*body {
    ///     Body::Array(a) => assert_eq!(a[1], 2),
    ///     other => panic!("not an array: {other:?}"),
    /// }
    /// ```
    pub fn body(&self) -> Borrowed<'_, Body> {
        Borrowed::cell(self.0.body.borrow())
    }

    /// Reads the node's content, or errors when it is borrowed for writing.
    ///
    /// ```
    /// use sereal::{ErrorKind, Ref};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let cell = Ref::scalar(1);
    /// let writing = cell.body_mut()?;
    /// assert_eq!(cell.try_body().unwrap_err().kind(), &ErrorKind::Borrowed);
    /// drop(writing);
    /// assert!(cell.try_body().is_ok());
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_body(&self) -> Result<Borrowed<'_, Body>> {
        self.0
            .body
            .try_borrow()
            .map(Borrowed::cell)
            .map_err(|_| borrowed())
    }

    /// Borrows the node's content for changing; errors when it is in use.
    ///
    /// ```
    /// use sereal::{Body, Ref, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let cell = Ref::scalar(1);
    /// if let Body::Scalar(v) = &mut *cell.body_mut()? {
    ///     *v = Value::from(2);
    /// }
    /// assert_eq!(Value::from(&cell), Value::scalar_ref(2));
    /// let reading = cell.body();
    /// assert!(cell.body_mut().is_err()); // in use
    /// # drop(reading);
    /// # Ok(())
    /// # }
    /// ```
    pub fn body_mut(&self) -> Result<BorrowedMut<'_, Body>> {
        self.0
            .body
            .try_borrow_mut()
            .map(BorrowedMut::cell)
            .map_err(|_| mutation_refused(&self.0))
    }

    /// Replaces the node's content; errors when it is in use.
    ///
    /// ```
    /// use sereal::{Body, Ref, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let node = Ref::scalar(1);
    /// let other = node.clone();
    /// node.set(Body::Array(vec![Value::from("now an array")].into()))?;
    /// // one node: every handle sees the new content
    /// assert_eq!(other.as_array().unwrap()[0], "now an array");
    /// # Ok(())
    /// # }
    /// ```
    pub fn set(&self, body: Body) -> Result<()> {
        *self.body_mut()? = body;
        Ok(())
    }

    /// The array, if this node is one.
    ///
    /// ```
    /// use sereal::{Hash, Ref, Value};
    /// let r = Ref::array(vec![Value::from("a"), Value::from("b")]);
    /// assert_eq!(r.as_array().unwrap()[1], "b");
    /// assert!(Ref::hash(Hash::new()).as_array().is_none());
    /// ```
    pub fn as_array(&self) -> Option<Borrowed<'_, Array>> {
        Borrowed::filter_map(self.body(), |b| match b {
            Body::Array(a) => Some(a),
            _ => None,
        })
        .ok()
    }

    /// The hash, if this node is one.
    ///
    /// ```
    /// use sereal::Ref;
    /// let r = Ref::hash([("name", "ann")].into());
    /// assert_eq!(r.as_hash().unwrap()["name"], "ann");
    /// assert!(Ref::scalar(1).as_hash().is_none());
    /// ```
    pub fn as_hash(&self) -> Option<Borrowed<'_, Hash>> {
        Borrowed::filter_map(self.body(), |b| match b {
            Body::Hash(h) => Some(h),
            _ => None,
        })
        .ok()
    }

    /// The array for changing. Errors if the node is not an array or is in use.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let r = Ref::array(vec![]);
    /// r.array_mut().unwrap().push(Value::from(1));
    /// assert_eq!(r.as_array().unwrap().len(), 1);
    /// ```
    pub fn array_mut(&self) -> Result<BorrowedMut<'_, Array>> {
        self.part_mut("an array", |b| match b {
            Body::Array(a) => Some(a),
            _ => None,
        })
    }

    /// The hash for changing. Errors if the node is not a hash or is in use.
    ///
    /// ```
    /// use sereal::{ErrorKind, Hash, Ref};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let r = Ref::hash(Hash::new());
    /// r.hash_mut()?.insert("k", 1);
    /// assert_eq!(r.as_hash().unwrap()["k"], 1);
    /// let e = Ref::array(vec![]).hash_mut().unwrap_err();
    /// assert_eq!(e.kind(), &ErrorKind::WrongBody("a hash"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn hash_mut(&self) -> Result<BorrowedMut<'_, Hash>> {
        self.part_mut("a hash", |b| match b {
            Body::Hash(h) => Some(h),
            _ => None,
        })
    }

    /// What `pick` finds in the body, borrowed for changing; `WrongBody`
    /// naming `what` when it finds nothing.
    fn part_mut<T>(
        &self,
        what: &'static str,
        pick: impl FnOnce(&mut Body) -> Option<&mut T>,
    ) -> Result<BorrowedMut<'_, T>> {
        let body = self
            .0
            .body
            .try_borrow_mut()
            .map_err(|_| mutation_refused(&self.0))?;
        cell::RefMut::filter_map(body, pick)
            .map(BorrowedMut::cell)
            .map_err(|_| Error::new(ErrorKind::WrongBody(what)))
    }

    /// A weak handle on the same node.
    ///
    /// ```
    /// use sereal::Ref;
    /// let r = Ref::array(vec![]);
    /// let w = r.downgrade();
    /// assert!(w.upgrade().unwrap().ptr_eq(&r));
    /// drop(r);
    /// assert!(w.upgrade().is_none()); // a weak handle keeps nothing alive
    /// ```
    pub fn downgrade(&self) -> WeakRef {
        WeakRef(NodeRc::downgrade(&self.0))
    }

    /// Whether two handles are on the same node.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let a = Ref::array(vec![Value::from(1)]);
    /// let b = Ref::array(vec![Value::from(1)]);
    /// assert!(a.ptr_eq(&a.clone()));
    /// assert!(!a.ptr_eq(&b)); // equal content, two nodes
    /// assert_eq!(a, b);
    /// ```
    pub fn ptr_eq(&self, other: &Ref) -> bool {
        NodeRc::ptr_eq(&self.0, &other.0)
    }

    /// The number of strong handles on the node.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let r = Ref::array(vec![]);
    /// // held twice in the graph: the encoder writes it once and refers back
    /// let v = Value::array([Value::from(&r), Value::from(&r)]);
    /// assert_eq!(r.strong_count(), 3);
    /// drop(v);
    /// assert_eq!(r.strong_count(), 1);
    /// ```
    pub fn strong_count(&self) -> usize {
        NodeRc::strong_count(&self.0)
    }

    /// The number of weak handles on the node.
    ///
    /// ```
    /// use sereal::{Hash, Ref, Value};
    /// let r = Ref::hash(Hash::new());
    /// let back = Value::weak(&r);
    /// assert_eq!((r.strong_count(), r.weak_count()), (1, 1));
    /// drop(back);
    /// assert_eq!(r.weak_count(), 0);
    /// ```
    pub fn weak_count(&self) -> usize {
        NodeRc::weak_count(&self.0)
    }

    #[inline]
    pub(crate) fn addr(&self) -> usize {
        NodeRc::as_ptr(&self.0) as usize
    }

    pub(crate) fn set_body(&self, body: Body) {
        *self.0.body.borrow_mut() = body;
    }
}

impl Node {
    /// Reads the body without touching the borrow flag.
    ///
    /// # Safety
    /// The caller must not let any code that could borrow this node mutably
    /// run while the returned reference is alive.
    #[inline]
    pub(crate) unsafe fn body_unguarded(&self) -> Result<&Body> {
        self.body.try_borrow_unguarded().map_err(|_| borrowed())
    }

    /// A shared borrow of the body: while it lives, every attempt to borrow
    /// the body for writing fails.
    pub(crate) fn lock(&self) -> cell::Ref<'_, Body> {
        self.body.borrow()
    }

    /// Reads the class without touching the borrow flag.
    ///
    /// # Safety
    /// As for [`Node::body_unguarded`].
    #[inline]
    pub(crate) unsafe fn class_unguarded(&self) -> Option<&Key> {
        (*self.class.get()).as_ref()
    }

    pub(super) fn set_class(&self, class: Option<Key>) {
        // SAFETY: see `Ref::class`; the old class is dropped after the
        // replacement is in place.
        let old = unsafe { std::ptr::replace(self.class.get(), class) };
        drop(old);
    }
}

impl WeakRef {
    /// A strong handle on the node, if it is still alive.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let r = Ref::scalar(1);
    /// let w = r.downgrade();
    /// assert_eq!(w.upgrade().map(Value::from), Some(Value::scalar_ref(1)));
    /// drop(r);
    /// assert!(w.upgrade().is_none());
    /// ```
    pub fn upgrade(&self) -> Option<Ref> {
        self.0.upgrade().map(Ref)
    }
}
