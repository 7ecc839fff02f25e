//! The wide Perl 5.003 corpus (tests/corpus/perl-sereal-5.003-wide/,
//! written by author_tools/make_wide_corpus.pl): every record of its 42
//! profiles goes through the checks of the 14-profile corpus. Each profile
//! has exactly 324 records, and every record passes.

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
fn every_wide_profile_matches_perl() {
    let mut report = Report::default();
    for p in WIDE_PROFILES {
        let cases = read_cases(&dir().join(format!("{p}.jsonl.zst"))).expect("corpus file");
        assert_eq!(cases.len(), RECORDS, "profile {p}");
        assert!(cases.iter().all(|c| c.profile == p), "profile {p}");
        report.add(&cases);
    }
    let failed: Vec<String> = report
        .failed
        .iter()
        .map(|(id, _, profile, what, at)| format!("{profile} {id} {what} (offset {at:?})"))
        .collect();
    assert!(failed.is_empty(), "failed records: {failed:#?}");
    assert_eq!(report.summary(), "13608 passed, 0 failed");
}
