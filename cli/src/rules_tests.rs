//! `info`'s `decodes:` line, made by the walker and its rules, against the
//! decoder itself: the same answer (and, when both accept, the same
//! length) on every corpus document, on hundreds of thousands of damaged
//! ones, and on documents nested about as deep as the decoder allows.

use crate::input::{Doc, Source};
use sereal::conformance::read_cases;
use sereal::protocol::{tag, TRACK_FLAG};
use sereal::{Decoder, Header};

/// What `info` makes of a document: its length if it decodes.
fn info(bytes: &[u8]) -> Option<usize> {
    let source = Source::Read(bytes.to_vec());
    let doc = Doc {
        name: "-",
        inputs: 1,
        index: 1,
        offset: 0,
        bytes: source.bytes(),
        source: &source,
    };
    crate::inspect::summarize(&doc, &mut String::new()).ok()
}

/// What the decoder makes of it (user header data and body).
fn decoder(bytes: &[u8]) -> Option<usize> {
    let dec = Decoder::default();
    dec.decode_header(bytes).ok()?;
    dec.decode_prefix(bytes).ok().map(|(_, used)| used)
}

/// Checks one document: whether both accept it.
fn agree(bytes: &[u8], what: &dyn Fn() -> String) -> bool {
    let (walked, decoded) = (info(bytes), decoder(bytes));
    assert_eq!(walked, decoded, "{}: {bytes:02x?}", what());
    decoded.is_some()
}

/// The document with its body decompressed (type bits cleared), so that
/// damage to it reaches the body's tags.
fn raw(doc: &[u8]) -> Option<Vec<u8>> {
    let h = Header::parse(doc).ok()?;
    let (body, _) = Decoder::default().body_bytes(doc, &h).ok()?;
    let mut out = doc[..h.len].to_vec();
    out[4] &= 0x0f;
    out.extend_from_slice(&body);
    Some(out)
}

/// xorshift: the same damage on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tags that make the decoder's rules matter, with small operands.
const TAGS: &[u8] = &[
    tag::PAD,
    tag::PAD | TRACK_FLAG,
    tag::REFN,
    tag::REFP,
    tag::ALIAS,
    tag::COPY,
    tag::WEAKEN,
    tag::OBJECT,
    tag::OBJECTV,
    tag::OBJECT_FREEZE,
    tag::ARRAY,
    tag::HASH,
    tag::ARRAYREF_0 + 1,
    tag::HASHREF_0 + 1,
    tag::REGEXP,
    tag::SHORT_BINARY_0 + 1,
    tag::POS_0 + 1,
    tag::POS_0 + 3,
    tag::POS_0 + 7,
];

/// One random change to a raw document's body.
fn damage(doc: &mut Vec<u8>, body: usize, rng: &mut Rng) {
    let n = doc.len() - body;
    let at = body + rng.below(n);
    match rng.below(6) {
        0 => doc[at] ^= TRACK_FLAG,
        1 => doc[at] = TAGS[rng.below(TAGS.len())],
        2 => doc[at] = rng.next() as u8,
        3 => doc.insert(at, TAGS[rng.below(TAGS.len())]),
        4 if n > 1 => {
            doc.remove(at);
        }
        _ => doc[at] = doc[body + rng.below(n)],
    }
}

#[test]
fn the_walker_accepts_what_the_decoder_accepts() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/perl-sereal-5.003");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 14);
    let mut rng = Rng(0x5e7ea1);
    let (mut docs, mut damaged, mut damaged_ok) = (0, 0, 0);
    for f in &files {
        for c in read_cases(f).unwrap() {
            for (form, doc) in [("srl", &c.srl), ("canon", &c.canon)] {
                let Some(doc) = doc else { continue };
                let what = || format!("{} case {} {form}", f.display(), c.id);
                assert!(agree(doc, &what), "{}", what());
                docs += 1;
                let Some(plain) = raw(doc) else { continue };
                let body = Header::parse(&plain).unwrap().len;
                if plain.len() == body {
                    continue;
                }
                for k in 0..12 {
                    let mut d = plain.clone();
                    for _ in 0..=k % 3 {
                        damage(&mut d, body, &mut rng);
                    }
                    damaged += 1;
                    let what = || format!("{} case {} {form}, damage {k}", f.display(), c.id);
                    damaged_ok += usize::from(agree(&d, &what));
                }
            }
        }
    }
    assert_eq!(docs, 2 * 19_712);
    // both answers are exercised
    assert!(damaged_ok > damaged / 10, "{damaged_ok} of {damaged}");
    assert!(damaged_ok < damaged * 9 / 10, "{damaged_ok} of {damaged}");
}

/// A document of `chain` wrappers around `leaf`.
fn nested(chain: &[&[u8]], leaf: &[u8]) -> Vec<u8> {
    let mut d = b"=\xF3rl\x05\x00".to_vec();
    for w in chain {
        d.extend_from_slice(w);
    }
    d.extend_from_slice(leaf);
    d
}

