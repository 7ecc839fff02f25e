//! Perl's option hashes, legacy spellings included (`use_protocol_v1`,
//! `snappy`, `snappy_incr`, `snappy_threshold`, `sort_keys` of 2 and 3),
//! mapped by `conformance::encoder_options`: the bytes must be Perl's for
//! the same options and data.

use sereal::conformance::encoder_options;
use sereal::{encode_with, Decoder, ErrorKind, Header, Value};
mod common;

const CASES: [&str; 14] = [
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
        // (two implementations of deflate).
        assert_eq!(*sereal::decode(&perl).unwrap(), value, "{case}");
        let (oh, ob) = split(&ours);
        let (ph, pb) = split(&perl);
        assert_eq!(oh, ph, "{case}: header");
        assert!(ob == pb, "{case}: our body differs from Perl's");
        if !case.contains("\"compress\": 2") {
            assert!(ours == perl, "{case}: our bytes differ from Perl's");
        }
    }
}

#[test]
fn snappy_under_protocol_1_is_refused_not_misread() {
    for case in [
        r#"{"snappy": 1, "use_protocol_v1": 1}"#,
        r#"{"snappy": 1, "protocol_version": 1}"#,
    ] {
        let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(case).unwrap();
        let err = encoder_options(&map).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::BadOption(_)),
            "{case}: {err}"
        );
    }
}
