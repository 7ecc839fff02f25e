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
    let mut inner = v.root().clone();
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

/// Runs `f` on a thread with a `kib` KiB stack.
fn on_small_stack(kib: usize, f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(kib * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// `n` nested `ARRAYREF_1`s, `HASHREF_1 "k"`s or `REFN`s around `1`.
fn nested(n: usize, level: &[u8]) -> Vec<u8> {
    let mut doc = b"=\xF3rl\x05\x00".to_vec();
    for _ in 0..n {
        doc.extend_from_slice(level);
    }
    doc.push(0x01);
    doc
}

/// Nesting just under the default limit decodes, and nesting far past it is
/// refused, on a 256 KiB thread in any build profile (a debug build's frames
/// are several times a release build's).
#[test]
fn deep_documents_on_small_stacks() {
    on_small_stack(256, || {
        for level in [&b"\x41"[..], b"\x51\x61k", b"\x28"] {
            let doc = nested(9_990, level);
            let v = decode(&doc).unwrap();
            // the graph's own walks are deep too
            assert_eq!(v, decode(&doc).unwrap());
            assert!(format!("{v:?}").len() > 9_990);
            let again = encode(&v).unwrap();
            assert_eq!(decode(&again).unwrap(), v);
            let refused = nested(1_000_000, level);
            assert_eq!(
                decode(&refused).unwrap_err().kind(),
                &ErrorKind::DepthExceeded(10_000)
            );
        }
    });
}

/// The encoder's depth limit, on a small stack.
#[test]
fn deep_graphs_encode_on_small_stacks() {
    on_small_stack(256, || {
        let mut v = Value::from(1);
        for _ in 0..9_990 {
            v = Value::array([v]);
        }
        let bytes = encode(&v).unwrap();
        assert_eq!(bytes, nested(9_990, b"\x41"));
        let mut w = v.clone();
        for _ in 0..20 {
            w = Value::array([w]);
        }
        assert_eq!(
            encode(&w).unwrap_err().kind(),
            &ErrorKind::DepthExceeded(10_000)
        );
    });
}

/// Runs `f` after using about `kib` KiB of the current stack.
fn with_stack_used(kib: usize, f: &dyn Fn()) {
    let pad = [0u8; 16 * 1024];
    std::hint::black_box(&pad);
    if kib > 16 {
        with_stack_used(kib - 16, f);
    } else {
        f();
    }
    std::hint::black_box(&pad);
}

/// The codecs find their stack floor at the first nesting level: called
/// with most of a 512 KiB thread's stack already used (less left than the
/// room each walk keeps free), every walk still moves to a segment of its
/// own instead of overflowing, through the decoder, serde and the encoder.
#[test]
fn deep_walks_started_near_the_end_of_the_stack() {
    on_small_stack(512, || {
        with_stack_used(448, &|| {
            for level in [&b"\x41"[..], b"\x51\x61k", b"\x28"] {
                let doc = nested(9_990, level);
                let v = decode(&doc).unwrap();
                assert!(*decode(&encode(&v).unwrap()).unwrap() == *v);
                let perl_depth = sereal::DecoderOptions::new().max_recursion_depth(10_000);
                let via_serde = sereal::from_slice_with::<Value>(&doc, perl_depth);
                assert!(via_serde.is_ok(), "{:?}", via_serde.err());
                assert_eq!(
                    decode(&nested(1_000_000, level)).unwrap_err().kind(),
                    &ErrorKind::DepthExceeded(10_000)
                );
            }
        });
    });
}
