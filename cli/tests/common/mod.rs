//! What the tests of the `sereal` binary share: running it, and corpus
//! documents.

#![allow(dead_code)] // each test file uses its own part

use sereal::conformance::read_cases;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the binary: exit code, standard output (bytes) and standard error.
/// No run may panic.
pub fn run(args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sereal"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // a command may stop reading early; a closed pipe is not a failure here
    let _ = input.write_all(stdin);
    drop(input);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (out.status.code().unwrap_or(-1), out.stdout, err)
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// The `canon` document of corpus case `id` of `profile`.
pub fn canon(profile: &str, id: u64) -> Vec<u8> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/perl-sereal-5.003")
        .join(format!("{profile}.jsonl.zst"));
    read_cases(&path)
        .unwrap()
        .into_iter()
        .find(|c| c.id == id)
        .and_then(|c| c.canon)
        .unwrap()
}

/// A fresh directory for one test's files, removed when dropped.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("sereal-cli-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// Writes `bytes` to the file `name` in the directory: its path.
    pub fn file(&self, name: &str, bytes: &[u8]) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether Perl's Sereal (encoder and decoder) is installed; prints a
/// notice naming `what` is skipped when it is not (as the library's tests
/// do).
pub fn perl_sereal(what: &str) -> bool {
    let ok = Command::new("perl")
        .args(["-MSereal::Encoder", "-MSereal::Decoder", "-e", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP {what}: Perl's Sereal is not installed (apt-get install libsereal-perl)");
    }
    ok
}

/// What Perl's Sereal::Decoder reads in each file: its user header data
/// (undef when there is none) and its body, as Perl's Sereal::Encoder
/// writes them back (classes and sharing kept), decoded by the library.
pub fn perl_reads(files: &[String]) -> Vec<(sereal::Value, sereal::Value)> {
    let script = r#"
        use Sereal::Decoder; use Sereal::Encoder;
        my $dec = Sereal::Decoder->new;
        my @read;
        for my $file (@ARGV) {
            open my $fh, '<:raw', $file or die "$file: $!";
            my $bytes = do { local $/; <$fh> };
            push @read, [$dec->decode_only_header($bytes), $dec->decode($bytes)];
        }
        binmode STDOUT;
        print Sereal::Encoder->new->encode(\@read);
    "#;
    let out = Command::new("perl")
        .args(["-e", script])
        .args(files)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "perl: {err}");
    let read = sereal::decode(&out.stdout).unwrap();
    let pairs = read.as_array().unwrap().to_vec();
    pairs
        .iter()
        .map(|p| {
            let pair = p.as_array().unwrap();
            (pair[0].clone(), pair[1].clone())
        })
        .collect()
}
