//! What the encoder keeps of FREEZE results: an object's values are
//! computed once; once written for an object that is tracked (a later
//! reference to it is a `REFP` to what was written), the encoder lets them
//! go at the next callback boundary instead of holding every result until
//! the document ends. Their drop runs where the containers being written are
//! locked, so user code in a dropped value cannot change them.

use sereal::{
    Array, Body, CallbackPolicy, Decoder, Encoder, EncoderOptions, ErrorKind, Foreign, Ref, Value,
};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

const POLICIES: [CallbackPolicy; 2] = [CallbackPolicy::Guard, CallbackPolicy::Snapshot];

fn encoder(policy: CallbackPolicy) -> Encoder {
    Encoder::new(EncoderOptions::new().freeze_callbacks(true).policy(policy)).unwrap()
}

fn r(node: &Ref) -> Value {
    Value::Ref(node.clone())
}

fn arr(items: impl IntoIterator<Item = Value>) -> Ref {
    Ref::array(items.into_iter().collect::<Array>())
}

/// What an object whose FREEZE returned `vals` decodes to without THAW.
fn frozen(class: &str, vals: impl IntoIterator<Item = Value>) -> Ref {
    Ref::new(Body::Frozen(vals.into_iter().collect())).blessed(class)
}

fn decode(bytes: &[u8]) -> Value {
    Decoder::default().decode(bytes).unwrap().into_value()
}

/// `n` objects of class `W`, each with its id.
fn objects(n: i64) -> Vec<Ref> {
    (0..n)
        .map(|i| Ref::hash([("id", i)].into_iter().collect()).blessed("W"))
        .collect()
}

/// An encoder whose FREEZE handler for `W` returns `[[id, token]]`, a
/// token being a foreign value (written as the string "token") that holds
/// a handle on one `Rc`; at each call, the handler records whether the
/// previous call's token is still alive.
fn watching_encoder(policy: CallbackPolicy) -> (Encoder, Rc<RefCell<Vec<bool>>>) {
    let opts = EncoderOptions::new()
        .freeze_callbacks(true)
        .policy(policy)
        .stringify_unknown(true);
    let mut enc = Encoder::new(opts).unwrap();
    let alive_at_next: Rc<RefCell<Vec<bool>>> = Rc::default();
    let last: RefCell<Option<Rc<()>>> = RefCell::default();
    let seen = alive_at_next.clone();
    enc.on_freeze("W", move |o| {
        if let Some(t) = last.borrow_mut().take() {
            seen.borrow_mut().push(Rc::strong_count(&t) > 1);
        }
        let token = Rc::new(());
        *last.borrow_mut() = Some(token.clone());
        let id = o.as_hash().unwrap().get("id").cloned().unwrap();
        let inner = Value::array([id, Value::Foreign(Foreign::new(token))]);
        Ok(vec![inner])
    });
    enc.on_stringify(|_| Ok("token".into()));
    (enc, alive_at_next)
}

#[test]
fn written_values_are_released_by_the_next_callback() {
    for policy in POLICIES {
        let objs = objects(5);
        let root = Value::array(objs.iter().map(r));
        let (mut enc, alive) = watching_encoder(policy);
        let bytes = enc.encode(&root).unwrap();
        assert_eq!(
            *alive.borrow(),
            vec![false; 4],
            "{policy:?}: an earlier FREEZE result outlived its writing"
        );
        let expected = Value::array((0..5).map(|i| {
            let vals = [Value::array([Value::from(i), Value::from("token")])];
            r(&frozen("W", vals))
        }));
        assert!(decode(&bytes) == expected, "{policy:?}");
    }
}

