//! `sereal merge FILE... [-o OUT]`: documents joined into one on their
//! bytes, checked with the library and, where it is installed, Perl.

mod common;

use common::{perl_reads, perl_sereal, run, TempDir};
use sereal::{sereal, Compression, Encoder, EncoderOptions, Header, Ref, Value};

/// Three inputs: an array, an array of records sharing a hash (and a
/// blessed one), and a file of two concatenated documents.
struct Inputs {
    dir: TempDir,
    a: String,
    b: String,
    stream: String,
    /// The roots of the documents, in order.
    roots: Vec<Value>,
}

fn inputs(name: &str) -> Inputs {
    let dir = TempDir::new(name);
    let team = Ref::hash([("name", Value::from("core"))].into_iter().collect());
    let a = sereal!([1, "two", {"three": 3}]);
    let b = sereal!([
        {"id": 4, "team": (&team)},
        {"id": 5, "team": (&team)},
        (Value::from(Ref::hash([("id", 6)].into()).blessed("My::User")))
    ]);
    let (c, d) = (sereal!(["text repeated across inputs"]), sereal!([7, 8]));
    let mut stream = sereal::encode(&c).unwrap();
    stream.extend(sereal::encode(&d).unwrap());
    Inputs {
        a: dir.file("a.srl", &sereal::encode(&a).unwrap()),
        b: dir.file("b.srl", &sereal::encode(&b).unwrap()),
        stream: dir.file("stream.srl", &stream),
        dir,
        roots: vec![a, b, c, d],
    }
}

/// The merge of `args` written to a file: its bytes.
fn merged(i: &Inputs, out: &str, args: &[&str]) -> Vec<u8> {
    let out = i.dir.0.join(out);
    let out = out.to_str().unwrap();
    let files = [i.a.as_str(), &i.b, &i.stream];
    let (code, stdout, err) = run(&[&["merge"], args, &files, &["-o", out]].concat(), b"");
    assert_eq!(
        (code, stdout.as_slice(), err.as_str()),
        (0, &b""[..], ""),
        "{args:?}"
    );
    std::fs::read(out).unwrap()
}

/// The elements of the inputs' arrays, joined.
fn flat(roots: &[Value]) -> Value {
    Value::array(
        roots
            .iter()
            .flat_map(|r| r.as_array().unwrap().to_vec())
            .collect::<Vec<_>>(),
    )
}

#[test]
fn every_document_of_every_input_becomes_an_element() {
    let i = inputs("merge-plain");
    let doc = merged(&i, "all.srl", &[]);
    let back = sereal::decode(&doc).unwrap();
    assert_eq!(*back, Value::array(i.roots.clone()));
    // sharing within an input is kept, and the class
    let node = |p: &str| back.pointer(p).unwrap().node().unwrap();
    assert!(node("/1/0/team").ptr_eq(&node("/1/1/team")));
    let class = node("/1/2").class().unwrap();
    assert_eq!(class.to_string(), "My::User");
    // to standard output, the inputs from standard input
    let stdin = std::fs::read(&i.stream).unwrap();
    let (code, out, err) = run(&["merge", &i.a, "-"], &stdin);
    assert_eq!(code, 0, "{err}");
    let expected = Value::array(vec![
        i.roots[0].clone(),
        i.roots[2].clone(),
        i.roots[3].clone(),
    ]);
    assert_eq!(*sereal::decode(&out).unwrap(), expected);
    if perl_sereal("merge: Perl reads the merged document") {
        let out = i.dir.0.join("all.srl").to_str().unwrap().to_owned();
        let expected = Value::array(i.roots.clone());
        let read = perl_reads(&[out]);
        assert_eq!(read, [(Value::Undef, expected)]);
        // Perl read the shared hash once, and the object's class
        let node = |p: &str| read[0].1.pointer(p).unwrap().node().unwrap();
        assert!(node("/1/0/team").ptr_eq(&node("/1/1/team")));
        assert_eq!(node("/1/2").class().unwrap().to_string(), "My::User");
    }
}

#[test]
fn flat_joins_the_arrays() {
    let i = inputs("merge-flat");
    let doc = merged(&i, "flat.srl", &["--flat"]);
    let expected = flat(&i.roots);
    assert_eq!(
        sereal::decode(&doc).unwrap().as_array().unwrap().len(),
        3 + 3 + 1 + 2
    );
    assert_eq!(*sereal::decode(&doc).unwrap(), expected);
    if perl_sereal("merge --flat: Perl reads the merged document") {
        let out = i.dir.0.join("flat.srl").to_str().unwrap().to_owned();
        assert_eq!(perl_reads(&[out]), [(Value::Undef, expected)]);
    }
}

