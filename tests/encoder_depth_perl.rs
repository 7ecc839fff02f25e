//! The encoder's `max_recursion_depth` counted as Perl's encoder counts
//! it: the root takes a level, and so does every array element and hash
//! value that is not a plain scalar (a reference, undef, an immortal, a
//! scalar cell seen from several slots, data Sereal cannot carry), while a
//! reference that is the root or the content of a scalar cell (a reference
//! to a reference) takes none. Perl 5.003 prints, for a broad set of
//! structures written under several profiles, and for what its decoder
//! makes of them, the smallest `max_recursion_depth` its encoder accepts;
//! the encoder, given what `decode` makes of the same document, must
//! accept exactly from the same depth and refuse below it with
//! `DepthExceeded`.

use sereal::{decode, Decoder, DecoderOptions, Encoder, EncoderOptions, ErrorKind, Foreign, Value};
mod common;

/// After `common::PERL_STRUCTURES` (`@data` and `@again` alike here):
/// prints `hex depth` per document: the document Perl wrote, and the
/// smallest depth at which Perl's encoder writes the value it came from
/// (under the same profile) or, in the second half, the value Perl's
/// decoder makes of it (aliases of `aliased_dedupe_strings` among them).
const PERL: &str = r#"
    push @data, @again;
    sub min_depth {
        my ($v, %o) = @_;
        for my $d (1 .. 80) {
            return $d if eval { Sereal::Encoder->new({ %o, max_recursion_depth => $d })->encode($v); 1 };
        }
        return 0;
    }
    for my $p ({}, { freeze_callbacks => 1 }, { dedupe_strings => 1 }, { protocol_version => 1 }) {
        for my $v (@data) {
            print join(" ", unpack("H*", Sereal::Encoder->new($p)->encode($v)), min_depth($v, %$p)), "\n";
        }
    }
    for my $p ({ aliased_dedupe_strings => 1 }, {}) {
        for my $v (@data) {
            my $doc = Sereal::Encoder->new($p)->encode($v);
            next if $doc =~ /Frozen/;
            print join(" ", unpack("H*", $doc), min_depth(Sereal::Decoder->new->decode($doc))), "\n";
        }
    }
"#;

fn encoder(depth: usize) -> Encoder {
    let mut o = EncoderOptions::new();
    o.max_recursion_depth = depth;
    o.undef_unknown = true;
    Encoder::new(o).expect("valid options")
}

/// The smallest depth at which the encoder writes `v` (0 if none up to
/// 80); every failure below it must be `DepthExceeded`.
fn min_depth(v: &Value, what: &str) -> usize {
    for d in 1..=80 {
        match encoder(d).encode(v) {
            Ok(_) => return d,
            Err(e) => assert_eq!(e.kind(), &ErrorKind::DepthExceeded(d), "{what} at {d}: {e}"),
        }
    }
    0
}

#[test]
fn the_encoder_writes_from_perls_depth() {
    if !common::perl_sereal("the encoder depth oracle") {
        return;
    }
    let script = format!("{}{PERL}", common::PERL_STRUCTURES);
    let out = String::from_utf8(common::perl_output(&script)).expect("Perl prints text");
    let mut checked = 0;
    for line in out.lines() {
        let (hex, perl) = line.split_once(' ').expect("hex depth");
        let perl: usize = perl.parse().expect("a number");
        assert!(perl > 0, "Perl refuses {line}");
        let v = decode(&common::unhex(hex)).expect("Perl's document decodes");
        assert_eq!(min_depth(&v, line), perl, "{line}");
        v.dismantle();
        checked += 1;
    }
    assert_eq!(checked, 4 * 50 + 2 * 49, "documents checked");
}

