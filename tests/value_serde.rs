//! `from_value` and `to_value` work on the graph directly: what they give
//! must be what a round trip through bytes gives (`from_slice` of the
//! graph's encoding, `decode` of `to_vec`'s output), values, errors and
//! Perl-visible flags alike.

use serde::{Deserialize, Serialize};
use sereal::{decode, to_value, to_vec, Value};
use std::collections::{BTreeMap, HashMap};

mod common;
use common::Rng;

/// `to_value(x)` must be what decoding `to_vec(x)` gives: equal, with the
/// same variants (Perl-visible flags: integer, float, UTF-8 string); and
/// where one fails the other must.
fn same_as_bytes<T: Serialize + ?Sized + std::fmt::Debug>(x: &T) -> Option<Value> {
    let direct = to_value(x);
    let through = to_vec(x).and_then(|b| decode(&b)).map(|d| d.into_value());
    match (direct, through) {
        (Ok(a), Ok(b)) => {
            assert!(a == b, "{x:?}: {a:?} != {b:?}");
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{x:?}");
            assert_eq!(flags(&a), flags(&b), "{x:?}");
            Some(a)
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.kind(), b.kind(), "{x:?}");
            None
        }
        (a, b) => panic!("{x:?}: to_value {a:?}, through bytes {b:?}"),
    }
}

/// The variants of every scalar in a tree, in order, keys' UTF-8 flags
/// included.
fn flags(v: &Value) -> String {
    let mut out = String::new();
    let mut stack = vec![v.clone()];
    while let Some(v) = stack.pop() {
        let name = match &v {
            Value::Ref(r) => {
                match &*r.body() {
                    sereal::Body::Array(a) => stack.extend(a.iter().rev().cloned()),
                    sereal::Body::Hash(h) => {
                        for (k, x) in h.iter() {
                            out.push_str(if k.is_utf8() { "k8 " } else { "kb " });
                            stack.push(x.clone());
                        }
                    }
                    sereal::Body::Scalar(x) => stack.push(x.clone()),
                    _ => {}
                }
                "ref"
            }
            Value::Int(_) => "int",
            Value::UInt(_) => "uint",
            Value::Float(_) => "float",
            Value::Double(_) => "double",
            Value::Bytes(_) => "bytes",
            Value::Utf8(_) => "utf8",
            Value::Bool(_) => "bool",
            Value::Undef => "undef",
            other => return format!("{out} {other:?}"),
        };
        out.push_str(name);
        out.push(' ');
    }
    out
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Shape {
    Dot,
    Circle(f64),
    Pair(i32, String),
    Rect { w: u16, h: u16 },
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Unit;

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Meters(f32);

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Record {
    id: u64,
    name: String,
    nick: Option<String>,
    shapes: Vec<Shape>,
    by_id: BTreeMap<i32, String>,
    flags: BTreeMap<bool, u8>,
    chars: BTreeMap<char, i8>,
    unit: Unit,
    len: Meters,
    bytes: serde_bytes_like::Bytes,
    pair: (u8, i64),
    nothing: (),
}

/// A byte buffer that serializes as bytes (without a dependency on
/// serde_bytes).
mod serde_bytes_like {
    #[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
    pub struct Bytes(pub Vec<u8>);
    impl serde::Serialize for Bytes {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(&self.0)
        }
    }
    impl<'de> serde::Deserialize<'de> for Bytes {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
            Ok(Bytes(
                <super::common::Raw as serde::Deserialize>::deserialize(d)?.0,
            ))
        }
    }
}

/// Entries serialized as a map, in their order, whatever their key type.
#[derive(Debug)]
struct Pairs<K, V>(Vec<(K, V)>);

impl<K: Serialize, V: Serialize> Serialize for Pairs<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

fn record(i: u64) -> Record {
    Record {
        id: i,
        name: format!("name {i} é"),
        nick: i.is_multiple_of(2).then(|| "n".into()),
        shapes: vec![
            Shape::Dot,
            Shape::Circle(i as f64 / 3.0),
            Shape::Pair(-(i as i32), "p".into()),
            Shape::Rect { w: 1, h: 2 },
        ],
        by_id: [(-1, "a".into()), (i as i32, "b".into())].into(),
        flags: [(true, 1), (false, 0)].into(),
        chars: [('x', 1), ('ü', -2)].into(),
        unit: Unit,
        len: Meters(1.5),
        bytes: serde_bytes_like::Bytes(vec![0, 255, b'a']),
        pair: (7, i64::MIN),
        nothing: (),
    }
}

