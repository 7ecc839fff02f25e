//! Per-tag unit tests: each encodes a small value, asserts the exact
//! document bytes and decodes them back.
//!
//! Every expected byte string here is what Perl's `Sereal::Encoder` 5.003
//! writes for the equivalent Perl data (built so that Perl's reference counts
//! match the graph's: a container held by one reference only, a shared one
//! held by several), e.g.
//!
//! ```text
//! perl -MSereal::Encoder -e 'my $a = []; $a->[0] = [1]; $a->[1] = $a->[0];
//!     print unpack("H*", Sereal::Encoder->new({protocol_version => 5})->encode($a))'
//! ```
//!
//! The exceptions are `LONG_DOUBLE`/`FLOAT_128` (the reference Perl has 8-byte
//! NVs and never writes them) and the compressed bytes of compressed
//! documents (another compressor library may choose other bytes for the same
//! input); for those the spec's layout, the header and the decompressed body
//! are checked instead.

use sereal::{
    decode, encode, encode_with, Compression, Decoder, Encoder, EncoderOptions, ErrorKind, Hash,
    Header, Key, Ref, Value,
};

/// The bytes of a hex string; whitespace is ignored.
fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    assert!(
        digits.len().is_multiple_of(2),
        "odd number of hex digits in {s:?}"
    );
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

/// Lower-case hex of `bytes`, for readable assertion failures.
fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Header of an uncompressed document of protocol 5 without user data.
const V5: &str = "3df3726c 0500";

/// A protocol 5 document with this body.
fn v5(body: &str) -> Vec<u8> {
    hex(&format!("{V5} {body}"))
}

/// An uncompressed document of protocol `version` with this body.
fn doc(version: u8, body: &str) -> Vec<u8> {
    let magic = if version >= 3 { "3df3726c" } else { "3d73726c" };
    hex(&format!("{magic} {version:02x}00 {body}"))
}

fn opts(version: u8) -> EncoderOptions {
    EncoderOptions::new().protocol_version(version)
}

/// Encodes `value` with `options` and asserts the bytes are `expected`;
/// returns the decoding of `expected` (Perl's bytes).
#[track_caller]
fn encodes_to(value: &Value, options: &EncoderOptions, expected: &[u8]) -> Value {
    let got = encode_with(value, options).expect("encode");
    assert_eq!(
        to_hex(&got),
        to_hex(expected),
        "encoding {value:?} with {options:?}: got (left) vs Perl's bytes (right)"
    );
    decode(expected).expect("decode Perl's bytes").into_value()
}

/// Encodes `value`, asserts the bytes, decodes them and asserts the decoded
/// graph equals `value`.
#[track_caller]
fn check(value: &Value, options: &EncoderOptions, expected: &[u8]) {
    let back = encodes_to(value, options, expected);
    // Perl's view: before protocol 5 a boolean reads back as 1 or "", and
    // before protocol 3 the canonical undef as undef.
    assert!(
        back.perl_eq(value),
        "decoding {}: {back:?} != {value:?}",
        to_hex(expected)
    );
    // what the encoder wrote (if it differs from Perl's) must decode too
    let ours = decode(&encode_with(value, options).unwrap()).expect("decode our bytes");
    assert!(ours.perl_eq(value), "{ours:?} != {value:?}");
}

#[track_caller]
fn check5(value: &Value, body: &str) {
    check(value, &opts(5), &v5(body));
}

fn ints(range: std::ops::RangeInclusive<i64>) -> Value {
    Value::array(range.map(Value::from))
}

// ---------------------------------------------------------------- integers

#[test]
fn pos_0_to_pos_15() {
    for i in 0..=15u8 {
        check5(&Value::from(i), &format!("{i:02x}"));
    }
    check5(&Value::Int(0), "00");
    check5(&Value::UInt(15), "0f");
}

#[test]
fn neg_16_to_neg_1() {
    for i in -16..=-1i64 {
        check5(&Value::from(i), &format!("{:02x}", (i + 32) as u8));
    }
    check5(&Value::Int(-16), "10");
    check5(&Value::Int(-1), "1f");
}

#[test]
fn varint() {
    check5(&Value::from(16), "20 10");
    check5(&Value::from(127), "20 7f");
    check5(&Value::from(128), "20 8001");
    check5(&Value::from(u64::MAX), "20 ffffffffffffffffff01");
    check5(&Value::UInt(u64::MAX), "20 ffffffffffffffffff01");
}

#[test]
fn zigzag() {
    check5(&Value::from(-17), "21 21");
    check5(&Value::Int(i64::MIN), "21 ffffffffffffffffff01");
}

// ------------------------------------------------------------------ floats