#[test]
fn compress_and_protocol() {
    // inputs large enough that each codec makes the body smaller
    let dir = TempDir::new("merge-compress");
    let rows = |from: i64| {
        Value::array(
            (from..from + 50)
                .map(|n| sereal!({"n": (n), "text": "the same words again"}))
                .collect::<Vec<_>>(),
        )
    };
    let zlib = EncoderOptions::new()
        .compress(Compression::Zlib)
        .compress_threshold(0);
    let a = dir.file("a.srl", &sereal::encode(&rows(0)).unwrap());
    let b = dir.file(
        "b.srl",
        &Encoder::new(zlib).unwrap().encode(&rows(50)).unwrap(),
    );
    let expected = flat(&[rows(0), rows(50)]);
    let mut files = Vec::new();
    for c in ["none", "snappy", "zlib", "zstd"] {
        let out = dir.0.join(format!("{c}.srl")).to_str().unwrap().to_owned();
        let args = [
            "merge",
            "--flat",
            "--compress",
            c,
            "--compress-threshold",
            "0",
            &a,
            &b,
            "-o",
            &out,
        ];
        let (code, _, err) = run(&args, b"");
        assert_eq!(code, 0, "{c}: {err}");
        let doc = std::fs::read(&out).unwrap();
        let h = Header::parse(&doc).unwrap();
        let want = match c {
            "none" => Compression::None,
            "snappy" => Compression::Snappy,
            "zlib" => Compression::Zlib,
            _ => Compression::Zstd,
        };
        assert_eq!((h.version, h.compression), (5, want), "{c}");
        assert_eq!(*sereal::decode(&doc).unwrap(), expected, "{c}");
        files.push(out);
    }
    // the default threshold (1024 bytes, as Perl's) leaves a small body raw
    let small = dir.file("small.srl", &sereal::encode(&sereal!([1])).unwrap());
    let (code, out, _) = run(&["merge", "--compress", "zstd", &small], b"");
    assert_eq!(code, 0);
    assert_eq!(Header::parse(&out).unwrap().compression, Compression::None);
    // an older protocol, at least each input's
    let v3 = EncoderOptions::new().protocol_version(3);
    let old = dir.file(
        "v3.srl",
        &sereal::encode_with(&sereal!([1, 2]), &v3).unwrap(),
    );
    let (code, out, err) = run(&["merge", "--protocol", "3", &old, &old], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(Header::parse(&out).unwrap().version, 3);
    assert_eq!(*sereal::decode(&out).unwrap(), sereal!([[1, 2], [1, 2]]));
    let (code, out, err) = run(&["merge", "--protocol", "3", &old, &a], b"");
    assert_eq!((code, out.as_slice()), (1, &b""[..]));
    assert_eq!(
        err,
        format!("{a}: error: invalid option: input 1 is a protocol 5 document, newer than the protocol 3 asked for\n")
    );
    if perl_sereal("merge --compress: Perl reads the merged documents") {
        for (file, read) in files.iter().zip(perl_reads(&files)) {
            assert_eq!(read, (Value::Undef, expected.clone()), "{file}");
        }
    }
}

#[test]
fn refusals_name_the_input_and_write_nothing() {
    let i = inputs("merge-refused");
    let out = i.dir.0.join("out.srl");
    let out = out.to_str().unwrap();
    // --flat and a root that is not an array: the second document of a file
    let mut stream = sereal::encode(&sereal!([1])).unwrap();
    let second = stream.len();
    stream.extend(sereal::encode(&sereal!({"not": "an array"})).unwrap());
    let s = i.dir.file("mixed.srl", &stream);
    let (code, _, err) = run(&["merge", "--flat", &i.a, &s, "-o", out], b"");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "{s}, document 2 at offset {second}: error (document 2): a flat merge joins arrays, \
             and input 2's root is not an array\n"
        )
    );
    assert!(!std::path::Path::new(out).exists());
    // a damaged input: nothing written
    let cut = i.dir.file("cut.srl", b"=\xF3rl\x05\x00\x28\x2b\x05\x01");
    let (code, _, err) = run(&["merge", &i.a, &cut, "-o", out], b"");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!("{cut}: error at offset 8: unexpected end of input\n")
    );
    assert!(!std::path::Path::new(out).exists());
    // the output is an input: refused before anything is read or written
    let before = std::fs::read(&i.a).unwrap();
    let (code, _, err) = run(&["merge", &i.a, &i.b, "-o", &i.a], b"");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "error: {} is also an input; write the merged document to another file\n",
            i.a
        )
    );
    assert_eq!(std::fs::read(&i.a).unwrap(), before);
    // options refused by themselves name no input
    let (code, _, err) = run(&["merge", "--protocol", "9", &i.a], b"");
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error: Sereal protocol version 9 "),
        "{err}"
    );
    // no binary output to a terminal is checked by from-json's tests; an
    // empty standard input is an input that fails
    let (code, _, err) = run(&["merge"], b"");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "-: error at offset 0: unexpected end of input (the input is empty)\n"
    );
}
