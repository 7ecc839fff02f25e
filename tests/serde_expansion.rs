//! A document whose references re-read their targets: the serde path reads
//! a `REFP` target again (no tree type shares), so `k` nested arrays each
//! naming the previous one twice stand for 2^k values. The value decoder
//! shares them; serde must refuse a document that expands past its tag
//! budget, and read one that expands modestly.

use serde::de::IgnoredAny;
use sereal::ErrorKind;

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
    const ARRAY: u8 = 0x2b;
    const ARRAYREF_2: u8 = 0x42;
    const REFP: u8 = 0x29;
    const TRACK: u8 = 0x80;
    let mut body = vec![ARRAY];
    varint(k as u64 + 1, &mut body);
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