#[test]
fn float_for_doubles_exact_in_single_precision() {
    check5(&Value::Double(0.5), "22 0000003f");
    check5(&Value::Float(0.5), "22 0000003f");
    check5(&Value::Double(-1.5), "22 0000c0bf");
    check5(&Value::Double(f64::INFINITY), "22 0000807f");
    check5(&Value::Double(f64::NEG_INFINITY), "22 000080ff");
}

#[test]
fn float_for_nan() {
    // Perl's "nan"+0 (and inf-inf) on x86-64 is the negative quiet NaN.
    check5(
        &Value::Double(f64::from_bits(0xfff8_0000_0000_0000)),
        "22 0000c0ff",
    );
    // unpack("d", pack("Q", 0x7ff8000000000000)): the positive one
    check5(&Value::Double(f64::NAN), "22 0000c07f");
    let back = decode(&v5("22 0000c07f")).unwrap();
    assert!(back.as_f64().unwrap().is_nan());
}

#[test]
fn double() {
    check5(&Value::Double(0.1), "23 9a9999999999b93f");
}

#[test]
fn long_double_and_float_128_payloads_round_trip() {
    // The reference Perl (nvsize 8) never writes these; the spec's layout is
    // the tag and the 16 payload bytes, kept opaque.
    let payload: [u8; 16] = std::array::from_fn(|i| i as u8 * 17);
    let body: String = to_hex(&payload);
    check5(&Value::LongDouble(Box::new(payload)), &format!("24 {body}"));
    check5(&Value::Float128(Box::new(payload)), &format!("38 {body}"));
    // not equal to each other, nor to a different payload
    let mut other = payload;
    other[15] ^= 1;
    assert_ne!(
        Value::LongDouble(Box::new(payload)),
        Value::Float128(Box::new(payload))
    );
    assert_ne!(
        decode(&v5(&format!("24 {body}"))).unwrap(),
        Value::LongDouble(Box::new(other))
    );
}

// ------------------------------------------------ undef and the booleans

#[test]
fn undef() {
    for version in 1..=5 {
        check(&Value::Undef, &opts(version), &doc(version, "25"));
    }
}

#[test]
fn canonical_undef() {
    // encode(undef): PL_sv_undef itself
    for version in 3..=5 {
        check(&Value::CanonicalUndef, &opts(version), &doc(version, "39"));
    }
    for version in 1..=2 {
        check(&Value::CanonicalUndef, &opts(version), &doc(version, "25"));
    }
    // \$a->[0] = \undef
    let arr = Value::array([Value::CanonicalUndef]);
    check(&arr, &opts(3), &doc(3, "41 39"));
    check(&arr, &opts(2), &doc(2, "41 25"));
    assert!(matches!(
        *decode(&doc(5, "39")).unwrap(),
        Value::CanonicalUndef
    ));
}

#[test]
fn yes_no() {
    // my $a = []; $a->[0] = !!1; $a->[1] = !!0;
    let v = Value::array([Value::Bool(true), Value::Bool(false)]);
    check5(&v, "42 35 34");
    let back = decode(&v5("42 35 34")).unwrap();
    assert!(matches!(back.at(0), Some(Value::Bool(true))));
    assert!(matches!(back.at(1), Some(Value::Bool(false))));
}

#[test]
fn yes_no_before_protocol_5() {
    // Perl writes its booleans as 1 (POS_1) and "" (SHORT_BINARY_0)
    let v = Value::array([Value::Bool(true), Value::Bool(false)]);
    for version in 1..=4 {
        check(&v, &opts(version), &doc(version, "42 01 60"));
    }
    let back = decode(&doc(4, "42 01 60")).unwrap();
    assert!(matches!(back.at(0), Some(Value::Int(1))));
    assert_eq!(back.at(1).unwrap().as_bytes(), Some(&b""[..]));
}

#[test]
fn true_false() {
    // encode(!!1), encode(!!0): PL_sv_yes and PL_sv_no themselves
    check5(&Value::True, "3b");
    check5(&Value::False, "3a");
    // \$a->[0] = \!!1; \$a->[1] = \!!0;
    let v = Value::array([Value::True, Value::False]);
    for version in [1, 5] {
        check(&v, &opts(version), &doc(version, "42 3b 3a"));
    }
    assert!(matches!(*decode(&v5("3b")).unwrap(), Value::True));
    assert!(matches!(*decode(&v5("3a")).unwrap(), Value::False));
}

#[test]
fn immortals_are_never_tracked() {
    // [\!!1, \!!0]: references to the immortals, written by tag, no tracking
    for version in [1, 5] {
        check(
            &Value::array([
                Value::scalar_ref(Value::True),
                Value::scalar_ref(Value::False),
            ]),
            &opts(version),
            &doc(version, "42 283b 283a"),
        );
    }
}

