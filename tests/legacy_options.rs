//! Perl's option hashes, legacy spellings included (`use_protocol_v1`,
//! `snappy`, `snappy_incr`, `snappy_threshold`, `sort_keys` of 2 and 3),
//! mapped by `conformance::encoder_options`: the bytes must be Perl's for
//! the same options and data.

use sereal::conformance::encoder_options;
use sereal::{encode_with, Decoder, ErrorKind, Header, Value};
mod common;

const CASES: [&str; 23] = [
    r#"{"sort_keys": 1, "use_protocol_v1": 1}"#,
    r#"{"sort_keys": 1, "use_protocol_v1": 1, "protocol_version": 3}"#,
    r#"{"sort_keys": 1, "use_protocol_v1": 0}"#,
    r#"{"sort_keys": 1, "snappy": 1}"#,
    r#"{"sort_keys": 1, "snappy_incr": 1}"#,
    r#"{"sort_keys": 1, "snappy_incr": 1, "use_protocol_v1": 1}"#,
    r#"{"sort_keys": 1, "snappy_incr": 1, "snappy": 1, "protocol_version": 1}"#,
    r#"{"sort_keys": 1, "snappy": 1, "snappy_threshold": 100000}"#,
    r#"{"sort_keys": 1, "compress": 1, "snappy_threshold": 100000}"#,
    r#"{"sort_keys": 1, "snappy": 1, "compress_threshold": 0, "snappy_threshold": 100000}"#,
    r#"{"sort_keys": 1, "compress": 0, "snappy": 1}"#,
    r#"{"sort_keys": 1, "compress": 2, "snappy_threshold": 100000}"#,
    r#"{"sort_keys": 2}"#,
    r#"{"sort_keys": 3, "canonical_refs": 1}"#,
    r#"{"sort_keys": 1, "snappy": 1, "use_protocol_v1": 1}"#,
    r#"{"sort_keys": 1, "snappy": 1, "protocol_version": 1}"#,
    r#"{"sort_keys": 1, "snappy": 1, "protocol_version": 1, "snappy_threshold": 100000}"#,
    r#"{"sort_keys": 1, "snappy": 1, "protocol_version": 2}"#,
    r#"{"sort_keys": 1, "compress": 2, "compress_level": 0}"#,
    r#"{"sort_keys": 1, "compress": 3, "compress_level": 0}"#,
    r#"{"sort_keys": 1, "compress": 3, "compress_level": 19}"#,
    r#"{"sort_keys": 1, "compress": 2, "compress_level": 10}"#,
    r#"{"sort_keys": 1, "compress": 2, "compress_level": 1}"#,
];

fn data() -> Value {
    Value::array((0..150).map(|i| {
        Value::hash([
            ("name", Value::from(format!("item-{}", i % 10))),
            ("zeta", Value::from(i)),
            ("alpha", Value::from("abcdefgh")),
        ])
    }))
}

/// The Perl data `data()` builds.
const PERL_DATA: &str =
    "[ map { { name => 'item-' . ($_ % 10), zeta => $_, alpha => 'abcdefgh' } } 0 .. 149 ]";

fn perl_bytes(options_json: &str) -> Vec<u8> {
    common::perl_output(&format!(
        "use strict; use warnings; use Sereal::Encoder; use JSON::PP; binmode STDOUT; \
         my $o = JSON::PP::decode_json(q({options_json})); \
         my $d = {PERL_DATA}; \
         print Sereal::Encoder->new($o)->encode($d);"
    ))
}

/// The header bytes and the decompressed body of a document.
fn split(doc: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let h = Header::parse(doc).unwrap();
    let (body, _) = Decoder::default().body_bytes(doc, &h).unwrap();
    (doc[..h.len].to_vec(), body.into_owned())
}

