//! `sereal split FILE --chunk-size BYTES -o DIR`: a document's root array
//! cut into chunk documents, checked with the library and, where it is
//! installed, Perl.

mod common;

use common::{perl_reads, perl_sereal, run, TempDir};
use sereal::{sereal, Compression, Decoder, Header, Ref, Value};
use std::path::Path;

/// 200 records of different sizes sharing a hash, an object among them,
/// and at index 57 one larger than any chunk.
fn rows() -> Vec<Value> {
    let team = Ref::hash([("name", Value::from("core team"))].into_iter().collect());
    (0..200)
        .map(|i| match i {
            57 => sereal!({"id": (i), "blob": ("x".repeat(3000))}),
            90 => Value::from(Ref::hash([("id", i)].into()).blessed("My::User")),
            _ => sereal!({"id": (i), "name": ("n".repeat(i as usize % 40)), "team": (&team)}),
        })
        .collect()
}

/// The chunk files in DIR, as `ls` sorts them.
fn chunks(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// Splits `args` (`FILE --chunk-size N ...`) into `dir`: the chunk files
/// and the summary line.
fn split(dir: &Path, args: &[&str], stdin: &[u8]) -> (Vec<String>, String) {
    let out = ["-o", dir.to_str().unwrap()];
    let (code, stdout, err) = run(&[&["split"], args, &out].concat(), stdin);
    assert_eq!((code, stdout.as_slice()), (0, &b""[..]), "{args:?}: {err}");
    (chunks(dir), err)
}

/// Each chunk's user header data and elements.
fn read(files: &[String]) -> Vec<(Option<sereal::Document>, Vec<Value>)> {
    files
        .iter()
        .map(|f| {
            let bytes = std::fs::read(f).unwrap();
            let (header, body) = Decoder::default().decode_with_header(&bytes).unwrap();
            let elements = body.as_array().unwrap().to_vec();
            (header, elements)
        })
        .collect()
}

#[test]
fn chunks_in_order_within_the_size_join_to_the_original() {
    let tmp = TempDir::new("split-plain");
    let rows = rows();
    let file = tmp.file(
        "rows.srl",
        &sereal::encode(&Value::array(rows.clone())).unwrap(),
    );
    // a directory that is not there yet, two levels down
    let dir = tmp.0.join("out/chunks");
    let (files, summary) = split(&dir, &[&file, "--chunk-size", "600"], b"");
    assert!(files.len() > 10, "{files:?}");
    assert_eq!(
        summary,
        format!(
            "{} chunks written to {} (200 elements)\n",
            files.len(),
            dir.display()
        )
    );
    for (n, f) in files.iter().enumerate() {
        assert!(f.ends_with(&format!("/chunk-{:06}.srl", n + 1)), "{f}");
    }
    let mut joined = Vec::new();
    for (f, (header, elements)) in files.iter().zip(read(&files)) {
        assert!(header.is_none());
        let size = std::fs::metadata(f).unwrap().len();
        // over the size only when one element alone is: the large one
        if size > 600 {
            assert_eq!(elements.len(), 1, "{f}: {size} bytes");
            assert!(elements[0].get("blob").is_some(), "{f}");
        }
        joined.extend(elements);
    }
    assert_eq!(joined, rows);
    if perl_sereal("split: Perl reads the chunks") {
        let perl: Vec<Value> = perl_reads(&files)
            .into_iter()
            .flat_map(|(h, body)| {
                assert_eq!(h, Value::Undef);
                body.as_array().unwrap().to_vec()
            })
            .collect();
        assert_eq!(perl, rows);
    }
    // the chunks read in order by another command
    let ids: Vec<String> = (0..200).map(|i| format!("{i}\n")).collect();
    let (code, out, _) = run(
        &[
            &["get", "$[*].id"],
            &files.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ]
        .concat(),
        b"",
    );
    assert_eq!((code, common::text(&out)), (0, ids.concat()));
}

#[test]
fn count_header_and_compression() {
    let tmp = TempDir::new("split-header");
    let rows = rows();
    let doc = sereal::encode(&Value::array(rows.clone())).unwrap();
    let dir = tmp.0.join("chunks");
    let args = [
        "-",
        "--chunk-size",
        "2000",
        "--count-header",
        "--compress",
        "zstd",
        "--compress-threshold",
        "0",
    ];
    let (files, summary) = split(&dir, &args, &doc);
    assert!(
        summary.starts_with(&format!("{} chunks written to ", files.len())),
        "{summary}"
    );
    let mut joined = Vec::new();
    for (f, (header, elements)) in files.iter().zip(read(&files)) {
        let bytes = std::fs::read(f).unwrap();
        assert_eq!(
            Header::parse(&bytes).unwrap().compression,
            Compression::Zstd,
            "{f}"
        );
        // the bound is on the document before compression
        assert!(bytes.len() <= 2000 || elements.len() == 1, "{f}");
        let count = header
            .unwrap()
            .get("elements_count")
            .unwrap()
            .as_i64()
            .unwrap();
        assert_eq!(count as usize, elements.len(), "{f}");
        joined.extend(elements);
    }
    assert_eq!(joined, rows);
    if perl_sereal("split --count-header: Perl reads the chunks and their headers") {
        let mut perl = Vec::new();
        for (header, body) in perl_reads(&files) {
            let body = body.as_array().unwrap().to_vec();
            assert_eq!(header, sereal!({"elements_count": (body.len())}));
            perl.extend(body);
        }
        assert_eq!(perl, rows);
    }
}

#[test]
fn each_document_of_a_file_is_split_in_turn() {
    let tmp = TempDir::new("split-stream");
    let (a, b) = (sereal!([1, 2, 3]), sereal!([[4], {"five": 5}]));
    let mut stream = sereal::encode(&a).unwrap();
    stream.extend(sereal::encode(&b).unwrap());
    let file = tmp.file("stream.srl", &stream);
    let dir = tmp.0.join("chunks");
    // no chunk holds two elements: a chunk per element
    let (files, summary) = split(&dir, &[&file, "--chunk-size", "1"], b"");
    assert_eq!(files.len(), 5);
    assert_eq!(
        summary,
        format!("5 chunks written to {} (5 elements)\n", dir.display())
    );
    let elements: Vec<Value> = read(&files).into_iter().flat_map(|(_, e)| e).collect();
    assert_eq!(
        elements,
        sereal!([1, 2, 3, [4], {"five": 5}])
            .as_array()
            .unwrap()
            .to_vec()
    );
}

#[test]
fn refusals_name_the_input_and_leave_no_chunks() {
    let tmp = TempDir::new("split-refused");
    let dir = tmp.0.join("chunks");
    let out = dir.to_str().unwrap();
    // a root that is not an array: nothing made, not even the directory
    let hash = tmp.file("hash.srl", &sereal::encode(&sereal!({"a": [1]})).unwrap());
    let (code, _, err) = run(&["split", &hash, "--chunk-size", "10", "-o", out], b"");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "{hash}: error: a document is split at its root array, and this root is not an array\n"
        )
    );
    assert!(!dir.exists());
    // an element that refers to the array being split: the chunks
    // written before it are removed
    let r = Ref::array(vec![Value::from(1)]);
    r.array_mut().unwrap().push(Value::Ref(r.clone()));
    let cycle = tmp.file(
        "cycle.srl",
        &sereal::encode(&Value::Ref(r.clone())).unwrap(),
    );
    r.array_mut().unwrap().clear(); // the cycle built by hand is ours to free
    let (code, _, err) = run(&["split", &cycle, "--chunk-size", "1", "-o", out], b"");
    assert_eq!(code, 1);
    assert!(err.starts_with(&format!("{cycle}: error")), "{err}");
    assert!(err.contains("refers to the array being split"), "{err}");
    assert_eq!(chunks(&dir), Vec::<String>::new());
    // a directory with chunks already: not written over
    let rows = tmp.file("rows.srl", &sereal::encode(&sereal!([1, 2])).unwrap());
    split(&dir, &[&rows, "--chunk-size", "1"], b"");
    let before = chunks(&dir);
    let (code, _, err) = run(&["split", &rows, "--chunk-size", "100", "-o", out], b"");
    assert_eq!(code, 1);
    assert!(
        err.contains("holds chunk files already (chunk-00000"),
        "{err}"
    );
    assert_eq!(chunks(&dir), before);
    // a damaged input
    let cut = tmp.file("cut.srl", b"=\xF3rl\x05\x00\x28\x2b\x05\x01");
    let (code, _, err) = run(
        &[
            "split",
            &cut,
            "--chunk-size",
            "10",
            "-o",
            "/nonexistent/dir",
        ],
        b"",
    );
    assert_eq!(
        (code, err),
        (
            1,
            format!("{cut}: error at offset 8: unexpected end of input\n")
        )
    );
}

