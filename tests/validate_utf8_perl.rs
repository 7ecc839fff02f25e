//! `validate_utf8` checks `STR_UTF8` strings by Perl's rule (its decoder's
//! `is_utf8_string`): Perl's extended UTF-8, which takes surrogates and
//! code points past U+10FFFF (in the five- to thirteen-byte forms Perl
//! writes for them, up to 2^63 - 1) and refuses overlong forms,
//! continuation bytes out of place and sequences cut short. Checked
//! against Perl's decoder on crafted and random bytes, through the decoder
//! and serde. Such a string is still no Rust text: a `String` or `&str`
//! target refuses it with `InvalidUtf8` (with the option or without), a
//! byte target gets its bytes.

use serde::de::IgnoredAny;
use sereal::{
    decode, encode, from_slice, from_slice_with, Decoder, DecoderOptions, ErrorKind, Value,
};
mod common;
use common::Rng;

fn validating() -> DecoderOptions {
    DecoderOptions::new().validate_utf8(true)
}

/// A protocol 5 document of one `STR_UTF8` string of `bytes`.
fn str_utf8(bytes: &[u8]) -> Vec<u8> {
    let mut doc = b"=\xF3rl\x05\x00\x27".to_vec();
    sereal::protocol::write_varint(&mut doc, bytes.len() as u64);
    doc.extend_from_slice(bytes);
    doc
}

/// What the decoder and serde, with `validate_utf8`, make of `bytes` as a
/// `STR_UTF8` string: accepted, or refused with `InvalidUtf8` (anything
/// else fails the test). All must agree; the answer is the decoder's.
fn accepted(bytes: &[u8]) -> bool {
    let doc = str_utf8(bytes);
    let answers = [
        Decoder::new(validating()).decode(&doc).map(|_| ()),
        from_slice_with::<Value>(&doc, validating()).map(|_| ()),
        from_slice_with::<IgnoredAny>(&doc, validating()).map(|_| ()),
        // as a hash key (HASHREF_1, the key, 1)
        Decoder::new(validating())
            .decode(&[&b"=\xF3rl\x05\x00\x51"[..], &doc[6..], b"\x01"].concat())
            .map(|_| ()),
    ];
    for a in &answers {
        if let Err(e) = a {
            assert_eq!(e.kind(), &ErrorKind::InvalidUtf8, "{bytes:02x?}: {e}");
        }
    }
    let first = answers[0].is_ok();
    assert!(
        answers.iter().all(|a| a.is_ok() == first),
        "{bytes:02x?}: {answers:?}"
    );
    first
}

/// The bytes of code point `cp` in a sequence of `len` bytes (1 to 7, or
/// 13), Perl's extended UTF-8 form of that length: overlong when a shorter
/// one holds `cp`.
fn extended(cp: u128, len: usize) -> Vec<u8> {
    if len == 1 {
        return vec![cp as u8 & 0x7f];
    }
    let conts = len - 1;
    let lead = match len {
        13 => 0xff,
        _ => (0xff00u16 >> len) as u8 | (cp >> (6 * conts)) as u8,
    };
    let mut out = vec![lead];
    out.extend(
        (0..conts)
            .rev()
            .map(|i| 0x80 | ((cp >> (6 * i)) & 0x3f) as u8),
    );
    out
}

/// The length of the shortest form of code point `cp`.
fn shortest(cp: u128) -> usize {
    let ends = [
        0x80,
        0x800,
        0x1_0000,
        0x20_0000,
        0x400_0000,
        0x8000_0000,
        1 << 36,
    ];
    [1, 2, 3, 4, 5, 6, 7]
        .into_iter()
        .zip(ends)
        .find(|&(_, end)| cp < end)
        .map_or(13, |(len, _)| len)
}

