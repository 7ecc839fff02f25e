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
    assert_eq!(err, "error at offset 5: unexpected end of input\n");
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

#[test]
fn the_walker_says_what_a_damaged_body_lacks() {
    let cases: [(&[u8], &str); 5] = [
        // BINARY of 10 bytes, 3 present
        (
            b"=\xF3rl\x05\x00\x26\x0aabc",
            "error at offset 8 (body offset 3): unexpected end of input (10 bytes needed, 3 left)\n",
        ),
        // a varint cut short, and one of eleven bytes
        (
            b"=\xF3rl\x05\x00\x20\x80",
            "error at offset 7 (body offset 2): unexpected end of input (inside a varint)\n",
        ),
        (
            b"=\xF3rl\x05\x00\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
            "error at offset 7 (body offset 2): malformed varint\n",
        ),
        // a hash of 3 entries, 2 bytes left
        (
            b"=\xF3rl\x05\x00\x2a\x03\x01\x01",
            "error at offset 7 (body offset 2): a hash of 3 entries claimed, but only 2 bytes left\n",
        ),
        // a COPY of what comes after it
        (
            b"=\xF3rl\x05\x00\x2f\x05",
            "error at offset 6 (body offset 1): COPY offset 5 does not point to an earlier item\n",
        ),
    ];
    for (doc, want) in cases {
        let (code, _, err) = run(&["dump"], doc);
        assert_eq!(code, 1, "{doc:02x?}");
        assert!(err.ends_with(want), "{doc:02x?}: {err}");
    }
}

#[test]
fn input_that_is_not_sereal_is_named_for_what_it_looks_like() {
    let dir = TempDir::new("errors");
    let empty = dir.file("empty.srl", b"");
    for cmd in ["info", "dump", "to-json"] {
        let (code, _, err) = run(&[cmd, &empty], b"");
        assert_eq!(code, 1, "{cmd}");
        assert_eq!(
            err, "error at offset 0: unexpected end of input (the input is empty)\n",
            "{cmd}"
        );
    }
    let (code, out, _) = run(&["validate", &empty], b"");
    assert_eq!(code, 1);
    assert_eq!(
        text(&out),
        format!("{empty}: error at offset 0: unexpected end of input (the input is empty)\n")
    );
    // JSON given to a command that reads Sereal
    let json = dir.file("doc.json", b"  {\"id\": [1, 2]}\n");
    let (code, _, err) = run(&["to-json", &json], b"");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "error at offset 0: not a Sereal document (bad magic string); \
         this looks like JSON: `sereal from-json` reads JSON\n"
    );
    // and Sereal given to from-json
    let (code, _, err) = run(&["from-json"], &canon("v5", 1403));
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "error at offset 0 (line 1, column 1): expected value; \
         this is a Sereal document: `sereal to-json` converts it to JSON\n"
    );
    // a mangled magic string keeps the decoder's explanation
    let (code, _, err) = run(&["info"], b"=\xC3\xB3rl\x05\x00\x01");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "error at offset 0: bad magic string: \
         this Sereal document was UTF-8 encoded after it was written\n"
    );
}

/// Standard base64 of `bytes`, in lines of 76 characters as `base64` writes.
fn base64(bytes: &[u8]) -> Vec<u8> {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    b64.as_bytes()
        .chunks(76)
        .flat_map(|l| [l, b"\n"].concat())
        .collect()
}

#[test]
fn base64_input_is_recognized_and_read_with_the_flag() {
    let doc = canon("v5", 1403);
    let b64 = base64(&doc);
    assert!(b64.starts_with(b"PfNybA"), "{}", text(&b64));
    let (code, _, err) = run(&["info"], &b64);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "error at offset 0: not a Sereal document (bad magic string); this looks like \
         base64 text of a Sereal document: add --base64 (or pipe it through `base64 -d`)\n"
    );
    for cmd in ["info", "dump", "to-json", "validate"] {
        let (code, out, err) = run(&[cmd, "--base64"], &b64);
        assert_eq!(code, 0, "{cmd}: {err}");
        let (_, want, _) = run(&[cmd], &doc);
        assert_eq!(text(&out), text(&want), "{cmd}");
    }
    // a stream of two documents, base64 in one piece
    let two = [doc.clone(), doc.clone()].concat();
    let (code, out, _) = run(&["validate", "--base64"], &base64(&two));
    assert_eq!(code, 0);
    let want = format!("-, document 2 at offset {}: OK\n", doc.len());
    assert!(text(&out).ends_with(&want), "{}", text(&out));
    let (code, _, err) = run(&["info", "--base64"], b"PfNy*bA==");
    assert_eq!(code, 1);
    assert!(err.starts_with("error: - is not base64 text ("), "{err}");
}
