//! 10000 derived structs shaped like bench_retention's records, both
//! directions, sereal's serde path against its peers.

#[path = "support/config.rs"]
mod config;
#[path = "support/peers.rs"]
mod peers;
#[path = "support/records.rs"]
mod records;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use records::{records, Record};

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

criterion_group! { name = benches; config = config::config(); targets = bench }
criterion_main!(benches);
