//! The `sereal` binary: every command, on corpus documents and bad input.

mod common;

use common::{canon, run, text, TempDir};

#[test]
fn validate_reports_each_file_and_fails_on_any_error() {
    let dir = TempDir::new("validate");
    let good = dir.file(
        "good.srl",
        &sereal::encode(&sereal::Value::array([1, 2])).unwrap(),
    );
    // an array claiming 5 elements with only one present
    let bad = dir.file("bad.srl", b"=\xF3rl\x05\x00\x28\x2b\x05\x01");
    let (code, out, _) = run(&["validate", &good], b"");
    assert_eq!((code, text(&out)), (0, format!("{good}: OK\n")));
    let (code, out, err) = run(&["validate", &bad, &good], b"");
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        text(&out),
        format!("{bad}: error at offset 8: unexpected end of input\n{good}: OK\n")
    );
    // stdin, and input that is not Sereal at all
    let (code, out, _) = run(&["validate", "-"], b"{\"json\": true}");
    assert_eq!(code, 1);
    assert_eq!(
        text(&out),
        "-: error at offset 0: not a Sereal document (bad magic string); \
         this looks like JSON: `sereal from-json` reads JSON\n"
    );
    let (code, out, _) = run(&["validate"], b"=\xC3\xB3rl\x05\x00\x01");
    assert_eq!(code, 1);
    assert_eq!(
        text(&out),
        "-: error at offset 0: bad magic string: \
         this Sereal document was UTF-8 encoded after it was written\n"
    );
}

#[test]
fn validate_quiet_prints_only_failures_and_a_count_ends_every_run() {
    let dir = TempDir::new("validate-quiet");
    let doc = sereal::encode(&sereal::Value::array([1, 2])).unwrap();
    let good = dir.file("good.srl", &doc);
    let two = dir.file("two.srl", &[&doc[..], &doc].concat());
    // an array claiming 5 elements with only one present
    let bad = dir.file("bad.srl", b"=\xF3rl\x05\x00\x28\x2b\x05\x01");
    let missing = dir.0.join("missing.srl").to_str().unwrap().to_owned();
    let n = doc.len();
    // by default a line per document on standard output, the count on
    // standard error
    let (code, out, err) = run(&["validate", &two, &good], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        text(&out),
        format!(
            "{two}, document 1 at offset 0: OK\n{two}, document 2 at offset {n}: OK\n{good}: OK\n"
        )
    );
    assert_eq!(err, "3 ok, 0 failed\n");
    // --quiet: no line for a document that decodes
    for quiet in ["--quiet", "-q"] {
        let (code, out, err) = run(&["validate", quiet, &two, &good], b"");
        assert_eq!(
            (code, text(&out), err.as_str()),
            (0, String::new(), "3 ok, 0 failed\n")
        );
    }
    // a document that fails and an input that cannot be read are both
    // failures; the other inputs are still read
    let (code, out, err) = run(&["validate", "--quiet", &good, &bad, &missing, &two], b"");
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        text(&out),
        format!("{bad}: error at offset 8: unexpected end of input\n")
    );
    assert!(
        err.starts_with(&format!("error: cannot read {missing}: ")),
        "{err}"
    );
    assert!(err.ends_with("\n3 ok, 2 failed\n"), "{err}");
    // without --quiet the same run lists the documents that decode too
    let (code, out, err) = run(&["validate", &good, &bad, &missing, &two], b"");
    assert_eq!(code, 1);
    assert_eq!(text(&out).lines().count(), 4, "{}", text(&out));
    assert!(err.ends_with("\n3 ok, 2 failed\n"), "{err}");
    // the help says where each part goes
    let (code, help, _) = run(&["validate", "--help"], b"");
    assert_eq!(code, 0);
    let help = text(&help);
    for part in ["--quiet", "`N ok, M failed` on standard error", "Examples:"] {
        assert!(help.contains(part), "{part}\n{help}");
    }
}

