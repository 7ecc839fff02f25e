//! The serializer datasets of seed 001 (undef, num, str1k, str1k unicode,
//! array_int_10/100/1000, array_str1k_10, array_ustr1k_10,
//! hash_int_10/100/1000), encoded and decoded by sereal (serde path,
//! value-graph path, and value-graph path from a shared `Bytes` buffer)
//! and its peers on the same data.

#[path = "support/config.rs"]
mod config;
#[path = "support/datasets.rs"]
mod datasets;
#[path = "support/peers.rs"]
mod peers;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde::de::DeserializeOwned;
use serde::Serialize;

struct Bench<'a>(&'a mut Criterion);

impl datasets::Each for Bench<'_> {
    fn run<T: Serialize + DeserializeOwned>(&mut self, name: &str, data: T) {
        bench(self.0, name, data);
    }
}

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
    datasets::each(&mut Bench(c));
}

criterion_group! { name = benches; config = config::config(); targets = datasets }
criterion_main!(benches);
