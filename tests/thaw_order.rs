//! The order THAW handlers run in: by default as each frozen object's data
//! ends, and with `DecoderOptions::thaw_order` as Perl 5.004 and later do
//! (every THAW when the document is read, from the object whose data starts
//! last back to the first) or as Perl 5.003 did (from the object whose data
//! ends last), checked on the structure of Perl's own t/091_thaw_order.t,
//! written by this crate's encoder and by Perl's.

mod common;

use sereal::{Body, Decoder, DecoderOptions, Encoder, EncoderOptions, Key, Ref, ThawOrder, Value};
use std::sync::{Arc, Mutex};

/// `Class->new($attrs, @inside)` of Perl's test: `bless {attrs => {...},
/// inside => {0 => ..., 1 => ...}}, Class`.
fn foo(class: &str, attrs: Vec<(&str, Value)>, inside: Vec<Value>) -> Value {
    let inside: Vec<(String, Value)> = inside
        .into_iter()
        .enumerate()
        .map(|(i, v)| (i.to_string(), v))
        .collect();
    Value::Ref(
        Ref::hash(
            [
                ("attrs", Value::hash(attrs)),
                ("inside", Value::hash(inside)),
            ]
            .into_iter()
            .collect(),
        )
        .blessed(class),
    )
}

/// The structure Perl's t/091_thaw_order.t freezes.
fn perls_struct() -> Value {
    foo(
        "FooOutside",
        vec![
            ("attr1", Value::from("foobar")),
            (
                "bar",
                foo("FooInside", vec![], vec!["should_be_first".into()]),
            ),
        ],
        vec![
            foo(
                "FooInside",
                vec![],
                vec!["second/not_frozen".into(), "third/not_frozen".into()],
            ),
            foo(
                "FooOutside",
                vec![],
                vec![foo("FooInside", vec![], vec!["fourth/inner".into()])],
            ),
        ],
    )
}

/// The elements of an `inside` hash, in index order.
fn inside_items(inside: &Value) -> Vec<Value> {
    (0..)
        .map_while(|i: usize| inside.get(&i.to_string()))
        .collect()
}

/// FREEZE of both classes: `{attrs => $self->{attrs}, inside => [the
/// inside values in index order]}`.
fn freezer() -> Encoder {
    let mut enc =
        Encoder::new(EncoderOptions::new().freeze_callbacks(true).canonical(true)).unwrap();
    for class in ["FooInside", "FooOutside"] {
        enc.on_freeze(class, |obj| {
            let this = Value::Ref(obj.clone());
            let attrs = this.get("attrs").unwrap();
            let inside = inside_items(&this.get("inside").unwrap());
            Ok(vec![Value::hash([
                ("attrs", attrs),
                ("inside", Value::array(inside)),
            ])])
        });
    }
    enc
}

/// A short account of a value: strings as they are, objects by class (a
/// thawed object), arrays (a frozen object not thawed yet is an unblessed
/// array of its values) and hashes by their content, to a few levels.
fn show(v: &Value) -> String {
    show_in(v, 4)
}

fn show_in(v: &Value, depth: usize) -> String {
    if depth == 0 {
        return "...".into();
    }
    if let Some(s) = v.as_str() {
        return s.to_owned();
    }
    let Some(node) = v.node() else {
        return format!("{v:?}");
    };
    if let Some(class) = node.class() {
        return String::from_utf8_lossy(class.as_bytes()).into_owned();
    }
    let shown = match &*node.body() {
        Body::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|v| show_in(v, depth - 1))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Body::Hash(h) => {
            let mut e: Vec<String> = h
                .iter()
                .map(|(k, v)| {
                    let k = String::from_utf8_lossy(k.as_bytes());
                    format!("{k}={}", show_in(v, depth - 1))
                })
                .collect();
            e.sort();
            format!("{{{}}}", e.join(","))
        }
        other => format!("{other:?}"),
    };
    shown
}

