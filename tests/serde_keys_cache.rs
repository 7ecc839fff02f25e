//! The deserializer's shortcuts must not change what it reads: hash keys
//! named by `COPY` are remembered (their bytes, flag and UTF-8 validity)
//! per target, and short strings and small integers are read before the
//! general path. Every case here is also read by `sereal::decode`, and the
//! two must agree, across protocols, compression and key counts that
//! overflow the remembered set.

use sereal::{
    decode, encode_with, from_slice, from_slice_with, Compression, DecoderOptions, EncoderOptions,
    ErrorKind, Hash, Value,
};
use std::collections::BTreeMap;

fn options() -> Vec<(String, EncoderOptions)> {
    let mut v = Vec::new();
    for protocol in 1..=5u8 {
        let mut o = EncoderOptions::default();
        o.protocol_version = protocol;
        v.push((format!("v{protocol}"), o));
    }
    for c in [Compression::Snappy, Compression::Zlib, Compression::Zstd] {
        let mut o = EncoderOptions::default();
        o.compress = c;
        o.compress_threshold = 0;
        v.push((format!("{c:?}"), o));
    }
    v
}

/// `maps` hashes of `keys` keys each (`k0`, ...), the same keys in every
/// hash, so every hash after the first names its keys by COPY.
fn maps(maps: usize, keys: usize) -> Value {
    Value::array((0..maps).map(|m| {
        let mut h = Hash::new();
        for k in 0..keys {
            h.insert(format!("k{k}"), (m * keys + k) as i64);
        }
        Value::from(h)
    }))
}

#[test]
fn copied_keys_read_alike_however_many_there_are() {
    for keys in [1, 9, 64, 130, 400] {
        let value = maps(20, keys);
        let want: Vec<BTreeMap<String, i64>> = (0..20)
            .map(|m| {
                (0..keys)
                    .map(|k| (format!("k{k}"), (m * keys + k) as i64))
                    .collect()
            })
            .collect();
        for (name, opts) in options() {
            let bytes = encode_with(&value, &opts).unwrap();
            let got: Vec<BTreeMap<String, i64>> = from_slice(&bytes).unwrap();
            assert_eq!(got, want, "{keys} keys, {name}");
            let as_value: Value = from_slice(&bytes).unwrap();
            assert_eq!(as_value, *decode(&bytes).unwrap(), "{keys} keys, {name}");
        }
    }
}

/// A document `[ {KEY => 1}, {COPY of KEY => 2}, ... ]` with the key tag
/// given raw (`key`), named by COPY `copies` times.
fn copied_key_document(key: &[u8], copies: usize) -> (Vec<u8>, Vec<usize>) {
    let mut doc = b"=\xF3rl\x05\x00".to_vec();
    doc.push(0x28); // REFN
    doc.push(0x2b); // ARRAY
    doc.push(1 + copies as u8);
    doc.push(0x51); // HASHREF_1
    let key_at = doc.len() - 6 + 1; // body offsets start at 1
    let mut positions = vec![doc.len()];
    doc.extend_from_slice(key);
    doc.push(0x01);
    for _ in 0..copies {
        doc.push(0x51);
        positions.push(doc.len());
        doc.push(0x2f); // COPY
        doc.push(key_at as u8);
        doc.push(0x02);
    }
    (doc, positions)
}

#[test]
fn a_key_flagged_utf8_with_bad_bytes_is_refused_at_each_of_its_copies() {
    // STR_UTF8 of "\xff": refused where it is first read. (`decode` keeps
    // the bytes: like Perl's, it validates UTF-8 only when asked.)
    let (doc, positions) = copied_key_document(b"\x27\x01\xff", 3);
    let err = from_slice::<Vec<BTreeMap<String, u8>>>(&doc).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::InvalidUtf8, "{err}");
    assert!(err.offset().is_some_and(|o| o >= positions[0]), "{err}");
    let opts = DecoderOptions::new().validate_utf8(true);
    assert_eq!(
        sereal::Decoder::new(opts).decode(&doc).unwrap_err().kind(),
        &ErrorKind::InvalidUtf8
    );
    // A target that ignores the first hash still reads (and refuses) it.
    let err = from_slice::<(serde::de::IgnoredAny, BTreeMap<String, u8>)>(&doc).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::InvalidUtf8, "{err}");
}

