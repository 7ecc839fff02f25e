//! Large hashes: the decoder reads their entries first and indexes them in
//! one loop afterwards, and gives the keys of hashes of 256 entries or more
//! unshared (not interned). Neither may show: lookups, equality, duplicate
//! detection (with the duplicate key's offset), re-encoding to the same
//! bytes, and Perl's bytes for the same data.

use sereal::protocol::write_varint;
use sereal::{decode, encode_with, EncoderOptions, ErrorKind, Hash, Key, Value};
mod common;

/// Sizes either side of each threshold: scanned (12), indexed while read
/// (13-64), indexed after (65+), unshared keys (256+).
const SIZES: [usize; 9] = [0, 1, 12, 13, 64, 65, 255, 256, 3000];

fn big_hash(n: usize) -> Hash {
    let mut h = Hash::with_capacity(n);
    for i in 0..n {
        h.insert(format!("key{i}"), i as i64);
    }
    h
}

/// `[ {key0..key(n-1)}, {key7, key(n-1), other}, {key7, nested => {key7}} ]`:
/// the small hashes repeat keys of the big one, so a shared-hashkeys
/// encoder writes them as COPYs of the big hash's keys.
fn doc(n: usize) -> Value {
    let last = format!("key{}", n.saturating_sub(1));
    Value::array([
        Value::from(big_hash(n)),
        Value::hash([
            ("key7", Value::from(1)),
            (last.as_str(), Value::from(2)),
            ("other", Value::from(3)),
        ]),
        Value::hash([
            ("key7", Value::from(4)),
            ("nested", Value::hash([("key7", 5)])),
        ]),
    ])
}

fn option_sets() -> Vec<(&'static str, EncoderOptions)> {
    let mut v = vec![("default", EncoderOptions::default())];
    let mut o = EncoderOptions::default();
    o.sort_keys = true;
    v.push(("sort_keys", o));
    let mut o = EncoderOptions::default();
    o.no_shared_hashkeys = true;
    v.push(("no_shared_hashkeys", o));
    let mut o = EncoderOptions::default();
    o.dedupe_strings = true;
    v.push(("dedupe_strings", o));
    let mut o = EncoderOptions::default();
    o.protocol_version = 1;
    v.push(("v1", o));
    v
}

#[test]
fn large_hashes_decode_equal_and_reencode_to_the_same_bytes() {
    for n in SIZES {
        let value = doc(n);
        for (name, opts) in option_sets() {
            let bytes = encode_with(&value, &opts).unwrap();
            let back = decode(&bytes).unwrap();
            assert_eq!(*back, value, "n={n} {name}");
            let again = encode_with(&back, &opts).unwrap();
            assert_eq!(again, bytes, "n={n} {name}: re-encoding changed the bytes");
        }
    }
}

#[test]
fn decoded_large_hash_answers_lookups_and_updates_in_place() {
    for n in SIZES {
        let bytes = encode_with(&Value::from(big_hash(n)), &EncoderOptions::default()).unwrap();
        let doc = decode(&bytes).unwrap();
        let mut h = doc.as_strong_ref().unwrap().as_hash().unwrap().clone();
        assert_eq!(h.len(), n);
        let mut picks = vec![0, n / 2, n.saturating_sub(1)];
        picks.dedup();
        for i in picks.into_iter().filter(|&i| i < n) {
            let k = format!("key{i}");
            assert_eq!(h.get(&k), Some(&Value::Int(i as i64)), "n={n} get {k}");
            assert_eq!(
                h.get_key(&Key::from(k.as_str())),
                Some(&Value::Int(i as i64))
            );
            assert!(
                h.get_key(&Key::utf8(&k)).is_none(),
                "the UTF-8 flag is part of a key"
            );
            // An interned key of the same content replaces, never adds.
            assert_eq!(h.insert(k.as_str(), -1), Some(Value::Int(i as i64)));
            assert_eq!(h.len(), n);
            assert_eq!(h.get(&k), Some(&Value::Int(-1)));
            let decoded_key = h.keys().nth(i).unwrap();
            assert_eq!(*decoded_key, Key::from(k.as_str()));
        }
        assert!(h.get("absent").is_none());
        h.insert("absent", 1);
        assert_eq!(h.len(), n + 1);
        assert_eq!(h.keys().last().unwrap().to_string(), "absent");
        if n > 0 {
            assert_eq!(h.remove("key0"), Some(Value::Int(-1)));
            assert!(!h.contains_key("key0"));
            assert_eq!(h.len(), n);
        }
    }
}

/// `HASH n` of keys `k0..`, whose entry `dup` repeats the key of entry
/// `orig`; gives the document and the offset of the repeated key's tag.
fn hash_with_duplicate(n: usize, orig: usize, dup: usize) -> (Vec<u8>, usize) {
    let mut doc = b"=\xF3rl\x05\x00".to_vec();
    doc.push(0x28); // REFN
    doc.push(0x2a); // HASH
    write_varint(&mut doc, n as u64);
    let mut at = 0;
    for i in 0..n {
        let name = format!("k{}", if i == dup { orig } else { i });
        if i == dup {
            at = doc.len();
        }
        doc.push(0x60 + name.len() as u8);
        doc.extend_from_slice(name.as_bytes());
        doc.push(0x01);
    }
    (doc, at)
}

