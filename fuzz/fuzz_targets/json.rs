//! Lossless JSON, as `sereal from-json --lossless` reads it: arbitrary text
//! must give a document or an error, never a panic; a document the encoder
//! accepts (with the document's protocol and compression, as the CLI) must
//! give bytes that decode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sereal::json::Document;
use sereal::{Encoder, EncoderOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(j) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(doc) = Document::from_json(&j, true) else { return };
    let mut opts = EncoderOptions::new();
    opts.protocol_version = doc.protocol.unwrap_or(5);
    opts.compress = doc.compression.unwrap_or_default();
    opts.compress_threshold = 0;
    if let Ok(bytes) = Encoder::new(opts).and_then(|mut enc| doc.encode(&mut enc)) {
        let (header, body) = sereal::Decoder::default()
            .decode_with_header(&bytes)
            .expect("the encoder's output decodes");
        body.dismantle();
        header.inspect(|h| h.dismantle());
    }
    let _ = doc.to_json(true);
    // Lossless documents may hold strong cycles.
    doc.body.dismantle();
    doc.header.inspect(|h| h.dismantle());
    for node in &doc.keep_alive {
        sereal::Value::from(node).dismantle();
    }
});
