//! Encode random graphs: shared nodes, cycles, weak references, aliases,
//! blessed objects and FREEZE handlers (which return values, change the
//! graph, drop handles or fail), under random encoder options.
//!
//! The encode must fail with an error or give bytes that decode. When no
//! handler touched the graph, the decoded graph must equal the input, with
//! every object a handler froze standing as `Body::Frozen` of the values the
//! handler returned (no THAW handler runs). Nodes the graph does not reach
//! through strong handles are emptied before encoding unless `keep_handles`
//! holds them, so weak references to them are gone; with `keep_handles`, a
//! graph with weak references to such live nodes is not compared (see
//! `not_comparable`, also for shared cells of Perl's immortals and aliases
//! of blessed scalar cells).
#![no_main]

use arbitrary::Arbitrary;
#[path = "graph.rs"]
mod graph;
use graph::{id, reach};

use libfuzzer_sys::fuzz_target;
use sereal::{
    Body, CallbackPolicy, Compression, Encoder, EncoderOptions, Error, ErrorKind, Key, Ref,
    Value, WeakRef,
};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

const CLASSES: [&str; 4] = ["A", "B::C", "Zoë", "D"];

#[derive(Arbitrary, Clone, Debug)]
enum Scalar {
    Undef,
    CanonicalUndef,
    Bool(bool),
    True,
    False,
    Int(i64),
    UInt(u64),
    Float(f32),
    Double(f64),
    LongDouble([u8; 16]),
    Float128([u8; 16]),
    Text(String),
    Bytes(Vec<u8>),
    Utf8(Vec<u8>), // possibly invalid UTF-8
}

/// A slot's content: a scalar, or a handle on node `n % nodes`.
#[derive(Arbitrary, Clone, Debug)]
enum Item {
    Scalar(Scalar),
    Ref(u8),
    Weak(u8),
    Alias(u8),
}

#[derive(Arbitrary, Debug)]
enum KeyName {
    Few(u8), // "k0" to "k3", so keys repeat
    Text(String),
    Utf8(String),
    Bytes(Vec<u8>),
}

#[derive(Arbitrary, Debug)]
enum Op {
    Array,
    Hash,
    Scalar(Item),
    Regexp(String, u8),
    Frozen(u8), // an already frozen object (as decoded without THAW)
    /// Array: push; hash: insert under key "k"; scalar cell: set.
    Push(u8, Item),
    Insert(u8, KeyName, Item),
    Bless(u8, u8),
}

#[derive(Arbitrary, Clone, Debug)]
enum Step {
    Return(Item),
    ReturnSelf,
    Push(u8, Item),
    Clear(u8),
    DropHandle(u8),
    Fail,
}

#[derive(Arbitrary, Debug)]
struct Handler {
    class: u8,
    steps: Vec<Step>,
}

#[derive(Arbitrary, Debug)]
struct Options {
    protocol: u8,
    sort_keys: bool,
    canonical: bool,
    dedupe_strings: bool,
    aliased_dedupe_strings: bool,
    no_shared_hashkeys: bool,
    freeze_callbacks: bool,
    compression: u8,
    compress_threshold: u8,
    compress_level: Option<u8>,
    snapshot: bool,
    /// Keep a strong handle on every node while encoding (all nodes are then
    /// shared, and handlers can reach any node); otherwise reference counts
    /// are the graph's own.
    keep_handles: bool,
}

#[derive(Arbitrary, Debug)]
struct Program {
    options: Options,
    ops: Vec<Op>,
    root: Item,
    handlers: Vec<Handler>,
}

type Pool = Rc<RefCell<Vec<Option<Ref>>>>;

impl Scalar {
    fn value(&self) -> Value {
        match self {
            Scalar::Undef => Value::Undef,
            Scalar::CanonicalUndef => Value::CanonicalUndef,
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::True => Value::True,
            Scalar::False => Value::False,
            Scalar::Int(i) => Value::Int(*i),
            Scalar::UInt(u) => Value::UInt(*u),
            Scalar::Float(f) => Value::Float(*f),
            Scalar::Double(d) => Value::Double(*d),
            Scalar::LongDouble(b) => Value::LongDouble(Box::new(*b)),
            Scalar::Float128(b) => Value::Float128(Box::new(*b)),
            Scalar::Text(s) => Value::from(s.as_str()),
            Scalar::Bytes(b) => Value::bytes(b),
            Scalar::Utf8(b) => Value::Utf8(sereal::Str::new(b)),
        }
    }
}

fn node(pool: &Pool, n: u8) -> Option<Ref> {
    let pool = pool.borrow();
    match pool.len() {
        0 => None,
        len => pool[n as usize % len].clone(),
    }
}