#[test]
fn to_value_gives_what_the_bytes_decode_to_for_every_shape() {
    same_as_bytes(&record(3));
    same_as_bytes(&());
    same_as_bytes(&Some(5u8));
    same_as_bytes(&None::<u8>);
    same_as_bytes(&'é');
    same_as_bytes(&"ascii");
    same_as_bytes(&u64::MAX);
    same_as_bytes(&i128::from(i64::MIN));
    same_as_bytes(&u128::from(u64::MAX));
    same_as_bytes(&(1.5f32, 0.1f64, 1.0f64, f64::NAN.to_bits(), -0.0f64));
    same_as_bytes(&[Shape::Dot, Shape::Circle(2.0)]);
    same_as_bytes(&HashMap::from([(1.5f64.to_string(), 1)]));
    same_as_bytes(&Pairs(vec![(Shape::Dot, 1)]));
    same_as_bytes(&Pairs(vec![(Unit, 1)]));
    same_as_bytes(&BTreeMap::from([(Some(3u8), 1)]));
    same_as_bytes(&BTreeMap::from([("é", 1), ("e", 2)]));
    same_as_bytes(&Pairs(vec![(1.5f64, 'x'), (1.0, 'y'), (-0.0, 'z')]));
    same_as_bytes(&Pairs(vec![(true, 1), (false, 2)]));
    same_as_bytes(&Pairs(vec![(1.5f32, 1)]));
    same_as_bytes(&Pairs(vec![(i128::MIN, 1)]));
    same_as_bytes(&vec![vec![0u8; 20]; 3]);
    same_as_bytes(&(0..40).collect::<Vec<u32>>());
}

#[test]
fn to_value_fails_where_the_serializer_or_the_decoder_does() {
    for bad in [
        same_as_bytes(&i128::MAX),
        same_as_bytes(&u128::MAX),
        same_as_bytes(&i128::MIN),
        same_as_bytes(&BTreeMap::from([(None::<u8>, 1)])),
        same_as_bytes(&BTreeMap::from([((), 1)])),
        same_as_bytes(&BTreeMap::from([(vec![1u8], 1)])),
        same_as_bytes(&BTreeMap::from([((1, 2), 1)])),
        same_as_bytes(&Pairs(vec![(Shape::Circle(1.0), 1)])),
        same_as_bytes(&Pairs(vec![(Shape::Rect { w: 1, h: 1 }, 1)])),
        same_as_bytes(&Pairs(vec![(1, 1), (1, 2)])),
        same_as_bytes(&BTreeMap::from([(serde_bytes_like::Bytes(vec![0xff]), 1)])),
    ] {
        assert!(bad.is_none());
    }
    // a key given twice: "1" from the integer and from the string
    #[derive(Serialize, Debug)]
    struct Twice {
        #[serde(flatten)]
        a: BTreeMap<u8, u8>,
        #[serde(flatten)]
        b: BTreeMap<String, u8>,
    }
    let twice = Twice {
        a: [(1, 1)].into(),
        b: [("1".into(), 2)].into(),
    };
    assert!(same_as_bytes(&twice).is_none());
    let e = to_value(&twice).unwrap_err();
    assert_eq!(e.kind(), &sereal::ErrorKind::DuplicateKey(b"1".to_vec()));
}

#[test]
fn to_value_refuses_nesting_past_the_serializers_depth() {
    // 10,000 levels: the serializer's limit (each Some(Box) of a list is a
    // level)
    #[derive(Serialize, Debug)]
    struct Deep(Vec<Deep>);
    let mut d = Deep(vec![]);
    for _ in 0..9_998 {
        d = Deep(vec![d]);
    }
    let run = move || {
        let ok = to_value(&d).is_ok();
        let d = Deep(vec![d]);
        let e = to_value(&d).unwrap_err();
        assert!(to_vec(&d).is_err());
        // drop iteratively: a derived Drop of 10,000 levels recurses
        let mut d = d;
        while let Some(inner) = d.0.pop() {
            d = inner;
        }
        (ok, e)
    };
    let (ok, e) = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
    assert!(ok);
    assert_eq!(e.kind(), &sereal::ErrorKind::DepthExceeded(10_000));
}