#[test]
fn an_object_met_again_refers_to_its_first_writing() {
    for policy in POLICIES {
        let objs = objects(3);
        // Each object twice, the second time after other objects' FREEZE
        // calls (which drop the released values), once through a weak
        // reference.
        let mut slots: Vec<Value> = objs.iter().map(r).collect();
        slots.push(r(&objs[0]));
        slots.push(Value::Weak(objs[1].downgrade()));
        slots.push(Value::array([r(&objs[2])]));
        let root = Value::array(slots);
        let calls = Rc::new(Cell::new(0));
        let mut enc = encoder(policy);
        let c = calls.clone();
        enc.on_freeze("W", move |o| {
            c.set(c.get() + 1);
            Ok(vec![o.as_hash().unwrap().get("id").cloned().unwrap()])
        });
        let bytes = enc.encode(&root).unwrap();
        assert_eq!(calls.get(), 3, "{policy:?}: FREEZE once per object");
        let got = decode(&bytes);
        let a = got.as_array().unwrap();
        assert_eq!(a.len(), 6, "{policy:?}");
        let node = |v: &Value| match v {
            Value::Ref(n) => n.clone(),
            Value::Weak(w) => w.upgrade().unwrap(),
            v => panic!("{policy:?}: not a reference: {v:?}"),
        };
        assert!(node(&a[0]).ptr_eq(&node(&a[3])), "{policy:?}");
        assert!(node(&a[1]).ptr_eq(&node(&a[4])), "{policy:?}");
        assert!(matches!(&a[4], Value::Weak(_)), "{policy:?}");
        let inner = node(&a[5]);
        let inner = inner.as_array().unwrap();
        assert!(node(&a[2]).ptr_eq(&node(&inner[0])), "{policy:?}");
        for (i, v) in a[..3].iter().enumerate() {
            assert!(
                Value::Ref(node(v)) == r(&frozen("W", [Value::from(i as i64)])),
                "{policy:?}: object {i}"
            );
        }
    }
}

/// A value whose drop runs user code: it tries to push onto `target` and
/// records what the mutation API answered.
struct Pusher {
    target: Ref,
    answers: Rc<RefCell<Vec<bool>>>,
}

impl Drop for Pusher {
    fn drop(&mut self) {
        let pushed = self.target.array_mut().map(|mut a| a.push(0)).is_ok();
        self.answers.borrow_mut().push(pushed);
    }
}

#[test]
fn dropping_released_values_cannot_change_the_containers_being_written() {
    let objs = objects(3);
    let root = arr(objs.iter().map(r));
    let answers: Rc<RefCell<Vec<bool>>> = Rc::default();
    let opts = EncoderOptions::new()
        .freeze_callbacks(true)
        .policy(CallbackPolicy::Guard)
        .stringify_unknown(true);
    let mut enc = Encoder::new(opts).unwrap();
    {
        let (root, answers) = (root.clone(), answers.clone());
        enc.on_freeze("W", move |_| {
            let p = Pusher {
                target: root.clone(),
                answers: answers.clone(),
            };
            Ok(vec![Value::Foreign(Foreign::new(p))])
        });
    }
    enc.on_stringify(|_| Ok("pusher".into()));
    let res = enc.encode(&r(&root));
    // The first object's values are dropped at the second's FREEZE call,
    // while the root is locked: the push is refused, and the encode fails
    // cleanly, naming the drop, rather than write a count the root no
    // longer has.
    assert_eq!(answers.borrow().first(), Some(&false), "{res:?}");
    match res {
        Err(e) => assert!(
            matches!(e.kind(), ErrorKind::Callback(m)
                if m.starts_with("dropping the FREEZE values")
                    && m.contains("tried to change a container")),
            "{e}"
        ),
        Ok(b) => panic!("a refused change must fail the encode: {b:?}"),
    }
    // Values dropped with the body, once nothing is locked, may change it.
    let answers = answers.borrow().clone();
    let pushed = answers.iter().filter(|&&a| a).count();
    assert_eq!(root.as_array().unwrap().len(), 3 + pushed, "{answers:?}");
    let bytes = encoder(CallbackPolicy::Guard).encode(&r(&root)).unwrap();
    assert!(decode(&bytes) == r(&root));
}

#[test]
fn snapshot_an_object_whose_live_handles_a_callback_dropped_is_still_shared() {
    // The Snapshot policy writes a container as it was entered: the FREEZE
    // handler drops every live handle to the object, which the snapshot
    // still holds twice; its values are released once written, and the
    // second slot refers to the first writing.
    let obj = Ref::hash([("id", 9)].into_iter().collect()).blessed("W");
    let holder = arr([r(&obj), r(&obj)]);
    drop(obj);
    let calls = Rc::new(Cell::new(0));
    let mut enc = encoder(CallbackPolicy::Snapshot);
    {
        let (holder, calls) = (holder.clone(), calls.clone());
        enc.on_freeze("W", move |o| {
            calls.set(calls.get() + 1);
            let _ = holder.array_mut().map(|mut a| a.clear());
            let id = o.as_hash().unwrap().get("id").cloned().unwrap();
            Ok(vec![Value::array([id])])
        });
    }
    let bytes = enc.encode(&r(&holder)).unwrap();
    assert_eq!(calls.get(), 1, "FREEZE once per object");
    let got = decode(&bytes);
    let a = got.as_array().unwrap();
    assert_eq!(a.len(), 2);
    let (Value::Ref(first), Value::Ref(second)) = (&a[0], &a[1]) else {
        panic!("not two references: {got:?}");
    };
    assert!(first.ptr_eq(second), "{got:?}");
    assert!(a[0] == r(&frozen("W", [Value::array([9])])), "{got:?}");
}