#[test]
fn conformance_prints_the_summary_line() {
    let corpus = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/corpus/perl-sereal-5.003/v3.jsonl.zst"
    );
    let (code, out, err) = run(&["conformance", corpus], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&out).lines().last(), Some("1408 passed, 0 failed"));
    let freeze = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/corpus/perl-sereal-5.003/v5_freeze.jsonl.zst"
    );
    let (code, out, err) = run(&["conformance", freeze], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&out).lines().last(), Some("1408 passed, 0 failed"));
}

// ---------------------------------------------------------------------------
// info, dump, to-json, from-json

use sereal::conformance::read_cases;

/// The header (type bits cleared) and decompressed body of a document.
fn split(doc: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let h = sereal::Header::parse(doc).unwrap();
    let (body, _) = sereal::Decoder::default().body_bytes(doc, &h).unwrap();
    let mut head = doc[..h.len].to_vec();
    head[4] &= 0x0f;
    (head, body.into_owned())
}

#[test]
fn info_summarizes_raw_and_compressed_documents() {
    // case 1406 "nested records": 20 hashes of 4 keys, keys written as COPY
    let (code, out, err) = run(&["info", "-"], &canon("v5", 1406));
    assert_eq!(code, 0, "{err}");
    let out = text(&out);
    for line in [
        "protocol version:  5",
        "document type:     0 (raw)",
        "compression:       none",
        "header size:       6 bytes",
        "user header data:  no",
        "body size:         583 bytes",
        "values:            162",
        "hash keys:         100",
        "max depth:         4",
        "tracked items:     0",
        "back-references:   0 REFP, 0 ALIAS, 95 COPY, 0 OBJECTV",
        "decodes:           yes",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    let (code, out, _) = run(&["info", "-"], &canon("v5_zstd", 1406));
    assert_eq!(code, 0);
    let out = text(&out);
    assert!(out.contains("document type:     4 (zstd)"), "{out}");
    assert!(out.contains("compression:       583 bytes -> "), "{out}");
    assert!(out.contains("body size:         583 bytes"), "{out}");
    // user header data
    let mut enc = sereal::Encoder::new(Default::default()).unwrap();
    let doc = enc
        .encode_with_header(&sereal::Value::array([1]), &sereal::Value::from("hi"))
        .unwrap();
    let (code, out, _) = run(&["info", "-"], &doc);
    assert_eq!(code, 0);
    assert!(text(&out).contains("user header data:  yes, 3 bytes, 1 values"));
}

#[test]
fn dump_lists_tags_with_offsets_targets_and_nesting() {
    // case 1403: [$obj, $obj, $other], objects of class Frozen
    let (code, out, err) = run(&["dump", "-"], &canon("v5", 1403));
    assert_eq!(code, 0, "{err}");
    let out = text(&out);
    let want = "\
      1   ARRAYREF_3
      2     OBJECT
      3       class SHORT_BINARY_6 \"Frozen\"
     10       REFN
     11 *       HASH 1 entry
     13           key SHORT_BINARY_1 \"v\"
     15           POS_5 5
     16     REFP -> 11: HASH
     18     OBJECTV -> 3: SHORT_BINARY_6 \"Frozen\"
     20       HASHREF_1
     21         key COPY -> 13: SHORT_BINARY_1 \"v\"
     23         POS_6 6
";
    assert!(out.ends_with(want), "{out}");
    // protocol 1 counts offsets from the document's start
    let (code, out, _) = run(&["dump", "-"], &canon("v1", 1407));
    assert_eq!(code, 0);
    let out = text(&out);
    assert!(out.contains("      6   HASHREF_2\n"), "{out}");
    assert!(out.contains("key STR_UTF8 len 3 \"☺\""), "{out}");
    // a compressed document is listed decompressed
    let (code, out, _) = run(&["dump", "-"], &canon("v5_zstd", 1406));
    assert_eq!(code, 0);
    assert!(text(&out).contains("zstd body, 583 bytes decompressed"));
    // --header lists the user header data
    let mut enc = sereal::Encoder::new(Default::default()).unwrap();
    let doc = enc
        .encode_with_header(&sereal::Value::array([1]), &sereal::Value::from("hi"))
        .unwrap();
    let (code, out, _) = run(&["dump", "--header", "-"], &doc);
    assert_eq!(code, 0);
    assert!(text(&out).ends_with("      1   SHORT_BINARY_2 \"hi\"\n"));
    let (code, _, err) = run(&["dump", "--header", "-"], &canon("v5", 1403));
    assert_eq!(code, 1);
    assert_eq!(err, "error: the document has no user header data\n");
}

#[test]
fn to_json_plain_and_lossless() {
    let doc = canon("v5", 1396); // {x => $h, y => $h}, one hash shared
    let (code, out, _) = run(&["to-json", "--compact", "-"], &doc);
    assert_eq!(code, 0);
    assert_eq!(text(&out), "{\"x\":{\"a\":1},\"y\":{\"a\":1}}\n");
    let (code, out, _) = run(&["to-json", "--lossless", "-"], &doc);
    assert_eq!(code, 0);
    assert_eq!(
        text(&out),
        r#"{
  "format": "sereal-lossless-1",
  "protocol": 5,
  "compression": "none",
  "body": {"ref":0},
  "nodes": [
    {"hash":[["y",{"ref":1}],["x",{"ref":1}]]},
    {"hash":[["a",1]]}
  ]
}
"#
    );
    // user header data: in lossless JSON, and plain with --header
    let mut enc = sereal::Encoder::new(sereal::EncoderOptions::new().protocol_version(3)).unwrap();
    let with_header = enc
        .encode_with_header(
            &sereal::Value::array([1, 2]),
            &sereal::Value::hash([("v", 7)]),
        )
        .unwrap();
    let (code, out, _) = run(&["to-json", "--header", "--compact", "-"], &with_header);
    assert_eq!((code, text(&out)), (0, "{\"v\":7}\n".to_string()));
    let (code, json, _) = run(&["to-json", "--lossless", "-"], &with_header);
    assert_eq!(code, 0);
    assert!(
        text(&json).contains("\"header\": {\"ref\":"),
        "{}",
        text(&json)
    );
    let (code, again, _) = run(&["from-json", "--lossless", "-"], &json);
    assert_eq!((code, again), (0, with_header));
    // -o writes a file
    let dir = TempDir::new("json");
    let srl = dir.file("doc.srl", &doc);
    let json = dir.0.join("doc.json").to_str().unwrap().to_owned();
    let again = dir.0.join("again.srl").to_str().unwrap().to_owned();
    let (code, out, _) = run(&["to-json", "--lossless", &srl, "-o", &json], b"");
    assert_eq!((code, out.len()), (0, 0));
    let (code, out, _) = run(&["from-json", "--lossless", &json, "-o", &again], b"");
    assert_eq!((code, out.len()), (0, 0));
    assert_eq!(std::fs::read(&again).unwrap(), doc);
    // a failed conversion leaves no output file behind
    let failed = dir.0.join("failed.json");
    let (code, _, _) = run(&["to-json", "-", "-o", failed.to_str().unwrap()], b"junk");
    assert_eq!(code, 1);
    assert!(!failed.exists());
}

