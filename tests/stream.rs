//! Stream decoding: the push API (`Incremental`) and the pull API
//! (`ReadDocuments`) must yield what `Decoder::documents` yields over the
//! whole buffer, however the bytes are cut, without reading past what
//! they yield.

use sereal::conformance::{frozen_handlers, read_cases};
use sereal::stream::{Incremental, ReadDocuments};
use sereal::{
    encode, Compression, Decoder, DecoderOptions, Document, Encoder, EncoderOptions, Error,
    ErrorKind, Ref, Result, Value,
};
use std::cell::Cell;
use std::io::Read;
mod common;
use common::streams::Chunked;
use common::{corpus, shaped_documents, PROFILES};
use std::rc::Rc;

/// Pushes `stream` in pieces of `chunk` bytes, taking documents out as
/// they complete, and finishes it.
fn push_all(dec: &Decoder, stream: &[u8], chunk: usize) -> Vec<Result<Document>> {
    let mut inc = dec.incremental();
    let mut out = Vec::new();
    for piece in stream.chunks(chunk) {
        inc.feed(piece);
        while let Some(doc) = inc.next_document() {
            out.push(doc);
        }
    }
    inc.finish();
    while let Some(doc) = inc.next_document() {
        out.push(doc);
    }
    out
}

fn pull_all(dec: &Decoder, stream: &[u8], chunk: usize) -> Vec<Result<Document>> {
    dec.documents_from_reader(Chunked::new(stream, chunk))
        .collect()
}

/// Both APIs, in pieces of 1, 7 and 64 KiB, give what `documents` gives.
#[track_caller]
fn same_as_documents(dec: &Decoder, stream: &[u8]) -> Vec<Result<Document>> {
    let want: Vec<Result<Document>> = dec.documents(stream).collect();
    for chunk in [1, 7, 64 << 10] {
        assert!(
            push_all(dec, stream, chunk) == want,
            "push in {chunk}-byte pieces"
        );
        assert!(
            pull_all(dec, stream, chunk) == want,
            "pull in {chunk}-byte reads"
        );
    }
    want
}

/// Perl's documents of one profile that decode on their own.
fn perl_documents(profile: &str, dec: &Decoder) -> Vec<Vec<u8>> {
    read_cases(&corpus(profile))
        .expect("corpus readable")
        .into_iter()
        .filter_map(|c| c.srl)
        .filter(|d| dec.decode(d).is_ok())
        .collect()
}

fn frozen_decoder() -> Decoder {
    let mut enc = Encoder::new(EncoderOptions::new()).unwrap();
    let mut dec = Decoder::default();
    frozen_handlers(&mut enc, &mut dec);
    dec
}

/// Every profile of the Perl corpus (protocols 1 to 5, every tag Perl
/// writes, dedupe's COPY, aliases, weak refs, FREEZE objects, Snappy, zlib
/// and zstd bodies), each profile one stream.
#[test]
fn perl_corpus_streams() {
    let dec = frozen_decoder();
    for p in PROFILES {
        let docs = perl_documents(p, &dec);
        assert!(docs.len() > 1300, "profile {p}: {} documents", docs.len());
        let stream = docs.concat();
        let got = same_as_documents(&dec, &stream);
        assert_eq!(got.len(), docs.len(), "profile {p}");
        assert!(got.iter().all(|d| d.is_ok()), "profile {p}");
    }
}

#[test]
fn every_shape_every_compression() {
    let dec = Decoder::default();
    let docs = shaped_documents();
    let got = same_as_documents(&dec, &docs.concat());
    assert_eq!(got.len(), docs.len());
    for (d, g) in docs.iter().zip(&got) {
        assert!(*g.as_ref().unwrap() == dec.decode(d).unwrap());
    }
}

#[test]
fn header_user_data_is_skipped_not_lost() {
    let dec = Decoder::default();
    let doc = Encoder::new(EncoderOptions::new())
        .unwrap()
        .encode_with_header(&Value::from("body"), &Value::array(["meta"; 100]))
        .unwrap();
    let stream = [doc.clone(), doc.clone()].concat();
    let got = same_as_documents(&dec, &stream);
    assert_eq!(
        got,
        [
            Ok(Value::from("body").into()),
            Ok(Value::from("body").into())
        ]
    );
}

