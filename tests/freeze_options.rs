//! FREEZE/THAW options: the allow-list and its deny action, and the
//! decoder's refuse_objects and no_bless_objects on OBJECT_FREEZE.

use sereal::{
    decode, Body, Decoder, DecoderOptions, Encoder, EncoderOptions, ErrorKind, Ref, Value,
};
mod common;

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
    let node = v.as_strong_ref().unwrap();
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

/// FREEZE and THAW handlers are found as the allow-lists match, by the
/// class name's text: Perl's package `Caf\x{e9}` is one package whether
/// its name is written as the Latin-1 bytes `Caf\xe9` (as Perl writes it)
/// or as UTF-8, and a handler registered under either spelling runs for
/// both. Bytes that only look like the UTF-8 spelling are another name.
#[test]
fn handlers_match_class_names_as_text() {
    use sereal::Key;
    let latin1 = || Key::bytes(b"Caf\xe9");
    let utf8 = || Key::utf8("Caf\u{e9}");
    let obj = |class: Key| Value::array([Value::Ref(Ref::hash(Default::default()).blessed(class))]);
    let freeze = |handler: Key, class: Key| -> Vec<u8> {
        let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
        enc.on_freeze(handler, |_| Ok(vec![Value::from(7)]));
        enc.encode(&obj(class)).unwrap()
    };
    // Perl's bytes for [bless {}, "Caf\x{e9}"] whose FREEZE returns 7:
    // ARRAYREF_1 OBJECT_FREEZE "Caf\xe9" REFN ARRAY 1 7.
    let perls = common::unhex("3df3726c0500413264436166e9282b0107");
    assert_eq!(freeze(utf8(), latin1()), perls);
    assert_eq!(freeze(latin1(), latin1()), perls);
    let utf8_doc = freeze(latin1(), utf8());
    assert_eq!(
        &utf8_doc[6..8],
        b"\x41\x32",
        "OBJECT_FREEZE of the UTF-8 name"
    );
    assert_eq!(
        freeze(Key::bytes(b"Caf\xc3\xa9"), utf8())[7],
        0x2c,
        "OBJECT"
    );
    let thawed = |handler: Key, doc: &[u8]| -> bool {
        let mut dec = Decoder::default();
        dec.on_thaw(handler, |_, _| Ok(Value::from("thawed")));
        let v = dec.decode(doc).unwrap();
        v.at(0).and_then(|x| x.as_str().map(str::to_owned)) == Some("thawed".into())
    };
    for doc in [&perls, &utf8_doc] {
        assert!(thawed(utf8(), doc), "{doc:02x?}");
        assert!(thawed(latin1(), doc), "{doc:02x?}");
        assert!(thawed(Key::from("Caf\u{e9}"), doc), "{doc:02x?}");
        assert!(!thawed(Key::bytes(b"Caf\xc3\xa9"), doc), "{doc:02x?}");
        assert!(!thawed(Key::from("Cafe"), doc), "{doc:02x?}");
    }
    if !common::perl_sereal("FREEZE and THAW of a Latin-1 package with Perl") {
        return;
    }
    // Perl writes the same bytes, and THAWs the UTF-8 spelling ours wrote.
    let hex: String = utf8_doc.iter().map(|b| format!("{b:02x}")).collect();
    let script = format!(
        r#"use strict; use warnings; use Sereal::Encoder; use Sereal::Decoder;
        no strict "refs";
        my $pkg = "Caf\x{{e9}}";
        *{{"${{pkg}}::FREEZE"}} = sub {{ 7 }};
        *{{"${{pkg}}::THAW"}} = sub {{ my ($class, undef, @v) = @_; bless {{ thawed => $v[0] }}, $class }};
        my $e = Sereal::Encoder->new({{ freeze_callbacks => 1 }});
        print unpack("H*", $e->encode([bless {{}}, $pkg])), "\n";
        my $r = Sereal::Decoder->new->decode(pack "H*", "{hex}");
        print ref($r->[0]) eq $pkg ? "thawed $r->[0]{{thawed}}\n" : "not thawed\n";
        "#
    );
    let out = String::from_utf8(common::perl_output(&script)).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(common::unhex(lines[0]), perls);
    assert_eq!(lines[1], "thawed 7");
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

/// Perl 5.008's code-reference form of `freeze_allow_classes`: asked with
/// the class and the object; a refusal fails the encode or, with
/// `freeze_deny_serialize`, writes the object as if it had no handler.
#[test]
fn freeze_allow_predicate_sees_class_and_object() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let mut enc = encoder(EncoderOptions::new());
    enc.freeze_allow_if(move |class, object| {
        counter.fetch_add(1, Ordering::Relaxed);
        class.as_bytes() == b"Point"
            && object.as_hash().unwrap().get("x").and_then(|x| x.as_i64()) != Some(13)
    });
    assert!(
        enc.options().freeze_callbacks,
        "the predicate sets freeze_callbacks"
    );
    let ok = enc.encode(&Value::array([point(1), point(2)])).unwrap();
    assert_eq!(asked.load(Ordering::Relaxed), 2);
    let back = decode(&ok).unwrap();
    for i in 0..2 {
        let node = back.at(i).unwrap().node().unwrap();
        assert!(matches!(&*node.body(), Body::Frozen(_)), "item {i} frozen");
    }
    let err = enc
        .encode(&Value::array([point(1), point(13)]))
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Callback(m) if m.contains("'Point'") && m.contains("freeze_allow_if")),
        "{err}"
    );
    // the encoder is whole after the refusal
    assert_eq!(enc.encode(&point(1)).unwrap()[6], 0x32);

    let mut lenient = encoder(EncoderOptions::new().freeze_deny_serialize(true));
    lenient.freeze_allow_if(|_, object| object.as_hash().unwrap().contains_key("y"));
    let plain = lenient.encode(&point(4)).unwrap();
    assert_eq!(
        decode(&plain).unwrap(),
        point(4),
        "written as the object itself"
    );
    // with the list too, both must allow
    let mut both = encoder(EncoderOptions::new().freeze_allow_classes(["Other"]));
    both.freeze_allow_if(|_, _| true);
    assert!(both.encode(&point(1)).is_err());
}

