//! The stream readers against Perl's streams damaged or over a limit: a
//! last document cut short, a corrupt document, a document the type
//! refuses, every byte of a document damaged, a 40 MB document under
//! `DecoderOptions::untrusted()`. Each reader yields the records before
//! the defect, then its error at its offset, then nothing (the producer:
//! tests/perl_stream).

use sereal::stream::{Incremental, ReadDocuments};
use sereal::{Category, Decoder, DecoderOptions, Error, ErrorKind, Position};
mod common;
mod perl_stream;
use common::perl_sereal;
use perl_stream::*;

/// Every reader of a damaged stream: the serde streams over the slice
/// and over a reader, `Incremental::next_as` and `ReadDocuments::next_as`
/// (the last three handed the bytes in 7-byte pieces).
fn readers(bytes: &[u8]) -> [(&'static str, Yield); 4] {
    let opts = DecoderOptions::default;
    let pieces = Pieces::Of(7);
    [
        ("from_slice", from_slice_recs(bytes, opts())),
        (
            "from_reader",
            from_reader_recs(pieces.reader(bytes), opts()),
        ),
        (
            "Incremental::next_as",
            push_recs(opts(), &pieces.cut(bytes), |inc| inc.next_as()),
        ),
        (
            "ReadDocuments::next_as",
            pull_recs(pieces.reader(bytes), opts()),
        ),
    ]
}

/// Checks that every reader of `bytes` yields the records of the first
/// `k` of `docs`, then an error `is` accepts at `offset`, then nothing.
#[track_caller]
fn fails_at(bytes: &[u8], docs: &[Doc], k: usize, offset: usize, is: impl Fn(&Error) -> bool) {
    for (name, (got, err)) in readers(bytes) {
        check(name, &got, &docs[..k]);
        let e = err.unwrap_or_else(|| panic!("{name}: no error"));
        assert!(is(&e), "{name}: {e:?}");
        assert_eq!(e.offset(), Some(offset), "{name}: {e:?}");
    }
}

/// Case 4a: Perl's output cut in its last document, at every byte of it, in
/// documents of every kind: every earlier record, then a `Truncated`
/// error where the document's own decoder finds it cut short (a raw body:
/// at the item cut; a compressed one: where its frame says more follows),
/// then nothing.
#[test]
fn truncated_last_document() {
    if !perl_sereal("stream_perl_failures::truncated_last_document") {
        return;
    }
    let s = base();
    let st = s.starts();
    for how in KINDS {
        let j = s.first(250, how);
        // The stream from two documents before.
        let from = st[j - 2];
        for cut in st[j] + 1..st[j + 1] {
            let alone = sereal::decode(&s.bytes[st[j]..cut]).unwrap_err();
            assert_eq!(alone.kind(), &ErrorKind::Truncated, "{how} cut at {cut}");
            let at = st[j] + alone.offset().unwrap();
            assert!(at <= cut, "{how}: {alone:?}");
            if how.starts_with("zstd") && cut == st[j] + s.docs[j].len / 2 {
                assert_eq!(at, cut, "the frame is cut");
            }
            fails_at(&s.bytes[from..cut], &s.docs[j - 2..], 2, at - from, |e| {
                e.kind() == &ErrorKind::Truncated && e.is_eof()
            });
        }
    }
}

/// The kinds of documents the sweeps cut and damage.
const KINDS: [&str; 11] = [
    "raw,v5",
    "raw,v1",
    "raw,v2",
    "raw,v3,header",
    "raw,v5,header",
    "zstd,v5",
    "zstd,v5,header",
    "snappy,v5,header",
    "snappy,v3",
    "zlib,v5",
    "zlib,v3,header",
];

/// Case 4b: a corrupt document in the middle (its magic string, or its first
/// tag, damaged): the records before it, then a syntax error at the
/// defect, then nothing: the stream is over.
#[test]
fn corrupt_document_ends_the_stream() {
    if !perl_sereal("stream_perl_failures::corrupt_document_ends_the_stream") {
        return;
    }
    let s = base();
    let st = s.starts();
    let k = s.first(100, "raw,v5");
    let bytes = &s.bytes[..st[k + 200]];
    // Version 5, a raw body, no header suffix; the body: a hash's reference
    // (HASHREF_n, or REFN then HASH).
    assert_eq!(bytes[st[k] + 4..st[k] + 6], [0x05, 0x00]);
    assert!(
        matches!(bytes[st[k] + 6], 0x28 | 0x50..=0x5f),
        "{:#x}",
        bytes[st[k] + 6]
    );

    let mut bad = bytes.to_vec();
    bad[st[k] + 1] ^= 0xff;
    fails_at(&bad, &s.docs, k, st[k], |e| {
        e.kind() == &ErrorKind::BadMagic && e.classify() == Category::Syntax
    });

    let mut bad = bytes.to_vec();
    bad[st[k] + 6] = 0x36; // RESERVED_0
    fails_at(&bad, &s.docs, k, st[k] + 6, |e| {
        matches!(e.kind(), ErrorKind::UnexpectedTag(0x36, _)) && e.is_syntax()
    });
}

/// Reads each document of `raws` alone as a `Rec`, and the one that is
/// not a record (document `k`, Perl's `[1, 2, 3]`) as what it is: the
/// recipe for going on past a document the type refuses.
#[track_caller]
fn each_alone<'a>(raws: impl Iterator<Item = &'a [u8]>, docs: &[Doc], k: usize) {
    let mut n = 0;
    for (i, raw) in raws.enumerate() {
        assert_eq!(raw.len(), docs[i].len, "document {i}");
        match sereal::from_slice::<Rec>(raw) {
            Ok(rec) => assert_eq!(Some(&rec), docs[i].rec.as_ref(), "record {i}"),
            Err(e) => {
                assert_eq!((i, e.classify(), e.offset()), (k, Category::Data, Some(7)));
                assert_eq!(sereal::from_slice::<Vec<u32>>(raw).unwrap(), [1, 2, 3]);
            }
        }
        n += 1;
    }
    assert_eq!(n, docs.len());
}

