//! The view against the decoder: every item a view reaches decodes to the
//! value the decoder's graph has there, scalars read in place agree, paths
//! select what a walk of the graph selects, merge and split give back the
//! data, and hostile input gives errors, never panics.

mod common;

use common::{shaped_documents, Rng};
use sereal::view::{merge, Kind, MergeOptions, Splitter, View};
use sereal::{decode, encode, sereal, Body, Compression, Decoder, DecoderOptions, Value};
use std::collections::HashSet;

/// Element `i` of the array (or value of entry `i` of the hash) `v` is or
/// refers to, as the view's steps read it; with the number of elements.
fn child(v: &Value, i: usize) -> Option<(Value, usize)> {
    let mut v = v.clone();
    while let Value::Alias(cell) = &v {
        let inner = match &*cell.try_body().ok()? {
            Body::Scalar(inner) => inner.clone(),
            _ => break,
        };
        v = inner;
    }
    let node = v.node()?;
    let body = node.try_body().ok()?;
    match &*body {
        Body::Array(a) => a.get(i).cloned().map(|c| (c, a.len())),
        Body::Hash(h) => h.entries().get(i).map(|(_, c)| (c.clone(), h.len())),
        _ => None,
    }
}

/// A class name's characters, as Perl reads them: a byte string's bytes
/// are Latin-1 characters.
fn class_chars(class: &sereal::Key) -> String {
    if class.is_utf8() {
        String::from_utf8_lossy(class.as_bytes()).into_owned()
    } else {
        class.as_bytes().iter().map(|&b| char::from(b)).collect()
    }
}

/// Walks every item of `view` reachable from its root (each position
/// once), checking each against the decoded graph's value there.
fn agree(view: &View<'_>, doc: &Value, budget: &mut usize) {
    let mut seen = HashSet::new();
    let mut todo = vec![(view.root(), doc.clone())];
    while let Some((item, value)) = todo.pop() {
        if *budget == 0 || !seen.insert(format!("{:?}", item.position())) {
            continue;
        }
        *budget -= 1;
        let decoded = item
            .decode()
            .unwrap_or_else(|e| panic!("{:?}: {e}", item.position()));
        assert!(
            decoded.perl_eq(&value),
            "item at {:?} decodes to {decoded:?}, the graph has {value:?}; item {:x?} in {:x?}",
            item.position(),
            item.raw(),
            view.root().raw()
        );
        // alone, the item is what its decoded value is when written alone
        // (a weak reference to a value held only outside it is gone)
        let alone = decode(&item.to_document().unwrap()).unwrap();
        let rewritten = decode(&encode(&decoded).unwrap()).unwrap();
        assert!(
            alone.perl_eq(&rewritten),
            "to_document at {:?}",
            item.position()
        );
        // scalars read through an alias of a scalar cell, as the view's
        // `ALIAS` is followed
        let scalar = match &value {
            Value::Alias(cell) => match &*cell.try_body().unwrap() {
                Body::Scalar(inner) => inner.clone(),
                _ => value.clone(),
            },
            v => v.clone(),
        };
        let value = scalar;
        assert_eq!(
            item.as_i64().unwrap(),
            value.as_i64(),
            "as_i64 of {value:?}"
        );
        assert_eq!(
            item.as_u64().unwrap(),
            value.as_u64(),
            "as_u64 of {value:?}"
        );
        assert_eq!(
            item.as_bytes().unwrap(),
            value.as_bytes(),
            "as_bytes of {value:?}: {:x?} in {:x?}",
            item.raw(),
            view.root().raw()
        );
        assert_eq!(
            item.as_bool().unwrap(),
            value.as_bool(),
            "as_bool of {value:?}"
        );
        if !matches!(value, Value::Weak(_)) {
            // (a weak reference whose referent is gone reads as undef)
            assert_eq!(
                item.is_undef().unwrap(),
                value.is_undef(),
                "is_undef of {value:?}"
            );
        }
        if let (Some(a), Some(b)) = (item.as_f64().unwrap(), value.as_f64()) {
            assert!(a == b || a.is_nan() && b.is_nan());
        }
        if matches!(&value, Value::Weak(w) if w.upgrade().is_none()) {
            // a weak reference whose referent the decoder freed: the view
            // still reads the referent's bytes
            continue;
        }
        // the class the decoder blessed the referent with, however the
        // reference is written (a second one names no class)
        let strong = match &value {
            Value::Ref(node) => Some(node.clone()),
            Value::Weak(w) => w.upgrade(),
            _ => None,
        };
        if let Some(node) = &strong {
            assert_eq!(
                item.class().unwrap().as_deref(),
                node.class().as_ref().map(class_chars).as_deref(),
                "class of {value:?} at {:?}: {:x?} in {:x?}",
                item.position(),
                item.raw(),
                view.root().raw()
            );
        }
        if let Some(node) = value.node() {
            if matches!(&*node.try_body().unwrap(), Body::Frozen(_)) {
                // any reference to a frozen object is the object, one value
                assert_eq!(item.kind().unwrap(), Kind::Frozen, "{value:?}");
                assert_eq!(item.items().unwrap(), None);
                continue;
            }
        }
        let items = item.items().unwrap();
        assert_eq!(
            items.is_some(),
            matches!(item.kind().unwrap(), Kind::Array | Kind::Hash)
        );
        if let Some(items) = items {
            assert_eq!(Some(items.len()), item.len().unwrap());
            for (i, it) in items.into_iter().enumerate() {
                let (v, n) = child(&value, i).unwrap_or_else(|| {
                    panic!(
                        "{value:?} has no item {i}; item {:?} raw {:x?}",
                        item.position(),
                        item.raw()
                    )
                });
                assert_eq!(n, item.len().unwrap().unwrap());
                todo.push((it, v));
            }
        }
        if let Some(entries) = item.entries().unwrap() {
            for (k, v) in entries {
                // an ASCII key reaches the same value
                if let Some(text) = k.as_str().unwrap().filter(|t| t.is_ascii()) {
                    assert_eq!(item.get(text).unwrap(), Some(v), "get({text:?})");
                }
            }
        }
    }
}

