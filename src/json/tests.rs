//! Lossless and plain JSON of values and documents, round trips, forms
//! and errors.

use super::*;

fn round_trip(v: &Value) -> Value {
    let j = to_json(v, true).unwrap();
    let text = j.to_string();
    let back = from_json(&serde_json::from_str(&text).unwrap(), true).unwrap();
    assert_eq!(to_json(&back, true).unwrap(), j, "{text}");
    assert_eq!(
        crate::encode(&back).unwrap(),
        crate::encode(v).unwrap(),
        "{text}"
    );
    back
}

#[test]
fn scalars_keep_their_kind_and_bits() {
    let vals = vec![
        Value::Undef,
        Value::CanonicalUndef,
        Value::Bool(true),
        Value::True,
        Value::False,
        Value::Int(i64::MIN),
        Value::UInt(5),
        Value::UInt(u64::MAX),
        Value::Float(0.1),
        Value::Float(f32::from_bits(0x7fc0_0001)),
        Value::Float(-0.0),
        Value::Double(0.1),
        Value::Double(1e300),
        Value::Double(-0.0),
        Value::Double(f64::NAN),
        Value::Double(f64::from_bits(0xfff8_0000_0000_0001)),
        Value::Double(f64::NEG_INFINITY),
        Value::Double(5e-324),
        Value::Double(2.0),
        Value::LongDouble(Box::new([7; 16])),
        Value::Float128(Box::new([9; 16])),
        Value::bytes("ascii"),
        Value::bytes(b"caf\xe9\x00\xff"),
        Value::bytes("café"),
        Value::utf8("ascii"),
        Value::utf8("é"),
        Value::Utf8(Str::new(b"\xff\xfe")),
    ];
    let v = Value::array(vals.clone());
    let back = round_trip(&v);
    let got = back.as_strong_ref().unwrap().as_array().unwrap().clone();
    for (a, b) in vals.iter().zip(got.iter()) {
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        if let (Value::Double(x), Value::Double(y)) = (a, b) {
            assert_eq!(x.to_bits(), y.to_bits());
        }
        if let (Value::Float(x), Value::Float(y)) = (a, b) {
            assert_eq!(x.to_bits(), y.to_bits());
        }
    }
}

#[test]
fn sharing_cycles_weak_alias_classes() {
    let cell = Ref::scalar(Value::from("x"));
    let h = Ref::hash(Hash::new()).blessed(Key::utf8("Ünï"));
    h.hash_mut().unwrap().insert("self", Value::weak(&h));
    h.hash_mut()
        .unwrap()
        .insert(Key::new(b"\xff", false), Value::Alias(cell.clone()));
    let re = Ref::regexp("a+é", "i");
    let frozen = Ref::new(Body::Frozen(vec![Value::from(1)].into())).blessed("F");
    let v = Value::array([
        Value::from(&h),
        Value::Alias(cell.clone()),
        Value::from(&re),
        Value::from(&re),
        Value::from(frozen),
    ]);
    drop((cell, re));
    let back = round_trip(&v);
    back.dismantle();
    v.dismantle();
    drop(h);
}

