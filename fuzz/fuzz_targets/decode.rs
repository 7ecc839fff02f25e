//! Decode arbitrary bytes: header, body, stream and header-only paths must
//! return Ok or Err, never panic, hang or exhaust memory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sereal::{Decoder, DecoderOptions};

fuzz_target!(|data: &[u8]| {
    let dec = Decoder::new(DecoderOptions::new().max_uncompressed_size(16 << 20));
    // Decoded graphs may hold strong cycles: dismantle them so runs do not
    // accumulate memory.
    if let Ok((header, body)) = dec.decode_with_header(data) {
        body.dismantle();
        header.inspect(|h| h.dismantle());
    }
    if let Ok(Some(header)) = dec.decode_header(data) {
        header.dismantle();
    }
    for value in dec.documents(data).take(16).flatten() {
        value.dismantle();
    }
    let _ = sereal::looks_like_sereal(data);
});