#[test]
fn every_item_of_shaped_documents_decodes_as_the_graph_has_it() {
    for bytes in shaped_documents() {
        let doc = decode(&bytes).unwrap();
        let view = View::new(&bytes).unwrap();
        view.check().unwrap();
        let mut budget = 2_000;
        agree(&view, &doc, &mut budget);
    }
}

fn corpus_documents(every: usize) -> Vec<Vec<u8>> {
    let mut docs = Vec::new();
    for profile in common::PROFILES {
        let cases = sereal::conformance::read_cases(&common::corpus(profile)).unwrap();
        for (i, c) in cases.into_iter().enumerate() {
            if i % every == 0 {
                docs.extend([c.srl, c.canon].into_iter().flatten());
            }
        }
    }
    docs
}

#[test]
fn every_item_of_perls_corpus_decodes_as_the_graph_has_it() {
    let mut n = 0;
    for bytes in corpus_documents(1) {
        let Ok(doc) = decode(&bytes) else { continue };
        let view = View::new(&bytes).unwrap();
        view.check().unwrap();
        let mut budget = 300;
        agree(&view, &doc, &mut budget);
        n += 1;
    }
    assert!(n > 1000, "{n} corpus documents");
}

/// A second reference to a frozen object names its values (a `REFP` to
/// the array after `OBJECT_FREEZE`), and the decoder reads it as the
/// object: so do the view's kind, class and steps, for `REFP` and `ALIAS`.
#[test]
fn second_references_to_a_frozen_object_read_as_the_object() {
    // Perl's corpus, "frozen object shared": a Frozen object twice (the
    // second a REFP, at byte 25), then another
    let perl = b"=\xF3rl\x05\x00\x43\x32\x66Frozen\x28\xab\x02\x05\x65extra\x29\x0b\
                 \x33\x03\x28\x2b\x02\x06\x65extra";
    let mut aliased = perl.to_vec();
    assert_eq!(aliased[25], 0x29);
    aliased[25] = 0x2e; // ALIAS
    for bytes in [&perl[..], &aliased] {
        let view = View::new(bytes).unwrap();
        let items = view.root().items().unwrap().unwrap();
        assert_eq!(items.len(), 3);
        for it in &items {
            assert_eq!(it.kind().unwrap(), Kind::Frozen);
            assert_eq!(it.class().unwrap().as_deref(), Some("Frozen"));
            assert_eq!(it.items().unwrap(), None);
            assert_eq!(it.len().unwrap(), None);
        }
        assert!(view.select("$[1][0]").unwrap().is_empty());
        let doc = decode(bytes).unwrap();
        let mut budget = 100;
        agree(&view, &doc, &mut budget);
    }
}

