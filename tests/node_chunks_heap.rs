//! The nodes of a decoded document live in chunks of boxes, one allocation
//! for up to 1,024 nodes, freed with the last node of it or kept by the
//! decoder for its next documents: whatever order the nodes go in, on
//! whichever thread, and however a decode ends (dhat).

mod chunk_heap;

use chunk_heap::{allocated_by, Start};
use sereal::{decode, encode, Decoder, Document, Ref, Value};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// An array of `n` one-element arrays, each holding its index: `n + 1`
/// nodes.
fn arrays(n: usize) -> Vec<u8> {
    encode(&Value::array((0..n).map(|i| Value::array([i as i64])))).unwrap()
}

/// `n` records that share one group and point back at a parent through
/// weak references, with a strong cycle at the root.
fn graph(n: usize) -> Vec<u8> {
    let root = Ref::hash(Default::default());
    let group = Ref::hash([("gid", 1)].into_iter().collect());
    let items = Value::array((0..n).map(|i| {
        Value::hash([
            ("id", Value::from(i as i64)),
            ("group", Value::Ref(group.clone())),
            ("up", Value::weak(&root)),
        ])
    }));
    root.hash_mut().unwrap().insert("items", items);
    root.hash_mut()
        .unwrap()
        .insert("self", Value::Ref(root.clone()));
    let bytes = encode(&Value::Ref(root.clone())).unwrap();
    Value::Ref(root).dismantle();
    bytes
}

/// The `i`th inner array's element.
fn item(d: &Document, i: usize) -> Option<i64> {
    d.at(i)?.at(0)?.as_i64()
}

#[test]
fn node_chunks_are_freed_or_kept_for_the_next_document() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let sizes = [0, 1, 15, 16, 17, 1007, 1008, 1009, 2032, 5000];
    let docs: Vec<(usize, Vec<u8>)> = sizes.iter().map(|&n| (n, arrays(n))).collect();
    let graphs: Vec<Vec<u8>> = [3, 700, 3000].map(graph).into();
    let failing: Vec<Vec<u8>> = [&docs[9].1, &graphs[2]]
        .iter()
        .flat_map(|b| [b.len() / 3, b.len() / 2, b.len() - 1].map(|c| b[..c].to_vec()))
        .collect();
    drop(decode(&docs[3].1).unwrap());
    let start = Start::now();
    // A chunk of 16 nodes is over a kilobyte.
    let near = |what: &str| start.near(what, 1024);

    // `decode` keeps nothing: decode and drop, at sizes either side of
    // where chunks double and where they are full.
    for (n, bytes) in &docs {
        for _ in 0..5 {
            let d = decode(bytes).unwrap();
            assert_eq!(d.as_array().map(|a| a.len()), Some(*n));
            if *n > 0 {
                assert_eq!(item(&d, n - 1), Some(*n as i64 - 1));
            }
        }
    }
    for bytes in &graphs {
        for _ in 0..5 {
            let d = decode(bytes).unwrap();
            let up = d.get("items").unwrap().at(0).unwrap().get("up").unwrap();
            assert!(up.get("self").is_some());
        }
    }
    for bytes in &failing {
        assert!(decode(bytes).is_err());
    }
    near("decode and drop");

    // Nodes kept after their document, from its first, middle and last
    // chunks, dropped in several orders.
    for order in 0..3 {
        let mut kept: Vec<(usize, Value)> = {
            let d = decode(&docs[9].1).unwrap();
            [0, 5, 1007, 1008, 2500, 4999]
                .iter()
                .map(|&i| (i, d.at(i).unwrap()))
                .collect()
        };
        match order {
            0 => kept.reverse(),
            1 => kept.swap(0, 3),
            _ => {}
        }
        while let Some((i, v)) = kept.pop() {
            assert_eq!(v.at(0).and_then(|x| x.as_i64()), Some(i as i64));
        }
        drop(kept);
        near(&format!("nodes kept past their document (order {order})"));
    }

    // A document sent to another thread frees its chunks there, while a
    // node taken out of it before it went frees its share here.
    let d = decode(&docs[9].1).unwrap();
    let taken = d.at(3000).unwrap();
    if let Value::Ref(root) = &*d {
        root.array_mut().unwrap()[3000] = Value::Undef;
    }
    let sent = d.into_send().unwrap();
    std::thread::spawn(move || {
        let d = sent.into_document();
        assert_eq!(item(&d, 4999), Some(4999));
        drop(d);
    })
    .join()
    .unwrap();
    assert_eq!(taken.at(0).and_then(|x| x.as_i64()), Some(3000));
    drop(taken);
    near("a document sent to another thread");

    // A decoder of one's own keeps the full chunks (1,024 nodes) that come
    // back free, as many as one decode used: 5,001 nodes are chunks of 16
    // to 512 (1,008 nodes), then four full ones (the count of nodes is not
    // known beforehand: the last chunk is full too).
    let full = 40 + 1024 * 72;
    let dec = Decoder::default();
    for _ in 0..3 {
        for (_, bytes) in &docs {
            drop(dec.decode(bytes).unwrap());
        }
    }
    let decoder_keeps = |what: &str| start.keeps(what, 4 * full);
    decoder_keeps("decodes dropped");

    // The kept chunks are used again.
    let allocated = |d: &Decoder| {
        allocated_by(|| {
            let doc = d.decode(&docs[9].1).unwrap();
            assert_eq!(item(&doc, 4321), Some(4321));
        })
    };
    let fresh = allocated(&Decoder::default());
    let reused = allocated(&dec);
    assert!(
        reused + 4 * full as u64 <= fresh,
        "a decode with kept chunks allocated {reused} bytes, with none {fresh}"
    );

    // Documents held while others are decoded take new chunks; when they
    // all go, from this thread or another, the decoder keeps no more than
    // before; failed decodes give theirs back too.
    let held: Vec<Document> = (0..3).map(|_| dec.decode(&docs[9].1).unwrap()).collect();
    let sent = dec.decode(&docs[9].1).unwrap().into_send().unwrap();
    std::thread::spawn(move || drop(sent.into_document()))
        .join()
        .unwrap();
    for bytes in &failing {
        assert!(dec.decode(bytes).is_err());
    }
    for (i, d) in held.iter().enumerate() {
        assert_eq!(item(d, 4990 - i), Some(4990 - i as i64));
    }
    drop(held);
    for bytes in &graphs {
        drop(dec.decode(bytes).unwrap());
    }
    decoder_keeps("held documents dropped");
    drop(dec);
    near("a decoder dropped");
}