/// Case 4c: a document the type refuses (an array where a record is expected)
/// in the middle: the records before it, its data error, then nothing;
/// taking the documents' bytes (`next_raw`) and reading each alone goes on
/// past it.
#[test]
fn refused_document_ends_the_stream_but_raw_goes_on() {
    if !perl_sereal("stream_perl_failures::refused_document_ends_the_stream_but_raw_goes_on") {
        return;
    }
    let k = 150;
    let odd = produce(300, "odd", &[&format!("odd={k}")]);
    let st = odd.starts();
    assert_eq!(
        (odd.docs[k].how.as_str(), odd.docs[k].rec.is_none()),
        ("raw,v5", true)
    );
    // REFN, ARRAY, 3, 1, 2, 3: serde's struct visitor takes the array as
    // the fields in order (the name and email read from the numbers `2`
    // and `3` as Perl prints them) and refuses the array (at 7) for
    // holding three of the record's nine fields.
    let doc = &odd.bytes[st[k]..st[k + 1]];
    assert_eq!(doc[6..], [0x28, 0x2b, 0x03, 0x01, 0x02, 0x03]);
    fails_at(&odd.bytes, &odd.docs, k, st[k] + 7, |e| {
        e.classify() == Category::Data && e.to_string().contains("invalid length 3")
    });

    // The recipe, pulled: ReadDocuments::next_raw, each document alone.
    let mut docs = ReadDocuments::new(Pieces::Of(7).reader(&odd.bytes), Decoder::default());
    let mut raws = Vec::new();
    while let Some(raw) = docs.next_raw() {
        raws.push(raw.unwrap().to_vec());
    }
    assert_eq!(docs.offset(), odd.bytes.len());
    each_alone(raws.iter().map(|r| &r[..]), &odd.docs, k);

    // Pushed: Incremental::next_raw.
    let mut inc = Incremental::default();
    let mut raws = Vec::new();
    for piece in Pieces::Random(3).cut(&odd.bytes) {
        inc.feed(piece);
        while let Some(raw) = inc.next_raw() {
            raws.push(raw.unwrap().to_vec());
        }
    }
    inc.finish();
    assert!(inc.next_raw().is_none());
    assert_eq!(inc.offset(), odd.bytes.len());
    each_alone(raws.iter().map(|r| &r[..]), &odd.docs, k);
}