/// A random serde shape, as a `serde_json::Value` mixed with typed parts.
#[derive(Serialize, Debug)]
enum Random {
    Unit,
    Int(i64),
    UInt(u64),
    F32(f32),
    F64(f64),
    Str(String),
    Bytes(serde_bytes_like::Bytes),
    Char(char),
    Opt(Option<Box<Random>>),
    List(Vec<Random>),
    Tuple(Box<Random>, bool),
    Rec { a: Box<Random>, b: Option<u8> },
    IntKeys(BTreeMap<i32, Random>),
    StrKeys(BTreeMap<String, Random>),
    Shape(Shape),
    Plain(#[serde(with = "untagged")] Box<Random>),
}

/// Serializes the content without the variant's wrapper.
mod untagged {
    pub fn serialize<S: serde::Serializer>(v: &super::Random, s: S) -> Result<S::Ok, S::Error> {
        use serde::Serialize;
        match v {
            super::Random::List(l) => l.serialize(s),
            super::Random::Str(x) => x.serialize(s),
            other => other.serialize(s),
        }
    }
}

fn random(rng: &mut Rng, depth: usize) -> Random {
    let strings = ["", "a", "é", "0", "1", "long string past the inline bytes"];
    let pick = rng.below(if depth > 4 { 8 } else { 16 });
    match pick {
        0 => Random::Unit,
        1 => Random::Int(rng.next() as i64 >> rng.below(64)),
        2 => Random::UInt(rng.next() >> rng.below(64)),
        3 => Random::F32(f32::from_bits(rng.next() as u32)),
        4 => Random::F64([0.5, 0.1, -3.0, f64::INFINITY, 1e300][rng.below(5)]),
        5 => Random::Str(strings[rng.below(strings.len())].into()),
        6 => Random::Bytes(serde_bytes_like::Bytes(vec![
            rng.next() as u8;
            rng.below(30)
        ])),
        7 => Random::Char(['a', 'é', '\u{10FFFF}'][rng.below(3)]),
        8 => Random::Opt((rng.below(2) == 0).then(|| Box::new(random(rng, depth + 1)))),
        9 => Random::List((0..rng.below(20)).map(|_| random(rng, depth + 1)).collect()),
        10 => Random::Tuple(Box::new(random(rng, depth + 1)), rng.below(2) == 0),
        11 => Random::Rec {
            a: Box::new(random(rng, depth + 1)),
            b: (rng.below(2) == 0).then_some(rng.next() as u8),
        },
        12 => Random::IntKeys(
            (0..rng.below(5))
                .map(|_| (rng.next() as i32 >> 20, random(rng, depth + 1)))
                .collect(),
        ),
        13 => Random::StrKeys(
            (0..rng.below(5))
                .map(|_| {
                    let k = strings[rng.below(strings.len())].to_string();
                    (k, random(rng, depth + 1))
                })
                .collect(),
        ),
        14 => Random::Shape(record(rng.next() % 100).shapes[rng.below(4)].clone()),
        _ => Random::Plain(Box::new(random(rng, depth + 1))),
    }
}

#[test]
fn to_value_matches_the_bytes_on_random_shapes() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for _ in 0..3_000 {
        let r = random(&mut rng, 0);
        same_as_bytes(&r);
    }
}

// ---- from_value: the graph read as from_slice reads its bytes ----

use serde::de::{DeserializeOwned, IgnoredAny};
use sereal::{encode, from_slice, from_value, Ref};

/// How a read ended, for comparing the two paths: the value's debug form
/// (with its flags), or the error's category and, for the kinds that do
/// not depend on where the bytes put things, the kind.
fn outcome<T: std::fmt::Debug>(r: sereal::Result<T>) -> String {
    match r {
        Ok(v) => format!("ok {v:?}"),
        Err(e) => match e.kind() {
            sereal::ErrorKind::DepthExceeded(_)
            | sereal::ErrorKind::InvalidUtf8
            | sereal::ErrorKind::Unsupported(_)
            | sereal::ErrorKind::Borrowed => format!("err {:?}", e.kind()),
            _ => format!("err {:?}", e.classify()),
        },
    }
}

