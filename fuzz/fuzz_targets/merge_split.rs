//! Two documents cut from the input: merged (as the option byte says: an
//! array of them or their arrays joined, strings written once or not,
//! compressed or not) and each split into chunks of a size from the option
//! byte. Never a panic; when the inputs decode, the merged document
//! decodes to the array of them, and the chunks of each decode, alone, to
//! its elements in order (weak references aside, which a chunk may
//! strengthen); chunks of a document the decoder refuses may be refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sereal::view::{merge, MergeOptions, Splitter};
use sereal::{Compression, Decoder, DecoderOptions, Value};

fuzz_target!(|data: &[u8]| {
    let [o, cut, rest @ ..] = data else {
        return;
    };
    let cut = usize::from(*cut) * rest.len() / 256;
    let inputs = [&rest[..cut], &rest[cut..]];
    let dec = Decoder::new(
        DecoderOptions::new()
            .max_uncompressed_size(16 << 20)
            .max_memory(64 << 20),
    );
    let compress = [Compression::None, Compression::Snappy, Compression::Zstd][usize::from(o % 3)];
    let opts = MergeOptions::new()
        .flat(o & 4 != 0)
        .dedupe_strings(o & 8 != 0)
        .compress(compress)
        .compress_threshold(0)
        .decoder(dec.clone());
    let decoded: Vec<Option<sereal::Document>> = inputs.iter().map(|d| dec.decode(d).ok()).collect();
    let weak = inputs.iter().any(|d| d.iter().any(|&b| b & 0x7f == 0x30));
    match merge(&inputs, &opts) {
        Ok(merged) => {
            if decoded.iter().all(Option::is_some) {
                let back = dec.decode(&merged).expect("a merge of documents that decode decodes");
                let arr = back.as_array().expect("an array");
                if !opts.is_flat() {
                    assert_eq!(arr.len(), 2);
                    for (i, d) in decoded.iter().flatten().enumerate() {
                        assert!(arr.get(i).unwrap().perl_eq(d), "input {i} merged");
                    }
                }
                drop(arr);
                back.dismantle();
            }
        }
        Err(_) => {
            // a flat merge refuses inputs whose root is not an array, and
            // elements that refer to their array
            assert!(
                opts.is_flat() || decoded.iter().any(Option::is_none),
                "inputs that decode do not merge"
            );
        }
    }
    let chunk = [1usize, 16, 64, 4096][usize::from((o >> 4) % 4)];
    for (d, whole) in inputs.iter().zip(&decoded) {
        let Ok(view) = dec.view(d) else { continue };
        let Ok(splitter) = Splitter::new(view, chunk) else {
            continue;
        };
        let mut elements: Vec<Value> = Vec::new();
        let mut failed = false;
        for c in splitter.compress(compress).take(4096) {
            match c {
                Ok(c) => match dec.decode(&c) {
                    Ok(doc) => {
                        let a = doc.as_array().expect("a chunk is an array");
                        assert!(c.len() <= chunk || a.len() == 1, "a chunk over its size");
                        elements.extend(a.iter().cloned());
                    }
                    // a split walks the tags, it does not decode: a document
                    // the decoder refuses may give chunks it refuses
                    Err(e) => assert!(whole.is_none(), "a chunk does not decode: {e}"),
                },
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        if let (Some(whole), false, false) = (whole, failed, weak) {
            let a = whole.as_array().expect("split documents are arrays");
            if elements.len() < 4096 {
                assert_eq!(a.len(), elements.len(), "elements after split");
                for (x, y) in a.iter().zip(&elements) {
                    assert!(x.perl_eq(y), "an element after split");
                }
            }
        }
        for e in elements {
            e.dismantle();
        }
    }
    for d in decoded.into_iter().flatten() {
        d.dismantle();
    }
});