/// Random strings of a few pieces each: sequences of every length for
/// code points near each length's bounds and near `IV_MAX`, mostly in
/// their shortest form, else in a longer (overlong) or shorter one,
/// sometimes cut short; and stray bytes.
fn random_strings(n: usize) -> Vec<Vec<u8>> {
    const LENS: [usize; 8] = [1, 2, 3, 4, 5, 6, 7, 13];
    let mut rng = Rng(0x5eed_0003);
    (0..n)
        .map(|_| {
            let mut s = Vec::new();
            for _ in 0..1 + rng.below(3) {
                match rng.below(12) {
                    0 => s.push(rng.next() as u8),
                    1 => s.push(0x80 | rng.below(0x40) as u8),
                    k => {
                        // a bound: 2^j for j up to 72, then a step either way
                        let cp = (1u128 << rng.below(73)) + rng.below(3) as u128 - 1;
                        let len = if k < 9 {
                            shortest(cp)
                        } else {
                            LENS[rng.below(8)]
                        };
                        let cp = cp & ((1u128 << (6 * (len - 1) + 7)) - 1);
                        let mut b = extended(cp, len);
                        if rng.below(10) == 0 {
                            b.truncate(rng.below(b.len()));
                        }
                        s.extend(b);
                    }
                }
            }
            s
        })
        .collect()
}

/// Which of `strings` Perl's decoder takes as `STR_UTF8` strings with
/// `validate_utf8`.
fn perl_accepts(strings: &[Vec<u8>]) -> Vec<bool> {
    let mut script = String::from(
        "use strict; use warnings; use Sereal::Decoder;\n\
         my $d = Sereal::Decoder->new({ validate_utf8 => 1 });\n\
         while (my $h = <DATA>) { chomp $h;\n\
           print eval { $d->decode(pack 'H*', $h); 1 } ? 1 : 0, \"\\n\"; }\n\
         __DATA__\n",
    );
    for s in strings {
        let hex: String = str_utf8(s).iter().map(|b| format!("{b:02x}")).collect();
        script.push_str(&hex);
        script.push('\n');
    }
    let out = String::from_utf8(common::perl_output(&script)).unwrap();
    out.lines().map(|l| l == "1").collect()
}

#[test]
fn validate_utf8_takes_what_perls_takes_and_refuses_what_it_refuses() {
    let mut strings: Vec<Vec<u8>> = [
        &b"abc"[..],
        b"\xed\xa0\x80",                                         // U+D800
        b"\xf4\x90\x80\x80",                                     // U+110000
        b"\xfd\xbf\xbf\xbf\xbf\xbf",                             // 2^31 - 1
        b"\xfe\x83\xbf\xbf\xbf\xbf\xbf",                         // 2^32 - 1
        b"\xff\x80\x87\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf\xbf", // 2^63 - 1
        b"\xff\x80\x88\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80", // 2^63
        b"\xef\xbf\xbe",                                         // U+FFFE
        b"\xc0\x80",                                             // overlong
        b"\xc1\xbf",                                             // overlong
        b"\xe0\x9f\xbf",                                         // overlong
        b"\xf0\x8f\xbf\xbf",                                     // overlong
        b"\xfc\x83\xbf\xbf\xbf\xbf",                             // overlong
        b"\x80",                                                 // lone continuation
        b"\xe2\x82",                                             // cut short
        b"\xe2\x82a",                                            // cut short
        b"\xfe",
        b"\xff",
        b"\xfe\xff",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect();
    strings.extend(random_strings(4000));
    let ours: Vec<bool> = strings.iter().map(|s| accepted(s)).collect();
    let taken = ours.iter().filter(|&&a| a).count();
    let strict = strings
        .iter()
        .filter(|s| std::str::from_utf8(s).is_ok())
        .count();
    // Both kinds are well represented, and many taken are no Rust text.
    assert!(taken > 800 && taken < 3200, "{taken} of {}", strings.len());
    assert!(
        taken > strict + 300,
        "{taken} taken, {strict} strictly UTF-8"
    );
    if !common::perl_sereal("validate_utf8 compared with Perl") {
        return;
    }
    let perl = perl_accepts(&strings);
    let differ: Vec<String> = strings
        .iter()
        .zip(ours.iter().zip(&perl))
        .filter(|(_, (o, p))| o != p)
        .map(|(s, (o, p))| format!("{s:02x?}: ours {o}, Perl {p}"))
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        strings.len(),
        differ[..differ.len().min(10)].join("\n")
    );
}