/// A decoder whose THAW, for both classes, logs `note(class, data)` and
/// makes `Class->new($data->{attrs}, @{$data->{inside}})`, as Perl's test
/// does.
fn thawer_noting(
    opts: DecoderOptions,
    note: fn(&str, &Value) -> String,
) -> (Decoder, Arc<Mutex<Vec<String>>>) {
    let steps = Arc::new(Mutex::new(Vec::new()));
    let mut dec = Decoder::new(opts);
    for class in ["FooInside", "FooOutside"] {
        let log = steps.clone();
        dec.on_thaw_shared(class, move |class: &Key, vals: Vec<Value>| {
            let data = &vals[0];
            let name = String::from_utf8_lossy(class.as_bytes()).into_owned();
            log.lock().unwrap().push(note(&name, data));
            let attrs = data.get("attrs").unwrap();
            let attrs: Vec<(String, Value)> = attrs
                .as_strong_ref()
                .unwrap()
                .as_hash()
                .unwrap()
                .iter()
                .map(|(k, v)| {
                    (
                        String::from_utf8_lossy(k.as_bytes()).into_owned(),
                        v.clone(),
                    )
                })
                .collect();
            let inside = data.get("inside").unwrap();
            let inside = inside.as_strong_ref().unwrap().as_array().unwrap().to_vec();
            Ok(foo(
                &name,
                attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect(),
                inside,
            ))
        });
    }
    (dec, steps)
}

/// [`thawer_noting`] with `Class(data)` notes.
fn thawer(opts: DecoderOptions) -> (Decoder, Arc<Mutex<Vec<String>>>) {
    thawer_noting(opts, |name, data| format!("{name}({})", show(data)))
}

/// Perl 5.004's expected THAW sequence for [`perls_struct`].
const PERLS_ORDER: [&str; 5] = [
    "FooInside({attrs={},inside=[fourth/inner]})",
    "FooOutside({attrs={},inside=[FooInside]})",
    "FooInside({attrs={},inside=[second/not_frozen,third/not_frozen]})",
    "FooInside({attrs={},inside=[should_be_first]})",
    "FooOutside({attrs={attr1=foobar,bar=FooInside},inside=[FooInside,FooOutside]})",
];

fn check_perls_order(doc: &[u8]) {
    let (dec, steps) = thawer(DecoderOptions::new().thaw_order(ThawOrder::Perl5004));
    let back = dec.decode(doc).unwrap();
    assert_eq!(*steps.lock().unwrap(), PERLS_ORDER);
    assert_eq!(
        *back,
        perls_struct(),
        "the thawed structure is the frozen one"
    );

    // by default: each THAW as its object's data ends
    let (dec, steps) = thawer(DecoderOptions::new());
    let back = dec.decode(doc).unwrap();
    assert_eq!(
        *steps.lock().unwrap(),
        [
            PERLS_ORDER[3],
            PERLS_ORDER[2],
            PERLS_ORDER[0],
            PERLS_ORDER[1],
            PERLS_ORDER[4]
        ]
    );
    assert_eq!(*back, perls_struct());
}

#[test]
fn thaw_lifo_thaws_perls_test_structure_in_perls_order() {
    let doc = freezer().encode(&perls_struct()).unwrap();
    check_perls_order(&doc);
}