#[test]
fn from_json_plain_with_options() {
    let json = r#"{"name": "Zoë", "ids": [1, 2.5, null], "ok": true}"#.as_bytes();
    let (code, out, _) = run(&["from-json", "-"], json);
    assert_eq!(code, 0);
    let v = sereal::decode(&out).unwrap();
    assert_eq!(v.get("name"), Some(sereal::Value::utf8("Zoë")));
    assert_eq!(out[4], 5);
    let (code, out, _) = run(&["from-json", "--protocol", "3", "--sort-keys", "-"], json);
    assert_eq!(code, 0);
    assert_eq!(out[4], 3);
    // sorted: "ok", "ids", "name" (by length, then bytes)
    let (_, listing, _) = run(&["dump", "-"], &out);
    let keys: Vec<String> = text(&listing)
        .lines()
        .filter(|l| l.contains(" key "))
        .map(|l| l.rsplit(' ').next().unwrap().to_owned())
        .collect();
    assert_eq!(keys, ["\"ok\"", "\"ids\"", "\"name\""]);
    let big = format!("[{}]", vec!["\"some text\""; 500].join(","));
    let (code, out, _) = run(&["from-json", "--compress", "zstd", "-"], big.as_bytes());
    assert_eq!(code, 0);
    assert_eq!(out[4] >> 4, 4, "zstd document type");
    let (code, out, _) = run(
        &[
            "from-json",
            "--compress",
            "snappy",
            "--compress-threshold",
            "100000",
            "-",
        ],
        big.as_bytes(),
    );
    assert_eq!(code, 0);
    assert_eq!(out[4] >> 4, 0, "under the threshold: raw");
}

