//! serde support: round trips of Rust types, reading what Perl writes, and
//! Perl itself as the oracle (skipped with a notice when Perl's Sereal is
//! not installed).

use serde::{Deserialize, Serialize};
use sereal::ser::SerializerOptions;
use sereal::{decode, from_slice, to_vec, to_vec_with, Compression, ErrorKind, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Address {
    city: String,
    zip: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Role {
    Admin,
    Guest(u32),
    Custom { name: String, level: i8 },
    Pair(i64, i64),
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Record {
    id: u64,
    name: String,
    email: Option<String>,
    score: f64,
    active: bool,
    tags: Vec<String>,
    address: Address,
    role: Role,
    bytes: serde_bytes_like::Bytes,
}

/// `Vec<u8>` serialized as bytes (a binary string), without a dependency.
mod serde_bytes_like {
    #[derive(Debug, PartialEq, Clone)]
    pub struct Bytes(pub Vec<u8>);
    impl serde::Serialize for Bytes {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(&self.0)
        }
    }
    impl<'de> serde::Deserialize<'de> for Bytes {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
            struct V;
            impl serde::de::Visitor<'_> for V {
                type Value = Bytes;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E>(self, v: &[u8]) -> Result<Bytes, E> {
                    Ok(Bytes(v.to_vec()))
                }
                fn visit_str<E>(self, v: &str) -> Result<Bytes, E> {
                    Ok(Bytes(v.as_bytes().to_vec()))
                }
            }
            d.deserialize_bytes(V)
        }
    }
}

fn record(i: u64) -> Record {
    Record {
        id: i,
        name: format!("user{i}"),
        email: (!i.is_multiple_of(3)).then(|| format!("user{i}@example.com")),
        score: i as f64 * 1.5 + 0.1,
        active: i % 2 == 1,
        tags: vec![format!("t{}", i % 7), "é".into()],
        address: Address {
            city: format!("city{}", i % 100),
            zip: format!("{:05}", i),
        },
        role: match i % 4 {
            0 => Role::Admin,
            1 => Role::Guest(i as u32),
            2 => Role::Custom {
                name: "ops".into(),
                level: -3,
            },
            _ => Role::Pair(i as i64, -(i as i64)),
        },
        bytes: serde_bytes_like::Bytes(vec![0, 255, i as u8]),
    }
}

#[test]
fn rust_types_round_trip() {
    let records: Vec<Record> = (0..50).map(record).collect();
    for opts in [
        SerializerOptions::new(),
        SerializerOptions::new().protocol_version(1),
        SerializerOptions::new().protocol_version(3).sort_keys(true),
        SerializerOptions::new().dedupe_strings(true),
        SerializerOptions::new()
            .compress(Compression::Zstd)
            .compress_threshold(0),
    ] {
        let bytes = to_vec_with(&records, &opts).unwrap();
        let back: Vec<Record> = from_slice(&bytes).unwrap_or_else(|e| panic!("{opts:?}: {e}"));
        assert_eq!(back, records, "{opts:?}");
    }
    let map: BTreeMap<String, Vec<Option<i32>>> =
        [("a".into(), vec![Some(1), None]), ("ключ".into(), vec![])].into();
    assert_eq!(
        from_slice::<BTreeMap<String, Vec<Option<i32>>>>(&to_vec(&map).unwrap()).unwrap(),
        map
    );
    let tuple = (1u8, -2i16, 3.25f32, 'x', "s".to_string(), ());
    assert_eq!(
        from_slice::<(u8, i16, f32, char, String, ())>(&to_vec(&tuple).unwrap()).unwrap(),
        tuple
    );
}

#[test]
fn shapes_are_what_perl_expects() {
    // structs are hashes with their field names, repeated keys COPY'd
    let v = decode(&to_vec(&vec![record(1), record(2)]).unwrap()).unwrap();
    let first = v.at(0).unwrap();
    // ASCII strings as Perl writes its own: no UTF-8 flag
    assert_eq!(first.get("name"), Some(Value::from("user1")));
    assert_eq!(
        first.get("address").unwrap().get("zip"),
        Some(Value::from("00001"))
    );
    assert_eq!(first.get("role"), Some(Value::hash([("Guest", 1)])));
    assert_eq!(
        v.at(1).unwrap().get("role"),
        Some(Value::from("Custom")).and(v.at(1).unwrap().get("role"))
    );
    assert_eq!(
        decode(&to_vec(&Role::Admin).unwrap()).unwrap(),
        Value::from("Admin")
    );
    assert_eq!(decode(&to_vec(&None::<u8>).unwrap()).unwrap(), Value::Undef);
    assert_eq!(
        decode(&to_vec(&Role::Pair(1, 2)).unwrap()).unwrap(),
        Value::hash([("Pair", Value::array([1, 2]))])
    );
    // the second record's keys are COPYs of the first's
    let bytes = to_vec(&vec![
        Address {
            city: "a".into(),
            zip: "b".into()
        };
        2
    ])
    .unwrap();
    assert_eq!(
        &bytes[6..],
        b"\x42\x52\x64city\x61a\x63zip\x61b\x52\x2f\x03\x61a\x2f\x0a\x61b"
    );
}

