//! Graphs the `encoder` and `roundtrip` fuzz targets found mis-encoded or
//! mis-decoded (inputs in fuzz/regressions/, described in fuzz/README.md).
//! Heap-counting regressions are in tests/fuzz_regressions.rs.

use sereal::{decode, encode, ErrorKind};

// Found by the `encoder` and `roundtrip` fuzz targets (inputs in
// fuzz/regressions/, described in fuzz/README.md).

/// Encodes `v`, which must encode, and decodes the bytes, which must decode.
fn roundtrip(enc: &mut sereal::Encoder, v: &sereal::Value) -> (Vec<u8>, sereal::Value) {
    let bytes = enc
        .encode(v)
        .unwrap_or_else(|e| panic!("{v:?} does not encode: {e}"));
    let back = decode(&bytes)
        .unwrap_or_else(|e| panic!("{bytes:x?} does not decode: {e}"))
        .into_value();
    (bytes[6..].to_vec(), back)
}

/// Finding 1: an alias of a blessed container (array, hash, regexp, frozen
/// object) was written without its class. It is written `OBJECT class`
/// before the unreferenced container, and decodes to the same graph, met
/// first as the alias or first through a reference.
#[test]
fn alias_of_blessed_container_keeps_class() {
    use sereal::{Array, Body, Encoder, Hash, Ref, Value};
    let mut enc = Encoder::new(Default::default()).unwrap();
    for obj in [
        Ref::array(vec![]).blessed("B"),
        Ref::hash(Hash::new()).blessed("H"),
        Ref::regexp("a.b", "i"),
        Ref::new(Body::Frozen(Array::new())).blessed("B::C"),
    ] {
        for v in [
            Value::Alias(obj.clone()),
            Value::array([Value::Alias(obj.clone()), Value::from(&obj)]),
            Value::array([Value::from(&obj), Value::Alias(obj.clone())]),
        ] {
            let (_, back) = roundtrip(&mut enc, &v);
            assert!(back == v, "{back:?} != {v:?}");
        }
    }
    let (bytes, _) = roundtrip(&mut enc, &Value::Alias(Ref::array(vec![]).blessed("B")));
    assert_eq!(bytes, b"\x2c\x61B\x2b\x00", "OBJECT \"B\" ARRAY 0");
}

/// Finding 2: a repeated frozen body (here an aliased frozen object that
/// refers to itself) was written `OBJECT_FREEZE class REFP`; a repeat of
/// an object is a REFP alone.
#[test]
fn aliased_frozen_object_referring_to_itself() {
    use sereal::{Array, Body, Encoder, Ref, Value};
    let f = Ref::new(Body::Frozen(Array::new())).blessed("B");
    if let Body::Frozen(a) = &mut *f.body_mut().unwrap() {
        a.push(Value::from(&f));
    }
    let v = Value::Alias(f.clone());
    let (bytes, back) = roundtrip(&mut Encoder::new(Default::default()).unwrap(), &v);
    let same = back == v;
    let msg = format!("{back:?} != {v:?}");
    back.dismantle();
    v.dismantle();
    assert!(same, "{msg}");
    // OBJECT_FREEZE "B" ARRAY(tracked) 1, REFP to the ARRAY
    assert_eq!(bytes, b"\x32\x61B\xab\x01\x29\x04");
}

