//! Documents sent to another thread: whatever decodes (with or without the
//! integer-aliasing options) must pass `into_send` while nothing else holds
//! it, arrive whole, and re-encode there to the bytes it re-encodes to here;
//! a document with a node held from outside must be refused and given back
//! unchanged. The other thread drops the document (and frees its cycles)
//! while this one keeps using its interned keys.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sereal::{Decoder, DecoderOptions, Key};

fuzz_target!(|data: &[u8]| {
    let (alias, data) = match data.split_first() {
        Some((&b, rest)) => (b, rest),
        None => return,
    };
    let opts = DecoderOptions::new()
        .max_uncompressed_size(16 << 20)
        .alias_smallint(alias & 1 != 0)
        .alias_varint_under(u64::from(alias >> 1) * 8)
        .use_undef(alias & 0x80 != 0);
    let Ok(doc) = Decoder::new(opts).decode(data) else {
        return;
    };
    let Ok(here) = sereal::encode(&doc) else {
        return;
    };
    // a node held from outside: refused, and the document comes back whole
    let doc = match doc.node() {
        Some(held) => {
            let refused = doc.into_send().expect_err("a node is held outside");
            let doc = refused.into_document();
            drop(held);
            assert_eq!(sereal::encode(&doc).unwrap(), here, "refusal changed it");
            doc
        }
        None => doc,
    };
    let sent = doc.into_send().expect("nothing else holds a fresh document");
    let there = std::thread::spawn(move || {
        let doc = sent.into_document();
        let bytes = sereal::encode(&doc).expect("re-encodes on the other thread");
        drop(doc);
        bytes
    });
    for k in ["id", "name", "a", "b", "x"] {
        let _ = Key::from(k);
    }
    assert_eq!(there.join().unwrap(), here, "different bytes after the move");
});