#[test]
fn reads_what_perl_writes() {
    #[derive(Deserialize, Debug, PartialEq)]
    struct Flags {
        a: bool,
        b: bool,
        c: bool,
        d: bool,
        e: bool,
        n: i32,
        f: f64,
        u: u8,
    }
    // Perl's 0/1, ""/"1" booleans, an integral double for an integer, an
    // integer for a float, TRUE and NO tags.
    let v = Value::hash([
        ("a", Value::from(1)),
        ("b", Value::from(0)),
        ("c", Value::bytes("")),
        ("d", Value::True),
        ("e", Value::Bool(false)),
        ("n", Value::Double(41.0)),
        ("f", Value::from(3)),
        ("u", Value::from(1)),
    ]);
    let bytes = sereal::encode(&v).unwrap();
    let flags: Flags = from_slice(&bytes).unwrap();
    assert_eq!(
        flags,
        Flags {
            a: true,
            b: false,
            c: false,
            d: true,
            e: false,
            n: 41,
            f: 3.0,
            u: 1
        }
    );
    // out of range: a clear error
    let err = from_slice::<u8>(&sereal::encode(&Value::from(300)).unwrap()).unwrap_err();
    assert!(err.to_string().contains("300"), "{err}");
    // shared references and objects are read through
    let shared = sereal::Ref::array(vec![Value::from(1), Value::from(2)]);
    let doc = sereal::encode(&Value::array([
        Value::from(&shared),
        Value::from(shared.clone().blessed("Pt")),
    ]))
    .unwrap();
    drop(shared);
    assert_eq!(from_slice::<Vec<Vec<u8>>>(&doc).unwrap(), [[1, 2], [1, 2]]);
    // strings borrow from an uncompressed input
    let doc = to_vec(&vec!["borrowed", "text"]).unwrap();
    let words: Vec<&str> = from_slice(&doc).unwrap();
    assert_eq!(words, ["borrowed", "text"]);
    // a cyclic document is an error naming the cycle, not a hang
    let cyc = sereal::Ref::array(vec![]);
    cyc.array_mut().unwrap().push(Value::from(&cyc));
    let doc = sereal::encode(&Value::from(&cyc)).unwrap();
    Value::from(cyc).dismantle();
    let e = from_slice::<serde_json::Value>(&doc).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Invalid(m) if m.contains("strong cycle")),
        "{e}"
    );
    assert!(e.offset().is_some(), "{e}");
}

#[test]
fn value_converts_through_serde() {
    let v = Value::hash([(
        "x",
        Value::array([Value::from(1), Value::Undef, Value::utf8("ü")]),
    )]);
    let json = serde_json::to_string(&v).unwrap();
    assert_eq!(json, r#"{"x":[1,null,"ü"]}"#);
    let back: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(back, v);
    let via_sereal: Value = from_slice(&to_vec(&v).unwrap()).unwrap();
    assert_eq!(via_sereal, v);
}

fn perl_available() -> bool {
    let ok = Command::new("perl")
        .args(["-MSereal::Encoder", "-MSereal::Decoder", "-e", "1"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP serde Perl oracle: Perl's Sereal is not installed (apt-get install -y libsereal-perl)");
    }
    ok
}

fn perl(script: &str, input: &[u8]) -> Vec<u8> {
    let mut child = Command::new("perl")
        .args(["-MSereal::Encoder", "-MSereal::Decoder", "-e", script])
        .env("PERL_HASH_SEED", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "perl failed");
    out.stdout
}

#[test]
fn perl_reads_rust_structs_and_writes_them_back() {
    if !perl_available() {
        return;
    }
    let records: Vec<Record> = (0..200).map(record).collect();
    // Perl decodes our serde output and re-encodes it canonically; our own
    // decoding of our output, encoded canonically, must give the same bytes.
    let ours = to_vec(&records).unwrap();
    let script =
        "local $/; binmode STDIN; binmode STDOUT; my $d = Sereal::Decoder->new->decode(<STDIN>); \
                  print Sereal::Encoder->new({canonical => 1})->encode($d);";
    let perls = perl(script, &ours);
    let canon = sereal::Encoder::new(sereal::EncoderOptions::new().canonical(true))
        .unwrap()
        .encode(&decode(&ours).unwrap())
        .unwrap();
    assert_eq!(perls, canon, "Perl's reading of our structs differs");
    // Perl's encoding of the same data deserializes into the Rust structs.
    let back: Vec<Record> = from_slice(&perls).unwrap();
    assert_eq!(back, records);
    // and Perl's own idioms: 1/0 booleans, numbers, nested hashes
    let script = r#"binmode STDOUT; print Sereal::Encoder->new->encode({id => 7, name => "p", email => undef,
        score => 2.5, active => 1, tags => ["x"], address => {city => "c", zip => "01234"},
        role => {Custom => {name => "n", level => -1}}, bytes => "\x00\xff"})"#;
    let doc = perl(script, b"");
    let r: Record = from_slice(&doc).unwrap();
    assert_eq!(
        (r.id, r.active, r.email, r.role),
        (
            7,
            true,
            None,
            Role::Custom {
                name: "n".into(),
                level: -1
            }
        )
    );
    assert_eq!(r.bytes.0, [0, 255]);
}