#[test]
fn lossless_round_trip_through_the_binary() {
    // profile, and the from-json options that match its encoder options
    let profiles: [(&str, &[&str]); 13] = [
        ("v1", &[]),
        ("v2", &[]),
        ("v3", &[]),
        ("v4", &[]),
        ("v5", &[]),
        ("v5_sort_keys", &["--sort-keys"]),
        ("v5_canonical", &["--canonical"]),
        ("v5_dedupe", &["--dedupe-strings"]),
        ("v5_aliased_dedupe", &["--aliased-dedupe-strings"]),
        ("v5_no_shared_hashkeys", &["--no-shared-hashkeys"]),
        ("v5_snappy", &[]),
        ("v5_zlib", &[]),
        ("v5_zstd", &[]),
    ];
    let mut checked = 0;
    for (p, opts) in profiles {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/corpus/perl-sereal-5.003")
            .join(format!("{p}.jsonl.zst"));
        for c in read_cases(&path).unwrap() {
            // the 13 extra cases (sharing, cycles, weak refs, objects,
            // booleans, unicode keys) and a sample of the others
            if c.id < 1395 && c.id % 97 != 0 {
                continue;
            }
            let doc = c.canon.unwrap();
            let (code, json, err) = run(&["to-json", "--lossless", "-"], &doc);
            assert_eq!(code, 0, "case {} [{p}]: {err}", c.id);
            let mut args = vec!["from-json", "--lossless", "-"];
            args.extend(opts);
            let (code, again, err) = run(&args, &json);
            assert_eq!(code, 0, "case {} [{p}]: {err}", c.id);
            if p.ends_with("snappy") || p.ends_with("zlib") || p.ends_with("zstd") {
                assert_eq!(split(&again), split(&doc), "case {} [{p}]", c.id);
            } else {
                assert_eq!(again, doc, "case {} [{p}]", c.id);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 13 * (13 + 15));
}

#[test]
fn bad_input_is_an_error_with_its_offset() {
    // an array claiming 5 elements with only one present
    let short = b"=\xF3rl\x05\x00\x28\x2b\x05\x01";
    for cmd in [
        &["info", "-"][..],
        &["dump", "-"],
        &["to-json", "-"],
        &["to-json", "--lossless", "-"],
    ] {
        let (code, _, err) = run(cmd, short);
        assert_eq!(code, 1, "{cmd:?}");
        assert!(err.starts_with("error at offset 8"), "{cmd:?}: {err}");
    }
    let (code, _, err) = run(&["dump", "-"], b"=\xF3rl\x05\x00\x29\x05");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "error at offset 6 (body offset 1): REFP offset 5 does not point to an earlier item\n"
    );
    let (code, _, err) = run(&["info", "-"], b"GIF89a");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "error at offset 0: not a Sereal document (bad magic string)\n"
    );
    // a zstd document whose frame is cut short
    let mut cut = canon("v5_zstd", 1406);
    cut.truncate(100);
    for cmd in ["info", "dump", "to-json"] {
        let (code, _, err) = run(&[cmd, "-"], &cut);
        assert_eq!(code, 1);
        assert!(err.starts_with("error at offset "), "{cmd}: {err}");
    }
    // JSON
    let (code, out, err) = run(&["from-json", "-"], b"{\"a\": [1, 2");
    assert_eq!((code, out.len()), (1, 0));
    assert_eq!(
        err,
        "error at offset 10 (line 1, column 11): EOF while parsing a list\n"
    );
    let (code, _, err) = run(&["from-json", "--lossless", "-"], b"{\"a\": 1}");
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error at /format: not a lossless document"),
        "{err}"
    );
    let bad = br#"{"format": "sereal-lossless-1", "body": {"ref": 0}, "nodes": [{"array": [{"ref": 7}]}]}"#;
    let (code, _, err) = run(&["from-json", "--lossless", "-"], bad);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "error at /nodes/0/array/0/ref: node 7 is not in the node table (1 nodes)\n"
    );
    let (code, _, err) = run(
        &["from-json", "--protocol", "2", "--compress", "zstd", "-"],
        b"[]",
    );
    assert_eq!(code, 1);
    assert!(err.contains("needs protocol version 3"), "{err}");
    let (code, _, err) = run(&["info", "/nonexistent/doc.srl"], b"");
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error: cannot read /nonexistent/doc.srl"),
        "{err}"
    );
}

