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