// ----------------------------------------------------------------- strings

#[test]
fn short_binary() {
    check5(&Value::from(""), "60");
    let s31 = "a".repeat(31);
    check5(
        &Value::from(s31.as_str()),
        &format!("7f {}", "61".repeat(31)),
    );
    check5(&Value::bytes([0xe9]), "61 e9");
}

#[test]
fn binary() {
    let s32 = "a".repeat(32);
    check5(
        &Value::from(s32.as_str()),
        &format!("26 20 {}", "61".repeat(32)),
    );
}

#[test]
fn str_utf8() {
    // utf8::upgrade(my $s = "\xe9")
    check5(&Value::from("é"), "27 02 c3a9");
    // utf8::upgrade(my $s = "abc"): short, but still STR_UTF8
    check5(&Value::utf8("abc"), "27 03 616263");
    check5(
        &Value::from("€".repeat(20)),
        &format!("27 3c {}", "e282ac".repeat(20)),
    );
    // the UTF-8 string and the Latin-1 byte string of the same character
    check5(
        &Value::array([Value::from("é"), Value::bytes([0xe9])]),
        "42 2702c3a9 61e9",
    );
    let back = decode(&v5("27 02 c3a9")).unwrap();
    assert!(matches!(*back, Value::Utf8(_)));
    assert_eq!(back.as_str(), Some("é"));
}

// -------------------------------------------------------------- references

#[test]
fn refn_to_a_scalar() {
    // \(my $x = 1)
    check5(&Value::scalar_ref(1), "28 01");
}

#[test]
fn arrayref_0_and_arrayref_15() {
    check5(&Value::array(Vec::<Value>::new()), "40");
    check5(&ints(1..=15), "4f 0102030405060708090a0b0c0d0e0f");
}

#[test]
fn array_of_16_after_refn() {
    check5(
        &ints(1..=16),
        "28 2b 10 0102030405060708090a0b0c0d0e0f 2010",
    );
}

#[test]
fn array_held_twice_is_refn_array() {
    // a container with a reference count over 1 never gets the short form
    let shared = Ref::array(vec![]);
    let _other_holder = shared.clone();
    check5(&Value::from(&shared), "28 2b 00");
}

#[test]
fn hashref_and_hash() {
    check5(&Value::hash([("a", 1)]), "51 616101");
    check5(&Value::from(Hash::new()), "50");
    // 16 keys: HASH (sort_keys to fix Perl's order)
    let h = Value::hash(('a'..='p').map(|c| (c.to_string(), Value::from(1))));
    let body: String = (b'a'..=b'p').map(|c| format!("61{c:02x}01")).collect();
    check(
        &h,
        &EncoderOptions::new().sort_keys(true),
        &v5(&format!("28 2a 10 {body}")),
    );
}

#[test]
fn canonical_refs() {
    // my $a = []; $a->[0] = []; $a->[1] = {}; $a->[2] = [1];
    let v = Value::array([
        Value::array(Vec::<Value>::new()),
        Value::from(Hash::new()),
        Value::array([1]),
    ]);
    check5(&v, "43 40 50 41 01");
    let canon = v5("28 2b 03 282b00 282a00 282b01 01");
    check(&v, &EncoderOptions::new().canonical_refs(true), &canon);
    check(&v, &EncoderOptions::new().canonical(true), &canon);
    check(
        &Value::hash([("a", 1)]),
        &EncoderOptions::new().canonical_refs(true),
        &v5("28 2a 01 616101"),
    );
}

#[test]
fn refp_with_track_flag_on_the_target() {
    // my $s = [1, 2]; $a->[0] = $s; $a->[1] = $s;
    let s = Ref::array(vec![Value::from(1), Value::from(2)]);
    let v = Value::array([Value::from(&s), Value::from(&s)]);
    check5(&v, "42 28 ab 02 0102 29 03");
    let back = decode(&v5("42 28 ab 02 0102 29 03")).unwrap();
    let (a, b) = (back.at(0).unwrap(), back.at(1).unwrap());
    assert!(a
        .as_strong_ref()
        .unwrap()
        .ptr_eq(b.as_strong_ref().unwrap()));
}

#[test]
fn refp_to_a_shared_scalar_ref() {
    // my $r = \(my $x = 1); $a->[0] = $r; $a->[1] = $r;
    let r = Ref::scalar(1);
    check5(
        &Value::array([Value::from(&r), Value::from(&r)]),
        "42 28 81 29 03",
    );
}

