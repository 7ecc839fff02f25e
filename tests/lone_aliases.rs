//! Slots read as aliases of cells nothing else holds. A tracked item in a
//! slot, or a `COPY` of a tracked string (which answers the string's
//! offset from then on, as in Perl's decoder), is read as an alias of a
//! cell, so that a later `REFP` or `ALIAS` to the offset shares it. When
//! none does, Perl's slot is a plain scalar, and so is ours: the decode
//! gives the value, not an alias whose cell only it holds. Perl writes
//! such COPYs with `dedupe_strings` when a shared scalar's string repeats
//! (`[$o, $o, "s", "s"]` for an object `$o = bless \"s"`), and so does
//! our encoder once every handle on the scalar is met.

use sereal::{decode, encode_with, Decoder, EncoderOptions, Ref, Value};
use std::fmt::Write as _;
mod common;

const S: &str = "some string";

fn dedupe() -> EncoderOptions {
    EncoderOptions::new().dedupe_strings(true).sort_keys(true)
}

/// Whether `v` is the plain string `S`: the variant itself, its text and
/// how it prints, not only graph equality.
fn plain(v: &Value) -> bool {
    matches!(v, Value::Bytes(_)) && v.as_str() == Some(S) && format!("{v:?}") == format!("{S:?}")
}