#[test]
fn truncated_last_document() {
    let dec = Decoder::default();
    let docs = shaped_documents();
    let head = docs[..50].concat();
    let longest = docs.iter().max_by_key(|d| d.len()).unwrap();
    let typed = |t: u8| {
        docs.iter()
            .find(|d| d[4] >> 4 == t && d.len() > 40)
            .unwrap()
    };
    let with_header = docs.iter().find(|d| d[5] > 1).unwrap();
    for last in [longest, typed(2), typed(3), typed(4), with_header] {
        for cut in [1, 4, 5, 6, last.len() / 2, last.len() - 1] {
            let stream = [&head[..], &last[..cut]].concat();
            let got = same_as_documents(&dec, &stream);
            assert_eq!(got.len(), 51);
            let err = got[50].as_ref().unwrap_err();
            assert_eq!(err.kind(), &ErrorKind::Truncated, "cut at {cut}: {err}");
        }
    }
}

#[test]
fn garbage_between_documents() {
    let dec = Decoder::default();
    let one = encode(&Value::from(1)).unwrap();
    for garbage in [
        &b"garbage"[..],
        b"=",
        b"=srl\x07",
        b"=\xF3rl\x06\x00",
        b"=\xC3\xB3rl\x05",
    ] {
        let stream = [&one[..], garbage, &one[..]].concat();
        let got = same_as_documents(&dec, &stream);
        assert_eq!(got.len(), 2, "{garbage:?}");
        let at = got[1].as_ref().unwrap_err().offset().unwrap();
        assert!(
            (one.len()..one.len() + 5).contains(&at),
            "{garbage:?} at {at}"
        );
    }
}

#[test]
fn needed_is_a_lower_bound_and_at_least_one() {
    let dec = frozen_decoder();
    let mut docs = shaped_documents();
    docs.extend(perl_documents("v5_freeze", &dec).into_iter().step_by(7));
    docs.extend(perl_documents("v1", &dec).into_iter().step_by(7));
    let mut tight = 0;
    for doc in &docs {
        let mut inc = dec.incremental();
        for (i, &b) in doc.iter().enumerate() {
            let need = inc.needed();
            let remaining = doc.len() - i;
            assert!(
                (1..=remaining).contains(&need),
                "needed {need} with {remaining} bytes to go"
            );
            tight += usize::from(need == remaining);
            inc.feed(&[b]);
            let got = inc.next_document();
            assert_eq!(
                got.is_some(),
                i + 1 == doc.len(),
                "document out at byte {i}"
            );
        }
        assert_eq!(inc.needed(), 7, "the next document: at least 7 bytes");
    }
    // the bound is exact for the bytes of strings and frames being skipped
    assert!(tight > docs.len(), "{tight} exact answers");
}

#[test]
fn needed_counts_string_and_frame_bytes() {
    let doc = encode(&Value::from("y".repeat(5000))).unwrap();
    let mut inc = Incremental::default();
    inc.feed(&doc[..10]);
    assert!(inc.next_document().is_none());
    assert_eq!(inc.needed(), doc.len() - 10);
    // unscanned bytes count: no call to next_document needed
    inc.feed(&doc[10..20]);
    assert_eq!(inc.needed(), doc.len() - 20);

    let z = sereal::encode_with(
        &Value::array(vec![Value::from("compress me"); 500]),
        &EncoderOptions::new().compress(Compression::Zstd),
    )
    .unwrap();
    let mut inc = Incremental::default();
    inc.feed(&z[..12]);
    assert!(inc.next_document().is_none());
    assert_eq!(inc.needed(), z.len() - 12);
}

/// A reader that fails the test if it is read past `limit` bytes.
struct Fence<'a> {
    data: &'a [u8],
    limit: usize,
}

impl Read for Fence<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        assert!(
            self.limit > 0,
            "read past the fence: the reader would block"
        );
        let n = out.len().min(self.data.len()).min(self.limit);
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        self.limit -= n;
        Ok(n)
    }
}