#[test]
fn alias() {
    // my $x = 5; my $a = []; \$a->[0] = \$x; \$a->[1] = \$x;
    let x = Ref::scalar(5);
    let v = Value::array([Value::Alias(x.clone()), Value::Alias(x.clone())]);
    check5(&v, "42 85 2e 02");
    check(&v, &opts(1), &doc(1, "42 85 2e 07"));
    let back = decode(&v5("42 85 2e 02")).unwrap();
    match (back.at(0).unwrap(), back.at(1).unwrap()) {
        (Value::Alias(a), Value::Alias(b)) => assert!(a.ptr_eq(&b)),
        other => panic!("expected two aliases, got {other:?}"),
    }
}

// --------------------------------------------------------------- hash keys

fn two_hashes_one_key() -> Value {
    // my $r = []; $r->[0] = {foo => 1}; $r->[1] = {foo => 2};
    Value::array([Value::hash([("foo", 1)]), Value::hash([("foo", 2)])])
}

#[test]
fn copy_for_a_repeated_hash_key() {
    let v = two_hashes_one_key();
    check5(&v, "42 51 63666f6f 01 51 2f03 02");
    check(&v, &opts(2), &doc(2, "42 51 63666f6f 01 51 2f03 02"));
    check(&v, &opts(1), &doc(1, "42 51 63666f6f 01 51 2f08 02"));
}

#[test]
fn no_shared_hashkeys_writes_every_key() {
    check(
        &two_hashes_one_key(),
        &EncoderOptions::new().no_shared_hashkeys(true),
        &v5("42 51 63666f6f 01 51 63666f6f 02"),
    );
}