/// An item that refers outside itself is decoded with the whole document:
/// a cycle through its parent, a second reference to an object held
/// elsewhere, a weak reference to its parent.
#[test]
fn items_referring_outside_themselves_keep_their_sharing_and_cycles() {
    let parent = sereal::Ref::hash(Default::default());
    let obj = sereal::Ref::hash([("n", Value::from(1))].into_iter().collect()).blessed("My::Obj");
    {
        let mut h = parent.hash_mut().unwrap();
        h.insert("obj", Value::Ref(obj.clone()));
        h.insert(
            "child",
            sereal!({"up": (&parent), "weak_up": (Value::weak(&parent)), "same": (&obj)}),
        );
    }
    let doc = Value::Ref(parent.clone());
    let bytes = encode(&doc).unwrap();
    parent.hash_mut().unwrap().clear();
    let view = View::new(&bytes).unwrap();
    let child = view.select("$.child").unwrap()[0].decode().unwrap();
    let whole = decode(&bytes).unwrap();
    let expected = whole.get("child").unwrap();
    assert_eq!(*child, expected);
    // a handle taken out of a document keeps its cycle alive past the
    // document, as an `Rc` would: let it go first
    drop(expected);
    // the cycle goes through the parent, which the item's document holds
    let up = child.get("up").unwrap();
    assert!(up
        .get("child")
        .unwrap()
        .node()
        .unwrap()
        .ptr_eq(&child.node().unwrap()));
    assert_eq!(
        child
            .get("same")
            .unwrap()
            .node()
            .unwrap()
            .class()
            .unwrap()
            .to_string(),
        "My::Obj"
    );
    drop(whole);
    // the original document is gone: the item's document holds the graph
    assert_eq!(
        child
            .get("up")
            .unwrap()
            .get("obj")
            .unwrap()
            .get("n")
            .unwrap(),
        1
    );
    let alone = decode(&view.select("$.child").unwrap()[0].to_document().unwrap()).unwrap();
    assert_eq!(alone, *child);
}

/// What a path selects, read in Rust from the decoded graph.
fn walk_path(v: &Value, steps: &[&str]) -> Vec<Value> {
    let mut here = vec![v.clone()];
    for step in steps {
        let mut next = Vec::new();
        for v in &here {
            match *step {
                "*" => {
                    let mut i = 0;
                    while let Some((c, _)) = child(v, i) {
                        next.push(c);
                        i += 1;
                    }
                }
                s => match s.parse::<i64>() {
                    Ok(i) => {
                        let len = v.as_array().map(|a| a.len() as i64).unwrap_or(0);
                        let i = if i < 0 { i + len } else { i };
                        if (0..len).contains(&i) {
                            next.extend(child(v, i as usize).map(|c| c.0));
                        }
                    }
                    Err(_) => next.extend(v.get(s)),
                },
            }
        }
        here = next;
    }
    here
}