/// What Perl's encoder writes at its default depth (10000), the encoder
/// writes again from what `decode` makes of it, byte for byte: nested
/// arrays and hashes 9,999 deep; 10,000 deep is refused by both.
#[test]
fn a_document_perl_writes_at_the_default_depth_is_written_again() {
    if !common::perl_sereal("the default-depth round trip") {
        return;
    }
    let script = r#"
        use Sereal::Encoder;
        for my $n (9999, 10000) {
            for my $kind ('a', 'h') {
                my $x = 1;
                $x = $kind eq 'a' ? [$x] : { k => $x } for 1 .. $n;
                my $doc = eval { Sereal::Encoder->new->encode($x) };
                print defined $doc ? unpack("H*", $doc) : "refused", "\n";
            }
        }
    "#;
    let out = String::from_utf8(common::perl_output(script)).expect("Perl prints text");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[2..],
        ["refused", "refused"],
        "Perl refuses 10,000 levels"
    );
    let lifted = Decoder::new(DecoderOptions::new().max_recursion_depth(20_000));
    for hex in &lines[..2] {
        let doc = common::unhex(hex);
        let v = decode(&doc).expect("Perl's document decodes at the default depth");
        assert_eq!(sereal::encode(&v).expect("written again"), doc);
        v.dismantle();
        // One level more: refused at the default, as Perl refuses it.
        let mut deeper = doc[..6].to_vec();
        deeper.push(if doc[6] == 0x28 { 0x41 } else { 0x51 }); // ARRAYREF_1 / HASHREF_1
        if doc[6] != 0x28 {
            deeper.extend_from_slice(b"\x61k");
        }
        deeper.extend_from_slice(&doc[6..]);
        let v = lifted
            .decode(&deeper)
            .expect("decodes with the limit lifted");
        let e = sereal::encode(&v).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::DepthExceeded(10_000), "{e}");
        v.dismantle();
    }
}

/// Without Perl: undef, immortals, dead weak references and data Sereal
/// cannot carry take a level as elements, not at the root or in a cell.
#[test]
fn non_plain_elements_take_a_level() {
    let cases: [(&str, Value, usize); 9] = [
        ("1", Value::from(1), 2),
        ("undef", Value::Undef, 2),
        ("[1]", Value::array([1]), 2),
        ("[undef]", Value::array([Value::Undef]), 3),
        ("[true]", Value::array([Value::True]), 3),
        (
            "[canonical undef]",
            Value::array([Value::CanonicalUndef]),
            3,
        ),
        (
            "{a => foreign}",
            Value::hash([("a", Value::Foreign(Foreign::new(1u8)))]),
            3,
        ),
        (
            "[\\undef]",
            Value::array([Value::Ref(sereal::Ref::scalar(Value::Undef))]),
            3,
        ),
        (
            "\\\\[undef]",
            Value::Ref(sereal::Ref::scalar(Value::array([Value::Undef]))),
            3,
        ),
    ];
    for (what, v, want) in cases {
        assert_eq!(min_depth(&v, what), want, "{what}");
    }
    // A weak reference whose node is gone is undef: a level.
    let gone = Value::array([Value::Weak(sereal::Ref::array([1]).downgrade())]);
    assert_eq!(min_depth(&gone, "[dead weak]"), 3);
}

/// References to references take no level, but one path holds at most
/// 10,000 of them beyond the limit (each is a level of nesting here, which
/// every callback locks); 0 is no limit, as for the decoder.
#[test]
fn references_to_references_are_bounded_and_zero_is_no_limit() {
    // `k` scalar cells, each holding a reference to the next, then [1].
    let chain = |k: usize| {
        let mut v = Value::array([1]);
        for _ in 0..k {
            v = Value::Ref(sereal::Ref::scalar(v));
        }
        v
    };
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let ok = chain(10_007);
            assert!(encoder(10).encode(&ok).is_ok());
            let over = chain(10_008);
            let e = encoder(10).encode(&over).unwrap_err();
            assert_eq!(e.kind(), &ErrorKind::DepthExceeded(10), "{e}");
            // No limit: the longer chain, and 20,000 nested arrays.
            let lifted = Decoder::new(DecoderOptions::new().max_recursion_depth(0));
            let back = lifted.decode(&encoder(0).encode(&over).unwrap()).unwrap();
            assert_eq!(*back, over);
            let mut deep = Value::from(1);
            for _ in 0..20_000 {
                deep = Value::array([deep]);
            }
            let bytes = encoder(0).encode(&deep).unwrap();
            assert_eq!(bytes.len(), 6 + 20_000 + 1);
            let s = sereal::ser::SerializerOptions::default().max_recursion_depth(0);
            let nested: Vec<Vec<Vec<u8>>> = vec![vec![vec![1]]];
            assert!(sereal::to_vec_with(&nested, s).is_ok());
        })
        .unwrap()
        .join()
        .unwrap();
}
