//! Per-type encode and decode rates (in the spirit of seed 004): 1000
//! values of one type in an array, through the value graph, reported as
//! elements per second.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use sereal::Value;

/// Makes the i-th value of a case.
type Make = Box<dyn Fn(usize) -> Value>;

fn bench(c: &mut Criterion) {
    let ascii = |n: usize| "a".repeat(n);
    let utf8 = |n: usize| "é".repeat(n / 2);
    let cases: Vec<(&str, Make)> = vec![
        ("small_int", Box::new(|i| Value::from(i % 16))),
        (
            "large_int",
            Box::new(|i| Value::from(1_000_000_007u64 * i as u64)),
        ),
        (
            "negative_int",
            Box::new(|i| Value::from(-1_000_000 - i as i64)),
        ),
        ("f32", Box::new(|i| Value::Float(i as f32 + 0.5))),
        ("f64", Box::new(|i| Value::Double(i as f64 + 0.1))),
        (
            "short_bytes",
            Box::new(move |_| Value::from(ascii(10).as_str())),
        ),
        (
            "long_bytes",
            Box::new(move |_| Value::from(ascii(1000).as_str())),
        ),
        ("short_utf8", Box::new(move |_| Value::utf8(utf8(10)))),
        ("long_utf8", Box::new(move |_| Value::utf8(utf8(1000)))),
    ];
    for (name, make) in cases {
        let v = Value::array((0..1000).map(make));
        let doc = sereal::encode(&v).unwrap();
        let mut g = c.benchmark_group(format!("types/{name}"));
        g.throughput(Throughput::Elements(1000));
        g.bench_function("encode", |b| {
            b.iter(|| sereal::encode(black_box(&v)).unwrap())
        });
        g.bench_function("decode", |b| {
            b.iter(|| sereal::decode(black_box(&doc)).unwrap())
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_millis(1000))
        .sample_size(20);
    targets = bench
}
criterion_main!(benches);
