//! The Value API in serde_json's manner: `sereal!`, `pointer`/`pointer_mut`,
//! `Display` in Perl's notation, pretty `Debug`, comparisons with Rust
//! scalars, strict `TryFrom`, and the crate's own borrow guards.

// `a == b && b == a` and `v == true` are the point here: both directions of
// each `PartialEq`, which clippy takes for redundancy.
#![allow(clippy::nonminimal_bool, clippy::bool_comparison)]

mod common;

use sereal::{sereal, Body, Borrowed, BorrowedMut, ErrorKind, Foreign, Hash, Ref, Value};

#[test]
fn the_brief_holds() {
    let mut v: Value =
        sereal!({"id": 1, "tags": ["a", "b"], "address": {"city": "Oslo"}, "none": null});
    assert!(v.pointer("/tags/1").unwrap() == "b");
    assert!(v.pointer("/id").unwrap() == 1);
    *v.pointer_mut("/address/city").unwrap() = Value::from("Bergen");
    assert!(format!("{v}").contains("'city' => 'Bergen'"));
    assert!(format!("{v:#?}").lines().count() > 3);
}

#[test]
fn sereal_macro_builds_references_as_perl_does() {
    let x = 4;
    let key = String::from("k");
    let v = sereal!({
        "n": x + 1,
        "yes": true,
        "no": false,
        "none": null,
        "nested": [[1, [2]], {"a": {}}, [],],
        (key.clone() + "2"): "expr key",
        key: 7,
    });
    // the hash and arrays are references, as Value::hash and Value::array
    let expected = Value::hash([
        ("n", Value::from(5)),
        ("yes", Value::from(true)),
        ("no", Value::from(false)),
        ("none", Value::Undef),
        (
            "nested",
            Value::array([
                Value::array([Value::from(1), Value::array([2])]),
                Value::hash([("a", Value::from(Hash::new()))]),
                Value::array(Vec::<Value>::new()),
            ]),
        ),
        ("k2", Value::from("expr key")),
        ("k", Value::from(7)),
    ]);
    assert_eq!(v, expected);
    assert!(matches!(&*v.as_strong_ref().unwrap().body(), Body::Hash(_)));
    // entries keep their order
    let keys: Vec<String> = v.as_hash().unwrap().keys().map(|k| k.to_string()).collect();
    assert_eq!(keys, ["n", "yes", "no", "none", "nested", "k2", "k"]);
    // scalars and values pass through Value::from
    assert_eq!(sereal!("s"), Value::from("s"));
    assert_eq!(sereal!(Some(2.5)), Value::Double(2.5));
    assert_eq!(sereal!([v.clone(), null]).at(0), Some(v));
}

#[test]
fn pointer_unescapes_and_checks_indices() {
    let v = sereal!({"a/b": {"m~n": 1}, "": {"": 2}, "list": [10, 11]});
    assert!(v.pointer("/a~1b/m~0n").unwrap() == 1);
    assert!(v.pointer("//").unwrap() == 2);
    assert!(v.pointer("/list/1").unwrap() == 11);
    for none in [
        "list", "/list/01", "/list/+1", "/list/2", "/list/x", "/a/b", "/nope/0",
    ] {
        assert!(v.pointer(none).is_none(), "{none}");
    }
    assert!(*v.pointer("").unwrap() == v);
    let root: Borrowed<'_, Value> = v.pointer("/list").unwrap();
    assert!(root.at(0).unwrap() == 10);
}