fn item(pool: &Pool, it: &Item) -> Value {
    let handle = |n| node(pool, n);
    match it {
        Item::Scalar(s) => s.value(),
        Item::Ref(n) => handle(*n).map_or(Value::Undef, Value::Ref),
        Item::Weak(n) => handle(*n).map_or(Value::Undef, |r| Value::weak(&r)),
        Item::Alias(n) => handle(*n).map_or(Value::Undef, Value::Alias),
    }
}

fn key(k: &KeyName) -> Key {
    match k {
        KeyName::Few(n) => Key::from(format!("k{}", n % 4)),
        KeyName::Text(s) => Key::from(s.as_str()),
        KeyName::Utf8(s) => Key::utf8(s),
        KeyName::Bytes(b) => Key::bytes(b),
    }
}

/// Stores `v` in `node` (see `Op::Push`); errors when the node is in use.
/// A scalar cell may get an alias, which the encoder refuses (no Perl
/// scalar holds another node itself).
fn put(node: &Ref, k: Key, v: Value) -> sereal::Result<()> {
    match &mut *node.body_mut()? {
        Body::Array(a) | Body::Frozen(a) => a.push(v),
        Body::Hash(h) => drop(h.insert(k, v)),
        Body::Scalar(s) => *s = v,
        Body::Regexp(_) => {}
    }
    Ok(())
}

fn clear(node: &Ref) -> sereal::Result<()> {
    match &mut *node.body_mut()? {
        Body::Array(a) | Body::Frozen(a) => a.clear(),
        Body::Hash(h) => h.clear(),
        Body::Scalar(s) => *s = Value::Undef,
        Body::Regexp(_) => {}
    }
    Ok(())
}

/// A node's identity: the address of its body.
/// Empties every node of `all` that `root` does not reach through strong
/// handles, so that, once the outside handles go, those nodes are freed
/// (cycles among them too) and weak references to them are gone.
fn cut_unreachable(root: &Value, all: &[WeakRef]) {
    let reached = reach(root, false, |_| {});
    for r in all.iter().filter_map(WeakRef::upgrade) {
        if !reached.contains(&id(&r)) {
            r.set(Body::Scalar(Value::Undef)).expect("nothing borrows the node");
        }
    }
}

/// Whether the decoded graph may differ from the input by design:
/// - a weak handle reaches a live node the graph does not hold strongly:
///   the encoder writes one of those handles as a strong reference (as Perl
///   does: `PAD` in place of `WEAKEN`, so that the decoder does not free the
///   node), which one depending on the walk order;
/// - a scalar cell holds one of Perl's immortals (`True`, `False`,
///   `CanonicalUndef`): such cells are written by tag, never tracked (as
///   Perl does), so their sharing is not kept;
/// - an alias of a blessed scalar cell that no FREEZE handler froze: it is
///   written as its content, as Perl writes a blessed scalar, and its class
///   is kept only when a reference to it comes later in the document.
fn not_comparable(root: &Value) -> bool {
    let strong = reach(root, false, |_| {});
    let mut found = false;
    reach(root, true, |v| match v {
        Value::Weak(w) => {
            found |= w.upgrade().is_some_and(|r| !strong.contains(&id(&r)));
        }
        Value::Ref(r) | Value::Alias(r) => {
            found |= matches!(
                &*r.body(),
                Body::Scalar(Value::True | Value::False | Value::CanonicalUndef)
            );
            found |= matches!(v, Value::Alias(_))
                && r.class().is_some()
                && matches!(&*r.body(), Body::Scalar(_));
        }
        _ => {}
    });
    found
}

fn options(o: &Options) -> EncoderOptions {
    let compress = [Compression::None, Compression::Snappy, Compression::Zlib, Compression::Zstd]
        [o.compression as usize % 4];
    EncoderOptions::new()
        .protocol_version(1 + o.protocol % 5)
        .canonical(o.canonical)
        .sort_keys(o.sort_keys || o.canonical)
        .dedupe_strings(o.dedupe_strings)
        .aliased_dedupe_strings(o.aliased_dedupe_strings)
        .no_shared_hashkeys(o.no_shared_hashkeys)
        .freeze_callbacks(o.freeze_callbacks)
        .compress(compress)
        .compress_threshold(o.compress_threshold as usize)
        .compress_level(o.compress_level.map(|l| 1 + i32::from(l % 10)))
        .policy(if o.snapshot { CallbackPolicy::Snapshot } else { CallbackPolicy::Guard })
}