#[test]
fn duplicate_keys_are_refused_at_their_offset_in_hashes_of_every_size() {
    for n in [2usize, 12, 13, 64, 65, 255, 256, 3000] {
        for (orig, dup) in [(0, 1), (0, n - 1), (n / 2, n - 1), (n / 3, n / 2 + 1)] {
            if orig >= dup || dup >= n {
                continue;
            }
            let (doc, at) = hash_with_duplicate(n, orig, dup);
            let err = decode(&doc).unwrap_err();
            assert!(
                err.kind() == &ErrorKind::DuplicateKey(format!("k{orig}").into_bytes()),
                "n={n} {orig}/{dup}: {err}"
            );
            assert_eq!(err.offset(), Some(at), "n={n} {orig}/{dup}: {err}");
        }
        let (ok, _) = hash_with_duplicate(n, 0, usize::MAX);
        assert_eq!(
            decode(&ok)
                .unwrap()
                .as_strong_ref()
                .unwrap()
                .as_hash()
                .unwrap()
                .len(),
            n
        );
    }
}

#[test]
fn a_value_error_inside_a_large_hash_keeps_its_offset() {
    // Entry 300's value is a bad tag; the error names its offset.
    let mut doc = b"=\xF3rl\x05\x00\x28\x2a".to_vec();
    write_varint(&mut doc, 400);
    let mut at = 0;
    for i in 0..400 {
        let name = format!("k{i}");
        doc.push(0x60 + name.len() as u8);
        doc.extend_from_slice(name.as_bytes());
        if i == 300 {
            at = doc.len();
            doc.push(0x3c); // PAD is not a value here
        }
        doc.push(0x01);
    }
    let err = decode(&doc).unwrap_err();
    assert!(
        err.offset().is_some_and(|o| o >= at),
        "{err} (value at {at})"
    );
}

/// Perl's bytes for `doc(n)` under `opts` (a Perl hash literal). The data
/// is built in a statement of its own, so that every hash is held once when
/// it is encoded (a temporary's extra count would make Perl write
/// `REFN HASH` for a hash our graph holds once).
fn perl_doc(n: usize, opts: &str) -> Vec<u8> {
    let script = format!(
        "use strict; use warnings; use Sereal::Encoder; binmode STDOUT; \
         my $n = {n}; my $last = 'key' . ($n - 1); \
         my $doc = [ {{ map {{ ('key' . $_ => $_) }} 0 .. $n - 1 }}, \
           {{ key7 => 1, $last => 2, other => 3 }}, \
           {{ key7 => 4, nested => {{ key7 => 5 }} }} ]; \
         print Sereal::Encoder->new({opts})->encode($doc);"
    );
    common::perl_output(&script)
}

#[test]
fn perl_documents_with_large_hashes_reencode_to_perls_bytes() {
    if !common::perl_sereal("Perl comparison of large hashes") {
        return;
    }
    for n in [13, 65, 255, 256, 3000] {
        for (name, opts) in option_sets() {
            let perl_opts = match name {
                "default" => "{}".to_string(),
                "v1" => "{protocol_version => 1}".to_string(),
                _ => format!("{{{name} => 1}}"),
            };
            let perl = perl_doc(n, &perl_opts);
            let back = decode(&perl).unwrap();
            let mut big = big_hash(n);
            let Value::Ref(r) = &*back else {
                panic!("not a reference")
            };
            let items = r.as_array().unwrap();
            let got = items[0].as_strong_ref().unwrap().as_hash().unwrap();
            // Perl's order is its own; compare as sets.
            assert_eq!(got.len(), big.len());
            for (k, v) in got.iter() {
                assert_eq!(big.remove(&k.to_string()).as_ref(), Some(v), "n={n} {k}");
            }
            let ours = encode_with(&back, &opts).unwrap();
            assert!(
                ours == perl,
                "n={n} {perl_opts}: our re-encoding differs from Perl's bytes at byte {}",
                ours.iter().zip(&perl).take_while(|(a, b)| a == b).count()
            );
        }
    }
}

/// An outer `HASH` of 300 entries `o0..` whose entry 5 holds `inner` (a
/// document of [`hash_with_duplicate`]) and whose entry `dup` (if any)
/// repeats the key of entry 7; gives the document, the offset of the
/// repeated outer key, and where the inner hash's body starts.
fn nested_hashes(inner: &[u8], dup: usize) -> (Vec<u8>, usize, usize) {
    let mut doc = b"=\xF3rl\x05\x00".to_vec();
    doc.push(0x28); // REFN
    doc.push(0x2a); // HASH
    write_varint(&mut doc, 300);
    let (mut at, mut inner_at) = (0, 0);
    for i in 0..300usize {
        let name = format!("o{}", if i == dup { 7 } else { i });
        if i == dup {
            at = doc.len();
        }
        doc.push(0x60 + name.len() as u8);
        doc.extend_from_slice(name.as_bytes());
        if i == 5 {
            doc.push(0x28); // REFN
            inner_at = doc.len();
            doc.extend_from_slice(&inner[7..]); // HASH n ..., after the header and REFN
        } else {
            doc.push(0x01);
        }
    }
    (doc, at, inner_at)
}

#[test]
fn duplicate_keys_in_nested_large_hashes_are_refused_at_their_offsets() {
    // Both hashes are indexed after they are read: the keys of the inner
    // one must not shift the offsets of the outer one, nor the reverse.
    let (inner, _) = hash_with_duplicate(100, 0, usize::MAX);
    let (doc, at, _) = nested_hashes(&inner, 250);
    let err = decode(&doc).unwrap_err();
    assert!(
        err.kind() == &ErrorKind::DuplicateKey(b"o7".to_vec()),
        "{err}"
    );
    assert_eq!(err.offset(), Some(at), "{err}");
    let (inner, inner_dup) = hash_with_duplicate(100, 3, 60);
    let (doc, _, inner_at) = nested_hashes(&inner, usize::MAX);
    let err = decode(&doc).unwrap_err();
    assert!(
        err.kind() == &ErrorKind::DuplicateKey(b"k3".to_vec()),
        "{err}"
    );
    assert_eq!(err.offset(), Some(inner_at + inner_dup - 7), "{err}");
}