#[test]
fn reader_is_not_read_past_the_document_it_yields() {
    let dec = Decoder::default();
    let first = encode(&Value::array(vec![Value::from("abc"); 100])).unwrap();
    let rest: Vec<u8> = (0..20_000)
        .flat_map(|i| encode(&Value::from(format!("doc {i}"))).unwrap())
        .collect();
    let stream = [first.clone(), rest].concat();

    // A socket that has delivered the first document and would now block.
    let mut docs = dec.documents_from_reader(Fence {
        data: &stream,
        limit: first.len(),
    });
    assert!(docs.next().unwrap().unwrap() == dec.decode(&first).unwrap());

    // With all the stream available, one buffer at most is read ahead.
    let reader = Chunked::new(&stream, usize::MAX);
    let delivered = reader.delivered.clone();
    let mut docs = ReadDocuments::new(reader, dec.clone());
    docs.next().unwrap().unwrap();
    assert!(
        delivered.get() <= first.len() + 64 * 1024,
        "{} bytes read",
        delivered.get()
    );
    assert_eq!(docs.count(), 20_000);
    assert_eq!(delivered.get(), stream.len());
}

#[test]
fn reader_errors_are_yielded_and_reading_goes_on() {
    struct Flaky<'a> {
        data: &'a [u8],
        calls: usize,
    }
    impl Read for Flaky<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            self.calls += 1;
            match self.calls % 3 {
                0 => Err(std::io::ErrorKind::WouldBlock.into()),
                1 => Err(std::io::ErrorKind::Interrupted.into()),
                _ => {
                    let n = out.len().min(self.data.len()).min(5);
                    out[..n].copy_from_slice(&self.data[..n]);
                    self.data = &self.data[n..];
                    Ok(n)
                }
            }
        }
    }
    let docs: Vec<Vec<u8>> = (0..10).map(|i| encode(&Value::from(i)).unwrap()).collect();
    let stream = docs.concat();
    let mut got = Vec::new();
    let mut would_block = 0;
    for r in Decoder::default().documents_from_reader(Flaky {
        data: &stream,
        calls: 0,
    }) {
        match r {
            Ok(v) => got.push(v),
            Err(e) => {
                assert!(
                    matches!(e.kind(), ErrorKind::Io(io) if io.get().kind() == std::io::ErrorKind::WouldBlock),
                    "{e:?}"
                );
                assert!(e.to_string().contains("read failed"), "{e}");
                assert!(std::error::Error::source(&e).is_some());
                would_block += 1;
            }
        }
    }
    assert_eq!(got, (0..10).map(Value::from).collect::<Vec<_>>());
    assert!(would_block > 5);
}

/// A protocol 1 document with a legacy Snappy body (no length prefix).
fn legacy_snappy(v: &Value) -> Vec<u8> {
    let raw = sereal::encode_with(v, &EncoderOptions::new().protocol_version(1)).unwrap();
    let body = snap::raw::Encoder::new().compress_vec(&raw[6..]).unwrap();
    [&b"=srl\x11\x00"[..], &body].concat()
}

#[test]
fn legacy_snappy_ends_with_the_input() {
    let dec = Decoder::default();
    let v = Value::array(vec![Value::from("legacy"); 50]);
    let last = legacy_snappy(&v);
    assert!(dec.decode(&last).unwrap() == v);
    let stream = [encode(&Value::from(1)).unwrap(), last.clone()].concat();
    let got = same_as_documents(&dec, &stream);
    assert!(got.len() == 2 && *got[1].as_ref().unwrap() == v);

    let mut inc = dec.incremental();
    inc.feed(&stream);
    assert_eq!(inc.next_document().unwrap().unwrap(), Value::from(1));
    assert!(inc.next_document().is_none(), "only the end ends it");
    assert_eq!(inc.needed(), 0);
    inc.finish();
    assert!(inc.next_document().unwrap().unwrap() == v);
    assert!(inc.next_document().is_none());
}

#[test]
fn options_and_thaw_handlers_apply() {
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    let mut dec = Decoder::default();
    frozen_handlers(&mut enc, &mut dec);
    let obj = Value::Ref(Ref::hash([("v", 5)].into_iter().collect()).blessed("Frozen"));
    let doc = enc.encode(&obj).unwrap();
    let stream = [doc.clone(), doc.clone()].concat();
    let got = same_as_documents(&dec, &stream);
    assert!(got.iter().all(|g| *g.as_ref().unwrap() == obj));

    let refusing = Decoder::new(DecoderOptions::new().refuse_objects(true));
    let got = same_as_documents(&refusing, &stream);
    assert_eq!(got.len(), 1);
    assert!(matches!(
        got[0].as_ref().unwrap_err().kind(),
        ErrorKind::ObjectRefused
    ));

    let z = sereal::encode_with(
        &Value::array(vec![Value::from("zzz"); 500]),
        &EncoderOptions::new().compress(Compression::Zstd),
    )
    .unwrap();
    let stream = [encode(&Value::from(1)).unwrap(), z].concat();
    let got = same_as_documents(
        &Decoder::new(DecoderOptions::new().refuse_zstd(true)),
        &stream,
    );
    assert_eq!(got.len(), 2);
    assert!(got[1].is_err());
}

