//! The serde serializer writes a repeated hash key as a `COPY` of its first
//! writing, as Perl does and as the value-graph encoder (held to Perl's
//! bytes by the corpus) does: on every shape, `to_vec` gives the bytes the
//! value encoder gives for the graph those bytes decode to.

use serde::Serialize;
use sereal::ser::SerializerOptions;
use std::collections::BTreeMap;

#[derive(Serialize)]
struct User {
    id: u32,
    name: String,
    tags: BTreeMap<String, u8>,
    role: Role,
}

#[derive(Serialize)]
enum Role {
    Admin,
    Guest(u32),
    Custom { name: String, id: u8 },
}

fn map(keys: &[&str]) -> BTreeMap<String, u32> {
    keys.iter()
        .enumerate()
        .map(|(i, k)| (k.to_string(), i as u32))
        .collect()
}

fn check<T: Serialize>(what: &str, data: &T) {
    for opts in [
        SerializerOptions::new(),
        SerializerOptions::new().protocol_version(1),
        SerializerOptions::new().dedupe_strings(true),
    ] {
        let bytes = sereal::to_vec_with(data, &opts).unwrap();
        let graph = sereal::decode(&bytes).unwrap();
        let enc = sereal::EncoderOptions::new()
            .protocol_version(opts.protocol_version)
            .dedupe_strings(opts.dedupe_strings);
        let again = sereal::encode_with(&graph, &enc).unwrap();
        assert!(
            again == bytes,
            "{what} ({opts:?}): serde wrote\n  {bytes:02x?}\nthe value encoder\n  {again:02x?}"
        );
    }
}

#[test]
fn repeated_keys_are_copies_on_every_shape() {
    check("one hash", &map(&["alpha", "beta", "gamma"]));
    check(
        "an empty hash first",
        &(map(&[]), map(&["a", "b"]), map(&["b", "a"])),
    );
    check(
        "two hashes",
        &vec![map(&["alpha", "beta"]), map(&["beta", "alpha", "delta"])],
    );
    check(
        "a hash in a hash",
        &BTreeMap::from([("outer", map(&["outer", "inner"]))]),
    );
    check(
        "keys of the first hash met again after a nested one",
        &BTreeMap::from([("a", map(&["x"])), ("x", map(&["a", "b"])), ("b", map(&[]))]),
    );
    check(
        "a key that is also a value",
        &(map(&["same"]), "same", map(&["same"])),
    );
    let user = |id: u32, role: Role| User {
        id,
        name: format!("user {id}"),
        tags: BTreeMap::from([("name".to_string(), 1), (format!("t{}", id % 2), 2)]),
        role,
    };
    check(
        "structs, enum variants, nested maps",
        &vec![
            user(1, Role::Admin),
            user(2, Role::Guest(7)),
            user(
                3,
                Role::Custom {
                    name: "x".into(),
                    id: 3,
                },
            ),
            user(
                4,
                Role::Custom {
                    name: "y".into(),
                    id: 4,
                },
            ),
        ],
    );
    check("a variant first", &(Role::Guest(1), map(&["Guest", "id"])));
    check(
        "many hashes",
        &(0..200)
            .map(|i| map(&[&format!("k{}", i % 17), "common"]))
            .collect::<Vec<_>>(),
    );
}

macro_rules! wide {
    ($name:ident { $($f:ident),* }) => {
        #[derive(Serialize)]
        struct $name { $($f: u8),* }
        impl $name {
            fn new(i: u8) -> $name { $name { $($f: i),* } }
        }
    };
}

wide!(Wide {
    f00,
    f01,
    f02,
    f03,
    f04,
    f05,
    f06,
    f07,
    f08,
    f09,
    f10,
    f11,
    f12,
    f13,
    f14,
    f15,
    f16,
    f17,
    f18,
    f19,
    f20,
    f21,
    f22,
    f23,
    f24,
    f25,
    f26,
    f27,
    f28,
    f29,
    f30,
    f31,
    f32,
    f33,
    f34,
    f35,
    f36,
    f37,
    f38,
    f39,
    f40,
    f41,
    f42,
    f43,
    f44,
    f45,
    f46,
    f47
});