#[test]
fn sort_keys_order() {
    // By length in bytes, then UTF-8 keys before byte keys, then by bytes.
    let h: Hash = [
        (Key::from("bb"), Value::from(2)),
        (Key::from("a"), Value::from(1)),
        (Key::from("€"), Value::from(1)),
        (Key::from("ab"), Value::from(2)),
        (Key::from("b"), Value::from(1)),
        (Key::bytes([0xe9]), Value::from(1)),
        (Key::from("Ā"), Value::from(1)),
        (Key::from("abc"), Value::from(3)),
    ]
    .into_iter()
    .collect();
    check(
        &Value::from(h),
        &EncoderOptions::new().sort_keys(true),
        &v5("58 
             6161 01  6162 01  61e9 01
             2702c480 01  626162 02  626262 02
             2703e282ac 01  63616263 03"),
    );
}

// ------------------------------------------------------------------ objects

#[test]
fn object_then_objectv() {
    // $r->[0] = bless [], "Foo"; $r->[1] = bless {}, "Foo";
    let v = Value::array([
        Value::from(Ref::array(vec![]).blessed("Foo")),
        Value::from(Ref::hash(Hash::new()).blessed("Foo")),
    ]);
    check5(&v, "42 2c 63466f6f 40 2d03 50");
    check(&v, &opts(1), &doc(1, "42 2c 63466f6f 40 2d08 50"));
    // a second class in between
    let v = Value::array([
        Value::from(Ref::array(vec![]).blessed("Foo")),
        Value::from(Ref::hash(Hash::new()).blessed("Bar")),
        Value::from(Ref::array(vec![]).blessed("Foo")),
    ]);
    check5(&v, "43 2c 63466f6f 40 2c 63426172 50 2d03 40");
    let back = decode(&v5("42 2c 63466f6f 40 2d03 50")).unwrap();
    assert_eq!(
        back.at(1).unwrap().as_strong_ref().unwrap().class(),
        Some(Key::from("Foo"))
    );
}

#[test]
fn blessed_scalar_ref_shared_twice() {
    // my $o = bless \(my $s = 1), "Foo"; $a->[0] = $o; $a->[1] = $o;
    let o = Ref::scalar(1).blessed("Foo");
    let v = Value::array([Value::from(&o), Value::from(&o)]);
    check5(&v, "42 2c 63466f6f 28 81 29 08");
}

#[test]
fn regexp() {
    // qr/a.b/i
    let re = Value::from(Ref::regexp("a.b", "i"));
    check5(&re, "2c 66526567657870 28 31 63612e62 6169");
    check5(
        &Value::array([re.clone()]),
        "41 2c 66526567657870 28 31 63612e62 6169",
    );
    let back = decode(&v5("2c 66526567657870 28 31 63612e62 6169")).unwrap();
    assert_eq!(
        back.as_strong_ref().unwrap().class(),
        Some(Key::from("Regexp"))
    );
}

// ------------------------------------------------------------- weak refs

#[test]
fn weaken_of_a_node_also_held_strongly() {
    // $a->[0] = $t; $a->[1] = $t; weaken($a->[1]);
    let t = Ref::array(vec![Value::from(1)]);
    check5(
        &Value::array([Value::from(&t), Value::weak(&t)]),
        "42 28ab0101 30 2903",
    );
    // weaken($a->[0]) instead: the weak reference comes first
    check5(
        &Value::array([Value::weak(&t), Value::from(&t)]),
        "42 30 28ab0101 2904",
    );
    let back = decode(&v5("42 30 28ab0101 2904")).unwrap();
    assert!(matches!(back.at(0), Some(Value::Weak(_))));
    assert!(matches!(back.at(1), Some(Value::Ref(_))));
}

#[test]
fn pad_rewrite_of_a_weak_ref_to_a_node_held_by_nothing_else() {
    // my $t = [1]; $w->[0] = $t; weaken($w->[0]); encode($w):
    // the document holds [1] only weakly, so its WEAKEN becomes PAD
    let t = Ref::array(vec![Value::from(1)]);
    let back = encodes_to(
        &Value::array([Value::weak(&t)]),
        &opts(5),
        &v5("41 3f 282b0101"),
    );
    assert_eq!(back, Value::array([Value::array([1])]));
    assert!(matches!(back.at(0), Some(Value::Ref(_))));

    // two weak refs: the last WEAKEN is the one rewritten
    let back = encodes_to(
        &Value::array([Value::weak(&t), Value::weak(&t)]),
        &opts(5),
        &v5("42 30 28ab0101 3f 2904"),
    );
    let n = Ref::array(vec![Value::from(1)]);
    assert_eq!(back, Value::array([Value::weak(&n), Value::from(&n)]));
}

#[test]
fn weak_ref_to_a_freed_node_is_undef() {
    // { my $t = [1]; $r->[0] = $t; weaken($r->[0]) } encode($r)
    let v = Value::array([Value::weak(&Ref::array(vec![Value::from(1)]))]);
    let back = encodes_to(&v, &opts(5), &v5("41 25"));
    assert_eq!(back, Value::array([Value::Undef]));
}

// ------------------------------------------------------------ dedupe_strings

fn dedupe_input() -> Value {
    Value::array(["abcd", "abcd", "abc", "abc"])
}

#[test]
fn dedupe_strings() {
    // COPY of a repeated string over 3 bytes, not of one of 3 bytes
    check(
        &dedupe_input(),
        &EncoderOptions::new().dedupe_strings(true),
        &v5("44 6461626364 2f02 63616263 63616263"),
    );
    check(
        &Value::array(["abcd", "abcd"]),
        &opts(1).dedupe_strings(true),
        &doc(1, "42 6461626364 2f07"),
    );
    // off by default
    check5(
        &dedupe_input(),
        "44 6461626364 6461626364 63616263 63616263",
    );
}

#[test]
fn dedupe_strings_matches_utf8_and_latin1_forms() {
    // Perl's deduper is a hash: a UTF-8 string and the byte string of its
    // Latin-1 downgrade are one key, so either kind is a COPY of the other.
    let dedupe = EncoderOptions::new().dedupe_strings(true);
    let back = encodes_to(
        &Value::array([
            Value::from("ébcd"),
            Value::bytes(b"\xe9bcd"),
            Value::bytes(b"\xe9bcd"),
        ]),
        &dedupe,
        &v5("43 2705c3a9626364 2f02 2f02"),
    );
    // the copies take the kind of the string they copy
    assert_eq!(back, Value::array(["ébcd", "ébcd", "ébcd"]));
    let back = encodes_to(
        &Value::array([Value::bytes(b"\xe9bcd"), Value::from("ébcd")]),
        &dedupe,
        &v5("42 64e9626364 2f02"),
    );
    assert_eq!(
        back,
        Value::array([Value::bytes(b"\xe9bcd"), Value::bytes(b"\xe9bcd")])
    );
}

#[test]
fn aliased_dedupe_strings() {
    // ALIAS, and the track flag on the first string
    let back = encodes_to(
        &dedupe_input(),
        &EncoderOptions::new().aliased_dedupe_strings(true),
        &v5("44 e461626364 2e02 63616263 63616263"),
    );
    // the repeated string reads back as an alias of the first one's cell
    assert!(back.perl_eq(&dedupe_input()), "{back:?}");
    match (back.at(0).unwrap(), back.at(1).unwrap()) {
        (Value::Alias(a), Value::Alias(b)) => assert!(a.ptr_eq(&b)),
        other => panic!("expected two aliases, got {other:?}"),
    }
    check(
        &Value::array(["abcd", "abcd"]),
        &opts(1).aliased_dedupe_strings(true),
        &doc(1, "42 e461626364 2e07"),
    );
}

// ----------------------------------------------------------------- offsets

#[test]
fn protocol_1_offsets_are_absolute_later_ones_body_relative() {
    let s = Ref::array(vec![Value::from(1)]);
    let v = Value::array([Value::from(&s), Value::from(&s)]);
    // protocol 1: from the document start (the ARRAY tag is byte 8)
    check(&v, &opts(1), &doc(1, "42 28ab0101 2908"));
    // protocol 2 and later: 1-based from the body start
    for version in 2..=5 {
        check(&v, &opts(version), &doc(version, "42 28ab0101 2903"));
    }
}

// ------------------------------------------------------------- user header

#[test]
fn user_header_data() {
    let body = Value::array([1]);
    let meta = Value::from("meta");
    let mut enc = Encoder::new(opts(5)).unwrap();
    let got = enc.encode_with_header(&body, &meta).unwrap();
    let perl = hex("3df3726c 05 06 01 646d657461 4101");
    assert_eq!(to_hex(&got), to_hex(&perl));

    let dec = Decoder::default();
    let (h, b) = dec.decode_with_header(&perl).unwrap();
    assert_eq!(h.as_deref(), Some(&meta));
    assert_eq!(b, body);
    assert_eq!(dec.decode_header(&perl).unwrap().as_deref(), Some(&meta));
    assert_eq!(dec.decode(&perl).unwrap(), body);
    let header = Header::parse(&perl).unwrap();
    assert_eq!(header.user_data, Some(7..12));
    assert_eq!(header.len, 12);

    // no user header
    assert_eq!(dec.decode_header(&v5("4101")).unwrap(), None);
    let (h, b) = dec.decode_with_header(&v5("4101")).unwrap();
    assert!(h.is_none());
    assert_eq!(b, body);
}

#[test]
fn user_header_data_protocol_2() {
    let body = Value::array([1]);
    let meta = Value::hash([("a", 1)]);
    let mut enc = Encoder::new(opts(2)).unwrap();
    let got = enc.encode_with_header(&body, &meta).unwrap();
    let perl = hex("3d73726c 02 05 01 51616101 4101");
    assert_eq!(to_hex(&got), to_hex(&perl));
    let (h, b) = Decoder::default().decode_with_header(&perl).unwrap();
    assert_eq!(h.as_deref(), Some(&meta));
    assert_eq!(b, body);
}

#[test]
fn user_header_and_body_share_no_keys() {
    // header [{foo => 2}], body [{foo => 1}]: the body writes "foo" again
    let body = Value::array([Value::hash([("foo", 1)])]);
    let meta = Value::array([Value::hash([("foo", 2)])]);
    let got = Encoder::new(opts(5))
        .unwrap()
        .encode_with_header(&body, &meta)
        .unwrap();
    let perl = hex("3df3726c 05 08 01 41 5163666f6f02 41 5163666f6f01");
    assert_eq!(to_hex(&got), to_hex(&perl));
    let (h, b) = Decoder::default().decode_with_header(&perl).unwrap();
    assert_eq!(h.as_deref(), Some(&meta));
    assert_eq!(b, body);
}

#[test]
fn regression_user_header_offsets_count_from_1_at_its_first_byte() {
    // perl -MSereal::Encoder -MSereal::Decoder -e 'my $x = [1]; my $e = Sereal::Encoder->new;
    //   my $h = Sereal::Decoder->new->decode_only_header($e->encode("body", [$x, $x, {key => 1}, {key => 2}]));
    //   print unpack("H*", $e->encode("body", $h))'
    // The header's REFP, track bit and key COPY offsets count from the flag
    // byte (the first data byte is offset 1); they were one short.
    let x = Value::array([1]);
    let meta = Value::array([
        x.clone(),
        x,
        Value::hash([("key", 1)]),
        Value::hash([("key", 2)]),
    ]);
    let got = Encoder::new(opts(5))
        .unwrap()
        .encode_with_header(&Value::from("body"), &meta)
        .unwrap();
    let perl = hex("3df3726c 05 12 01 44 28ab0101 2903 51636b657901 512f0902 64626f6479");
    assert_eq!(to_hex(&got), to_hex(&perl));
    let (h, _) = Decoder::default().decode_with_header(&got).unwrap();
    assert_eq!(h.as_deref(), Some(&meta));
}

#[test]
fn user_header_needs_protocol_2() {
    let err = Encoder::new(opts(1))
        .unwrap()
        .encode_with_header(&Value::from(1), &Value::from("meta"))
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::BadOption(_)), "{err}");
}

