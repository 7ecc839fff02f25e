//! Threads: codecs that move and are shared between threads, handlers bound
//! to their thread or shared, and decoded documents sent to another thread
//! with their sharing, cycles and weak references intact.

use sereal::conformance::read_cases;
use sereal::{
    decode, encode, Decoder, Document, Encoder, EncoderOptions, ErrorKind, Foreign, Key, Ref,
    SendDocument, Value,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;

mod common;
use common::{corpus, PROFILES};

fn frozen_point(x: i64) -> Value {
    Value::Ref(Ref::hash([("x", x)].into_iter().collect()).blessed("Point"))
}

fn freezing_encoder() -> Encoder {
    Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap()
}

#[test]
fn a_decoder_behind_an_arc_serves_many_threads_with_a_shared_thaw_handler() {
    let mut enc = freezing_encoder();
    enc.on_freeze_shared("Point", |p| {
        Ok(vec![p.as_hash().unwrap().get("x").cloned().unwrap()])
    });
    let docs: Vec<Vec<u8>> = (0..64)
        .map(|i| {
            let p = frozen_point(i);
            enc.encode(&Value::array([p.clone(), p])).unwrap()
        })
        .collect();
    let calls = Arc::new(AtomicUsize::new(0));
    let mut dec = Decoder::default();
    let counter = calls.clone();
    dec.on_thaw_shared("Point", move |class, mut vals| {
        counter.fetch_add(1, Ordering::Relaxed);
        let x = vals.pop().unwrap_or_default();
        Ok(Value::Ref(
            Ref::hash([("x", x)].into_iter().collect()).blessed(class),
        ))
    });
    let dec = Arc::new(dec);
    let docs = Arc::new(docs);
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let (dec, docs) = (dec.clone(), docs.clone());
            thread::spawn(move || {
                let mut sum = 0;
                for (i, doc) in docs.iter().enumerate().skip(t).step_by(4) {
                    let v = dec.decode(doc).unwrap();
                    let (a, b) = (
                        v.at(0).unwrap().node().unwrap(),
                        v.at(1).unwrap().node().unwrap(),
                    );
                    assert!(a.ptr_eq(&b), "one object, thawed once");
                    assert_eq!(
                        v.at(0).unwrap().get("x").and_then(|x| x.as_i64()),
                        Some(i as i64)
                    );
                    sum += v.at(1).unwrap().get("x").and_then(|x| x.as_i64()).unwrap();
                }
                sum
            })
        })
        .collect();
    let total: i64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(total, (0..64).sum::<i64>());
    // one THAW per object: the second occurrence is a reference to the first
    assert_eq!(calls.load(Ordering::Relaxed), 64);
}

#[test]
fn an_encoder_moved_to_another_thread_keeps_its_shared_handlers() {
    let mut enc = freezing_encoder();
    enc.on_freeze_shared("Point", |p| {
        Ok(vec![p.as_hash().unwrap().get("x").cloned().unwrap()])
    });
    let here = enc.encode(&frozen_point(3)).unwrap();
    let (enc, there) = thread::spawn(move || {
        let out = enc.encode(&frozen_point(3)).unwrap();
        (enc, out)
    })
    .join()
    .unwrap();
    assert_eq!(here, there);
    drop(enc);
}

