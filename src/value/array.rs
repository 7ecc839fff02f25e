//! `Array`: the elements of an array node, the first one stored inline.

use super::Value;
use smallvec::SmallVec;
use std::ops::{Deref, DerefMut};

/// The elements of an array node.
///
/// An array of one element keeps it inside the node, with no allocation of
/// its own: one-element arrays are common (`[$id]`, singleton lists) and this
/// halves their cost. Longer arrays use one heap buffer, like a `Vec`. An
/// `Array` dereferences to `[Value]`, and has `Vec`'s usual methods.
///
/// ```
/// use sereal::{Array, Value};
/// let mut a = Array::new();
/// a.push(Value::from(1));
/// a.extend([Value::from(2), Value::from(3)]);
/// assert_eq!(a.len(), 3);
/// assert_eq!(a[1], Value::from(2));
/// assert_eq!(a.pop(), Some(Value::from(3)));
/// ```
#[derive(Clone, Default)]
pub struct Array(SmallVec<[Value; 1]>);

impl Array {
    /// An empty array.
    ///
    /// ```
    /// use sereal::{Array, Ref, Value};
    /// let mut a = Array::new();
    /// a.push(1);
    /// a.push("two");
    /// assert_eq!(Value::from(Ref::array(a)), Value::array([Value::from(1), Value::from("two")]));
    /// ```
    pub fn new() -> Array {
        Array(SmallVec::new())
    }

    /// An empty array with room for `n` elements.
    ///
    /// ```
    /// use sereal::Array;
    /// let mut a = Array::with_capacity(100);
    /// a.extend(0..100);
    /// assert_eq!((a.len(), a[99].as_i64()), (100, Some(99)));
    /// ```
    pub fn with_capacity(n: usize) -> Array {
        Array(SmallVec::with_capacity(n))
    }

    /// Appends an element.
    ///
    /// ```
    /// use sereal::Array;
    /// let mut a = Array::new();
    /// a.push(1); // anything that converts into a Value
    /// a.push("x");
    /// a.push(vec![2, 3]); // an array reference
    /// assert_eq!(a.len(), 3);
    /// assert_eq!(a[2].at(1).unwrap(), 3);
    /// ```
    #[inline]
    pub fn push(&mut self, v: impl Into<Value>) {
        self.0.push(v.into());
    }

    /// Removes and returns the last element.
    ///
    /// ```
    /// use sereal::{Array, Value};
    /// let mut a: Array = [1, 2].into();
    /// assert_eq!(a.pop(), Some(Value::Int(2)));
    /// assert_eq!(a.pop(), Some(Value::Int(1)));
    /// assert_eq!(a.pop(), None);
    /// ```
    pub fn pop(&mut self) -> Option<Value> {
        self.0.pop()
    }

    /// Inserts an element at `i`, shifting the later ones.
    ///
    /// # Panics
    /// If `i > len`.
    ///
    /// ```
    /// use sereal::Array;
    /// let mut a: Array = [1, 3].into();
    /// a.insert(1, 2);
    /// assert_eq!(a[..], [1, 2, 3]);
    /// ```
    pub fn insert(&mut self, i: usize, v: impl Into<Value>) {
        self.0.insert(i, v.into());
    }

    /// Removes and returns the element at `i`, shifting the later ones.
    ///
    /// # Panics
    /// If `i >= len`.
    ///
    /// ```
    /// use sereal::Array;
    /// let mut a: Array = ["a", "b", "c"].into();
    /// assert_eq!(a.remove(0), "a");
    /// assert_eq!(a[..], ["b", "c"]);
    /// ```
    pub fn remove(&mut self, i: usize) -> Value {
        self.0.remove(i)
    }

    /// Keeps the first `n` elements.
    ///
    /// ```
    /// use sereal::Array;
    /// let mut a: Array = [1, 2, 3, 4].into();
    /// a.truncate(2);
    /// assert_eq!(a[..], [1, 2]);
    /// ```
    pub fn truncate(&mut self, n: usize) {
        self.0.truncate(n);
    }

    /// Removes every element.
    ///
    /// ```
    /// use sereal::Array;
    /// let mut a: Array = [1, 2].into();
    /// a.clear();
    /// assert!(a.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Reserves room for `n` more elements.
    ///
    /// ```
    /// use sereal::Array;
    /// let mut a: Array = [1].into();
    /// a.reserve(10);
    /// let buffer = a.as_ptr();
    /// a.extend(2..=11);
    /// assert_eq!(a.as_ptr(), buffer); // the ten pushes moved nothing
    /// ```
    pub fn reserve(&mut self, n: usize) {
        self.0.reserve(n);
    }

    /// Removes the elements in `range` and returns them in order.
    ///
    /// ```
    /// use sereal::{Array, Value};
    /// let mut a: Array = [1, 2, 3, 4].into();
    /// let middle: Vec<Value> = a.drain(1..3).collect();
    /// assert_eq!(middle, [2, 3]);
    /// assert_eq!(a[..], [1, 4]);
    /// ```
    pub fn drain<R: std::ops::RangeBounds<usize>>(
        &mut self,
        range: R,
    ) -> impl Iterator<Item = Value> + '_ {
        self.0.drain(range)
    }

    /// Converts into a `Vec`.
    ///
    /// ```
    /// use sereal::{Array, Value};
    /// let a: Array = ["x", "y"].into();
    /// let v: Vec<Value> = a.into_vec();
    /// assert_eq!(v, ["x", "y"]);
    /// ```
    pub fn into_vec(self) -> Vec<Value> {
        self.0.into_vec()
    }
}

impl Deref for Array {
    type Target = [Value];
    #[inline]
    fn deref(&self) -> &[Value] {
        &self.0
    }
}

impl DerefMut for Array {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Value] {
        &mut self.0
    }
}

impl From<Vec<Value>> for Array {
    fn from(v: Vec<Value>) -> Array {
        Array(SmallVec::from_vec(v))
    }
}

/// An array of the values of a Rust array, so `Ref::array` takes what
/// `Value::array` takes.
///
/// ```
/// use sereal::{Ref, Value};
/// let tags = Ref::array(["admin", "ops"]);
/// assert_eq!(Value::Ref(tags), Value::array(["admin", "ops"]));
/// ```
impl<V: Into<Value>, const N: usize> From<[V; N]> for Array {
    fn from(items: [V; N]) -> Array {
        items.into_iter().collect()
    }
}

impl<V: Into<Value>> FromIterator<V> for Array {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Array {
        Array(iter.into_iter().map(Into::into).collect())
    }
}

impl<V: Into<Value>> Extend<V> for Array {
    fn extend<I: IntoIterator<Item = V>>(&mut self, iter: I) {
        self.0.extend(iter.into_iter().map(Into::into));
    }
}

impl IntoIterator for Array {
    type Item = Value;
    type IntoIter = smallvec::IntoIter<[Value; 1]>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Array {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut Array {
    type Item = &'a mut Value;
    type IntoIter = std::slice::IterMut<'a, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
