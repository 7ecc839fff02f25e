//! Errors from the serde deserializer carry document offsets, the same ones
//! `sereal::decode` reports for the same defect.

use serde::Deserialize;
use sereal::{decode, encode, from_slice, to_vec, to_vec_with, Compression, ErrorKind, Ref, Value};
use std::collections::BTreeMap;

#[test]
fn visitor_errors_carry_the_offset_of_the_value() {
    // ARRAYREF_2 at 6, 1 at 7, 2 at 8: the 2 is not a char.
    let e = from_slice::<(u8, char)>(b"=\xF3rl\x05\x00\x42\x01\x02").unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Message(_)), "{e:?}");
    assert_eq!(e.offset(), Some(8), "{e}");
    // A missing field: the hash's offset.
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Need {
        a: u8,
    }
    let doc = to_vec(&[vec![BTreeMap::from([("b", 1u8)])]]).unwrap();
    let e = from_slice::<Vec<Vec<Need>>>(&doc).unwrap_err();
    assert_eq!(e.offset(), Some(8), "{e}");
    // A hash key that is not a string.
    let doc = b"=\xF3rl\x05\x00\x51\x0d\x01";
    let d = decode(doc).unwrap_err();
    assert_eq!(d.offset(), Some(7));
    let e = from_slice::<serde_json::Value>(doc).unwrap_err();
    assert_eq!(e.offset(), Some(7), "{e}");
    assert_eq!(e.kind(), d.kind());
    // A type error in a compressed document: an offset in the body.
    let opts = sereal::ser::SerializerOptions::new()
        .compress(Compression::Zstd)
        .compress_threshold(0);
    let doc = to_vec_with(&(1u8, vec![5u8; 64], "x"), &opts).unwrap();
    let e = from_slice::<(u8, Vec<u8>, u8)>(&doc).unwrap_err();
    assert!(e.offset().is_some(), "{e}");
    assert!(e.to_string().contains("decompressed body offset"), "{e}");
}

/// Documents damaged in various ways, each checked for the same error
/// offset (and kind, when they name the same defect) through `decode` and
/// `from_slice::<Value>`.
#[test]
fn serde_and_decode_report_the_same_offsets() {
    let g = Value::hash([
        ("name", Value::from("a longer string value")),
        ("list", Value::array([1, 200, -5, 70000])),
        (
            "nested",
            Value::hash([("x", Value::from(1.5)), ("y", Value::Undef)]),
        ),
        ("utf8", Value::from("héllo")),
        ("more", Value::array(["a longer string value"; 8])),
    ]);
    // Shared nodes (REFP), repeated keys (COPY), an object (OBJECT,
    // OBJECTV) and a weak reference back to the root.
    let shared = Ref::hash([("k", Value::from("v"))].into_iter().collect());
    let root = Ref::hash(Default::default());
    root.hash_mut().unwrap().insert("up", Value::weak(&root));
    let h = root.clone();
    let graph = Value::array([
        Value::Ref(shared.clone()),
        Value::Ref(shared),
        Value::hash([("k", Value::from(1)), ("name", Value::from(2))]),
        Value::Ref(Ref::hash(Default::default()).blessed("Some::Class")),
        Value::Ref(Ref::array(vec![]).blessed("Some::Class")),
        Value::Ref(h),
    ]);
    let mut docs: Vec<(String, Vec<u8>)> = Vec::new();
    for (base, plain) in [
        ("plain", encode(&g).unwrap()),
        ("graph", encode(&graph).unwrap()),
    ] {
        for cut in 7..plain.len() {
            docs.push((format!("{base} cut at {cut}"), plain[..cut].to_vec()));
        }
        let mut trailing = plain.clone();
        trailing.push(0x01);
        docs.push((format!("{base}, trailing byte"), trailing));
        for i in 6..plain.len() {
            for b in [
                0x3F, 0x7F, 0x2E, 0x29, 0x2F, 0x0D, 0x41, 0x51, 0xFF, 0x26, 0x28, 0x30, 0x2C, 0xAA,
            ] {
                let mut d = plain.clone();
                d[i] = b;
                docs.push((format!("{base}, byte {i} = {b:#x}"), d));
            }
        }
    }
    root.hash_mut().unwrap().clear();
    // Hand-made: a tracked PAD before a bad hash key (the decoder reports
    // the PAD's offset), a WEAKEN of a string, an OBJECT of a number.
    for (what, doc) in [
        ("tracked PAD key", &b"=\xF3rl\x05\x00\x51\xbf\x05\x01"[..]),
        ("WEAKEN string", b"=\xF3rl\x05\x00\x30\x61a"),
        ("OBJECT number", b"=\xF3rl\x05\x00\x2c\x61A\x05"),
    ] {
        docs.push((what.into(), doc.to_vec()));
    }
    for (c, name) in [
        (Compression::Snappy, "snappy"),
        (Compression::Zstd, "zstd"),
        (Compression::Zlib, "zlib"),
    ] {
        let opts = sereal::EncoderOptions::new()
            .compress(c)
            .compress_threshold(0);
        let doc = sereal::Encoder::new(opts).unwrap().encode(&g).unwrap();
        assert_ne!(doc[4] >> 4, 0, "{name}: compressed");
        let mut trailing = doc.clone();
        trailing.push(0x01);
        docs.push((format!("{name}, trailing byte"), trailing));
        docs.push((format!("{name}, cut"), doc[..doc.len() - 3].to_vec()));
        // A body whose compressed bytes are fine but whose content is not:
        // decompress, damage, compress again.
        let dec = sereal::Decoder::default();
        let header = sereal::Header::parse(&doc).unwrap();
        let (body, _) = dec.body_bytes(&doc, &header).unwrap();
        for cut in [3usize, 10, 20] {
            let mut b = body.to_vec();
            b.truncate(b.len() - cut);
            let redone = recompress(&doc[..header.len], &b, c);
            docs.push((format!("{name}, body cut by {cut}"), redone));
        }
    }
    let mut checked = 0;
    for (what, doc) in &docs {
        let d = decode(doc);
        let s = from_slice::<Value>(doc);
        match (&d, &s) {
            // Duplicate keys are the target type's business under serde (a
            // map keeps the last, a struct refuses a repeated field): the
            // serde path reads on and may stop at a later defect.
            (Err(d), Err(_)) if d.to_string().starts_with("duplicate key") => {}
            // A strong cycle stops serde where the decoder reads on.
            (Err(_), Err(s)) if s.to_string().contains("strong cycle") => {}
            (Err(d), Err(s)) => {
                assert_eq!(d.offset(), s.offset(), "{what}: decode {d}, serde {s}");
                assert_eq!(
                    d.to_string().contains("decompressed"),
                    s.to_string().contains("decompressed"),
                    "{what}: decode {d}, serde {s}"
                );
                if matches!(
                    d.kind(),
                    ErrorKind::Truncated
                        | ErrorKind::TrailingData
                        | ErrorKind::BadOffset(..)
                        | ErrorKind::UnexpectedTag(..)
                ) {
                    assert_eq!(d.kind(), s.kind(), "{what}: decode {d}, serde {s}");
                }
                checked += 1;
            }
            (Ok(_), Ok(_)) => {}
            // A `&str` must be UTF-8: serde validates what the decoder
            // validates only with `validate_utf8`, and at the same offset.
            (Ok(_), Err(s)) if s.kind() == &ErrorKind::InvalidUtf8 => {
                let strict =
                    sereal::Decoder::new(sereal::DecoderOptions::new().validate_utf8(true));
                let d = strict.decode(doc).unwrap_err();
                assert_eq!((d.kind(), d.offset()), (s.kind(), s.offset()), "{what}");
            }
            // A strong cycle: a graph for the decoder, no tree for serde.
            (Ok(_), Err(s)) if s.to_string().contains("strong cycle") => {}
            (Ok(_), Err(s)) => panic!("{what}: decode reads it, serde fails: {s}"),
            (Err(d), Ok(_)) => panic!("{what}: serde reads it, decode fails: {d}"),
        }
    }
    assert!(checked > 100, "only {checked} documents failed both ways");
}

