//! Perl's scalars into typed targets: the conversions both serde
//! deserializers make (unless `strict_types`) when a tag is not what the
//! target wants: a number from a string, a string from a number, a `bool`
//! from any number. Reached only after the typed path misses, out of line.
//! The rules themselves are [`crate::value::perl`]'s.

use super::Want;
use crate::error::{Error, ErrorKind, Result};
use crate::value::perl::{self, Number};
use serde::de::Visitor;

/// Whether `want` may take a string as a number (`Want::Int`,
/// `Want::Float`).
#[inline(always)]
pub(super) fn numeric(want: Want) -> bool {
    matches!(want, Want::Int | Want::Float)
}

/// Whether `want` may take a number as something else (`Want::Str`: its
/// text; `Want::Bool`: its truth).
#[inline(always)]
pub(super) fn from_numbers(want: Want) -> bool {
    matches!(want, Want::Str | Want::Bool)
}

/// The string `b` where an integer (`Want::Int`) or a float
/// (`Want::Float`) is wanted: the number Perl reads from it, or an error
/// that says why there is none (the byte deserializer places it).
#[cold]
#[inline(never)]
pub(super) fn string<'de, V: Visitor<'de>>(visitor: V, b: &[u8], want: Want) -> Result<V::Value> {
    let n = match want {
        Want::Int => perl::integer(b),
        _ => perl::number(b).ok_or(perl::NotInteger::NotANumber),
    };
    match n {
        Ok(Number::U(u)) => visitor.visit_u64(u),
        Ok(Number::I(i)) => visitor.visit_i64(i),
        Ok(Number::F(f)) => visitor.visit_f64(f),
        Err(why) => Err(Error::new(ErrorKind::Message(perl::not_a_number_message(
            b, why,
        )))),
    }
}

/// The number `n` where a string (`Want::Str`: Perl's text of it) or a
/// `bool` (`Want::Bool`: Perl's truth, not zero) is wanted.
#[cold]
#[inline(never)]
pub(super) fn number<'de, V: Visitor<'de>>(visitor: V, n: Number, want: Want) -> Result<V::Value> {
    match want {
        Want::Bool => visitor.visit_bool(perl::number_truth(n)),
        _ => visitor.visit_string(perl::number_string(n)),
    }
}