#[test]
fn paths_select_what_a_walk_of_the_graph_selects() {
    let doc = sereal!({
        "users": [
            {"id": 1, "email": "a@x", "roles": ["admin", "ops"]},
            {"id": 2, "email": "b@x", "roles": []},
            {"id": 3, "email": null, "roles": ["ops"]}
        ],
        "count": 3
    });
    let bytes = encode(&doc).unwrap();
    let view = View::new(&bytes).unwrap();
    for (path, steps) in [
        ("$", &[][..]),
        ("$.users[*].email", &["users", "*", "email"][..]),
        (
            "$['users'][-1].roles[0]",
            &["users", "-1", "roles", "0"][..],
        ),
        ("$.users[*].roles[*]", &["users", "*", "roles", "*"][..]),
        ("$.*", &["*"][..]),
        ("$.count[0]", &["count", "0"][..]),
        ("$.nothing", &["nothing"][..]),
        ("$.users[7]", &["users", "7"][..]),
    ] {
        let got: Vec<Value> = view
            .select(path)
            .unwrap()
            .iter()
            .map(|i| i.decode().unwrap().into_value())
            .collect();
        assert_eq!(got, walk_path(&doc, steps), "{path}");
    }
    let ids = |p: &str| -> Vec<i64> {
        view.select(p)
            .unwrap()
            .iter()
            .map(|i| i.as_i64().unwrap().unwrap())
            .collect()
    };
    assert_eq!(ids("$.users[0:2].id"), [1, 2]);
    assert_eq!(ids("$.users[::-1].id"), [3, 2, 1]);
    assert_eq!(ids("$.users[::2].id"), [1, 3]);
    assert_eq!(ids("$.users[2,0,-2].id"), [3, 1, 2]);
    assert_eq!(ids("$.users[0]['id','nothing','id']"), [1, 1]);
}

#[test]
fn keys_match_by_their_characters_as_perls_do() {
    // "café" as Latin-1 bytes (Perl's byte string) and as UTF-8
    for key in [sereal::Key::bytes(b"caf\xe9"), sereal::Key::utf8("café")] {
        let mut h = sereal::Hash::new();
        h.insert(key, Value::from(1));
        let bytes = encode(&Value::from(h)).unwrap();
        let view = View::new(&bytes).unwrap();
        assert_eq!(view.select("$.café").unwrap().len(), 1);
        assert_eq!(view.select("$['caf\u{e9}']").unwrap().len(), 1);
        assert!(view.select("$.cafe").unwrap().is_empty());
    }
}

#[test]
fn views_read_compressed_documents_and_every_protocol() {
    let doc = sereal!({"rows": [{"k": "v".repeat(100)}, {"k": "w"}]});
    for version in 1..=5u8 {
        for c in [
            Compression::None,
            Compression::Snappy,
            Compression::Zlib,
            Compression::Zstd,
        ] {
            if version < 3 && matches!(c, Compression::Zlib | Compression::Zstd) {
                continue;
            }
            let opts = sereal::EncoderOptions::new()
                .protocol_version(version)
                .compress(c)
                .compress_threshold(0);
            let bytes = sereal::encode_with(&doc, &opts).unwrap();
            let view = View::new(&bytes).unwrap();
            assert_eq!(view.version(), version);
            let k = view.select("$.rows[1].k").unwrap();
            assert_eq!(k[0].as_str().unwrap(), Some("w"), "v{version} {c:?}");
            assert_eq!(*view.root().decode().unwrap(), doc);
            view.check().unwrap();
        }
    }
}

/// Mutated documents: every view operation gives a value or an error,
/// never a panic; a document that decodes gives a view that agrees.
#[test]
fn mutated_documents_give_errors_not_panics() {
    let mut rng = Rng(0x71E3_2026);
    let mut seeds = shaped_documents();
    seeds.retain(|d| d.len() < 4096);
    seeds.extend(corpus_documents(16).into_iter().filter(|d| d.len() < 4096));
    let mut decoded = 0;
    for round in 0..6_000 {
        let mut bytes = seeds[round % seeds.len()].clone();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(bytes.len());
            match rng.below(4) {
                0 => bytes[i] = rng.next() as u8,
                1 => bytes[i] ^= 1 << rng.below(8),
                2 => bytes.truncate(i.max(1)),
                _ => bytes.insert(i, rng.next() as u8),
            }
        }
        let Ok(view) = View::new(&bytes) else {
            continue;
        };
        let checked = view.check();
        for path in ["$", "$[*]", "$.*", "$[0][-1]", "$[*][*]", "$[::-1]"] {
            if let Ok(items) = view.select(path) {
                for it in items.iter().take(8) {
                    let _ = (
                        it.kind(),
                        it.as_str(),
                        it.as_f64(),
                        it.class(),
                        it.raw(),
                        it.len(),
                    );
                    let _ = it.decode();
                    let _ = it.entries();
                }
            }
        }
        if let Ok(doc) = decode(&bytes) {
            decoded += 1;
            assert!(
                checked.is_ok(),
                "decodes but the view's check fails: {checked:?}, {bytes:x?}"
            );
            let mut budget = 50;
            agree(&view, &doc, &mut budget);
        }
    }
    assert!(decoded > 100, "{decoded} mutated documents decoded");
}

