//! `max_recursion_depth` counted as Perl's decoder counts it: Perl 5.003
//! writes a broad set of structures under several option profiles and
//! prints, for each document, the smallest `max_recursion_depth` its
//! decoder accepts (with and without `use_undef`); the document decoder,
//! the incremental decoder and serde must accept exactly from the same
//! depth, and refuse below it with `DepthExceeded` (serde, which reads a
//! shared container again where it is met again, from that depth or
//! one deeper when it is met again deeper).

use sereal::{from_slice_with, Decoder, DecoderOptions, ErrorKind, Value};
mod common;

/// After `common::PERL_STRUCTURES`: the profiles each structure is written
/// under; prints `hex depth depth_with_use_undef again` per document,
/// `again` 1 for the structures of `@again`.
const PERL: &str = r#"
    my @profiles = (
        {}, { protocol_version => 1 }, { protocol_version => 2 }, { protocol_version => 3 },
        { dedupe_strings => 1 }, { aliased_dedupe_strings => 1 }, { canonical => 1 },
        { sort_keys => 1 }, { no_shared_hashkeys => 1 }, { freeze_callbacks => 1 },
        { compress => Sereal::Encoder::SRL_ZLIB(), compress_threshold => 0 },
    );
    sub min_depth {
        my ($doc, %o) = @_;
        for my $d (1 .. 80) {
            return $d if eval { Sereal::Decoder->new({ %o, max_recursion_depth => $d })->decode($doc); 1 };
        }
        return 0;
    }
    for my $p (@profiles) {
        my $enc = Sereal::Encoder->new($p);
        for my $v ((map { [$_, 0] } @data), (map { [$_, 1] } @again)) {
            my $doc = $enc->encode($v->[0]);
            print join(" ", unpack("H*", $doc), min_depth($doc), min_depth($doc, use_undef => 1), $v->[1]), "\n";
        }
    }
"#;

/// The smallest depth at which `decode` succeeds (0 if none up to 80);
/// every failure below it must be `DepthExceeded`.
fn min_depth<T, E: std::fmt::Debug>(
    decode: impl Fn(usize) -> Result<T, E>,
    kind: impl Fn(&E) -> ErrorKind,
    what: &str,
) -> usize {
    for d in 1..=80 {
        match decode(d) {
            Ok(_) => return d,
            Err(e) => assert!(
                matches!(kind(&e), ErrorKind::DepthExceeded(n) if n == d),
                "{what} at depth {d}: {e:?}"
            ),
        }
    }
    0
}

fn options(depth: usize, use_undef: bool) -> DecoderOptions {
    let mut o = DecoderOptions::new().max_recursion_depth(depth);
    o.use_undef = use_undef;
    o
}

#[test]
fn every_reader_accepts_from_perls_depth() {
    if !common::perl_sereal("the depth oracle") {
        return;
    }
    let script = format!("{}{PERL}", common::PERL_STRUCTURES);
    let out = String::from_utf8(common::perl_output(&script)).expect("Perl prints text");
    let mut checked = 0;
    for line in out.lines() {
        let mut f = line.split(' ');
        let doc = common::unhex(f.next().expect("hex"));
        let perls: Vec<usize> = f.map(|n| n.parse().expect("a number")).collect();
        let again = perls[2] == 1;
        for (use_undef, perl) in [(false, perls[0]), (true, perls[1])] {
            assert!(perl > 0, "Perl refuses {line}");
            let what = format!("{line} (use_undef {use_undef})");
            let kind = |e: &sereal::Error| e.kind().clone();
            let whole = min_depth(
                |d| Decoder::new(options(d, use_undef)).decode(&doc),
                kind,
                &format!("decode {what}"),
            );
            let stream = min_depth(
                |d| {
                    let mut inc = Decoder::new(options(d, use_undef)).incremental();
                    inc.feed(&doc);
                    inc.finish();
                    inc.next_document().expect("a document")
                },
                kind,
                &format!("incremental {what}"),
            );
            let serde = min_depth(
                |d| from_slice_with::<Value>(&doc, options(d, use_undef)),
                kind,
                &format!("serde {what}"),
            );
            assert_eq!((whole, stream), (perl, perl), "{what}");
            if again {
                assert!(serde >= perl, "{what}: serde {serde}");
            } else {
                assert_eq!(serde, perl, "{what}");
            }
            checked += 1;
        }
    }
    assert!(checked == 1100, "{checked} documents checked");
}

/// A chain of prefixes Perl's encoder never writes (each directly inside
/// the one before) is refused in every reader, on a small stack, however
/// long it is: a chain of objects by the depth limit; a chain with a
/// `WEAKEN` in a `WEAKEN` or in an object at its start, since a weak
/// reference is not a reference (neither weakened nor blessed).
#[test]
fn prefix_chains_are_refused_on_a_small_stack() {
    let not_a_ref = ErrorKind::Invalid("WEAKEN of a non-reference".into());
    let not_blessable = ErrorKind::Invalid("an object must be a reference".into());
    // Each with where it is refused: at the chain's start, or where the
    // value of object 10,001 (the one past the limit) begins.
    let units: [(&[u8], ErrorKind, usize); 4] = [
        (b"\x30", not_a_ref, 6),                                  // WEAKEN
        (b"\x2c\x61A", ErrorKind::DepthExceeded(10_000), 30_012), // OBJECT "A"
        (b"\x2c\x61A\x30", not_blessable.clone(), 6),             // OBJECT "A" WEAKEN
        (b"\x30\x2c\x61A", not_blessable, 7),                     // WEAKEN OBJECT "A"
    ];
    for (unit, kind, at) in units {
        let mut doc = b"=\xF3rl\x05\x00".to_vec();
        for _ in 0..1_000_000 {
            doc.extend_from_slice(unit);
        }
        doc.extend_from_slice(b"\x28\x01");
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                let e = sereal::decode(&doc).expect_err("refused");
                let mut inc = Decoder::default().incremental();
                inc.feed(&doc);
                inc.finish();
                let s = inc
                    .next_document()
                    .expect("a document")
                    .expect_err("refused");
                let perl_depth = DecoderOptions::new().max_recursion_depth(10_000);
                let v = from_slice_with::<Value>(&doc, perl_depth).expect_err("refused");
                let got = [(e.kind(), e.offset()), (s.kind(), s.offset())];
                assert_eq!(
                    got,
                    [(&kind, Some(at)); 2],
                    "decode, incremental: {unit:x?}"
                );
                assert_eq!(v.kind(), &kind, "serde: {unit:x?}");
            })
            .expect("spawn")
            .join()
            .expect("no overflow");
    }
}

/// `REFN UNDEF` is Perl's immortal undef only under `use_undef`: a level
/// without it, none with it, as in Perl (`REFN REFN UNDEF`: two levels, or
/// one).
#[test]
fn a_reference_to_undef_takes_a_level_unless_use_undef() {
    let doc = b"=\xF3rl\x05\x00\x28\x28\x25";
    let plain = Decoder::new(options(1, false))
        .decode(doc)
        .expect_err("two levels");
    assert_eq!(plain.kind(), &ErrorKind::DepthExceeded(1));
    assert!(Decoder::new(options(2, false)).decode(doc).is_ok());
    assert!(Decoder::new(options(1, true)).decode(doc).is_ok());
    let serde = from_slice_with::<Value>(doc, options(1, true));
    assert!(serde.is_ok(), "{serde:?}");
}
