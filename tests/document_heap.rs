//! Decoded documents free themselves, cycles included: the heap after many
//! decode-and-drop rounds is where it started (dhat).

use sereal::{decode, Decoder, DecoderOptions, Value};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Perl 5.003's encodings of cyclic graphs (tests/documents.rs has the Perl).
const CYCLIC: &[&str] = &[
    "3df3726c050028aa016473656c662902",
    "3df3726c050028ab012902",
    "3df3726c050028a902",
    "3df3726c050028aa02646e616d656170636b6964516275702902",
    "3df3726c0500412c634f626a28aa01626d652908",
    "3df3726c050028aa02646e616d656170636b696451627570302902",
    "3df3726c05004328ab0128ab0129032906282b03010203",
    "3df3726c05004428ea63656c6c2076616c7565290328af032911",
];

#[test]
fn decode_and_drop_leaves_the_heap_where_it_started() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let docs: Vec<Vec<u8>> = CYCLIC.iter().map(|h| hex(h)).collect();
    // A decoder's first use may set up state of its own: warm up first.
    for d in &docs {
        drop(decode(d).unwrap());
    }
    let before = dhat::HeapStats::get();
    let dec = Decoder::new(DecoderOptions::new());
    for _ in 0..100_000 / docs.len() {
        for d in &docs {
            let doc = dec.decode(d).unwrap();
            assert!(!doc.is_undef());
        }
    }
    // Failed decodes after a cycle was built free it too.
    for d in &docs {
        let mut trailing = d.clone();
        trailing.push(0x01);
        assert!(dec.decode(&trailing).is_err());
        let cut = &d[..d.len() - 1];
        assert!(dec.decode(cut).is_err());
    }
    let after = dhat::HeapStats::get();
    // One block per cyclic document would be 100,000; a few may belong to
    // the test harness's own thread, which allocates alongside.
    eprintln!(
        "after 100,000 decode-and-drop rounds: {} blocks, {} bytes more than before",
        after.curr_blocks as i64 - before.curr_blocks as i64,
        after.curr_bytes as i64 - before.curr_bytes as i64
    );
    assert!(
        after.curr_blocks <= before.curr_blocks + 16,
        "decoded documents leaked"
    );
    assert!(after.total_blocks > before.total_blocks + 100_000);

    // A handle kept past the document keeps its part whole.
    let before = dhat::HeapStats::get();
    let kept: Value = {
        let doc = dec.decode(&docs[3]).unwrap();
        doc.get("kid").unwrap()
    };
    let up = kept.get("up").unwrap();
    assert_eq!(up.get("name"), Some(Value::from("p")));
    drop(up);
    kept.dismantle();
    drop(kept);
    let after = dhat::HeapStats::get();
    assert!(after.curr_blocks <= before.curr_blocks + 16);
}