/// Builds the graph; returns the root.
fn build(p: &Program, pool: &Pool) -> Value {
    for op in p.ops.iter().take(64) {
        let new = match op {
            Op::Array => Ref::array(vec![]),
            Op::Hash => Ref::hash(Default::default()),
            Op::Scalar(it) => Ref::scalar(item(pool, it)),
            Op::Regexp(pattern, flags) => {
                let flags: String = "imsx"
                    .chars()
                    .enumerate()
                    .filter(|(i, _)| flags & (1 << i) != 0)
                    .map(|(_, c)| c)
                    .collect();
                Ref::regexp(pattern, &flags)
            }
            Op::Frozen(class) => {
                Ref::new(Body::Frozen(Default::default())).blessed(CLASSES[*class as usize % 4])
            }
            Op::Push(n, it) | Op::Insert(n, _, it) => {
                let k = match op {
                    Op::Insert(_, k, _) => key(k),
                    _ => Key::from("k"),
                };
                if let Some(r) = node(pool, *n) {
                    put(&r, k, item(pool, it)).expect("nothing borrows the node");
                }
                continue;
            }
            Op::Bless(n, class) => {
                if let Some(r) = node(pool, *n) {
                    r.bless(CLASSES[*class as usize % 4]);
                }
                continue;
            }
        };
        pool.borrow_mut().push(Some(new));
    }
    item(pool, &p.root)
}

/// What the handlers did: the values each froze an object to, and whether
/// any tried to change the graph.
#[derive(Default)]
struct Log {
    frozen: RefCell<Vec<(Ref, Vec<Value>)>>,
    mutated: Cell<bool>,
}

fn register(enc: &mut Encoder, h: &Handler, pool: &Pool, log: &Rc<Log>) {
    let steps: Vec<Step> = h.steps.iter().take(8).cloned().collect();
    let (pool, log) = (pool.clone(), log.clone());
    enc.on_freeze(CLASSES[h.class as usize % 4], move |obj| {
        let mut out = Vec::new();
        for step in &steps {
            match step {
                Step::Return(it) => out.push(item(&pool, it)),
                Step::ReturnSelf => out.push(Value::from(obj)),
                Step::Push(n, it) => {
                    log.mutated.set(true);
                    if let Some(r) = node(&pool, *n) {
                        let _ = put(&r, Key::from("k"), item(&pool, it));
                    }
                }
                Step::Clear(n) => {
                    log.mutated.set(true);
                    if let Some(r) = node(&pool, *n) {
                        let _ = clear(&r);
                    }
                }
                Step::DropHandle(n) => {
                    log.mutated.set(true);
                    let len = pool.borrow().len();
                    if len > 0 {
                        let old = pool.borrow_mut()[*n as usize % len].take();
                        drop(old);
                    }
                }
                Step::Fail => return Err(Error::new(ErrorKind::Invalid("FREEZE failed".into()))),
            }
        }
        log.frozen.borrow_mut().push((obj.clone(), out.clone()));
        Ok(out)
    });
}

fuzz_target!(|p: Program| {
    let pool: Pool = Default::default();
    let root = build(&p, &pool);
    let mut all: Vec<WeakRef> = pool.borrow().iter().flatten().map(Ref::downgrade).collect();
    if !p.options.keep_handles {
        // Only the graph's own handles while encoding: no outside ones,
        // strong or weak, to change what the encoder tracks. What is left
        // alive is reachable from the root.
        cut_unreachable(&root, &all);
        pool.borrow_mut().clear();
        all.clear();
    }
    let log = Rc::new(Log::default());
    let mut replaced = Vec::new();
    let encoded = Encoder::new(options(&p.options)).and_then(|mut enc| {
        for h in p.handlers.iter().take(4) {
            register(&mut enc, h, &pool, &log);
        }
        enc.encode(&root)
    });
    if let Ok(bytes) = &encoded {
        let decoded = sereal::decode(bytes).expect("the encoder's output decodes");
        if !log.mutated.get() {
            let frozen = log.frozen.take();
            for (i, (obj, values)) in frozen.iter().enumerate() {
                assert!(
                    frozen[..i].iter().all(|(o, _)| !o.ptr_eq(obj)),
                    "FREEZE ran twice for one object"
                );
                let body = Body::Frozen(values.iter().cloned().collect());
                let mut slot = obj.body_mut().expect("nothing borrows the node");
                // The old body may hold cycles the root no longer reaches:
                // dismantled at the end, with everything else.
                replaced.push(Value::Ref(Ref::new(std::mem::replace(&mut *slot, body))));
                drop(slot);
            }
            drop(frozen);
            if !not_comparable(&root) {
                assert!(decoded.perl_eq(&root), "decoded {decoded:?}\n   input {root:?}");
            }
        }
        decoded.dismantle();
    }
    // Free cycles: everything still alive is reachable from the root, from
    // the pool or from `all`.
    drop(log);
    pool.borrow_mut().clear();
    root.dismantle();
    replaced.iter().for_each(Value::dismantle);
    for r in all.iter().filter_map(WeakRef::upgrade) {
        Value::from(r).dismantle();
    }
});