/// The example of docs/cli.md: `users40.srl`, made by from-json from the
/// JSON of its Perl one-liner, split into chunks of 500 bytes.
#[test]
fn docs_example() {
    let records: Vec<String> = (1..=40)
        .map(|i| format!(r#"{{"email":"user{i}@example.com","id":{i},"name":"user{i}"}}"#))
        .collect();
    let tmp = TempDir::new("split-docs");
    let json = tmp.file(
        "users40.json",
        format!("[{}]", records.join(",")).as_bytes(),
    );
    let srl = tmp.0.join("users40.srl").to_str().unwrap().to_owned();
    let args = [
        "from-json",
        "--compress",
        "zstd",
        "--compress-threshold",
        "0",
        &json,
        "-o",
        &srl,
    ];
    assert_eq!(run(&args, b"").0, 0);
    let dir = tmp.0.join("chunks");
    let args = [srl.as_str(), "--chunk-size", "500", "--count-header"];
    let (files, summary) = split(&dir, &args, b"");
    assert_eq!(
        summary,
        format!("3 chunks written to {} (40 elements)\n", dir.display())
    );
    let read = read(&files);
    let counts: Vec<i64> = read
        .iter()
        .map(|(h, _)| {
            h.as_ref()
                .unwrap()
                .get("elements_count")
                .unwrap()
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(counts, [14, 13, 13]);
    let first = &read[1].1[0];
    assert_eq!(
        first.get("email").unwrap(),
        Value::from("user15@example.com")
    );
}