/// A raw protocol 5 document with this body.
fn v5(body: &[u8]) -> Vec<u8> {
    [&b"=\xF3rl\x05\x00"[..], body].concat()
}

/// Pushes `stream` one byte at a time: the error (the stream's only
/// outcome), and how many bytes were fed when it came out.
fn push_bytewise(dec: &Decoder, stream: &[u8]) -> (Error, usize) {
    let mut inc = dec.incremental();
    for (i, &b) in stream.iter().enumerate() {
        inc.feed(&[b]);
        if let Some(r) = inc.next_document() {
            return (r.unwrap_err(), i + 1);
        }
    }
    inc.finish();
    (inc.next_document().unwrap().unwrap_err(), stream.len())
}

#[test]
fn limits_are_enforced_as_the_bytes_arrive() {
    // An array claiming 2^60 items: counted down, never allocated. It is
    // refused by max_num_array_entries when its count is read...
    let mut body = vec![0x2b];
    protocol_varint(&mut body, 1 << 60);
    let huge = v5(&body);
    let strict = Decoder::new(DecoderOptions::new().max_num_array_entries(1000));
    let (e, fed) = push_bytewise(&strict, &huge);
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)));
    assert_eq!((e.offset(), fed), (Some(7), huge.len()));
    assert_eq!(Err::<Document, _>(e), strict.decode(&huge));
    // ... by max_memory under the defaults, at the count too ...
    let (e, fed) = push_bytewise(&Decoder::default(), &huge);
    assert!(e.to_string().contains("max_memory"), "{e}");
    assert_eq!((e.offset(), fed), (Some(7), huge.len()));
    // ... and with no limits waits for its items, asking for them.
    let mut inc = Decoder::new(DecoderOptions::trusted()).incremental();
    inc.feed(&huge);
    inc.feed(&[0x01; 1000]);
    assert!(inc.next_document().is_none());
    assert_eq!(inc.needed(), (1 << 60) - 1000);
    inc.finish();
    assert_eq!(
        inc.next_document().unwrap().unwrap_err().kind(),
        &ErrorKind::Truncated
    );

    // The short forms are refused at their tag too, not once complete:
    // ARRAYREF_4 of four 100-byte strings, HASHREF_2 of two entries.
    let mut body = vec![0x44];
    for _ in 0..4 {
        body.extend_from_slice(&[0x26, 100]);
        body.extend_from_slice(&[b's'; 100]);
    }
    let short = v5(&body);
    let three = Decoder::new(DecoderOptions::new().max_num_array_entries(3));
    let (e, fed) = push_bytewise(&three, &short);
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)), "{e}");
    assert_eq!((e.offset(), fed), (Some(6), 7));
    assert_eq!(Err::<Document, _>(e), three.decode(&short));
    let pairs = v5(b"\x52\x61a\x01\x61b\x02");
    let one = Decoder::new(DecoderOptions::new().max_num_hash_entries(1));
    let (e, fed) = push_bytewise(&one, &pairs);
    assert_eq!((e.offset(), fed), (Some(6), 7), "{e}");
    assert_eq!(Err::<Document, _>(e), one.decode(&pairs));

    // Strings and hashes too.
    let s = v5(&[0x26, 0xff, 0xff, 0x03]);
    let short = Decoder::new(DecoderOptions::new().max_string_length(10));
    let (e, fed) = push_bytewise(&short, &s);
    assert_eq!((Err(e), fed), (short.decode(&s), s.len()));
    let h = v5(&[0x2a, 0x80, 0x01]);
    let small = Decoder::new(DecoderOptions::new().max_num_hash_entries(5));
    let (e, fed) = push_bytewise(&small, &h);
    assert_eq!((Err(e), fed), (small.decode(&h), h.len()));

    // Nesting: REFN chains, WEAKEN chains and arrays, deeper than allowed,
    // refused at the tag that goes too deep, as the decoder refuses it.
    let shallow = Decoder::new(DecoderOptions::new().max_recursion_depth(50));
    for unit in [
        &[0x28][..],
        &[0x30, 0x28],
        &[0x41],
        &[0x2b, 0x01],
        &[0xa8],
        &[0x51, 0x61, 0x6b],
    ] {
        let deep = v5(&unit.repeat(100));
        let (e, fed) = push_bytewise(&shallow, &deep);
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(50), "{unit:?}");
        let padded = [&deep[..], &[0u8; 200][..]].concat();
        let want = shallow.decode_prefix(&padded).unwrap_err();
        assert_eq!(e, want, "{unit:?}");
        assert!(fed < deep.len(), "{unit:?}: refused before the end");
    }
    // Without a limit, depth costs one frame per level, never recursion.
    let unlimited = Decoder::new(DecoderOptions::new().max_recursion_depth(0));
    let deep = v5(&[0x28].repeat(200_000));
    let mut inc = unlimited.incremental();
    inc.feed(&deep);
    assert!(inc.next_document().is_none());
    assert_eq!(inc.needed(), 1);
}