/// A binary format: types with a compact form use it, both ways.
#[test]
fn serializer_and_deserializer_are_not_human_readable() {
    use serde::{Deserializer as _, Serializer as _};
    let mut out = Vec::new();
    let mut ser = sereal::Serializer::new(&mut out, Default::default()).unwrap();
    let ser = &mut ser;
    assert!(!ser.is_human_readable());
    let doc = sereal::to_vec(&1).unwrap();
    let mut de = sereal::Deserializer::from_slice_with(&doc, Default::default());
    let de = &mut de;
    assert!(!de.is_human_readable());

    let ip: std::net::IpAddr = "10.0.0.1".parse().unwrap();
    let bytes = sereal::to_vec(&ip).unwrap();
    // not the text "10.0.0.1": the V4 variant and its four octets
    assert!(!bytes.windows(8).any(|w| w == b"10.0.0.1"), "{bytes:x?}");
    assert_eq!(sereal::from_slice::<std::net::IpAddr>(&bytes).unwrap(), ip);
}

/// Sereal has one undef: `None` and `Some(None)` of a nested option both
/// write it and both read back as `None`, as serde_json's `null` does; a
/// present value keeps both layers.
#[test]
fn a_nested_option_has_one_undef() {
    let undef = to_vec(&None::<Option<u8>>).unwrap();
    assert_eq!(to_vec(&Some(None::<u8>)).unwrap(), undef);
    assert_eq!(from_slice::<Option<Option<u8>>>(&undef).unwrap(), None);
    let three = to_vec(&Some(Some(3u8))).unwrap();
    assert_eq!(
        from_slice::<Option<Option<u8>>>(&three).unwrap(),
        Some(Some(3))
    );
    let json = serde_json::to_string(&Some(None::<u8>)).unwrap();
    assert_eq!(
        serde_json::from_str::<Option<Option<u8>>>(&json).unwrap(),
        None
    );
}

/// `from_reader_with` reads no more than one byte past `max_document_size`:
/// an endless reader is refused at the limit, not read into memory; a
/// document within the limit reads as `from_slice` reads it.
#[test]
fn from_reader_with_stops_at_the_document_size_limit() {
    use sereal::{from_reader_with, DecoderOptions};
    let opts = DecoderOptions::new().max_document_size(1 << 20);
    let endless = std::io::Read::chain(&b"=\xf3rl\x05\x00"[..], std::io::repeat(0x3f)); // PADs
    let e = from_reader_with::<_, Value>(endless, opts.clone()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)), "{e}");
    assert_eq!(e.offset(), Some(1 << 20), "{e}");
    let doc = to_vec(&vec!["x"; 1000]).unwrap();
    let exact = DecoderOptions::new().max_document_size(doc.len());
    let back: Vec<String> = from_reader_with(&doc[..], exact).unwrap();
    assert_eq!(back.len(), 1000);
    let short = DecoderOptions::new().max_document_size(doc.len() - 1);
    let e = from_reader_with::<_, Vec<String>>(&doc[..], short).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LimitExceeded(_)), "{e}");
    // Under the defaults, max_memory bounds the read: an endless reader
    // is refused at it, not read to the end of memory.
    let endless = std::io::Read::chain(&b"=\xf3rl\x05\x00"[..], std::io::repeat(0x3f));
    let e = sereal::from_reader::<_, Value>(endless).unwrap_err();
    assert!(e.to_string().contains("max_memory"), "{e}");
    assert_eq!(e.offset(), Some(256 << 20), "{e}");
    // The bytes read count against it: a document that fits alone but
    // not with its values is refused.
    let n = 10_000;
    let doc = to_vec(&vec![0u8; n]).unwrap();
    let tight = DecoderOptions::new().max_memory(doc.len() + n * 24);
    let e = from_reader_with::<_, Vec<u8>>(&doc[..], tight).unwrap_err();
    assert!(e.to_string().contains("max_memory"), "{e}");
    let roomy = DecoderOptions::new().max_memory(doc.len() + n * 24 + 200);
    assert_eq!(
        from_reader_with::<_, Vec<u8>>(&doc[..], roomy)
            .unwrap()
            .len(),
        n
    );
}
