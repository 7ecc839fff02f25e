//! Perl objects through serde: `sereal::Blessed<T>`, `PerlClass` with
//! `#[serde(with = "sereal::blessed")]`, and a `Value` field keeping its
//! class; read from what Perl writes and written back for Perl's decoder,
//! by the byte path and the graph path alike.

mod common;

use serde::{Deserialize, Serialize};
use sereal::{Blessed, PerlClass, Value};

#[derive(Serialize, Deserialize, Clone, PartialEq, Debug)]
struct Prefs {
    theme: String,
    size: u32,
}

impl PerlClass for Prefs {
    const CLASS: &'static str = "My::Prefs";
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Record {
    name: String,
    prefs: Blessed<Prefs>,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct WithClass {
    name: String,
    #[serde(with = "sereal::blessed")]
    prefs: Prefs,
}

#[derive(Serialize, Deserialize, Debug)]
struct WithValue {
    name: String,
    prefs: Value,
}

fn prefs() -> Prefs {
    Prefs {
        theme: "dark".into(),
        size: 3,
    }
}

/// The bytes Perl's encoder writes for the Perl expression `expr`.
fn perl_writes(expr: &str) -> Vec<u8> {
    let script = format!(
        "use strict; use warnings; use Sereal::Encoder;\n\
         my $v = {expr};\n\
         print unpack('H*', Sereal::Encoder->new->encode($v));\n"
    );
    common::unhex(std::str::from_utf8(&common::perl_output(&script)).unwrap())
}

/// What Perl prints for `expr` (over `$v`, the decoding of `bytes`).
fn perl_reads(bytes: &[u8], expr: &str) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let script = format!(
        "use strict; use warnings; use Sereal::Decoder;\n\
         my $v = Sereal::Decoder->new->decode(pack('H*', '{hex}'));\n\
         print {expr};\n"
    );
    String::from_utf8(common::perl_output(&script)).unwrap()
}

const ONE: &str = r#"bless({theme => "dark", size => 3}, "My::Prefs")"#;
const RECORDS: &str = r#"do { my $p = bless({theme => "dark", size => 3}, "My::Prefs");
    [{name => "ann", prefs => $p}, {name => "bob", prefs => $p},
     {name => "cy", prefs => bless({theme => "light", size => 5}, "My::Prefs")}] }"#;

