//! Typed streams: `Deserializer::from_slice` and `from_reader` with
//! `into_iter::<T>()`, `Incremental::next_as`, `ReadDocuments::next_as`
//! and the raw takes must yield, document by document, what `from_slice`
//! gives on each document alone, with the same errors at stream offsets,
//! however the bytes are cut.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use sereal::conformance::read_cases;
use sereal::stream::{Incremental, ReadDocuments};
use sereal::{Category, Decoder, DecoderOptions, Deserializer, Error, ErrorKind, Result, Value};
use std::fmt::Debug;
mod common;
use common::streams::Chunked;
use common::{corpus, shaped_documents, Rng, PROFILES};

/// Where each document ends in their concatenation.
fn ends(docs: &[Vec<u8>]) -> Vec<usize> {
    docs.iter()
        .scan(0, |end, d| {
            *end += d.len();
            Some(*end)
        })
        .collect()
}

/// What each reader yields of `stream` in pieces of `chunk` bytes (the
/// slice reader takes it whole), with the offset it reports after each
/// item.
type Yield<T> = Vec<(Result<T>, usize)>;

fn from_slice_stream<T: DeserializeOwned>(stream: &[u8]) -> Yield<T> {
    let mut it = Deserializer::from_slice(stream).into_iter::<T>();
    let mut out = Vec::new();
    while let Some(r) = it.next() {
        out.push((r, it.byte_offset()));
    }
    out
}

fn from_reader_stream<T: DeserializeOwned>(stream: &[u8], chunk: usize) -> Yield<T> {
    let mut it = Deserializer::from_reader(Chunked::new(stream, chunk)).into_iter::<T>();
    let mut out = Vec::new();
    while let Some(r) = it.next() {
        out.push((r, it.byte_offset()));
    }
    out
}

fn incremental_stream<T: DeserializeOwned>(stream: &[u8], chunk: usize) -> Yield<T> {
    let mut inc = Incremental::default();
    let mut out = Vec::new();
    for piece in stream.chunks(chunk) {
        inc.feed(piece);
        while let Some(r) = inc.next_as::<T>() {
            out.push((r, inc.offset()));
        }
    }
    inc.finish();
    while let Some(r) = inc.next_as::<T>() {
        out.push((r, inc.offset()));
    }
    out
}

fn read_documents_stream<T: DeserializeOwned>(stream: &[u8], chunk: usize) -> Yield<T> {
    let mut docs = ReadDocuments::new(Chunked::new(stream, chunk), Decoder::default());
    let mut out = Vec::new();
    while let Some(r) = docs.next_as::<T>() {
        out.push((r, docs.offset()));
    }
    out
}

/// `T::deserialize` on one deserializer, document after document, then
/// `end`.
fn one_by_one<T: DeserializeOwned>(stream: &[u8], n: usize) -> Vec<T> {
    let mut de = Deserializer::from_slice(stream);
    let mut out: Vec<T> = (0..n).map(|_| T::deserialize(&mut de).unwrap()).collect();
    de.end().unwrap();
    let mut de = Deserializer::from_reader(Chunked::new(stream, 7));
    let by_reader: Vec<T> = (0..n).map(|_| T::deserialize(&mut de).unwrap()).collect();
    de.end().unwrap();
    out.extend(by_reader);
    out
}

