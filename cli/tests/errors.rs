//! Damaged documents and input that is not Sereal: what parsed, then an
//! error a person can act on, with its offset.

mod common;

use common::{canon, run, text, TempDir};

#[test]
fn info_on_a_damaged_document_prints_what_parsed_then_the_error() {
    // an array claiming 5 elements with only one present
    let (code, out, err) = run(&["info"], b"=\xF3rl\x05\x00\x28\x2b\x05\x01");
    assert_eq!(code, 1);
    assert_eq!(
        text(&out),
        "file:              -\n\
         protocol version:  5\n\
         document type:     0 (raw)\n\
         compression:       none\n\
         header size:       6 bytes\n\
         user header data:  no\n\
         body size:         unknown (damaged; counts up to the error)\n\
         values:            2\n\
         hash keys:         0\n\
         max depth:         1\n\
         tracked items:     0\n\
         back-references:   0 REFP, 0 ALIAS, 0 COPY, 0 OBJECTV\n\
         objects:           0\n\
         weak references:   0\n\
         decodes:           no\n"
    );
    assert_eq!(
        err,
        "error at offset 8 (body offset 3): an array of 5 elements claimed, but only 1 byte left\n"
    );
    // a zstd frame cut short: the header fields, then the error
    let mut cut = canon("v5_zstd", 1406);
    cut.truncate(100);
    let (code, out, err) = run(&["info"], &cut);
    assert_eq!(code, 1);
    assert_eq!(
        text(&out),
        "file:              -\n\
         protocol version:  5\n\
         document type:     4 (zstd)\n\
         compression:       zstd (damaged)\n"
    );
    assert!(err.starts_with("error at offset "), "{err}");
    // a header suffix running past the input: the version byte was good
    let (code, out, err) = run(&["info"], b"=\xF3rl\x05\x05\x01");
    assert_eq!(code, 1);
    assert_eq!(
        text(&out),
        "file:              -\nprotocol version:  5\ndocument type:     0 (raw)\n"
    );
    assert_eq!(
        err,
        "error at offset 5: bad header: header suffix of 5 bytes runs past the input\n"
    );
    // damaged user header data
    let mut enc = sereal::Encoder::new(Default::default()).unwrap();
    let mut doc = enc
        .encode_with_header(&sereal::Value::from(1), &sereal::Value::array([1, 2]))
        .unwrap();
    assert_eq!(
        &doc[6..9],
        b"\x01\x42\x01",
        "user data: flag, ARRAYREF_2, 1"
    );
    doc[7] = 0x43; // ARRAYREF_3: one element more than there is
    let (code, out, err) = run(&["info"], &doc);
    assert_eq!(code, 1);
    assert!(
        text(&out)
            .ends_with("header size:       10 bytes\nuser header data:  yes, 3 bytes (damaged)\n"),
        "{}",
        text(&out)
    );
    assert!(
        err.starts_with("error at offset 10 (body offset 4): "),
        "{err}"
    );
    // a body that walks but does not decode (nesting past the decoder's
    // limit of 10000): every count, then the decoder's error
    let mut deep = b"=\xF3rl\x05\x00".to_vec();
    deep.extend(std::iter::repeat_n(0x41u8, 10_001)); // ARRAYREF_1
    deep.push(0x01);
    let (code, out, err) = run(&["info"], &deep);
    assert_eq!(code, 1);
    let out = text(&out);
    assert!(out.contains("max depth:         10001\n"), "{out}");
    assert!(out.ends_with("decodes:           no\n"), "{out}");
    assert!(err.starts_with("error at offset "), "{err}");
    assert!(
        err.contains("maximum recursion depth (10000) exceeded"),
        "{err}"
    );
}
