//! Serde deserialization of arbitrary bytes: into `sereal::Value`, a typed
//! struct (borrowed `&str`, options, sequences, maps, enums) and
//! `serde_json::Value`. Must return Ok or Err, never panic. A
//! `serde_json::Value` read is written back with `to_vec` and must read
//! back equal.
//!
//! Checked agreement: when both the serde path and `sereal::decode` accept a
//! document that holds no weak reference, they carry the same data (compared
//! as JSON of their `Serialize` views). Not compared otherwise: the serde
//! path reads a weak reference back into what it is reading as undef (a
//! decoded weak reference to a node nothing else holds is gone), and it
//! flattens sharing and drops classes, which the `Serialize` view drops too.
//! And `from_slice`, which answers some one-scalar documents from their
//! root, reads `Option`s and floats as a deserializer the caller builds
//! does: the same value, or the same error at the same position (or, from
//! the stream deserializer, a defect of the document further on).
#![no_main]

#[path = "graph.rs"]
mod graph;

use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use sereal::{DecoderOptions, Value};
use std::collections::{BTreeMap, HashMap};

#[allow(dead_code)] // the fields are only read by `Debug`
#[derive(Deserialize, Debug)]
struct Record<'a> {
    id: u32,
    name: &'a str,
    tags: Vec<String>,
    score: Option<f64>,
    #[serde(borrow)]
    child: Option<Box<Record<'a>>>,
    attrs: BTreeMap<String, Vec<Option<i64>>>,
    by_id: HashMap<u32, Kind>,
    kind: Kind,
    flag: bool,
}

#[allow(dead_code)]
#[derive(Deserialize, Debug)]
enum Kind {
    Unit,
    Newtype(i32),
    Tuple(u8, String),
    Struct { a: Option<u16>, b: Vec<bool> },
}

/// Whether the graph reaches what the two paths read differently by design:
/// a weak reference, or a long double (serde has no such type: the serde
/// path reads its 16 bytes as a byte string, which serializes as text where
/// it can).
fn not_comparable(v: &Value) -> bool {
    let mut found = false;
    graph::reach(v, false, |s| {
        found |= matches!(s, Value::Weak(_) | Value::LongDouble(_) | Value::Float128(_));
    });
    found
}

/// `from_slice::<T>` against a deserializer built by the caller, which has
/// no root read (and leaves a visitor's error on the root unplaced, where
/// `from_slice` places it at the body's start: positions are compared when
/// both have one).
fn root_agrees<T: serde::de::DeserializeOwned + std::fmt::Debug>(data: &[u8]) {
    let one_shot = sereal::from_slice::<T>(data);
    let general = (|| {
        let mut de = sereal::Deserializer::from_slice_with(data, DecoderOptions::new());
        let v = T::deserialize(&mut de)?;
        de.end()?;
        Ok::<_, sereal::Error>(v)
    })();
    match (&one_shot, &general) {
        (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
        // The built deserializer is a stream's, which must find where a
        // document ends before it can take the next: it may report a
        // defect (malformed, cut short, over a limit) that `from_slice`,
        // reading only as far as its type needs and holding all the bytes,
        // meets after a type error, or as `Truncated` (a count claiming more
        // bytes than there are), or by another of its limits. Never a type
        // error where `from_slice` found the document itself at fault.
        (Err(a), Err(b)) if a.kind() != b.kind() => {
            assert!(!b.is_data(), "from_slice {a:?}, a built deserializer {b:?}");
        }
        (Err(a), Err(b)) => {
            assert!(a.position().is_some(), "{a}");
            // A defect of the document may be placed by the stream's
            // scanner, which reads items whole, rather than its decoder.
            if b.position().is_some() && b.is_data() {
                assert_eq!(a.position(), b.position());
            }
        }
        _ => panic!("from_slice {one_shot:?}, a built deserializer {general:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    root_agrees::<Option<()>>(data);
    root_agrees::<Option<f64>>(data);
    root_agrees::<f64>(data);
    root_agrees::<f32>(data);
    let opts = DecoderOptions::new().max_uncompressed_size(16 << 20);
    // `sereal::Value` drops without recursion: the default depth limit.
    let _ = sereal::from_slice_with::<Value>(data, opts.clone());
    // Typed values and `serde_json::Value` drop recursively: a lower limit
    // keeps the harness's own drops off the end of the stack.
    let shallow = opts.clone().max_recursion_depth(1000);
    let _ = sereal::from_slice_with::<Record>(data, shallow.clone());
    let _ = sereal::from_slice_with::<Vec<Kind>>(data, shallow.clone());
    if let Ok(json) = sereal::from_slice_with::<serde_json::Value>(data, shallow.clone()) {
        // What serde reads, it writes back and reads again unchanged (text
        // as byte strings or UTF-8, numbers, booleans, nesting).
        let bytes = sereal::to_vec(&json).expect("a serde_json::Value serializes");
        let again = sereal::from_slice_with::<serde_json::Value>(&bytes, shallow);
        assert_eq!(again.as_ref().ok(), Some(&json), "written back: {again:?}");
    }

    let shallow = opts.max_recursion_depth(128);
    let via_serde = sereal::from_slice_with::<Value>(data, shallow.clone());
    // Decoded graphs may hold strong cycles: dismantled below.
    let Ok(decoded) = sereal::Decoder::new(shallow).decode(data) else { return };
    // A strong cycle fails the serde path, so `decoded` is acyclic here.
    if let (Ok(via_serde), false) = (&via_serde, not_comparable(&decoded)) {
        let a = serde_json::to_value(via_serde).map_err(|e| e.to_string());
        let b = serde_json::to_value(&*decoded).map_err(|e| e.to_string());
        assert_eq!(a, b, "serde path and decode disagree");
    }
    decoded.dismantle();
});
