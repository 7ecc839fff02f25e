//! Perl's `sort_keys => 2` and `=> 3`: hash keys in Perl's `cmp` order,
//! ascending and descending, written as strings. Checked byte for byte
//! against Perl's Sereal on random hashes of byte, Latin-1, UTF-8 and
//! upgraded keys, alone and with `dedupe_strings` / `aliased_dedupe_strings`.

use sereal::{encode_with, EncoderOptions, Hash, Key, KeyOrder, Value};
use std::fmt::Write as _;
mod common;
use common::Rng;

/// A key of the pool: its text, and whether it is UTF-8 (for text with
/// only Latin-1 characters: an upgraded string, which Perl keeps flagged).
const POOL: [(&str, bool); 16] = [
    ("a", false),
    ("b", false),
    ("aa", false),
    ("ab", false),
    ("abcd", false),
    ("abce", false),
    ("Z", false),
    ("", false),
    ("\u{e9}t\u{e9}", false), // bytes e9 74 e9
    ("\u{e9}", false),
    ("\u{ff}x", false),
    ("caf\u{e9}!", true), // upgraded: UTF-8 flagged Latin-1 text
    ("\u{263a}", true),
    ("a\u{263a}", true),
    ("\u{100}", true),
    ("zz\u{10348}", true),
];

fn key(i: usize) -> Key {
    let (text, utf8) = POOL[i];
    if utf8 {
        Key::utf8(text)
    } else {
        // Latin-1 bytes of the text.
        Key::bytes(text.chars().map(|c| c as u32 as u8).collect::<Vec<_>>())
    }
}

/// The Perl expression of pool key `i`.
fn perl_key(i: usize) -> String {
    let (text, utf8) = POOL[i];
    let mut lit = String::from("\"");
    for c in text.chars() {
        write!(lit, "\\x{{{:x}}}", c as u32).unwrap();
    }
    lit.push('"');
    if utf8 {
        format!("do {{ my $k = {lit}; utf8::upgrade($k); $k }}")
    } else {
        lit
    }
}

/// A random hash of distinct pool keys whose values are integers, pool
/// strings (so that values repeat keys) or nested hashes; ours and Perl's.
fn random_hash(rng: &mut Rng, depth: usize) -> (Value, String) {
    let n = rng.below(8);
    let mut used = Vec::new();
    let mut h = Hash::new();
    let mut perl = String::from("do { my %h; ");
    while used.len() < n {
        let k = rng.below(POOL.len());
        if used.contains(&k) {
            continue;
        }
        used.push(k);
        let (v, pv) = match rng.below(3) {
            0 => {
                let i = rng.below(1000) as i64;
                (Value::from(i), i.to_string())
            }
            1 if depth < 2 => random_hash(rng, depth + 1),
            _ => {
                let s = rng.below(POOL.len());
                let k = key(s);
                let v = if k.is_utf8() {
                    Value::utf8(k.as_str().unwrap())
                } else {
                    Value::bytes(k.as_bytes())
                };
                (v, perl_key(s))
            }
        };
        h.insert(key(k), v);
        write!(perl, "$h{{{}}} = {pv}; ", perl_key(k)).unwrap();
    }
    perl.push_str("\\%h }");
    (Value::from(h), perl)
}

/// Perl's documents for `exprs` under `opts`, one per line in hex.
fn perl_documents(exprs: &[String], opts: &str) -> Vec<Vec<u8>> {
    let mut script = format!(
        "use strict; use warnings; use Sereal::Encoder; \
         my $e = Sereal::Encoder->new({opts}); my $r;\n"
    );
    for e in exprs {
        writeln!(
            script,
            "$r = {e}; print unpack('H*', $e->encode($r)), \"\\n\";"
        )
        .unwrap();
    }
    common::perl_hex_lines(&script)
}

