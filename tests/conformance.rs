//! The Perl 5.003 conformance corpus (tests/corpus/README.md): every case of
//! all 14 profiles must pass all checks.

use sereal::conformance::{read_cases, Report};
use std::path::PathBuf;

const PROFILES: [&str; 14] = [
    "v1",
    "v2",
    "v3",
    "v4",
    "v5",
    "v5_sort_keys",
    "v5_canonical",
    "v5_dedupe",
    "v5_aliased_dedupe",
    "v5_no_shared_hashkeys",
    "v5_snappy",
    "v5_zlib",
    "v5_zstd",
    "v5_freeze",
];

fn corpus(profile: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/perl-sereal-5.003")
        .join(format!("{profile}.jsonl.zst"))
}

#[test]
fn every_profile_matches_perl() {
    let mut report = Report::default();
    for p in PROFILES {
        let cases = read_cases(&corpus(p)).expect("corpus file readable");
        assert_eq!(cases.len(), 1408, "profile {p}");
        report.add(&cases);
    }
    for f in report.failed.iter().take(20) {
        eprintln!("FAIL {f:?}");
    }
    assert!(report.failed.is_empty(), "{}", report.summary());
    assert_eq!(report.passed, 14 * 1408);
    assert_eq!(report.summary(), "19712 passed, 0 failed");
}
