//! Graph equality that respects identity.

use super::{Body, Ref, Value};
use hashbrown::HashMap;

/// Compares two graphs: same shape, same scalars, and the same sharing.
///
/// Nodes are matched one to one: if a node of the left graph was matched
/// with a node of the right one, every later meeting of either must meet the
/// other. Hashes compare as maps (order ignored), classes must match.
///
/// Scalars compare by kind and value: integers of either signedness with
/// the same value are equal, and so are floats of either width with the
/// same value (NaN equals NaN), as the format chooses those widths itself;
/// every other variant equals only itself. With `perl`, scalars compare as
/// Perl cannot tell them apart: also the two undefs, and a weak reference
/// whose node is gone, a boolean and Perl's immortal of the same truth, a
/// boolean and the scalar Perl writes for it before protocol 5 (true and
/// `1`, false and the empty byte string), an alias and its cell's value.
/// String kinds (bytes or UTF-8) must match in both.
#[derive(Default)]
pub(crate) struct GraphEq {
    left: HashMap<usize, usize>,
    right: HashMap<usize, usize>,
    perl: bool,
}

impl GraphEq {
    pub(crate) fn values(&mut self, a: &Value, b: &Value) -> bool {
        use Value::*;
        match (a, b) {
            (Ref(x), Ref(y)) | (Alias(x), Alias(y)) => self.nodes(x, y),
            (Weak(x), Weak(y)) => match (x.upgrade(), y.upgrade()) {
                (Some(x), Some(y)) => self.nodes(&x, &y),
                (None, None) => true,
                _ => false,
            },
            // A weak reference whose node is gone is undef (and is written so).
            (Weak(w), other) | (other, Weak(w)) if self.perl && w.upgrade().is_none() => {
                matches!(other, Undef | CanonicalUndef)
            }
            (Alias(x), other) if self.perl => scalar_of(x).is_some_and(|v| self.values(&v, other)),
            (other, Alias(y)) if self.perl => scalar_of(y).is_some_and(|v| self.values(other, &v)),
            (Foreign(x), Foreign(y)) => x.ptr_eq(y),
            (Ref(_) | Weak(_) | Foreign(_) | Alias(_), _)
            | (_, Ref(_) | Weak(_) | Foreign(_) | Alias(_)) => false,
            _ if self.perl => perl_scalars_eq(a, b),
            _ => scalars_eq(a, b),
        }
    }

    fn nodes(&mut self, x: &Ref, y: &Ref) -> bool {
        let (ax, ay) = (x.addr(), y.addr());
        match (self.left.get(&ax), self.right.get(&ay)) {
            (Some(&m), Some(&n)) => return m == ay && n == ax,
            (None, None) => {}
            _ => return false,
        }
        self.left.insert(ax, ay);
        self.right.insert(ay, ax);
        if x.class() != y.class() {
            return false;
        }
        let (bx, by) = match (x.try_body(), y.try_body()) {
            (Ok(bx), Ok(by)) => (bx, by),
            _ => return false,
        };
        crate::stack::deeper(|| match (&*bx, &*by) {
            (Body::Scalar(a), Body::Scalar(b)) => self.values(a, b),
            (Body::Array(a), Body::Array(b)) | (Body::Frozen(a), Body::Frozen(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| self.values(a, b))
            }
            (Body::Hash(a), Body::Hash(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, va)| b.get_key(k).is_some_and(|vb| self.values(va, vb)))
            }
            (Body::Regexp(a), Body::Regexp(b)) => a == b,
            _ => false,
        })
    }
}

fn scalar_of(r: &Ref) -> Option<Value> {
    match &*r.try_body().ok()? {
        Body::Scalar(v) => Some(v.clone()),
        _ => None,
    }
}

/// Scalars of the same kind and value (see [`GraphEq`]).
fn scalars_eq(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Undef, Undef) | (CanonicalUndef, CanonicalUndef) | (True, True) | (False, False) => true,
        (Bool(x), Bool(y)) => x == y,
        _ => numbers_eq(a, b),
    }
}

