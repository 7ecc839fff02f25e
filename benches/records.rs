//! 10000 derived structs shaped like bench_retention's records, both
//! directions, sereal's serde path against its peers.

#[path = "support/peers.rs"]
mod peers;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Address {
    city: String,
    zip: String,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Record {
    id: u64,
    name: String,
    email: String,
    score: u64,
    active: u8,
    tags: Vec<String>,
    address: Address,
}

fn records(n: u64) -> Vec<Record> {
    (0..n)
        .map(|i| Record {
            id: i,
            name: format!("user{i}"),
            email: format!("user{i}@example.com"),
            score: 2 * i + 1,
            active: (i % 2) as u8,
            tags: vec![format!("t{}", i % 7), format!("t{}", i % 11)],
            address: Address {
                city: format!("city{}", i % 100),
                zip: format!("{:05}", i % 100_000),
            },
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let data = records(10_000);
    // Every peer's document is made and checked before any is timed, so
    // that each timing starts from the same heap (the first one timed
    // otherwise paid for the heap's growth: its decode took 1.5x).
    let docs: Vec<_> = peers::encoders::<Vec<Record>>()
        .into_iter()
        .zip(peers::decoders::<Vec<Record>>())
        .map(|((peer, enc), (_, dec))| {
            let bytes = enc(&data);
            assert_eq!(dec(&bytes), data, "{peer} round trip");
            (peer, bytes, dec)
        })
        .collect();
    let mut g = c.benchmark_group("records/encode");
    g.throughput(Throughput::Elements(10_000));
    for (peer, enc) in peers::encoders::<Vec<Record>>() {
        g.bench_function(peer, |b| b.iter(|| enc(black_box(&data))));
    }
    g.finish();
    let mut g = c.benchmark_group("records/decode");
    g.throughput(Throughput::Elements(10_000));
    for (peer, bytes, dec) in &docs {
        g.bench_function(*peer, |b| b.iter(|| dec(black_box(bytes))));
    }
    g.finish();
}

criterion_group! { name = benches; config = peers::config(); targets = bench }
criterion_main!(benches);