/// The strings Perl writes for `chr(0xD800)`, `chr(0x110000)` and
/// `chr(0x7FFFFFFF)` decode with `validate_utf8`, as in Perl, to the
/// same bytes (flagged UTF-8), which encode back to Perl's document.
#[test]
fn perls_surrogates_and_code_points_past_unicode_decode() {
    let doc = b"=\xF3rl\x05\x00\x43\x27\x03\xed\xa0\x80\x27\x04\xf4\x90\x80\x80\x27\x06\xfd\xbf\xbf\xbf\xbf\xbf";
    if common::perl_sereal("Perl's strings past Unicode") {
        let script = r#"
            use strict; no warnings; use Sereal::Encoder; use Sereal::Decoder;
            my $doc = Sereal::Encoder->new->encode([chr(0xD800), chr(0x110000), chr(0x7FFFFFFF)]);
            print unpack("H*", $doc), "\n";
            my $back = Sereal::Decoder->new({ validate_utf8 => 1 })->decode($doc);
            print join(",", map { sprintf "%x", ord } @$back), "\n";
        "#;
        let out = String::from_utf8(common::perl_output(script)).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(common::unhex(lines[0]), doc);
        assert_eq!(lines[1], "d800,110000,7fffffff");
    }
    let v = Decoder::new(validating()).decode(doc).unwrap();
    assert_eq!(*v, decode(doc).unwrap().into_value());
    let items: Vec<Value> = (0..3).map(|i| v.at(i).unwrap()).collect();
    assert!(
        items.iter().all(|x| matches!(x, Value::Utf8(_))),
        "{items:?}"
    );
    assert_eq!(items[0].as_bytes(), Some(&b"\xed\xa0\x80"[..]));
    assert_eq!(encode(&v).unwrap(), doc);
    // The brief's one-string document.
    let one = b"=\xF3rl\x05\x00\x41\x27\x03\xed\xa0\x80";
    assert!(Decoder::new(validating()).decode(one).is_ok());
}

/// Through serde such a string is no text: a `String` or `&str` target
/// refuses it, with `validate_utf8` or without; a target that takes bytes
/// gets them (a `Value` a byte string); `serde_json::Value`, which takes
/// no bytes, refuses it. A string Perl's rule refuses is refused by every
/// target with the option.
#[test]
fn serde_targets_of_a_surrogate() {
    let surrogate = str_utf8(b"\xed\xa0\x80");
    let overlong = str_utf8(b"\xc0\x80");
    for opts in [DecoderOptions::new(), validating()] {
        for e in [
            from_slice_with::<String>(&surrogate, opts.clone()).unwrap_err(),
            from_slice_with::<&str>(&surrogate, opts.clone()).unwrap_err(),
            from_slice_with::<serde_json::Value>(&surrogate, opts.clone()).unwrap_err(),
        ] {
            assert_eq!((e.kind(), e.offset()), (&ErrorKind::InvalidUtf8, Some(8)));
        }
        assert_eq!(
            from_slice_with::<Value>(&surrogate, opts.clone()).unwrap(),
            Value::bytes(b"\xed\xa0\x80")
        );
        assert_eq!(
            from_slice_with::<common::Raw>(&surrogate, opts.clone()).unwrap(),
            common::Raw(b"\xed\xa0\x80".to_vec())
        );
    }
    assert_eq!(
        from_slice::<Value>(&overlong).unwrap(),
        Value::bytes(b"\xc0\x80")
    );
    let e = from_slice_with::<Value>(&overlong, validating()).unwrap_err();
    assert_eq!((e.kind(), e.offset()), (&ErrorKind::InvalidUtf8, Some(8)));
}
