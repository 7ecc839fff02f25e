//! Several inputs, standard input, and files of concatenated documents,
//! through every inspecting command.

mod common;

use common::{canon, run, text, TempDir};
use sereal::{Compression, Encoder, EncoderOptions, Value};

/// Three documents one after another, as a queue dump holds them: a hash
/// (12 bytes), a string (10 bytes) and a zstd document.
fn stream() -> Vec<u8> {
    let mut s = sereal::encode(&Value::hash([("a", Value::array([1, 2]))])).unwrap();
    assert_eq!(s.len(), 12);
    s.extend(sereal::encode(&Value::from("two")).unwrap());
    let zstd = EncoderOptions::new()
        .compress(Compression::Zstd)
        .compress_threshold(0);
    let mut enc = Encoder::new(zstd).unwrap();
    s.extend(enc.encode(&Value::array(vec!["x"; 50])).unwrap());
    s
}

#[test]
fn every_document_of_a_stream_is_read_in_turn() {
    let s = stream();
    let (code, out, err) = run(&["validate"], &s);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        text(&out),
        "-, document 1 at offset 0: OK\n\
         -, document 2 at offset 12: OK\n\
         -, document 3 at offset 22: OK\n"
    );
    let (code, out, _) = run(&["to-json", "--compact", "-"], &s);
    assert_eq!(code, 0);
    let x50 = format!("[{}]", vec!["\"x\""; 50].join(","));
    assert_eq!(text(&out), format!("{{\"a\":[1,2]}}\n\"two\"\n{x50}\n"));
    let (code, out, _) = run(&["info"], &s);
    assert_eq!(code, 0);
    let out = text(&out);
    for block in [
        "file:              -\n\
         document:          1 at offset 0\n\
         protocol version:  5\n\
         document type:     0 (raw)\n\
         compression:       none\n\
         header size:       6 bytes\n\
         user header data:  no\n\
         body size:         6 bytes\n\
         values:            4\n",
        "file:              -\n\
         document:          2 at offset 12\n\
         protocol version:  5\n",
        "document:          3 at offset 22\n\
         protocol version:  5\n\
         document type:     4 (zstd)\n\
         compression:       103 bytes -> ",
    ] {
        assert!(out.contains(block), "{block}\n{out}");
    }
    assert_eq!(out.matches("decodes:           yes\n").count(), 3, "{out}");
    let (code, out, _) = run(&["dump"], &s);
    assert_eq!(code, 0);
    let out = text(&out);
    assert!(
        out.starts_with(
            "# -, document 1 at offset 0\n\
             # protocol 5, body of 6 bytes at offset 6; offsets count from 1 at the body's first byte\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "# -, document 2 at offset 12\n\
             # protocol 5, body of 4 bytes at offset 18; offsets count from 1 at the body's first byte\n\
             # * = track bit set (the item is referred to later)\n      \
             1   SHORT_BINARY_3 \"two\"\n\
             # -, document 3 at offset 22\n\
             # protocol 5, zstd body, 103 bytes decompressed;"
        ),
        "{out}"
    );
}

#[test]
fn several_files_and_standard_input() {
    let dir = TempDir::new("inputs");
    let a = dir.file("a.srl", &canon("v5", 1403));
    let b = dir.file("b.srl", &canon("v5_zstd", 1406));
    let (code, out, err) = run(&["info", &a, &b], b"");
    assert_eq!(code, 0, "{err}");
    let out = text(&out);
    assert!(out.starts_with(&format!("file:              {a}\nprotocol version:  5\n")));
    assert!(out.contains(&format!("file:              {b}\nprotocol version:  5\n")));
    assert!(!out.contains("document:"), "{out}");
    // `-` among files, and no file at all, read standard input
    let (code, out, _) = run(&["validate", &a, "-"], &canon("v1", 1407));
    assert_eq!((code, text(&out)), (0, format!("{a}: OK\n-: OK\n")));
    for cmd in ["info", "dump", "to-json", "validate"] {
        let (code, from_stdin, err) = run(&[cmd], &canon("v5", 1403));
        assert_eq!(code, 0, "{cmd}: {err}");
        let (_, from_dash, _) = run(&[cmd, "-"], &canon("v5", 1403));
        assert_eq!(from_stdin, from_dash, "{cmd}");
    }
    // several files to dump and to-json: headings, and a JSON stream
    let (code, out, _) = run(&["dump", &a, &b], b"");
    assert_eq!(code, 0);
    let out = text(&out);
    assert!(out.starts_with(&format!("# {a}\n# protocol 5, body of ")));
    assert!(out.contains(&format!("\n# {b}\n# protocol 5, zstd body")));
    let (code, out, _) = run(&["to-json", "--compact", &a, &a], b"");
    assert_eq!(code, 0);
    let line = "[{\"v\":5},{\"v\":5},{\"v\":6}]\n";
    assert_eq!(text(&out), line.repeat(2));
}

