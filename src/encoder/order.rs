//! The orders `sort_keys` and `key_order` write a hash's entries in.

use super::KeyOrder;
use crate::value::{Key, Value};

/// The order to write `entries` in: Perl's `cmp` order (`key_order`), or
/// `sort_keys`'s (by length, UTF-8 keys first, then bytes), or as they are
/// (`None`).
#[inline]
pub(super) fn entry_order(
    entries: &[(Key, Value)],
    key_order: Option<KeyOrder>,
    sort_keys: bool,
) -> Option<Vec<usize>> {
    let n = entries.len();
    match key_order {
        Some(o) => Some(sorted(n, |a, b| {
            let c = perl_cmp(&entries[a].0, &entries[b].0);
            match o {
                KeyOrder::Cmp => c,
                KeyOrder::ReverseCmp => c.reverse(),
            }
        })),
        None if sort_keys && n > 1 => Some(sorted(n, |a, b| {
            let (a, b) = (&entries[a].0, &entries[b].0);
            (a.as_bytes().len(), !a.is_utf8(), a.as_bytes()).cmp(&(
                b.as_bytes().len(),
                !b.is_utf8(),
                b.as_bytes(),
            ))
        })),
        None => None,
    }
}

/// The indices `0..n` sorted by `cmp`.
fn sorted(n: usize, cmp: impl Fn(usize, usize) -> std::cmp::Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| cmp(a, b));
    order
}

/// Perl's `cmp` of two hash keys: by code point, a byte string's bytes
/// being Latin-1 (Perl upgrades it to compare with a UTF-8 string); equal
/// text with different flags puts the byte string first.
fn perl_cmp(a: &Key, b: &Key) -> std::cmp::Ordering {
    if a.is_utf8() == b.is_utf8() {
        return a.as_bytes().cmp(b.as_bytes());
    }
    a.text().cmp(&b.text()).then(a.is_utf8().cmp(&b.is_utf8()))
}