// -------------------------------------------------------- protocol versions

#[test]
fn protocol_version_6_has_no_public_specification() {
    for v in [6, 7, 15] {
        let err = Encoder::new(opts(v)).expect_err("version refused");
        assert_eq!(err.kind(), &ErrorKind::NoPublicSpec(v));
        assert!(err.to_string().contains("no public specification"), "{err}");
        let err = encode_with(&Value::from(1), &opts(v)).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::NoPublicSpec(v));
    }
    // and a version 6 document is refused the same way
    let err = decode(&hex("3df3726c 0600 01")).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::NoPublicSpec(6));
    assert!(err.to_string().contains("no public specification"), "{err}");
}

#[test]
fn protocol_version_0_is_refused() {
    let err = Encoder::new(opts(0)).expect_err("version refused");
    assert_eq!(err.kind(), &ErrorKind::UnsupportedVersion(0));
    let err = decode(&hex("3d73726c 0000 01")).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnsupportedVersion(0));
}

#[test]
fn default_is_protocol_5() {
    assert_eq!(
        to_hex(&encode(&Value::array([1, 2])).unwrap()),
        to_hex(&v5("42 0102"))
    );
}

// -------------------------------------------------------------- compression

/// ["hello" x 10]: a 53-byte body.
fn compressible() -> Value {
    Value::array([Value::from("hello".repeat(10))])
}