/// More field names than the serializer's field cache has slots (some
/// share a slot): every repeat is still a `COPY` of the first writing.
#[test]
fn many_field_names_share_the_field_cache() {
    check(
        "48 fields, 5 times",
        &(0..5).map(Wide::new).collect::<Vec<_>>(),
    );
    check(
        "fields that are also map keys",
        &(Wide::new(1), map(&["f00", "f47", "zz"]), Wide::new(2)),
    );
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const KEYS: [&str; 9] = ["id", "name", "a", "ab", "abcd", "émoji☺", "k1", "k2", "x"];
const STRINGS: [&str; 6] = [
    "",
    "v",
    "value",
    "value two",
    "ünïcode",
    "a longer string value",
];

/// Random JSON-shaped data: keys from a small pool, so that hashes repeat
/// each other's keys, nested to `depth`.
fn random_value(r: &mut Rng, depth: u32) -> serde_json::Value {
    use serde_json::Value as J;
    match r.below(if depth == 0 { 5 } else { 8 }) {
        0 => J::Null,
        1 => J::Bool(r.below(2) == 1),
        2 => J::from(r.next() as i64 >> r.below(64)),
        3 => J::from(STRINGS[r.below(STRINGS.len() as u64) as usize]),
        4 => J::from(r.below(1000) as f64 / 8.0),
        5 | 6 => J::Object(
            (0..r.below(6))
                .map(|_| {
                    let k = KEYS[r.below(KEYS.len() as u64) as usize].to_string();
                    (k, random_value(r, depth - 1))
                })
                .collect(),
        ),
        _ => J::Array(
            (0..r.below(5))
                .map(|_| random_value(r, depth - 1))
                .collect(),
        ),
    }
}

/// Random data: what the serializer writes reads back as the data, and is
/// what the value encoder writes for the graph it decodes to.
#[test]
fn random_data_round_trips_and_matches_the_value_encoder() {
    let mut r = Rng(0x5EED_0F5E_4EA1);
    for i in 0..3000 {
        let data = random_value(&mut r, 4);
        check(&format!("document {i}: {data}"), &data);
        for opts in [
            SerializerOptions::new(),
            SerializerOptions::new().sort_keys(true),
            SerializerOptions::new().dedupe_strings(true),
        ] {
            let bytes = sereal::to_vec_with(&data, &opts).unwrap();
            let back: serde_json::Value = sereal::from_slice(&bytes).unwrap();
            assert_eq!(back, data, "document {i} ({opts:?})");
        }
    }
}

#[test]
fn first_hashes_of_every_size_and_keys_of_every_type_copy_as_the_encoder_does() {
    // The keys of the document's first hash are noted (inline up to 16,
    // then on the heap) and recorded when a second hash begins: sizes on
    // both sides of that edge, with a second hash repeating some of them,
    // nested inside the first one or after it.
    for n in [0usize, 1, 15, 16, 17, 40, 300] {
        let keys: Vec<String> = (0..n).map(|i| format!("key{i}")).collect();
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let first = map(&refs);
        let again: Vec<&str> = refs.iter().rev().step_by(3).copied().collect();
        check(&format!("{n} keys, then a hash"), &(&first, map(&again)));
        let mut nested: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
        for (i, k) in refs.iter().enumerate().take(20) {
            nested.insert(k.to_string(), map(&again[..again.len().min(i)]));
        }
        check(&format!("{n} keys, nested"), &nested);
    }
    // Keys that are not text are written as the text Perl would use, and
    // repeat as COPYs like any other key.
    let ints: BTreeMap<i64, u8> = (-20..20).map(|i| (i * 1000, 1)).collect();
    check("integer keys", &vec![ints.clone(), ints]);
    let uints: BTreeMap<u32, u8> = (0..40).map(|i| (i, 1)).collect();
    check(
        "unsigned keys",
        &(uints.clone(), map(&["7", "39", "x"]), uints),
    );
    let bools = BTreeMap::from([(false, 0u8), (true, 1)]);
    check("bool keys", &[bools.clone(), bools]);
    let chars: BTreeMap<char, u8> = "aé☺z".chars().map(|c| (c, 1)).collect();
    check("char keys", &[chars.clone(), chars]);
    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    enum Color {
        Red,
        Green,
    }
    let colors = BTreeMap::from([(Color::Red, 1u8), (Color::Green, 2)]);
    check("unit variant keys", &[&colors, &colors]);
}
