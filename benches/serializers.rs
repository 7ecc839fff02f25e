//! The serializer datasets of seed 001 (undef, num, str1k, str1k unicode,
//! array_int_10/100/1000, array_str1k_10, array_ustr1k_10,
//! hash_int_10/100/1000), encoded and decoded by sereal (serde path,
//! value-graph path, and value-graph path from a shared `Bytes` buffer)
//! and its peers on the same data.

#[path = "support/peers.rs"]
mod peers;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::BTreeMap;

fn bench<T: Serialize + DeserializeOwned>(c: &mut Criterion, name: &str, data: T) {
    let value: sereal::Value = sereal::from_slice(&sereal::to_vec(&data).unwrap()).unwrap();
    let mut g = c.benchmark_group(format!("encode/{name}"));
    for (peer, enc) in peers::encoders::<T>() {
        g.bench_function(peer, |b| b.iter(|| enc(black_box(&data))));
    }
    g.bench_function("sereal_value", |b| {
        b.iter(|| sereal::encode(black_box(&value)).unwrap())
    });
    g.finish();
    let mut g = c.benchmark_group(format!("decode/{name}"));
    for ((peer, enc), (_, dec)) in peers::encoders::<T>()
        .into_iter()
        .zip(peers::decoders::<T>())
    {
        let bytes = enc(&data);
        g.bench_function(peer, |b| b.iter(|| dec(black_box(&bytes))));
    }
    let doc = sereal::encode(&value).unwrap();
    g.bench_function("sereal_value", |b| {
        b.iter(|| sereal::decode(black_box(&doc)).unwrap())
    });
    // The same document in a shared buffer: long strings are slices of it.
    let shared = bytes::Bytes::from(doc);
    g.bench_function("sereal_value_bytes", |b| {
        b.iter(|| sereal::decode_bytes(black_box(&shared)).unwrap())
    });
    g.finish();
}

fn datasets(c: &mut Criterion) {
    let ints = |n: i64| (1..=n).collect::<Vec<i64>>();
    let hash = |n: i64| {
        (1..=n)
            .map(|i| (i.to_string(), 0i64))
            .collect::<BTreeMap<_, _>>()
    };
    let str1k = "x".repeat(1024);
    let ustr1k = "\u{263a}".repeat(1024);
    bench(c, "undef", Option::<()>::None);
    bench(c, "num", -1.23f64);
    bench(c, "str1k", str1k.clone());
    bench(c, "str1k_unicode", ustr1k.clone());
    bench(c, "array_int_10", ints(10));
    bench(c, "array_int_100", ints(100));
    bench(c, "array_int_1000", ints(1000));
    bench(c, "array_str1k_10", vec![str1k; 10]);
    bench(c, "array_ustr1k_10", vec![ustr1k; 10]);
    bench(c, "hash_int_10", hash(10));
    bench(c, "hash_int_100", hash(100));
    bench(c, "hash_int_1000", hash(1000));
}

criterion_group! { name = benches; config = peers::config(); targets = datasets }
criterion_main!(benches);
