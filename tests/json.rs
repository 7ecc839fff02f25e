//! Lossless JSON over the whole Perl corpus: every document, decoded, written
//! as lossless JSON text, read back and encoded again with the case's
//! options, gives the same bytes.

use sereal::conformance::{encoder_options, frozen_handlers, read_cases, Case};
use sereal::json::{self, Document};
use sereal::{Compression, Decoder, Encoder, Header, Value};

mod common;
use common::{corpus, PROFILES};

/// The header (type bits cleared) and decompressed body of a document.
fn split(doc: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let h = Header::parse(doc).unwrap();
    let (body, _) = Decoder::default().body_bytes(doc, &h).unwrap();
    let mut head = doc[..h.len].to_vec();
    head[4] &= 0x0f;
    (head, body.into_owned())
}

fn same_document(a: &[u8], b: &[u8], compressed: bool) -> bool {
    if compressed {
        split(a) == split(b)
    } else {
        a == b
    }
}

/// A document the test frees when it goes, on every path: a graph read
/// from JSON is built like one built in Rust, and its cycles (the corpus
/// has many: `$h->{self} = $h`) are the caller's to free.
struct Freed(Document);

impl Drop for Freed {
    fn drop(&mut self) {
        self.0.body.dismantle();
        if let Some(h) = &self.0.header {
            h.dismantle();
        }
        self.0
            .keep_alive
            .iter()
            .for_each(|n| Value::from(n).dismantle());
    }
}

impl std::ops::Deref for Freed {
    type Target = Document;
    fn deref(&self) -> &Document {
        &self.0
    }
}

/// Document -> lossless JSON text -> Document; the JSON of the result must
/// be the JSON it was made from.
fn through_json(doc: &Document) -> Result<Freed, String> {
    let j = doc.to_json(true).map_err(|e| format!("to_json: {e}"))?;
    // each node written as it is made is the text of its JSON
    let (_, mut streamed) = doc.lossless_parts().map_err(|e| e.to_string())?;
    let (_, whole) = doc.lossless_parts().map_err(|e| e.to_string())?;
    for node in whole {
        let want = serde_json::to_vec(&node.map_err(|e| e.to_string())?).unwrap();
        let mut got = Vec::new();
        match streamed.write_next(&mut got) {
            Some(Ok(())) if got == want => {}
            other => {
                return Err(format!(
                    "a streamed node: {other:?} {} instead of {}",
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want)
                ))
            }
        }
    }
    if !streamed.is_finished() || streamed.write_next(&mut Vec::new()).is_some() {
        return Err("the streamed table goes on".into());
    }
    let text = serde_json::to_string(&j).map_err(|e| e.to_string())?;
    let parsed: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let back = Freed(Document::from_json(&parsed, true).map_err(|e| format!("from_json: {e}"))?);
    let again = back
        .to_json(true)
        .map_err(|e| format!("to_json again: {e}"))?;
    if again != j {
        return Err("the JSON of the rebuilt graph differs".into());
    }
    Ok(back)
}

/// Every check of one case; the first failure.
fn check(case: &Case) -> Result<(), String> {
    let opts = encoder_options(&case.options).map_err(|e| e.to_string())?;
    let compressed = opts.compress != Compression::None;
    let mut enc = Encoder::new(opts).map_err(|e| e.to_string())?;
    let mut dec = Decoder::default();
    frozen_handlers(&mut enc, &mut dec);
    let canon = case.canon.as_ref().ok_or("no canon")?;
    // canon, decoded as the conformance check does (THAW for Frozen)
    let doc = Freed(Document::decode(canon, &dec).map_err(|e| e.to_string())?);
    let back = through_json(&doc)?;
    let bytes = back.encode(&mut enc).map_err(|e| e.to_string())?;
    if !same_document(&bytes, canon, compressed) {
        return Err("canon: re-encoding differs from Perl's bytes".into());
    }
    // canon and srl as `sereal to-json --lossless` reads them: decoded with
    // no THAW handler (frozen objects stay frozen), through JSON, and
    // encoded with no FREEZE handler: Perl's bytes, the forms the graph
    // does not say (`json::Forms`) included. (Without them, Perl's `REFN
    // ARRAY` for a container something else held, a FREEZE's return value
    // say, would come back as `ARRAYREF_n`, and a `PAD` would be lost.)
    let mut plain_enc = Encoder::new(enc.options().clone()).map_err(|e| e.to_string())?;
    for (what, perl) in [("canon", Some(canon)), ("srl", case.srl.as_ref())] {
        let Some(perl) = perl else { continue };
        let raw = Freed(Document::decode(perl, &Decoder::default()).map_err(|e| e.to_string())?);
        let direct = raw.encode(&mut plain_enc).map_err(|e| e.to_string())?;
        if !same_document(&direct, perl, compressed) {
            return Err(format!(
                "{what} without THAW: re-encoding differs from Perl's bytes"
            ));
        }
        let bytes = through_json(&raw)?
            .encode(&mut plain_enc)
            .map_err(|e| e.to_string())?;
        if !same_document(&bytes, perl, compressed) {
            return Err(format!(
                "{what} without THAW: through JSON, the bytes differ from Perl's"
            ));
        }
    }
    // srl with THAW: the graph through JSON encodes as the graph itself does
    if let Some(srl) = &case.srl {
        let doc = Freed(Document::decode(srl, &dec).map_err(|e| e.to_string())?);
        let want = doc.encode(&mut enc).map_err(|e| e.to_string())?;
        let bytes = through_json(&doc)?
            .encode(&mut enc)
            .map_err(|e| e.to_string())?;
        if bytes != want {
            return Err("srl: the graph through JSON encodes differently".into());
        }
    }
    Ok(())
}