/// A document with the header `header` and the uncompressed body `body`,
/// compressed with `c` (protocol 5 framing).
fn recompress(header: &[u8], body: &[u8], c: Compression) -> Vec<u8> {
    let mut doc = header.to_vec();
    let varint = |n: usize, out: &mut Vec<u8>| {
        let mut n = n as u64;
        while n >= 0x80 {
            out.push(n as u8 | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    };
    let packed = match c {
        Compression::Snappy => snap::raw::Encoder::new().compress_vec(body).unwrap(),
        Compression::Zstd => zstd::bulk::compress(body, 3).unwrap(),
        Compression::Zlib => {
            use std::io::Write;
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
            z.write_all(body).unwrap();
            z.finish().unwrap()
        }
        Compression::None => unreachable!("compressed documents only"),
    };
    if c == Compression::Zlib {
        varint(body.len(), &mut doc);
    }
    varint(packed.len(), &mut doc);
    doc.extend(packed);
    doc
}

/// Nesting past `max_recursion_depth`, in each way a level can nest: the
/// same error at the same offset through both paths.
#[test]
fn serde_and_decode_count_levels_alike() {
    let units: [&[u8]; 10] = [
        b"\x28",          // REFN
        b"\x41",          // ARRAYREF_1
        b"\x51\x61k",     // HASHREF_1 "k"
        b"\x28\x2b\x01",  // REFN ARRAY(1)
        b"\x2b\x01",      // ARRAY(1)
        b"\x2a\x01\x61k", // HASH(1) "k"
        b"\x30\x28",      // WEAKEN REFN
        b"\x28\xc1",      // REFN tracked ARRAYREF_1
        b"\x2c\x61A\x28", // OBJECT "A" REFN
        b"\x3f\x28",      // PAD REFN
    ];
    for unit in units {
        for n in [9_000, 20_000] {
            let mut doc = b"=\xF3rl\x05\x00".to_vec();
            for _ in 0..n {
                doc.extend_from_slice(unit);
            }
            doc.push(0x01);
            let perl_depth = sereal::DecoderOptions::new().max_recursion_depth(10_000);
            let serde = sereal::from_slice_with::<Value>(&doc, perl_depth);
            match (decode(&doc), serde) {
                (Err(d), Err(s)) => assert_eq!(d, s, "{unit:x?} x {n}"),
                (Ok(d), Ok(s)) => {
                    d.dismantle();
                    s.dismantle();
                }
                (d, s) => panic!("{unit:x?} x {n}: decode {d:?}, serde {s:?}"),
            }
        }
    }
}
