//! Heap behaviour at the encoder's callback boundary, measured with dhat.
//!
//! dhat allows one profiler per process and counts every thread's
//! allocations, so all measurements are in the one test of this binary:
//! (a) a panicking FREEZE leaks nothing; (b) with callbacks possible but none
//! met, a warm encoder allocates only the output buffer; (c) what FREEZE
//! callbacks on N objects make a warm encoder keep while the document is
//! written: nothing that grows with N.
//! The figures are printed (run with `--nocapture` to see them).

#[path = "../author_tools/cases.rs"]
#[allow(dead_code)]
mod cases;

use sereal::{CallbackPolicy, Encoder, EncoderOptions, Key, Ref, Value};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const POLICIES: [CallbackPolicy; 2] = [CallbackPolicy::Guard, CallbackPolicy::Snapshot];

fn live() -> (u64, u64) {
    let s = dhat::HeapStats::get();
    (s.curr_blocks as u64, s.curr_bytes as u64)
}

fn totals() -> (u64, u64) {
    let s = dhat::HeapStats::get();
    (s.total_blocks, s.total_bytes)
}

/// Deliberate panics print nothing (the default hook would format and
/// allocate, and clutter the output).
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let p = info.payload();
        let text = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if !text.starts_with("deliberate") {
            eprintln!("panic: {text}");
        }
    }));
}

/// A graph with sharing, keys met twice, two classes, and an object whose
/// FREEZE panics in the middle.
fn panicking_graph() -> Value {
    let shared = Ref::array(vec![Value::from(1), Value::from(2)]);
    let rec = |i: i64| {
        Value::hash([
            ("id", Value::from(i)),
            ("name", Value::from(format!("name{i}"))),
        ])
    };
    let fine = Ref::array(vec![Value::from(7)]).blessed("Fine");
    let boom = Ref::hash([("id", 5)].into_iter().collect()).blessed("Boom");
    Value::array([
        Value::Ref(shared.clone()),
        rec(1),
        Value::Ref(fine.clone()),
        Value::Ref(fine),
        Value::Ref(shared.clone()),
        Value::weak(&shared),
        rec(2),
        Value::Ref(boom),
        rec(3),
    ])
}

fn panicking_encoder(policy: CallbackPolicy) -> Encoder {
    let mut enc =
        Encoder::new(EncoderOptions::new().freeze_callbacks(true).policy(policy)).unwrap();
    enc.on_freeze("Fine", |o| Ok(o.as_array().unwrap().to_vec()));
    enc.on_freeze("Boom", |_| panic!("deliberate panic in FREEZE"));
    enc
}

/// Allocations (blocks, bytes) of one encode with a warm encoder, and the
/// output length.
fn encode_cost(enc: &mut Encoder, input: &Value) -> (u64, u64, usize) {
    drop(enc.encode(input).unwrap());
    let before = totals();
    let out = enc.encode(input).unwrap();
    let after = totals();
    (after.0 - before.0, after.1 - before.1, out.len())
}

/// Records blessed into `Rec` (FREEZE gives `[id, name]`), and 10 shared
/// arrays each met twice: few tracked nodes besides the objects.
fn frozen_input(n: usize) -> Value {
    let records = cases::build("frozen", n).unwrap();
    let shared: Vec<Ref> = (0..10).map(|i| Ref::array(vec![Value::from(i)])).collect();
    Value::array([
        records,
        Value::array(shared.iter().map(|s| Value::Ref(s.clone()))),
        Value::array(shared.iter().map(|s| Value::Ref(s.clone()))),
    ])
}

/// Encodes `frozen_input(n)` with a warm encoder; returns the allocations
/// of the encode (blocks, bytes), the output length, and the heap the
/// encoder holds beyond its output buffer at the last FREEZE call compared
/// with the first (what it retains for the objects already frozen).
fn freeze_cost(policy: CallbackPolicy, n: usize) -> (u64, u64, usize, i64) {
    let input = frozen_input(n);
    let samples = Rc::new(Cell::new((0u64, 0u64, 0usize)));
    let mut enc =
        Encoder::new(EncoderOptions::new().freeze_callbacks(true).policy(policy)).unwrap();
    let id = Key::from("id");
    let name = Key::from("name");
    {
        let samples = samples.clone();
        enc.on_freeze("Rec", move |o| {
            let h = o.as_hash().unwrap();
            let (first, _, calls) = samples.get();
            let now = dhat::HeapStats::get().curr_bytes as u64;
            samples.set((if calls == 0 { now } else { first }, now, calls + 1));
            Ok(vec![
                h.get_key(&id).cloned().unwrap(),
                h.get_key(&name).cloned().unwrap(),
            ])
        });
    }
    drop(enc.encode(&input).unwrap());
    samples.set((0, 0, 0));
    let before = totals();
    let out = enc.encode(&input).unwrap();
    let after = totals();
    let (first, last, calls) = samples.get();
    assert_eq!(calls, n);
    (
        after.0 - before.0,
        after.1 - before.1,
        out.len(),
        last as i64 - first as i64,
    )
}

