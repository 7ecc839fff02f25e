//! FREEZE/THAW options: the allow-list and its deny action, and the
//! decoder's refuse_objects and no_bless_objects on OBJECT_FREEZE.

use sereal::{
    decode, Body, Decoder, DecoderOptions, Encoder, EncoderOptions, ErrorKind, Ref, Value,
};

fn point(x: i64) -> Value {
    Value::Ref(Ref::hash([("x", x)].into_iter().collect()).blessed("Point"))
}

fn encoder(opts: EncoderOptions) -> Encoder {
    let mut enc = Encoder::new(opts).unwrap();
    enc.on_freeze("Point", |p| {
        Ok(vec![p.as_hash().unwrap().get("x").cloned().unwrap()])
    });
    enc.on_freeze("Other", |_| Ok(vec![]));
    enc
}

#[test]
fn allow_list_admits_listed_classes_and_refuses_others() {
    let doc = encoder(EncoderOptions::new().freeze_allow_classes(["Point"]))
        .encode(&point(3))
        .unwrap();
    assert_eq!(doc[6], 0x32, "OBJECT_FREEZE");
    let err = encoder(EncoderOptions::new().freeze_allow_classes(["Other"]))
        .encode(&point(3))
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Callback(m) if m.contains("'Point'")),
        "{err}"
    );
    // deny action 'serialize': written as a plain object
    let opts = EncoderOptions::new()
        .freeze_allow_classes(["Other"])
        .freeze_deny_serialize(true);
    let doc = encoder(opts).encode(&point(3)).unwrap();
    assert_eq!(doc[6], 0x2c, "OBJECT");
    assert_eq!(decode(&doc).unwrap(), point(3));
}

#[test]
fn freeze_needs_the_option_and_excludes_no_bless_objects() {
    // a handler without freeze_callbacks is not called
    let doc = encoder(EncoderOptions::new()).encode(&point(1)).unwrap();
    assert_eq!(doc[6], 0x2c, "OBJECT");
    let err = Encoder::new(
        EncoderOptions::new()
            .freeze_callbacks(true)
            .no_bless_objects(true),
    )
    .err()
    .unwrap();
    assert!(matches!(err.kind(), ErrorKind::BadOption(_)), "{err}");
    let err = Encoder::new(
        EncoderOptions::new()
            .undef_unknown(true)
            .stringify_unknown(true),
    )
    .err()
    .unwrap();
    assert!(matches!(err.kind(), ErrorKind::BadOption(_)), "{err}");
}

#[test]
fn decoder_object_options_apply_to_frozen_objects() {
    let doc = encoder(EncoderOptions::new().freeze_callbacks(true))
        .encode(&point(5))
        .unwrap();
    let err = Decoder::new(DecoderOptions::new().refuse_objects(true))
        .decode(&doc)
        .unwrap_err();
    assert!(err.to_string().contains("refuse_objects"), "{err}");
    assert_eq!(err.offset(), Some(6));
    // no_bless_objects: the FREEZE values as a plain array, no THAW
    let mut dec = Decoder::new(DecoderOptions::new().no_bless_objects(true));
    dec.on_thaw("Point", |_, _| {
        panic!("THAW must not run with no_bless_objects")
    });
    assert_eq!(dec.decode(&doc).unwrap(), Value::array([5]));
    // no handler: a Frozen body of class Point, which encodes back to the same bytes
    let v = Decoder::default().decode(&doc).unwrap();
    let node = v.as_ref().unwrap();
    assert_eq!(node.class().unwrap().to_string(), "Point");
    assert!(matches!(&*node.body(), Body::Frozen(a) if a.len() == 1));
    assert_eq!(sereal::encode(&v).unwrap(), doc);
    // a failing THAW is an error naming the class, at the object's offset
    let mut dec = Decoder::default();
    dec.on_thaw("Point", |_, _| {
        Err(sereal::Error::new(ErrorKind::Invalid("bad point".into())))
    });
    let err = dec.decode(&doc).unwrap_err();
    assert!(
        err.to_string()
            .contains("THAW callback of class 'Point' failed: bad point"),
        "{err}"
    );
}

