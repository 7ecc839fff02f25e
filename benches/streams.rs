//! Typed streams: 100,000 records like bench_retention's, each its own
//! document, concatenated in one buffer, read into `Record`s one document
//! at a time, in interleaved pairs (see support/pair.rs) against:
//!
//! - `from_slice` over the same buffer with the documents' boundaries
//!   known (the floor a stream reader can reach);
//! - rmp-serde reading the same records as MessagePack from the same kind
//!   of reader (`rmp_serde::Deserializer::new(reader)` in a loop);
//! - serde_json's `StreamDeserializer` over the same records as JSON;
//! - the graph stream, `ReadDocuments` with `from_value` per document;
//! - and the tokio codec, `FramedRead` with `SerealCodec`, against the
//!   blocking reader on the same pieces.
//!
//! A reader hands out at most 4 KiB per `read` call, as a socket or a
//! pipe does. `cargo bench --bench streams` runs every line; an argument
//! runs the lines whose name contains it.

#[path = "support/pair.rs"]
mod pair;
#[path = "support/records.rs"]
mod records;

use pair::pair;
use records::{records, Record};
use std::hint::black_box;
use std::io::Read;

const COUNT: u64 = 100_000;

/// A reader over a buffer that hands out at most `piece` bytes a call.
struct Pieces<'a> {
    rest: &'a [u8],
    piece: usize,
}

impl Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rest.len().min(self.piece).min(out.len());
        out[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

fn pieces(rest: &[u8]) -> Pieces<'_> {
    Pieces { rest, piece: 4096 }
}

impl tokio::io::AsyncRead for Pieces<'_> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let n = self.rest.len().min(self.piece).min(buf.remaining());
        buf.put_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        std::task::Poll::Ready(Ok(()))
    }
}

/// Reads every record of `read` and checks the count.
fn all(read: impl Iterator<Item = sereal::Result<Record>>) {
    let mut n = 0;
    for r in read {
        black_box(r.expect("a record"));
        n += 1;
    }
    assert_eq!(n, COUNT);
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let wanted = |line: &str| filter.as_ref().is_none_or(|f| line.contains(f.as_str()));
    let data = records(COUNT);
    let mut buf = Vec::new();
    let mut bounds = Vec::new();
    let (mut msgpack, mut json) = (Vec::new(), Vec::new());
    for r in &data {
        let start = buf.len();
        buf.extend(sereal::to_vec(r).unwrap());
        bounds.push(start..buf.len());
        msgpack.extend(rmp_serde::to_vec(r).unwrap());
        json.extend(serde_json::to_vec(r).unwrap());
    }
    let buf = &buf[..];
    let known = &mut || {
        all(bounds
            .iter()
            .map(|b| sereal::from_slice::<Record>(black_box(&buf[b.clone()]))))
    };
    let slice = &mut || all(sereal::Deserializer::from_slice(black_box(buf)).into_iter());
    let reader = &mut || all(sereal::Deserializer::from_reader(pieces(black_box(buf))).into_iter());
    if wanted("slice vs known bounds") {
        pair("slice vs known bounds", "from_slice", slice, known);
    }
    if wanted("reader vs known bounds") {
        pair("reader vs known bounds", "from_slice", reader, known);
    }
    if wanted("incremental vs known") {
        let incremental = &mut || {
            let mut inc = sereal::stream::Incremental::default();
            let mut n = 0;
            for piece in black_box(buf).chunks(4096) {
                inc.feed(piece);
                while let Some(r) = inc.next_as::<Record>() {
                    black_box(r.unwrap());
                    n += 1;
                }
            }
            assert_eq!(n, COUNT);
        };
        pair("incremental vs known", "from_slice", incremental, known);
    }
    if wanted("reader vs graph+from_value") {
        let graph = &mut || {
            let docs = sereal::Decoder::default().documents_from_reader(pieces(black_box(buf)));
            all(docs.map(|d| sereal::from_value::<Record, _>(&d?)))
        };
        pair("reader vs graph+from_value", "graph", reader, graph);
    }
    if wanted("reader vs rmp reader") {
        let rmp = &mut || {
            let mut de = rmp_serde::Deserializer::new(pieces(black_box(&msgpack)));
            for _ in 0..COUNT {
                black_box(<Record as serde::Deserialize>::deserialize(&mut de).unwrap());
            }
        };
        pair("reader vs rmp reader", "rmp_serde", reader, rmp);
    }
    if wanted("tokio codec vs reader") {
        use futures::StreamExt;
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let codec = &mut || {
            rt.block_on(async {
                let codec = sereal::codec::SerealCodec::<Record>::default();
                let mut frames = tokio_util::codec::FramedRead::new(pieces(black_box(buf)), codec);
                let mut n = 0;
                while let Some(r) = frames.next().await {
                    black_box(r.unwrap());
                    n += 1;
                }
                assert_eq!(n, COUNT);
            })
        };
        pair("tokio codec vs reader", "blocking", codec, reader);
    }
    if wanted("slice vs json stream") {
        let json_stream = &mut || {
            let it = serde_json::Deserializer::from_slice(black_box(&json)).into_iter::<Record>();
            all(it
                .map(|r| r.map_err(|e| sereal::Error::new(sereal::ErrorKind::Json(e.to_string())))))
        };
        pair("slice vs json stream", "serde_json", slice, json_stream);
    }
}
