//! Every decoder limit applies to every tag that creates what it limits,
//! with Perl 5.003's rule for each (the expected outcomes were checked with
//! `Sereal::Decoder->new({...})->decode(pack "H*", HEX)`), through the
//! decoder and through serde.

use sereal::{Decoder, DecoderOptions, ErrorKind};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Decodes `doc` under `opts`: `Ok(())` or the limit error's offset. The
/// serde path must agree, offset included.
fn outcome(opts: DecoderOptions, doc: &str) -> Result<(), Option<usize>> {
    let bytes = hex(doc);
    let serde = sereal::from_slice_with::<sereal::Value>(&bytes, opts.clone());
    let decoded = match Decoder::new(opts).decode(&bytes) {
        Ok(_) => Ok(()),
        Err(e) => {
            assert!(
                matches!(e.kind(), ErrorKind::LimitExceeded(_)),
                "{doc}: {e}"
            );
            Err(e.offset())
        }
    };
    match (&decoded, serde) {
        (Ok(()), Ok(_)) => {}
        (Err(off), Err(e)) => {
            assert!(
                matches!(e.kind(), ErrorKind::LimitExceeded(_)),
                "{doc}: {e}"
            );
            assert_eq!(&e.offset(), off, "{doc}: serde offset");
        }
        (d, s) => panic!("{doc}: decode {d:?}, serde {s:?}"),
    }
    decoded
}

#[test]
fn array_limits_apply_to_every_array_tag() {
    let o = || DecoderOptions::new().max_num_array_entries(3);
    // ARRAYREF_4, REFN ARRAY 4, a bare ARRAY 4 (Perl: "Got input array with 4 entries")
    assert!(outcome(o(), "3df3726c05004400010203").is_err());
    assert!(outcome(o(), "3df3726c0500282b0401020304").is_err());
    assert!(outcome(o(), "3df3726c05002b0401020304").is_err());
    // three entries are allowed in every form
    assert_eq!(outcome(o(), "3df3726c050043000102"), Ok(()));
    assert_eq!(outcome(o(), "3df3726c0500282b03010203"), Ok(()));
}

#[test]
fn hash_limits_apply_to_every_hash_tag() {
    let o = || DecoderOptions::new().max_num_hash_entries(3);
    // HASHREF_4 and REFN HASH 4
    assert!(outcome(o(), "3df3726c050054626b3001626b3101626b3201626b3301").is_err());
    assert!(outcome(o(), "3df3726c0500282a04626b3001626b3101626b3201626b3301").is_err());
    assert_eq!(
        outcome(o(), "3df3726c050053626b3001626b3101626b3201"),
        Ok(())
    );
}

#[test]
fn string_limits_follow_perls_rule() {
    let o = || DecoderOptions::new().max_string_length(3);
    // BINARY and STR_UTF8 values of 4 bytes are refused at their length
    assert_eq!(outcome(o(), "3df3726c0500260461626364"), Err(Some(7)));
    assert_eq!(outcome(o(), "3df3726c0500270461626364"), Err(Some(7)));
    // inside an array, and a COPY of a refused string is refused too
    assert!(outcome(o(), "3df3726c05004226046162636401").is_err());
    // a regexp pattern with a length
    assert!(outcome(o(), "3df3726c05002831260461626364").is_err());
    // a COPY, as a value, of a long hash key: Perl re-reads the key as a value
    assert!(outcome(o(), "3df3726c05004251260461626364012f03").is_err());
    // Perl reads these: a short binary, hash keys and class names
    assert_eq!(outcome(o(), "3df3726c05006461626364"), Ok(()));
    assert_eq!(outcome(o(), "3df3726c050051646162636401"), Ok(()));
    assert_eq!(outcome(o(), "3df3726c05005126046162636401"), Ok(()));
    assert_eq!(outcome(o(), "3df3726c05002c26046162636440"), Ok(()));
    // a key COPY of a long key
    assert_eq!(
        outcome(o(), "3df3726c050042282a0168616263646566676801282a012f0501"),
        Ok(())
    );
}