#[test]
fn a_byte_string_key_that_is_not_utf8_reads_as_bytes_through_its_copies() {
    // SHORT_BINARY "\xff\xfe": not text, not flagged. `Value` takes it as
    // a byte-string key at every copy; a `String` key refuses it.
    let (doc, _) = copied_key_document(b"\x62\xff\xfe", 3);
    let v: Value = from_slice(&doc).unwrap();
    assert_eq!(v, *decode(&doc).unwrap());
    let Value::Ref(r) = &v else { panic!("{v:?}") };
    for item in r.as_array().unwrap().iter() {
        let h = item.as_strong_ref().unwrap().as_hash().unwrap().clone();
        let (k, _) = h.iter().next().unwrap();
        assert_eq!(k.as_bytes(), b"\xff\xfe");
        assert!(!k.is_utf8());
    }
    assert!(from_slice::<Vec<BTreeMap<String, u8>>>(&doc).is_err());
}

#[test]
fn a_copy_that_names_no_key_is_refused_even_after_the_key_was_remembered() {
    // The second hash's COPY names the first hash's *value* (not a string).
    let (mut doc, positions) = copied_key_document(b"\x62ab", 2);
    let bad = positions[2] + 1;
    doc[bad] += 3; // now names the POS_1 value after the key
    let err = from_slice::<Vec<BTreeMap<String, u8>>>(&doc).unwrap_err();
    let derr = decode(&doc).unwrap_err();
    assert_eq!(err.offset(), derr.offset(), "serde: {err}; decode: {derr}");
}

#[test]
fn short_strings_and_integers_read_the_same_on_every_path() {
    let strings = [
        "",
        "0",
        "1",
        "a",
        "héllo",
        "x".repeat(31).as_str(),
        "y".repeat(127).as_str(),
        "z".repeat(200).as_str(),
    ]
    .map(String::from);
    let value = Value::array(
        strings
            .iter()
            .map(|s| Value::from(s.as_str()))
            .chain([0u64, 1, 15, 16, 127, 128, 1 << 40].map(Value::from)),
    );
    for (name, opts) in options() {
        let bytes = encode_with(&value, &opts).unwrap();
        let got: (Vec<String>, Vec<u64>) = {
            let v: Vec<Value> = from_slice(&bytes).unwrap();
            (
                v[..strings.len()]
                    .iter()
                    .map(|x| x.as_str().unwrap().to_owned())
                    .collect(),
                v[strings.len()..]
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect(),
            )
        };
        assert_eq!(got.0, strings, "{name}");
        assert_eq!(got.1, [0, 1, 15, 16, 127, 128, 1 << 40], "{name}");
        let as_value: Value = from_slice(&bytes).unwrap();
        assert_eq!(as_value, *decode(&bytes).unwrap(), "{name}");
    }
    // "0", "1" and "" read as booleans, 0 and 1 too.
    let bools = encode_with(
        &Value::array(
            ["", "0", "1"]
                .map(Value::from)
                .into_iter()
                .chain([0, 1].map(Value::from)),
        ),
        &EncoderOptions::default(),
    )
    .unwrap();
    let got: Vec<bool> = from_slice(&bools).unwrap();
    assert_eq!(got, [false, false, true, false, true]);
}

#[test]
fn the_string_limit_applies_to_short_utf8_strings_on_the_fast_path() {
    // A 20-byte STR_UTF8 under max_string_length(10): refused at its
    // length, by both readers.
    let mut doc = b"=\xF3rl\x05\x00\x27\x14".to_vec();
    doc.extend_from_slice("é".repeat(10).as_bytes());
    let opts = DecoderOptions::new().max_string_length(10);
    let err = from_slice_with::<String>(&doc, opts.clone()).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::LimitExceeded(_)), "{err}");
    let derr = sereal::Decoder::new(opts.clone()).decode(&doc).unwrap_err();
    assert_eq!(err.offset(), derr.offset());
    let ok = from_slice_with::<String>(&doc, opts.max_string_length(20)).unwrap();
    assert_eq!(ok, "é".repeat(10));
}

#[test]
fn truncated_short_strings_and_varints_are_errors_at_their_offset() {
    for doc in [
        &b"=\xF3rl\x05\x00\x63ab"[..],      // SHORT_BINARY_3, two bytes
        &b"=\xF3rl\x05\x00\x27\x05abc"[..], // STR_UTF8 of 5, three bytes
        &b"=\xF3rl\x05\x00\x20\x80"[..],    // VARINT cut short
    ] {
        let err = from_slice::<Value>(doc).unwrap_err();
        let derr = decode(doc).unwrap_err();
        assert_eq!(err.kind(), derr.kind(), "{err} / {derr}");
        assert_eq!(err.offset(), derr.offset(), "{err} / {derr}");
    }
}
