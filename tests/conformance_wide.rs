//! The wide Perl 5.003 corpus (tests/corpus/perl-sereal-5.003-wide/,
//! written by author_tools/make_wide_corpus.pl): every record of its 42
//! profiles goes through the checks of the 14-profile corpus. Each profile
//! has exactly 324 records; the records that fail are exactly those listed
//! in `known_divergences.txt` (decoder divergences from Perl's decoder,
//! explained in the corpus README), and no other.

use sereal::conformance::{read_cases, Report};
use std::path::PathBuf;

/// The profiles of the wide corpus (its README lists their options).
const WIDE_PROFILES: [&str; 42] = [
    "v1_aliased_dedupe",
    "v1_canonical",
    "v1_dedupe",
    "v1_no_bless_objects",
    "v1_no_shared_hashkeys",
    "v2_aliased_dedupe",
    "v2_canonical",
    "v2_dedupe",
    "v2_freeze",
    "v2_header",
    "v2_no_shared_hashkeys",
    "v3_aliased_dedupe",
    "v3_canonical",
    "v3_dedupe",
    "v3_freeze",
    "v3_header",
    "v3_no_shared_hashkeys",
    "v3_zstd_level22",
    "v4_aliased_dedupe",
    "v4_canonical",
    "v4_dedupe",
    "v4_freeze",
    "v4_header",
    "v4_no_shared_hashkeys",
    "v5_aliased_dedupe",
    "v5_canonical",
    "v5_dedupe",
    "v5_freeze",
    "v5_freeze_aliased_dedupe",
    "v5_freeze_dedupe",
    "v5_header",
    "v5_header_freeze_aliased_dedupe",
    "v5_header_zlib",
    "v5_no_bless_objects",
    "v5_no_shared_hashkeys",
    "v5_snappy_level",
    "v5_sort_keys2",
    "v5_sort_keys3",
    "v5_zlib_level1",
    "v5_zlib_level9",
    "v5_zstd_level1",
    "v5_zstd_level19",
];

/// Records per profile: 24 structured cases and 300 random graphs.
const RECORDS: usize = 324;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/perl-sereal-5.003-wide")
}

#[test]
fn every_wide_profile_matches_perl_but_the_known_divergences() {
    let mut report = Report::default();
    for p in WIDE_PROFILES {
        let cases = read_cases(&dir().join(format!("{p}.jsonl.zst"))).expect("corpus file");
        assert_eq!(cases.len(), RECORDS, "profile {p}");
        assert!(cases.iter().all(|c| c.profile == p), "profile {p}");
        report.add(&cases);
    }
    let mut failed: Vec<String> = report
        .failed
        .iter()
        .map(|(id, _, profile, what, _)| format!("{profile} {id} {what}"))
        .collect();
    failed.sort();
    let list = std::fs::read_to_string(dir().join("known_divergences.txt")).unwrap();
    let mut known: Vec<String> = list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(String::from)
        .collect();
    known.sort();
    let new: Vec<_> = failed.iter().filter(|f| !known.contains(f)).collect();
    let gone: Vec<_> = known.iter().filter(|k| !failed.contains(k)).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "failures not in known_divergences.txt: {new:#?}\nlisted but passing: {gone:#?}"
    );
    assert_eq!(report.passed + report.failed.len(), 42 * RECORDS);
    assert_eq!(report.summary(), "13286 passed, 322 failed");
}