/// Perl 5.008's code-reference form of `thaw_allow_classes`.
#[test]
fn thaw_allow_predicate_is_asked_per_frozen_object() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let mut enc = encoder(EncoderOptions::new().freeze_callbacks(true));
    let doc = enc
        .encode(&Value::array([
            point(1),
            point(2),
            Value::Ref(Ref::hash(Default::default()).blessed("Other")),
        ]))
        .unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let make = |opts: DecoderOptions| {
        let mut dec = Decoder::new(opts);
        dec.on_thaw("Point", |_, mut v| Ok(v.pop().unwrap_or_default()));
        dec.on_thaw("Other", |_, _| Ok(Value::from("other")));
        let counter = asked.clone();
        dec.thaw_allow_if(move |class| {
            counter.fetch_add(1, Ordering::Relaxed);
            class.as_bytes() == b"Point"
        });
        dec
    };
    let err = make(DecoderOptions::new()).decode(&doc).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Callback(m) if m.contains("'Other'") && m.contains("thaw_allow_if")),
        "{err}"
    );
    assert!(err.offset().is_some());
    asked.store(0, Ordering::Relaxed);
    let v = make(DecoderOptions::new().thaw_deny_raw(true))
        .decode(&doc)
        .unwrap();
    assert_eq!(asked.load(Ordering::Relaxed), 3, "once per frozen object");
    assert_eq!(
        (v.at(0).unwrap().as_i64(), v.at(1).unwrap().as_i64()),
        (Some(1), Some(2))
    );
    let other = v.at(2).unwrap().node().unwrap();
    assert!(
        matches!(&*other.body(), Body::Frozen(_)),
        "refused: stays frozen"
    );
}

