//! Decode arbitrary bytes: header, body, documents, push-stream and
//! header-only paths must return Ok or Err, never panic, hang or exhaust
//! memory; the push stream must agree with `documents`, and decoding from
//! a shared buffer with decoding from a slice.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sereal::{Decoder, DecoderOptions};

fuzz_target!(|data: &[u8]| {
    let dec = Decoder::new(DecoderOptions::new().max_uncompressed_size(16 << 20));
    // Decoded graphs may hold strong cycles: dismantle them so runs do not
    // accumulate memory.
    // From a shared buffer (long strings kept as slices of it): the same
    // graph, or the same error at the same offset.
    let plain = dec.decode(data);
    let shared = dec.decode_bytes(&bytes::Bytes::copy_from_slice(data));
    match (&plain, &shared) {
        (Ok(a), Ok(b)) => assert!(a == b, "decode_bytes differs: {a:?} vs {b:?}"),
        (Err(a), Err(b)) => assert_eq!((a.kind(), a.offset()), (b.kind(), b.offset())),
        _ => panic!("decode and decode_bytes disagree: {plain:?} vs {shared:?}"),
    }
    drop((plain, shared));
    if let Ok((header, body)) = dec.decode_with_header(data) {
        body.dismantle();
        header.inspect(|h| h.dismantle());
    }
    if let Ok(Some(header)) = dec.decode_header(data) {
        header.dismantle();
    }
    let want: Vec<_> = dec.documents(data).take(16).collect();
    // The stream decoders, fed in pieces of a size the input chooses, give
    // the same values, and an error at the same document.
    let piece = 1 + usize::from(data.first().map_or(0, |b| b % 16));
    let mut inc = dec.incremental();
    let mut got = Vec::new();
    for p in data.chunks(piece) {
        inc.feed(p);
        while let Some(doc) = inc.next_document() {
            got.push(doc);
        }
    }
    inc.finish();
    while let Some(doc) = inc.next_document() {
        got.push(doc);
    }
    got.truncate(16);
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        match (g, w) {
            (Ok(g), Ok(w)) => assert!(g == w),
            (Err(_), Err(_)) => {}
            _ => panic!("stream and documents() disagree: {g:?} vs {w:?}"),
        }
    }
    for value in want.into_iter().chain(got).flatten() {
        value.dismantle();
    }
    let _ = sereal::looks_like_sereal(data);
});
