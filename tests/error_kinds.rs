//! The error type as a caller sees it: one pointer wide, a kind per kind of
//! failure (no message matching needed), a position that says which space
//! its offset counts in, and `source()` for what a callback or a reader
//! returned. Also: the serde encoding functions take the value encoder's
//! options, and honour the ones that apply to serde data.

use serde::{Deserialize, Serialize};
use sereal::{
    decode, from_slice, to_vec_with, Compression, Decoder, DecoderOptions, Encoder, EncoderOptions,
    Error, ErrorKind, Position, Ref, Result, Value,
};
use std::collections::BTreeMap;
use std::error::Error as _;

#[test]
fn an_error_is_one_pointer_and_a_result_of_a_value_stays_small() {
    assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    assert!(std::mem::size_of::<Result<Value>>() <= 3 * std::mem::size_of::<usize>());
    assert_eq!(
        std::mem::size_of::<Result<()>>(),
        std::mem::size_of::<usize>()
    );
}

#[test]
fn positions_say_which_space_their_offset_counts_in() {
    let long = Value::bytes([b'z'; 200]);
    let object = Value::Ref(Ref::hash([("data", long)].into_iter().collect()).blessed("Foo"));
    let refusing = Decoder::new(DecoderOptions::new().refuse_objects(true));

    let plain = sereal::encode(&object).unwrap();
    let e = refusing.decode(&plain).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ObjectRefused);
    assert_eq!(e.position(), Some(Position::Document(6)), "{e}");
    assert_eq!(e.offset(), Some(6));
    assert_eq!(
        e.to_string(),
        "objects are refused (refuse_objects) at offset 6"
    );

    let zstd = EncoderOptions::new()
        .compress(Compression::Zstd)
        .compress_threshold(0);
    let packed = Encoder::new(zstd).unwrap().encode(&object).unwrap();
    let e = refusing.decode(&packed).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::ObjectRefused);
    let Some(Position::DecompressedBody(o)) = e.position() else {
        panic!("{e:?} is not placed in the decompressed body");
    };
    assert_eq!(e.offset(), Some(o));
    assert_eq!(Position::DecompressedBody(o).offset(), o);
    assert!(
        e.to_string()
            .ends_with(&format!("at decompressed body offset {o}")),
        "{e}"
    );

    // No position: an error of the encoder's options.
    let e = Encoder::new(EncoderOptions::new().protocol_version(0)).unwrap_err();
    assert_eq!(e.position(), None);
}

#[test]
fn refusals_duplicates_and_wrong_bodies_have_kinds_of_their_own() {
    let zlib = EncoderOptions::new()
        .compress(Compression::Zlib)
        .compress_threshold(0);
    let doc = Encoder::new(zlib)
        .unwrap()
        .encode(&Value::array(vec![7; 300]))
        .unwrap();
    let e = Decoder::new(DecoderOptions::new().refuse_zlib(true))
        .decode(&doc)
        .unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::CompressionRefused(Compression::Zlib));
    assert_eq!(e.position(), Some(Position::Document(4)));
    assert_eq!(
        e.to_string(),
        "Zlib compressed documents are refused at offset 4"
    );

    // HASHREF_2 "a" => 1, "a" => 2: the second "a" is at offset 10.
    let e = decode(b"=\xF3rl\x05\x00\x52\x61a\x01\x61a\x02").unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::DuplicateKey(b"a".to_vec()));
    assert_eq!(e.to_string(), "duplicate key \"a\" in hash at offset 10");
    // A key that is not UTF-8 is kept as its bytes.
    let e = decode(b"=\xF3rl\x05\x00\x52\x61\xff\x01\x61\xff\x02").unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::DuplicateKey(vec![0xff]));

    let hash = Ref::hash(Default::default());
    let e = hash.array_mut().unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::WrongBody("an array"));
    assert_eq!(e.to_string(), "node is not an array");
    let e = Ref::array([1]).hash_mut().unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::WrongBody("a hash"));
}

#[test]
fn serde_messages_are_message_errors_placed_where_the_value_is() {
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct User {
        id: u32,
        name: String,
    }
    // A hash with "id" only: the missing field is serde's message.
    let doc = sereal::to_vec(&BTreeMap::from([("id", 1)])).unwrap();
    let e = from_slice::<User>(&doc).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Message(m) if m == "missing field `name`"),
        "{e:?}"
    );
    assert_eq!(e.position(), Some(Position::Document(6)), "{e}");

    struct Refuses;
    impl Serialize for Refuses {
        fn serialize<S: serde::Serializer>(&self, _: S) -> std::result::Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("not today"))
        }
    }
    let e = sereal::to_vec(&Refuses).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::Message("not today".into()));
    assert_eq!(e.to_string(), "not today");
}

