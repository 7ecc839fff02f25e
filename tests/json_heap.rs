//! Lossless JSON that fails part-way frees the nodes built so far, cycles
//! included (dhat; found by the `json` fuzz target, fuzz/README.md finding 6).

use sereal::json::Document;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[test]
fn failed_lossless_json_frees_its_nodes() {
    let _profiler = dhat::Profiler::builder().testing().build();
    // Node 0 is a cycle (weak and strong references to itself through node
    // 1 and 0); node 1 is malformed, so the error comes after node 0 is filled.
    let cyclic: serde_json::Value = serde_json::from_str(
        r#"{"format":"sereal-lossless-1","protocol":2,"body":{"ref":0},"nodes":[{"array":[{"weak":1},{"ref":0}]},{"arraay":[2]}]}"#,
    )
    .unwrap();
    // The same failing late, in the class of the last node.
    let bad_class: serde_json::Value = serde_json::from_str(
        r#"{"format":"sereal-lossless-1","body":{"ref":0},"nodes":[{"hash":[["me",{"ref":0}]]},{"scalar":{"ref":0},"class":7}]}"#,
    )
    .unwrap();
    for json in [&cyclic, &bad_class] {
        // Once first: the key interner keeps its table (and keys) alive.
        drop(Document::from_json(json, true));
        let before = dhat::HeapStats::get();
        let err = Document::from_json(json, true).expect_err("the JSON is malformed");
        drop(err);
        let after = dhat::HeapStats::get();
        assert_eq!(
            (after.curr_blocks, after.curr_bytes),
            (before.curr_blocks, before.curr_bytes),
            "a failed from_json leaked its nodes: {json}"
        );
    }
}