#[test]
fn bad_tags_inside_open_containers() {
    // The decoder given only the bytes so far would call them truncated
    // (the array's count is more than the bytes left): the stream says
    // what is wrong, where, as the decoder does when the bytes are there.
    let dec = Decoder::default();
    for (body, kind) in [
        (
            &[0x2b, 0x64, 0x01, 0x36][..],
            ErrorKind::UnexpectedTag(0x36, "as a value"),
        ),
        (
            &[0x2b, 0x64, 0x2a, 0x01, 0x01],
            ErrorKind::UnexpectedTag(0x01, "as a hash key"),
        ),
        (
            &[0x2b, 0x64, 0x2c, 0x01],
            ErrorKind::UnexpectedTag(0x01, "as a class name"),
        ),
        (
            &[
                0x2b, 0x64, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
            ErrorKind::BadVarint,
        ),
    ] {
        let doc = v5(body);
        let (e, fed) = push_bytewise(&dec, &doc);
        assert_eq!(e.kind(), &kind);
        assert_eq!(fed, doc.len());
        let padded = [&doc[..], &[0u8; 200][..]].concat();
        assert_eq!(
            Err(e),
            dec.decode_prefix(&padded).map(|(v, _)| v),
            "{body:?}"
        );
    }
}

fn protocol_varint(out: &mut Vec<u8>, n: u64) {
    sereal::protocol::write_varint(out, n);
}

#[test]
fn errors_carry_stream_offsets() {
    let dec = Decoder::default();
    let one = encode(&Value::array([1, 2, 3])).unwrap();
    let bad = v5(&[0x42, 0x01, 0x29, 0x63]); // REFP to nowhere
    let stream = [&one[..], &one[..], &bad[..]].concat();
    let got = same_as_documents(&dec, &stream);
    let e = got[2].as_ref().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::BadOffset(0x63, _)));
    assert_eq!(e.offset(), Some(2 * one.len() + 8));
    let mut inc = dec.incremental();
    inc.feed(&stream);
    inc.next_document();
    inc.next_document();
    assert_eq!(inc.offset(), 2 * one.len());
    assert!(inc.next_document().unwrap().is_err());
    assert!(inc.next_document().is_none(), "a failed stream is over");
    inc.feed(&one);
    assert!(inc.next_document().is_none());

    // Inside a compressed body, offsets count into the decompressed body;
    // offset() says where the document starts.
    let packed = zstd::bulk::compress(&[0x42, 0x01, 0x36], 3).unwrap();
    let mut bad = b"=\xF3rl\x45\x00".to_vec();
    sereal::protocol::write_varint(&mut bad, packed.len() as u64);
    bad.extend(packed);
    let stream = [&one[..], &bad[..]].concat();
    let got = same_as_documents(&dec, &stream);
    let e = got[1].as_ref().unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::UnexpectedTag(0x36, "as a value"));
    assert!(
        e.to_string().ends_with("at decompressed body offset 2"),
        "{e}"
    );
    let mut inc = dec.incremental();
    inc.feed(&stream);
    inc.next_document();
    assert!(inc.next_document().unwrap().is_err());
    assert_eq!(inc.offset(), one.len());
}