/// Scalars Perl cannot tell apart (see [`GraphEq`]).
fn perl_scalars_eq(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a.as_bool(), b.as_bool()) {
        (Some(x), Some(y)) => return x == y,
        (Some(x), None) => return perl_bool_form(b) == Some(x),
        (None, Some(y)) => return perl_bool_form(a) == Some(y),
        (None, None) => {}
    }
    match (a, b) {
        (Undef | CanonicalUndef, Undef | CanonicalUndef) => true,
        _ => numbers_eq(a, b),
    }
}

/// Numbers and strings: integers by value whatever their signedness,
/// floats by value whatever their width, strings of one kind by bytes.
fn numbers_eq(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Int(_) | UInt(_), Int(_) | UInt(_)) => {
            a.as_i64() == b.as_i64() && a.as_u64() == b.as_u64()
        }
        (Float(_) | Double(_), Float(_) | Double(_)) => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x == y || (x.is_nan() && y.is_nan())
        }
        (LongDouble(x), LongDouble(y)) | (Float128(x), Float128(y)) => x == y,
        (Bytes(x), Bytes(y)) | (Utf8(x), Utf8(y)) => x == y,
        _ => false,
    }
}

/// The boolean a scalar stands for when it is how Perl writes a boolean
/// before protocol 5: `1` for true, the empty byte string for false.
fn perl_bool_form(v: &Value) -> Option<bool> {
    match v {
        Value::Int(1) | Value::UInt(1) => Some(true),
        Value::Bytes(s) if s.is_empty() => Some(false),
        _ => None,
    }
}

impl PartialEq for Value {
    /// Graph equality: see [`Value`]'s documentation of sharing. Two values
    /// are equal when their graphs have the same shape, scalars and sharing.
    fn eq(&self, other: &Value) -> bool {
        GraphEq::default().values(self, other)
    }
}

impl Value {
    /// Perl's view of equality: `==`, and also scalars Perl cannot tell
    /// apart. The two undefs are equal, and equal a weak reference whose
    /// node is gone (which is written as undef); a boolean equals Perl's
    /// immortal of the same truth and the scalar Perl writes for it before
    /// protocol 5 (true and `1`, false and the empty byte string); an alias
    /// equals the value of its cell. It is an equivalence too, and it is
    /// what a document's round trip through Perl keeps.
    ///
    /// ```
    /// use sereal::Value;
    /// assert_ne!(Value::Bool(true), Value::Int(1));
    /// assert!(Value::Bool(true).perl_eq(&Value::Int(1)));
    /// assert!(Value::Undef.perl_eq(&Value::CanonicalUndef));
    /// assert!(!Value::Bool(false).perl_eq(&Value::Int(0)));
    /// // Both compare integers and floats by value, whatever their width.
    /// assert_eq!(Value::Int(5), Value::UInt(5));
    /// assert_eq!(Value::Float(0.5), Value::Double(0.5));
    /// ```
    pub fn perl_eq(&self, other: &Value) -> bool {
        GraphEq {
            perl: true,
            ..GraphEq::default()
        }
        .values(self, other)
    }
}

impl PartialEq for Ref {
    /// Graph equality of the two nodes' graphs (not pointer equality; see
    /// [`Ref::ptr_eq`]).
    fn eq(&self, other: &Ref) -> bool {
        GraphEq::default().values(&Value::Ref(self.clone()), &Value::Ref(other.clone()))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Ref, Value};

    #[test]
    fn sharing_must_match() {
        let s = Ref::array(vec![Value::from(1)]);
        let shared = Value::array([Value::from(&s), Value::from(&s)]);
        let unshared = Value::array([Value::array([1]), Value::array([1])]);
        assert_ne!(shared, unshared);
        assert_ne!(unshared, shared);
        let s2 = Ref::array(vec![Value::from(1)]);
        assert_eq!(shared, Value::array([Value::from(&s2), Value::from(&s2)]));
    }

