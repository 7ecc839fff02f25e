//! Large hashes: the decoder reads their entries first and indexes them in
//! one loop afterwards, and gives the keys of hashes of 256 entries or more
//! unshared (not interned). Neither may show: lookups, equality, duplicate
//! detection (with the duplicate key's offset), re-encoding to the same
//! bytes, and Perl's bytes for the same data.

use sereal::protocol::write_varint;
use sereal::{decode, encode_with, Document, EncoderOptions, ErrorKind, Hash, Key, Value};
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

/// Encodes `value` with `opts`, checks that it decodes equal and that the
/// decoded graph re-encodes to the same bytes, and gives the decoded graph.
fn round_trip(value: &Value, opts: &EncoderOptions, what: &str) -> Document {
    let bytes = encode_with(value, opts).unwrap();
    let back = decode(&bytes).unwrap();
    assert_eq!(*back, *value, "{what}");
    let again = encode_with(&back, opts).unwrap();
    assert_eq!(again, bytes, "{what}: re-encoding changed the bytes");
    back
}

#[test]
fn large_hashes_decode_equal_and_reencode_to_the_same_bytes() {
    for n in SIZES {
        let value = doc(n);
        for (name, opts) in option_sets() {
            round_trip(&value, &opts, &format!("n={n} {name}"));
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

fn keyed(entries: Vec<(String, Value)>) -> Value {
    Value::hash(entries)
}

/// An outer hash of `n` keys `k0..` whose middle entry `c` holds a small
/// hash and an inner hash of `n` keys `j0..`; every small hash repeats keys
/// of the large ones, from each place a reader can be: inside both (the
/// outer's current key, earlier keys of both), after the inner one (outer
/// keys either side of it, an inner key) and after both.
fn copies_doc(n: usize) -> Value {
    let c = n / 2;
    let k = |i: usize| format!("k{i}");
    let j = |i: usize| format!("j{i}");
    let mut inner = Hash::new();
    for i in 0..n {
        let v = if i == 5 {
            keyed(vec![(k(c), 1.into()), (j(4), 2.into()), (k(3), 3.into())])
        } else {
            Value::from(i as i64)
        };
        inner.insert(j(i), v);
    }
    let mut inner = Some(inner);
    let mut outer = Hash::new();
    for i in 0..n {
        let v = if i == c {
            keyed(vec![
                (k(c), 1.into()),
                (k(3), 2.into()),
                ("inner".into(), Value::from(inner.take().unwrap())),
            ])
        } else if i == c + 10 {
            keyed(vec![
                (k(2), 1.into()),
                (k(c + 5), 2.into()),
                (j(7), 3.into()),
            ])
        } else {
            Value::from(i as i64)
        };
        outer.insert(k(i), v);
    }
    Value::array([
        Value::from(outer),
        keyed(vec![
            (k(n - 1), 1.into()),
            (j(n - 1), 2.into()),
            (k(0), 3.into()),
        ]),
    ])
}

/// The key `name` of `h`, as the decoder made it.
fn key_in(h: &Hash, name: &str) -> Key {
    h.keys().find(|k| k.to_string() == name).unwrap().clone()
}

/// The hash `v` refers to.
fn hash_of(v: &Value) -> Hash {
    v.as_strong_ref().unwrap().as_hash().unwrap().clone()
}

#[test]
fn copies_of_large_hash_keys_share_them_from_inside_and_after_the_hash() {
    for n in [65, 100, 255, 256, 1000] {
        let value = copies_doc(n);
        let c = n / 2;
        for (name, opts) in option_sets() {
            let back = round_trip(&value, &opts, &format!("n={n} {name}"));
            if name != "default" {
                continue;
            }
            // Each COPY shares the key it names.
            let Value::Ref(root) = &*back else {
                panic!("not a reference")
            };
            let items = root.as_array().unwrap().clone();
            let outer = hash_of(&items[0]);
            let middle = hash_of(outer.get(&format!("k{c}")).unwrap());
            let inner = hash_of(middle.get("inner").unwrap());
            let deep = hash_of(inner.get("j5").unwrap());
            let after = hash_of(outer.get(&format!("k{}", c + 10)).unwrap());
            let last = hash_of(&items[1]);
            let same = |a: &Hash, b: &Hash, key: String| {
                assert!(
                    key_in(a, &key).ptr_eq(&key_in(b, &key)),
                    "n={n}: {key} not shared"
                );
            };
            same(&outer, &middle, format!("k{c}"));
            same(&outer, &deep, format!("k{c}"));
            same(&outer, &middle, "k3".into());
            same(&outer, &deep, "k3".into());
            same(&inner, &deep, "j4".into());
            same(&outer, &after, "k2".into());
            same(&outer, &after, format!("k{}", c + 5));
            same(&inner, &after, "j7".into());
            same(&outer, &last, format!("k{}", n - 1));
            same(&inner, &last, format!("j{}", n - 1));
            same(&outer, &last, "k0".into());
        }
    }
}

#[test]
fn a_key_copy_of_a_large_hash_key_written_as_a_copy_is_refused() {
    // [ "zz", { k0.., zz (a COPY of the string), ..k99 }, { COPY of that COPY } ]
    let mut doc = b"=\xF3rl\x05\x00\x28\x2b\x03".to_vec();
    let zz = doc.len();
    doc.extend_from_slice(b"\x62zz\x28\x2a");
    write_varint(&mut doc, 100);
    let mut copy_at = 0;
    for i in 0..100usize {
        if i == 50 {
            copy_at = doc.len();
            doc.push(0x2f);
            write_varint(&mut doc, (zz - 5) as u64);
        } else {
            let name = format!("k{i}");
            doc.push(0x60 + name.len() as u8);
            doc.extend_from_slice(name.as_bytes());
        }
        doc.push(0x01);
    }
    doc.extend_from_slice(b"\x28\x2a\x01");
    let with_key = |target: usize| {
        let mut d = doc.clone();
        d.push(0x2f);
        write_varint(&mut d, (target - 5) as u64);
        d.push(0x01);
        d
    };
    // Naming the string itself reads.
    decode(&with_key(zz)).unwrap();
    let doc = with_key(copy_at);
    let err = decode(&doc).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::UnexpectedTag(0x2f, _)),
        "{err}"
    );
}

#[test]
fn perl_documents_whose_keys_copy_large_hash_keys_reencode_to_perls_bytes() {
    if !common::perl_sereal("Perl comparison of key COPYs into large hashes") {
        return;
    }
    for n in [65, 256, 1000] {
        let script = format!(
            "use strict; use warnings; use Sereal::Encoder; binmode STDOUT; \
             my $n = {n}; my $c = int($n / 2); \
             my %inner = map {{ ('j' . $_ => $_) }} 0 .. $n - 1; \
             $inner{{j5}} = {{ \"k$c\" => 1, j4 => 2, k3 => 3 }}; \
             my %outer = map {{ ('k' . $_ => $_) }} 0 .. $n - 1; \
             $outer{{\"k$c\"}} = {{ \"k$c\" => 1, k3 => 2, inner => \\%inner }}; \
             $outer{{'k' . ($c + 10)}} = {{ k2 => 1, 'k' . ($c + 5) => 2, j7 => 3 }}; \
             my $doc = [ \\%outer, {{ 'k' . ($n - 1) => 1, 'j' . ($n - 1) => 2, k0 => 3 }} ]; \
             print Sereal::Encoder->new->encode($doc);"
        );
        let perl = common::perl_output(&script);
        let back = decode(&perl).unwrap();
        let ours = encode_with(&back, &EncoderOptions::default()).unwrap();
        assert!(
            ours == perl,
            "n={n}: our re-encoding differs from Perl's bytes at byte {}",
            ours.iter().zip(&perl).take_while(|(a, b)| a == b).count()
        );
    }
}

/// `[ {n keys k0.., key 10 after a PAD}, { COPY of position `target` } ]`
/// (a `HASHREF_1` when `n` is 1); gives the document, the position of the
/// PAD and that of key 10's tag.
fn padded_key_doc(n: usize, target: impl Fn(usize, usize) -> usize) -> (Vec<u8>, usize, usize) {
    let mut doc = b"=\xF3rl\x05\x00\x28\x2b\x02".to_vec();
    if n == 1 {
        doc.push(0x51);
    } else {
        doc.extend_from_slice(b"\x28\x2a");
        write_varint(&mut doc, n as u64);
    }
    let (mut pad, mut tag) = (0, 0);
    for i in 0..n {
        let name = format!("k{}", if n == 1 { 10 } else { i });
        if i == 10 || n == 1 {
            pad = doc.len();
            doc.push(0x3f);
            tag = doc.len();
        }
        doc.push(0x60 + name.len() as u8);
        doc.extend_from_slice(name.as_bytes());
        doc.push(0x01);
    }
    doc.extend_from_slice(b"\x51\x2f");
    write_varint(&mut doc, (target(pad, tag) - 5) as u64);
    doc.push(0x02);
    (doc, pad, tag)
}

#[test]
fn a_key_copy_names_the_keys_tag_not_the_pads_before_it() {
    for n in [1, 20, 100, 300] {
        let (doc, _, _) = padded_key_doc(n, |_, tag| tag);
        let back = decode(&doc).unwrap();
        let Value::Ref(root) = &*back else {
            panic!("not a reference")
        };
        let items = root.as_array().unwrap().clone();
        let (big, small) = (hash_of(&items[0]), hash_of(&items[1]));
        assert!(
            key_in(&big, "k10").ptr_eq(&key_in(&small, "k10")),
            "n={n}: the COPY does not share the key"
        );
        let (doc, pad, _) = padded_key_doc(n, |pad, _| pad);
        let err = decode(&doc).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::UnexpectedTag(0x3f, _)),
            "n={n}: {err}"
        );
        assert_eq!(err.offset(), Some(pad), "n={n}: {err}");
    }
}