#[test]
fn forms_are_kept_and_a_cyclic_document_with_them_is_freed() {
    // {self => <the hash>, arr => REFN ARRAY [1], up => PAD REFN REFP}:
    // the hash is tracked at body offset 2 and refers to itself; its
    // small array is in the long form; a PAD precedes a reference.
    let perl =
        b"=\xF3rl\x05\x00\x28\xaa\x03\x64self\x29\x02\x63arr\x28\x2b\x01\x01\x62up\x3f\x28\x29\x02";
    let doc = Document::decode(perl, &Decoder::default()).unwrap();
    assert!(!doc.forms.is_empty());
    let mut enc = Encoder::new(crate::EncoderOptions::new()).unwrap();
    assert_eq!(doc.encode(&mut enc).unwrap(), perl);
    let j = doc.to_json(true).unwrap();
    assert_eq!(j["nodes"][1], json!({"array": [1], "refn": true}));
    assert!(
        j["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["pad"] == true),
        "{j}"
    );
    let back = Document::from_json(&j, true).unwrap();
    assert_eq!(back.encode(&mut enc).unwrap(), perl);
    // a refn flag on a scalar is refused
    let nodes = j["nodes"].as_array().unwrap();
    let cell = nodes
        .iter()
        .position(|n| n.get("scalar").is_some())
        .unwrap();
    let mut bad = j.clone();
    bad["nodes"][cell]["refn"] = json!(true);
    let e = Document::from_json(&bad, true).unwrap_err();
    assert!(
        e.to_string().contains("refn is for arrays and hashes"),
        "{e}"
    );
    // dropped, the decoded document frees its cycle and its forms
    let root = doc.body.root().clone();
    let arr = match root.get("arr") {
        Some(Value::Ref(a)) => a.downgrade(),
        other => panic!("{other:?}"),
    };
    let Value::Ref(root) = root else { panic!() };
    let weak = root.downgrade();
    drop(root);
    drop(doc);
    assert!(weak.upgrade().is_none() && arr.upgrade().is_none());
    // so does one read from JSON, once its cycle is broken
    let Value::Ref(root) = back.body.root().clone() else {
        panic!()
    };
    let weak = root.downgrade();
    drop(root);
    back.body.dismantle();
    drop(back);
    assert!(weak.upgrade().is_none());
}

#[test]
fn weak_only_nodes_live_in_the_document() {
    let held = Ref::array(vec![Value::from(1)]);
    let doc = Document {
        body: Value::array([Value::weak(&held)]).into(),
        ..Document::default()
    };
    let j = doc.to_json(true).unwrap();
    let back = Document::from_json(&j, true).unwrap();
    assert_eq!(back.keep_alive.len(), 1);
    assert_eq!(back.to_json(true).unwrap(), j);
    let mut enc = Encoder::new(Default::default()).unwrap();
    assert_eq!(
        back.encode(&mut enc).unwrap(),
        doc.encode(&mut enc).unwrap()
    );
    // a dead weak reference stays dead
    drop(held);
    let j = doc.to_json(true).unwrap();
    assert_eq!(j["nodes"][0]["array"][0], json!({"weak": null}));
    assert_eq!(
        Document::from_json(&j, true)
            .unwrap()
            .encode(&mut enc)
            .unwrap(),
        doc.encode(&mut enc).unwrap()
    );
}

#[test]
fn bad_lossless_json_is_an_error_with_its_path() {
    let cases = [
        (json!([1]), "at /: a lossless document is a JSON object"),
        (json!({"body": 1}), "at /format: not a lossless document"),
        (
            json!({"format": LOSSLESS_FORMAT, "body": [1]}),
            "at /body: not a lossless value: [1]",
        ),
        (
            json!({"format": LOSSLESS_FORMAT, "body": {"ref": 0}, "nodes": [{"hash": [["a", 1], ["a", 2]]}]}),
            "at /nodes/0/hash/1/0: duplicate key",
        ),
        (
            json!({"format": LOSSLESS_FORMAT, "body": {"bytes": "Ā"}}),
            "at /body/bytes: a character above U+00FF",
        ),
        (
            json!({"format": LOSSLESS_FORMAT, "body": null, "nodes": [{"array": [], "hash": []}]}),
            "at /nodes/0/hash: a node has one of",
        ),
        (
            json!({"format": LOSSLESS_FORMAT, "body": {"float": 1.5}}),
            "at /body: not a lossless value",
        ),
    ];
    for (j, want) in cases {
        let e = from_json(&j, true).unwrap_err().to_string();
        assert!(e.starts_with(want), "{e}");
    }
}

#[test]
fn plain_views() {
    let shared = Ref::array(vec![Value::from(1)]);
    let cyc = Ref::array(vec![]);
    cyc.array_mut().unwrap().push(Value::from(&cyc));
    let v = Value::array([
        Value::from(&shared),
        Value::from(&shared),
        Value::from(&cyc),
        Value::bytes(b"\xe9"),
        Value::Double(f64::NAN),
        Value::from(Ref::regexp("^a", "i")),
        Value::LongDouble(Box::new([
            0, 0, 0, 0, 0, 0, 0, 0xc0, 0xff, 0x3f, 0, 0, 0, 0, 0, 0,
        ])),
    ]);
    assert_eq!(
        to_json(&v, false).unwrap().to_string(),
        r#"[[1],[1],[null],"é","NaN","(?^i:^a)",1.5]"#
    );
    cyc.array_mut().unwrap().clear();
}
