//! Lossless JSON that fails part-way frees the nodes built so far, cycles
//! included, and so does one that succeeds for the nodes its document does
//! not reach (dhat; found by the `json` fuzz target, fuzz/README.md
//! findings 6 and 7).

use sereal::json::Document;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Fails with `what` unless the heap holds what it held at `before`
/// (`what` is formatted only then: a message built first would be on the
/// heap).
fn assert_heap_is(before: &dhat::HeapStats, what: std::fmt::Arguments) {
    let after = dhat::HeapStats::get();
    assert_eq!(
        (after.curr_blocks, after.curr_bytes),
        (before.curr_blocks, before.curr_bytes),
        "{what}"
    );
}

/// dhat counts the whole process and allows one profiler at a time, so the
/// checks run in one test, in turn.
#[test]
fn lossless_json_frees_what_it_builds() {
    let _profiler = dhat::Profiler::builder().testing().build();
    failed_lossless_json_frees_its_nodes();
    lossless_json_frees_the_cycles_its_document_does_not_reach();
    lossless_json_documents_free_their_cycles();
    failed_decodes_free_the_cycles_they_closed();
}

fn failed_lossless_json_frees_its_nodes() {
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
        assert_heap_is(
            &before,
            format_args!("a failed from_json leaked its nodes: {json}"),
        );
    }
}

fn lossless_json_frees_the_cycles_its_document_does_not_reach() {
    // Node 2 holds itself and nothing reaches it; node 4 is unreachable and
    // acyclic; node 5 is reached only weakly (kept alive, as documented).
    let json: serde_json::Value = serde_json::from_str(
        r#"{"format":"sereal-lossless-1","protocol":5,"compression":"none","body":{"ref":0},
            "nodes":[{"array":[{"ref":1},{"ref":1},{"weak":5}]},{"scalar":{"ref":3}},
                     {"array":[{"ref":3},{"ref":2}]},{"scalar":{"sv":"undef"}},
                     {"scalar":{"sv":"undef"}},{"array":[]}]}"#,
    )
    .unwrap();
    drop(Document::from_json(&json, true));
    let before = dhat::HeapStats::get();
    let doc = Document::from_json(&json, true).expect("valid lossless JSON");
    assert_eq!(doc.keep_alive.len(), 1);
    let sereal::Value::Ref(root) = &*doc.body else {
        panic!("{:?}", doc.body)
    };
    let weak = root.as_array().unwrap()[2].clone();
    assert!(matches!(weak, sereal::Value::Weak(w) if w.upgrade().is_some()));
    drop(doc);
    assert_heap_is(
        &before,
        format_args!("from_json leaked the nodes its document does not reach"),
    );
}

fn lossless_json_documents_free_their_cycles() {
    // An array holding itself; a hash holding itself through an array, the
    // header referring into the body's cycle; a cycle only the header holds.
    let texts = [
        r#"{"format":"sereal-lossless-1","body":{"ref":0},"nodes":[{"array":[{"ref":0}]}]}"#,
        r#"{"format":"sereal-lossless-1","protocol":5,"header":{"ref":1},"body":{"ref":0},
            "nodes":[{"hash":[["list",{"ref":1}]]},{"array":[{"ref":0},7]}]}"#,
        r#"{"format":"sereal-lossless-1","protocol":5,"header":{"ref":0},"body":1,
            "nodes":[{"array":[{"ref":0}]}]}"#,
    ];
    for text in texts {
        let json: serde_json::Value = serde_json::from_str(text).unwrap();
        drop(Document::from_json(&json, true));
        let before = dhat::HeapStats::get();
        let doc = Document::from_json(&json, true).expect("valid lossless JSON");
        drop(doc);
        assert_heap_is(&before, format_args!("a cyclic document leaked: {text}"));
    }
    // A handle taken out keeps its part of the graph whole.
    let json: serde_json::Value = serde_json::from_str(texts[1]).unwrap();
    let doc = Document::from_json(&json, true).unwrap();
    let list = doc.body.get("list").unwrap();
    drop(doc);
    assert_eq!(list.at(1), Some(sereal::Value::from(7)));
    assert!(list.at(0).unwrap().get("list").is_some());
    list.dismantle();
}

fn failed_decodes_free_the_cycles_they_closed() {
    // ARRAYREF_2 [ a tracked REFN + ARRAY [ a REFP back to it ], then the
    // document ends: the cycle is closed before the error.
    let input = b"=\xF3rl\x05\x00\x42\xa8\x2b\x01\x29\x02";
    let dec = sereal::Decoder::default();
    drop(Document::decode(input, &dec));
    let before = dhat::HeapStats::get();
    drop(Document::decode(input, &dec).expect_err("the document is cut"));
    drop(Document::decode_prefix(input, &dec).expect_err("the document is cut"));
    // The same body as user header data, and as the body after a header.
    let header = b"=\xF3rl\x05\x08\x01\x42\xa8\x2b\x01\x29\x03\x01";
    drop(Document::decode(header, &dec).expect_err("the header is cut"));
    assert_heap_is(&before, format_args!("a failed decode leaked its cycle"));
}
