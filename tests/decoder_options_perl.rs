//! Perl 5.003's decoder options that change the graph (`no_thaw_objects`,
//! `use_undef`, `alias_smallint`, `alias_varint_under`): Perl decodes a
//! document with the option and re-encodes what it got; we decode it with
//! the same option and re-encode, and the bytes must be Perl's. The
//! read-only options are accepted and change nothing.

use sereal::{Decoder, DecoderOptions, Encoder, EncoderOptions, Ref, Value};
mod common;

/// Perl data covering each option: integers on both sides of each alias
/// boundary (POS, NEG, VARINT, ZIGZAG), repeated in arrays, a hash and a
/// reference; undefs in slots and behind a reference; frozen objects.
const PERL_DATA: &str = r#"
    package Frozen {
        sub FREEZE { return ($_[0]{v}, [7]) }
        sub THAW { my ($class, $serializer, $v) = @_; return bless { v => $v }, $class }
    }
    package main;
    my $i = 3;
    my $u = undef;
    my $data = [
        300, 300, -300, -300, 3, 3, -5, -5, 2000, 2000, 15, 15, 16, 16, 999, 999,
        { a => 3, b => [3, \$i], c => 16 },
        undef, [undef, undef], \$u,
        bless({ v => 'x' }, 'Frozen'), [ bless({ v => 'y' }, 'Frozen') ],
    ];
"#;

/// Perl's input document (hex) and, for each option set, Perl's re-encoding
/// of its decoding (hex), one per line.
fn perl_lines(option_sets: &[&str]) -> Vec<Vec<u8>> {
    let script = format!(
        r#"
        use Sereal::Encoder; use Sereal::Decoder;
        {PERL_DATA}
        my $doc = Sereal::Encoder->new({{ freeze_callbacks => 1, sort_keys => 1 }})->encode($data);
        print unpack("H*", $doc), "\n";
        my $enc = Sereal::Encoder->new({{ sort_keys => 1 }});
        for my $o ({sets}) {{
            print unpack("H*", $enc->encode(Sereal::Decoder->new($o)->decode($doc))), "\n";
        }}
        "#,
        sets = option_sets.join(", ")
    );
    common::perl_hex_lines(&script)
}

#[test]
fn graph_changing_options_give_perls_graph() {
    if !common::perl_sereal("decoder options compared with Perl") {
        return;
    }
    let sets: [(&str, DecoderOptions); 6] = [
        ("{}", DecoderOptions::new()),
        (
            "{ no_thaw_objects => 1 }",
            DecoderOptions::new().no_thaw_objects(true),
        ),
        ("{ use_undef => 1 }", DecoderOptions::new().use_undef(true)),
        (
            "{ alias_smallint => 1 }",
            DecoderOptions::new().alias_smallint(true),
        ),
        (
            "{ alias_varint_under => 1000 }",
            DecoderOptions::new().alias_varint_under(1000),
        ),
        (
            "{ alias_varint_under => 5 }",
            DecoderOptions::new().alias_varint_under(5),
        ),
    ];
    let perl = perl_lines(&sets.iter().map(|(p, _)| *p).collect::<Vec<_>>());
    assert_eq!(perl.len(), sets.len() + 1);
    let doc = &perl[0];
    let mut enc = Encoder::new(EncoderOptions::new().sort_keys(true)).unwrap();
    for ((perl_opts, opts), expected) in sets.iter().zip(&perl[1..]) {
        let mut dec = Decoder::new(opts.clone());
        // Perl's Frozen::THAW
        dec.on_thaw("Frozen", |class, vals| {
            let v = vals.into_iter().next().unwrap_or_default();
            Ok(Value::Ref(
                Ref::hash([("v", v)].into_iter().collect()).blessed(class),
            ))
        });
        let got = enc.encode(&dec.decode(doc).unwrap()).unwrap();
        assert_eq!(
            got, *expected,
            "{perl_opts}:\nours   {got:02x?}\nPerl's {expected:02x?}"
        );
    }
}

#[test]
fn aliased_integers_share_one_cell_and_the_read_only_options_change_nothing() {
    let doc = sereal::encode(&Value::array([
        Value::from(3),
        Value::from(3),
        Value::from(300),
        Value::from(300),
        Value::hash([("k", 3)]),
    ]))
    .unwrap();
    let v = Decoder::new(DecoderOptions::new().alias_varint_under(301))
        .decode(&doc)
        .unwrap();
    let cell = |i: usize| match v.at(i) {
        Some(Value::Alias(r)) => r,
        other => panic!("slot {i}: {other:?}"),
    };
    assert!(cell(0).ptr_eq(&cell(1)) && cell(2).ptr_eq(&cell(3)));
    let Some(Value::Alias(in_hash)) = v.at(4).unwrap().get("k") else {
        panic!("the hash's 3 is not an alias");
    };
    assert!(
        in_hash.ptr_eq(&cell(0)),
        "one cell per value across the document"
    );
    assert_eq!(v.at(0).unwrap().as_i64(), Some(3));
    // by meaning (an alias equals its cell's value), the graph is the plain one
    assert!(v.perl_eq(&sereal::decode(&doc).unwrap()));
    for opts in [
        DecoderOptions::new().set_readonly(true),
        DecoderOptions::new().set_readonly_scalars(true),
    ] {
        let ro = Decoder::new(opts).decode(&doc).unwrap();
        assert_eq!(
            sereal::encode(&ro).unwrap(),
            sereal::encode(&sereal::decode(&doc).unwrap()).unwrap()
        );
    }
}