/// Finding 3 (and finding 7's cause): a blessed cell with a FREEZE handler
/// met first as an alias, then through a reference, was written
/// `OBJECT_FREEZE class REFP`. The alias is written as the frozen object
/// (`OBJECT_FREEZE class ARRAY values`), the reference as a REFP to it; the
/// other order gives Perl's bytes.
#[test]
fn aliased_blessed_cell_with_freeze_handler() {
    use sereal::{Array, Body, Encoder, EncoderOptions, Ref, Value};
    let x = Ref::scalar(Value::Undef).blessed("D");
    x.set(Body::Scalar(Value::from(&x))).unwrap();
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    enc.on_freeze("D", |_| Ok(vec![Value::Undef]));
    let frozen = Ref::new(Body::Frozen(Array::from(vec![Value::Undef]))).blessed("D");
    let cases = [
        (
            Value::Alias(x.clone()),
            Value::Alias(frozen.clone()),
            &b"\x32\x61D\x2b\x01\x25"[..],
        ),
        (
            Value::array([Value::Alias(x.clone()), Value::from(&x)]),
            Value::array([Value::Alias(frozen.clone()), Value::from(&frozen)]),
            b"\x42\x32\x61D\xab\x01\x25\x29\x05",
        ),
        (
            // Perl 5.003 writes this (`[\$y, $y]` with `$y` blessed, FREEZE)
            Value::array([Value::from(&x), Value::Alias(x.clone())]),
            Value::array([Value::from(&frozen), Value::Alias(frozen.clone())]),
            b"\x42\x32\x61D\x28\xab\x01\x25\x2e\x06",
        ),
    ];
    let mut failures = Vec::new();
    for (v, want, want_bytes) in &cases {
        let (bytes, back) = roundtrip(&mut enc, v);
        if !(back == *want) || bytes != *want_bytes {
            failures.push(format!("{v:?}: {bytes:x?} {back:?}"));
        }
    }
    x.set(Body::Scalar(Value::Undef)).unwrap();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Finding 4: a scalar cell holding an alias (of itself, here) was written
/// `REFN ALIAS <its own offset>`. No Perl scalar holds another scalar: the
/// encoder refuses a cell that holds an alias.
#[test]
fn cell_holding_an_alias_of_itself() {
    use sereal::{Body, Encoder, Ref, Value};
    let mut enc = Encoder::new(Default::default()).unwrap();
    let x = Ref::scalar(Value::Undef);
    x.set(Body::Scalar(Value::Alias(x.clone()))).unwrap();
    let other = Ref::scalar(Value::Alias(Ref::scalar(Value::from(1))));
    let mut results = Vec::new();
    for v in [Value::from(&x), Value::Alias(other.clone())] {
        results.push(enc.encode(&v).map_err(|e| e.kind().clone()));
    }
    x.set(Body::Scalar(Value::Undef)).unwrap();
    for r in results {
        match r {
            Err(ErrorKind::Unsupported(m)) => assert!(m.contains("holds an alias"), "{m}"),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
    // The encoder is reusable after the error.
    assert!(enc
        .encode(&Value::from(&Ref::scalar(Value::from(1))))
        .is_ok());
}

/// Finding 5: `OBJECT "A" OBJECT "B" REFP 2` (both OBJECTs tracked) was
/// read as a cell of class A holding an alias of a second cell. Perl reads
/// an object's value into the object's own slot, so both tracked OBJECTs
/// name one slot: a scalar that refers to itself, which the ALIAS names
/// too (Perl's decoder and refaddr say so; Perl's encoder writes it back
/// as `ARRAYREF_2 OBJECT(tracked) class REFP 2 ALIAS 2`). The class is the
/// outer OBJECT's here, where Perl's decoder picks by the order of its
/// class table (B for this document).
#[test]
fn object_of_object_roundtrips() {
    const DOC: &[u8] = b"=\xF3rl\x05\x00\x42\xac\x61A\xac\x61B\x29\x02\x2e\x05";
    let v = decode(DOC).unwrap();
    let bytes = encode(&v).unwrap();
    let again = decode(&bytes).unwrap();
    assert_eq!(
        format!("{v:?}"),
        r#"[alias(#1=bless(\#1#, "A")), alias(#1#)]"#
    );
    assert!(again == v, "{again:?} != {v:?}");
    assert_eq!(&bytes[6..], b"\x42\xac\x61A\x29\x02\x2e\x02");
    // The same slot through a REFN's referent, and an untracked OBJECT
    // between them: `REFN OBJECT "A" REFN(tracked) ARRAY 0` is a reference
    // to the tracked cell, which refers to the blessed array.
    let v = decode(b"=\xF3rl\x05\x00\x42\x28\x2c\x61A\xa8\x2b\x00\x29\x06").unwrap();
    assert_eq!(format!("{v:?}"), r#"[#1=\bless([], "A"), #1#]"#);
    let again = decode(&encode(&v).unwrap()).unwrap();
    assert!(again == v, "{again:?} != {v:?}");
}

/// Found by the `encoder` target once the guards for findings 1-4 were
/// gone: a cell of Perl's `TRUE`, blessed, whose FREEZE handler returns the
/// object itself. The repeat inside the values was written `REFN TRUE` (a
/// cell of an immortal is written by tag), not a REFP to the frozen object.
#[test]
fn frozen_cell_of_an_immortal_referring_to_itself() {
    use sereal::{Encoder, EncoderOptions, Ref, Value};
    let x = Ref::scalar(Value::True).blessed("D");
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    enc.on_freeze("D", |obj| Ok(vec![Value::from(obj), Value::Undef]));
    for v in [
        Value::from(&x),
        Value::array([Value::Alias(x.clone()), Value::Alias(x.clone())]),
    ] {
        let (_, back) = roundtrip(&mut enc, &v);
        let shown = format!("{back:?}");
        back.dismantle();
        assert!(
            shown.contains(r#"#1=bless(frozen[#1#, undef], "D")"#),
            "{v:?} decodes to {shown}"
        );
    }
}

/// Found by the `encoder` target: a weak reference to a cell of one of
/// Perl's immortals, then a FREEZE callback. The weak-referent table keys
/// such a cell by its tag, not an address, and the first callback took a
/// handle on every node the tables name: on "the node at address 0x3b".
#[test]
fn weak_immortal_cell_then_freeze_callback() {
    use sereal::{Encoder, EncoderOptions, Hash, Ref, Value};
    let no = Ref::scalar(Value::False);
    let obj = Ref::hash(Hash::new()).blessed("F");
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    enc.on_freeze("F", |_| Ok(vec![Value::from(1)]));
    let v = Value::array([Value::weak(&no), Value::from(&no), Value::from(&obj)]);
    let (_, back) = roundtrip(&mut enc, &v);
    // A cell of an immortal is written by its tag, never tracked (as Perl
    // does): the weak reference is to a cell of its own, which is gone.
    assert_eq!(
        format!("{back:?}"),
        r#"[weak(gone), \sv_no, bless(frozen[1], "F")]"#
    );
}