#[test]
fn a_thread_bound_handler_fails_cleanly_elsewhere_and_works_again_at_home() {
    // the handlers hold an Rc: they may, since they stay on this thread
    let seen = std::rc::Rc::new(std::cell::Cell::new(0));
    let mut enc = freezing_encoder();
    let s = seen.clone();
    enc.on_freeze("Point", move |p| {
        s.set(s.get() + 1);
        Ok(vec![p.as_hash().unwrap().get("x").cloned().unwrap()])
    });
    let doc = enc.encode(&frozen_point(5)).unwrap();
    let mut dec = Decoder::default();
    let s = seen.clone();
    dec.on_thaw("Point", move |_, mut vals| {
        s.set(s.get() + 10);
        Ok(vals.pop().unwrap_or_default())
    });

    let (enc, dec, doc) = thread::spawn(move || {
        let mut enc = enc;
        let err = enc.encode(&frozen_point(5)).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Callback(_)), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("FREEZE handler of class 'Point'")
                && msg.contains("another thread")
                && msg.contains("on_freeze_shared"),
            "{msg}"
        );
        let err = dec.decode(&doc).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("THAW handler of class 'Point'") && msg.contains("on_thaw_shared"),
            "{msg}"
        );
        assert!(err.offset().is_some(), "{err:?}");
        // a clone made here has nothing to run either
        assert!(dec.clone().decode(&doc).is_err());
        // the encoder is usable for what needs no handler
        assert_eq!(
            enc.encode(&Value::from(1)).unwrap(),
            encode(&Value::from(1)).unwrap()
        );
        (enc, dec, doc)
    })
    .join()
    .unwrap();
    assert_eq!(seen.get(), 1, "nothing ran on the other thread");
    let mut enc = enc;
    assert_eq!(enc.encode(&frozen_point(5)).unwrap(), doc);
    assert_eq!(dec.decode(&doc).unwrap(), Value::from(5));
    assert_eq!(dec.clone().decode(&doc).unwrap(), Value::from(5));
    assert_eq!(seen.get(), 22);
}

/// Sends `doc` to a new thread, which re-encodes it with `opts` and drops it.
fn encode_elsewhere(doc: SendDocument, opts: EncoderOptions) -> Vec<u8> {
    thread::spawn(move || {
        let doc = doc.into_document();
        Encoder::new(opts).unwrap().encode(&doc).unwrap()
    })
    .join()
    .unwrap()
}

#[test]
fn every_corpus_document_crosses_threads_and_re_encodes_to_the_same_bytes() {
    let (tx, rx) = mpsc::sync_channel::<(SendDocument, Vec<u8>, String)>(64);
    let worker = thread::spawn(move || {
        let mut n = 0;
        for (doc, expected, name) in rx {
            let doc = doc.into_document();
            let got = encode(&doc).unwrap();
            assert_eq!(got, expected, "{name}");
            n += 1;
        }
        n
    });
    let mut sent = 0;
    for p in PROFILES {
        for case in read_cases(&corpus(p)).unwrap() {
            let Some(srl) = case.srl.as_deref() else {
                continue;
            };
            let Ok(doc) = decode(srl) else { continue };
            let expected = encode(&doc).unwrap();
            let doc = doc
                .into_send()
                .unwrap_or_else(|e| panic!("{p} {}: {e}", case.name));
            tx.send((doc, expected, format!("{p} {}", case.name)))
                .unwrap();
            sent += 1;
        }
    }
    drop(tx);
    assert_eq!(worker.join().unwrap(), sent);
    assert!(sent > 19_000, "{sent}");
}

#[test]
fn sharing_cycles_weak_references_and_classes_survive_the_move() {
    // Perl: my $p = bless {name => "root"}, "Node"; my $c = {up => $p};
    //       weaken($c->{up}); $p->{kids} = [$c, $c]; $p->{self} = $p;
    let parent = Ref::hash([("name", "root")].into_iter().collect()).blessed("Node");
    let child = Ref::hash([("up", Value::weak(&parent))].into_iter().collect());
    parent.hash_mut().unwrap().insert(
        "kids",
        Value::array([Value::Ref(child.clone()), Value::Ref(child)]),
    );
    parent
        .hash_mut()
        .unwrap()
        .insert("self", Value::Ref(parent.clone()));
    let bytes = encode(&Value::Ref(parent.clone())).unwrap();
    Value::Ref(parent).dismantle();

    let doc = decode(&bytes).unwrap();
    assert!(doc.has_cycles());
    let sent = doc.into_send().unwrap();
    let again = thread::spawn(move || {
        let doc = sent.into_document();
        let root = doc.node().unwrap();
        assert_eq!(root.class().unwrap(), Key::from("Node"));
        let kids = doc.get("kids").unwrap();
        let (a, b) = (
            kids.at(0).unwrap().node().unwrap(),
            kids.at(1).unwrap().node().unwrap(),
        );
        assert!(a.ptr_eq(&b), "the child is one hash");
        let up = a.as_hash().unwrap().get("up").cloned().unwrap();
        assert!(matches!(up, Value::Weak(_)));
        assert!(
            up.node().unwrap().ptr_eq(&root),
            "the weak reference leads home"
        );
        assert!(
            doc.get("self").unwrap().node().unwrap().ptr_eq(&root),
            "the cycle"
        );
        drop((a, b, up, root, kids));
        encode(&doc).unwrap()
        // the document, cycle and all, is freed here (LeakSanitizer checks)
    })
    .join()
    .unwrap();
    assert_eq!(again, bytes);
}

