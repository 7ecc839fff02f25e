//! Map keys are strings in Sereal: integer, float, bool and char key types
//! parse them when deserializing through serde.

use serde::Deserialize;
use sereal::{from_slice, to_vec};
use std::collections::BTreeMap;

fn round_trip<K>(entries: Vec<(K, &str)>)
where
    K: Ord + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug + Clone,
{
    let m: BTreeMap<K, String> = entries
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
    let doc = to_vec(&m).unwrap();
    let back: BTreeMap<K, String> = from_slice(&doc).unwrap();
    assert_eq!(back, m);
    let back: BTreeMap<K, String> = sereal::from_reader(&doc[..]).unwrap();
    assert_eq!(back, m);
}

#[test]
fn non_string_map_keys_round_trip() {
    round_trip(vec![(1u8, "one"), (u8::MAX, "max")]);
    round_trip(vec![(1u16, "one"), (u16::MAX, "max")]);
    round_trip(vec![(1u32, "one"), (u32::MAX, "max")]);
    round_trip(vec![(1u64, "one"), (u64::MAX, "max")]);
    round_trip(vec![(1u128, "one"), (u128::MAX, "max")]);
    round_trip(vec![(i8::MIN, "min"), (-1i8, "m1"), (i8::MAX, "max")]);
    round_trip(vec![(i16::MIN, "min"), (i16::MAX, "max")]);
    round_trip(vec![(i32::MIN, "min"), (0i32, "zero"), (i32::MAX, "max")]);
    round_trip(vec![(i64::MIN, "min"), (i64::MAX, "max")]);
    round_trip(vec![(i128::MIN, "min"), (i128::MAX, "max")]);
    round_trip(vec![(false, "no"), (true, "yes")]);
    round_trip(vec![('a', "a"), ('é', "e acute"), ('€', "euro")]);
    round_trip(vec![
        ("plain".to_string(), "s"),
        ("ünï".to_string(), "utf8"),
    ]);
    // Floats (not `Ord`): a map read as pairs.
    for (doc, want) in [
        (
            to_vec(&BTreeMap::from([(1.5f64.to_string(), 1u8)])).unwrap(),
            1.5,
        ),
        (
            to_vec(&BTreeMap::from([((-0.25f32).to_string(), 3u8)])).unwrap(),
            -0.25,
        ),
        (
            to_vec(&BTreeMap::from([(f64::MAX.to_string(), 2u8)])).unwrap(),
            f64::MAX,
        ),
    ] {
        let FloatKeys(v) = from_slice(&doc).unwrap();
        assert_eq!(v, vec![(want, v[0].1)]);
        let FloatKeys32(v) = from_slice(&doc).unwrap();
        assert_eq!(v[0].0, want as f32);
    }
}

macro_rules! float_keys {
    ($name:ident, $f:ty) => {
        /// A map with float keys, read as its pairs.
        struct $name(Vec<($f, u8)>);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a map with float keys")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut m: A,
                    ) -> Result<$name, A::Error> {
                        let mut out = Vec::new();
                        while let Some(e) = m.next_entry::<$f, u8>()? {
                            out.push(e);
                        }
                        Ok($name(out))
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}

float_keys!(FloatKeys, f64);
float_keys!(FloatKeys32, f32);

#[test]
fn non_numeric_key_into_an_integer_map_is_an_error_with_offset() {
    let doc = to_vec(&BTreeMap::from([("one", 1u8)])).unwrap();
    // = s r l 5 0 | HASHREF_1 at 6 | key at 7
    let e = from_slice::<BTreeMap<u32, u8>>(&doc).unwrap_err();
    assert_eq!(e.offset(), Some(7), "{e}");
    assert!(e.to_string().contains("\"one\""), "{e}");
    let e = from_slice::<BTreeMap<char, u8>>(&doc).unwrap_err();
    assert_eq!(e.offset(), Some(7), "{e}");
    let e = from_slice::<BTreeMap<bool, u8>>(&doc).unwrap_err();
    assert_eq!(e.offset(), Some(7), "{e}");
    // Out of range.
    let doc = to_vec(&BTreeMap::from([(300u32, 1u8)])).unwrap();
    let e = from_slice::<BTreeMap<u8, u8>>(&doc).unwrap_err();
    assert_eq!(e.offset(), Some(7), "{e}");
}