#[test]
fn sort_keys_2_and_3_write_perls_bytes() {
    if !common::perl_sereal("sort_keys comparison with Perl") {
        return;
    }
    let mut rng = Rng(0x5eed_0001);
    let cases: Vec<(Value, String)> = (0..300).map(|_| random_hash(&mut rng, 0)).collect();
    let exprs: Vec<String> = cases.iter().map(|(_, p)| p.clone()).collect();
    let mut wrong = Vec::new();
    for level in [2u64, 3] {
        for (extra, set) in [
            ("", (|o| o) as fn(EncoderOptions) -> EncoderOptions),
            (", dedupe_strings => 1", |o: EncoderOptions| {
                o.dedupe_strings(true)
            }),
            (", aliased_dedupe_strings => 1", |o: EncoderOptions| {
                o.aliased_dedupe_strings(true)
            }),
            (", canonical_refs => 1", |o: EncoderOptions| {
                o.canonical_refs(true)
            }),
        ] {
            let perl_opts = format!("{{sort_keys => {level}{extra}}}");
            let perl = perl_documents(&exprs, &perl_opts);
            let opts = set(EncoderOptions::new().sort_keys_level(level));
            for (i, (v, _)) in cases.iter().enumerate() {
                let ours = encode_with(v, &opts).unwrap();
                if ours != perl[i] {
                    wrong.push(format!(
                        "{perl_opts} case {i} {}\n  ours {:02x?}\n  Perl {:02x?}",
                        exprs[i], ours, perl[i]
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of 2400 differ; first:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(3)].join("\n")
    );
}

#[test]
fn cmp_order_is_by_code_point_across_flags() {
    let h = Hash::from_iter((0..POOL.len()).map(|i| (key(i), i as i64)));
    let order = |o: KeyOrder| -> Vec<i64> {
        let doc = encode_with(
            &Value::from(h.clone()),
            &EncoderOptions::new().key_order(Some(o)),
        )
        .unwrap();
        let back = sereal::decode(&doc).unwrap();
        let got = back.as_strong_ref().unwrap().as_hash().unwrap().clone();
        got.values().map(|v| v.as_i64().unwrap()).collect()
    };
    let up = order(KeyOrder::Cmp);
    // By code points: "" < "Z" < "a" < "aa" < "ab" < "abcd" < "abce" <
    // "a\u{263a}" < "b" < "café!" < "zz\u{10348}" < "é" < "été" < "\u{ff}x"
    // < "\u{100}" < "\u{263a}".
    assert_eq!(up, [7, 6, 0, 2, 3, 4, 5, 13, 1, 11, 15, 9, 8, 10, 14, 12]);
    let mut down = order(KeyOrder::ReverseCmp);
    down.reverse();
    assert_eq!(down, up);
    // The same text as bytes and as UTF-8 (two keys here, one in Perl):
    // the byte string first, in either order.
    let twins = Hash::from_iter([(Key::utf8("\u{e9}"), 1), (Key::bytes([0xe9]), 2)]);
    let doc = encode_with(
        &Value::from(twins),
        &EncoderOptions::new().key_order(Some(KeyOrder::Cmp)),
    )
    .unwrap();
    let back = sereal::decode(&doc).unwrap();
    let keys: Vec<bool> = back
        .as_strong_ref()
        .unwrap()
        .as_hash()
        .unwrap()
        .keys()
        .map(|k| k.is_utf8())
        .collect();
    assert_eq!(keys, [false, true]);
}

/// A hash key equal to an earlier value of its own hash: with
/// `dedupe_strings`, Perl (and this crate) writes it as a `COPY` of that
/// value, which every reader takes (`{ab => "abcd", abcd => 1}` in `cmp`
/// order is `HASHREF_2 "ab" "abcd" COPY(5) 1`).
#[test]
fn key_copies_of_values_of_the_same_hash_decode() {
    let doc = b"=\xF3rl\x05\x00\x52\x62ab\x64abcd\x2f\x05\x01";
    let want = Value::hash([("ab", Value::from("abcd")), ("abcd", Value::from(1))]);
    let written = encode_with(
        &want,
        &EncoderOptions::new()
            .sort_keys_level(2)
            .dedupe_strings(true),
    )
    .unwrap();
    assert_eq!(written, doc);
    for (how, got) in decode_everywhere(doc) {
        assert_eq!(got.as_ref(), Ok(&want), "{how}");
    }
}

/// What each reader makes of the document `doc`: the decoder, its
/// stream readers (fed one byte at a time) and serde.
fn decode_everywhere(doc: &[u8]) -> Vec<(&'static str, Result<Value, sereal::Error>)> {
    use sereal::Decoder;
    let dec = Decoder::default();
    let mut inc = dec.incremental();
    let mut fed = None;
    for b in doc {
        inc.feed(&[*b]);
        if let Some(d) = inc.next_document() {
            fed = Some(d.map(|d| d.into_value()));
        }
    }
    vec![
        ("decode", dec.decode(doc).map(|d| d.into_value())),
        (
            "documents_from_reader",
            dec.documents_from_reader(doc)
                .next()
                .expect("a document")
                .map(|d| d.into_value()),
        ),
        ("incremental", fed.expect("a document")),
        ("from_slice", sereal::from_slice::<Value>(doc)),
    ]
}

/// Random hashes whose values repeat keys, written with `dedupe_strings`
/// in `cmp` order, by Perl and by this crate: every reader decodes both
/// to the hash written, and Perl decodes ours to what it wrote.
#[test]
fn dedupe_strings_in_cmp_order_decode_both_ways() {
    if !common::perl_sereal("dedupe_strings documents decoded both ways") {
        return;
    }
    let mut rng = Rng(0x5eed_0002);
    let cases: Vec<(Value, String)> = (0..300).map(|_| random_hash(&mut rng, 0)).collect();
    let exprs: Vec<String> = cases.iter().map(|(_, p)| p.clone()).collect();
    let mut wrong = Vec::new();
    let mut key_copies = 0;
    for level in [2u64, 3] {
        let perl_opts = format!("{{sort_keys => {level}, dedupe_strings => 1}}");
        let perl = perl_documents(&exprs, &perl_opts);
        let opts = EncoderOptions::new()
            .sort_keys_level(level)
            .dedupe_strings(true);
        let ours: Vec<Vec<u8>> = cases
            .iter()
            .map(|(v, _)| encode_with(v, &opts).unwrap())
            .collect();
        // Perl reads ours and writes it again.
        let mut script = format!(
            "use strict; use warnings; use Sereal::Encoder; use Sereal::Decoder; \
             my $e = Sereal::Encoder->new({perl_opts}); my $d = Sereal::Decoder->new;\n"
        );
        for doc in &ours {
            let hex: String = doc.iter().map(|b| format!("{b:02x}")).collect();
            writeln!(
                script,
                "print unpack('H*', $e->encode($d->decode(pack('H*', '{hex}')))), \"\\n\";"
            )
            .unwrap();
        }
        let rewritten = common::perl_hex_lines(&script);
        for (i, (v, _)) in cases.iter().enumerate() {
            key_copies += usize::from(has_key_copy_of_a_value(v));
            for (whose, doc) in [("ours", &ours[i]), ("Perl's", &perl[i])] {
                for (how, got) in decode_everywhere(doc) {
                    if got.as_ref() != Ok(v) {
                        wrong.push(format!(
                            "sort_keys {level} case {i}: {how} of {whose} {doc:02x?}: {got:?}"
                        ));
                    }
                }
            }
            if rewritten[i] != perl[i] {
                wrong.push(format!("sort_keys {level} case {i}: Perl rewrote ours"));
            }
        }
    }
    assert!(
        key_copies > 20,
        "{key_copies} cases with a key equal to a value"
    );
    assert!(
        wrong.is_empty(),
        "{} failures; first:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(5)].join("\n")
    );
}

/// Whether a hash of `v` has a key equal to one of its string values, long
/// enough to be deduplicated (4 bytes or more): one order of the two
/// writes the key as a `COPY` of the value.
fn has_key_copy_of_a_value(v: &Value) -> bool {
    let Some(h) = v.as_strong_ref().and_then(|r| r.as_hash()) else {
        return false;
    };
    let found = h.iter().any(|(_, x)| {
        has_key_copy_of_a_value(x)
            || h.keys().any(|k| {
                k.as_bytes().len() > 3
                    && x.as_bytes() == Some(k.as_bytes())
                    && matches!(x, Value::Utf8(_)) == k.is_utf8()
            })
    });
    found
}
