//! The `sereal` binary: validate and conformance.

use std::io::Write;
use std::process::{Command, Stdio};

fn sereal(args: &[&str], stdin: &[u8]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sereal"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn validate_reports_each_file_and_fails_on_any_error() {
    let dir = std::env::temp_dir().join(format!("sereal-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.srl");
    std::fs::write(
        &good,
        sereal::encode(&sereal::Value::array([1, 2])).unwrap(),
    )
    .unwrap();
    let bad = dir.join("bad.srl");
    // an array claiming 5 elements with only one present
    std::fs::write(&bad, b"=\xF3rl\x05\x00\x28\x2b\x05\x01").unwrap();
    let (code, out) = sereal(&["validate", good.to_str().unwrap()], b"");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("good.srl: OK"), "{out}");
    let (code, out) = sereal(
        &["validate", good.to_str().unwrap(), bad.to_str().unwrap()],
        b"",
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("good.srl: OK"), "{out}");
    assert!(
        out.contains("bad.srl: ") && out.contains("at offset 8"),
        "{out}"
    );
    // stdin, and input that is not Sereal at all
    let (code, out) = sereal(&["validate", "-"], b"{\"json\": true}");
    assert_eq!(code, 1);
    assert!(
        out.contains("-: not a Sereal document (bad magic string) at offset 0"),
        "{out}"
    );
    let (code, out) = sereal(&["validate", "-"], b"=\xC3\xB3rl\x05\x00\x01");
    assert_eq!(code, 1);
    assert!(out.contains("UTF-8 encoded"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn conformance_prints_the_summary_line() {
    let corpus = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/perl-sereal-5.003/v3.jsonl.zst"
    );
    let (code, out) = sereal(&["conformance", corpus], b"");
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.lines().last(), Some("1408 passed, 0 failed"));
    let freeze = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/perl-sereal-5.003/v5_freeze.jsonl.zst"
    );
    let (code, out) = sereal(&["conformance", freeze], b"");
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.lines().last(), Some("1408 passed, 0 failed"));
}