#[test]
fn pointer_walks_shared_and_cyclic_graphs() {
    let node = Ref::hash([("name", "loop")].into());
    node.hash_mut().unwrap().insert("self", Value::from(&node));
    node.hash_mut().unwrap().insert("up", Value::weak(&node));
    let shared = Ref::array(vec![Value::from("x")]);
    let mut v = Value::array([
        Value::from(&node),
        Value::from(&shared),
        Value::from(&shared),
    ]);
    assert!(v.pointer("/0/self/self/up/self/name").unwrap() == "loop");
    // a change through one path shows through the other and any handle
    let other = v.clone();
    *v.pointer_mut("/1/0").unwrap() = Value::from("y");
    assert!(v.pointer("/2/0").unwrap() == "y");
    assert!(other.pointer("/1/0").unwrap() == "y");
    assert!(shared.as_array().unwrap()[0] == "y");
    *v.pointer_mut("/0/self/up/name").unwrap() = Value::from("renamed");
    assert!(node.as_hash().unwrap()["name"] == "renamed");
    // a guard keeps its node alive on its own
    let guard = v.pointer("/1/0").unwrap();
    let mut other = other;
    *other.pointer_mut("/1").unwrap() = Value::Undef;
    *other.pointer_mut("/2").unwrap() = Value::Undef;
    let weak = shared.downgrade();
    drop(shared);
    assert!(weak.upgrade().is_some() && guard == "y");
    drop(guard);
    assert!(weak.upgrade().is_none());
    Value::from(&node).dismantle();
}

#[test]
fn pointer_mut_refuses_a_node_in_use() {
    let mut v = sereal!({"a": {"b": 1}, "c": {"d": 2}});
    let other = v.clone();
    let reading = other.pointer("/a/b").unwrap();
    assert!(v.pointer_mut("/a/b").is_none()); // the same node: refused
    assert!(v.pointer_mut("/c/d").is_some()); // another node: fine
    drop(reading);
    let held = other.get_ref("a").unwrap(); // the root hash borrowed
    assert!(v.pointer_mut("/a").is_none());
    assert!(v.pointer_mut("/a/b").is_some()); // its child node is free
    drop(held);
    let mut writing = v.pointer_mut("/a/b").unwrap();
    *writing = Value::from(3);
    assert!(other.pointer("/a/b").is_none()); // borrowed for writing
    assert!(other.pointer("/a").is_some());
    drop(writing);
    assert!(other.pointer("/a/b").unwrap() == 3);
    // the root itself is a plain borrow
    let mut root: BorrowedMut<'_, Value> = v.pointer_mut("").unwrap();
    *root = Value::from(0);
    drop(root);
    assert!(v == 0);
}

#[test]
fn guards_replace_cell_refs_and_follow_weak_references() {
    let r = Ref::hash([("k", 1)].into());
    let body: Borrowed<'_, Body> = r.body();
    let hash: Borrowed<'_, Hash> = r.as_hash().unwrap();
    assert!(r.hash_mut().is_err());
    drop((body, hash));
    let mut h: BorrowedMut<'_, Hash> = r.hash_mut().unwrap();
    h.insert("k", 2);
    drop(h);
    let weak = Value::weak(&r);
    assert!(weak.get("k").unwrap() == 2);
    assert!(weak.get_ref("k").unwrap() == 2);
    assert_eq!(weak.as_hash().unwrap().len(), 1);
    let mapped = Borrowed::map(weak.as_hash().unwrap(), |h| &h["k"]);
    assert!(mapped == 2);
    assert!(Borrowed::filter_map(r.body(), |b| match b {
        Body::Array(a) => Some(a),
        _ => None,
    })
    .is_err());
}