/// `from_value::<T>(graph)` must give what `from_slice::<T>(bytes)` gives.
fn agree<T: DeserializeOwned + std::fmt::Debug>(what: &str, graph: &Value, bytes: &[u8]) {
    let direct = outcome(from_value::<T, _>(graph));
    let through = outcome(from_slice::<T>(bytes));
    assert_eq!(
        direct,
        through,
        "{what}: {} from {graph:?}",
        std::any::type_name::<T>()
    );
}

/// As [`agree`], for enum targets, where only success and failure must
/// agree: a variant with content named without it (a string, an integer)
/// fails in both, but the byte deserializer reads the item after it as
/// the content and fails on what follows (an `Eof`, say), where the graph
/// has no item after it.
fn agree_enum<T: DeserializeOwned + std::fmt::Debug>(what: &str, graph: &Value, bytes: &[u8]) {
    let direct = from_value::<T, _>(graph);
    let through = from_slice::<T>(bytes);
    let name = std::any::type_name::<T>();
    match (&direct, &through) {
        (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}: {name}"),
        (Err(_), Err(_)) => {}
        _ => panic!("{what}: {name} from {graph:?}: {direct:?} != {through:?}"),
    }
}

/// The targets every graph is read into.
fn agree_all(what: &str, graph: &Value, bytes: &[u8]) {
    agree::<Value>(what, graph, bytes);
    agree::<serde_json::Value>(what, graph, bytes);
    agree::<IgnoredAny>(what, graph, bytes);
    agree::<Option<Vec<Option<String>>>>(what, graph, bytes);
    agree::<Vec<Option<Value>>>(what, graph, bytes);
    agree::<BTreeMap<String, Option<Value>>>(what, graph, bytes);
    agree::<BTreeMap<i64, Value>>(what, graph, bytes);
    agree::<Vec<bool>>(what, graph, bytes);
    agree::<(Option<u8>, Option<String>)>(what, graph, bytes);
    agree::<common::Raw>(what, graph, bytes);
    agree_enum::<Vec<Shape>>(what, graph, bytes);
    agree_enum::<Option<Shape>>(what, graph, bytes);
}

/// Every document of every corpus profile: decoded to a graph and read
/// from it, it reads as its bytes do.
#[test]
fn from_value_reads_every_corpus_document_as_its_bytes() {
    let mut compared = 0;
    for p in common::PROFILES {
        let cases = sereal::conformance::read_cases(&common::corpus(p)).unwrap();
        for case in cases {
            let Some(doc) = case.srl else { continue };
            let Ok(graph) = decode(&doc) else { continue };
            let what = format!("{p} case {} ({})", case.id, case.name);
            agree::<Value>(&what, &graph, &doc);
            agree::<serde_json::Value>(&what, &graph, &doc);
            agree::<IgnoredAny>(&what, &graph, &doc);
            agree::<Option<Value>>(&what, &graph, &doc);
            agree::<Vec<Option<serde_json::Value>>>(&what, &graph, &doc);
            compared += 1;
        }
    }
    assert!(compared > 14 * 1000, "{compared}");
}

/// A random graph: scalars of every kind, shared nodes, scalar cells,
/// aliases, weak references, objects and cycles.
fn random_graph(rng: &mut Rng, depth: usize, pool: &mut Vec<Ref>) -> Value {
    let leaf = depth > 5 || rng.below(3) == 0;
    if leaf {
        return match rng.below(16) {
            0 => Value::Undef,
            1 => Value::CanonicalUndef,
            2 => Value::Bool(rng.below(2) == 0),
            3 => [Value::True, Value::False][rng.below(2)].clone(),
            4 => Value::Int(rng.next() as i64 >> rng.below(64)),
            5 => Value::UInt(rng.next()),
            6 => Value::Float(f32::from_bits(rng.next() as u32)),
            7 => Value::Double([0.5, 0.1, 1.0, -7.0, 1e300][rng.below(5)]),
            8 => Value::from(["", "0", "1", "A", "Dot", "true"][rng.below(6)]),
            9 => Value::utf8(["é", "Circle", "x"][rng.below(3)]),
            10 => Value::Utf8(sereal::Str::new(b"\xff\xfe")),
            11 => Value::bytes([0xffu8, 0]),
            12 => Value::Int(rng.below(3) as i64),
            13 => Value::LongDouble(Box::new([7; 16])),
            14 if !pool.is_empty() => Value::weak(&pool[rng.below(pool.len())]),
            _ => Value::Undef,
        };
    }
    let node = match rng.below(10) {
        0..=2 => {
            let n = rng.below(4);
            Ref::array(
                (0..n)
                    .map(|_| random_graph(rng, depth + 1, pool))
                    .collect::<Vec<_>>(),
            )
        }
        3..=5 => {
            let keys = ["A", "Circle", "1", "-2", "true", "é", "x"];
            let mut h = sereal::Hash::new();
            for _ in 0..rng.below(4) {
                h.insert(
                    keys[rng.below(keys.len())],
                    random_graph(rng, depth + 1, pool),
                );
            }
            Ref::hash(h)
        }
        6 | 7 => Ref::scalar(random_graph(rng, depth + 1, pool)),
        8 => Ref::regexp("a+", "i"),
        _ if !pool.is_empty() => pool[rng.below(pool.len())].clone(),
        _ => Ref::array(vec![Value::Undef]),
    };
    if rng.below(8) == 0 {
        node.bless("Obj");
    }
    if rng.below(3) == 0 {
        pool.push(node.clone());
    }
    match rng.below(8) {
        0 => Value::Alias(node),
        1 => Value::Weak(node.downgrade()),
        _ => Value::Ref(node),
    }
}