#[test]
fn a_perl_object_reads_as_blessed_and_goes_back_blessed() {
    if !common::perl_sereal("Blessed<Prefs> from and to Perl") {
        return;
    }
    let perl_bytes = perl_writes(ONE);
    let p: Blessed<Prefs> = sereal::from_slice(&perl_bytes).unwrap();
    assert_eq!(p.class(), "My::Prefs");
    assert_eq!(*p.value(), prefs());
    let back = sereal::to_vec(&p).unwrap();
    let seen = perl_reads(&back, r#"ref($v) . " " . $v->{theme} . " " . $v->{size}"#);
    assert_eq!(seen, "My::Prefs dark 3");
    // A typed stream and the graph read it alike.
    let mut stream = sereal::Deserializer::from_slice(&perl_bytes).into_iter::<Blessed<Prefs>>();
    assert_eq!(stream.next().unwrap().unwrap(), p);
    let graph = sereal::decode(&perl_bytes).unwrap();
    assert_eq!(sereal::from_value::<Blessed<Prefs>, _>(&graph).unwrap(), p);
}

#[test]
fn records_with_objects_read_every_way_and_go_back_blessed() {
    if !common::perl_sereal("records of objects from and to Perl") {
        return;
    }
    // The first object is shared: Perl writes a REFP to it the second time,
    // and the third object's class is an OBJECTV.
    let perl_bytes = perl_writes(RECORDS);
    let check = "join ',', map { ref($_->{prefs}) . ':' . $_->{prefs}{theme} } @$v";
    let want = "My::Prefs:dark,My::Prefs:dark,My::Prefs:light";

    let records: Vec<Record> = sereal::from_slice(&perl_bytes).unwrap();
    assert!(records.iter().all(|r| r.prefs.class() == "My::Prefs"));
    assert_eq!(records[1].prefs.theme, "dark");
    assert_eq!(perl_reads(&sereal::to_vec(&records).unwrap(), check), want);

    let with_class: Vec<WithClass> = sereal::from_slice(&perl_bytes).unwrap();
    assert_eq!(with_class[0].prefs, prefs());
    assert_eq!(
        perl_reads(&sereal::to_vec(&with_class).unwrap(), check),
        want
    );

    let values: Vec<WithValue> = sereal::from_slice(&perl_bytes).unwrap();
    for v in &values {
        let node = v.prefs.node().expect("a reference");
        assert_eq!(node.class().unwrap().as_bytes(), b"My::Prefs");
    }
    assert_eq!(perl_reads(&sereal::to_vec(&values).unwrap(), check), want);

    // The graph path reads the decoded graph as the bytes read.
    let graph = sereal::decode(&perl_bytes).unwrap();
    assert_eq!(
        sereal::from_value::<Vec<Record>, _>(&graph).unwrap(),
        records
    );
    let from_graph: Vec<WithValue> = sereal::from_value(&graph).unwrap();
    assert_eq!(from_graph[2].prefs, values[2].prefs);
    // to_value gives what decoding to_vec's bytes gives.
    let built = sereal::to_value(&records).unwrap();
    assert_eq!(
        built,
        sereal::decode(&sereal::to_vec(&records).unwrap()).unwrap()
    );
    assert_eq!(perl_reads(&sereal::encode(&built).unwrap(), check), want);
}

#[test]
fn a_value_read_whole_keeps_every_class() {
    if !common::perl_sereal("Value with objects from and to Perl") {
        return;
    }
    let perl_bytes = perl_writes(RECORDS);
    let v: Value = sereal::from_slice(&perl_bytes).unwrap();
    let back = sereal::to_vec(&v).unwrap();
    let check = "join ',', map { ref($_->{prefs}) } @$v";
    assert_eq!(perl_reads(&back, check), "My::Prefs,My::Prefs,My::Prefs");
    // Blessed scalars and arrays too.
    let odd = perl_writes(r#"[bless(\(my $x = 7), "Id"), bless([1, 2], "Pair")]"#);
    let v: Value = sereal::from_slice(&odd).unwrap();
    assert_eq!(v, sereal::decode(&odd).unwrap());
    let seen = perl_reads(&sereal::to_vec(&v).unwrap(), r#"join ',', map { ref } @$v"#);
    assert_eq!(seen, "Id,Pair");
    let typed: (Blessed<u8>, Blessed<Vec<u8>>) = sereal::from_slice(&odd).unwrap();
    assert_eq!((typed.0.class(), *typed.0), ("Id", 7));
    assert_eq!(
        (typed.1.class(), typed.1.value().clone()),
        ("Pair", vec![1, 2])
    );
    let seen = perl_reads(
        &sereal::to_vec(&typed).unwrap(),
        r#"ref($v->[0]) . ${$v->[0]}"#,
    );
    assert_eq!(seen, "Id7");
}

#[test]
fn round_trips_without_perl() {
    let p = Blessed::new("My::Prefs", prefs());
    let bytes = sereal::to_vec(&p).unwrap();
    assert_eq!(sereal::from_slice::<Blessed<Prefs>>(&bytes).unwrap(), p);
    let read: Blessed<Prefs> = sereal::from_reader(&bytes[..]).unwrap();
    assert_eq!(read, p);
    let mut stream = sereal::Deserializer::from_reader(&bytes[..]).into_iter::<Blessed<Prefs>>();
    assert_eq!(stream.next().unwrap().unwrap(), p);
    // Two objects of one class: the second names the first's class.
    let two = vec![p.clone(), Blessed::new("My::Prefs", prefs())];
    let bytes = sereal::to_vec(&two).unwrap();
    assert_eq!(
        bytes.iter().filter(|&&b| b == 0x2d).count(),
        1,
        "one OBJECTV"
    );
    assert_eq!(
        sereal::from_slice::<Vec<Blessed<Prefs>>>(&bytes).unwrap(),
        two
    );
    // With sort_keys, values are written apart: no OBJECTV, still objects.
    let opts = sereal::ser::SerializerOptions::default().sort_keys(true);
    let rec = Record {
        name: "ann".into(),
        prefs: p.clone(),
    };
    let sorted = sereal::to_vec_with(&vec![&rec, &rec], opts).unwrap();
    assert_eq!(sereal::from_slice::<Vec<Record>>(&sorted).unwrap()[1], rec);
    // The graph path agrees with the byte path, both ways.
    let bytes = sereal::to_vec(&rec).unwrap();
    assert_eq!(
        sereal::to_value(&rec).unwrap(),
        sereal::decode(&bytes).unwrap()
    );
    let graph = sereal::decode(&bytes).unwrap();
    assert_eq!(sereal::from_value::<Record, _>(&graph).unwrap(), rec);
    for value in [
        sereal::from_value::<Value, _>(&graph).unwrap(),
        sereal::from_slice::<Value>(&bytes).unwrap(),
    ] {
        let class = value.get("prefs").unwrap().node().unwrap().class().unwrap();
        assert_eq!(class.as_bytes(), b"My::Prefs");
        // (`Value`'s serde reads ASCII text as byte strings.)
        let size = |v: &Value| v.get("prefs").unwrap().get("size").unwrap();
        assert_eq!(size(&value), size(&graph));
    }
}

#[test]
fn options_and_unblessed_values() {
    let plain = sereal::to_vec(&prefs()).unwrap();
    let err = sereal::from_slice::<Blessed<Prefs>>(&plain).unwrap_err();
    assert!(err.to_string().contains("not blessed"), "{err}");
    let graph = sereal::decode(&plain).unwrap();
    let err = sereal::from_value::<Blessed<Prefs>, _>(&graph).unwrap_err();
    assert!(err.to_string().contains("not blessed"), "{err}");
    // Option<Blessed<T>>: undef is None, an object Some.
    let undef = sereal::to_vec(&()).unwrap();
    assert_eq!(
        sereal::from_slice::<Option<Blessed<Prefs>>>(&undef).unwrap(),
        None
    );
    let obj = sereal::to_vec(&Blessed::new("My::Prefs", prefs())).unwrap();
    let some: Option<Blessed<Prefs>> = sereal::from_slice(&obj).unwrap();
    assert_eq!(some.unwrap().class(), "My::Prefs");
    // Blessed<Option<T>>: the referent may be undef (a blessed reference
    // to undef).
    let none = Blessed::new("Maybe", None::<u8>);
    let bytes = sereal::to_vec(&none).unwrap();
    assert_eq!(
        sereal::from_slice::<Blessed<Option<u8>>>(&bytes).unwrap(),
        none
    );
    let full: Blessed<Option<Prefs>> = sereal::from_slice(&obj).unwrap();
    assert_eq!(full.value().as_ref(), Some(&prefs()));
    // A fixed class must match.
    let other = sereal::to_vec(&Blessed::new("Other", prefs())).unwrap();
    #[derive(Deserialize, Debug)]
    struct Field {
        #[serde(with = "sereal::blessed")]
        #[allow(dead_code)]
        p: Prefs,
    }
    let rec = sereal::to_vec(&std::collections::BTreeMap::from([(
        "p",
        Blessed::new("Other", prefs()),
    )]))
    .unwrap();
    let err = sereal::from_slice::<Field>(&rec).unwrap_err();
    assert!(err.to_string().contains("class Other"), "{err}");
    assert!(sereal::from_slice::<Blessed<Prefs>>(&other).is_ok());
    // refuse_objects refuses them.
    let opts = sereal::DecoderOptions::new().refuse_objects(true);
    assert!(sereal::from_slice_with::<Blessed<Prefs>>(&obj, opts).is_err());
}

#[test]
fn serde_json_sees_a_struct_and_a_value_unchanged() {
    let p = Blessed::new("My::Prefs", prefs());
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(
        json,
        r#"{"class":"My::Prefs","value":{"theme":"dark","size":3}}"#
    );
    assert_eq!(serde_json::from_str::<Blessed<Prefs>>(&json).unwrap(), p);
    // A blessed Value keeps today's JSON: its referent.
    let v = sereal::decode(&sereal::to_vec(&p).unwrap())
        .unwrap()
        .into_value();
    assert_eq!(
        serde_json::to_string(&v).unwrap(),
        r#"{"theme":"dark","size":3}"#
    );
    let from_json: Value = serde_json::from_str(r#"{"a":[1]}"#).unwrap();
    assert_eq!(from_json, Value::hash([("a", Value::array([1]))]));
}

#[test]
fn a_frozen_object_reads_as_its_class_and_freeze_values() {
    if !common::perl_sereal("a FREEZE object as Blessed") {
        return;
    }
    let script = r#"use strict; use warnings; use Sereal::Encoder;
        package Rec { sub FREEZE { return ($_[0]{id}, $_[0]{name}) } }
        my $v = [bless({id => 7, name => "ann"}, "Rec")];
        print unpack('H*', Sereal::Encoder->new({freeze_callbacks => 1})->encode($v));"#;
    let bytes = common::unhex(std::str::from_utf8(&common::perl_output(script)).unwrap());
    let recs: Vec<Blessed<(u32, String)>> = sereal::from_slice(&bytes).unwrap();
    assert_eq!(recs, [Blessed::new("Rec", (7, "ann".to_string()))]);
    let graph = sereal::decode(&bytes).unwrap();
    assert_eq!(
        sereal::from_value::<Vec<Blessed<(u32, String)>>, _>(&graph).unwrap(),
        recs
    );
    let v: Value = sereal::from_slice(&bytes).unwrap();
    let rec = v.at(0).unwrap().node().unwrap();
    assert_eq!(rec.class().unwrap().as_bytes(), b"Rec");
    assert_eq!(rec.as_array().unwrap().len(), 2);
}

#[test]
fn hostile_chains_of_objects_end_in_an_error_not_a_crash() {
    // OBJECT "C" REFN, 100,000 times, then undef: past any depth limit.
    let mut doc = b"=\xf3rl\x05\x00".to_vec();
    for _ in 0..100_000 {
        doc.extend_from_slice(&[0x2c, 0x41, b'C', 0x28]);
    }
    doc.push(0x25);
    assert!(sereal::from_slice::<Value>(&doc).is_err());
    assert!(sereal::from_slice::<Blessed<Value>>(&doc).is_err());
    // Objects of objects (OBJECT right after OBJECT), as deep.
    let mut doc = b"=\xf3rl\x05\x00".to_vec();
    for _ in 0..100_000 {
        doc.extend_from_slice(&[0x2c, 0x41, b'C']);
    }
    doc.push(0x50); // HASHREF_0
    assert!(sereal::from_slice::<Value>(&doc).is_err());
}

#[test]
fn a_blessed_blessed_value_is_written_and_refused_plainly() {
    let inner = Blessed::new("In", vec![1u8]);
    let outer = Blessed::new("Out", inner.clone());
    let bytes = sereal::to_vec(&outer).unwrap();
    // Perl's view: a blessed reference to an object.
    let v = sereal::decode(&bytes).unwrap();
    assert_eq!(v.node().unwrap().class().unwrap().as_bytes(), b"Out");
    let err = sereal::from_slice::<Blessed<Blessed<Vec<u8>>>>(&bytes).unwrap_err();
    assert!(err.to_string().contains("directly inside"), "{err}");
    // The inner object reads as a Value, blessed.
    let b: Blessed<Value> = sereal::from_slice(&bytes).unwrap();
    assert_eq!(b.class(), "Out");
}
