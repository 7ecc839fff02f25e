//! The keys of a decoded large hash live in chunks of boxes, one allocation
//! for up to 1,024 keys, freed with the last key of it: whatever order the
//! keys go in, on whichever thread, and however a decode ends (dhat).

mod chunk_heap;

use chunk_heap::{allocated_by, Start};
use sereal::protocol::write_varint;
use sereal::{decode, encode, Decoder, Hash, Key, Value};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// `[ {k0..k(n-1)}, {COPYs of k0 and k(n-1)} ]`, keys of `width` bytes or
/// more (past 22 bytes a key's bytes are an allocation of their own).
fn doc(n: usize, width: usize) -> Vec<u8> {
    let name = |i: usize| format!("k{i:0width$}", width = width.max(1) - 1);
    let big: Hash = (0..n).map(|i| (name(i), Value::from(i as i64))).collect();
    let small = Value::hash([(name(0), 1), (name(n - 1), 2)]);
    encode(&Value::array([Value::from(big), small])).unwrap()
}

/// `[ {shared0..shared9}, {k0..k(n-1), shared0..shared9} ]`: the big
/// hash's last ten keys are `COPY`s, which take no box of its chunks.
fn doc_with_copies(n: usize) -> Vec<u8> {
    let shared = |i: usize| format!("shared{i}");
    let small: Hash = (0..10).map(|i| (shared(i), Value::from(1))).collect();
    let big: Hash = (0..n)
        .map(|i| (format!("k{i}"), Value::from(2)))
        .chain((0..10).map(|i| (shared(i), Value::from(3))))
        .collect();
    encode(&Value::array([Value::from(small), Value::from(big)])).unwrap()
}

/// `HASH n` of keys `k0..` whose entry `dup` repeats entry 0's key.
fn with_duplicate(n: usize, dup: usize) -> Vec<u8> {
    let mut d = b"=\xF3rl\x05\x00\x28\x2a".to_vec();
    write_varint(&mut d, n as u64);
    for i in 0..n {
        let name = format!("k{}", if i == dup { 0 } else { i });
        d.push(0x60 + name.len() as u8);
        d.extend_from_slice(name.as_bytes());
        d.push(0x01);
    }
    d
}

/// The keys of the document's big hash.
fn keys_of(doc: &Value) -> Vec<Key> {
    let big = doc.at(0).unwrap();
    let h = big.as_strong_ref().unwrap().as_hash().unwrap().clone();
    h.keys().cloned().collect()
}