#[test]
fn empty_input_and_bytes_after_finish() {
    let dec = Decoder::default();
    assert!(pull_all(&dec, b"", 1).is_empty());
    let mut inc = Incremental::default();
    inc.finish();
    assert!(inc.next_document().is_none());
    inc.feed(&encode(&Value::from(1)).unwrap());
    assert!(
        inc.next_document().is_none(),
        "bytes after finish are ignored"
    );
}

/// Damaged streams: one byte of one document changed. Whatever the bytes,
/// no panic, and the same documents come out as from `documents`, then an
/// error at the same place (its kind may be more precise: `documents`
/// checks counts against the rest of the buffer, a stream cannot).
#[test]
fn damaged_streams_yield_the_same_documents() {
    let dec = frozen_decoder();
    let docs: Vec<Vec<u8>> = shaped_documents()
        .into_iter()
        .filter(|d| d.len() < 3000)
        .chain(perl_documents("v5_freeze", &dec).into_iter().step_by(50))
        .collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut rand = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for round in 0..3000 {
        let picked: Vec<&Vec<u8>> = (0..4).map(|_| &docs[rand(docs.len())]).collect();
        let mut stream: Vec<u8> = picked.iter().flat_map(|d| d.iter().copied()).collect();
        let at = rand(stream.len());
        stream[at] = match round % 3 {
            0 => rand(256) as u8,
            1 => stream[at] ^ 0x80,
            _ => stream[at].wrapping_add(1),
        };
        let want: Vec<Result<Document>> = dec.documents(&stream).collect();
        for chunk in [1, 7, stream.len()] {
            for got in [
                push_all(&dec, &stream, chunk),
                pull_all(&dec, &stream, chunk),
            ] {
                assert_eq!(
                    got.len(),
                    want.len(),
                    "round {round}, byte {at}, chunk {chunk}"
                );
                for (g, w) in got.iter().zip(&want) {
                    match (g, w) {
                        (Ok(g), Ok(w)) => assert!(g == w, "round {round}"),
                        (Err(_), Err(_)) => {}
                        _ => panic!("round {round}, byte {at}, chunk {chunk}: {g:?} vs {w:?}"),
                    }
                }
            }
        }
    }
}

/// A reader of a document that never ends: a header, a `BINARY` string
/// claiming `claimed` bytes, then `x` for ever. Counts what it delivered.
struct Endless {
    head: Vec<u8>,
    sent: Rc<Cell<usize>>,
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let at = self.sent.get();
        let n = buf.len();
        for (i, b) in buf.iter_mut().enumerate() {
            *b = *self.head.get(at + i).unwrap_or(&b'x');
        }
        self.sent.set(at + n);
        Ok(n)
    }
}

#[test]
fn max_document_size_stops_a_stream_before_it_buffers_the_document() {
    let mut head = b"=\xF3rl\x05\x00\x26".to_vec(); // BINARY
    sereal::protocol::write_varint(&mut head, 1 << 40);
    let sent = Rc::new(Cell::new(0));
    let dec = Decoder::new(DecoderOptions::new().max_document_size(1 << 20));
    let mut docs = ReadDocuments::new(
        Endless {
            head,
            sent: sent.clone(),
        },
        dec.clone(),
    );
    let err = docs.next().unwrap().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::LimitExceeded(_)), "{err}");
    // At the string's length, which said it all: one read, not a mebibyte.
    assert_eq!(err.offset(), Some(7));
    assert!(sent.get() <= 64 * 1024, "read {} bytes", sent.get());
    assert!(docs.next().is_none());
}