#[test]
fn lossless_round_trip_holds_for_every_corpus_document() {
    let mut held = 0;
    let mut failed = Vec::new();
    for p in PROFILES {
        let cases = read_cases(&corpus(p)).expect("corpus file readable");
        assert_eq!(cases.len(), 1408, "profile {p}");
        for c in &cases {
            match check(c) {
                Ok(()) => held += 1,
                Err(e) => failed.push(format!("case {} [{p}] {}: {e}", c.id, c.name)),
            }
        }
    }
    for f in failed.iter().take(20) {
        eprintln!("FAIL {f}");
    }
    println!(
        "lossless JSON round trip: {held} held, {} failed",
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "{} of {} failed",
        failed.len(),
        held + failed.len()
    );
    assert_eq!(held, 14 * 1408);
}

#[test]
fn plain_json_reads_every_corpus_document() {
    for p in ["v1", "v5", "v5_freeze"] {
        for c in read_cases(&corpus(p)).unwrap() {
            let doc = sereal::decode(c.canon.as_ref().unwrap()).unwrap();
            let j = json::to_json(&doc, false).unwrap();
            let text = serde_json::to_string(&j).unwrap();
            let v = json::from_json(&serde_json::from_str(&text).unwrap(), false).unwrap();
            // a plain tree always encodes, and reads back as the same JSON
            let bytes = sereal::encode(&v).unwrap();
            assert_eq!(
                json::to_json(&sereal::decode(&bytes).unwrap(), false).unwrap(),
                j,
                "case {} [{p}]",
                c.id
            );
            doc.dismantle();
        }
    }
}

#[test]
fn header_fields_and_user_header_survive() {
    let mut enc = Encoder::new(
        sereal::EncoderOptions::new()
            .protocol_version(3)
            .compress(Compression::Zlib)
            .compress_threshold(0),
    )
    .unwrap();
    let body = Value::array((0..50).map(|i| Value::from(format!("item {i}"))));
    let bytes = enc
        .encode_with_header(&body, &Value::hash([("v", 1)]))
        .unwrap();
    let doc = Document::decode(&bytes, &Decoder::default()).unwrap();
    let j = doc.to_json(true).unwrap();
    assert_eq!(j["protocol"], 3);
    assert_eq!(j["compression"], "zlib");
    assert!(j.get("header").is_some());
    let back = Document::from_json(&j, true).unwrap();
    assert_eq!(back.protocol, Some(3));
    assert_eq!(back.compression, Some(Compression::Zlib));
    assert_eq!(back.encode(&mut enc).unwrap(), bytes);
    // plain: the body alone
    assert_eq!(doc.to_json(false).unwrap()[49], "item 49");
}

/// Plain JSON nests at most `PLAIN_MAX_DEPTH` arrays and objects: a deeper
/// graph (decoded with the depth limit lifted) is an error naming lossless
/// JSON, on a thread whose small stack could not drop the tree it would
/// make; lossless JSON of it is flat and converts. Scalar references do
/// not nest JSON and do not count. What plain JSON holds, serde_json reads
/// back from its text, and the thread prints, reads and drops, objects and
/// arrays alike, in any build.
#[test]
fn plain_json_nests_at_most_plain_max_depth() {
    use sereal::json::{to_json, PLAIN_MAX_DEPTH};
    // ARRAYREF_1 nested `n` deep around a 1, behind a chain of `refs` REFNs.
    let arrays = |n: usize, refs: usize| {
        let mut d = b"=\xf3rl\x05\x00".to_vec();
        d.resize(d.len() + refs, 0x28); // REFN
        d.resize(d.len() + n, 0x41);
        d.push(0x01);
        d
    };
    // HASHREF_1 "k" and ARRAYREF_1 in turn, `n` deep around a 1.
    let mixed = |n: usize| {
        let mut d = b"=\xf3rl\x05\x00".to_vec();
        for i in 0..n {
            d.extend_from_slice(if i % 2 == 0 { b"\x51\x61k" } else { b"\x41" });
        }
        d.push(0x01);
        d
    };
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let opts = sereal::DecoderOptions::new().max_recursion_depth(usize::MAX);
            let dec = sereal::Decoder::new(opts);
            let at_limit = dec.decode(&arrays(PLAIN_MAX_DEPTH, 5000)).unwrap();
            let over = dec.decode(&arrays(PLAIN_MAX_DEPTH + 1, 0)).unwrap();
            let deep = dec.decode(&arrays(100_000, 0)).unwrap();
            let j = to_json(&at_limit, false).unwrap();
            let mut depth = 0;
            let mut cur = &j;
            while let serde_json::Value::Array(a) = cur {
                depth += 1;
                cur = &a[0];
            }
            assert_eq!((depth, cur), (PLAIN_MAX_DEPTH, &serde_json::json!(1)));
            drop(j);
            let j = to_json(&dec.decode(&mixed(PLAIN_MAX_DEPTH)).unwrap(), false).unwrap();
            let text = j.to_string();
            assert!(format!("{j:?}").len() > text.len());
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, j);
            drop((j, back));
            let over_mixed = dec.decode(&mixed(PLAIN_MAX_DEPTH + 1)).unwrap();
            assert!(to_json(&over_mixed, false).is_err());
            for v in [&over, &deep] {
                let e = to_json(v, false).unwrap_err();
                assert!(
                    matches!(e.kind(), sereal::ErrorKind::LimitExceeded(_)),
                    "{e}"
                );
                assert!(e.to_string().contains("use lossless JSON"), "{e}");
            }
            let lossless = to_json(&deep, true).unwrap();
            assert_eq!(lossless["nodes"].as_array().unwrap().len(), 100_000);
            drop(lossless);
            deep.dismantle();
        })
        .unwrap()
        .join()
        .unwrap();
}