#[test]
fn key_chunks_are_freed_with_their_last_key() {
    let _profiler = dhat::Profiler::builder().testing().build();
    // The documents are made first: making them interns their keys.
    let sizes = [256, 300, 1023, 1024, 1025, 2049, 3000];
    let docs: Vec<(usize, Vec<u8>)> = sizes
        .iter()
        .flat_map(|&n| [4, 30].map(|width| (n, doc(n, width))))
        .collect();
    let copying: Vec<Vec<u8>> = [246, 1014, 1020, 2000].map(doc_with_copies).into();
    let failing: Vec<Vec<u8>> = [256, 1500]
        .iter()
        .flat_map(|&n| {
            let bytes = doc(n, 4);
            let cuts = [bytes.len() / 3, bytes.len() / 2, bytes.len() - 1];
            [1, 700.min(n - 1), n - 1]
                .map(|dup| with_duplicate(n, dup))
                .into_iter()
                .chain(cuts.map(|c| bytes[..c].to_vec()))
                .collect::<Vec<_>>()
        })
        .collect();
    let (kept_doc, sent_doc) = (doc(2500, 4), doc(3000, 4));
    // Warm up: the decoder's first use may set up state of its own.
    drop(decode(&docs[0].1).unwrap());
    let start = Start::now();
    // A chunk is 8 KiB or more.
    let near = |what: &str| start.near(what, 4096);

    // Decode and drop, at sizes either side of a chunk's 1,024 keys.
    for (n, bytes) in &docs {
        for _ in 0..20 {
            let d = decode(bytes).unwrap();
            assert_eq!(keys_of(&d).len(), *n);
        }
    }
    for bytes in &copying {
        for _ in 0..20 {
            let d = decode(bytes).unwrap();
            let big = d.at(1).unwrap();
            assert!(big.get("shared9").is_some());
        }
    }
    near("decode and drop");

    // Decodes that fail inside a large hash, after some of its keys.
    for bytes in &failing {
        assert!(decode(bytes).is_err());
    }
    near("failed decodes");

    // Keys kept after their document, dropped in every order; some kept
    // longer than the others.
    for order in 0..3 {
        let mut kept = {
            let d = decode(&kept_doc).unwrap();
            keys_of(&d)
        };
        match order {
            0 => kept.reverse(),
            1 => kept.sort_by_key(|k| k.as_bytes().iter().rev().copied().collect::<Vec<u8>>()),
            _ => {}
        }
        let longer: Vec<(String, Key)> = kept
            .iter()
            .step_by(7)
            .map(|k| (k.to_string(), k.clone()))
            .collect();
        let mut names: Vec<String> = kept.iter().map(|k| k.to_string()).collect();
        names.sort();
        let mut expected: Vec<String> = (0..2500).map(|i| format!("k{i:03}")).collect();
        expected.sort();
        assert_eq!(names, expected);
        drop((names, expected, kept));
        for (name, k) in &longer {
            assert_eq!(&k.to_string(), name);
        }
        drop(longer);
        near(&format!("keys kept past their document (order {order})"));
    }

    // A document sent to another thread frees its chunks there, and a key
    // taken out of it before it went frees its chunk's share here.
    let d = decode(&sent_doc).unwrap();
    let mut big = d.at(0).unwrap();
    let taken = {
        let r = big.as_strong_ref().unwrap();
        let mut h = r.body_mut().unwrap();
        let sereal::Body::Hash(h) = &mut *h else {
            panic!("not a hash")
        };
        let k = h.keys().nth(1500).unwrap().clone();
        let v = h.remove(&k.to_string());
        assert!(v.is_some());
        k
    };
    big = Value::Undef;
    drop(big);
    let sent = d.into_send().unwrap();
    std::thread::spawn(move || {
        let d = sent.into_document();
        assert_eq!(keys_of(&d).len(), 2999);
        drop(d);
    })
    .join()
    .unwrap();
    assert_eq!(taken.to_string(), "k1500");
    drop(taken);
    near("a document sent to another thread");

    // A decoder of one's own keeps the scratch space of its largest hash
    // for the next decode (16 bytes a key), and the full chunks that come
    // back free, as many as one decode used (two: 3,000 keys are two full
    // chunks of 1,024 and one of 952), and lets them go when dropped;
    // `decode`'s decoder, checked above, keeps none.
    let chunk = 40 + 1024 * 32;
    let kept_most = 3000 * 16 + 2 * chunk;
    let dec = Decoder::default();
    for _ in 0..3 {
        for bytes in [&sent_doc, &kept_doc, &docs[0].1] {
            drop(dec.decode(bytes).unwrap());
        }
    }
    let decoder_keeps = |what: &str| start.keeps(what, kept_most);
    decoder_keeps("decodes dropped");

    // The kept chunks are used again: a decode with the decoder allocates
    // two chunks' worth less than one with a new decoder.
    let allocated = |d: &Decoder| allocated_by(|| drop(d.decode(&sent_doc).unwrap()));
    let fresh = allocated(&Decoder::default());
    let reused = allocated(&dec);
    assert!(
        reused + 2 * chunk as u64 <= fresh,
        "a decode with kept chunks allocated {reused} bytes, with none {fresh}"
    );

    // Documents held while others are decoded take new chunks; when they
    // all go, from this thread or another, the decoder keeps no more than
    // before.
    let held: Vec<sereal::Document> = (0..3).map(|_| dec.decode(&kept_doc).unwrap()).collect();
    let sent = dec.decode(&sent_doc).unwrap().into_send().unwrap();
    std::thread::spawn(move || drop(sent.into_document()))
        .join()
        .unwrap();
    for d in &held {
        assert_eq!(keys_of(d).len(), 2500);
    }
    drop(held);
    decoder_keeps("held documents dropped");
    drop(dec);
    near("a decoder dropped");
}
