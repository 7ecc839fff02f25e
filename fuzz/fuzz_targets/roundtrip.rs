//! Decode, re-encode, decode again: whatever decodes must re-encode, and the
//! second decoding must equal the first (identity-respecting graph equality).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sereal::{Decoder, DecoderOptions, Encoder, EncoderOptions};

fuzz_target!(|data: &[u8]| {
    let dec = Decoder::new(DecoderOptions::new().max_uncompressed_size(16 << 20));
    let Ok(value) = dec.decode(data) else { return };
    let version = sereal::Header::parse(data).map(|h| h.version).unwrap_or(5).max(1);
    for opts in [
        EncoderOptions::new(),
        EncoderOptions::new().protocol_version(version),
        EncoderOptions::new().canonical(true).dedupe_strings(true),
    ] {
        let bytes = Encoder::new(opts).unwrap().encode(&value).expect("a decoded value re-encodes");
        let again = dec.decode(&bytes).expect("our own output decodes");
        assert!(again == value, "re-decoded graph differs");
        again.dismantle();
    }
    // Decoded graphs may hold strong cycles: dismantle them so runs do not
    // accumulate memory.
    value.dismantle();
});