/// Every variant, printed on one line and then as `sereal show` does.
#[test]
fn display_prints_perl_notation_for_every_variant() {
    let cases: Vec<(Value, &str)> = vec![
        (Value::Undef, "undef"),
        (Value::CanonicalUndef, "undef"),
        (Value::Bool(true), "!!1"),
        (Value::True, "!!1"),
        (Value::False, "!!0"),
        (Value::Int(-3), "-3"),
        (Value::Int(12345678901), "'12345678901'"),
        (Value::UInt(u64::MAX), "'18446744073709551615'"),
        (Value::Float(1.5), "'1.5'"),
        (Value::Double(0.1), "'0.1'"),
        (Value::Double(1e20), "'1e+20'"),
        (
            Value::LongDouble(Box::new([0; 16])),
            "'0x00000000000000000000000000000000'",
        ),
        (Value::from("O'Brien"), r"'O\'Brien'"),
        (Value::bytes([b'a', 0xE9, b'\n']), r#""a\x{e9}\n""#),
        (Value::utf8("Zoë $x"), r#""Zoë \$x""#),
        (sereal!([1, [2], {}]), "[1,[2],{}]"),
        (
            sereal!({"b": 1, "a b": [null]}),
            "{'a b' => [undef],'b' => 1}",
        ),
        (Value::scalar_ref(5), r"\5"),
        (Value::from(Ref::regexp("a/b", "i")), r"qr/a\/b/i"),
        (
            Value::from(Ref::array(vec![]).blessed("K")),
            "bless( [], 'K' )",
        ),
        (
            Value::from(Ref::scalar(7).blessed("B")),
            r"bless( do{\(my $o = 7)}, 'B' )",
        ),
        (Value::Foreign(Foreign::new(1u8)), "undef"),
    ];
    for (v, want) in &cases {
        assert_eq!(v.to_string(), *want, "{v:?}");
    }
    let shared = Ref::hash([("n", 1)].into());
    let cyc = Ref::hash(Hash::new());
    cyc.hash_mut().unwrap().insert("s", Value::from(&cyc));
    let cell = Ref::scalar("x");
    let v = Value::array([
        Value::from(&shared),
        Value::from(&shared),
        Value::from(&cyc),
        Value::weak(&shared),
        Value::Alias(cell.clone()),
        Value::Alias(cell),
    ]);
    let one_line = "[{'n' => 1},$VAR1->[0],{'s' => $VAR1->[2]},$VAR1->[0],'x',$VAR1->[4]]";
    assert_eq!(v.to_string(), one_line);
    let pretty =
        "$VAR1 = [\n  {\n    'n' => 1\n  },\n  $VAR1->[0],\n  {\n    's' => $VAR1->[2]\n  },\n  \
                  $VAR1->[0], # weak\n  'x', # alias\n  $VAR1->[4] # alias\n];";
    assert_eq!(format!("{:#}", v.dumper().var("$VAR1")), pretty);
    let doc = sereal::decode(&sereal::encode(&sereal!({"a": [1]})).unwrap()).unwrap();
    assert_eq!(doc.to_string(), "{'a' => [1]}");
    // `cyc` holds itself strongly; emptying it frees the cycle.
    cyc.hash_mut().unwrap().clear();
}

/// The one-line and multi-line forms are what Data::Dumper prints, with
/// `Indent = 0` and `Indent = 1` (the latter is what `sereal show` prints).
#[test]
fn display_matches_data_dumper() {
    if !common::perl_sereal("Display against Data::Dumper") {
        return;
    }
    let shared = Ref::hash([("name", "admins")].into());
    let cyc = Ref::hash(Hash::new());
    cyc.hash_mut().unwrap().insert("self", Value::from(&cyc));
    let v = Value::array([
        Value::from(
            Ref::hash([("id", Value::from(1)), ("group", Value::from(&shared))].into())
                .blessed("My::User"),
        ),
        Value::from(&shared),
        Value::from(&cyc),
        Value::scalar_ref(5),
        Value::from(Ref::regexp("a/b+", "i")),
        sereal!({"a b": 1, "12": [], "n": -1234567890, "u": null, "f": 1.5, "s": "back\\slash"}),
        Value::from(Ref::scalar(7).blessed("Boxed")),
        Value::Double(1.0 / 3.0),
    ]);
    let hex: String = sereal::encode(&v)
        .unwrap()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for (indent, ours) in [
        (0, format!("{}\n", v.dumper().var("$VAR1"))),
        (1, format!("{:#}\n", v.dumper().var("$VAR1"))),
    ] {
        let perl = common::perl_output(&format!(
            r#"use Sereal::Decoder qw(decode_sereal); use Data::Dumper;
            $Data::Dumper::Indent = {indent}; $Data::Dumper::Sortkeys = 1;
            print Dumper(decode_sereal(pack("H*", "{hex}"))), "{nl}";"#,
            nl = if indent == 0 { "\\n" } else { "" }
        ));
        assert_eq!(ours, String::from_utf8(perl).unwrap(), "Indent = {indent}");
    }
    cyc.hash_mut().unwrap().clear();
}

#[test]
fn pretty_debug_prints_one_item_per_line() {
    let v = sereal!({"a": [1, {"b": null}], "e": []});
    assert_eq!(format!("{v:?}"), r#"{"a": [1, {"b": undef}], "e": []}"#);
    let want = "{\n    \"a\": [\n        1,\n        {\n            \"b\": undef,\n        },\n    ],\n    \"e\": [],\n}";
    assert_eq!(format!("{v:#?}"), want);
    // sharing labels survive the pretty form
    let s = Ref::array(vec![]);
    let w = Value::array([Value::from(&s), Value::from(&s)]);
    assert_eq!(format!("{w:#?}"), "[\n    #1=[],\n    #1#,\n]");
}

#[test]
fn values_compare_with_rust_scalars_both_ways() {
    let (i, u, f, t) = (
        Value::from(-7),
        Value::UInt(u64::MAX),
        Value::Double(0.5),
        Value::True,
    );
    assert!(i == -7i64 && -7i64 == i && i == -7i32 && -7i32 == i && i != 7u64);
    assert!(
        u == u64::MAX
            && u64::MAX == u
            && i != 7u32
            && Value::from(7) == 7u32
            && 7u32 == Value::from(7)
    );
    assert!(f == 0.5 && 0.5 == f && Value::from(2) == 2.0 && Value::from("2") != 2);
    assert!(t == true && true == t && Value::Bool(false) == false && Value::from(1) != true);
    let s = Value::from("ann");
    assert!(s == "ann" && "ann" == s && s == *"ann" && *"ann" == s);
    let owned = String::from("ann");
    assert!(s == owned && owned == s && s != "bob");
    assert!(Value::utf8("ann") == "ann" && Value::from(1) != "1");
    let v = sereal!({"n": 3, "s": "x"});
    let h = v.as_hash().unwrap();
    assert!(h.get("n").unwrap() == 3 && h.get("s").unwrap() == "x"); // &Value
    drop(h);
    let g = v.get_ref("n").unwrap();
    assert!(g == 3 && 3 == g && 3i64 == g && 3.0 == g && "x" == v.pointer("/s").unwrap());
}

#[test]
fn try_from_is_strict() {
    assert_eq!(i64::try_from(Value::from(-2)).unwrap(), -2);
    assert_eq!(u64::try_from(&Value::UInt(u64::MAX)).unwrap(), u64::MAX);
    assert_eq!(f64::try_from(Value::from(2)).unwrap(), 2.0);
    assert!(bool::try_from(Value::False).is_ok_and(|b| !b));
    assert_eq!(String::try_from(Value::utf8("é")).unwrap(), "é");
    assert_eq!(
        Vec::<u8>::try_from(&Value::bytes([0, 255])).unwrap(),
        [0, 255]
    );
    assert_eq!(i64::try_from(Value::Alias(Ref::scalar(9))).unwrap(), 9);
    let wrong = |e: sereal::Error| matches!(e.kind(), ErrorKind::WrongBody(_));
    assert!(wrong(i64::try_from(Value::from("1")).unwrap_err()));
    assert!(wrong(i64::try_from(Value::UInt(u64::MAX)).unwrap_err()));
    assert!(wrong(u64::try_from(Value::from(-1)).unwrap_err()));
    assert!(wrong(f64::try_from(Value::from("1.5")).unwrap_err()));
    assert!(wrong(bool::try_from(Value::from(1)).unwrap_err()));
    assert!(wrong(String::try_from(Value::from(1)).unwrap_err()));
    assert!(wrong(Vec::<u8>::try_from(sereal!([])).unwrap_err()));
    let bad = Value::Utf8(sereal::Str::new(&[0xFF]));
    assert_eq!(
        String::try_from(bad).unwrap_err().kind(),
        &ErrorKind::InvalidUtf8
    );
}