#[test]
fn callback_boundary_heap() {
    let _profiler = dhat::Profiler::builder().testing().build();
    quiet_panics();
    // Keys and classes interned once, before any baseline: the interner
    // keeps its table between measurements.
    let _keys: Vec<Key> = ["id", "name", "Fine", "Boom", "Rec", "Absent"]
        .into_iter()
        .map(Key::from)
        .collect();

    // (a) a panicking FREEZE, under each policy: after dropping the
    // encoder and the graph, the live heap is what it was before.
    for policy in POLICIES {
        // warm-up: the first panic of a thread may set up lazy state
        {
            let g = panicking_graph();
            let mut enc = panicking_encoder(policy);
            assert!(catch_unwind(AssertUnwindSafe(|| enc.encode(&g))).is_err());
        }
        let before = live();
        {
            let g = panicking_graph();
            let mut enc = panicking_encoder(policy);
            for _ in 0..3 {
                let r = catch_unwind(AssertUnwindSafe(|| enc.encode(&g)));
                assert!(r.is_err());
            }
            // and the encoder still works
            enc.on_freeze("Boom", |_| Ok(vec![]));
            enc.encode(&g).unwrap();
        }
        let after = live();
        eprintln!(
            "(a) {policy:?}: live heap before {} blocks / {} bytes, after 3 panicking encodes \
             and dropping everything {} blocks / {} bytes",
            before.0, before.1, after.0, after.1
        );
        assert_eq!(
            after, before,
            "(a) {policy:?}: heap leaked by a panicking FREEZE"
        );
    }

    // (b) freeze_callbacks on, a handler for a class that does not occur:
    // a warm Guard encoder allocates only the output buffer. Snapshot
    // copies every container (its documented cost), printed for reference.
    for case in ["records", "shared"] {
        for count in [1_000, 8_000] {
            let input = cases::build(case, count).unwrap();
            let mut plain = Encoder::new(EncoderOptions::new()).unwrap();
            let (pb, pbytes, plen) = encode_cost(&mut plain, &input);
            for policy in POLICIES {
                let mut enc =
                    Encoder::new(EncoderOptions::new().freeze_callbacks(true).policy(policy))
                        .unwrap();
                enc.on_freeze("Absent", |_| Ok(vec![]));
                let (blocks, bytes, len) = encode_cost(&mut enc, &input);
                eprintln!(
                    "(b) {case} {count}, {policy:?}, handler for an absent class: {blocks} allocations, \
                     {bytes} bytes for {len} output bytes (no callbacks option: {pb} allocations, {pbytes} bytes)"
                );
                assert_eq!(len, plen);
                if policy == CallbackPolicy::Guard {
                    assert_eq!(
                        blocks, 1,
                        "(b) {case} {count}: allocations beyond the output"
                    );
                    assert_eq!(bytes as usize, len, "(b) {case} {count}");
                }
            }
        }
    }

    // (c) FREEZE on N objects (few other tracked nodes): the encode's
    // allocations, and the heap the encoder retains for the objects
    // already frozen, N = 1000 and 4000.
    for policy in POLICIES {
        let mut retained = Vec::new();
        for n in [1_000, 4_000] {
            let (blocks, bytes, len, growth) = freeze_cost(policy, n);
            eprintln!(
                "(c) {policy:?}, {n} frozen objects: {blocks} allocations, {bytes} bytes for {len} \
                 output bytes; heap retained between the first and last FREEZE: {growth} bytes \
                 ({:.1} per object)",
                growth as f64 / n as f64
            );
            retained.push(growth);
        }
        let per_object = (retained[1] - retained[0]) as f64 / 3000.0;
        eprintln!(
            "(c) {policy:?}: extra retained for 3000 more frozen objects: {} bytes ({per_object:.1} per object)",
            retained[1] - retained[0]
        );
        // Every frozen object is kept alive in the encoder's tables (DESIGN
        // item 3, as Perl's freezeobj_svhash), and tracked, so a second
        // reference to it is a REFP to its first writing (item 4); its
        // FREEZE result is let go once written. A warm encoder's tables
        // have the room already, so the heap does not grow with N.
        assert!(
            per_object <= 8.0,
            "(c) {policy:?}: {per_object:.1} bytes retained per frozen object"
        );
    }
}
