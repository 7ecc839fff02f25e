//! How long a large document takes when its bytes arrive in pieces: the
//! push decoder (`sereal::stream::Incremental`) and the pull decoder
//! (`sereal::stream::ReadDocuments`) against one `Decoder::decode` of the whole buffer.
//! Both scan each byte once and decode once, so the time is one decode
//! plus a scan, whatever the piece size.
//!
//! ```sh
//! cargo run --release --example stream_chunks              # 30k records, ~2.7 MB
//! cargo run --release --example stream_chunks -- --naive   # also a decode_prefix loop per read
//! ```
//!
//! `--naive` adds what a loop over `decode_prefix` costs when it retries
//! the whole buffer after every read (quadratic in the document size).

use sereal::{encode, Decoder, Value};
use std::io::Read;
use std::time::{Duration, Instant};

/// A record as a service might send it: `{id, name, email, tags}`.
fn record(i: i64) -> Value {
    Value::hash([
        ("id", Value::from(i)),
        ("name", Value::from(format!("User Number {i} Smith-Jones"))),
        ("email", Value::from(format!("user{i}@mail.example.com"))),
        (
            "tags",
            Value::array((0..(i % 4 + 2)).map(|t| Value::from(format!("tag-{t}")))),
        ),
    ])
}

/// A reader that returns at most `max` bytes per call, as a socket does.
struct Pieces<'a> {
    data: &'a [u8],
    max: usize,
}

impl Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = out.len().min(self.max).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn push(dec: &Decoder, doc: &[u8], chunk: usize) {
    let mut inc = dec.incremental();
    let mut n = 0;
    for piece in doc.chunks(chunk) {
        inc.feed(piece);
        while let Some(v) = inc.next_document() {
            drop(v.expect("decode"));
            n += 1;
        }
    }
    assert_eq!(n, 1);
}

fn pull(dec: &Decoder, doc: &[u8], chunk: usize) {
    let reader = Pieces {
        data: doc,
        max: chunk,
    };
    assert_eq!(dec.documents_from_reader(reader).count(), 1);
}

fn ms(t: Duration) -> f64 {
    t.as_secs_f64() * 1e3
}

fn main() {
    let naive = std::env::args().any(|a| a == "--naive");
    let doc = encode(&Value::array((0..30_000).map(record))).expect("encode");
    let dec = Decoder::default();
    println!("document: {} bytes, 30000 records", doc.len());

    type Run = Box<dyn Fn(&Decoder, &[u8])>;
    let cases: Vec<(&str, Run)> = vec![
        (
            "one decode",
            Box::new(|d, b| drop(d.decode(b).expect("decode"))),
        ),
        ("push, 16 KiB pieces", Box::new(|d, b| push(d, b, 16 << 10))),
        ("push, 64 KiB pieces", Box::new(|d, b| push(d, b, 64 << 10))),
        ("pull, 16 KiB reads", Box::new(|d, b| pull(d, b, 16 << 10))),
        ("pull, 64 KiB reads", Box::new(|d, b| pull(d, b, 64 << 10))),
    ];
    // Rounds over every case in turn, so that a busy machine slows them alike.
    let rounds = 15;
    let mut times = vec![Vec::new(); cases.len()];
    for _ in 0..rounds {
        for (i, (_, run)) in cases.iter().enumerate() {
            let t = Instant::now();
            run(&dec, &doc);
            times[i].push(t.elapsed());
        }
    }
    for t in &mut times {
        t.sort();
    }
    let (best, median) = (times[0][0], times[0][rounds / 2]);
    println!("{rounds} rounds       best (ratio to one decode)   median (ratio)");
    for ((what, _), t) in cases.iter().zip(&times) {
        println!(
            "{what:<22} {:>8.1} ms ({:.2}x) {:>17.1} ms ({:.2}x)",
            ms(t[0]),
            t[0].as_secs_f64() / best.as_secs_f64(),
            ms(t[rounds / 2]),
            t[rounds / 2].as_secs_f64() / median.as_secs_f64()
        );
    }

    if naive {
        for chunk in [16 << 10, 64 << 10] {
            let t = Instant::now();
            let mut buf = Vec::new();
            for piece in doc.chunks(chunk) {
                buf.extend_from_slice(piece);
                if let Ok((v, _)) = dec.decode_prefix(&buf) {
                    drop(v);
                }
            }
            let t = t.elapsed();
            println!(
                "decode_prefix loop, {} KiB reads: {:.1} ms ({:.1}x one decode, best)",
                chunk >> 10,
                ms(t),
                t.as_secs_f64() / best.as_secs_f64()
            );
        }
    }
}