/// Closes some cycles: a pooled container gets a reference (strong or
/// weak) to another pooled node.
fn close_cycles(rng: &mut Rng, pool: &[Ref]) {
    for _ in 0..rng.below(3) {
        let (a, b) = (&pool[rng.below(pool.len())], &pool[rng.below(pool.len())]);
        let link = if rng.below(2) == 0 {
            Value::Ref(b.clone())
        } else {
            Value::weak(b)
        };
        if let Ok(mut body) = a.body_mut() {
            match &mut *body {
                sereal::Body::Array(items) => items.push(link),
                sereal::Body::Hash(h) => {
                    h.insert("up", link);
                }
                _ => {}
            }
        }
    }
}

#[test]
fn from_value_matches_from_slice_on_random_graphs() {
    let mut rng = Rng(0x0dd_ba11_cafe_f00d);
    let mut rewritten = 0;
    for i in 0..4_000 {
        let mut pool = Vec::new();
        let graph = random_graph(&mut rng, 0, &mut pool);
        if !pool.is_empty() {
            close_cycles(&mut rng, &pool);
        }
        let what = format!("graph {i}");
        match encode(&graph) {
            // A node only weak references reach would be freed by Perl:
            // the encoder makes its last weak reference strong, and the
            // bytes then mean another graph (the decoded one), which the
            // graph itself cannot say.
            Ok(bytes) => match decode(&bytes) {
                Ok(back) if back != graph => {
                    rewritten += 1;
                    agree_all(&what, &back, &bytes);
                }
                _ => agree_all(&what, &graph, &bytes),
            },
            Err(e) => assert!(from_value::<IgnoredAny, _>(&graph).is_err(), "{what}: {e}"),
        }
        graph.dismantle();
        for r in &pool {
            Value::Ref(r.clone()).dismantle();
        }
    }
    assert!(rewritten < 1_200, "{rewritten} graphs the encoding rewrote");
}

#[derive(Deserialize, Debug, PartialEq)]
struct Typed {
    id: u32,
    name: String,
    nick: Option<String>,
    gone: Option<u8>,
    shape: Shape,
    shapes: Vec<Shape>,
    by_id: BTreeMap<u16, String>,
    by_flag: BTreeMap<bool, char>,
    by_char: BTreeMap<char, f64>,
    truths: Vec<bool>,
    ratio: f32,
    whole: i64,
}

