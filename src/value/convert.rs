//! Conversions from Rust values into [`Value`]s.

use super::{Hash, Ref, Str, Value};

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            #[inline]
            fn from(n: $t) -> Value { Value::Int(n as i64) }
        }
    )*};
}
from_int!(i8, i16, i32, i64, u8, u16, u32);

impl From<u64> for Value {
    #[inline]
    fn from(n: u64) -> Value {
        match i64::try_from(n) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::UInt(n),
        }
    }
}

impl From<usize> for Value {
    fn from(n: usize) -> Value {
        Value::from(n as u64)
    }
}

impl From<isize> for Value {
    fn from(n: isize) -> Value {
        Value::Int(n as i64)
    }
}

impl From<f32> for Value {
    fn from(f: f32) -> Value {
        Value::Float(f)
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Double(f)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

/// Text made only of ASCII becomes a byte string, as Perl stores it; other
/// text becomes a UTF-8 string. Use [`Value::utf8`] to flag ASCII text.
impl From<&str> for Value {
    #[inline]
    fn from(s: &str) -> Value {
        if s.is_ascii() {
            Value::Bytes(Str::new(s.as_bytes()))
        } else {
            Value::Utf8(Str::new(s.as_bytes()))
        }
    }
}

/// As for `&str`.
impl From<String> for Value {
    fn from(s: String) -> Value {
        if s.is_ascii() {
            Value::Bytes(Str::from(s))
        } else {
            Value::Utf8(Str::from(s))
        }
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::from(s.as_str())
    }
}

impl From<&[u8]> for Value {
    fn from(b: &[u8]) -> Value {
        Value::Bytes(Str::new(b))
    }
}

impl From<Ref> for Value {
    fn from(r: Ref) -> Value {
        Value::Ref(r)
    }
}

impl From<&Ref> for Value {
    fn from(r: &Ref) -> Value {
        Value::Ref(r.clone())
    }
}

impl From<Hash> for Value {
    fn from(h: Hash) -> Value {
        Value::Ref(Ref::hash(h))
    }
}

impl<V: Into<Value>> From<Vec<V>> for Value {
    fn from(items: Vec<V>) -> Value {
        Value::array(items)
    }
}

impl<V: Into<Value>> From<Option<V>> for Value {
    fn from(o: Option<V>) -> Value {
        o.map_or(Value::Undef, Into::into)
    }
}

impl<V: Into<Value>> FromIterator<V> for Value {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Value {
        Value::array(iter)
    }
}