#[test]
fn thaw_lifo_thaws_perls_own_document_in_perls_order() {
    if !common::perl_sereal("thaw_lifo_thaws_perls_own_document_in_perls_order") {
        return;
    }
    // the structure and the FREEZE methods of Perl's t/091_thaw_order.t
    let doc = common::perl_hex_lines(
        r#"
use Sereal::Encoder;
for my $class (qw(FooInside FooOutside)) {
    no strict 'refs';
    *{"${class}::new"} = sub {
        my ($class, $attrs, @inside) = @_;
        return bless { attrs => { %{ $attrs || {} } },
                       inside => { map { $_ => $inside[$_] } 0 .. $#inside } }, $class;
    };
    *{"${class}::FREEZE"} = sub {
        my ($self) = @_;
        return { attrs => $self->{attrs},
                 inside => [ map { $self->{inside}{$_} } sort { $a <=> $b } keys %{ $self->{inside} } ] };
    };
}
my $struct = FooOutside->new(
    { attr1 => 'foobar', bar => FooInside->new({}, 'should_be_first') },
    FooInside->new({}, 'second/not_frozen', 'third/not_frozen'),
    FooOutside->new({}, FooInside->new({}, 'fourth/inner')),
);
print unpack('H*', Sereal::Encoder::encode_sereal($struct, { freeze_callbacks => 1, canonical => 1 })), "\n";
"#,
    );
    check_perls_order(&doc[0]);
}

/// A box whose FREEZE keeps only what it holds, and a THAW that logs what
/// it was given and returns a plain string.
fn boxes(lifo: bool) -> (Vec<String>, Value) {
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    enc.on_freeze("Box", |b| {
        Ok(vec![b.as_hash().unwrap().get("in").cloned().unwrap()])
    });
    let boxed = |inside: Value| {
        Value::Ref(Ref::hash([("in", inside)].into_iter().collect()).blessed("Box"))
    };
    let tree = boxed(Value::array([
        boxed(Value::from(1)),
        boxed(boxed(Value::from(2))),
    ]));
    let steps = Arc::new(Mutex::new(Vec::new()));
    let log = steps.clone();
    let mut dec = Decoder::new(DecoderOptions::new().thaw_order(order(lifo)));
    dec.on_thaw_shared("Box", move |_, vals| {
        let mut log = log.lock().unwrap();
        log.push(show(&vals[0]));
        Ok(Value::from(format!("box{}", log.len())))
    });
    let v = dec
        .decode(&enc.encode(&tree).unwrap())
        .unwrap()
        .into_value();
    let steps = steps.lock().unwrap().clone();
    (steps, v)
}

#[test]
fn thaw_lifo_may_return_plain_values_for_nested_objects() {
    // outer [a, b [b.inner]]: data starts outer, a, b, b.inner
    let (steps, v) = boxes(true);
    assert_eq!(steps, ["2", "box1", "1", "[box3,box2]"]);
    assert_eq!(v, Value::from("box4"));
    let (steps, v) = boxes(false);
    assert_eq!(steps, ["1", "2", "box2", "[box1,box3]"]);
    assert_eq!(v, Value::from("box4"));
}

/// Perl 5.004's order, or the default.
fn order(lifo: bool) -> ThawOrder {
    if lifo {
        ThawOrder::Perl5004
    } else {
        ThawOrder::Immediate
    }
}

/// An encoder whose FREEZE of class `P` returns the object's `v`.
fn p_freezer() -> Encoder {
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    enc.on_freeze("P", |p| {
        Ok(vec![p.as_hash().unwrap().get("v").cloned().unwrap()])
    });
    enc
}

/// `[$a, $b]` where `$b`'s FREEZE data refers to `$a` strongly and weakly,
/// and the document refers to `$a` again after both.
fn siblings() -> Vec<u8> {
    let mut enc = p_freezer();
    let a = Ref::hash([("v", Value::from("a"))].into_iter().collect()).blessed("P");
    let b = Ref::hash(
        [("v", Value::array([Value::Ref(a.clone()), Value::weak(&a)]))]
            .into_iter()
            .collect(),
    )
    .blessed("P");
    let keep = Value::Ref(Ref::array(vec![Value::Ref(a.clone())]));
    enc.encode(&Value::array([Value::Ref(a), Value::Ref(b), keep]))
        .unwrap()
}

/// A decoder whose THAW of `P` logs what it was given and makes
/// `{thawed => $data[0]}` of class `T`.
fn p_thawer(lifo: bool) -> (Decoder, Arc<Mutex<Vec<String>>>) {
    let steps = Arc::new(Mutex::new(Vec::new()));
    let log = steps.clone();
    let mut dec = Decoder::new(DecoderOptions::new().thaw_order(order(lifo)));
    dec.on_thaw_shared("P", move |_, mut vals| {
        log.lock().unwrap().push(show(&vals[0]));
        let v = vals.pop().unwrap();
        Ok(Value::Ref(
            Ref::hash([("thawed", v)].into_iter().collect()).blessed("T"),
        ))
    });
    (dec, steps)
}

#[test]
fn thaw_lifo_gives_an_earlier_sibling_frozen_and_then_fixes_the_documents_references() {
    let doc = siblings();
    let (dec, steps) = p_thawer(true);
    let v = dec.decode(&doc).unwrap();
    // $b first, seeing $a not thawed yet (strongly and weakly), then $a
    assert_eq!(*steps.lock().unwrap(), ["[[a],[a]]", "a"]);
    let a = v.at(0).unwrap();
    assert_eq!(show(&a), "T");
    assert_eq!(a.get("thawed"), Some(Value::from("a")));
    // the document's own later reference names the thawed object
    let again = v.at(2).unwrap().at(0).unwrap();
    assert!(again.node().unwrap().ptr_eq(&a.node().unwrap()));
    // $b's THAW kept the array it was given, which the decoder made: its
    // strong reference to $a, as every one the decoder made after $a's
    // data, now names the thawed $a; the weak one is gone, as in Perl
    let kept = v.at(1).unwrap().get("thawed").unwrap();
    assert_eq!(show(&kept), "[T,weak(gone)]");
    assert!(kept
        .at(0)
        .unwrap()
        .node()
        .unwrap()
        .ptr_eq(&a.node().unwrap()));
    drop((a, again, kept));
    drop(v);

    // by default $a is thawed first, and $b sees it thawed
    let (dec, steps) = p_thawer(false);
    let v = dec.decode(&doc).unwrap();
    assert_eq!(*steps.lock().unwrap(), ["a", "[T,T]"]);
    let a = v.at(0).unwrap();
    let kept = v.at(1).unwrap().get("thawed").unwrap();
    assert!(kept
        .at(0)
        .unwrap()
        .node()
        .unwrap()
        .ptr_eq(&a.node().unwrap()));
    assert!(
        matches!(kept.at(1), Some(Value::Weak(w)) if w.upgrade().unwrap().ptr_eq(&a.node().unwrap()))
    );
}

#[test]
fn thaw_lifo_fixes_aliases_to_thawed_objects_and_leaves_weak_references() {
    // [$o, weaken($o)] with $o frozen, written again after as an alias
    let mut enc = p_freezer();
    let o = Ref::hash([("v", Value::from(7))].into_iter().collect()).blessed("P");
    let doc = enc
        .encode(&Value::array([
            Value::Ref(o.clone()),
            Value::weak(&o),
            Value::Alias(o.clone()),
        ]))
        .unwrap();
    for lifo in [true, false] {
        let (dec, _) = p_thawer(lifo);
        let v = dec.decode(&doc).unwrap();
        let first = v.at(0).unwrap().node().unwrap();
        assert_eq!(show(&Value::Ref(first.clone())), "T", "lifo {lifo}");
        let Some(Value::Weak(w)) = v.at(1) else {
            panic!("lifo {lifo}: {v:?}")
        };
        // in Perl's orders a weak reference keeps naming the array of the
        // object's values, which nothing holds (Perl's dangle too); by
        // default it names the thawed object
        match w.upgrade() {
            Some(target) => assert!(!lifo && target.ptr_eq(&first)),
            None => assert!(lifo),
        }
        let Some(Value::Alias(alias)) = v.at(2) else {
            panic!("lifo {lifo}: {v:?}")
        };
        assert!(alias.ptr_eq(&first), "lifo {lifo}");
    }
}

#[test]
fn thaw_lifo_failures_fail_the_decode_and_free_what_was_read() {
    let doc = siblings();
    let mut dec = Decoder::new(DecoderOptions::new().thaw_order(ThawOrder::Perl5004));
    let calls = Arc::new(Mutex::new(0));
    let n = calls.clone();
    dec.on_thaw_shared("P", move |_, _| {
        *n.lock().unwrap() += 1;
        Err(sereal::Error::new(sereal::ErrorKind::Callback("no".into())))
    });
    let err = dec.decode(&doc).unwrap_err();
    assert!(
        matches!(err.kind(), sereal::ErrorKind::Callback(m) if m.contains("'P'")),
        "{err}"
    );
    assert_eq!(
        *calls.lock().unwrap(),
        1,
        "the first failure stops the THAWs"
    );
    // a non-reference for an object referred to again
    let mut dec = Decoder::new(DecoderOptions::new().thaw_order(ThawOrder::Perl5004));
    dec.on_thaw_shared("P", |_, _| Ok(Value::from(1)));
    let err = dec.decode(&doc).unwrap_err();
    assert!(
        matches!(err.kind(), sereal::ErrorKind::Callback(m) if m.contains("non-reference")),
        "{err}"
    );
    // and the decoder is ready for the next document
    let (dec, _) = p_thawer(true);
    assert!(dec.decode(&doc).is_ok());
}

#[test]
fn thaw_lifo_on_a_frozen_object_that_contains_itself() {
    // $o's FREEZE data holds $o: a cycle through the frozen object
    let mut enc = p_freezer();
    let o = Ref::hash(Default::default()).blessed("P");
    o.hash_mut()
        .unwrap()
        .insert("v", Value::array([Value::Ref(o.clone())]));
    let doc = enc.encode(&Value::Ref(o.clone())).unwrap();
    Value::Ref(o).dismantle();
    for lifo in [true, false] {
        let (dec, steps) = p_thawer(lifo);
        let v = dec.decode(&doc).unwrap();
        assert_eq!(steps.lock().unwrap().len(), 1, "lifo {lifo}");
        assert_eq!(show(&v), "T", "lifo {lifo}");
        let weak = v.node().unwrap().downgrade();
        drop(v);
        assert!(weak.upgrade().is_none(), "lifo {lifo}: the document leaked");
    }
}

#[test]
fn thaw_lifo_frees_a_cycle_closed_through_a_thawed_object() {
    // [$o, $k] where $o's FREEZE data is $k and $k = [$o]: $k and the
    // array of $o's values are a cycle, which THAW's result holds
    let mut enc = p_freezer();
    let o = Ref::hash(Default::default()).blessed("P");
    let k = Ref::array(vec![Value::Ref(o.clone())]);
    o.hash_mut().unwrap().insert("v", Value::Ref(k.clone()));
    let root = Value::array([Value::Ref(o), Value::Ref(k)]);
    let doc = enc.encode(&root).unwrap();
    root.dismantle();
    for lifo in [true, false] {
        let (dec, _) = p_thawer(lifo);
        let v = dec.decode(&doc).unwrap();
        let t = v.at(0).unwrap().node().unwrap();
        assert_eq!(show(&Value::Ref(t.clone())), "T", "lifo {lifo}");
        let k = v.at(1).unwrap();
        // made inside the object's own data, the reference names the array
        // of its FREEZE values, in every order (as in Perl)
        let inner = k.at(0).unwrap().node().unwrap();
        assert!(!inner.ptr_eq(&t), "lifo {lifo}: {v:?}");
        assert!(
            inner.class().is_none() && inner.as_array().is_some(),
            "lifo {lifo}: {v:?}"
        );
        let weak = t.downgrade();
        drop((t, k, inner, v));
        assert!(weak.upgrade().is_none(), "lifo {lifo}: the document leaked");
    }
}

/// A label of a THAW call on [`perls_struct`]'s objects: the class, then
/// the first inside value if it is a string, or how many there are.
fn label(class: &str, data: &Value) -> String {
    let inside = data.get("inside").unwrap();
    let first = inside.at(0).unwrap();
    match first.as_str() {
        Some(s) => format!("{class}/{s}"),
        None => format!(
            "{class}/{}",
            inside.as_strong_ref().unwrap().as_array().unwrap().len()
        ),
    }
}

#[test]
fn perl_5003_order_thaws_as_perl_5003_does() {
    if !common::perl_sereal("perl_5003_order_thaws_as_perl_5003_does") {
        return;
    }
    let doc = freezer().encode(&perls_struct()).unwrap();
    // Perl's own decoder (the installed one) on our bytes: the THAW calls,
    // then the decoded structure written canonically (objects plainly)
    let hex: String = doc.iter().map(|b| format!("{b:02x}")).collect();
    let lines = common::perl_hex_lines(&format!(
        r#"
use Sereal::Encoder; use Sereal::Decoder;
my @steps;
for my $class (qw(FooInside FooOutside)) {{
    no strict 'refs';
    *{{"${{class}}::new"}} = sub {{
        my ($class, $attrs, @inside) = @_;
        return bless {{ attrs => {{ %{{ $attrs || {{}} }} }},
                       inside => {{ map {{ $_ => $inside[$_] }} 0 .. $#inside }} }}, $class;
    }};
    *{{"${{class}}::THAW"}} = sub {{
        my ($class, $serializer, @data) = @_;
        my $i = $data[0]{{inside}};
        push @steps, $class . '/' . (ref $i->[0] ? scalar(@$i) : $i->[0]);
        return $class->new($data[0]{{attrs}}, @{{ $i || [] }});
    }};
}}
my $dec = Sereal::Decoder::decode_sereal(pack('H*', '{hex}'));
print unpack('H*', join(',', @steps)), "\n";
print unpack('H*', Sereal::Encoder::encode_sereal($dec, {{ canonical => 1 }})), "\n";
"#
    ));
    let perl_steps = String::from_utf8(lines[0].clone()).unwrap();
    let (dec, steps) = thawer_noting(DecoderOptions::new().thaw_order(ThawOrder::Perl5003), label);
    let back = dec.decode(&doc).unwrap();
    assert_eq!(steps.lock().unwrap().join(","), perl_steps);
    assert_eq!(
        perl_steps,
        "FooOutside/2,FooOutside/1,FooInside/fourth/inner,FooInside/second/not_frozen,FooInside/should_be_first"
    );
    let ours = Encoder::new(EncoderOptions::new().canonical(true))
        .unwrap()
        .encode(&back)
        .unwrap();
    assert!(ours == lines[1], "Perl 5.003 built another structure");
}

#[test]
fn a_thaw_that_drops_a_cycle_in_its_values_leaks_nothing() {
    // Found by the `thaw` fuzz target under LeakSanitizer: a frozen object
    // whose values are [a reference to its own array of values, [extra]],
    // and a THAW that keeps only the last value. The self-referencing array
    // is then out of the root's reach; the document frees it when dropped
    // (`.ci/run` runs this under LeakSanitizer, which would report it).
    let doc = b"=\xF3rl\x05\x00\x32\x66Frozen\x28\xab\x02\x29\x0a\x28\x2b\x01\x65extra";
    for o in [
        ThawOrder::Immediate,
        ThawOrder::Perl5004,
        ThawOrder::Perl5003,
    ] {
        let mut dec = Decoder::new(DecoderOptions::new().thaw_order(o));
        dec.on_thaw("Frozen", |_, mut vals| Ok(vals.pop().unwrap_or_default()));
        let v = dec.decode(doc).unwrap();
        assert_eq!(*v, Value::array(["extra"]), "{o:?}");
        drop(v);
    }
}
