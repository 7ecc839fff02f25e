//! serde deserialization of graphs with weak references: a weak reference
//! back into the path being read (Perl's parent/child links) reads as a
//! missing value; one to a node elsewhere reads through. Perl-written
//! documents are checked too when Perl's Sereal is installed (skipped with a
//! notice otherwise).

use serde::Deserialize;
use sereal::{encode, from_slice, Ref, Value};
use std::collections::BTreeMap;
use std::process::Command;

fn perl_available() -> bool {
    let ok = Command::new("perl")
        .args(["-MSereal::Encoder", "-e1"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("NOTICE: Perl's Sereal::Encoder is not installed; skipping the Perl part");
    }
    ok
}

fn perl_bytes(script: &str) -> Vec<u8> {
    let out = Command::new("perl")
        .args(["-MSereal::Encoder", "-MScalar::Util=weaken", "-e", script])
        .output()
        .expect("perl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Perl's `my $p = {name => "p"}; $p->{kid} = {up => $p}; weaken($p->{kid}{up})`.
fn parent_child() -> Value {
    let p = Ref::hash([("name", Value::from("p"))].into_iter().collect());
    let kid = Value::hash([("up", Value::weak(&p))]);
    p.hash_mut().unwrap().insert("kid", kid);
    Value::Ref(p)
}

#[derive(Deserialize, Debug, PartialEq)]
struct Kid {
    up: Option<Box<Parent>>,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Parent {
    name: String,
    kid: Kid,
}

#[derive(Deserialize, Debug, PartialEq)]
struct ParentNoKid {
    name: String,
}

#[derive(Deserialize, Debug, PartialEq)]
struct KidUnit {
    up: (),
}

#[derive(Deserialize, Debug, PartialEq)]
struct ParentUnit {
    kid: KidUnit,
}

fn check_parent_child(doc: &[u8]) {
    let p: Parent = from_slice(doc).unwrap();
    assert_eq!(
        p,
        Parent {
            name: "p".into(),
            kid: Kid { up: None }
        }
    );
    let p: ParentNoKid = from_slice(doc).unwrap();
    assert_eq!(p.name, "p");
    let p: ParentUnit = from_slice(doc).unwrap();
    assert_eq!(p.kid.up, ());
    let v: Value = from_slice(doc).unwrap();
    assert_eq!(
        v,
        Value::hash([
            ("name", Value::from("p")),
            ("kid", Value::hash([("up", Value::Undef)]))
        ])
    );
    let j: serde_json::Value = from_slice(doc).unwrap();
    assert_eq!(j, serde_json::json!({"name": "p", "kid": {"up": null}}));
    let _: serde::de::IgnoredAny = from_slice(doc).unwrap();
}

#[test]
fn weak_reference_back_to_the_parent_reads_as_missing() {
    let g = parent_child();
    let doc = encode(&g).unwrap();
    check_parent_child(&doc);
    g.dismantle();
}

#[test]
fn weak_reference_back_to_the_parent_from_perl() {
    if !perl_available() {
        return;
    }
    let doc = perl_bytes(
        r#"my $p = {name => "p"}; $p->{kid} = {up => $p}; weaken($p->{kid}{up});
           binmode STDOUT; print Sereal::Encoder->new({canonical => 1})->encode($p)"#,
    );
    check_parent_child(&doc);
    // A weak reference in an array, to the array: `[1, \@self]`.
    let doc = perl_bytes(
        r#"my $a = [1]; push @$a, $a; weaken($a->[1]);
           binmode STDOUT; print Sereal::Encoder->new->encode($a)"#,
    );
    let v: (u8, Option<Vec<u8>>) = from_slice(&doc).unwrap();
    assert_eq!(v, (1, None));
    let j: serde_json::Value = from_slice(&doc).unwrap();
    assert_eq!(j, serde_json::json!([1, null]));
}

#[test]
fn weak_reference_elsewhere_reads_through() {
    // [{x => 1}, weak ref to that hash]: the hash is not on the path when
    // the weak reference is read.
    let h = Ref::hash([("x", Value::from(1))].into_iter().collect());
    let g = Value::array([Value::Ref(h.clone()), Value::weak(&h)]);
    let doc = encode(&g).unwrap();
    let j: serde_json::Value = from_slice(&doc).unwrap();
    assert_eq!(j, serde_json::json!([{"x": 1}, {"x": 1}]));
    let v: Vec<BTreeMap<String, u8>> = from_slice(&doc).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[1]["x"], 1);
    if perl_available() {
        let doc = perl_bytes(
            r#"my $h = {x => 1}; my $a = [$h, $h]; weaken($a->[1]);
               binmode STDOUT; print Sereal::Encoder->new->encode($a)"#,
        );
        let j: serde_json::Value = from_slice(&doc).unwrap();
        assert_eq!(j, serde_json::json!([{"x": 1}, {"x": 1}]));
    }
}
