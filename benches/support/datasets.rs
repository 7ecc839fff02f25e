//! The serializer datasets of seed 001, shared by the benches that time
//! them: undef, num, str1k, str1k unicode, array_int_10/100/1000,
//! array_str1k_10, array_ustr1k_10, hash_int_10/100/1000.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a bench does with each dataset.
pub trait Each {
    /// Times `data` under the dataset's `name`.
    fn run<T: Serialize + DeserializeOwned>(&mut self, name: &str, data: T);
}

/// Hands every dataset to `e`, in the seed's order.
pub fn each(e: &mut impl Each) {
    let ints = |n: i64| (1..=n).collect::<Vec<i64>>();
    let hash = |n: i64| {
        (1..=n)
            .map(|i| (i.to_string(), 0i64))
            .collect::<BTreeMap<_, _>>()
    };
    let str1k = "x".repeat(1024);
    let ustr1k = "\u{263a}".repeat(1024);
    e.run("undef", Option::<()>::None);
    e.run("num", -1.23f64);
    e.run("str1k", str1k.clone());
    e.run("str1k_unicode", ustr1k.clone());
    e.run("array_int_10", ints(10));
    e.run("array_int_100", ints(100));
    e.run("array_int_1000", ints(1000));
    e.run("array_str1k_10", vec![str1k; 10]);
    e.run("array_ustr1k_10", vec![ustr1k; 10]);
    e.run("hash_int_10", hash(10));
    e.run("hash_int_100", hash(100));
    e.run("hash_int_1000", hash(1000));
}
