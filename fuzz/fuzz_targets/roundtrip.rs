//! Decode, re-encode, decode again: whatever decodes must re-encode, and the
//! second decoding must equal the first (identity-respecting graph equality),
//! except where cells of Perl's immortals are written as Perl writes them
//! (`immortal_cell`).
#![no_main]

#[path = "graph.rs"]
mod graph;

use libfuzzer_sys::fuzz_target;
use sereal::{Body, Decoder, DecoderOptions, Encoder, EncoderOptions, Value};

/// Whether the graph has a cell of one of Perl's immortals (`TRUE`,
/// `FALSE`, `CANONICAL_UNDEF`), whose graph may differ by design, as in
/// Perl's encoder: such a cell is written by its tag, never tracked, so its
/// sharing is lost; and a weak reference to one the graph holds only
/// weakly (the decoder keeps it alive: Perl never frees immortals) is
/// written strong (`PAD` for `WEAKEN`).
fn immortal_cell(root: &Value) -> bool {
    let mut found = false;
    graph::reach(root, true, |v| {
        found |= v.node().is_some_and(|r| {
            matches!(
                &*r.body(),
                Body::Scalar(Value::True | Value::False | Value::CanonicalUndef)
            )
        });
    });
    found
}

fuzz_target!(|data: &[u8]| {
    let dec = Decoder::new(DecoderOptions::new().max_uncompressed_size(16 << 20));
    let Ok(value) = dec.decode(data) else { return };
    let version = sereal::Header::parse(data)
        .map(|h| h.version)
        .unwrap_or(5)
        .max(1);
    for opts in [
        EncoderOptions::new(),
        EncoderOptions::new().protocol_version(version),
        EncoderOptions::new().canonical(true).dedupe_strings(true),
    ] {
        let bytes = Encoder::new(opts)
            .unwrap()
            .encode(&value)
            .expect("a decoded value re-encodes");
        let again = dec.decode(&bytes).expect("our own output decodes");
        assert!(
            again.perl_eq(&value) || immortal_cell(&value),
            "re-decoded graph differs"
        );
        again.dismantle();
    }
    // Decoded graphs may hold strong cycles: dismantle them so runs do not
    // accumulate memory.
    value.dismantle();
});
