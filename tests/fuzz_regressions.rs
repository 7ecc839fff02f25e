//! Inputs the fuzz targets (fuzz/) found, kept as regression tests.

use sereal::{decode, encode, Decoder, ErrorKind};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// A self-referencing array followed by trailing bytes: the decode fails
/// after the cycle is built, and the cycle must not leak.
const CYCLE_THEN_TRAILING: &[u8] =
    b"=\xF3rl\x05\x00\x28\xab\x02\x3f\x28\x29\x02\x00\x00\x00\x0f\x01";

/// A weak reference whose target only it holds: decoded, the target is gone
/// (Perl's decoder frees it too), so it encodes as undef, and the re-decoded
/// graph must equal the first.
const WEAK_TO_NOTHING: &[u8] =
    b"=\xF3rl\x05\x00\x28\x28\x43\x28\x63\x30\x5d\x65\x30\x28\x63\x30\x65\x31\x28\x63\x31\x65\x33";

#[test]
fn fuzz_findings() {
    let _profiler = dhat::Profiler::builder().testing().build();

    // A thousand failed decodes: a leak would leave a thousand blocks or
    // more; a few may belong to the test harness's own thread.
    let before = dhat::HeapStats::get();
    for _ in 0..1000 {
        let err = decode(CYCLE_THEN_TRAILING).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::TrailingData);
    }
    let after = dhat::HeapStats::get();
    assert!(
        after.curr_blocks <= before.curr_blocks + 16,
        "failed decodes leaked their nodes: {} blocks more",
        after.curr_blocks - before.curr_blocks
    );

    let v = decode(WEAK_TO_NOTHING).unwrap();
    let again = Decoder::default().decode(&encode(&v).unwrap()).unwrap();
    // a dead weak reference is written as undef
    assert!(again.perl_eq(&v), "{again:?} != {v:?}");
    assert!(again != v);
    assert_eq!(format!("{v:?}"), r#"\\[\"0]e", weak(gone), \"1e3"]"#);
    assert_eq!(format!("{again:?}"), r#"\\[\"0]e", undef, \"1e3"]"#);
}

// The graph findings of the `encoder` and `roundtrip` targets are in
// tests/fuzz_graphs.rs: `fuzz_findings` counts the heap, which tests on
// other threads (and the harness reporting them) would change meanwhile.