#[test]
fn legacy_option_spellings_write_perls_bytes() {
    let value = data();
    let perl = common::perl_sereal("comparison of option spellings with Perl");
    for case in CASES {
        let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(case).unwrap();
        let opts = encoder_options(&map).unwrap_or_else(|e| panic!("{case}: {e}"));
        let ours = encode_with(&value, &opts).unwrap();
        // Our bytes decode to the data whatever Perl says.
        assert_eq!(*sereal::decode(&ours).unwrap(), value, "{case}");
        if !perl {
            continue;
        }
        let perl = perl_bytes(case);
        // sort_keys fixes the order of the keys (Perl's is its own). The
        // header (type bits included) and the decompressed body must be
        // Perl's; Snappy's compressed bytes are too, zlib's need not be
        // (two implementations of deflate), nor zstd's past its default
        // level (Perl bundles its own zstd release).
        assert_eq!(*sereal::decode(&perl).unwrap(), value, "{case}");
        let (oh, ob) = split(&ours);
        let (ph, pb) = split(&perl);
        assert_eq!(oh, ph, "{case}: header");
        assert!(ob == pb, "{case}: our body differs from Perl's");
        // (At level 10, miniz's and miniz_oxide's deflate agree.)
        let zlib_differs =
            case.contains("\"compress\": 2") && !case.contains("\"compress_level\": 10");
        if !zlib_differs && !case.contains("\"compress_level\": 19") {
            assert!(ours == perl, "{case}: our bytes differ from Perl's");
        }
    }
}

/// `legacy_snappy` is protocol 1's framing: with another protocol or
/// another compression it is an error, on both encoding paths.
#[test]
fn legacy_snappy_needs_protocol_1_and_snappy() {
    use sereal::{Compression, EncoderOptions};
    let value = data();
    for (version, c) in [
        (2, Compression::Snappy),
        (5, Compression::Snappy),
        (1, Compression::None),
        (3, Compression::Zlib),
    ] {
        let opts = EncoderOptions::new()
            .protocol_version(version)
            .compress(c)
            .legacy_snappy(true);
        let err = encode_with(&value, &opts).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::BadOption(_)),
            "{version} {c:?}: {err}"
        );
        let err = sereal::to_vec_with(&[1, 2], &opts).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::BadOption(_)),
            "{version} {c:?}: {err}"
        );
    }
}

/// A legacy Snappy document from either encoding path says so in its
/// header, and decodes whole, through serde and through both streams.
#[test]
fn legacy_snappy_documents_read_back_every_way() {
    use sereal::{Compression, EncoderOptions};
    let opts = EncoderOptions::new()
        .protocol_version(1)
        .compress(Compression::Snappy)
        .compress_threshold(0)
        .legacy_snappy(true);
    let words: Vec<String> = (0..200).map(|i| format!("word {}", i % 7)).collect();
    let value = Value::array(words.iter().map(|w| Value::from(w.as_str())));
    let doc = encode_with(&value, &opts).unwrap();
    let h = Header::parse(&doc).unwrap();
    assert!(h.legacy_snappy && h.compression == Compression::Snappy);
    assert_eq!(doc[4], 0x11);
    assert_eq!(*sereal::decode(&doc).unwrap(), value);
    let serde_doc = sereal::to_vec_with(&words, &opts).unwrap();
    assert!(Header::parse(&serde_doc).unwrap().legacy_snappy);
    let back: Vec<String> = sereal::from_slice(&serde_doc).unwrap();
    assert_eq!(back, words);
    let back: Vec<String> = sereal::from_slice(&doc).unwrap();
    assert_eq!(back, words);
    let streamed: Vec<_> = sereal::ReadDocuments::new(&doc[..], Decoder::default())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(streamed.len(), 1);
    assert_eq!(*streamed[0], value);
    let mut inc = sereal::Incremental::new(Decoder::default());
    inc.feed(&doc);
    // No length: the document's end is the end of the input.
    assert!(inc.next_document().is_none());
    inc.finish();
    assert_eq!(*inc.next_document().unwrap().unwrap(), value);
    assert!(inc.next_document().is_none());
}