/// Values compared, errors by kind and offset; printed only when they
/// differ.
fn same<T: PartialEq + Debug>(got: &Yield<T>, want: &Yield<T>, what: &str) {
    let alike = |(a, x): &(Result<T>, usize), (b, y): &(Result<T>, usize)| {
        x == y
            && match (a, b) {
                (Ok(a), Ok(b)) => a == b,
                (Err(a), Err(b)) => (a.kind(), a.offset()) == (b.kind(), b.offset()),
                _ => false,
            }
    };
    if got.len() == want.len() && got.iter().zip(want).all(|(g, w)| alike(g, w)) {
        return;
    }
    let show = |y: &Yield<T>| {
        y.iter()
            .map(|(r, at)| match r {
                Ok(v) => format!("{v:?} @{at}"),
                Err(e) => format!("error {:?} at {:?} @{at}", e.kind(), e.offset()),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(show(got), show(want), "{what}");
    panic!("{what}: the values differ but print alike");
}

/// Every reader, in pieces of `chunks` bytes, yields what `from_slice`
/// gives on each of `docs` alone, with each document's end as the offset;
/// the raw takes yield the documents' bytes.
fn all_readers_agree<T: DeserializeOwned + PartialEq + Debug>(docs: &[Vec<u8>], chunks: &[usize]) {
    let stream = docs.concat();
    let want: Yield<T> = docs
        .iter()
        .zip(ends(docs))
        .map(|(d, end)| (sereal::from_slice::<T>(d), end))
        .collect();
    assert!(
        want.iter().all(|(r, _)| r.is_ok()),
        "the documents read alone"
    );
    same(&from_slice_stream(&stream), &want, "slice");
    for &chunk in chunks {
        same(
            &from_reader_stream(&stream, chunk),
            &want,
            &format!("reader, {chunk}-byte reads"),
        );
        same(
            &incremental_stream(&stream, chunk),
            &want,
            &format!("incremental, {chunk}-byte pieces"),
        );
        same(
            &read_documents_stream(&stream, chunk),
            &want,
            &format!("ReadDocuments, {chunk}"),
        );
        let mut raw = ReadDocuments::new(Chunked::new(&stream, chunk), Decoder::default());
        for d in docs {
            assert_eq!(raw.next_raw().unwrap().unwrap(), &d[..]);
        }
        assert!(raw.next_raw().is_none());
    }
    let mut inc = Incremental::default();
    inc.feed(&stream);
    for d in docs {
        assert_eq!(inc.next_raw().unwrap().unwrap(), &d[..]);
    }
    assert!(inc.next_raw().is_none());
    let values: Vec<T> = want.into_iter().map(|(r, _)| r.unwrap()).collect();
    let twice = one_by_one::<T>(&stream, docs.len());
    assert!(twice[..docs.len()] == values[..] && twice[docs.len()..] == values[..]);
}

/// Perl's documents of one profile that `T` reads.
fn perl_documents<T: DeserializeOwned>(profile: &str) -> Vec<Vec<u8>> {
    read_cases(&corpus(profile))
        .expect("corpus readable")
        .into_iter()
        .filter_map(|c| c.srl)
        .filter(|d| sereal::from_slice::<T>(d).is_ok())
        .collect()
}

#[test]
fn perl_corpus_streams_as_values() {
    for p in PROFILES {
        let docs = perl_documents::<Value>(p);
        assert!(docs.len() > 1000, "profile {p}: {} documents", docs.len());
        // A byte at a time on one profile, as a slow socket delivers
        // them.
        let chunks: &[usize] = if p == "v5_zstd" {
            &[1, 4096]
        } else {
            &[7, 65536]
        };
        all_readers_agree::<Value>(&docs, chunks);
    }
}

#[test]
fn perl_corpus_streams_as_json_values() {
    for p in ["v3", "v5_dedupe", "v5_snappy", "v5_freeze"] {
        let docs = perl_documents::<serde_json::Value>(p);
        assert!(docs.len() > 1000, "profile {p}: {} documents", docs.len());
        all_readers_agree::<serde_json::Value>(&docs, &[13, 4096]);
    }
}

#[test]
fn every_shape_every_compression_as_values() {
    let docs: Vec<Vec<u8>> = shaped_documents()
        .into_iter()
        .filter(|d| sereal::from_slice::<Value>(d).is_ok())
        .collect();
    assert!(docs.len() > 100, "{} documents", docs.len());
    all_readers_agree::<Value>(&docs, &[1, 7, 65536]);
}

#[derive(Deserialize, Debug, PartialEq)]
struct Rec {
    id: u64,
    name: String,
    tags: Vec<String>,
    score: Option<f64>,
}

#[derive(Deserialize, Debug, PartialEq)]
struct RecRef<'a> {
    id: u64,
    name: &'a str,
    #[serde(borrow)]
    tags: Vec<&'a str>,
}

fn record(i: u64) -> Value {
    Value::hash([
        ("id", Value::from(i)),
        (
            "name",
            Value::from(format!(
                "user {i}, whose name is long enough not to be inlined"
            )),
        ),
        ("tags", Value::array(["a", "b"])),
        (
            "score",
            if i.is_multiple_of(3) {
                Value::Undef
            } else {
                Value::Double(i as f64 / 4.0)
            },
        ),
    ])
}

/// Random record documents, some compressed, some with a header, some of
/// older protocols.
fn record_docs(rng: &mut Rng, n: u64) -> Vec<Vec<u8>> {
    use sereal::{Compression, Encoder, EncoderOptions};
    (0..n)
        .map(|i| {
            let opts = match rng.below(6) {
                0 => EncoderOptions::new()
                    .compress(Compression::Zstd)
                    .compress_threshold(0),
                1 => EncoderOptions::new()
                    .compress(Compression::Snappy)
                    .compress_threshold(0),
                2 => EncoderOptions::new().protocol_version(2),
                3 => EncoderOptions::new().dedupe_strings(true),
                _ => EncoderOptions::new(),
            };
            let mut enc = Encoder::new(opts).unwrap();
            if rng.below(5) == 0 {
                enc.encode_with_header(&record(i), &Value::from("header"))
                    .unwrap()
            } else {
                enc.encode(&record(i)).unwrap()
            }
        })
        .collect()
}

#[test]
fn derived_structs_at_random_cuts() {
    let mut rng = Rng(0x5eed_5717);
    for _ in 0..20 {
        let n = 1 + rng.below(60) as u64;
        let docs = record_docs(&mut rng, n);
        let chunk = 1 + rng.below(300);
        all_readers_agree::<Rec>(&docs, &[chunk]);
    }
}

#[test]
fn borrowed_fields_from_a_slice() {
    let docs: Vec<Vec<u8>> = (0..50)
        .map(|i| sereal::encode(&record(i)).unwrap())
        .collect();
    let stream = docs.concat();
    let recs: Vec<RecRef> = Deserializer::from_slice(&stream)
        .into_iter()
        .collect::<Result<_>>()
        .unwrap();
    assert_eq!(recs.len(), 50);
    assert_eq!(recs[49].id, 49);
    // borrowed from the input itself
    let range = stream.as_ptr_range();
    assert!(range.contains(&recs[49].name.as_ptr()));
    // a compressed document cannot lend its strings: from_slice's error
    let packed = sereal::encode_with(
        &Value::hash([
            ("id", Value::from(1)),
            ("name", Value::from("n".repeat(100))),
        ]),
        &sereal::EncoderOptions::new()
            .compress(sereal::Compression::Zstd)
            .compress_threshold(0),
    )
    .unwrap();
    let stream = [docs[0].clone(), packed.clone()].concat();
    let got: Vec<Result<RecRef>> = Deserializer::from_slice(&stream).into_iter().collect();
    let want = sereal::from_slice::<RecRef>(&packed).unwrap_err();
    assert_eq!(got.len(), 2);
    let e = got[1].as_ref().unwrap_err();
    assert_eq!((e.kind(), e.position()), (want.kind(), want.position()));
    // a reader's documents are copied: a borrowed field is refused there
    let mut de = Deserializer::from_reader(&docs[0][..]);
    assert!(RecRef::deserialize(&mut de).is_err());
}

/// The first error ends every stream; each reader gives it with the same
/// kind, at the same stream offset, as `from_slice` gives it on the
/// failing document alone (shifted by where the document starts).
fn fails_alike<T: DeserializeOwned + PartialEq + Debug>(docs: &[Vec<u8>], bad: usize) -> Error {
    let stream = docs.concat();
    let start: usize = docs[..bad].iter().map(Vec::len).sum();
    let alone = sereal::from_slice::<T>(&stream[start..]).unwrap_err();
    let mut want: Yield<T> = docs[..bad]
        .iter()
        .zip(ends(docs))
        .map(|(d, end)| (sereal::from_slice::<T>(d), end))
        .collect();
    let shifted = match alone.position() {
        Some(sereal::Position::Document(o)) => Some(o + start),
        p => p.map(|p| p.offset()),
    };
    let readers: Vec<(&str, Yield<T>)> = vec![
        ("slice", from_slice_stream(&stream)),
        ("reader", from_reader_stream(&stream, 5)),
        ("incremental", incremental_stream(&stream, 5)),
        ("ReadDocuments", read_documents_stream(&stream, 64 << 10)),
    ];
    for (what, mut got) in readers {
        let (last, _) = got.pop().unwrap_or_else(|| panic!("{what}: nothing"));
        let e = last.unwrap_err();
        assert_eq!(
            (e.kind(), e.offset()),
            (alone.kind(), shifted),
            "{what}: {e}"
        );
        same(&got, &want, what);
    }
    want.clear();
    alone
}

#[test]
fn a_truncated_last_document() {
    let mut docs = record_docs(&mut Rng(7), 30);
    let last = docs.last_mut().unwrap();
    last.truncate(last.len() - 3);
    let e = fails_alike::<Rec>(&docs, 29);
    assert!(e.is_eof(), "{e}");
}

#[test]
fn a_corrupt_document_in_the_middle() {
    let mut docs: Vec<Vec<u8>> = (0..20)
        .map(|i| sereal::encode(&record(i)).unwrap())
        .collect();
    docs[9][6] = 0x3d; // the body's first tag: a reserved one
    let e = fails_alike::<Rec>(&docs, 9);
    assert_eq!(e.classify(), Category::Syntax);
    let mut docs: Vec<Vec<u8>> = (0..20)
        .map(|i| sereal::encode(&record(i)).unwrap())
        .collect();
    docs[4][1] = b'X'; // the magic string
    let e = fails_alike::<Rec>(&docs, 4);
    assert_eq!(e.kind(), &ErrorKind::BadMagic);
}

#[test]
fn a_document_of_another_type_in_the_middle() {
    let mut docs: Vec<Vec<u8>> = (0..20)
        .map(|i| sereal::encode(&record(i)).unwrap())
        .collect();
    docs[12] = sereal::encode(&Value::array([1, 2, 3])).unwrap();
    let e = fails_alike::<Rec>(&docs, 12);
    assert_eq!(e.classify(), Category::Data);
    // Going on past it: take the documents' bytes, read each.
    let stream = docs.concat();
    let mut docs_in = ReadDocuments::new(&stream[..], Decoder::default());
    let mut read = Vec::new();
    while let Some(raw) = docs_in.next_raw() {
        read.push(sereal::from_slice::<Rec>(raw.unwrap()));
    }
    assert_eq!(read.len(), 20);
    assert!(read[12].is_err() && read.iter().filter(|r| r.is_ok()).count() == 19);
}

#[test]
fn limits_apply_to_each_document() {
    let small = sereal::encode(&record(1)).unwrap();
    let big = sereal::encode(&Value::from("x".repeat(5000))).unwrap();
    let stream = [small.clone(), big, small].concat();
    let opts = DecoderOptions::new().max_document_size(1000);
    let mut it = Deserializer::from_slice_with(&stream, opts.clone()).into_iter::<Value>();
    assert!(it.next().unwrap().is_ok());
    let e = it.next().unwrap().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)), "{e}");
    assert!(it.next().is_none());
    let mut it =
        Deserializer::from_reader_with(Chunked::new(&stream, 100), opts).into_iter::<Value>();
    assert!(it.next().unwrap().is_ok());
    let e2 = it.next().unwrap().unwrap_err();
    assert_eq!((e2.kind(), e2.offset()), (e.kind(), e.offset()));
}