#[test]
fn max_document_size_applies_to_every_decoder_at_its_edge() {
    let first = encode(&Value::array([1, 2, 3])).unwrap();
    let long = encode(&Value::bytes([7u8; 300])).unwrap();
    let zipped = Encoder::new(
        EncoderOptions::new()
            .compress(Compression::Zlib)
            .compress_threshold(0),
    )
    .unwrap()
    .encode(&Value::bytes([7u8; 300]))
    .unwrap();
    assert!(zipped.len() < long.len());
    // Where a stream knows the document is too long: the string's length
    // (raw), the compressed frame's (zlib, after the body's own length).
    for (what, doc, claim) in [("raw", &long, 7), ("zlib", &zipped, 8)] {
        let at_limit = Decoder::new(DecoderOptions::new().max_document_size(doc.len()));
        let under = Decoder::new(DecoderOptions::new().max_document_size(doc.len() - 1));
        assert!(at_limit.decode(doc).is_ok(), "{what}");
        assert!(sereal::from_slice_with::<Value>(doc, at_limit.options().clone()).is_ok());
        let refused = |r: Result<Document>| {
            let e = r.unwrap_err();
            assert!(
                matches!(e.kind(), ErrorKind::LimitExceeded(_)),
                "{what}: {e}"
            );
            e.offset()
        };
        assert_eq!(refused(under.decode(doc)), Some(doc.len() - 1), "{what}");
        let serde = sereal::from_slice_with::<Value>(doc, under.options().clone()).unwrap_err();
        assert!(
            matches!(serde.kind(), ErrorKind::LimitExceeded(_)),
            "{what}: {serde}"
        );
        // In a stream, the small first document passes and the long one
        // is refused at the length that says it is too long.
        let mut stream = first.clone();
        stream.extend_from_slice(doc);
        for chunk in [1, 7, 64 * 1024] {
            let got = push_all(&under, &stream, chunk);
            assert_eq!(got.len(), 2, "{what} chunk {chunk}");
            assert_eq!(got[0].as_ref().unwrap(), &Value::array([1, 2, 3]));
            let e = got[1].as_ref().unwrap_err();
            assert!(
                matches!(e.kind(), ErrorKind::LimitExceeded(_)),
                "{what}: {e}"
            );
            assert_eq!(
                e.offset(),
                Some(first.len() + claim),
                "{what} chunk {chunk}"
            );
            let pulled = pull_all(&under, &stream, chunk);
            assert_eq!(pulled.len(), 2);
            assert!(pulled[1].is_err());
        }
        let all: Vec<_> = under.documents(&stream).collect();
        assert!(all[0].is_ok() && all[1].is_err(), "{what}");
        assert_eq!(
            push_all(&at_limit, &stream, 7)
                .iter()
                .filter(|d| d.is_ok())
                .count(),
            2
        );
    }
}

/// The memory a document's counts claim is refused where the claim is
/// read, whatever cut of the input the scanner saw it through (a fuzz
/// finding: an array's owed elements were added after its count was
/// checked, so the refusal came at the next read that ran out of input).
#[test]
fn memory_claims_are_refused_where_they_are_read() {
    const CLAIMS: &[u8] = b"=\xf3rl\x05\x00B\xa8*\xf2\x8fbop '\x5c'\x02\xc4\x80xaayebop 'a\x08hb\x05\x00B\xdeaxayfbop '\x5c'\x02\xc4\x80ebop '=\x08hbop 'x\x5cx'\x03x\xc4\x80dbing'\x03x\xc4\x80amb\x08 cbazcfoocfoo {cbar!\xbd\x02aia0azapalb \x08bpi\x03anc \x08 .\x02";
    let dec = Decoder::new(DecoderOptions::new().max_memory(64 << 20));
    let (e, _) = push_bytewise(&dec, CLAIMS);
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)), "{e}");
    for chunk in [1, 7, CLAIMS.len()] {
        let got = push_all(&dec, CLAIMS, chunk);
        let e2 = got.last().unwrap().as_ref().unwrap_err();
        assert_eq!(
            (e2.kind(), e2.offset()),
            (e.kind(), e.offset()),
            "{chunk}-byte pieces"
        );
    }
    assert_eq!(e.offset(), Some(9));
}

#[test]
fn a_count_over_max_document_size_is_refused_at_the_count_however_fed() {
    // The count says the document needs a byte per item: refused there,
    // whether the items are buffered yet or not.
    let doc = encode(&Value::array(vec![Value::from(7); 10_000])).unwrap();
    let dec = Decoder::new(DecoderOptions::new().max_document_size(1000));
    for chunk in [1, 7, doc.len()] {
        let got = push_all(&dec, &doc, chunk);
        assert_eq!(got.len(), 1);
        let err = got[0].as_ref().unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::LimitExceeded(_)), "{err}");
        // header (6 bytes), REFN, ARRAY, then the count
        assert_eq!(err.offset(), Some(8), "in {chunk}-byte pieces: {err}");
    }
}
