//! A path and a document: the path parses or is refused (and what parses
//! prints back to itself); the view of the document answers it, each
//! match read every way an `Item` reads, with errors and never a panic;
//! when the whole document decodes, the view's check passes, every match
//! decodes, and the root decodes to the document's graph.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sereal::view::Path;
use sereal::{Decoder, DecoderOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n % 48).min(rest.len());
    let (path, doc) = rest.split_at(n);
    let path = String::from_utf8_lossy(path);
    let Ok(path) = Path::parse(&path) else {
        return;
    };
    assert_eq!(Path::parse(&path.to_string()).ok().as_ref(), Some(&path));
    let dec = Decoder::new(
        DecoderOptions::new()
            .max_uncompressed_size(16 << 20)
            .max_memory(64 << 20),
    );
    let Ok(view) = dec.view(doc) else {
        return;
    };
    let whole = dec.decode(doc);
    let checked = view.check();
    if whole.is_ok() {
        assert!(checked.is_ok(), "the document decodes, the check fails: {checked:?}");
    }
    let found = view.select_path(&path);
    if whole.is_ok() {
        assert!(found.is_ok(), "the document decodes, the path fails: {found:?}");
    }
    for item in found.into_iter().flatten().take(16) {
        let _ = (item.kind(), item.as_str(), item.as_i64(), item.as_u64(), item.as_f64());
        let _ = (item.as_bool(), item.is_undef(), item.class(), item.raw(), item.len());
        if let Ok(Some(entries)) = item.entries() {
            for (k, v) in entries.iter().take(4) {
                let _ = (k.as_bytes(), v.kind());
            }
        }
        let decoded = item.decode();
        let alone = item.to_document();
        if whole.is_ok() {
            let v = decoded.expect("an item of a document that decodes decodes");
            let bytes = alone.expect("an item of a document that decodes is written alone");
            dec.decode(&bytes).expect("an item written alone decodes").dismantle();
            drop(v);
        }
    }
    if let Ok(whole) = whole {
        let root = view.root().decode().expect("the root decodes");
        assert!(root.perl_eq(&whole), "the root decodes to another graph");
        drop(root);
        whole.dismantle();
    }
});