#[test]
fn a_failing_reader_is_yielded_and_reading_goes_on() {
    struct Flaky<'a> {
        data: &'a [u8],
        calls: usize,
    }
    impl std::io::Read for Flaky<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(3) {
                return Err(std::io::ErrorKind::WouldBlock.into());
            }
            let n = out.len().min(10).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }
    let docs: Vec<Vec<u8>> = (0..10)
        .map(|i| sereal::encode(&record(i)).unwrap())
        .collect();
    let stream = docs.concat();
    let it = Deserializer::from_reader(Flaky {
        data: &stream,
        calls: 0,
    })
    .into_iter::<Rec>();
    let (ok, err): (Vec<_>, Vec<_>) = it.partition(|r| r.is_ok());
    assert_eq!(ok.len(), 10);
    assert!(!err.is_empty());
    assert!(err
        .iter()
        .all(|e| e.as_ref().unwrap_err().classify() == Category::Io));
}

#[test]
fn end_reports_what_is_left() {
    let one = sereal::encode(&Value::from(1)).unwrap();
    let two = [one.clone(), one.clone()].concat();
    let mut de = Deserializer::from_reader(&two[..]);
    let _: i64 = i64::deserialize(&mut de).unwrap();
    let e = de.end().unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (&ErrorKind::TrailingData, Some(one.len()))
    );
    let mut de = Deserializer::from_slice(&one);
    let _: i64 = i64::deserialize(&mut de).unwrap();
    de.end().unwrap();
    // past the end: the input ends where a document should start
    let e = i64::deserialize(&mut de).unwrap_err();
    assert!(e.is_eof(), "{e}");
}

/// The shapes users write, as serde_json taught them.
#[test]
fn the_common_shapes_compile_and_hold() -> Result<()> {
    let buf: Vec<u8> = (0..10)
        .flat_map(|i| sereal::to_vec(&record(i)).unwrap())
        .collect();
    let mut it = sereal::Deserializer::from_slice(&buf).into_iter::<Rec>();
    let mut ids = Vec::new();
    for r in it.by_ref() {
        let r: Rec = r?;
        ids.push(r.id);
    }
    assert_eq!(ids, (0..10).collect::<Vec<u64>>());
    assert_eq!(it.byte_offset(), buf.len());
    let socket = Chunked::new(&buf, 100);
    let recs: Vec<Rec> = sereal::Deserializer::from_reader(socket)
        .into_iter::<Rec>()
        .collect::<Result<_>>()?;
    assert_eq!(recs.len(), 10);
    let one = sereal::to_vec(&record(3))?;
    let doc = sereal::decode(&one)?;
    let r: Rec = sereal::from_value(&doc)?;
    assert_eq!(r, recs[3]);
    for doc in Decoder::default().documents_from_reader(&buf[..]) {
        let r: Rec = sereal::from_value(&doc?)?;
        assert!(r.id < 10);
    }
    Ok(())
}