/// The allow-list compares class names as Perl does, as text: a Latin-1
/// byte-string class matches its UTF-8 spelling, and a class name that is
/// not text never matches a list entry by a lossy conversion.
#[test]
fn allow_list_matches_class_names_as_text() {
    use sereal::Key;
    let frozen = |class: Key, allow: &str| -> bool {
        let mut enc = Encoder::new(EncoderOptions::new().freeze_allow_classes([allow])).unwrap();
        enc.on_freeze(class.clone(), |_| Ok(vec![Value::from(1)]));
        let v = Value::Ref(Ref::hash(Default::default()).blessed(class));
        match enc.encode(&v) {
            Ok(doc) => doc[6] == 0x32,
            Err(e) => {
                assert!(
                    matches!(e.kind(), ErrorKind::Callback(m) if m.contains("freeze_allow_classes")),
                    "{e}"
                );
                false
            }
        }
    };
    assert!(frozen(Key::utf8("Café"), "Café"));
    assert!(
        frozen(Key::bytes(b"Caf\xe9"), "Café"),
        "Latin-1 bytes of the same text"
    );
    assert!(frozen(Key::bytes(b"Point"), "Point"));
    assert!(
        !frozen(Key::bytes(b"Caf\xff"), "Caf\u{fffd}"),
        "no lossy match"
    );
    assert!(!frozen(Key::bytes(b"Cafe"), "Café"));
    assert!(!frozen(Key::utf8("Point2"), "Point"));
}

/// Perl 5.008's `thaw_allow_classes` and `thaw_deny_action`: THAW runs
/// only for the listed classes (names compared as text); another class
/// fails the decode at its OBJECT_FREEZE, or with `thaw_deny_raw` stays a
/// frozen object, as without a handler. Classes without a handler are not
/// affected.
#[test]
fn thaw_allow_list_and_deny_action() {
    use sereal::Key;
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    for class in ["Point", "Caf\u{e9}", "Other"] {
        enc.on_freeze(class, |_| Ok(vec![Value::from(7)]));
    }
    enc.on_freeze(Key::bytes(b"Caf\xe9"), |_| Ok(vec![Value::from(8)]));
    let obj = |class: Key| Value::Ref(Ref::hash(Default::default()).blessed(class));
    let doc = enc
        .encode(&Value::array([
            obj(Key::from("Point")),
            obj(Key::bytes(b"Caf\xe9")),
            obj(Key::from("Other")),
        ]))
        .unwrap();
    let decoder = |opts: DecoderOptions| {
        let mut dec = Decoder::new(opts);
        for class in ["Point", "Other"] {
            dec.on_thaw(class, |c, _| Ok(Value::from(format!("thawed {c}"))));
        }
        dec.on_thaw(Key::bytes(b"Caf\xe9"), |_, _| {
            Ok(Value::from("thawed cafe"))
        });
        dec
    };
    let items = |v: &Value| -> Vec<String> {
        let Value::Ref(r) = v else { panic!("{v:?}") };
        r.as_array()
            .unwrap()
            .iter()
            .map(|x| match x {
                Value::Ref(n) if matches!(&*n.body(), Body::Frozen(_)) => {
                    format!("frozen {}", n.class().unwrap())
                }
                other => other.as_str().unwrap().to_owned(),
            })
            .collect()
    };
    // No list: every handler runs.
    let all = decoder(DecoderOptions::new()).decode(&doc).unwrap();
    assert_eq!(items(&all), ["thawed Point", "thawed cafe", "thawed Other"]);
    // The Latin-1 class matches its UTF-8 spelling; Other is not listed.
    let listed = || DecoderOptions::new().thaw_allow_classes(["Point", "Caf\u{e9}"]);
    let err = decoder(listed()).decode(&doc).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Callback(m) if m.contains("'Other'") && m.contains("thaw_allow_classes")),
        "{err}"
    );
    let raw = decoder(listed().thaw_deny_raw(true)).decode(&doc).unwrap();
    assert_eq!(items(&raw), ["thawed Point", "thawed cafe", "frozen Other"]);
    // The raw object encodes back as the frozen object it was.
    let again = Decoder::default()
        .decode(&sereal::encode(&raw).unwrap())
        .unwrap();
    assert_eq!(items(&again)[2], "frozen Other");
}
