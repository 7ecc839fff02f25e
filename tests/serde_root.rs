//! A one-shot `from_slice` answers a document that is one plain `UNDEF`
//! read as an `Option`, or one plain `DOUBLE` read as a float, without
//! building its deserializer. Every other call builds it. Both routes must
//! give the same values and the same errors (kind, message and position)
//! as a deserializer the caller builds, for those documents and for their
//! near misses: other scalars, cut bodies, trailing bytes, other headers.

use serde::de::{self, Deserialize, DeserializeOwned, Visitor};
use sereal::{from_slice, from_slice_with, DecoderOptions, Deserializer, Position};
use std::fmt::{self, Debug};

/// The answer as text: the value's `Debug`, or the error's kind and
/// position. `from_slice` places an error that carries no position at the
/// body's first byte, `base`.
fn answer<T: Debug>(r: sereal::Result<T>, base: usize) -> String {
    match r {
        Ok(v) => format!("ok {v:?}"),
        Err(e) => {
            let at = e.position().unwrap_or(Position::Document(base));
            format!("err {:?} {at:?}", e.kind())
        }
    }
}

/// `T` read by a deserializer the caller builds (no root fast path).
fn general<T: DeserializeOwned + Debug>(doc: &[u8], base: usize) -> String {
    answer(
        (|| {
            let mut de = Deserializer::from_slice_with(doc, DecoderOptions::default());
            let v = T::deserialize(&mut de)?;
            de.end()?;
            Ok(v)
        })(),
        base,
    )
}

/// Checks `T` through `from_slice` and `from_slice_with` against
/// [`general`]; `base` is where the document's body starts.
fn check<T: DeserializeOwned + Debug>(doc: &[u8], base: usize, what: &str) {
    let want = general::<T>(doc, base);
    // A position the one-shot read gives must be the one expected; its
    // absence would show as the base, so none is accepted.
    let got = |r: sereal::Result<T>| {
        if let Err(e) = &r {
            assert!(
                e.position().is_some(),
                "{what}: {e} has no position, {doc:02x?}"
            );
        }
        answer(r, base)
    };
    assert_eq!(
        got(from_slice::<T>(doc)),
        want,
        "from_slice, {what}, {doc:02x?}"
    );
    let opts = DecoderOptions::default();
    assert_eq!(
        got(from_slice_with::<T>(doc, opts)),
        want,
        "from_slice_with, {what}, {doc:02x?}"
    );
}

/// A type whose visitor refuses `None`: the error must be placed as the
/// deserializer places a visitor's error.
#[derive(Debug)]
struct NoNone;

impl<'de> Deserialize<'de> for NoNone {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NoNone;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("something other than none")
            }
            fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<NoNone, D::Error> {
                d.deserialize_ignored_any(de::IgnoredAny).map(|_| NoNone)
            }
        }
        d.deserialize_option(V)
    }
}

/// A float that refuses negative values in its visitor.
#[derive(Debug)]
struct Positive(#[allow(dead_code)] f64);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let x = f64::deserialize(d)?;
        if x < 0.0 {
            return Err(de::Error::custom("negative"));
        }
        Ok(Positive(x))
    }
}

#[derive(Debug, serde::Deserialize)]
struct Wrapped(#[allow(dead_code)] Option<f64>);

fn each_type(doc: &[u8], base: usize, what: &str) {
    check::<Option<()>>(doc, base, what);
    check::<Option<u8>>(doc, base, what);
    check::<Option<f64>>(doc, base, what);
    check::<Option<String>>(doc, base, what);
    check::<f64>(doc, base, what);
    check::<f32>(doc, base, what);
    check::<()>(doc, base, what);
    check::<u8>(doc, base, what);
    check::<String>(doc, base, what);
    check::<Wrapped>(doc, base, what);
    check::<NoNone>(doc, base, what);
    check::<Positive>(doc, base, what);
    check::<serde_json::Value>(doc, base, what);
    check::<sereal::Value>(doc, base, what);
    check::<de::IgnoredAny>(doc, base, what);
}

const HEAD: &[u8] = b"=\xF3rl\x05\x00";

fn doc(body: &[u8]) -> Vec<u8> {
    [HEAD, body].concat()
}

#[test]
fn scalar_documents_read_alike_by_every_route() {
    let mut bodies: Vec<(Vec<u8>, &str)> = vec![
        (vec![0x25], "UNDEF"),
        (vec![0x39], "CANONICAL_UNDEF"),
        (vec![0x25, 0x25], "UNDEF and a trailing byte"),
        (vec![0x39, 0x00], "CANONICAL_UNDEF and a trailing byte"),
        (vec![0x3a], "TRUE"),
        (vec![0x01], "POS_1"),
        (vec![0x20, 0x80, 0x01], "VARINT"),
        (vec![0x61, b'x'], "SHORT_BINARY_1"),
        (vec![0x28, 0x25], "REFN UNDEF"),
        (vec![0x37], "a reserved tag"),
        (vec![], "an empty body"),
    ];
    for x in [1.5f64, -2.25, 0.0, -0.0, f64::INFINITY, f64::NAN, 1e300] {
        let mut b = vec![0x23];
        b.extend_from_slice(&x.to_le_bytes());
        bodies.push((b.clone(), "DOUBLE"));
        for cut in 1..b.len() {
            bodies.push((b[..cut].to_vec(), "a cut DOUBLE"));
        }
        b.push(0x25);
        bodies.push((b, "DOUBLE and a trailing byte"));
    }
    let mut f = vec![0x22];
    f.extend_from_slice(&(-3.5f32).to_le_bytes());
    bodies.push((f, "FLOAT"));
    for (body, what) in &bodies {
        each_type(&doc(body), 6, what);
        // Protocol 3 and 4 headers take the same route; a header with a
        // suffix, or compressed, does not.
        for version in [3u8, 4] {
            let mut d = doc(body);
            d[4] = version;
            each_type(&d, 6, what);
        }
        let mut d = b"=\xF3rl\x05\x01\x00".to_vec();
        d.extend_from_slice(body);
        each_type(&d, 7, what);
    }
    // Cut headers and a header alone.
    for cut in 0..=HEAD.len() {
        each_type(&HEAD[..cut], 0, "a cut header");
    }
}

#[test]
fn the_root_fast_path_keeps_the_documents_size_limit() {
    let d = doc(&[0x25]);
    let opts = DecoderOptions::default().max_document_size(4);
    let e = from_slice_with::<Option<()>>(&d, opts).unwrap_err();
    assert!(
        matches!(e.kind(), sereal::ErrorKind::LimitExceeded(_)),
        "{e:?}"
    );
    assert_eq!(
        from_slice_with::<Option<()>>(&d, DecoderOptions::default()).unwrap(),
        None
    );
    assert_eq!(
        from_slice::<f64>(&doc(&[0x23, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f])).unwrap(),
        1.5
    );
    // The visitor's error on the root is at the body's first byte.
    let e = from_slice::<NoNone>(&d).unwrap_err();
    assert_eq!(e.offset(), Some(6), "{e}");
    let e = from_slice::<Positive>(&doc(&[0x23, 0, 0, 0, 0, 0, 0, 0xf8, 0xbf])).unwrap_err();
    assert_eq!(e.offset(), Some(6), "{e}");
}
