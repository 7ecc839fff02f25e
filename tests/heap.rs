//! Heap behaviour of the encoder, measured with dhat: a callback-free tree
//! is encoded with no allocation per node (only the output buffer), and the
//! extra heap for a graph with sharing is bounded by the tracked nodes.

#[path = "../author_tools/cases.rs"]
#[allow(dead_code)]
mod cases;

use sereal::{Encoder, EncoderOptions, Value};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Allocations (blocks, bytes) made by one encode of `input` with a warm
/// encoder, and the output length.
fn encode_cost(input: &Value) -> (u64, u64, usize) {
    let mut enc = Encoder::new(EncoderOptions::new()).unwrap();
    // Warm up: the seen tables and the size hint reach their working size.
    drop(enc.encode(input).unwrap());
    let before = dhat::HeapStats::get();
    let out = enc.encode(input).unwrap();
    let after = dhat::HeapStats::get();
    let len = out.len();
    drop(out);
    (
        after.total_blocks - before.total_blocks,
        after.total_bytes - before.total_bytes,
        len,
    )
}

#[test]
fn encoder_heap_is_the_output_plus_tracked_nodes() {
    let _profiler = dhat::Profiler::builder().testing().build();

    // A callback-free tree: one allocation (the output buffer) whatever the size.
    for count in [1_000, 8_000] {
        let records = cases::build("records", count).unwrap();
        let (blocks, bytes, len) = encode_cost(&records);
        eprintln!("records {count}: {blocks} allocations, {bytes} bytes for {len} output bytes");
        assert_eq!(
            blocks, 1,
            "records {count}: allocations beyond the output buffer"
        );
        assert_eq!(
            bytes as usize, len,
            "records {count}: the buffer is sized from the last document"
        );
    }

    // Sharing: 100 shared groups are tracked; with the tables warm, the
    // extra heap must not grow with the number of records.
    let mut extra = Vec::new();
    for count in [1_000, 8_000] {
        let shared = cases::build("shared", count).unwrap();
        let (blocks, bytes, len) = encode_cost(&shared);
        eprintln!("shared {count}: {blocks} allocations, {bytes} bytes for {len} output bytes");
        extra.push(bytes as usize - len);
        assert_eq!(
            blocks, 1,
            "shared {count}: allocations beyond the output buffer"
        );
    }
    assert_eq!(extra[0], extra[1]);

    // A cold encoder's tables for `shared` are bounded by the tracked nodes
    // (100 groups and the record keys), not by the records.
    let shared = cases::build("shared", 8_000).unwrap();
    let before = dhat::HeapStats::get();
    let out = Encoder::new(EncoderOptions::new())
        .unwrap()
        .encode(&shared)
        .unwrap();
    let after = dhat::HeapStats::get();
    let table_bytes = (after.total_bytes - before.total_bytes) as usize;
    let output_growth = 2 * out.len().next_power_of_two();
    eprintln!(
        "shared, cold encoder: {table_bytes} bytes allocated, output {}",
        out.len()
    );
    assert!(
        table_bytes <= output_growth + 64 * 1024,
        "cold encode allocated {table_bytes} bytes, more than the output's growth plus 64 KiB of tables"
    );
}
