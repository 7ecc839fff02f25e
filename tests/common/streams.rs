//! Streams for the stream tests: a reader that hands out bytes in pieces,
//! and documents of every shape this crate writes.

use sereal::{Compression, Encoder, EncoderOptions, Ref, Value};
use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

/// A reader that returns at most `max` bytes per call, and counts what it
/// was asked for and what it delivered.
pub struct Chunked<'a> {
    pub data: &'a [u8],
    pub max: usize,
    pub asked: Rc<Cell<usize>>,
    pub delivered: Rc<Cell<usize>>,
}

impl<'a> Chunked<'a> {
    pub fn new(data: &'a [u8], max: usize) -> Self {
        Chunked {
            data,
            max,
            asked: Rc::new(Cell::new(0)),
            delivered: Rc::new(Cell::new(0)),
        }
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = out.len().min(self.max).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        self.asked.set(self.asked.get() + out.len());
        self.delivered.set(self.delivered.get() + n);
        Ok(n)
    }
}

/// Documents of every shape this crate writes, with every compression.
pub fn shaped_documents() -> Vec<Vec<u8>> {
    let shared = Ref::array(vec![Value::from(1), Value::from(2)]);
    let cyclic = Ref::hash(Default::default());
    {
        let mut h = cyclic.hash_mut().unwrap();
        h.insert("weak", Value::Weak(cyclic.downgrade()));
        h.insert("strong", Value::Ref(cyclic.clone()));
    }
    let long = "x".repeat(100_000);
    let record = |i: i64| {
        Value::hash([
            ("id", Value::from(i)),
            ("name", Value::from(format!("name {i}"))),
            ("email", Value::utf8(format!("user{i}@example.com ✓"))),
            ("tags", Value::array(["a", "bb", "ccc"])),
            ("score", Value::Double(i as f64 / 3.0)),
            ("neg", Value::from(-1000 * i)),
        ])
    };
    let values = vec![
        Value::Undef,
        Value::from(0),
        Value::from(-5),
        Value::from(1u64 << 60),
        Value::from(i64::MIN),
        Value::Float(1.5),
        Value::Double(-2.25),
        Value::Bool(true),
        Value::True,
        Value::False,
        Value::CanonicalUndef,
        Value::from(""),
        Value::from("short"),
        Value::from(long.as_str()),
        Value::utf8("ünïcödé"),
        Value::bytes(vec![0xffu8; 40]),
        Value::array(Vec::<Value>::new()),
        Value::hash(Vec::<(&str, Value)>::new()),
        Value::array((0..40).map(Value::from).collect::<Vec<_>>()),
        Value::array([Value::array([Value::array([Value::array([1])])])]),
        Value::hash(
            (0..20)
                .map(|i| (format!("k{i}"), Value::from(i)))
                .collect::<Vec<_>>(),
        ),
        Value::array([Value::Ref(shared.clone()), Value::Ref(shared.clone())]),
        Value::Ref(cyclic.clone()),
        Value::scalar_ref(Value::scalar_ref(7)),
        Value::Ref(Ref::regexp("^a.*b$", "i")),
        Value::Ref(Ref::hash([("x", 1)].into_iter().collect()).blessed("My::Class")),
        Value::array([
            Value::Ref(Ref::array(vec![Value::from(1)]).blessed("Same")),
            Value::Ref(Ref::array(vec![Value::from(2)]).blessed("Same")),
        ]),
        Value::array((0..200).map(record).collect::<Vec<_>>()),
    ];
    let mut docs = Vec::new();
    for v in &values {
        for opts in [
            EncoderOptions::new(),
            EncoderOptions::new().protocol_version(1),
            EncoderOptions::new().protocol_version(3),
            EncoderOptions::new().dedupe_strings(true),
            EncoderOptions::new().aliased_dedupe_strings(true),
            EncoderOptions::new()
                .compress(Compression::Snappy)
                .compress_threshold(0),
            EncoderOptions::new()
                .compress(Compression::Zlib)
                .compress_threshold(0),
            EncoderOptions::new()
                .compress(Compression::Zstd)
                .compress_threshold(0),
        ] {
            let mut enc = Encoder::new(opts).unwrap();
            docs.push(enc.encode(v).unwrap());
            if enc.options().protocol_version >= 2 {
                docs.push(enc.encode_with_header(v, &record(1)).unwrap());
            }
        }
    }
    // Compressed documents are among them, not only raw ones written
    // because compression did not pay.
    let compressed = docs.iter().filter(|d| d[4] >> 4 != 0).count();
    assert!(compressed > 20, "{compressed} compressed documents");
    cyclic.hash_mut().unwrap().clear();
    docs
}