#[test]
fn whitespace_after_the_last_document_is_not_a_document() {
    let doc = canon("v5", 1403);
    let dir = TempDir::new("trailing");
    // `redis-cli --raw GET k` ends the document with a newline; `\r\n`,
    // blank lines, spaces, tabs and form feeds are ASCII whitespace too
    for tail in [&b"\n"[..], b"\r\n", b"\n\n", b" \t\x0c\r\n"] {
        let piped = [&doc[..], tail].concat();
        for cmd in ["info", "dump", "show", "to-json", "validate"] {
            // exactly what the document alone gives: no second document, no
            // document numbers, no notice
            let alone = run(&[cmd], &doc);
            assert_eq!(alone.0, 0, "{cmd}: {}", alone.2);
            assert_eq!(run(&[cmd, "-"], &piped), alone, "{cmd} {tail:?}");
        }
        // a file (read through a memory map) alike
        let file = dir.file("doc.srl", &piped);
        let (code, out, err) = run(&["validate", &file], b"");
        assert_eq!(
            (code, text(&out), err.as_str()),
            (0, format!("{file}: OK\n"), "1 ok, 0 failed\n")
        );
    }
    // a stream's last document likewise, the others keep their numbers
    let mut s = stream();
    let (_, want, _) = run(&["validate"], &s);
    s.extend(b"\n");
    let (code, out, err) = run(&["validate"], &s);
    assert_eq!((code, out, err.as_str()), (0, want, "3 ok, 0 failed\n"));
    // whitespace before or between documents, whitespace alone, and
    // anything after the whitespace are still errors
    let n = doc.len();
    for (input, line) in [
        (
            [&doc[..], b"\n", &doc].concat(),
            format!(
                "-, document 1 at offset 0: OK\n-, document 2 at offset {n}: \
                 error at offset {n} (document 2): not a Sereal document (bad magic string)\n"
            ),
        ),
        (
            [&doc[..], b"\n#"].concat(),
            format!(
                "-, document 1 at offset 0: OK\n-, document 2 at offset {n}: \
                 error at offset {n} (document 2): not a Sereal document (bad magic string)\n"
            ),
        ),
        (
            [&b"\n"[..], &doc].concat(),
            "-: error at offset 0: not a Sereal document (bad magic string)\n".to_owned(),
        ),
        (
            b"\n".to_vec(),
            "-: error at offset 0: not a Sereal document (bad magic string)\n".to_owned(),
        ),
    ] {
        let (code, out, _) = run(&["validate"], &input);
        assert_eq!((code, text(&out)), (1, line), "{input:?}");
    }
}

#[test]
fn a_failing_document_stops_its_input_not_the_others() {
    let dir = TempDir::new("failing");
    let mut s = stream();
    s.extend(b"junk!");
    let bad = dir.file("bad.srl", &s);
    let good = dir.file("good.srl", &canon("v5", 1403));
    let (code, out, _) = run(&["validate", &bad, &good], b"");
    assert_eq!(code, 1);
    assert_eq!(
        text(&out),
        format!(
            "{bad}, document 1 at offset 0: OK\n\
             {bad}, document 2 at offset 12: OK\n\
             {bad}, document 3 at offset 22: OK\n\
             {bad}, document 4 at offset 50: error at offset 50 (document 4): \
             not a Sereal document (bad magic string)\n\
             {good}: OK\n"
        )
    );
    // the other commands: what was read, the error on standard error, exit 1
    for cmd in ["info", "dump", "to-json"] {
        let (code, out, err) = run(&[cmd, &bad, &good], b"");
        assert_eq!(code, 1, "{cmd}");
        assert_eq!(
            err, "error at offset 50 (document 4): not a Sereal document (bad magic string)\n",
            "{cmd}"
        );
        assert!(!text(&out).is_empty(), "{cmd}");
    }
    let (_, out, _) = run(&["to-json", "--compact", &bad, &good], b"");
    let x50 = format!("[{}]", vec!["\"x\""; 50].join(","));
    let want = format!("{{\"a\":[1,2]}}\n\"two\"\n{x50}\n[{{\"v\":5}},{{\"v\":5}},{{\"v\":6}}]\n");
    assert_eq!(text(&out), want);
    // a stream cut inside its second document: an error in stream offsets
    let mut cut = stream();
    cut.truncate(18);
    let (code, out, _) = run(&["validate"], &cut);
    assert_eq!(code, 1);
    assert_eq!(
        text(&out),
        "-, document 1 at offset 0: OK\n\
         -, document 2 at offset 12: error at offset 18 (document 2): unexpected end of input\n"
    );
}