#[test]
fn mangled_documents_never_panic() {
    // deterministic mutations of corpus documents through every reader
    let docs = [
        canon("v5", 1403),
        canon("v5", 1406),
        canon("v1", 1407),
        canon("v5_zstd", 1406),
        canon("v5_snappy", 1406),
        canon("v5_zlib", 1406),
    ];
    let mut seed: u64 = 0x5e7e_a15e;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    for round in 0..60 {
        let mut doc = docs[round % docs.len()].clone();
        for _ in 0..1 + next() % 3 {
            let i = 4 + next() % (doc.len() - 4);
            doc[i] = next() as u8;
        }
        if round % 5 == 0 {
            let keep = 6 + next() % (doc.len() - 6);
            doc.truncate(keep);
        }
        for cmd in [
            &["info", "-"][..],
            &["dump", "-"],
            &["show", "-"],
            &["to-json", "--lossless", "-"],
        ] {
            let (code, _, err) = run(cmd, &doc);
            assert!(code == 0 || code == 1, "{cmd:?} exited {code}: {err}");
            if code == 1 {
                assert!(err.starts_with("error"), "{cmd:?}: {err}");
            }
        }
    }
}

#[test]
fn help_explains_every_command_with_examples() {
    let (code, out, _) = run(&["--help"], b"");
    assert_eq!(code, 0);
    let out = text(&out);
    for cmd in [
        "info",
        "dump",
        "show",
        "to-json",
        "from-json",
        "validate",
        "get",
        "merge",
        "split",
        "conformance",
        "Examples:",
    ] {
        assert!(out.contains(cmd), "{cmd}\n{out}");
    }
    for cmd in [
        "info",
        "dump",
        "show",
        "to-json",
        "from-json",
        "get",
        "merge",
        "split",
    ] {
        let (code, out, _) = run(&[cmd, "--help"], b"");
        assert_eq!(code, 0);
        assert!(text(&out).contains("Example"), "{cmd}");
    }
}

