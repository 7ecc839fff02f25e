//! The tokio codecs (`sereal::codec`, feature `tokio`): over `FramedRead`
//! and reads of any size they must yield what `Decoder::documents` and
//! `from_slice` give per document, refuse an oversized document before its
//! bytes arrive, and round-trip through `FramedWrite`.
#![cfg(feature = "tokio")]

use bytes::{Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use sereal::codec::{DocumentCodec, RawCodec, SerealCodec};
use sereal::{
    Compression, Decoder, DecoderOptions, Encoder, EncoderOptions, ErrorKind, Result, Value,
};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::codec::{Decoder as _, FramedRead, FramedWrite};
mod common;
use common::{corpus, perl_sereal, shaped_documents, Rng, PROFILES};

/// How many bytes each read delivers.
#[derive(Clone)]
enum Sizes {
    Fixed(usize),
    /// 1 to 20000 bytes, at random.
    Random(u64),
}

/// The chunkings every stream is read in.
const CHUNKINGS: [Sizes; 4] = [
    Sizes::Fixed(1),
    Sizes::Fixed(7),
    Sizes::Fixed(64 << 10),
    Sizes::Random(0x5EED),
];

/// An in-memory reader that delivers `data` in reads of `sizes`, is
/// `Pending` every third poll (as a socket is), and counts what it
/// delivered.
struct Chunked {
    data: Bytes,
    pos: usize,
    sizes: Sizes,
    rng: Rng,
    polls: usize,
    delivered: Arc<AtomicUsize>,
}

impl Chunked {
    fn new(data: &[u8], sizes: Sizes) -> Chunked {
        let seed = match sizes {
            Sizes::Random(seed) => seed,
            Sizes::Fixed(_) => 1,
        };
        Chunked {
            data: Bytes::copy_from_slice(data),
            pos: 0,
            sizes,
            rng: Rng(seed),
            polls: 0,
            delivered: Arc::new(AtomicUsize::new(0)),
        }
    }
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = &mut *self;
        me.polls += 1;
        if me.polls.is_multiple_of(3) {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let size = match me.sizes {
            Sizes::Fixed(n) => n,
            Sizes::Random(_) => 1 + me.rng.below(20_000),
        };
        let n = size.min(buf.remaining()).min(me.data.len() - me.pos);
        buf.put_slice(&me.data[me.pos..me.pos + n]);
        me.pos += n;
        me.delivered.fetch_add(n, Ordering::Relaxed);
        Poll::Ready(Ok(()))
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// What `FramedRead` yields over `data` in reads of `sizes`, to its end.
fn read_all<C: tokio_util::codec::Decoder>(
    codec: C,
    data: &[u8],
    sizes: Sizes,
) -> Vec<std::result::Result<C::Item, C::Error>> {
    block_on(FramedRead::new(Chunked::new(data, sizes), codec).collect())
}

/// Documents of every kind the encoder makes: every shape and compression
/// of the stream tests (protocols 1, 3 and 5, user headers), protocols 2
/// and 4, and a protocol 1 Snappy document, which only the end of the
/// input ends, last.
fn every_kind() -> Vec<Vec<u8>> {
    let mut docs = shaped_documents();
    let record = Value::hash([("id", Value::from(1)), ("tags", Value::array(["a"]))]);
    let compressions = [
        Compression::None,
        Compression::Snappy,
        Compression::Zlib,
        Compression::Zstd,
    ];
    for (v, c) in [2, 4]
        .into_iter()
        .flat_map(|v| compressions.map(|c| (v, c)))
    {
        // zlib and zstd bodies came with protocol 3
        if v < 3 && matches!(c, Compression::Zlib | Compression::Zstd) {
            continue;
        }
        {
            let opts = EncoderOptions::new()
                .protocol_version(v)
                .compress(c)
                .compress_threshold(0);
            let mut enc = Encoder::new(opts).unwrap();
            docs.push(enc.encode(&record).unwrap());
            docs.push(enc.encode_with_header(&record, &Value::from("h")).unwrap());
        }
    }
    let legacy = EncoderOptions::new()
        .protocol_version(1)
        .compress(Compression::Snappy)
        .legacy_snappy(true)
        .compress_threshold(0);
    docs.push(sereal::encode_with(&Value::array(["last"; 50]), &legacy).unwrap());
    assert_eq!(
        docs.last().unwrap()[4],
        0x11,
        "version 1, type 1: legacy Snappy"
    );
    docs
}

#[test]
fn every_kind_in_every_chunking() {
    let dec = Decoder::default();
    let docs = every_kind();
    let stream = docs.concat();
    let want: Vec<_> = dec.documents(&stream).map(Result::unwrap).collect();
    assert_eq!(want.len(), docs.len());
    for sizes in CHUNKINGS {
        let raw = read_all(RawCodec::default(), &stream, sizes.clone());
        assert_eq!(raw.len(), docs.len());
        for (got, doc) in raw.iter().zip(&docs) {
            assert_eq!(got.as_ref().unwrap(), &doc[..]);
        }
        let graphs = read_all(DocumentCodec::default(), &stream, sizes.clone());
        assert_eq!(graphs.len(), docs.len());
        for (got, want) in graphs.into_iter().zip(&want) {
            assert!(got.unwrap().into_document() == *want);
        }
    }
}

#[test]
fn serde_items_are_what_from_slice_gives() {
    // The documents serde reads as a `Value` (a strong cycle is no tree).
    let docs: Vec<Vec<u8>> = every_kind()
        .into_iter()
        .filter(|d| sereal::from_slice::<Value>(d).is_ok())
        .collect();
    assert!(docs.len() > 200, "{} documents", docs.len());
    let stream = docs.concat();
    for sizes in CHUNKINGS {
        let got = read_all(SerealCodec::<Value>::default(), &stream, sizes);
        assert_eq!(got.len(), docs.len());
        for (got, doc) in got.into_iter().zip(&docs) {
            assert!(got.unwrap() == sereal::from_slice::<Value>(doc).unwrap());
        }
    }
}

#[test]
fn perl_corpus_streams() {
    let dec = Decoder::default();
    for p in PROFILES {
        let cases = sereal::conformance::read_cases(&corpus(p)).expect("corpus readable");
        let docs: Vec<Vec<u8>> = cases
            .into_iter()
            .filter_map(|c| c.srl)
            .filter(|d| dec.decode(d).is_ok())
            .collect();
        let stream = docs.concat();
        let raw = read_all(RawCodec::default(), &stream, Sizes::Random(p.len() as u64));
        assert_eq!(raw.len(), docs.len(), "profile {p}");
        for (got, doc) in raw.iter().zip(&docs) {
            assert_eq!(got.as_ref().unwrap(), &doc[..], "profile {p}");
        }
    }
}

#[test]
fn truncated_last_document_is_truncated_at_its_offset() {
    let docs = every_kind();
    let head = docs[..40].concat();
    let zstd = docs
        .iter()
        .find(|d| d[4] >> 4 == 4 && d.len() > 40)
        .unwrap();
    let longest = docs.iter().max_by_key(|d| d.len()).unwrap();
    for last in [longest, zstd] {
        for cut in [1, 5, 6, last.len() / 2, last.len() - 1] {
            let stream = [&head[..], &last[..cut]].concat();
            let want = Decoder::default().documents(&stream).last().unwrap();
            let want = want.unwrap_err();
            assert_eq!(want.kind(), &ErrorKind::Truncated);
            for sizes in [Sizes::Fixed(7), Sizes::Random(cut as u64)] {
                let got = read_all(RawCodec::default(), &stream, sizes.clone());
                assert_eq!(got.len(), 41);
                assert_eq!(got[40].as_ref().unwrap_err(), &want, "cut at {cut}");
                let got = read_all(SerealCodec::<Value>::default(), &stream, sizes);
                assert_eq!(got[40].as_ref().unwrap_err(), &want, "cut at {cut}");
            }
        }
    }
}

#[test]
fn a_corrupt_document_ends_the_stream_with_its_error() {
    let one = sereal::to_vec(&[1, 2, 3]).unwrap();
    let mut bad = sereal::to_vec(&[4, 5, 6]).unwrap();
    let last = bad.len() - 1;
    bad[last] = 0x3f; // a reserved tag where the last element should be
    let stream = [&one[..], &bad[..], &one[..]].concat();
    let want: Vec<_> = Decoder::default().documents(&stream).collect();
    let err = want[1].as_ref().unwrap_err();
    assert!(err.offset() > Some(one.len()), "{err}");
    for sizes in CHUNKINGS {
        let mut framed = FramedRead::new(
            Chunked::new(&stream, sizes),
            SerealCodec::<Vec<u8>>::default(),
        );
        block_on(async {
            assert_eq!(framed.next().await.unwrap().unwrap(), [1, 2, 3]);
            assert_eq!(&framed.next().await.unwrap().unwrap_err(), err);
            assert_eq!(framed.decoder().offset(), one.len());
            // FramedRead ends the stream after an error; polled again, it
            // reads on, and the codec drops what it is given.
            assert!(framed.next().await.is_none());
            assert!(framed.next().await.is_none());
            assert!(framed.read_buffer().is_empty());
        });
        let raw = read_all(RawCodec::default(), &stream, Sizes::Fixed(3));
        assert_eq!(raw.len(), 2);
        assert_eq!(raw[1].as_ref().unwrap_err(), err);
    }
}

/// Reads `stream` with `codec` in reads of `chunk` bytes to its first
/// error: the error, the bytes the reader delivered, and the read
/// buffer's capacity then.
fn first_error<C>(codec: C, stream: &[u8], chunk: usize) -> (sereal::Error, usize, usize)
where
    C: tokio_util::codec::Decoder<Error = sereal::Error>,
{
    let reader = Chunked::new(stream, Sizes::Fixed(chunk));
    let delivered = reader.delivered.clone();
    let mut framed = FramedRead::new(reader, codec);
    let err = block_on(async {
        loop {
            match framed.next().await {
                Some(Ok(_)) => {}
                Some(Err(e)) => return e,
                None => panic!("no error"),
            }
        }
    });
    let capacity = framed.read_buffer().capacity();
    (err, delivered.load(Ordering::Relaxed), capacity)
}

#[test]
fn an_oversized_document_is_refused_before_its_bytes_arrive() {
    let limit = 100_000;
    let chunk = 7 << 10;
    let opts = DecoderOptions::new().max_document_size(limit);
    let small = sereal::to_vec("small").unwrap();
    let zstd = EncoderOptions::new()
        .compress(Compression::Zstd)
        .compress_threshold(0);
    let mut rng = Rng(3);
    let noise: Vec<u8> = (0..1_000_000).map(|_| rng.next() as u8).collect();
    for big in [
        sereal::to_vec(&"x".repeat(1_000_000)).unwrap(),
        sereal::to_vec_with(&Value::bytes(noise), &zstd).unwrap(),
        sereal::to_vec(&vec![7u32; 1_000_000]).unwrap(),
    ] {
        let stream = [&small[..], &big[..], &small[..]].concat();
        // As the push decoder has it, refused at the length or count
        // that said it, whatever the chunking.
        let mut inc = Decoder::new(opts.clone()).incremental();
        inc.feed(&stream);
        inc.next_document().unwrap().unwrap();
        let want = inc.next_document().unwrap().unwrap_err();
        assert!(want.offset() < Some(small.len() + 20), "{want}");
        assert!(matches!(want.kind(), ErrorKind::LimitExceeded(_)), "{want}");
        let (err, delivered, capacity) = first_error(
            SerealCodec::<Value>::new(Decoder::new(opts.clone())),
            &stream,
            chunk,
        );
        assert_eq!(err, want);
        assert!(delivered <= limit + chunk, "{delivered} bytes read");
        assert!(capacity <= limit + chunk, "a buffer of {capacity} bytes");
        let (err, delivered, _) =
            first_error(RawCodec::new(Decoder::new(opts.clone())), &stream, chunk);
        assert_eq!(err, want);
        assert!(delivered <= limit + chunk, "{delivered} bytes read");
    }
}

#[test]
fn room_is_reserved_by_bytes_not_by_claims() {
    // A string claiming 200 MB under options with no limits: the codec
    // reserves at most 64 KiB ahead of what it holds.
    let mut doc = b"=\xF3rl\x05\x00\x26".to_vec();
    doc.extend([0x80, 0xB4, 0xD5, 0x5F]); // varint 200_000_000
    let mut codec = RawCodec::new(Decoder::new(DecoderOptions::trusted()));
    let mut buf = BytesMut::new();
    for &b in &doc {
        buf.extend_from_slice(&[b]);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert!(buf.capacity() <= (64 << 10) + 16, "{}", buf.capacity());
    }
    assert!(buf.capacity() >= 64 << 10, "room for the string's bytes");
    // The default limits refuse it at its length.
    let mut codec = RawCodec::default();
    let err = codec.decode(&mut BytesMut::from(&doc[..])).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::LimitExceeded(_)), "{err}");
    assert_eq!(err.offset(), Some(7));
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Rec {
    id: u64,
    name: String,
    email: String,
    tags: Vec<String>,
}

fn rec(i: u64) -> Rec {
    Rec {
        id: i,
        name: format!("user {i}"),
        email: format!("user{i}@example.com"),
        tags: (1..=i % 4).map(|t| format!("t{t}")).collect(),
    }
}

#[test]
fn framed_write_and_read_round_trip() {
    let recs: Vec<Rec> = (1..=2000).map(rec).collect();
    let zstd = EncoderOptions::new()
        .compress(Compression::Zstd)
        .compress_threshold(0);
    for ser in [EncoderOptions::new(), zstd] {
        let codec = SerealCodec::<Rec>::with_options(Decoder::default(), &ser);
        let got = round_trip(codec, SerealCodec::<Rec>::default(), recs.clone(), 100);
        assert_eq!(got, recs);
    }
    // Raw bytes through, and the documents back out as they were.
    let docs: Vec<Bytes> = every_kind().into_iter().map(Bytes::from).collect();
    let got = round_trip(RawCodec::default(), RawCodec::default(), docs.clone(), 1000);
    assert_eq!(got, docs);
}

/// What `reader` reads of `items` written by `writer` through a duplex
/// pipe of `size` bytes.
fn round_trip<I, W, R>(writer: W, reader: R, items: Vec<I>, size: usize) -> Vec<R::Item>
where
    I: Send + 'static,
    W: tokio_util::codec::Encoder<I, Error = sereal::Error> + Send + 'static,
    R: tokio_util::codec::Decoder<Error = sereal::Error>,
{
    block_on(async move {
        let (w, r) = tokio::io::duplex(size);
        let writer = tokio::spawn(async move {
            let mut sink = FramedWrite::new(w, writer);
            for item in items {
                sink.send(item).await.unwrap();
            }
            sink.close().await.unwrap();
        });
        let got = FramedRead::new(r, reader)
            .map(|r| r.unwrap())
            .collect()
            .await;
        writer.await.unwrap();
        got
    })
}

#[test]
fn a_megabyte_document_read_a_byte_at_a_time() {
    // Each byte is scanned once: rescanning the document from its start
    // after every read would take some 10^12 steps here.
    let recs: Vec<Rec> = (0..24_000).map(rec).collect();
    let doc = sereal::to_vec(&recs).unwrap();
    assert!(doc.len() > 1_000_000, "{} bytes", doc.len());
    let stream = [&doc[..], &sereal::to_vec(&recs[..1]).unwrap()].concat();
    let t = std::time::Instant::now();
    let got = read_all(SerealCodec::<Vec<Rec>>::default(), &stream, Sizes::Fixed(1));
    eprintln!("{} bytes a byte at a time: {:?}", stream.len(), t.elapsed());
    assert_eq!(got.len(), 2);
    assert!(got[0].as_ref().unwrap() == &recs);
    assert!(got[1].as_ref().unwrap() == &recs[..1]);
    // The same with the codec driven directly.
    let mut codec = RawCodec::default();
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for &b in &stream {
        buf.extend_from_slice(&[b]);
        out.extend(codec.decode(&mut buf).unwrap());
    }
    assert_eq!(out, [&doc[..], &stream[doc.len()..]]);
}

/// The Perl producer of `examples/tokio_consumer.rs`: connects to the port
/// it is given and writes that many records.
const PRODUCER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/tokio_producer.pl");

#[test]
fn records_from_a_perl_producer_over_tcp() {
    if !perl_sereal("records_from_a_perl_producer_over_tcp") {
        return;
    }
    let n = 5000;
    let got: Vec<Rec> = block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut perl = std::process::Command::new("perl")
            .args([PRODUCER, &port.to_string(), &n.to_string()])
            .spawn()
            .expect("perl runs");
        let (socket, _) = listener.accept().await.unwrap();
        let got = FramedRead::new(socket, SerealCodec::<Rec>::default())
            .map(|r| r.unwrap())
            .collect()
            .await;
        assert!(perl.wait().unwrap().success());
        got
    });
    assert_eq!(got.len(), n as usize);
    for (i, r) in got.iter().enumerate() {
        assert_eq!(*r, rec(i as u64 + 1));
    }
}