/// Perl 5.004_001: THAW may return a plain scalar (Perl's test: a Rot13
/// object whose FREEZE and THAW are rot13 of its string), in a slot and at
/// the root.
#[test]
fn thaw_may_return_a_non_reference() {
    fn rot13(s: &str) -> String {
        s.chars()
            .map(|c| match c {
                'a'..='m' | 'A'..='M' => (c as u8 + 13) as char,
                'n'..='z' | 'N'..='Z' => (c as u8 - 13) as char,
                c => c,
            })
            .collect()
    }
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    enc.on_freeze("Rot13", |s| {
        let secret = match &*s.body() {
            Body::Scalar(v) => v.as_str().unwrap().to_owned(),
            _ => unreachable!(),
        };
        Ok(vec![Value::from(rot13(&secret))])
    });
    let secret = || Value::Ref(Ref::scalar("SECRET").blessed("Rot13"));
    let mut dec = Decoder::default();
    dec.on_thaw("Rot13", |_, vals| {
        Ok(Value::from(rot13(vals[0].as_str().unwrap())))
    });
    let root = dec.decode(&enc.encode(&secret()).unwrap()).unwrap();
    assert_eq!(root.as_str(), Some("SECRET"));
    let doc = enc.encode(&Value::hash([("secret", secret())])).unwrap();
    assert!(!doc.windows(6).any(|w| w == b"SECRET"), "frozen as rot13");
    let v = dec.decode(&doc).unwrap();
    assert_eq!(v.get("secret"), Some(Value::from("SECRET")));
}

/// Perl 5.004's THAW order: each THAW sees the objects nested in its FREEZE
/// data already thawed (Perl's t/091_thaw_order.t). By default THAW runs as each
/// object's data ends, so nested objects come first and siblings in
/// document order (`tests/thaw_order.rs` has Perl 5.004's own order).
#[test]
fn nested_objects_are_thawed_before_the_objects_that_hold_them() {
    use std::sync::{Arc, Mutex};
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    enc.on_freeze("Box", |b| {
        Ok(vec![b.as_hash().unwrap().get("in").cloned().unwrap()])
    });
    let boxed = |name: &str, inside: Value| {
        Value::Ref(
            Ref::hash(
                [("name", Value::from(name)), ("in", inside)]
                    .into_iter()
                    .collect(),
            )
            .blessed("Box"),
        )
    };
    let tree = boxed(
        "outer",
        Value::array([
            boxed("a", Value::from(1)),
            boxed("b", boxed("b.inner", Value::from(2))),
        ]),
    );
    // the names are lost by FREEZE (it keeps only "in"); THAW records what
    // it was given, with nested boxes shown by what their THAW returned
    let steps = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = steps.clone();
    let mut dec = Decoder::default();
    dec.on_thaw_shared("Box", move |_, vals| {
        let shown = format!("{:?}", vals[0]);
        let mut log = log.lock().unwrap();
        log.push(shown);
        Ok(Value::from(format!("box{}", log.len())))
    });
    let v = dec.decode(&enc.encode(&tree).unwrap()).unwrap();
    let steps = steps.lock().unwrap();
    assert_eq!(
        *steps,
        [
            "1",                    // a
            "2",                    // b.inner
            "\"box2\"",             // b, holding b.inner thawed
            "[\"box1\", \"box3\"]", // outer, holding a and b thawed
        ],
    );
    assert_eq!(v, Value::from("box4"));
}

/// Perl 5.010: a decode that fails after THAWs ran leaves nothing behind
/// for the next one.
#[test]
fn a_failed_decode_leaves_no_thaw_state_for_the_next() {
    let mut enc = encoder(EncoderOptions::new().freeze_callbacks(true));
    let good = enc.encode(&Value::array([point(1), point(2)])).unwrap();
    let mut dec = Decoder::default();
    dec.on_thaw("Point", |class, mut v| {
        Ok(Value::Ref(
            Ref::hash([("x", v.pop().unwrap_or_default())].into_iter().collect()).blessed(class),
        ))
    });
    for cut in 7..good.len() {
        assert!(dec.decode(&good[..cut]).is_err(), "cut at {cut}");
        let v = dec.decode(&good).unwrap();
        assert_eq!(
            v,
            Value::array([point(1), point(2)]),
            "after the cut at {cut}"
        );
    }
}