/// The shapes of the Perl oracle: each a Perl expression (with `$o`, a
/// blessed scalar, and `$r`, a plain one, in scope) and, where the decode
/// gives back what was written, the same graph here.
fn shapes() -> Vec<(&'static str, Option<Value>)> {
    let object = || Ref::scalar(S).blessed("Cls");
    let shared = |cell: Ref, tail: Vec<Value>| {
        let mut items = vec![Value::Ref(cell.clone()), Value::Ref(cell)];
        items.extend(tail);
        Value::array(items)
    };
    let hash = {
        let o = object();
        Value::hash([
            ("a", Value::Ref(o.clone())),
            ("b", Value::Ref(o)),
            ("c", Value::from(S)),
            ("d", Value::from(S)),
        ])
    };
    vec![
        (
            r#"[$o, $o, "some string", "some string"]"#,
            Some(shared(object(), vec![S.into(), S.into()])),
        ),
        (
            r#"[$r, $r, "some string", "some string"]"#,
            Some(shared(Ref::scalar(S), vec![S.into(), S.into()])),
        ),
        (
            r#"{ a => $o, b => $o, c => "some string", d => "some string" }"#,
            Some(hash),
        ),
        (
            r#"[[$o, $o], ["some string", ["some string"]], "some string"]"#,
            Some(Value::array([
                shared(object(), vec![]),
                Value::array([Value::from(S), Value::array([S])]),
                Value::from(S),
            ])),
        ),
        // A REFP after the COPYs names the last copy, as in Perl: the
        // first copy stays plain, the last shares its cell.
        (r#"[$o, "some string", "some string", $o]"#, None),
        (r#"[$r, "some string", $r, "some string"]"#, None),
    ]
}

/// The brief's graph: a blessed cell held twice and two more copies of
/// its string, whose bytes are Perl's.
#[test]
fn copies_of_a_shared_blessed_cells_string_decode_plain() {
    let cell = Ref::scalar(S).blessed("Cls");
    let v = Value::array([
        Value::Ref(cell.clone()),
        Value::Ref(cell),
        Value::from(S),
        Value::from(S),
    ]);
    let doc = encode_with(&v, &dedupe()).unwrap();
    // ARRAYREF_4 OBJECT "Cls" REFN (tracked) "some string" REFP COPY COPY
    assert_eq!(
        doc,
        common::unhex("3df3726c0500442c63436c7328eb736f6d6520737472696e6729082f082f08")
    );
    let back = decode(&doc).unwrap();
    assert_eq!(*back, v);
    assert!(
        plain(&back.at(2).unwrap()) && plain(&back.at(3).unwrap()),
        "{back:?}"
    );
    assert_eq!(encode_with(&back, &dedupe()).unwrap(), doc);
    // The same through the stream reader and the user header.
    let mut inc = Decoder::default().incremental();
    inc.feed(&doc);
    assert_eq!(*inc.next_document().unwrap().unwrap(), v);
    let mut enc = sereal::Encoder::new(dedupe()).unwrap();
    let with_header = enc.encode_with_header(&Value::from(1), &v).unwrap();
    let (header, _) = Decoder::default().decode_with_header(&with_header).unwrap();
    assert!(plain(&header.unwrap().at(3).unwrap()));
}

/// An item tracked but never referred to, in a slot and at the root, reads
/// as its value; one that is referred to stays shared, through an alias, a
/// reference or a weak reference.
#[test]
fn tracked_slots_nothing_names_read_as_their_value() {
    let doc = |body: &[u8]| [&b"=\xF3rl\x05\x00"[..], body].concat();
    // [tracked "some string", 1]
    let mut body = vec![0x42, 0x80 | 0x6b];
    body.extend_from_slice(S.as_bytes());
    body.push(0x01);
    let v = decode(&doc(&body)).unwrap();
    assert!(plain(&v.at(0).unwrap()), "{v:?}");
    let v = decode(&doc(&body[1..body.len() - 1])).unwrap();
    assert!(plain(&v), "{v:?}");
    // [tracked "x", ALIAS 2] and [tracked "x", REFP 2]: shared
    for second in [0x2e, 0x29] {
        let v = decode(&doc(&[0x42, 0x80 | 0x61, b'x', second, 2])).unwrap();
        let (Value::Alias(a), Value::Alias(b) | Value::Ref(b)) =
            (v.at(0).unwrap(), v.at(1).unwrap())
        else {
            panic!("{v:?}")
        };
        assert!(a.ptr_eq(&b), "{v:?}");
    }
    // [tracked "x", WEAKEN REFP 2]: the weak reference keeps the cell alive
    let v = decode(&doc(&[0x42, 0x80 | 0x61, b'x', 0x30, 0x29, 2])).unwrap();
    let Value::Weak(w) = v.at(1).unwrap() else {
        panic!("{v:?}")
    };
    assert!(w.upgrade().is_some(), "{v:?}");
    // a tracked OBJECT in a slot that nothing names: the reference it is
    let v = decode(&doc(b"\x41\xac\x63Cls\x28\x01")).unwrap();
    let Value::Ref(r) = v.at(0).unwrap() else {
        panic!("{v:?}")
    };
    assert_eq!(r.class().unwrap().as_bytes(), b"Cls");
}

/// Perl writes each shape with `dedupe_strings`; we decode its bytes to
/// the graph written, and write that graph, and what we decoded, as Perl
/// writes its own decode of them (the bytes it wrote, but where Perl's
/// decode differs from what it wrote, or it wrote a temporary array as
/// `REFN ARRAY`).
#[test]
fn shared_scalars_with_repeated_strings_match_perl() {
    if !common::perl_sereal("lone aliases compared with Perl") {
        return;
    }
    let shapes = shapes();
    let mut script = String::from(
        r#"use strict; use warnings; use Sereal::Encoder; use Sereal::Decoder;
        my $o = bless \(my $x = "some string"), "Cls";
        my $r = \(my $y = "some string");
        my $e = Sereal::Encoder->new({ dedupe_strings => 1, sort_keys => 1 });
        my $d = Sereal::Decoder->new;
        "#,
    );
    for (perl, _) in &shapes {
        writeln!(
            script,
            "{{ my $b = $e->encode({perl}); print unpack('H*', $b), \"\\n\", \
             unpack('H*', $e->encode($d->decode($b))), \"\\n\"; }}"
        )
        .unwrap();
    }
    let lines = common::perl_hex_lines(&script);
    for (i, (perl, graph)) in shapes.iter().enumerate() {
        let (written, rewritten) = (&lines[2 * i], &lines[2 * i + 1]);
        let back = decode(written).unwrap();
        if let Some(g) = graph {
            assert_eq!(&*back, g, "{perl}");
            assert_eq!(&encode_with(g, &dedupe()).unwrap(), rewritten, "{perl}");
        }
        assert_eq!(
            &encode_with(&back, &dedupe()).unwrap(),
            rewritten,
            "{perl}: {back:?}"
        );
    }
}