#[test]
fn the_walker_counts_depth_as_the_decoder_does() {
    let t = TRACK_FLAG;
    let wrappers: &[&[u8]] = &[
        &[tag::ARRAYREF_0 + 1],
        &[tag::REFN],
        &[tag::REFN | t],
        &[(tag::ARRAYREF_0 + 1) | t],
        &[tag::REFN, tag::ARRAY, 1],
        &[tag::REFN, tag::ARRAY | t, 1],
        &[tag::ARRAY, 1],
        &[tag::WEAKEN],
        &[tag::OBJECT, tag::SHORT_BINARY_0 + 1, b'C'],
        &[tag::OBJECT | t, tag::SHORT_BINARY_0 + 1, b'C'],
        &[tag::HASHREF_0 + 1, tag::SHORT_BINARY_0 + 1, b'k'],
        &[tag::PAD | t],
    ];
    // the first seven hold any value: mixed into any chain
    let safe = &wrappers[..7];
    let leaves: &[&[u8]] = &[
        &[tag::POS_0 + 1],
        &[(tag::POS_0 + 1) | t],
        &[tag::ARRAYREF_0],
    ];
    let mut rng = Rng(0xdee9);
    let (mut ok, mut runs) = (0, 0);
    for _ in 0..300 {
        // mostly one kind of wrapper, about as deep as the decoder allows
        let main = wrappers[rng.below(wrappers.len())];
        let n = 3_000 + rng.below(8_000);
        let chain: Vec<&[u8]> = (0..n)
            .map(|_| {
                if rng.below(8) == 0 {
                    safe[rng.below(safe.len())]
                } else {
                    main
                }
            })
            .collect();
        let leaf = leaves[rng.below(leaves.len())];
        runs += 1;
        let d = nested(&chain, leaf);
        ok += usize::from(agree(&d, &|| format!("{n} wrappers")));
    }
    assert!(ok > runs / 10 && ok < runs * 9 / 10, "{ok} of {runs}");
}

#[test]
fn the_rules_the_walker_alone_misses() {
    let doc = |body: &[u8]| [&b"=\xF3rl\x05\x00"[..], body].concat();
    let t = TRACK_FLAG;
    for (body, decodes) in [
        // a tracked cell holding a reference to itself (Perl's `$x = \$x`)
        (&[tag::REFN, tag::REFP | t, 2][..], true),
        // REFP to an item that is not tracked
        (&[tag::ARRAYREF_0 + 2, tag::POS_0 + 1, tag::REFP, 2], false),
        // a hash key written twice, and the same bytes as byte and UTF-8 keys
        (&[tag::HASHREF_0 + 2, 0x61, b'a', 1, 0x61, b'a', 2], false),
        (
            &[tag::HASHREF_0 + 2, 0x61, b'a', 1, tag::STR_UTF8, 1, b'a', 2],
            true,
        ),
        // a key COPY of the key before it
        (&[tag::HASHREF_0 + 2, 0x61, b'a', 1, tag::COPY, 2, 2], false),
        // a key COPY of a value of its own hash (Perl's `dedupe_strings`
        // writes `{ab => "abcd", abcd => 1}` so), and of a string (the
        // last byte of a BINARY's content) that takes in the COPY
        (
            &[
                tag::HASHREF_0 + 2,
                0x62,
                b'a',
                b'b',
                0x64,
                b'a',
                b'b',
                b'c',
                b'd',
                tag::COPY,
                5,
                1,
            ],
            true,
        ),
        (
            &[
                tag::ARRAYREF_0 + 2,
                tag::BINARY,
                2,
                0x61,
                0x63,
                tag::HASHREF_0 + 1,
                tag::COPY,
                5,
                1,
            ],
            false,
        ),
        // a COPY into the middle of a string: the decoder takes it
        (
            &[
                tag::ARRAYREF_0 + 2,
                tag::SHORT_BINARY_0 + 3,
                0x61,
                b'x',
                b'y',
                tag::COPY,
                3,
            ],
            true,
        ),
        // WEAKEN of a tracked reference: a cell, not a reference
        (&[tag::ARRAYREF_0 + 1, tag::WEAKEN, tag::REFN | t, 1], false),
        (&[tag::ARRAYREF_0 + 1, tag::WEAKEN, tag::REFN, 1], true),
        // an object of a number
        (&[tag::OBJECT, 0x61, b'C', tag::POS_0 + 1], false),
        // OBJECTV naming a string that is no class name
        (
            &[
                tag::ARRAYREF_0 + 2,
                0x61,
                b'C',
                tag::OBJECTV,
                2,
                tag::REFN,
                1,
            ],
            false,
        ),
        // OBJECT_FREEZE with something else than REFN ARRAY or ARRAY
        (&[tag::OBJECT_FREEZE, 0x61, b'C', tag::REFN, 1], false),
        (
            &[tag::OBJECT_FREEZE, 0x61, b'C', tag::REFN, tag::ARRAY, 1, 2],
            true,
        ),
        // a tracked PAD tracks the item after it, at the PAD's offset
        (
            &[
                tag::ARRAYREF_0 + 2,
                tag::PAD | t,
                tag::ARRAYREF_0,
                tag::REFP,
                2,
            ],
            true,
        ),
        (
            &[
                tag::ARRAYREF_0 + 2,
                tag::PAD | t,
                tag::ARRAYREF_0,
                tag::REFP,
                3,
            ],
            false,
        ),
    ] {
        let d = doc(body);
        assert_eq!(decoder(&d).is_some(), decodes, "decoder on {body:02x?}");
        agree(&d, &|| "a hand-made case".into());
    }
}