fn compressible_body() -> Vec<u8> {
    hex(&format!("41 26 32 {}", "68656c6c6f".repeat(10)))
}

/// Perl's documents for `compressible()` with compress_threshold 0.
const PERL_SNAPPY: &str = "3df3726c 2500 0d 351c41263268656c6c6fb20500";
const PERL_ZLIB: &str = "3df3726c 3500 35 a100 \
    789c95c4310900001002c0361fe01b18467010ecbf99c1e5702fda992830901562";
const PERL_ZSTD: &str = "3df3726c 4500 17 28b52ffd20357500004041263268656c6c6f0100c22c5c";

#[test]
fn compressed_documents() {
    let value = compressible();
    for (c, type_byte, perl) in [
        (Compression::Snappy, 0x25u8, PERL_SNAPPY),
        (Compression::Zlib, 0x35, PERL_ZLIB),
        (Compression::Zstd, 0x45, PERL_ZSTD),
    ] {
        let options = EncoderOptions::new().compress(c).compress_threshold(0);
        let got = encode_with(&value, &options).unwrap();
        // header: magic, version 5 with the document type in the high bits
        assert_eq!(
            to_hex(&got[..6]),
            format!("3df3726c{type_byte:02x}00"),
            "{c:?}"
        );
        let header = Header::parse(&got).unwrap();
        assert_eq!(header.compression, c);
        assert_eq!(header.version, 5);
        // the decompressed body is Perl's uncompressed body
        let (body, _) = Decoder::default().body_bytes(&got, &header).unwrap();
        assert_eq!(to_hex(&body), to_hex(&compressible_body()), "{c:?}");
        assert_eq!(decode(&got).unwrap(), value, "{c:?}");

        // Perl's document decodes to the same value and body
        let perl = hex(perl);
        let perl_header = Header::parse(&perl).unwrap();
        assert_eq!(perl_header.compression, c);
        let (body, _) = Decoder::default().body_bytes(&perl, &perl_header).unwrap();
        assert_eq!(to_hex(&body), to_hex(&compressible_body()), "{c:?}");
        assert_eq!(decode(&perl).unwrap(), value, "{c:?}");
    }
}

#[test]
fn snappy_output_matches_perl() {
    // Snappy is deterministic enough here to compare whole documents.
    let options = EncoderOptions::new()
        .compress(Compression::Snappy)
        .compress_threshold(0);
    let got = encode_with(&compressible(), &options).unwrap();
    assert_eq!(to_hex(&got), to_hex(&hex(PERL_SNAPPY)));
    // protocol 1 and 2 with compress => SRL_SNAPPY also write document type 2
    let got = encode_with(&compressible(), &options.clone().protocol_version(1)).unwrap();
    assert_eq!(
        to_hex(&got),
        to_hex(&hex("3d73726c 2100 0d 351c41263268656c6c6fb20500"))
    );
    let got = encode_with(&compressible(), &options.protocol_version(2)).unwrap();
    assert_eq!(
        to_hex(&got),
        to_hex(&hex("3d73726c 2200 0d 351c41263268656c6c6fb20500"))
    );
}

#[test]
fn legacy_snappy_document_decodes() {
    // protocol 1, `snappy => 1`: document type 1, no length prefix
    let perl = hex("3d73726c 1100 351c41263268656c6c6fb20500");
    assert_eq!(decode(&perl).unwrap(), compressible());
}

#[test]
fn no_compression_below_the_threshold() {
    let value = compressible();
    let plain = hex(&format!("{V5} {}", to_hex(&compressible_body())));
    for c in [Compression::Snappy, Compression::Zlib, Compression::Zstd] {
        // the default threshold is 1024 bytes
        check(&value, &EncoderOptions::new().compress(c), &plain);
        // a body of exactly 53 bytes is compressed at threshold 53, not 54
        let at = encode_with(
            &value,
            &EncoderOptions::new().compress(c).compress_threshold(53),
        )
        .unwrap();
        assert_ne!(at[4], 0x05, "{c:?}");
        check(
            &value,
            &EncoderOptions::new().compress(c).compress_threshold(54),
            &plain,
        );
    }
}

