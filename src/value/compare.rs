//! Comparisons of values with Rust scalars (`v == 1`, `v == "ann"`), and
//! strict conversions out of values (`i64::try_from(v)`), as serde_json's.
//!
//! Both read through an alias to the value of its scalar cell, as the
//! `as_*` accessors do. Neither converts between kinds: a string is not a
//! number here, and a number is not a string.

use super::{Body, Borrowed, BorrowedMut, Value};
use crate::error::{Error, ErrorKind};

/// `read` of the value, or of the scalar cell it is an alias of.
fn scalar<T>(v: &Value, read: impl FnOnce(&Value) -> T) -> T {
    if let Value::Alias(r) = v {
        if let Ok(body) = r.try_body() {
            if let Body::Scalar(x) = &*body {
                return read(x);
            }
        }
    }
    read(v)
}

/// Whether the value is a string of the characters of `s` (a byte string's
/// bytes are its characters, as in Perl).
fn is_text(v: &Value, s: &str) -> bool {
    scalar(v, |v| match v {
        Value::Utf8(b) => b.as_bytes() == s.as_bytes(),
        Value::Bytes(b) => b.as_bytes().iter().map(|&c| char::from(c)).eq(s.chars()),
        _ => false,
    })
}

macro_rules! eq_both_ways {
    ($($t:ty => |$v:ident, $o:ident| $eq:expr;)*) => {$(
        impl PartialEq<$t> for Value {
            fn eq(&self, other: &$t) -> bool {
                let ($v, $o) = (self, other);
                $eq
            }
        }
        impl PartialEq<Value> for $t {
            fn eq(&self, other: &Value) -> bool {
                other == self
            }
        }
        impl PartialEq<Borrowed<'_, Value>> for $t {
            fn eq(&self, other: &Borrowed<'_, Value>) -> bool {
                **other == *self
            }
        }
        impl PartialEq<BorrowedMut<'_, Value>> for $t {
            fn eq(&self, other: &BorrowedMut<'_, Value>) -> bool {
                **other == *self
            }
        }
    )*};
}

eq_both_ways! {
    i64 => |v, o| v.as_i64() == Some(*o);
    i32 => |v, o| v.as_i64() == Some(i64::from(*o));
    u64 => |v, o| v.as_u64() == Some(*o);
    u32 => |v, o| v.as_u64() == Some(u64::from(*o));
    f64 => |v, o| v.as_f64() == Some(*o);
    bool => |v, o| v.as_bool() == Some(*o);
    str => |v, o| is_text(v, o);
    &str => |v, o| is_text(v, o);
    String => |v, o| is_text(v, o);
}

/// `&Value == 1`, as a `Hash`'s `get` gives (`&Value == "text"` is std's
/// comparison of references, through `Value: PartialEq<str>`).
macro_rules! eq_through_references {
    ($($t:ty),*) => {$(
        impl PartialEq<$t> for &Value {
            fn eq(&self, other: &$t) -> bool {
                **self == *other
            }
        }
        impl PartialEq<$t> for &mut Value {
            fn eq(&self, other: &$t) -> bool {
                **self == *other
            }
        }
    )*};
}
eq_through_references!(i64, i32, u64, u32, f64, bool, String);

fn wrong(expected: &'static str) -> Error {
    Error::new(ErrorKind::WrongBody(expected))
}

macro_rules! try_from_value {
    ($($t:ty => |$v:ident| $conv:expr;)*) => {$(
        /// Strict: only the matching kind of scalar (or an alias of a cell
        /// holding one) converts; the error's kind is
        /// [`ErrorKind::WrongBody`].
        impl TryFrom<&Value> for $t {
            type Error = Error;
            fn try_from($v: &Value) -> Result<$t, Error> {
                scalar($v, |$v| $conv)
            }
        }
        /// As the conversion from `&Value`.
        impl TryFrom<Value> for $t {
            type Error = Error;
            fn try_from(v: Value) -> Result<$t, Error> {
                <$t>::try_from(&v)
            }
        }
    )*};
}

try_from_value! {
    i64 => |v| v.as_i64().ok_or_else(|| wrong("an integer in i64's range"));
    u64 => |v| v.as_u64().ok_or_else(|| wrong("an integer in u64's range"));
    f64 => |v| v.as_f64().ok_or_else(|| wrong("a number"));
    bool => |v| v.as_bool().ok_or_else(|| wrong("a boolean"));
    // A byte string's bytes are its characters (Latin-1), as in Perl.
    String => |v| match v {
        Value::Utf8(s) => std::str::from_utf8(s.as_bytes())
            .map(str::to_owned)
            .map_err(|_| Error::new(ErrorKind::InvalidUtf8)),
        Value::Bytes(s) => Ok(s.as_bytes().iter().map(|&c| char::from(c)).collect()),
        _ => Err(wrong("a string")),
    };
    // The bytes the string holds (a UTF-8 string's are its UTF-8 encoding).
    Vec<u8> => |v| v.as_bytes().map(<[u8]>::to_vec).ok_or_else(|| wrong("a string"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ref;

    #[test]
    fn aliases_compare_and_convert_as_their_cells() {
        let cell = Value::Alias(Ref::scalar("é"));
        assert!(cell == "é");
        assert!("é" == cell);
        assert_eq!(String::try_from(&cell).unwrap(), "é");
        let latin1 = Value::bytes([0xE9]);
        assert!(latin1 == "é");
        assert_eq!(String::try_from(latin1).unwrap(), "é");
    }
}
