//! `decode_bytes`: long strings are slices of the input buffer (or of the
//! one decompressed body), and everything else is what `decode` gives: the
//! same graphs, the same re-encodings, the same errors at the same offsets.

mod common;

use bytes::Bytes;
use sereal::conformance::{frozen_handlers, read_cases};
use sereal::{Body, Compression, Decoder, Encoder, EncoderOptions, Str, Value};
use std::collections::HashSet;

/// Every string of the graph under `v` (each node once): its length and
/// whether it is shared.
fn strings(v: &Value, seen: &mut HashSet<usize>, out: &mut Vec<(usize, bool)>) {
    let node = match v {
        Value::Bytes(s) | Value::Utf8(s) => return out.push((s.len(), s.is_shared())),
        Value::Ref(r) | Value::Alias(r) => r.clone(),
        Value::Weak(w) => match w.upgrade() {
            Some(r) => r,
            None => return,
        },
        _ => return,
    };
    if !seen.insert(&*node.body() as *const Body as usize) {
        return;
    }
    let body = node.body();
    match &*body {
        Body::Scalar(v) => strings(v, seen, out),
        Body::Array(a) | Body::Frozen(a) => a.iter().for_each(|v| strings(v, seen, out)),
        Body::Hash(h) => h.iter().for_each(|(_, v)| strings(v, seen, out)),
        _ => {}
    }
}

fn all_strings(v: &Value) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    strings(v, &mut HashSet::new(), &mut out);
    out
}

fn decoder() -> Decoder {
    let mut enc = Encoder::new(EncoderOptions::new()).unwrap();
    let mut dec = Decoder::default();
    frozen_handlers(&mut enc, &mut dec);
    dec
}

/// What a decode gives, to compare: the graph as `Debug` shows it (sharing
/// marked), its re-encoding, or the error's kind and offset.
fn outcome(r: sereal::Result<sereal::Document>) -> Result<(String, Vec<u8>), String> {
    match r {
        Ok(doc) => {
            let bytes = sereal::encode(&doc).map_err(|e| format!("re-encoding: {e}"))?;
            Ok((format!("{:?}", *doc), bytes))
        }
        Err(e) => Err(format!("{:?} at {:?}", e.kind(), e.offset())),
    }
}

#[test]
fn corpus_documents_decode_the_same_from_a_shared_buffer() {
    let dec = decoder();
    let (mut docs, mut long, mut refused) = (0, 0, 0);
    for profile in common::PROFILES {
        for case in read_cases(&common::corpus(profile)).expect("corpus") {
            for d in [&case.srl, &case.canon].into_iter().flatten() {
                let shared = Bytes::copy_from_slice(d);
                let ours = dec.decode_bytes(&shared);
                if let Ok(doc) = &ours {
                    for (len, is_shared) in all_strings(doc) {
                        assert_eq!(is_shared, len > 22, "{profile} case {}", case.id);
                        long += usize::from(is_shared);
                    }
                }
                let (a, b) = (outcome(dec.decode(d)), outcome(ours));
                refused += usize::from(a.is_err());
                assert_eq!(a, b, "{profile} case {}", case.id);
                docs += 1;
            }
        }
    }
    eprintln!("{docs} documents ({refused} refused by both), {long} shared strings");
    assert_eq!(docs, 2 * 19712, "the srl and canon of every case");
    assert!(long > 1000, "{long} shared strings");
}