/// `"x" x 10`: an 11-byte body no compressor makes smaller.
fn incompressible() -> Value {
    Value::from("x".repeat(10))
}

#[test]
fn compression_that_does_not_help_is_not_used() {
    // Perl compresses, sees the payload is not shorter than the body, and
    // writes the uncompressed document (document type 0) instead.
    for c in [Compression::Snappy, Compression::Zlib, Compression::Zstd] {
        let options = EncoderOptions::new().compress(c).compress_threshold(0);
        check(
            &incompressible(),
            &options,
            &v5(&format!("6a {}", "78".repeat(10))),
        );
        check(&Value::from(1), &options, &v5("01"));
    }
}

#[test]
fn compressed_length_varint_is_padded_like_perl() {
    // Perl reserves room for the compressed length varint sized for the
    // compressor's worst case (plus 11 bytes), then writes the real length
    // into it padded with 0x80 continuation bytes. The payloads below are
    // the same bytes the Rust compressors produce; only the framing varint
    // differs if it is written in its shortest form.
    let x100 = Value::from("x".repeat(100));
    for (c, perl) in [
        (
            Compression::Snappy,
            "3df3726c 2500 8b00 6608266478fe01008a0100",
        ),
        (
            Compression::Zlib,
            "3df3726c 3500 66 9800 789cbdc0810000000083309b931d22fc2cda4e4076b52f6b",
        ),
        (
            Compression::Zstd,
            "3df3726c 4500 9200 28b52ffd20664d0000182664780100200543",
        ),
    ] {
        let options = EncoderOptions::new().compress(c).compress_threshold(0);
        // the decoder reads Perl's padded varint
        assert_eq!(decode(&hex(perl)).unwrap(), x100, "{c:?}");
        let got = encode_with(&x100, &options).unwrap();
        assert_eq!(decode(&got).unwrap(), x100, "{c:?}");
        assert_eq!(to_hex(&got), to_hex(&hex(perl)), "{c:?}");
    }
    // zlib always reserves two bytes for small bodies (its bound is >= 128)
    let options = EncoderOptions::new()
        .compress(Compression::Zlib)
        .compress_threshold(0);
    let got = encode_with(&compressible(), &options).unwrap();
    assert_eq!(to_hex(&got), to_hex(&hex(PERL_ZLIB)));
}

/// A weak reference held in a shared scalar, to a node the document never
/// holds strongly: the WEAKEN becomes PAD and keeps its track flag, so the
/// later ALIAS to the scalar resolves (Perl 5.003 drops the flag and writes
/// a document neither decoder reads).
#[test]
fn pad_rewrite_keeps_the_track_flag() {
    let target = Ref::array(vec![Value::from(1)]);
    let cell = Ref::scalar(Value::weak(&target));
    let v = Value::array([Value::Alias(cell.clone()), Value::Ref(cell.clone())]);
    let bytes = encode(&v).unwrap();
    assert_eq!(&bytes[6..], b"\x42\xbf\x28\x2b\x01\x01\x29\x02");
    let back = decode(&bytes).unwrap();
    let a = back.at(0).unwrap();
    let b = back.at(1).unwrap();
    let (Value::Alias(x), Value::Ref(y)) = (&a, &b) else {
        panic!("{back:?}")
    };
    assert!(x.ptr_eq(y), "{back:?}");
    if perl_decodes_same(&bytes) {
        eprintln!("Perl's decoder reads it too");
    }
    drop(target);
}

/// Whether Perl's decoder reads `doc` and writes it back unchanged; false
/// (with a notice) when Perl's Sereal is not installed.
fn perl_decodes_same(doc: &[u8]) -> bool {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let script =
        "use Sereal::Decoder; use Sereal::Encoder; local $/; binmode STDIN; binmode STDOUT; \
                  print Sereal::Encoder->new->encode(Sereal::Decoder->new->decode(<STDIN>));";
    let Ok(mut child) = Command::new("perl")
        .args(["-e", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        eprintln!("SKIP Perl check: perl is not installed");
        return false;
    };
    child.stdin.take().unwrap().write_all(doc).unwrap();
    let out = child.wait_with_output().unwrap();
    if !out.status.success() {
        eprintln!("SKIP Perl check: Perl's Sereal is not installed or rejected the document");
        return false;
    }
    assert_eq!(decode(&out.stdout).unwrap(), decode(doc).unwrap());
    true
}