/// xorshift: the same graphs on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A random hash, of a size either side of the thresholds, whose keys come
/// from a pool of 400 (so that keys repeat across hashes and are written as
/// `COPY`s of keys of large hashes that are being read or were read) and
/// whose values are integers, strings or, above `depth` 0, hashes and
/// arrays of hashes.
fn random_hash(rng: &mut Rng, depth: usize) -> Value {
    let n = [0, 3, 12, 13, 40, 64, 65, 100, 255, 256, 300][rng.below(11)];
    let mut h = Hash::new();
    while h.len() < n {
        let key = format!("key{}", rng.below(400));
        // About two nested values a hash, wherever its size.
        let nest = depth > 0 && rng.below(n) < 2;
        let v = match (nest, rng.below(4)) {
            (false, 0) => Value::from(format!("key{}", rng.below(400))),
            (false, _) => Value::from(rng.below(1000) as i64),
            (true, 0) => Value::array([random_hash(rng, depth - 1), random_hash(rng, depth - 1)]),
            (true, _) => random_hash(rng, depth - 1),
        };
        h.insert(key, v);
    }
    Value::from(h)
}

#[test]
fn random_nested_large_hashes_reencode_to_the_same_bytes() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..150 {
        let value = Value::array((0..3).map(|_| random_hash(&mut rng, 3)));
        for (name, opts) in option_sets() {
            round_trip(&value, &opts, &format!("round {round} {name}"));
        }
    }
}