#[test]
fn long_strings_share_the_input_and_keep_it_alive() {
    let long = "a string of more than twenty-two bytes".repeat(3);
    let v = Value::array([
        Value::from(long.as_str()),
        Value::utf8("é".repeat(40)),
        Value::from("short"),
        Value::from("exactly twenty-two by."),
        Value::from("twenty-three bytes long"),
    ]);
    let input = Bytes::from(sereal::encode(&v).unwrap());
    let doc = sereal::decode_bytes(&input).unwrap();
    assert_eq!(*doc, v);
    assert_eq!(
        all_strings(&doc),
        [
            (long.len(), true),
            (80, true),
            (5, false),
            (22, false),
            (23, true)
        ]
    );
    assert!(!input.is_unique(), "the document's strings hold the buffer");
    // Each slice lies inside the input.
    let range = input.as_ptr() as usize..input.as_ptr() as usize + input.len();
    let first = doc.at(0).unwrap();
    let (Value::Bytes(s) | Value::Utf8(s)) = &first else {
        panic!("{first:?}")
    };
    assert!(range.contains(&(s.as_bytes().as_ptr() as usize)));
    // A string taken out outlives the document and the caller's handle on
    // the buffer; its copies share it too.
    let kept: Str = s.clone();
    let slice = kept.to_bytes();
    drop((first, doc));
    let weak_input = input.clone();
    drop(input);
    assert!(!weak_input.is_unique());
    assert_eq!(kept.as_bytes(), long.as_bytes());
    assert_eq!(slice, long.as_bytes());
    assert_eq!(kept.clone().into_vec(), long.as_bytes());
    drop((kept, slice));
    assert!(weak_input.is_unique(), "the last string let the buffer go");
}

#[test]
fn a_compressed_body_is_shared_once_decompressed() {
    for c in [Compression::Snappy, Compression::Zlib, Compression::Zstd] {
        let text = "compressible text ".repeat(30);
        let v = Value::hash([("t", Value::from(text.as_str())), ("n", Value::from(7))]);
        let opts = EncoderOptions::new().compress(c).compress_threshold(0);
        let doc = Encoder::new(opts).unwrap().encode(&v).unwrap();
        let input = Bytes::from(doc);
        let got = sereal::decode_bytes(&input).unwrap();
        assert_eq!(*got, v, "{c:?}");
        assert_eq!(all_strings(&got), [(text.len(), true)], "{c:?}");
        // Not the input's bytes: the decompressed body's.
        assert!(input.is_unique(), "{c:?}");
    }
}

#[test]
fn damaged_documents_fail_alike() {
    let dec = decoder();
    let v = Value::array([
        Value::from("x".repeat(100).as_str()),
        Value::hash([("key", Value::from("value of some length, long"))]),
        Value::from(-5),
    ]);
    let good = sereal::encode(&v).unwrap();
    let mut cases = 0;
    for cut in 0..good.len() {
        let d = &good[..cut];
        assert_eq!(
            outcome(dec.decode(d)),
            outcome(dec.decode_bytes(&Bytes::copy_from_slice(d))),
            "cut at {cut}"
        );
        cases += 1;
    }
    for at in 0..good.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut d = good.clone();
            d[at] ^= flip;
            assert_eq!(
                outcome(dec.decode(&d)),
                outcome(dec.decode_bytes(&Bytes::from(d.clone()))),
                "byte {at} ^ {flip:#x}"
            );
            cases += 1;
        }
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert_eq!(
        outcome(dec.decode_bytes(&Bytes::from(trailing))),
        Err(format!(
            "{:?} at {:?}",
            sereal::ErrorKind::TrailingData,
            Some(good.len())
        ))
    );
    assert!(cases > 300);
}

#[test]
fn shared_strings_cross_threads() {
    let text = "sent to another thread, with its buffer".repeat(2);
    let input = Bytes::from(sereal::encode(&Value::from(text.as_str())).unwrap());
    let doc = sereal::decode_bytes(&input).unwrap();
    let (Value::Bytes(s) | Value::Utf8(s)) = &*doc else {
        panic!()
    };
    let s = s.clone();
    drop(doc);
    let back = std::thread::spawn(move || {
        assert!(s.is_shared());
        s.to_bytes()
    })
    .join()
    .unwrap();
    assert_eq!(back, text.as_bytes());
    drop(input);
    assert!(back.is_unique());
}