#[test]
fn limits_apply_as_the_decoders_do() {
    let deep = (0..100).fold(Value::from(1), |v, _| Value::array([v]));
    let bytes = encode(&deep).unwrap();
    let dec = Decoder::new(DecoderOptions::new().max_recursion_depth(50));
    let view = dec.view(&bytes).unwrap();
    let e = view.check().unwrap_err();
    let d = dec.decode(&bytes).unwrap_err();
    assert_eq!(e.kind(), d.kind());
    // what is not walked is not checked: the first level answers
    assert_eq!(view.root().len().unwrap(), Some(1));
    let big = encode(&Value::array((0..100).map(Value::from).collect::<Vec<_>>())).unwrap();
    let dec = Decoder::new(DecoderOptions::new().max_num_array_entries(10));
    let e = dec.view(&big).unwrap().root().len().unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (
            dec.decode(&big).unwrap_err().kind(),
            dec.decode(&big).unwrap_err().offset()
        )
    );
    let obj = encode(&Value::Ref(sereal::Ref::array(vec![]).blessed("X"))).unwrap();
    let dec = Decoder::new(DecoderOptions::new().refuse_objects(true));
    assert_eq!(
        dec.view(&obj).unwrap().check().unwrap_err().kind(),
        dec.decode(&obj).unwrap_err().kind()
    );
}

#[test]
fn merged_and_split_documents_give_back_the_data() {
    let docs: Vec<Vec<u8>> = shaped_documents()
        .into_iter()
        .filter(|d| d.len() < 200_000)
        .collect();
    // kept as documents, which free the cycles of the shaped documents
    let decoded: Vec<sereal::Document> = docs.iter().map(|d| decode(d).unwrap()).collect();
    let values: Vec<&Value> = decoded.iter().map(|d| d.root()).collect();
    for opts in [
        MergeOptions::new(),
        MergeOptions::new().dedupe_strings(true),
        MergeOptions::new().compress(Compression::Zstd),
        MergeOptions::new()
            .protocol_version(5)
            .compress(Compression::Snappy),
    ] {
        let merged = merge(&docs, &opts).unwrap();
        let back = decode(&merged).unwrap();
        let arr = back.as_array().unwrap();
        assert_eq!(arr.len(), values.len());
        for (i, v) in values.iter().enumerate() {
            assert!(arr.get(i).unwrap().perl_eq(v), "input {i}");
        }
        // split back into chunks: their elements are the inputs, in order
        // (the chunks' documents outlive the elements taken out of them,
        // so that they free the cycles)
        let mut chunk_docs = Vec::new();
        let mut again = Vec::new();
        for chunk in Splitter::new(View::new(&merged).unwrap(), 4096).unwrap() {
            let chunk = chunk.unwrap();
            let doc = decode(&chunk).unwrap();
            let a = doc.as_array().unwrap();
            assert!(
                chunk.len() <= 4096 || a.len() == 1,
                "{} bytes, {} elements",
                chunk.len(),
                a.len()
            );
            again.extend(a.iter().cloned());
            drop(a);
            chunk_docs.push(doc);
        }
        assert_eq!(again.len(), values.len());
        for (i, v) in values.iter().enumerate() {
            assert!(again[i].perl_eq(v), "element {i} after split");
        }
    }
}