/// Case 5: a stream whose third document holds a 40 MB string: read whole
/// under the default options; under `DecoderOptions::untrusted()` refused
/// at the string's length (over `max_string_length`, or, with that limit
/// raised, over `max_document_size`), having read little of it.
#[test]
fn huge_document_under_defaults_and_untrusted() {
    if !perl_sereal("stream_perl_failures::huge_document_under_defaults_and_untrusted") {
        return;
    }
    let huge = produce(6, "huge", &["huge=2"]);
    let st = huge.starts();
    let total = huge.bytes.len();
    assert!(huge.docs[2].len > 40_000_000, "{:?}", huge.docs[2]);

    let (got, err) = from_reader_recs(
        Pieces::Of(65536).reader(&huge.bytes),
        DecoderOptions::default(),
    );
    assert!(err.is_none(), "{err:?}");
    check("from_reader, defaults", &got, &huge.docs);
    assert_eq!(got[2].0.note.as_ref().map(|n| n.len()), Some(40_000_000));
    let (got, err) = from_slice_recs(&huge.bytes, DecoderOptions::default());
    assert!(err.is_none(), "{err:?}");
    check("from_slice, defaults", &got, &huge.docs);

    // The claim: the length of the BINARY string (40,000,000 as a varint).
    let doc2 = &huge.bytes[st[2]..st[3]];
    let tag = doc2
        .windows(5)
        .position(|w| w == [0x26, 0x80, 0xb4, 0x89, 0x13])
        .unwrap();
    let claim = st[2] + tag + 1;

    let untrusted = DecoderOptions::untrusted();
    let mut long_strings = DecoderOptions::untrusted();
    long_strings.max_string_length = 64 << 20;
    for (limit, opts) in [
        ("max_string_length", untrusted),
        ("max_document_size", long_strings),
    ] {
        let refused = |what: &str, got: &[(Rec, usize)], err: Option<Error>, at: usize| {
            check(&format!("{what} under {limit}"), got, &huge.docs[..2]);
            let e = err.unwrap_or_else(|| panic!("{what} under {limit}: no error"));
            assert!(
                matches!(e.kind(), ErrorKind::LimitExceeded(_)),
                "{what}: {e:?}"
            );
            assert_eq!(e.classify(), Category::Limit);
            assert_eq!(e.offset(), Some(at), "{what} under {limit}: {e:?}");
        };
        // Readers: refused at the claim, a read or two past it.
        let well_short = st[2] + (256 << 10);
        let mut r = Pieces::Of(65536).reader(&huge.bytes);
        let (got, err) = from_reader_recs(&mut r, opts.clone());
        refused("from_reader", &got, err, claim);
        assert!(
            r.handed <= well_short,
            "from_reader read {} of {total}",
            r.handed
        );
        let mut r = Pieces::Of(65536).reader(&huge.bytes);
        let (got, err) = pull_recs(&mut r, opts.clone());
        refused("ReadDocuments::next_as", &got, err, claim);
        assert!(
            r.handed <= well_short,
            "ReadDocuments read {} of {total}",
            r.handed
        );
        let mut inc = Incremental::new(Decoder::new(opts.clone()));
        let (mut got, mut fed, mut err) = (Vec::new(), 0, None);
        'feed: for piece in Pieces::Of(65536).cut(&huge.bytes) {
            inc.feed(piece);
            fed += piece.len();
            while let Some(rec) = inc.next_as::<Rec>() {
                match rec {
                    Ok(rec) => got.push((rec, inc.offset())),
                    Err(e) => {
                        err = Some(e);
                        break 'feed;
                    }
                }
            }
        }
        refused("Incremental::next_as", &got, err, claim);
        assert!(fed <= well_short, "Incremental was fed {fed} of {total}");
        // The slice: at the claim too (a document its own read cannot end
        // within the limits is delimited by the stream scanner).
        let (got, err) = from_slice_recs(&huge.bytes, opts.clone());
        refused("from_slice", &got, err, claim);
    }
}

/// Every byte of a document of every kind damaged (three ways), two
/// records before it and two after: no reader panics or hangs; all four
/// yield the same records, and fail or not alike; the three that buffer
/// documents (`from_reader`, `Incremental`, `ReadDocuments`) fail with
/// the same error at the same offset. The slice stream's error may differ
/// in kind and place, not in records: it checks a count against the rest
/// of the buffer (`Truncated` at a count the bytes left cannot hold),
/// where a stream reads on to the first bad byte.
#[test]
fn every_damaged_byte() {
    if !perl_sereal("stream_perl_failures::every_damaged_byte") {
        return;
    }
    let s = base();
    let st = s.starts();
    for how in KINDS {
        let k = s.first(250, how);
        let (from, to) = (st[k - 2], st[k + 3]);
        for at in st[k]..st[k + 1] {
            for flip in [0xff, 0x01, 0x80] {
                let mut bad = s.bytes[from..to].to_vec();
                bad[at - from] ^= flip;
                let what = format!("{how}, byte {} ^ {flip:#x}", at - st[k]);
                let [(_, (slice, slice_err)), (_, (reader, reader_err)), rest @ ..] = readers(&bad);
                assert_eq!(slice, reader, "{what}");
                assert!(slice.len() >= 2, "{what}");
                assert_eq!(slice_err.is_some(), reader_err.is_some(), "{what}");
                for (name, (got, err)) in rest {
                    assert_eq!(got, reader, "{what}: {name}");
                    assert_eq!(err, reader_err, "{what}: {name}");
                }
                if let Some(Position::Document(o)) = slice_err.and_then(|e| e.position()) {
                    assert!((st[k] - from..=bad.len()).contains(&o), "{what}: at {o}");
                }
            }
        }
    }
}
