//! `Error::classify()`: what a server maps to a response, right for each
//! way a decode fails, through the decoder, serde, the streams and the
//! encoder.

use sereal::{
    decode, from_reader, from_slice, Category, Decoder, DecoderOptions, Encoder, EncoderOptions,
    ErrorKind, Ref, Value,
};

fn class_of<T: std::fmt::Debug>(r: sereal::Result<T>) -> (Category, bool) {
    let e = r.expect_err("an error");
    (e.classify(), e.is_eof())
}

#[test]
fn each_way_of_failing_has_its_category() {
    let doc = sereal::encode(&Value::array(["a", "b", "c"])).unwrap();
    // Cut short, anywhere: Eof, through every reader.
    for cut in 1..doc.len() {
        let part = &doc[..cut];
        assert_eq!(class_of(decode(part)), (Category::Eof, true), "cut {cut}");
        assert_eq!(class_of(from_slice::<Value>(part)), (Category::Eof, true));
        let mut inc = Decoder::default().incremental();
        inc.feed(part);
        assert!(inc.next_document().is_none());
        inc.finish();
        let e = inc.next_document().unwrap().unwrap_err();
        assert!(e.is_eof(), "cut {cut}: {e}");
    }
    // Not Sereal: Syntax.
    assert_eq!(
        class_of(decode(b"{\"json\": 1}")),
        (Category::Syntax, false)
    );
    assert_eq!(
        class_of(decode(b"=\xF3rl\x05\x00\x3e")),
        (Category::Syntax, false)
    );
    assert_eq!(
        class_of(decode(b"=\xF3rl\x05\x00\x29\x05")),
        (Category::Syntax, false)
    );
    let mut trailing = doc.clone();
    trailing.push(0);
    assert_eq!(class_of(decode(&trailing)), (Category::Syntax, false));
    // Valid, but not the type wanted: Data.
    assert_eq!(class_of(from_slice::<u32>(&doc)), (Category::Data, false));
    assert_eq!(
        class_of(from_slice::<Vec<u8>>(&doc)),
        (Category::Data, false)
    );
    let dup = b"=\xF3rl\x05\x00\x52\x61k\x01\x61k\x02";
    assert_eq!(class_of(decode(dup)), (Category::Data, false));
    let obj = Value::Ref(Ref::hash(Default::default()).blessed("A"));
    let obj = sereal::encode(&obj).unwrap();
    let refusing = Decoder::new(DecoderOptions::new().refuse_objects(true));
    assert_eq!(class_of(refusing.decode(&obj)), (Category::Data, false));
    // Over a limit: Limit.
    let strict = Decoder::new(DecoderOptions::new().max_num_array_entries(2));
    assert_eq!(class_of(strict.decode(&doc)), (Category::Limit, false));
    let shallow = Decoder::new(DecoderOptions::new().max_recursion_depth(1));
    let deep = sereal::encode(&Value::array([Value::array([1])])).unwrap();
    assert_eq!(class_of(shallow.decode(&deep)), (Category::Limit, false));
    // A protocol this crate does not read: Unsupported.
    assert_eq!(
        class_of(decode(b"=\xF3rl\x06\x00\x01")),
        (Category::Unsupported, false)
    );
    assert_eq!(
        ErrorKind::MissingFeature("zstd").category(),
        Category::Unsupported
    );
    // A handler that fails: Callback.
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    enc.on_freeze("A", |_| {
        Err(sereal::Error::new(ErrorKind::Message("no".into())))
    });
    let a = Value::Ref(Ref::hash(Default::default()).blessed("A"));
    assert_eq!(class_of(enc.encode(&a)), (Category::Callback, false));
}

/// A reader that fails: Io, and a reader that ends early: Eof.
#[test]
fn readers_fail_as_io_and_end_as_eof() {
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "peer",
            ))
        }
    }
    let e = from_reader::<_, Value>(Broken).unwrap_err();
    assert_eq!((e.classify(), e.is_io()), (Category::Io, true));
    let e = Decoder::default()
        .documents_from_reader(Broken)
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.classify(), Category::Io);
    let doc = sereal::encode(&Value::from("a string")).unwrap();
    let e = from_reader::<_, String>(&doc[..doc.len() - 1]).unwrap_err();
    assert!(e.is_eof(), "{e}");
    let e = Decoder::default()
        .documents_from_reader(&doc[..doc.len() - 1])
        .next()
        .unwrap()
        .unwrap_err();
    assert!(e.is_eof(), "{e}");
}