#[test]
fn from_value_reads_derived_types_with_perls_conventions() {
    let v = Value::hash([
        ("id", Value::from(7)),
        ("name", Value::bytes("ann")),
        ("nick", Value::utf8("é")),
        ("gone", Value::Undef),
        ("shape", Value::from("Dot")),
        (
            "shapes",
            Value::array([
                Value::hash([("Circle", Value::Double(2.5))]),
                Value::hash([("Pair", Value::array([Value::from(-1), Value::from("p")]))]),
                Value::hash([(
                    "Rect",
                    Value::hash([("w", Value::from(1)), ("h", Value::Double(2.0))]),
                )]),
                // through a reference to a scalar cell
                Value::scalar_ref(Value::from("Dot")),
            ]),
        ),
        ("by_id", Value::hash([("1", "one"), ("65535", "max")])),
        ("by_flag", Value::hash([("true", "t"), ("0", "f")])),
        ("by_char", Value::hash([("x", 1.5)])),
        (
            "truths",
            Value::array([
                Value::from(0),
                Value::from(1),
                Value::from(""),
                Value::from("0"),
                Value::from("1"),
                Value::True,
                Value::Bool(false),
            ]),
        ),
        ("ratio", Value::Float(0.25)),
        // an integral float into an integer
        ("whole", Value::Double(-3.0)),
    ]);
    let direct: Typed = from_value(&v).unwrap();
    let through: Typed = from_slice(&encode(&v).unwrap()).unwrap();
    assert_eq!(direct, through);
    assert_eq!(direct.nick.as_deref(), Some("é"));
    assert_eq!(direct.gone, None);
    assert_eq!(
        direct.truths,
        [false, true, false, false, true, true, false]
    );
    assert_eq!(direct.by_id[&65535], "max");
    assert_eq!(direct.shapes[2], Shape::Rect { w: 1, h: 2 });
    assert_eq!(direct.whole, -3);
    // refusals, each as the bytes refuse
    for (field, bad) in [
        ("id", Value::from(-1)),
        ("id", Value::Double(1.5)),
        ("name", Value::Utf8(sereal::Str::new(b"\xff"))),
        ("truths", Value::array([Value::from("2")])),
        ("truths", Value::array([Value::from("yes")])),
        ("by_id", Value::hash([("x", "no")])),
        ("by_id", Value::hash([("70000", "no")])),
        ("shape", Value::hash([("Dot", 1), ("Circle", 2)])),
        ("shape", Value::from("Hexagon")),
        ("shape", Value::hash([("Dot", Value::Undef)])),
    ] {
        let mut h = v.as_hash().unwrap().clone();
        h.insert(field, bad.clone());
        let v = Value::from(h);
        let what = format!("{field} = {bad:?}");
        assert!(from_value::<Typed, _>(&v).is_err(), "{what}");
        assert!(from_slice::<Typed>(&encode(&v).unwrap()).is_err(), "{what}");
        agree::<Typed>(&what, &v, &encode(&v).unwrap());
    }
}

/// Perl's `my $p = {name => "p"}; $p->{kid} = {up => $p}`, weakened or
/// not.
fn parent_child(weak: bool) -> (Ref, Value) {
    let p = Ref::hash([("name", Value::from("p"))].into_iter().collect());
    let up = if weak {
        Value::weak(&p)
    } else {
        Value::from(&p)
    };
    p.hash_mut()
        .unwrap()
        .insert("kid", Value::hash([("up", up)]));
    (p.clone(), Value::Ref(p))
}

