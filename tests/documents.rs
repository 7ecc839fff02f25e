//! What a decode returns: a [`sereal::Document`] that frees its own cycles,
//! keeps what handles outside it hold, and reads what Perl reads.
//!
//! The documents were written by Perl 5.003:
//! ```perl
//! my $h = {}; $h->{self} = $h;                                 # self_hash
//! my $a = []; push @$a, $a;                                    # self_array
//! my $x; $x = \$x; encode(\$x);                                # self_scalar
//! my $p = {name => "p"}; $p->{kid} = {up => $p};               # parent_kid
//! my $o = bless {}, "Obj"; $o->{me} = $o; encode([$o]);        # object
//! ... weaken($q->{kid}{up});                                   # weak_parent
//! my $r1 = []; my $r2 = [$r1]; push @$r1, $r2; encode([$r1, $r2, [1, 2, 3]]);
//! my ($s1, $s2) = ("cell value") x 2;                          # copy_tracked
//! Sereal::Encoder->new({dedupe_strings => 1})->encode([\$s1, \$s1, \$s2, \$s2]);
//! ```

use sereal::{decode, encode, encode_with, EncoderOptions, Value};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const SELF_HASH: &str = "3df3726c050028aa016473656c662902";
const PARENT_KID: &str = "3df3726c050028aa02646e616d656170636b6964516275702902";
const WEAK_PARENT: &str = "3df3726c050028aa02646e616d656170636b696451627570302902";
const TWO_CYCLE: &str = "3df3726c05004328ab0128ab0129032906282b03010203";
const COPY_TRACKED: &str = "3df3726c05004428ea63656c6c2076616c7565290328af032911";

#[test]
fn a_dropped_document_frees_its_cycle() {
    let doc = decode(&hex(SELF_HASH)).unwrap();
    assert!(doc.has_cycles());
    let weak = doc.as_strong_ref().unwrap().downgrade();
    drop(doc);
    assert!(weak.upgrade().is_none(), "the self-referencing hash leaked");

    let doc = decode(&hex(TWO_CYCLE)).unwrap();
    let weaks: Vec<_> = (0..3)
        .map(|i| doc.at(i).unwrap().as_strong_ref().unwrap().downgrade())
        .collect();
    drop(doc);
    assert!(weaks.iter().all(|w| w.upgrade().is_none()));
}

#[test]
fn documents_without_cycles_are_plain() {
    let doc = decode(&hex(WEAK_PARENT)).unwrap();
    assert!(
        !doc.has_cycles(),
        "a weak back-reference closes no strong cycle"
    );
    let weak = doc.as_strong_ref().unwrap().downgrade();
    drop(doc);
    assert!(weak.upgrade().is_none());
    let shared = Value::array([Value::array([1])]);
    let doc = decode(&encode(&shared).unwrap()).unwrap();
    assert!(!doc.has_cycles());
}

#[test]
fn handles_kept_outside_stay_whole() {
    // keep the child: it holds the parent, which holds the child
    let doc = decode(&hex(PARENT_KID)).unwrap();
    let kid = doc.get("kid").unwrap();
    drop(doc);
    let parent = kid.get("up").unwrap();
    assert_eq!(parent.get("name"), Some(Value::from("p")));
    assert!(parent
        .get("kid")
        .unwrap()
        .as_strong_ref()
        .unwrap()
        .ptr_eq(kid.as_strong_ref().unwrap()));
    drop(parent);
    kid.dismantle();

    // a clone of the document is a handle from outside too
    let doc = decode(&hex(SELF_HASH)).unwrap();
    let copy = doc.clone();
    drop(doc);
    assert!(copy.get("self").is_some());
    let weak = copy.as_strong_ref().unwrap().downgrade();
    drop(copy);
    assert!(weak.upgrade().is_none());

    // into_value hands the cycle to the caller
    let v = decode(&hex(SELF_HASH)).unwrap().into_value();
    assert!(v.get("self").is_some());
    v.dismantle();
}

#[test]
fn a_copy_of_a_tracked_string_reads_and_writes_as_perls() {
    let perl = hex(COPY_TRACKED);
    let doc = decode(&perl).unwrap();
    let cell = doc.at(0).unwrap();
    assert!(matches!(
        &*cell.as_strong_ref().unwrap().body(),
        sereal::Body::Scalar(v) if v.as_str() == Some("cell value")
    ));
    // a handle held outside the graph could be written later: while it
    // lives, the encoder does not COPY the string it holds
    drop(cell);
    let again = encode_with(&doc, &EncoderOptions::new().dedupe_strings(true)).unwrap();
    assert_eq!(again, perl);
    // what the roundtrip fuzz target found: a tracked string, a dedupe
    // re-encoding that COPYs it, and the decode of that
    let found = b"=\xF3rl\x05\x00\x43\xe5foooo\x00\x43\xe5foooo\x2e\x02\x2e\x02";
    let v = decode(found).unwrap();
    let opts = EncoderOptions::new().canonical(true).dedupe_strings(true);
    let bytes = encode_with(&v, &opts).unwrap();
    let back = decode(&bytes).unwrap();
    assert!(back.perl_eq(&v), "{back:?} != {v:?}");
}

#[test]
fn weak_references_to_perls_immortals_stay_alive() {
    // Perl: [\!!0, weaken(my $w = \!!0)], and likewise \!!1 and \undef
    for (tag, value) in [
        ("3a", Value::False),
        ("3b", Value::True),
        ("39", Value::CanonicalUndef),
    ] {
        let perl = hex(&format!("3df3726c05004228{tag}3028{tag}"));
        let doc = decode(&perl).unwrap();
        let Value::Weak(w) = doc.at(1).unwrap() else {
            panic!("not a weak reference: {doc:?}")
        };
        let target = w.upgrade().expect("the weak reference is alive");
        assert!(matches!(&*target.body(), sereal::Body::Scalar(v) if *v == value));
        drop(target);
        assert_eq!(encode(&doc).unwrap(), perl, "re-encoding of {tag}");
    }
    // a weak reference to an ordinary scalar that nothing else holds is gone,
    // as in Perl
    let doc = decode(&hex("3df3726c0500422834 302834")).unwrap();
    assert!(doc.at(1).unwrap().is_undef());
}