#[test]
fn a_key_copy_after_a_thaw_changed_the_large_hash_it_names_keeps_its_content() {
    use sereal::{Body, Decoder, Encoder, Ref};
    // [ \%big, a frozen object whose FREEZE gives \%big, { k50 => 2 } ]:
    // the last hash's key is a COPY of one of %big's keys.
    let big = Ref::hash(
        (0..100)
            .map(|i| (format!("k{i}"), Value::from(i)))
            .collect(),
    );
    let mut enc = Encoder::new(EncoderOptions::new().freeze_callbacks(true)).unwrap();
    let held = big.clone();
    enc.on_freeze("C", move |_| Ok(vec![Value::Ref(held.clone())]));
    let value = Value::array([
        Value::Ref(big.clone()),
        Value::Ref(Ref::hash(Hash::new()).blessed("C")),
        Value::hash([("k50", 2)]),
    ]);
    let bytes = enc.encode(&value).unwrap();
    // A THAW handler that replaces %big's entries by others, as many.
    let mut dec = Decoder::default();
    dec.on_thaw("C", |_, vals| {
        if let Some(Value::Ref(r)) = vals.first() {
            let other = (0..100)
                .map(|i| (format!("x{i}"), Value::from(i)))
                .collect();
            r.set(Body::Hash(other)).unwrap();
        }
        Ok(Value::Undef)
    });
    let back = dec.decode(&bytes).unwrap();
    let Value::Ref(root) = &*back else {
        panic!("not a reference")
    };
    let items = root.as_array().unwrap().clone();
    let last = hash_of(&items[2]);
    assert_eq!(
        last.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
        ["k50"]
    );
}