#[test]
fn a_failed_callback_is_the_source_of_the_error() {
    let mine = || Error::new(ErrorKind::Unsupported("the point is off the map".into()));

    // FREEZE
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    enc.on_freeze("Point", move |_| Err(mine()));
    let point = Value::Ref(Ref::hash([("x", 1)].into_iter().collect()).blessed("Point"));
    let e = enc.encode(&point).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Callback(_)), "{e:?}");
    let source = e.source().expect("the callback's error is the source");
    assert_eq!(source.to_string(), "the point is off the map");
    let inner = source.downcast_ref::<Error>().unwrap();
    assert_eq!(inner, &mine());

    // THAW
    let frozen = {
        let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
        enc.on_freeze("Point", |_| Ok(vec![Value::from(1)]));
        enc.encode(&point).unwrap()
    };
    let mut dec = Decoder::default();
    dec.on_thaw("Point", move |_, _| Err(mine()));
    let e = dec.decode(&frozen).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Callback(m) if m.contains("Point")),
        "{e:?}"
    );
    assert!(matches!(e.position(), Some(Position::Document(_))), "{e:?}");
    assert_eq!(e.source().unwrap().downcast_ref::<Error>(), Some(&mine()));

    // A refusal is the crate's own: no source.
    let mut enc = Encoder::new(
        EncoderOptions::new()
            .freeze_callbacks(true)
            .freeze_allow_classes(["Other"]),
    )
    .unwrap();
    enc.on_freeze("Point", |_| Ok(vec![]));
    let e = enc.encode(&point).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Callback(_)), "{e:?}");
    assert!(e.source().is_none());
}

#[test]
fn a_failed_read_is_an_io_error_with_its_source() {
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "peer gone",
            ))
        }
    }
    let e = sereal::from_reader::<_, Value>(Broken).unwrap_err();
    let ErrorKind::Io(io) = e.kind() else {
        panic!("{e:?}");
    };
    assert_eq!(io.get().kind(), std::io::ErrorKind::ConnectionReset);
    assert_eq!(e.source().unwrap().to_string(), "peer gone");
}

#[derive(Serialize)]
struct Row {
    name: &'static str,
    tags: Vec<&'static str>,
}

fn rows() -> Vec<Row> {
    (0..3)
        .map(|_| Row {
            name: "ann",
            tags: vec!["admin", "admin"],
        })
        .collect()
}

/// The same rows as a graph (serde writes ASCII strings as Perl does, as
/// `Value::from` makes them: without the UTF-8 flag).
fn rows_value() -> Value {
    Value::array((0..3).map(|_| {
        Value::hash([
            ("name", Value::from("ann")),
            (
                "tags",
                Value::array([Value::from("admin"), Value::from("admin")]),
            ),
        ])
    }))
}

#[test]
fn serde_encoding_takes_the_encoders_options() {
    let profiles = [
        EncoderOptions::new(),
        EncoderOptions::new().no_shared_hashkeys(true),
        EncoderOptions::new().dedupe_strings(true),
        EncoderOptions::new()
            .dedupe_strings(true)
            .no_shared_hashkeys(true),
        EncoderOptions::new().sort_keys(true).protocol_version(3),
        EncoderOptions::new()
            .compress(Compression::Zstd)
            .compress_threshold(0),
    ];
    for opts in profiles {
        let serde = to_vec_with(&rows(), &opts).unwrap();
        let graph = Encoder::new(opts.clone())
            .unwrap()
            .encode(&rows_value())
            .unwrap();
        assert_eq!(serde, graph, "{opts:?}");
        let mut out = Vec::new();
        sereal::to_writer_with(&mut out, &rows(), &opts).unwrap();
        assert_eq!(out, serde, "{opts:?}");
    }

    // With no_shared_hashkeys the keys of the later rows are written in
    // full: no COPY tag (0x2f) in the body.
    let shared = to_vec_with(&rows(), &EncoderOptions::new()).unwrap();
    let full = to_vec_with(&rows(), &EncoderOptions::new().no_shared_hashkeys(true)).unwrap();
    assert!(shared.contains(&0x2f));
    assert!(!full.contains(&0x2f));
    assert!(full.len() > shared.len());
    assert_eq!(*decode(&full).unwrap(), rows_value());

    // max_recursion_depth bounds serde nesting as it bounds a graph's.
    let nested = vec![vec![vec![1]]];
    let opts = EncoderOptions::new().max_recursion_depth(2);
    let e = to_vec_with(&nested, &opts).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::DepthExceeded(2));
    assert!(to_vec_with(&nested, &EncoderOptions::new().max_recursion_depth(4)).is_ok());
}

#[cfg(feature = "json")]
#[test]
fn a_json_text_that_is_no_document_is_a_json_error() {
    let e = sereal::json::from_json(&serde_json::json!({"nodes": 5}), true).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Json(m) if m.starts_with("at ")),
        "{e:?}"
    );
}
