//! A document whose references re-read their targets: the serde path reads
//! a `REFP` target again (no tree type shares), so `k` nested arrays each
//! naming the previous one twice stand for 2^k values. The value decoder
//! shares them; serde must refuse a document that expands past its tag
//! budget, and read one that expands modestly.

use serde::de::IgnoredAny;
use sereal::stream::Incremental;
use sereal::{Deserializer, ErrorKind, Value};

fn varint(mut n: u64, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// `[a0, a1, ..., ak]` where `a0 = [1, 2]` and `a(i+1) = [ai, ai]` through
/// `REFP`s; returns the document.
fn doubling(k: usize) -> Vec<u8> {
    padded_doubling(k, 0)
}

/// As [`doubling`], with a string of `pad` bytes after `ak` when `pad` is
/// not 0: the document grows, and with it the budget of its reads, but
/// only after the references are read.
fn padded_doubling(k: usize, pad: usize) -> Vec<u8> {
    const ARRAY: u8 = 0x2b;
    const ARRAYREF_2: u8 = 0x42;
    const REFP: u8 = 0x29;
    const TRACK: u8 = 0x80;
    const BINARY: u8 = 0x26;
    let mut body = vec![ARRAY];
    varint(k as u64 + 1 + u64::from(pad > 0), &mut body);
    let mut prev = body.len() + 1; // offsets count from 1 at the body's start
    body.extend([ARRAYREF_2 | TRACK, 0x01, 0x02]);
    for _ in 0..k {
        let here = body.len() + 1;
        body.push(ARRAYREF_2 | TRACK);
        for _ in 0..2 {
            body.push(REFP);
            varint(prev as u64, &mut body);
        }
        prev = here;
    }
    if pad > 0 {
        body.push(BINARY);
        varint(pad as u64, &mut body);
        body.resize(body.len() + pad, b'.');
    }
    let mut doc = b"=\xF3rl\x05\x00".to_vec();
    doc.extend(body);
    doc
}

#[test]
fn a_document_that_expands_exponentially_is_refused() {
    let doc = doubling(48);
    // the graph itself is small: the value decoder shares what REFP names
    let v = sereal::decode(&doc).unwrap();
    assert!(v.at(48).is_some() && v.at(49).is_none());
    let err = sereal::from_slice::<IgnoredAny>(&doc).unwrap_err();
    match err.kind() {
        ErrorKind::LimitExceeded(m) => assert!(m.contains("expands too much"), "{m}"),
        k => panic!("expected the expansion limit, got {k:?}"),
    }
    assert!(err.offset().is_some());
    let err = sereal::from_slice::<serde_json::Value>(&doc).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::LimitExceeded(_)), "{err}");
}

#[test]
fn a_document_that_expands_modestly_reads_whole() {
    // 2^12 leaves: well inside the budget of a 100-byte document
    let doc = doubling(12);
    let v: Vec<serde_json::Value> = sereal::from_slice(&doc).unwrap();
    assert_eq!(v.len(), 13);
    fn leaves(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::Array(a) => a.iter().map(leaves).sum(),
            _ => 1,
        }
    }
    assert_eq!(leaves(&v[12]), 1 << 13);
    assert_eq!(v[0], serde_json::json!([1, 2]));
    assert_eq!(v[1], serde_json::json!([[1, 2], [1, 2]]));
}

/// Documents after the one that expands: a stream's read of it has no more
/// budget than the document's own bytes give (the bytes after it are
/// other documents), and refuses it with `from_slice`'s error.
#[test]
fn a_stream_gives_a_document_its_own_budget_only() {
    let doc = doubling(48);
    let alone = sereal::from_slice::<IgnoredAny>(&doc).unwrap_err();
    let filler: Vec<u8> = (0..100_000)
        .flat_map(|i| sereal::encode(&Value::from(format!("filler {i}"))).unwrap())
        .collect();
    let stream = [doc, filler].concat();
    let mut it = Deserializer::from_slice(&stream).into_iter::<IgnoredAny>();
    let e = it.next().unwrap().unwrap_err();
    assert_eq!((e.kind(), e.offset()), (alone.kind(), alone.offset()));
    assert!(it.next().is_none());
    let mut inc = Incremental::default();
    inc.feed(&stream);
    let e = inc.next_as::<IgnoredAny>().unwrap().unwrap_err();
    assert_eq!((e.kind(), e.offset()), (alone.kind(), alone.offset()));
}

/// A document whose references need the budget of bytes that come after
/// them reads in a stream as it reads alone.
#[test]
fn a_stream_reads_what_the_document_alone_reads() {
    assert!(sereal::from_slice::<IgnoredAny>(&doubling(16)).is_err());
    let doc = padded_doubling(16, 8192);
    let v: Vec<serde_json::Value> = sereal::from_slice(&doc).unwrap();
    assert_eq!(v.len(), 18);
    let stream = [
        doc.clone(),
        doc.clone(),
        sereal::encode(&Value::from(1)).unwrap(),
    ]
    .concat();
    let got: Vec<serde_json::Value> = Deserializer::from_slice(&stream)
        .into_iter::<serde_json::Value>()
        .collect::<sereal::Result<_>>()
        .unwrap();
    assert_eq!(
        got,
        [
            serde_json::json!(v),
            serde_json::json!(v),
            serde_json::json!(1)
        ]
    );
    let mut inc = Incremental::default();
    inc.feed(&stream);
    inc.finish();
    for want in &got {
        assert_eq!(&inc.next_as::<serde_json::Value>().unwrap().unwrap(), want);
    }
    assert!(inc.next_as::<IgnoredAny>().is_none());
}
