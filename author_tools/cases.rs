//! The benchmark inputs of `bench_retention` (and of the tests and benches
//! that measure the same data), identical to `bench_retention.pl`'s.

use sereal::{Hash, Key, Ref, Value};

/// The cases, with their default counts.
pub const CASES: [(&str, usize); 6] = [
    ("records", 200_000),
    ("arrays", 300_000),
    ("scalars", 200_000),
    ("keys", 300_000),
    ("shared", 200_000),
    ("frozen", 200_000),
];

/// The default count of a case, or `None` for an unknown case.
pub fn default_count(case: &str) -> Option<usize> {
    CASES.iter().find(|(c, _)| *c == case).map(|&(_, n)| n)
}

/// Interned keys of a record, made once per input.
struct RecordKeys {
    id: Key,
    name: Key,
    email: Key,
    score: Key,
    active: Key,
    tags: Key,
    address: Key,
    city: Key,
    zip: Key,
}

impl RecordKeys {
    fn new() -> Self {
        RecordKeys {
            id: Key::from("id"),
            name: Key::from("name"),
            email: Key::from("email"),
            score: Key::from("score"),
            active: Key::from("active"),
            tags: Key::from("tags"),
            address: Key::from("address"),
            city: Key::from("city"),
            zip: Key::from("zip"),
        }
    }

    /// Record `i`: `id`, `name`, `email`, `score`, `active`, `tags`,
    /// `address` in that order.
    fn record(&self, i: usize, extra: Option<(&Key, Value)>) -> Hash {
        let mut h = Hash::with_capacity(if extra.is_some() { 8 } else { 7 });
        h.insert(&self.id, i);
        h.insert(&self.name, format!("user{i}"));
        h.insert(&self.email, format!("user{i}@example.com"));
        h.insert(&self.score, 2 * i + 1);
        h.insert(&self.active, i % 2);
        h.insert(
            &self.tags,
            Value::array([format!("t{}", i % 7), format!("t{}", i % 11)]),
        );
        let mut addr = Hash::with_capacity(2);
        addr.insert(&self.city, format!("city{}", i % 100));
        addr.insert(&self.zip, format!("{:05}", i % 100_000));
        h.insert(&self.address, addr);
        if let Some((k, v)) = extra {
            h.insert(k, v);
        }
        h
    }
}

/// Builds the input of `case` with `count` items; `None` for an unknown case.
///
/// `frozen` records are blessed into `Rec`; the caller registers the FREEZE
/// handler that returns `[id, name]`.
pub fn build(case: &str, count: usize) -> Option<Value> {
    Some(match case {
        "records" => {
            let k = RecordKeys::new();
            Value::array((0..count).map(|i| Value::from(k.record(i, None))))
        }
        "arrays" => Value::array((0..count).map(|i| Value::array([i]))),
        "scalars" => Value::array((0..count).map(|i| {
            if i % 2 == 1 {
                Value::from(i)
            } else {
                Value::from(format!("s{i}"))
            }
        })),
        "keys" => {
            let mut h = Hash::with_capacity(count);
            for i in 0..count {
                h.insert(format!("key{i}"), i);
            }
            Value::from(h)
        }
        "shared" => {
            let k = RecordKeys::new();
            let group = Key::from("group");
            let groups: Vec<Ref> = (0..100)
                .map(|g| {
                    Ref::hash(Hash::from_iter([
                        ("gid", Value::from(g)),
                        ("label", Value::from(format!("group{g}"))),
                    ]))
                })
                .collect();
            Value::array(
                (0..count).map(|i| {
                    Value::from(k.record(i, Some((&group, Value::from(&groups[i % 100])))))
                }),
            )
        }
        "frozen" => {
            let k = RecordKeys::new();
            Value::array(
                (0..count).map(|i| Value::Ref(Ref::hash(k.record(i, None)).blessed("Rec"))),
            )
        }
        _ => return None,
    })
}