#[test]
fn split_copies_in_what_crosses_chunks() {
    let shared =
        sereal::Ref::hash([("name", Value::from("shared"))].into_iter().collect()).blessed("Team");
    let rows: Vec<Value> = (0..200)
        .map(|i| sereal!({"id": i, "team": (&shared), "also": (&shared), "class": "x"}))
        .collect();
    let doc = Value::array(rows);
    let bytes = encode(&doc).unwrap();
    let mut n = 0;
    for chunk in Splitter::new(View::new(&bytes).unwrap(), 300).unwrap() {
        let chunk = decode(&chunk.unwrap()).unwrap();
        let a = chunk.as_array().unwrap();
        for row in a.iter() {
            assert_eq!(row.get("id").unwrap(), n);
            let team = row.get("team").unwrap().node().unwrap();
            assert_eq!(team.class().unwrap().to_string(), "Team");
            assert!(team.ptr_eq(&row.get("also").unwrap().node().unwrap()));
            assert!(team.ptr_eq(&a.first().unwrap().get("team").unwrap().node().unwrap()));
            n += 1;
        }
    }
    assert_eq!(n, 200);
    // an element that refers to the array being split
    let root = sereal::Ref::array(vec![]);
    root.array_mut().unwrap().push(Value::Ref(root.clone()));
    let bytes = encode(&Value::Ref(root.clone())).unwrap();
    root.array_mut().unwrap().clear();
    let e = Splitter::new(View::new(&bytes).unwrap(), 100)
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(
        e.to_string().contains("refers to the array being split"),
        "{e}"
    );
}

/// Documents whose elements share items in ways a split must copy in:
/// each chunk of one element decodes to the original's element.
#[test]
fn split_chunks_of_one_element_equal_the_elements() {
    let docs: [&[u8]; 4] = [
        // a regexp blessed as an object's value itself (no REFN), then
        // referred to from later elements (found by the merge_split target)
        b"\x45\x2c\x67Regexp(\xb1\x63foo\x60\x42\x29\x0b\x29\x0b\x29\x0b\x43\x29\x0b\x29\x0b\x29\x0b\x29\x0b",
        // [[[1]*]*, [REFP to the inner array's reference, REFP to the outer array]]
        b"\x42\x28\xab\x01\xc1\x01\x42\x29\x05\x29\x03",
        // [\$x, \$x] with $x = []
        b"\x42\x28\xc0\x29\x03",
        // a shared hash, then a reference to it from a later element
        b"\x43\x28\xaa\x01\x61k\x01\x29\x03\x41\x29\x03",
    ];
    for body in docs {
        let mut bytes = b"=\xF3rl\x05\x00".to_vec();
        bytes.extend_from_slice(body);
        let whole = decode(&bytes).unwrap_or_else(|e| panic!("{body:x?}: {e}"));
        let a = whole.as_array().unwrap();
        let chunks: Vec<Vec<u8>> = Splitter::new(View::new(&bytes).unwrap(), 1)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(chunks.len(), a.len());
        for (i, c) in chunks.iter().enumerate() {
            let doc = decode(c).unwrap();
            let got = doc.as_array().unwrap().first().unwrap().clone();
            assert!(
                got.perl_eq(a.get(i).unwrap()),
                "{body:x?} element {i}: {got:?} != {:?}",
                a.get(i).unwrap()
            );
        }
        // and each item decodes as the whole document has it
        let view = View::new(&bytes).unwrap();
        for (i, item) in view.root().items().unwrap().unwrap().iter().enumerate() {
            assert!(
                item.decode().unwrap().perl_eq(a.get(i).unwrap()),
                "{body:x?} item {i}"
            );
        }
    }
}

/// A scalar blessed through a reference after it (Perl's corpus cases 191
/// and 192): the item decodes with its class, from the whole document.
#[test]
fn a_scalar_blessed_from_outside_keeps_its_class() {
    let bytes = b"=\xF3rl\x05\x00\x43\xe3foo\x2c\x61C\x29\x02\x29\x02";
    let whole = decode(bytes).unwrap();
    let view = View::new(bytes).unwrap();
    let first = view.root().index(0).unwrap().unwrap().decode().unwrap();
    assert!(first.perl_eq(&whole.as_array().unwrap().first().unwrap().clone()));
    assert_eq!(first.node().unwrap().class().unwrap().to_string(), "C");
}
