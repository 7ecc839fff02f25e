//! `sereal get PATH [FILE...]`: the values a path selects, one per line.

mod common;

use common::{run, text, TempDir};
use sereal::{sereal, Compression, Encoder, EncoderOptions, Ref, Value};

/// Two users, an object and an undef.
fn users() -> Vec<u8> {
    let admin = Ref::hash([("role", Value::from("admin"))].into_iter().collect());
    sereal::encode(&sereal!({
        "users": [
            {"id": 1, "name": "Zoë", "tags": ["a", "b"]},
            {"id": 2, "name": "bob", "tags": []}
        ],
        "owner": (Value::from(Ref::hash([("id", 7)].into()).blessed("My::User"))),
        "none": null,
        "first": (&admin),
        "again": (&admin)
    }))
    .unwrap()
}

fn get(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let (code, out, err) = run(&[&["get"], args].concat(), stdin);
    (code, text(&out), err)
}

#[test]
fn several_matches_print_one_json_value_per_line() {
    let doc = users();
    for (path, expected) in [
        ("$.users[*].name", "\"Zoë\"\n\"bob\"\n"),
        ("$.users[*].tags", "[\"a\",\"b\"]\n[]\n"),
        ("$.users[-1]", "{\"id\":2,\"name\":\"bob\",\"tags\":[]}\n"),
        ("$['users'][0:2].id", "1\n2\n"),
        ("$.users[::-1][id,name]", "2\n\"bob\"\n1\n\"Zoë\"\n"),
        ("$.users.*.tags[0]", "\"a\"\n"),
        ("$.none", "null\n"),
        // through an object, as Perl's -> sees it
        ("$.owner.id", "7\n"),
        // an item whose value is shared with the rest of the document
        ("$.again", "{\"role\":\"admin\"}\n"),
        (
            "$",
            "{\"again\":{\"role\":\"admin\"},\"first\":{\"role\":\"admin\"},\"none\":null,\
             \"owner\":{\"id\":7},\"users\":[{\"id\":1,\"name\":\"Zoë\",\"tags\":[\"a\",\"b\"]},\
             {\"id\":2,\"name\":\"bob\",\"tags\":[]}]}\n",
        ),
    ] {
        let (code, out, err) = get(&[path], &doc);
        assert_eq!((code, out.as_str()), (0, expected), "{path}: {err}");
    }
}

#[test]
fn perl_prints_each_match_in_perls_notation() {
    let doc = users();
    let (code, out, err) = get(&["--perl", "$.users[0]", "-"], &doc);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "{'id' => 1,'name' => \"Zoë\",'tags' => ['a','b']}\n");
    let (_, out, _) = get(&["--perl", "$['owner','none','first']"], &doc);
    assert_eq!(
        out,
        "bless( {'id' => 7}, 'My::User' )\nundef\n{'role' => 'admin'}\n"
    );
}

#[test]
fn several_files_standard_input_and_concatenated_documents() {
    let dir = TempDir::new("get-inputs");
    let a = dir.file("a.srl", &sereal::encode(&sereal!({"id": 1})).unwrap());
    let b = dir.file("b.srl", &sereal::encode(&sereal!({"id": 3})).unwrap());
    let from_stdin = sereal::encode(&sereal!({"id": 2})).unwrap();
    let (code, out, err) = get(&["$.id", &a, "-", &b], &from_stdin);
    assert_eq!((code, out.as_str()), (0, "1\n2\n3\n"), "{err}");
    // no file: standard input
    let (_, out, _) = get(&["$.id"], &from_stdin);
    assert_eq!(out, "2\n");

    // raw, compressed and raw documents one after another (the view of a
    // compressed one ends with its frame, of a raw one with its value),
    // and the newline `redis-cli --raw` ends with
    let zstd = EncoderOptions::new()
        .compress(Compression::Zstd)
        .compress_threshold(0);
    let big: Vec<Value> = (0..40)
        .map(|i| sereal!({"id": (i), "pad": "xxxxxxxx"}))
        .collect();
    let mut stream = sereal::encode(&sereal!([{"id": "first"}])).unwrap();
    let second = stream.len();
    stream.extend(
        Encoder::new(zstd)
            .unwrap()
            .encode(&Value::array(big))
            .unwrap(),
    );
    stream.extend(sereal::encode(&sereal!([{"id": "last"}])).unwrap());
    stream.push(b'\n');
    let compressed = sereal::Header::parse(&stream[second..])
        .unwrap()
        .compression;
    assert_eq!(compressed, Compression::Zstd);
    let f = dir.file("stream.srl", &stream);
    let (code, out, err) = get(&["$[0].id", &f], b"");
    assert_eq!(
        (code, out.as_str()),
        (0, "\"first\"\n0\n\"last\"\n"),
        "{err}"
    );
    let (_, out, _) = get(&["$[-1].id"], &stream);
    assert_eq!(out, "\"first\"\n39\n\"last\"\n");
}