#[test]
fn keys_shared_with_this_threads_other_documents_are_copied_not_moved() {
    let doc = decode(&encode(&Value::hash([("id", 1), ("name", 2)])).unwrap()).unwrap();
    let other = decode(&encode(&Value::hash([("id", 3)])).unwrap()).unwrap();
    let mine = Key::from("id");
    let id_before = doc
        .root()
        .node()
        .unwrap()
        .as_hash()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    assert!(
        id_before.ptr_eq(&mine),
        "interned: one allocation on this thread"
    );
    drop(id_before);
    let sent = doc.into_send().unwrap();
    // this thread keeps using its interned keys while the other thread
    // drops its copies
    let worker = thread::spawn(move || {
        let doc = sent.into_document();
        let out = encode(&doc).unwrap();
        drop(doc);
        out
    });
    for _ in 0..1000 {
        assert!(Key::from("id").ptr_eq(&mine));
        assert_eq!(other.get("id"), Some(Value::from(3)));
    }
    assert_eq!(
        worker.join().unwrap(),
        encode(&Value::hash([("id", 1), ("name", 2)])).unwrap()
    );
}

#[test]
fn a_large_hash_and_its_copies_keep_their_sharing() {
    // 300 keys: the decoder leaves them unshared; each appears twice (the
    // second time as COPY) and must still be one allocation after the move
    let h: Value = Value::hash((0..300).map(|i| (format!("key{i}"), i)));
    let twice = Value::array([
        h.clone(),
        Value::hash((0..300).map(|i| (format!("key{i}"), -i))),
    ]);
    let bytes = encode(&twice).unwrap();
    let doc = decode(&bytes).unwrap();
    let back = encode_elsewhere(doc.into_send().unwrap(), EncoderOptions::new());
    assert_eq!(back, bytes);
}

#[test]
fn handles_held_outside_or_foreign_data_refuse_the_move_and_give_the_document_back() {
    let doc = decode(&encode(&Value::array([Value::hash([("a", 1)])])).unwrap()).unwrap();

    let inner = doc.at(0).unwrap().node().unwrap();
    let refused = doc.into_send().unwrap_err();
    assert!(refused.reason().contains("held from outside"), "{refused}");
    let doc = refused.into_document();
    drop(inner);

    let weak = doc.at(0).unwrap().node().unwrap().downgrade();
    let refused = doc.into_send().unwrap_err();
    assert!(
        refused.to_string().contains("held from outside"),
        "{refused}"
    );
    let doc = refused.into_document();
    drop(weak);

    let doc = doc.into_send().unwrap().into_document();
    doc.node()
        .unwrap()
        .array_mut()
        .unwrap()
        .push(Value::Foreign(Foreign::new(std::rc::Rc::new(1))));
    let refused = doc.into_send().unwrap_err();
    assert!(refused.reason().contains("Foreign"), "{refused}");
    let doc = refused.into_document();
    doc.node().unwrap().array_mut().unwrap().pop();
    let back = encode_elsewhere(doc.into_send().unwrap(), EncoderOptions::new());
    assert_eq!(
        back,
        encode(&Value::array([Value::hash([("a", 1)])])).unwrap()
    );

    // a graph built here is a document too, once nothing else holds it
    let shared = Ref::hash([("k", 1)].into_iter().collect());
    let built = Document::from(Value::array([
        Value::Ref(shared.clone()),
        Value::Ref(shared.clone()),
    ]));
    let built = built.into_send().unwrap_err().into_document();
    drop(shared);
    let back = encode_elsewhere(built.into_send().unwrap(), EncoderOptions::new());
    assert_eq!(&back[6..8], b"\x42\x28", "ARRAYREF_2, REFN: still shared");
}