/// The `users40.json` example of docs/cli.md: the JSON its Perl one-liner writes,
/// to a zstd document, and the first lines of `info`.
#[test]
fn readme_users40_example() {
    let records: Vec<String> = (1..=40)
        .map(|i| format!(r#"{{"email":"user{i}@example.com","id":{i},"name":"user{i}"}}"#))
        .collect();
    let json = format!("[{}]", records.join(","));
    let dir = TempDir::new("users40");
    let src = dir.file("users40.json", json.as_bytes());
    let srl = dir.0.join("users40.srl");
    let srl = srl.to_str().unwrap();
    let args = [
        "from-json",
        "--compress",
        "zstd",
        "--compress-threshold",
        "0",
    ];
    let (code, _, err) = run(&[&args[..], &[&src, "-o", srl]].concat(), b"");
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = run(&["info", srl], b"");
    assert_eq!(code, 0);
    let head: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().take(4).collect();
    assert_eq!(
        head,
        [
            format!("file:              {srl}").as_str(),
            "protocol version:  5",
            "document type:     4 (zstd)",
            "compression:       1378 bytes -> 259 bytes (ratio 5.32)",
        ]
    );
}

/// Plain JSON writes a shared node out at each meeting: `--max-repeat`
/// bounds the values written again, and a tree writes none again.
#[test]
fn to_json_max_repeat_bounds_only_shared_nodes_written_again() {
    let tree = sereal::encode(&sereal::Value::array(0..100)).unwrap();
    let (code, out, err) = run(&["to-json", "--compact", "--max-repeat", "1"], &tree);
    assert_eq!(code, 0, "{err}");
    let numbers: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    assert_eq!(text(&out), format!("[{}]\n", numbers.join(",")));
    let shared = sereal::Ref::array(vec![sereal::Value::from(7); 10]);
    let doc = sereal::encode(&sereal::Value::array([
        sereal::Value::from(&shared),
        sereal::Value::from(&shared),
    ]))
    .unwrap();
    drop(shared);
    let (code, out, _) = run(&["to-json", "--compact", "--max-repeat", "10"], &doc);
    let ten = format!("[{}]", ["7"; 10].join(","));
    assert_eq!((code, text(&out)), (0, format!("[{ten},{ten}]\n")));
    let (code, _, err) = run(&["to-json", "--max-repeat", "9"], &doc);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "error: plain JSON writes a shared node out again at each meeting, and this \
         document's would pass --max-repeat 9 values written again; raise it (0: no \
         limit), or write --lossless JSON, which writes each node once\n"
    );
    let (code, _, _) = run(&["to-json", "--max-repeat", "0"], &doc);
    assert_eq!(code, 0);
}

#[test]
fn streamed_lossless_json_is_the_text_of_the_whole_json() {
    // to-json writes lossless JSON a node at a time; compact, it is the
    // text serde_json makes of Document::to_json, for every document
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/perl-sereal-5.003");
    let (mut input, mut expected) = (Vec::new(), String::new());
    for profile in ["v5", "v5_aliased_dedupe", "v5_freeze", "v3", "v5_zstd"] {
        for c in read_cases(&dir.join(format!("{profile}.jsonl.zst"))).unwrap() {
            let doc = c.canon.unwrap();
            let dec = sereal::Decoder::default();
            let Ok(j) = sereal::json::Document::decode(&doc, &dec).and_then(|d| d.to_json(true))
            else {
                continue;
            };
            expected.push_str(&serde_json::to_string(&j).unwrap());
            expected.push('\n');
            input.extend_from_slice(&doc);
        }
    }
    let (code, out, err) = run(&["to-json", "--lossless", "--compact", "-"], &input);
    assert_eq!(code, 0, "{err}");
    assert!(text(&out) == expected, "the streamed text differs");
    assert!(expected.lines().count() > 5000);
}

#[test]
fn lossless_round_trip_keeps_protocol_1_legacy_snappy() {
    // protocol 1's non-incremental Snappy framing, as Perl's `snappy`
    // option writes it: lossless JSON names it and writes it again
    let words: Vec<sereal::Value> = (0..200)
        .map(|i| sereal::Value::from(format!("word {}", i % 7)))
        .collect();
    let opts = sereal::EncoderOptions::new()
        .protocol_version(1)
        .compress(sereal::Compression::Snappy)
        .compress_threshold(0)
        .legacy_snappy(true);
    let doc = sereal::encode_with(&sereal::Value::array(words), &opts).unwrap();
    assert_eq!(doc[4], 0x11, "protocol 1, legacy Snappy");
    let (code, json, err) = run(&["to-json", "--lossless", "-"], &doc);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(j["compression"], "snappy_legacy");
    let (code, again, err) = run(&["from-json", "--lossless", "-"], &json);
    assert_eq!(code, 0, "{err}");
    assert_eq!(again, doc);
}

#[test]
fn lossless_round_trip_keeps_the_forms_perl_chose() {
    // Perl writes `REFN ARRAY`/`REFN HASH` for a small container something
    // else held, and a `PAD` for a weak reference whose referent only weak
    // references held: the graph says neither, lossless JSON does, and the
    // document comes back byte for byte.
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/perl-sereal-5.003");
    let (mut refn, mut pad) = (0, 0);
    for profile in ["v1", "v5", "v5_zstd"] {
        for c in read_cases(&dir.join(format!("{profile}.jsonl.zst"))).unwrap() {
            let doc = c.srl.unwrap();
            let (code, json, err) = run(&["to-json", "--lossless", "-"], &doc);
            assert_eq!(code, 0, "{err}");
            let t = text(&json);
            let has = (t.contains("\"refn\":true"), t.contains("\"pad\":true"));
            // the documents whose bytes chose forms, and a few more
            if !(has.0 || has.1 || c.id % 97 == 0) || (refn > 12 && !has.1) {
                continue;
            }
            refn += usize::from(has.0);
            pad += usize::from(has.1);
            let (code, again, err) = run(&["from-json", "--lossless", "-"], &json);
            assert_eq!(code, 0, "{err}");
            if profile == "v5_zstd" {
                // the body, decompressed, is Perl's; zstd's frames may differ
                let body = |d: &[u8]| {
                    let h = sereal::Header::parse(d).unwrap();
                    let dec = sereal::Decoder::default();
                    dec.body_bytes(d, &h).unwrap().0.into_owned()
                };
                assert_eq!(body(&again), body(&doc), "case {} [{profile}]", c.id);
            } else {
                assert_eq!(again, doc, "case {} [{profile}]: {t}", c.id);
            }
        }
    }
    assert!(refn > 10 && pad > 2, "refn {refn}, pad {pad}");

    // Perl's hashes its temporaries held twice, written now
    let perl = std::process::Command::new("perl")
        .args([
            "-MSereal::Encoder=encode_sereal",
            "-e",
            "binmode STDOUT; print encode_sereal([map { {a=>1} } 1..2])",
        ])
        .output();
    match perl {
        Ok(o) if o.status.success() => {
            let (code, json, err) = run(&["to-json", "--lossless", "-"], &o.stdout);
            assert_eq!(code, 0, "{err}");
            let (code, again, err) = run(&["from-json", "--lossless", "-"], &json);
            assert_eq!(code, 0, "{err}");
            assert_eq!(again, o.stdout, "{}", text(&json));
        }
        _ => eprintln!(
            "Perl's Sereal is not installed (apt-get install -y libsereal-perl): its part skipped"
        ),
    }
}

#[test]
fn max_memory_bounds_each_decode_and_raises_or_lifts_the_default() {
    let dir = TempDir::new("max_memory");
    let doc = sereal::encode(&sereal::Value::array(vec![sereal::Value::from(0); 1000])).unwrap();
    let file = dir.file("zeros.srl", &doc);
    for cmd in ["show", "to-json", "validate"] {
        let (code, out, err) = run(&["--max-memory", "1000", cmd, &file], b"");
        assert_eq!(code, 1, "{cmd}: {err}");
        let said = format!("{}{err}", text(&out));
        assert!(said.contains("max_memory"), "{cmd}: {said}");
        let (code, _, err) = run(&[cmd, &file], b"");
        assert_eq!(code, 0, "{cmd} under the default: {err}");
        let (code, _, err) = run(&[cmd, "--max-memory", "0", &file], b"");
        assert_eq!(code, 0, "{cmd} with no limit: {err}");
    }
}
