//! Fetching ahead what a walk over a long array of hashes will read: each
//! element's node, its hash's entries and the nodes they refer to, a few
//! elements before the walk gets there. Records laid out one after another are read through chains
//! of pointers (slot, node, entries) that the processor cannot follow ahead
//! on its own.

use super::{Body, Value};

/// How many elements ahead the entries are fetched; the nodes are fetched
/// twice as far ahead, so that a node is in cache when its entries'
/// address is read from it.
const DISTANCE: usize = 4;

/// Whether fetching ahead pays for `items`: a long array whose first
/// element is a reference to a hash. Elsewhere (scalars, small arrays)
/// the processor's own prefetching does as well without the instructions.
#[inline]
pub(crate) fn pays(items: &[Value]) -> bool {
    items.len() > 2 * DISTANCE
        && matches!(&items[0], Value::Ref(r)
            // SAFETY: the body is read here only, with no code run meanwhile.
            if matches!(unsafe { r.0.body_unguarded() }, Ok(Body::Hash(_))))
}

/// Fetches the node of `items[i + 2 * DISTANCE]`, the entries of
/// `items[i + DISTANCE]`'s hash, and the nodes the entries of `items[i +
/// DISTANCE / 2]` refer to (fetched by then).
#[inline(always)]
pub(crate) fn ahead(items: &[Value], i: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        if let Some(Value::Ref(r)) = items.get(i + 2 * DISTANCE) {
            let p = r.0.box_ptr().cast::<i8>();
            // SAFETY: SSE is part of x86_64; a prefetch reads nothing and
            // cannot fault, whatever the address.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(p);
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
            }
        }
        if let Some(Value::Ref(r)) = items.get(i + DISTANCE) {
            // SAFETY: the body is read here only, with no code run meanwhile.
            if let Ok(Body::Hash(h)) = unsafe { r.0.body_unguarded() } {
                let entries = h.entries();
                // Every line the entries touch, counted from the line of
                // their start: an allocation is aligned to 16 bytes, not 64,
                // so 256 bytes of entries usually span five lines.
                let p = entries.as_ptr().cast::<i8>();
                let skew = p.addr() % 64;
                let first = p.wrapping_sub(skew);
                let lines = (skew + std::mem::size_of_val(entries)).div_ceil(64).min(8);
                for k in 0..lines {
                    // SAFETY: as above.
                    unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(64 * k)) };
                }
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(Value::Ref(r)) = items.get(i + DISTANCE / 2) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: the body is read here only, with no code run meanwhile.
        if let Ok(Body::Hash(h)) = unsafe { r.0.body_unguarded() } {
            for (_, v) in h.entries() {
                if let Value::Ref(r) = v {
                    let p = r.0.box_ptr().cast::<i8>();
                    // SAFETY: as above.
                    unsafe {
                        _mm_prefetch::<_MM_HINT_T0>(p);
                        _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
                    }
                }
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Hash, Ref};

    fn records(n: usize) -> Vec<Value> {
        (0..n)
            .map(|i| Value::Ref(Ref::hash(Hash::from_iter([("id", Value::from(i))]))))
            .collect()
    }

    #[test]
    fn pays_for_long_arrays_of_hashes_only() {
        assert!(pays(&records(2 * DISTANCE + 1)));
        assert!(!pays(&records(2 * DISTANCE)));
        let arrays: Vec<Value> = (0..100).map(|i| Value::array([i])).collect();
        assert!(!pays(&arrays));
        let scalars: Vec<Value> = (0..100).map(Value::from).collect();
        assert!(!pays(&scalars));
    }

    #[test]
    fn fetching_ahead_reads_nothing_borrowed_for_writing() {
        let items = records(40);
        let Value::Ref(held) = &items[DISTANCE + 3] else {
            unreachable!()
        };
        let writing = held.body_mut().unwrap();
        for i in 0..items.len() {
            ahead(&items, i);
        }
        drop(writing);
        // and an encode of the same array fails cleanly while one is held
        let root = Value::array(items.clone());
        let guard = held.body_mut().unwrap();
        assert!(crate::encode(&root).is_err());
        drop(guard);
        assert!(crate::encode(&root).is_ok());
    }
}