/// A body borrow still out (here a guard leaked with `mem::forget`, which
/// outlives the handle it came from) refuses the move as a handle held
/// outside does, read borrows as well as write ones: the move replaces the
/// shared keys of the hash in place, which needs the body to itself.
#[test]
fn a_node_whose_body_is_still_borrowed_refuses_the_move() {
    let bytes = encode(&Value::array([Value::hash([("a", 1)])])).unwrap();
    for write in [false, true] {
        let doc = decode(&bytes).unwrap();
        let inner = doc.at(0).unwrap().node().unwrap();
        if write {
            std::mem::forget(inner.body_mut().unwrap());
        } else {
            std::mem::forget(inner.body());
        }
        drop(inner);
        let refused = doc.into_send().unwrap_err();
        assert!(refused.reason().contains("borrowed"), "{refused}");
        let doc = refused.into_document();
        assert_eq!(
            doc.at(0).unwrap().node().unwrap().try_body().is_err(),
            write
        );
    }
}

#[test]
fn a_dead_weak_reference_stays_dead_after_the_move() {
    let gone = Ref::hash(Default::default());
    let doc = Document::from(Value::array([Value::weak(&gone), Value::weak(&gone)]));
    drop(gone);
    let expected = encode(&doc).unwrap();
    let back = encode_elsewhere(doc.into_send().unwrap(), EncoderOptions::new());
    assert_eq!(back, expected);
}

/// The serde route: typed structs are plain Rust data and cross threads as
/// any other.
#[test]
fn typed_structs_from_serde_cross_threads_as_they_are() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct User {
        id: u32,
        name: String,
    }
    let bytes = encode(&Value::hash([
        ("id", Value::from(7)),
        ("name", "ann".into()),
    ]))
    .unwrap();
    let user: User = sereal::from_slice(&bytes).unwrap();
    let back = thread::spawn(move || user).join().unwrap();
    assert_eq!(
        back,
        User {
            id: 7,
            name: "ann".into()
        }
    );
}

/// One decoder on three threads, each sending every document it decodes
/// to the next thread to be checked and dropped there, while the decoders
/// go on: the chunks of nodes and keys come back to the decoder from every
/// thread at once, and each document read from reused chunks is whole
/// (AddressSanitizer, in CI, checks the memory).
#[test]
fn chunks_come_back_to_a_shared_decoder_from_other_threads() {
    let big = Value::array((0..3000).map(|i| {
        Value::hash([
            ("id", Value::from(i)),
            (
                "tags",
                Value::array([Value::from(i % 7), Value::from(i % 11)]),
            ),
        ])
    }));
    let keys = Value::hash((0..2500).map(|i| (format!("key{i}"), Value::from(i))));
    let docs = Arc::new([encode(&big).unwrap(), encode(&keys).unwrap()]);
    let dec = Arc::new(Decoder::default());
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..3).map(|_| mpsc::channel()).unzip();
    let workers: Vec<_> = receivers
        .into_iter()
        .enumerate()
        .map(|(t, rx)| {
            let (dec, docs) = (dec.clone(), docs.clone());
            let next: mpsc::Sender<(usize, SendDocument)> = senders[(t + 1) % 3].clone();
            thread::spawn(move || {
                for round in 0..40 {
                    let which = (round + t) % 2;
                    let doc = dec.decode(&docs[which]).unwrap();
                    next.send((which, doc.into_send().unwrap())).unwrap();
                    for (which, got) in rx.try_iter() {
                        check(which, got.into_document());
                    }
                }
                drop(next);
                rx
            })
        })
        .collect();
    drop(senders);
    for w in workers {
        for (which, got) in w.join().unwrap().iter() {
            check(which, got.into_document());
        }
    }

    fn check(which: usize, d: Document) {
        if which == 0 {
            let last = d.at(2999).unwrap();
            assert_eq!(last.get("id"), Some(Value::from(2999)));
            assert_eq!(
                last.get("tags").unwrap().at(1),
                Some(Value::from(2999 % 11))
            );
        } else {
            assert_eq!(d.get("key2499"), Some(Value::from(2499)));
            assert_eq!(d.as_hash().map(|h| h.len()), Some(2500));
        }
    }
}
