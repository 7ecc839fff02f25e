//! Freeing a graph takes memory in proportion to its depth, not its width:
//! a wide array or hash of references is emptied where it lies, and every
//! node it was the last owner of is freed (dhat).

mod chunk_heap;

use chunk_heap::{allocated_by, Start};
use sereal::{decode, encode, Ref, Value};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// An array of `n` one-element arrays.
fn wide_array(n: usize) -> Value {
    Value::array((0..n).map(|i| Value::array([i as i64])))
}

/// A hash of `n` keys, each holding a one-element array.
fn wide_hash(n: usize) -> Value {
    Value::hash((0..n).map(|i| (format!("k{i}"), Value::array([i as i64]))))
}

/// `outer` arrays of `inner` references to scalars, in one array.
fn grid(outer: usize, inner: usize) -> Value {
    Value::array((0..outer).map(|o| {
        Value::array(
            (0..inner).map(|i| Value::Ref(Ref::scalar(Value::from((o * inner + i) as i64)))),
        )
    }))
}

/// A chain of `depth` arrays, each the only element of the one before.
fn deep(depth: usize) -> Value {
    (0..depth).fold(Value::from(1), |v, _| Value::array([v]))
}

#[test]
fn freeing_a_graph_takes_memory_for_its_depth_not_its_width() {
    let _profiler = dhat::Profiler::builder().testing().build();
    // Keys made from strings are interned, and the interner keeps them:
    // made once here, before the start, they are only found again below.
    let array_bytes = encode(&wide_array(100_000)).unwrap();
    let hash_bytes = encode(&wide_hash(100_000)).unwrap();
    let start = Start::now();
    let wide: Vec<(&str, Value)> = vec![
        ("a wide array", wide_array(100_000)),
        ("a wide hash", wide_hash(100_000)),
        ("a grid of references", grid(300, 300)),
        (
            "a decoded wide array",
            decode(&array_bytes).unwrap().into_value(),
        ),
        (
            "a decoded wide hash",
            decode(&hash_bytes).unwrap().into_value(),
        ),
    ];
    for (what, v) in wide {
        // One element is held from outside: it must come through whole.
        let kept = v
            .at(7)
            .or_else(|| v.get("k7"))
            .and_then(|e| e.node())
            .unwrap();
        let before = format!("{kept:?}");
        let took = allocated_by(|| drop(v));
        // The walk's stack: a few entries, one for each level.
        assert!(took <= 1024, "freeing {what} allocated {took} bytes");
        assert_eq!(format!("{kept:?}"), before, "{what}");
        assert_eq!(kept.strong_count(), 1, "{what}");
        drop(kept);
    }
    start.near("the wide graphs", 0);

    // A chain is walked in constant memory: each container is done with
    // once its last element is taken.
    let v = deep(100_000);
    let took = allocated_by(|| drop(v));
    assert!(
        took <= 1024,
        "freeing a chain of 100,000 allocated {took} bytes"
    );
    start.near("the chain", 0);

    // Depth with elements left at every level costs an entry a level, and
    // the whole stack is freed.
    let v = (0..100_000).fold(Value::from(1), |v, i| Value::array([v, Value::from(i)]));
    let took = allocated_by(|| drop(v));
    assert!(
        (100_000..100_000 * 256).contains(&(took as usize)),
        "freeing 100,000 levels of two elements allocated {took} bytes"
    );
    start.near("the deep graph", 0);
}