#[derive(Deserialize, Debug, PartialEq)]
struct Parent {
    name: String,
    kid: Kid,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Kid {
    up: Option<Box<Parent>>,
}

#[test]
fn a_weak_reference_back_into_the_path_reads_as_none_and_a_strong_one_fails() {
    let (p, v) = parent_child(true);
    let bytes = encode(&v).unwrap();
    let direct: Parent = from_value(&v).unwrap();
    assert_eq!(direct, from_slice::<Parent>(&bytes).unwrap());
    assert_eq!(direct.kid.up, None);
    agree_all("weak parent", &v, &bytes);
    // read from the kid, the parent is not on the path: it is read
    // through, and its strong reference to the kid closes a cycle
    let kid = p.as_hash().unwrap().get("kid").unwrap().clone();
    assert!(from_value::<Kid, _>(&kid).is_err());
    agree_all("from the kid", &kid, &encode(&kid).unwrap());
    drop((kid, p));

    let (p, v) = parent_child(false);
    let bytes = encode(&v).unwrap();
    let e = from_value::<Parent, _>(&v).unwrap_err();
    assert!(e.to_string().contains("strong cycle"), "{e}");
    assert!(from_slice::<Parent>(&bytes).is_err());
    agree_all("strong parent", &v, &bytes);
    v.dismantle();
    drop(p);

    // a hash that holds itself, strongly, then through an alias
    let h = Ref::hash(sereal::Hash::new());
    h.hash_mut().unwrap().insert("me", Value::from(&h));
    let v = Value::Ref(h.clone());
    assert!(from_value::<Value, _>(&v).is_err());
    agree_all("self", &v, &encode(&v).unwrap());
    v.dismantle();
}

#[test]
fn an_exponential_dag_is_refused_quickly() {
    // 64 levels, each an array referring to the next level twice: 2^64
    // nodes as a tree
    let mut level = Ref::array(vec![Value::from(1)]);
    for _ in 0..64 {
        level = Ref::array(vec![Value::from(&level), Value::from(&level)]);
    }
    let v = Value::Ref(level);
    let start = std::time::Instant::now();
    for e in [
        from_value::<IgnoredAny, _>(&v).unwrap_err(),
        from_value::<Value, _>(&v).unwrap_err(),
        from_slice::<IgnoredAny>(&encode(&v).unwrap()).unwrap_err(),
    ] {
        match e.kind() {
            sereal::ErrorKind::LimitExceeded(m) => assert!(m.contains("expands too much"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    // sharing that does not expand much reads
    let shared = Ref::array((0..100).map(Value::from).collect::<Vec<_>>());
    let v = Value::array((0..500).map(|_| Value::from(&shared)));
    let both = (
        from_value::<Vec<Vec<u8>>, _>(&v).map(|x| x.len()),
        from_slice::<Vec<Vec<u8>>>(&encode(&v).unwrap()).map(|x| x.len()),
    );
    assert_eq!((both.0.unwrap(), both.1.unwrap()), (500, 500));
}

#[test]
fn nesting_is_limited_as_the_byte_path_limits_it() {
    for depth in [1, 126, 127, 128, 129, 130, 200, 100_000] {
        let mut v = Value::from(1);
        for i in 0..depth {
            v = match i % 4 {
                0 => Value::array([v]),
                1 => Value::hash([("k", v)]),
                2 => Value::scalar_ref(v),
                _ => Value::array([Value::Alias(Ref::array(vec![v]))]),
            };
        }
        let direct = from_value::<IgnoredAny, _>(&v);
        if depth <= 10_000 {
            let bytes = encode(&v).unwrap();
            agree_all(&format!("depth {depth}"), &v, &bytes);
        }
        if depth >= 200 {
            assert!(
                matches!(
                    direct.unwrap_err().kind(),
                    sereal::ErrorKind::DepthExceeded(128)
                ),
                "{depth}"
            );
        }
    }
    // on a small thread stack too (the result is dropped on the test's
    // own thread: serde_json::Value's drop recurses, unguarded, and in a
    // debug build 127 levels of it do not fit in 64 KiB)
    let json = std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn(|| {
            let mut v = Value::from(1);
            for _ in 0..127 {
                v = Value::hash([("k", v)]);
            }
            from_value::<serde_json::Value, _>(&v).unwrap()
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(json.pointer(&"/k".repeat(127)).is_some());
}

#[test]
fn from_value_takes_a_document_and_its_errors_are_the_crates() {
    fn first(bytes: &[u8]) -> sereal::Result<String> {
        let doc = decode(bytes);
        let v: Vec<String> = from_value(&doc?)?;
        Ok(v[0].clone())
    }
    assert_eq!(first(&to_vec(&["a"]).unwrap()).unwrap(), "a");
    assert!(first(b"junk").is_err());
    let e = first(&to_vec(&[[1]]).unwrap()).unwrap_err();
    assert_eq!(e.classify(), sereal::Category::Data);
    // data Sereal cannot carry
    let v = Value::array([Value::Foreign(sereal::Foreign::new(3u8))]);
    assert!(encode(&v).is_err());
    let e = from_value::<IgnoredAny, _>(&v).unwrap_err();
    assert!(matches!(e.kind(), sereal::ErrorKind::Unsupported(_)), "{e}");
    // a node borrowed for writing
    let r = Ref::array(vec![]);
    let v = Value::from(&r);
    let _writing = r.body_mut().unwrap();
    assert_eq!(
        from_value::<IgnoredAny, _>(&v).unwrap_err().kind(),
        &sereal::ErrorKind::Borrowed
    );
}

#[test]
fn to_value_then_from_value_gives_the_data_back() {
    for i in 0..50 {
        let r = record(i);
        let v = to_value(&r).unwrap();
        let back: Record = from_value(&v).unwrap();
        assert_eq!(back, r);
    }
}