#[test]
fn compressed_documents_of_each_kind() {
    let rows: Vec<Value> = (0..30)
        .map(|i| sereal!({"n": (i), "s": "same text"}))
        .collect();
    for c in [Compression::Snappy, Compression::Zlib, Compression::Zstd] {
        let opts = EncoderOptions::new().compress(c).compress_threshold(0);
        let doc = Encoder::new(opts)
            .unwrap()
            .encode(&Value::array(rows.clone()))
            .unwrap();
        assert_eq!(sereal::Header::parse(&doc).unwrap().compression, c);
        let (code, out, err) = get(&["$[28:].n"], &doc);
        assert_eq!((code, out.as_str()), (0, "28\n29\n"), "{c:?}: {err}");
    }
}

#[test]
fn no_match_prints_nothing_and_exit_status_says_so() {
    let doc = users();
    for path in [
        "$.nobody",
        "$.users[5]",
        "$.none.x",
        "$.users.name",
        "$.users[*].id.x",
    ] {
        let (code, out, err) = get(&[path], &doc);
        assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""), "{path}");
        let (code, _, _) = get(&["-e", path], &doc);
        assert_eq!(code, 1, "{path}");
    }
    let (code, out, _) = get(&["--exit-status", "$.none"], &doc);
    assert_eq!((code, out.as_str()), (0, "null\n"));
}

#[test]
fn a_malformed_path_is_an_error_before_any_input_is_read() {
    for (path, at, caret) in [
        ("$.users[*", 9, "           ^"),
        ("$..name", 1, "   ^"),
        ("users", 0, "  ^"),
        ("$.é[?(@.x)]", 5, "      ^"), // the offset counts bytes, the caret characters
    ] {
        // the file does not exist: the path is refused first
        let (code, out, err) = get(&[path, "/no/such/file.srl"], b"");
        assert_eq!((code, out.as_str()), (1, ""), "{path}");
        let lines: Vec<&str> = err.lines().collect();
        assert!(
            lines[0].starts_with(&format!("error: bad path at offset {at}: ")),
            "{path}: {err}"
        );
        assert_eq!(
            lines[1..],
            [format!("  {path}").as_str(), caret],
            "{path}: {err}"
        );
    }
}

#[test]
fn damaged_input_fails_naming_the_file_and_document() {
    let dir = TempDir::new("get-damaged");
    // an array of 5 elements, 1 present
    let cut = b"=\xF3rl\x05\x00\x28\x2b\x05\x01";
    let f = dir.file("cut.srl", cut);
    let (code, out, err) = get(&["$[0]", &f], b"");
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err,
        format!("{f}: error at offset 8: unexpected end of input\n")
    );
    // the second document of a stream cut short: the first one's match,
    // then the error; the next file is still read
    let good = sereal::encode(&sereal!([1, 2])).unwrap();
    let mut stream = good.clone();
    stream.extend(&good[..good.len() - 1]);
    let s = dir.file("stream.srl", &stream);
    let g = dir.file("good.srl", &good);
    let (code, out, err) = get(&["$[1]", &s, &g], b"");
    assert_eq!((code, out.as_str()), (1, "2\n2\n"));
    assert_eq!(
        err,
        format!("{s}, document 2 at offset 9: error at offset 17 (document 2): unexpected end of input\n")
    );
    // a match whose tags walk but that the decoder refuses (a key written
    // twice): the decoder's error, at its offset in the file
    let dup = dir.file("dup.srl", b"=\xF3rl\x05\x00\x42\x01\x52\x61a\x01\x61a\x02");
    let (code, out, err) = get(&["$[*]", &dup], b"");
    assert_eq!((code, out.as_str()), (1, "1\n"));
    assert_eq!(
        err,
        format!("{dup}: error at offset 12: duplicate key \"a\" in hash\n")
    );
    // not Sereal at all
    let (code, _, err) = get(&["$"], b"{\"id\": 1}");
    assert_eq!(code, 1);
    assert!(
        err.starts_with("-: error at offset 0: not a Sereal document"),
        "{err}"
    );
    assert!(err.contains("sereal from-json"), "{err}");
}

/// The examples of docs/cli.md, on examples/users.srl.
#[test]
fn docs_examples() {
    let users = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/users.srl");
    for (args, expected) in [
        (&["$.users[*].name"][..], "\"Zoë\"\n\"Ann\"\n"),
        (
            &["$.users[-1]"],
            "{\"group\":{\"name\":\"admins\"},\"id\":2,\"name\":\"Ann\"}\n",
        ),
        (&["$.users[0:2][id,name]"], "1\n\"Zoë\"\n2\n\"Ann\"\n"),
        (
            &["--perl", "$.users[0]"],
            "bless( {'group' => {'name' => 'admins'},'id' => 1,'name' => \"Zoë\"}, 'My::User' )\n",
        ),
    ] {
        let (code, out, err) = get(&[args, &[users]].concat(), b"");
        assert_eq!((code, out.as_str()), (0, expected), "{args:?}: {err}");
    }
    let (code, _, err) = get(&["$.users[0", users], b"");
    assert_eq!(
        (code, err.as_str()),
        (
            1,
            "error: bad path at offset 9: `]` expected\n  $.users[0\n           ^\n"
        )
    );
}