/// Documents of large hashes for a decoder to read one after another:
/// random ones, each cut short (a decode that fails inside a hash), and
/// hashes with a repeated key.
fn documents_for_reuse() -> Vec<Vec<u8>> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut docs = Vec::new();
    for _ in 0..30 {
        let value = Value::array((0..3).map(|_| random_hash(&mut rng, 2)));
        let bytes = encode_with(&value, &EncoderOptions::default()).unwrap();
        docs.push(bytes[..bytes.len() * 2 / 3].to_vec());
        docs.push(bytes);
    }
    for n in [65, 300, 2000] {
        docs.push(hash_with_duplicate(n, 3, n - 2).0);
    }
    docs
}

/// The outcome of a decode, comparable across decoders: the value and its
/// re-encoding (which shows which keys share an allocation), or the error.
type Outcome = Result<(Value, Vec<u8>), (ErrorKind, Option<usize>)>;

fn outcome(r: sereal::Result<Document>) -> Outcome {
    r.map(|d| {
        let bytes = encode_with(&d, &EncoderOptions::default()).unwrap();
        (d.into_value(), bytes)
    })
    .map_err(|e| (e.kind().clone(), e.offset()))
}

#[test]
fn a_decoder_reused_for_many_documents_reads_each_as_a_new_one_would() {
    use sereal::Decoder;
    use std::sync::Arc;
    let docs = documents_for_reuse();
    let fresh: Vec<_> = docs
        .iter()
        .map(|d| outcome(Decoder::default().decode(d)))
        .collect();
    // One decoder, keeping its scratch space from one document to the next.
    let dec = Decoder::default();
    for round in 0..2 {
        for (i, d) in docs.iter().enumerate() {
            assert!(
                outcome(dec.decode(d)) == fresh[i],
                "round {round}, document {i}"
            );
        }
    }
    // One decoder on several threads at once.
    let dec = Arc::new(Decoder::default());
    let docs = Arc::new(docs);
    let threads: Vec<_> = (0..3)
        .map(|t| {
            let (dec, docs) = (dec.clone(), docs.clone());
            std::thread::spawn(move || {
                (0..docs.len())
                    .map(|i| (i + 7 * t) % docs.len())
                    .map(|i| (i, format!("{:?}", outcome(dec.decode(&docs[i])))))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for t in threads {
        for (i, got) in t.join().unwrap() {
            assert!(got == format!("{:?}", fresh[i]), "document {i} on a thread");
        }
    }
}
