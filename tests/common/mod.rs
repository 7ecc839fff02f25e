//! What several test files share: the Perl 5.003 corpus's profiles and files.

use std::path::PathBuf;

/// The 14 option profiles of the corpus (tests/corpus/README.md).
pub const PROFILES: [&str; 14] = [
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

/// The corpus file of `profile`.
pub fn corpus(profile: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus/perl-sereal-5.003")
        .join(format!("{profile}.jsonl.zst"))
}
