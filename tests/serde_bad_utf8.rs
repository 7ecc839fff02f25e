//! Strings flagged UTF-8 whose bytes are not UTF-8. Perl's decoder takes
//! them as they are unless `validate_utf8` is set, and so does `decode`.
//! Through serde, a target that wants text (`String`, `&str`, `char`, a
//! field name, a key parsed as a number) refuses them with `InvalidUtf8` at
//! the string; a target that takes anything (`Value`, `IgnoredAny`, bytes)
//! gets the bytes, and one that takes anything but bytes
//! (`serde_json::Value`) refuses them with `InvalidUtf8`; with
//! `validate_utf8` every target refuses them, at the offset `decode` gives.

mod common;

use common::Raw;
use serde::de::IgnoredAny;
use sereal::{decode, from_slice, from_slice_with, DecoderOptions, ErrorKind, Value};
use std::collections::BTreeMap;

/// Protocol 5 header, then `body`.
fn doc(body: &[u8]) -> Vec<u8> {
    let mut d = b"=\xf3rl\x05\x00".to_vec();
    d.extend_from_slice(body);
    d
}

/// `STR_UTF8` of `\xff\xfe` (offset 6 in the document: body offset 1).
const BAD: &[u8] = b"\x27\x02\xff\xfe";

#[derive(serde::Deserialize, Debug)]
#[allow(dead_code)]
struct Named {
    name: String,
}

#[test]
fn text_targets_refuse_them_at_the_string() {
    let d = doc(BAD);
    for e in [
        from_slice::<String>(&d).unwrap_err(),
        from_slice::<&str>(&d).unwrap_err(),
        from_slice::<char>(&d).unwrap_err(),
    ] {
        assert_eq!(
            (e.kind(), e.offset()),
            (&ErrorKind::InvalidUtf8, Some(8)),
            "{e}"
        );
    }
    // As a field's value, and as a `String` map key (HASHREF_1, key, value 1).
    let mut field = b"\x51\x64name".to_vec();
    field.extend_from_slice(BAD);
    let e = from_slice::<Named>(&doc(&field)).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InvalidUtf8, "{e}");
    let mut key = b"\x51".to_vec();
    key.extend_from_slice(BAD);
    key.push(0x01);
    let e = from_slice::<BTreeMap<String, u8>>(&doc(&key)).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InvalidUtf8, "{e}");
    // Keys parsed from their text.
    for e in [
        from_slice::<BTreeMap<char, u8>>(&doc(&key)).unwrap_err(),
        from_slice::<BTreeMap<u32, u8>>(&doc(&key)).unwrap_err(),
        from_slice::<BTreeMap<bool, u8>>(&doc(&key)).unwrap_err(),
    ] {
        assert_eq!(
            (e.kind(), e.offset()),
            (&ErrorKind::InvalidUtf8, Some(9)),
            "{e}"
        );
    }
    // A visitor that takes anything but bytes.
    let e = from_slice::<serde_json::Value>(&d).unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (&ErrorKind::InvalidUtf8, Some(8)),
        "{e}"
    );
}

#[test]
fn targets_that_take_anything_get_the_bytes() {
    let d = doc(BAD);
    assert!(decode(&d).is_ok());
    assert_eq!(from_slice::<Value>(&d).unwrap(), Value::bytes(b"\xff\xfe"));
    assert_eq!(from_slice::<Raw>(&d).unwrap(), Raw(b"\xff\xfe".to_vec()));
    from_slice::<IgnoredAny>(&d).unwrap();
    // Inside an array, and as a hash key of a `Value` (HASHREF_1).
    let mut arr = b"\x42".to_vec();
    arr.extend_from_slice(BAD);
    arr.push(0x01);
    assert_eq!(
        from_slice::<Value>(&doc(&arr)).unwrap(),
        Value::array([Value::bytes(b"\xff\xfe"), Value::from(1)])
    );
    let mut key = b"\x51".to_vec();
    key.extend_from_slice(BAD);
    key.push(0x01);
    let v: Value = from_slice(&doc(&key)).unwrap();
    let keys: Vec<Vec<u8>> = v
        .as_hash()
        .unwrap()
        .keys()
        .map(|k| k.as_bytes().to_vec())
        .collect();
    assert_eq!(keys, [b"\xff\xfe".to_vec()]);
    // Valid UTF-8 flagged so is text.
    let ok = doc(b"\x27\x02\xc3\xab");
    assert_eq!(from_slice::<Value>(&ok).unwrap(), Value::from("ë"));
    assert_eq!(from_slice::<String>(&ok).unwrap(), "ë");
}

/// `ErrorKind::InvalidUtf8` is not only `validate_utf8`'s: with the
/// default options (no validation) a text target still refuses the bytes,
/// where the decoder takes them.
#[test]
fn invalid_utf8_without_validate_utf8() {
    let d = b"=\xF3rl\x05\x00\x27\x02\xff\xfe";
    assert!(!DecoderOptions::default().validate_utf8);
    let e = from_slice::<String>(d).unwrap_err();
    assert_eq!((e.kind(), e.offset()), (&ErrorKind::InvalidUtf8, Some(8)));
    assert_eq!(e.kind().to_string(), "invalid UTF-8 in a STR_UTF8 string");
    assert!(decode(d).is_ok());
}

#[test]
fn validate_utf8_refuses_them_for_every_target_where_decode_does() {
    let opts = DecoderOptions::new().validate_utf8(true);
    let mut arr = b"\x42\x01".to_vec();
    arr.extend_from_slice(BAD);
    let mut key = b"\x51".to_vec();
    key.extend_from_slice(BAD);
    key.push(0x01);
    for body in [BAD.to_vec(), arr, key] {
        let d = doc(&body);
        let want = sereal::Decoder::new(opts.clone()).decode(&d).unwrap_err();
        assert_eq!(want.kind(), &ErrorKind::InvalidUtf8);
        for e in [
            from_slice_with::<Value>(&d, opts.clone()).unwrap_err(),
            from_slice_with::<IgnoredAny>(&d, opts.clone()).unwrap_err(),
        ] {
            assert_eq!((e.kind(), e.offset()), (want.kind(), want.offset()), "{e}");
        }
    }
}

/// `Value` reads map keys of any serde format, as text: a format whose
/// keys may be numbers or booleans (MessagePack) gives their text, as the
/// serializer writes such keys.
#[test]
fn value_keys_of_any_format_are_text() {
    let mp = rmp_serde::to_vec(&BTreeMap::from([(7u32, "a"), (300, "b")])).unwrap();
    let v: Value = rmp_serde::from_slice(&mp).unwrap();
    assert_eq!(v, Value::hash([("7", "a"), ("300", "b")]));
    let mp = rmp_serde::to_vec(&BTreeMap::from([(true, 1u8)])).unwrap();
    let v: Value = rmp_serde::from_slice(&mp).unwrap();
    assert_eq!(v, Value::hash([("true", 1)]));
    assert_eq!(
        sereal::to_vec(&BTreeMap::from([(true, 1u8)])).unwrap(),
        sereal::encode(&v).unwrap()
    );
}
