//! Reading a value: its scalars, and the slots of the node it refers to,
//! cloned or borrowed.

use super::{Array, Body, Borrowed, Hash, Ref, Value};

impl Value {
    /// Whether the value is undefined (`Undef`, `CanonicalUndef`, or a weak
    /// reference whose node is gone).
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// assert!(Value::Undef.is_undef() && Value::CanonicalUndef.is_undef());
    /// assert!(!Value::from(0).is_undef());
    /// let node = Ref::array(vec![]);
    /// let weak = Value::weak(&node);
    /// assert!(!weak.is_undef());
    /// drop(node);
    /// assert!(weak.is_undef()); // its node is gone
    /// ```
    pub fn is_undef(&self) -> bool {
        match self {
            Value::Undef | Value::CanonicalUndef => true,
            Value::Weak(w) => w.upgrade().is_none(),
            Value::Alias(r) => matches!(&*r.body(), Body::Scalar(v) if v.is_undef()),
            _ => false,
        }
    }

    /// The value as an `i64`, for integers that fit (here and in the
    /// accessors below, also through an alias of a scalar cell).
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::from(-5).as_i64(), Some(-5));
    /// assert_eq!(Value::UInt(u64::MAX).as_i64(), None); // does not fit
    /// assert_eq!(Value::from(1.0).as_i64(), None); // a float is not an integer
    /// assert_eq!(Value::from("5").as_i64(), None); // nor is a string
    /// ```
    pub fn as_i64(&self) -> Option<i64> {
        self.scalar(|v| match v {
            Value::Int(i) => Some(*i),
            Value::UInt(u) => i64::try_from(*u).ok(),
            _ => None,
        })
    }

    /// The value as a `u64`, for non-negative integers.
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::UInt(u64::MAX).as_u64(), Some(u64::MAX));
    /// assert_eq!(Value::from(7).as_u64(), Some(7));
    /// assert_eq!(Value::from(-1).as_u64(), None);
    /// ```
    pub fn as_u64(&self) -> Option<u64> {
        self.scalar(|v| match v {
            Value::Int(i) => u64::try_from(*i).ok(),
            Value::UInt(u) => Some(*u),
            _ => None,
        })
    }

    /// The value as an `f64`, for any number.
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::from(0.5).as_f64(), Some(0.5));
    /// assert_eq!(Value::Float(0.25).as_f64(), Some(0.25));
    /// assert_eq!(Value::from(3).as_f64(), Some(3.0)); // integers too
    /// assert_eq!(Value::from("3").as_f64(), None);
    /// ```
    pub fn as_f64(&self) -> Option<f64> {
        self.scalar(|v| match v {
            Value::Int(i) => Some(*i as f64),
            Value::UInt(u) => Some(*u as f64),
            Value::Float(f) => Some(f64::from(*f)),
            Value::Double(d) => Some(*d),
            _ => None,
        })
    }

    /// The value as a boolean, for the boolean kinds.
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::Bool(true).as_bool(), Some(true));
    /// assert_eq!(Value::False.as_bool(), Some(false)); // Perl's immortal false
    /// assert_eq!(Value::from(1).as_bool(), None); // not Perl's truthiness
    /// ```
    pub fn as_bool(&self) -> Option<bool> {
        self.scalar(|v| match v {
            Value::Bool(b) => Some(*b),
            Value::True => Some(true),
            Value::False => Some(false),
            _ => None,
        })
    }

    /// `read` of this scalar, or of the scalar cell this slot is an alias
    /// of (one level: what `alias_smallint` decodes, or `ALIAS` gives).
    pub(super) fn scalar<T>(&self, read: impl Fn(&Value) -> Option<T>) -> Option<T> {
        match self {
            Value::Alias(r) => match &*r.try_body().ok()? {
                Body::Scalar(v) => read(v),
                _ => None,
            },
            v => read(v),
        }
    }

    /// The bytes of a string value (either kind).
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::bytes(b"\xff\x00").as_bytes(), Some(&b"\xff\x00"[..]));
    /// assert_eq!(Value::utf8("é").as_bytes(), Some("é".as_bytes()));
    /// assert_eq!(Value::from(1).as_bytes(), None);
    /// ```
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(s) | Value::Utf8(s) => Some(s.as_bytes()),
            _ => None,
        }
    }

    /// A string value as text, when its bytes are valid UTF-8.
    ///
    /// ```
    /// use sereal::Value;
    /// assert_eq!(Value::from("ann").as_str(), Some("ann")); // a byte string of ASCII
    /// assert_eq!(Value::utf8("Zoë").as_str(), Some("Zoë"));
    /// assert_eq!(Value::bytes(b"Zo\xeb").as_str(), None); // Latin-1 bytes, not UTF-8
    /// ```
    pub fn as_str(&self) -> Option<&str> {
        self.as_bytes().and_then(|b| std::str::from_utf8(b).ok())
    }

    /// The node of a strong reference (`None` for anything else, a weak
    /// reference or an alias included: see [`Value::node`] for those).
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let node = Ref::array([1]);
    /// let v = Value::from(&node);
    /// assert!(v.as_strong_ref().unwrap().ptr_eq(&node));
    /// assert!(Value::weak(&node).as_strong_ref().is_none());
    /// ```
    pub fn as_strong_ref(&self) -> Option<&Ref> {
        match self {
            Value::Ref(r) => Some(r),
            _ => None,
        }
    }

    /// The node of a strong reference: the old name of
    /// [`Value::as_strong_ref`], which does not read as [`AsRef::as_ref`].
    #[deprecated(since = "0.1.0", note = "use `Value::as_strong_ref`")]
    pub fn as_ref(&self) -> Option<&Ref> {
        self.as_strong_ref()
    }

    /// The node this value reaches: through a strong or live weak
    /// reference, or the aliased node itself.
    ///
    /// ```
    /// use sereal::{Ref, Value};
    /// let node = Ref::hash([("k", 1)].into());
    /// for v in [Value::from(&node), Value::weak(&node), Value::Alias(node.clone())] {
    ///     assert!(v.node().unwrap().ptr_eq(&node));
    /// }
    /// assert!(Value::from(1).node().is_none());
    /// ```
    pub fn node(&self) -> Option<Ref> {
        match self {
            Value::Ref(r) | Value::Alias(r) => Some(r.clone()),
            Value::Weak(w) => w.upgrade(),
            _ => None,
        }
    }

    /// Element `i` of the array this value refers to (a clone of the slot).
    ///
    /// ```
    /// use sereal::Value;
    /// let v = Value::array(["a", "b"]);
    /// let b: Value = v.at(1).unwrap(); // a clone of the slot
    /// assert_eq!(b, "b");
    /// assert_eq!(v.at(2), None);
    /// assert_eq!(Value::hash([("a", 1)]).at(0), None); // not an array
    /// ```
    pub fn at(&self, i: usize) -> Option<Value> {
        let node = self.node()?;
        let body = node.try_body().ok()?;
        match &*body {
            Body::Array(a) => a.get(i).cloned(),
            _ => None,
        }
    }

    /// The value under `key` in the hash this value refers to (a clone).
    ///
    /// ```
    /// use sereal::{decode, encode, Value};
    /// # fn main() -> Result<(), sereal::Error> {
    /// let doc = decode(&encode(&Value::hash([("id", Value::from(7)), ("tags", Value::array(["x"]))]))?)?;
    /// assert_eq!(doc.get("id"), Some(Value::from(7)));
    /// // a node comes out as a handle on the same node, not a copy
    /// let tags = doc.get("tags").unwrap();
    /// assert_eq!(tags.at(0).unwrap(), "x");
    /// assert_eq!(doc.get("missing"), None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self, key: &str) -> Option<Value> {
        let node = self.node()?;
        let body = node.try_body().ok()?;
        match &*body {
            Body::Hash(h) => h.get(key).cloned(),
            _ => None,
        }
    }

    /// The value under `key` in the hash this value refers to, borrowed
    /// instead of cloned: a guard that reads as `&Value` while it lives
    /// (and while it does, the hash cannot be changed). It reaches what
    /// [`Value::get`] reaches (through a strong or live weak reference, or
    /// an alias). `None` for a missing key, a value that is not a hash, or
    /// a hash borrowed for writing.
    ///
    /// ```
    /// use sereal::Value;
    /// let v = Value::hash([("name", "ann")]);
    /// let name = v.get_ref("name").unwrap();
    /// let s: &str = name.as_str().unwrap();
    /// assert_eq!(s, "ann");
    /// ```
    pub fn get_ref(&self, key: &str) -> Option<Borrowed<'_, Value>> {
        self.borrow_in(|b| match b {
            Body::Hash(h) => h.get(key),
            _ => None,
        })
    }

    /// Element `i` of the array this value refers to, borrowed: as
    /// [`Value::get_ref`].
    ///
    /// ```
    /// use sereal::Value;
    /// let v = Value::array([10, 20]);
    /// assert_eq!(v.at_ref(1).unwrap().as_i64(), Some(20));
    /// assert!(v.at_ref(2).is_none());
    /// ```
    pub fn at_ref(&self, i: usize) -> Option<Borrowed<'_, Value>> {
        self.borrow_in(|b| match b {
            Body::Array(a) => a.get(i),
            _ => None,
        })
    }

    /// The array this value refers to (through a strong or live weak
    /// reference, or an alias), borrowed (`None` for anything else, or an
    /// array borrowed for writing).
    ///
    /// ```
    /// use sereal::Value;
    /// let v = Value::array([1, 2]);
    /// assert_eq!(v.as_array().unwrap()[1], Value::Int(2));
    /// ```
    pub fn as_array(&self) -> Option<Borrowed<'_, Array>> {
        self.borrow_in(|b| match b {
            Body::Array(a) => Some(a),
            _ => None,
        })
    }

    /// The hash this value refers to, borrowed (as [`Value::as_array`]);
    /// it indexes as serde_json's map does.
    ///
    /// ```
    /// use sereal::Value;
    /// let v = Value::hash([("name", "ann")]);
    /// let h = v.as_hash().unwrap();
    /// assert_eq!(h["name"].as_str(), Some("ann"));
    /// assert!(h["missing"].is_undef());
    /// ```
    pub fn as_hash(&self) -> Option<Borrowed<'_, Hash>> {
        self.borrow_in(|b| match b {
            Body::Hash(h) => Some(h),
            _ => None,
        })
    }

    /// A borrow of what `pick` finds in the body of the node this value
    /// reaches (as [`Value::node`] does).
    fn borrow_in<T: ?Sized>(
        &self,
        pick: impl FnOnce(&Body) -> Option<&T>,
    ) -> Option<Borrowed<'_, T>> {
        match self {
            Value::Ref(r) | Value::Alias(r) => Borrowed::filter_map(r.try_body().ok()?, pick).ok(),
            // the guard keeps the upgraded node alive
            Value::Weak(w) => Borrowed::owning(w.upgrade()?, |r| {
                let body = r.0.body.try_borrow().ok()?;
                std::cell::Ref::filter_map(body, pick).ok()
            }),
            _ => None,
        }
    }
}
