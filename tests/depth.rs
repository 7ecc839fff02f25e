//! Deep nesting is a clean error, never a stack overflow, in both directions.

use sereal::{decode, encode, Decoder, DecoderOptions, ErrorKind, Value};

#[test]
fn a_million_nested_arrays_is_a_depth_error() {
    let n = 1_000_000;
    let mut doc = b"=\xF3rl\x05\x00".to_vec();
    doc.extend(std::iter::repeat_n(0x41u8, n)); // ARRAYREF_1 ...
    doc.push(0x01);
    let err = decode(&doc).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::DepthExceeded(10_000));
    // The same nesting of REFN and of HASHREF_1.
    let mut refs = b"=\xF3rl\x05\x00".to_vec();
    refs.extend(std::iter::repeat_n(0x28u8, n));
    refs.push(0x01);
    assert_eq!(
        decode(&refs).unwrap_err().kind(),
        &ErrorKind::DepthExceeded(10_000)
    );
    let mut hashes = b"=\xF3rl\x05\x00".to_vec();
    for _ in 0..n {
        hashes.extend_from_slice(b"\x51\x61k");
    }
    hashes.push(0x01);
    assert_eq!(
        decode(&hashes).unwrap_err().kind(),
        &ErrorKind::DepthExceeded(10_000)
    );
}

#[test]
fn deep_documents_within_the_limit_decode() {
    let depth = 50_000;
    let mut doc = b"=\xF3rl\x05\x00".to_vec();
    doc.extend(std::iter::repeat_n(0x41u8, depth));
    doc.push(0x01);
    let dec = Decoder::new(DecoderOptions::new().max_recursion_depth(60_000));
    let v = dec.decode(&doc).unwrap();
    let mut inner = v;
    for _ in 0..depth {
        inner = inner.at(0).unwrap();
    }
    assert_eq!(inner, Value::from(1));
}

#[test]
fn the_encoder_refuses_graphs_deeper_than_the_limit() {
    let mut v = Value::from(1);
    for _ in 0..20_000 {
        v = Value::array([v]);
    }
    assert_eq!(
        encode(&v).unwrap_err().kind(),
        &ErrorKind::DepthExceeded(10_000)
    );
    // cycles are not depth
    let r = sereal::Ref::array(vec![]);
    r.array_mut().unwrap().push(Value::from(&r));
    assert!(encode(&Value::from(&r)).is_ok());
    r.array_mut().unwrap().clear();
}
