//! Deep documents through serde never overflow the stack, even on a small
//! thread stack and in a debug build: every nesting level of the
//! deserializer (and the visitor frames between them) goes through the
//! crate's stack guard.

use sereal::{from_slice, from_slice_with, DecoderOptions, ErrorKind, Value};

const SMALL_STACK: usize = 256 * 1024;

fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

fn doc(nesting: &[u8], depth: usize) -> Vec<u8> {
    let mut doc = b"=\xF3rl\x05\x00".to_vec();
    for _ in 0..depth {
        doc.extend_from_slice(nesting);
    }
    doc.push(0x01);
    doc
}

/// The depth of a nest of one-element JSON arrays, taken apart without
/// recursion (serde_json's own drop recurses).
fn json_depth(mut v: serde_json::Value) -> usize {
    let mut depth = 0;
    while let serde_json::Value::Array(mut items) = v {
        assert_eq!(items.len(), 1);
        v = items.pop().unwrap();
        depth += 1;
    }
    assert_eq!(v, serde_json::json!(1));
    depth
}

/// A recursive type that drops by recursion, as most do.
#[derive(serde::Deserialize, Debug)]
#[allow(dead_code)]
enum Tree {
    Leaf(i64),
    Node(Vec<Tree>),
}

/// `Tree`'s form of a nest of `depth` one-element arrays: `{Node => [...]}`.
fn tree_doc(depth: usize) -> Vec<u8> {
    let mut doc = b"=\xF3rl\x05\x00".to_vec();
    for _ in 0..depth {
        doc.extend_from_slice(b"\x51\x64Node\x41");
    }
    doc.extend_from_slice(b"\x51\x64Leaf\x01");
    doc
}

#[test]
fn a_million_refn_chain_is_a_depth_error_on_a_small_stack() {
    on_small_stack(|| {
        let doc = doc(&[0x28], 1_000_000);
        let e = from_slice::<serde_json::Value>(&doc).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(128), "{e}");
        assert!(e.offset().is_some());
        let e = from_slice::<Value>(&doc).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(128), "{e}");
        let e = from_slice::<serde::de::IgnoredAny>(&doc).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(128), "{e}");
        let e = from_slice::<Tree>(&tree_doc(1_000_000)).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(128), "{e}");
        // Raised, the limit is the one given.
        let raised = DecoderOptions::new().max_recursion_depth(20_000);
        let e = from_slice_with::<serde_json::Value>(&doc, raised).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(20_000), "{e}");
    });
}

/// Under the default serde depth (128, serde_json's), whatever is built
/// drops on a small stack, in any build profile: the deepest document
/// accepted, into `serde_json::Value` and into a recursive enum, builds
/// and drops; one level more, or 9,990 (which Perl's default accepts), is
/// an error.
#[test]
fn the_default_serde_depth_builds_only_what_drops_on_a_small_stack() {
    on_small_stack(|| {
        for depth in [127, 128] {
            let j: serde_json::Value = from_slice(&doc(&[0x41], depth)).unwrap();
            drop(j);
            let t: Tree = from_slice(&tree_doc(63)).unwrap();
            drop(t);
            let v: Value = from_slice(&doc(&[0x41], depth)).unwrap();
            drop(v);
        }
        for depth in [129, 9_990] {
            let doc = doc(&[0x41], depth);
            let e = from_slice::<serde_json::Value>(&doc).unwrap_err();
            assert_eq!(e.kind(), &ErrorKind::DepthExceeded(128), "{e}");
            assert_eq!(e.classify(), sereal::Category::Limit);
            let e = from_slice::<Value>(&doc).unwrap_err();
            assert_eq!(e.kind(), &ErrorKind::DepthExceeded(128), "{e}");
            let e = from_slice::<Tree>(&tree_doc(depth)).unwrap_err();
            assert_eq!(e.kind(), &ErrorKind::DepthExceeded(128), "{e}");
            // The graph decoder keeps Perl's 10,000: its graphs drop
            // without recursion.
            let g = sereal::decode(&doc).unwrap();
            drop(g);
        }
        // A Tree twice as deep as the limit.
        let e = from_slice::<Tree>(&tree_doc(256)).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(128), "{e}");
    });
}

#[test]
fn deep_arrays_within_a_raised_limit_read_on_a_small_stack() {
    on_small_stack(|| {
        let depth = 9_990;
        let raised = || DecoderOptions::new().max_recursion_depth(10_000);
        let doc = doc(&[0x41], depth);
        // serde_json's Value drops by recursion: taken apart by hand.
        let j: serde_json::Value = from_slice_with(&doc, raised()).unwrap();
        assert_eq!(json_depth(j), depth);
        let mut v: Value = from_slice_with(&doc, raised()).unwrap();
        for _ in 0..depth {
            v = v.at(0).unwrap();
        }
        assert_eq!(v, Value::from(1));
        // One-key hashes, the same depth.
        let doc = self::doc(b"\x51\x61k", depth);
        let v: Value = from_slice_with(&doc, raised()).unwrap();
        assert!(v.get("k").is_some());
        // Past the limit: an error.
        let doc = self::doc(&[0x41], 10_001);
        let e = from_slice_with::<serde_json::Value>(&doc, raised()).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(10_000), "{e}");
    });
}

/// A `Deserializer` made on one thread and used on another (here made on a
/// thread of its own, which ends, and used on the test's thread, whose
/// stack is elsewhere) still finds its stack's limit: a nest of 500,000
/// arrays with no depth limit reads through without overflowing.
#[test]
fn a_deserializer_used_on_another_thread_guards_that_threads_stack() {
    use serde::Deserialize;
    let depth = 500_000;
    let doc = doc(&[0x41], depth);
    let opts = sereal::DecoderOptions::new().max_recursion_depth(0);
    let mut de = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(SMALL_STACK)
            .spawn_scoped(s, || sereal::Deserializer::from_slice_with(&doc, opts))
            .unwrap()
            .join()
            .unwrap()
    });
    serde::de::IgnoredAny::deserialize(&mut de).unwrap();
    de.end().unwrap();
}

/// A decoded graph serializes through serde (to Sereal, to JSON, to a new
/// graph) on a small stack in any build: a nest just under the limit goes
/// through, and a cycle is an error, not an overflow.
#[test]
fn decoded_graphs_serialize_on_a_small_stack() {
    on_small_stack(|| {
        let depth = 9_990;
        let v = sereal::decode(&doc(&[0x41], depth)).unwrap();
        let json = serde_json::to_string(&*v).unwrap();
        assert_eq!(json, format!("{}1{}", "[".repeat(depth), "]".repeat(depth)));
        let bytes = sereal::to_vec(&*v).unwrap();
        let raised = DecoderOptions::new().max_recursion_depth(10_000);
        let back: Value = from_slice_with(&bytes, raised).unwrap();
        assert!(back == *v);
        let copy = sereal::to_value(&*v).unwrap();
        assert!(copy == *v);

        // A hash holding a reference to itself.
        let cyclic = sereal::decode(b"=srl\x01\x00\x28\xaa\x01\x64self\x29\x07").unwrap();
        let e = serde_json::to_string(&*cyclic).unwrap_err();
        assert!(e.to_string().contains("too deep (or cyclic)"), "{e}");
        // The Sereal and graph serializers' own depth limit is met first.
        let e = sereal::to_vec(&*cyclic).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(10_000), "{e}");
        let e = sereal::to_value(&*cyclic).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(10_000), "{e}");
    });
}