    #[test]
    fn cycles_compare() {
        let a = Ref::array(vec![]);
        a.array_mut().unwrap().push(Value::from(&a));
        let b = Ref::array(vec![]);
        b.array_mut().unwrap().push(Value::from(&b));
        assert_eq!(Value::from(&a), Value::from(&b));
        // a two-node cycle is not a one-node cycle
        let c = Ref::array(vec![]);
        let d = Ref::array(vec![Value::from(&c)]);
        c.array_mut().unwrap().push(Value::from(&d));
        assert_ne!(Value::from(&a), Value::from(&c));
        a.array_mut().unwrap().clear();
        b.array_mut().unwrap().clear();
        c.array_mut().unwrap().clear();
    }

    #[test]
    fn hashes_compare_as_maps_and_scalars_by_meaning() {
        let x = Value::hash([("a", 1), ("b", 2)]);
        let y = Value::hash([("b", 2), ("a", 1)]);
        assert_eq!(x, y);
        assert_eq!(Value::Int(5), Value::UInt(5));
        assert_eq!(Value::Float(0.5), Value::Double(0.5));
        assert_ne!(Value::Undef, Value::CanonicalUndef);
        assert!(Value::Undef.perl_eq(&Value::CanonicalUndef));
        assert_ne!(Value::Bool(true), Value::True);
        assert!(Value::Bool(true).perl_eq(&Value::True));
        assert_ne!(Value::bytes("a"), Value::utf8("a"));
        assert!(!Value::bytes("a").perl_eq(&Value::utf8("a")));
        assert_ne!(Value::Int(1), Value::bytes("1"));
        assert_ne!(Value::True, Value::Int(1));
        assert!(Value::True.perl_eq(&Value::Int(1)));
        assert!(Value::Bool(false).perl_eq(&Value::bytes("")));
        assert!(!Value::Bool(false).perl_eq(&Value::Int(0)));
        assert!(!Value::Bool(true).perl_eq(&Value::bytes("1")));
        let cell = Ref::scalar(1);
        assert_ne!(Value::Alias(cell.clone()), Value::Int(1));
        assert!(Value::Alias(cell).perl_eq(&Value::Int(1)));
    }

    /// Both equalities are equivalences: symmetric and transitive over
    /// every pair and triple of a set of scalars that covers each rule; and
    /// `==` implies `perl_eq`.
    #[test]
    fn scalar_equality_is_symmetric_and_transitive() {
        use Value::*;
        let gone = crate::Ref::hash(Default::default());
        let dead = Value::weak(&gone);
        drop(gone);
        let cell = crate::Ref::scalar(1);
        let values = [
            Undef,
            CanonicalUndef,
            dead,
            Bool(true),
            Bool(false),
            True,
            False,
            Int(1),
            UInt(1),
            Int(0),
            UInt(0),
            Int(-1),
            UInt(u64::MAX),
            Float(1.0),
            Double(1.0),
            Double(f64::NAN),
            Float(f32::NAN),
            Value::bytes(""),
            Value::utf8(""),
            Value::bytes("1"),
            Value::utf8("1"),
            Alias(cell),
        ];
        type Eq = fn(&Value, &Value) -> bool;
        let eqs: [(&str, Eq); 2] = [("==", |a, b| a == b), ("perl_eq", Value::perl_eq)];
        for (name, eq) in eqs {
            for a in &values {
                assert!(eq(a, a), "{name} reflexivity: {a:?}");
                for b in &values {
                    assert_eq!(eq(a, b), eq(b, a), "{name} symmetry: {a:?} {b:?}");
                    for c in &values {
                        if eq(a, b) && eq(b, c) {
                            assert!(eq(a, c), "{name} transitivity: {a:?} = {b:?} = {c:?}");
                        }
                    }
                }
            }
        }
        for a in &values {
            for b in &values {
                assert!(a != b || a.perl_eq(b), "== without perl_eq: {a:?} {b:?}");
            }
        }
        // the classes the rules make
        assert!(Bool(true).perl_eq(&UInt(1)));
        assert!(True.perl_eq(&UInt(1)));
        assert!(False.perl_eq(&Value::bytes("")));
        assert!(!Int(0).perl_eq(&Value::bytes("")));
        assert_ne!(Bool(true), UInt(1));
        assert_eq!(Int(1), UInt(1));
        assert_eq!(Double(f64::NAN), Float(f32::NAN));
    }
}