/// A Snapshot encoder with FREEZE handlers for `W` (returning `[id]`) and
/// `V` (running `v`), and foreign values written as "z".
fn snapshot_encoder(v: impl Fn() -> Vec<Value> + 'static) -> Encoder {
    let opts = EncoderOptions::new()
        .freeze_callbacks(true)
        .policy(CallbackPolicy::Snapshot)
        .stringify_unknown(true);
    let mut enc = Encoder::new(opts).unwrap();
    enc.on_freeze("W", |o| {
        Ok(vec![o.as_hash().unwrap().get("id").cloned().unwrap()])
    });
    enc.on_freeze("V", move |_| Ok(v()));
    enc.on_stringify(|_| Ok("z".into()));
    enc
}

/// The decoded frozen `W` of id 7 at `v`, checked.
fn w7(v: &Value) -> Ref {
    let Value::Ref(n) = v else {
        panic!("not a reference: {v:?}")
    };
    assert!(v == &r(&frozen("W", [Value::from(7)])), "{v:?}");
    n.clone()
}

#[test]
fn snapshot_an_object_moved_into_freeze_values_and_met_again_in_the_copy() {
    // `c = [y, foreign, obj]`: y's FREEZE moves obj out of `c` into its
    // values, which are let go at the foreign value's callback; the
    // snapshot of `c` still holds obj, whose count then reads 1.
    let obj = Ref::hash([("id", 7)].into_iter().collect()).blessed("W");
    let y = Ref::hash(Default::default()).blessed("V");
    let c = arr([r(&y), Value::Foreign(Foreign::new(0u8)), r(&obj)]);
    drop((obj, y));
    let cc = c.clone();
    let mut enc = snapshot_encoder(move || {
        let moved = cc.array_mut().unwrap().pop().unwrap();
        vec![moved]
    });
    let bytes = enc.encode(&r(&c)).unwrap();
    let got = decode(&bytes);
    let a = got.as_array().unwrap();
    assert_eq!(a.len(), 3, "{got:?}");
    let Value::Ref(v) = &a[0] else {
        panic!("{got:?}")
    };
    let Body::Frozen(vals) = &*v.body() else {
        panic!("{got:?}")
    };
    assert_eq!(a[1], Value::from("z"), "{got:?}");
    assert!(
        w7(&vals[0]).ptr_eq(&w7(&a[2])),
        "obj is not shared: {got:?}"
    );
}

#[test]
fn snapshot_an_object_moved_to_a_later_container_that_a_callback_empties() {
    // `c = [y, d, foreign, obj]`: y's FREEZE moves obj from `c` into `d`,
    // written next; the foreign value's callback empties `d`; the snapshot
    // of `c` still holds obj.
    let obj = Ref::hash([("id", 7)].into_iter().collect()).blessed("W");
    let y = Ref::hash(Default::default()).blessed("V");
    let d = arr([]);
    let c = arr([r(&y), r(&d), Value::Foreign(Foreign::new(0u8)), r(&obj)]);
    drop((obj, y));
    let (cc, dd) = (c.clone(), d.clone());
    let mut enc = snapshot_encoder(move || {
        let moved = cc.array_mut().unwrap().pop().unwrap();
        dd.array_mut().unwrap().push(moved);
        vec![]
    });
    let de = d.clone();
    enc.on_stringify(move |_| {
        de.array_mut().unwrap().clear();
        Ok("z".into())
    });
    let bytes = enc.encode(&r(&c)).unwrap();
    let got = decode(&bytes);
    let a = got.as_array().unwrap();
    assert_eq!(a.len(), 4, "{got:?}");
    assert!(a[0] == r(&frozen("V", [])), "{got:?}");
    let inner = a[1].as_array().unwrap();
    assert_eq!(a[2], Value::from("z"), "{got:?}");
    assert!(
        w7(&inner[0]).ptr_eq(&w7(&a[3])),
        "obj is not shared: {got:?}"
    );
}
