//! A back-reference named from below a weak reference may close no strong
//! cycle. The decoder takes every back-reference to an item still being
//! read as a possible cycle (which the document frees when dropped); at the
//! end of the decode, what only such a guess holds is let go, so the graph
//! holds what Perl's decoder holds: a node only a weak reference reaches is
//! gone, one on a strong cycle stays.

mod common;

use sereal::{decode, encode, Body, Document, Value};

/// Perl's header, protocol 5, no compression.
fn doc(body: &[u8]) -> Vec<u8> {
    [b"=\xF3rl\x05\x00".as_slice(), body].concat()
}

/// The fuzz finding (roundtrip target): a cell named from below two weak
/// references, held by a cell only a weak reference holds. Protocol 1.
const FOUND: &[u8] = b"=srl\x01\x00\xb0\x28\xa8\xb0\x28\xa8\x29\x08";

/// A root weakly referring to `k` cells, each holding the next, the last
/// holding (weakly) an array that names them all, innermost first: each
/// cell is held by the one outside it, so letting go of them takes `k`
/// rounds of the quick check.
fn chain(k: u8) -> Vec<u8> {
    let mut body = vec![0xb0, 0x28];
    body.extend(std::iter::repeat_n(0xa8, k as usize));
    body.extend([0xb0, 0x28, 0x40 + k]);
    for i in 1..=k {
        // cell i (innermost first) is at body offset 3 + k - i
        body.extend([0x29, 3 + k - i]);
    }
    doc(&body)
}

/// A root weakly referring to a cell that holds a reference to a new cell
/// holding a reference back to the first: a strong cycle of two, which
/// Perl never frees.
fn self_cycle() -> Vec<u8> {
    doc(&[0xb0, 0x28, 0xa8, 0x29, 0x03])
}

/// The target of the weak reference the root is, if it is alive. (The
/// root's tag is tracked, but nothing names it: it reads as the weak
/// reference itself, not as an alias of a cell holding one.)
fn weak_target(d: &Document) -> Option<sereal::Ref> {
    let root = d.root();
    let Value::Weak(w) = root else {
        panic!("the root is a weak reference: {root:?}")
    };
    w.upgrade()
}

#[test]
fn what_only_a_guessed_cycle_held_is_gone_after_the_decode() {
    for input in [
        FOUND.to_vec(),
        chain(1),
        chain(3),
        chain(4),
        chain(5),
        chain(15),
    ] {
        let d = decode(&input).unwrap();
        assert!(weak_target(&d).is_none(), "{input:02x?} left {d:?}");
        assert!(!d.has_cycles(), "{input:02x?}");
        // A dead weak reference is written as undef, and reads back as one.
        assert_eq!(encode(&d).unwrap(), doc(&[0x25]), "{input:02x?}");
    }
}

#[test]
fn a_strong_cycle_below_a_weak_reference_stays() {
    let d = decode(&self_cycle()).unwrap();
    let target = weak_target(&d).expect("the cycle is alive");
    let referent = |cell: &sereal::Ref| match &*cell.body() {
        Body::Scalar(Value::Ref(r)) => r.clone(),
        _ => panic!("a cell holding a reference: {d:?}"),
    };
    let back = referent(&referent(&target));
    assert!(back.ptr_eq(&target), "{d:?}");
    drop(back);
    assert!(d.has_cycles());
    drop(target);
    let again = decode(&encode(&d).unwrap()).unwrap();
    assert!(again.perl_eq(&d), "{again:?} != {d:?}");
}

/// Perl decodes each document and encodes what it got; ours must write the
/// same bytes for what it decoded.
#[test]
fn the_graphs_are_perls() {
    if !common::perl_sereal("weak back-references against Perl") {
        return;
    }
    let inputs = [FOUND.to_vec(), chain(2), chain(6), chain(15), self_cycle()];
    let hex: Vec<String> = inputs
        .iter()
        .map(|d| d.iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    let script = format!(
        "use Sereal::Decoder; use Sereal::Encoder;\n\
         my $d = Sereal::Decoder->new; my $e = Sereal::Encoder->new;\n\
         for my $h (qw({})) {{ print unpack('H*', $e->encode($d->decode(pack('H*', $h)))), \"\\n\" }}\n",
        hex.join(" ")
    );
    let perls = common::perl_hex_lines(&script);
    assert_eq!(perls.len(), inputs.len());
    for (input, perl) in inputs.iter().zip(perls) {
        let ours = encode(&decode(input).unwrap()).unwrap();
        assert_eq!(ours, perl, "{input:02x?}");
    }
}
