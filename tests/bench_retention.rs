//! The `bench_retention` binary: its line format, `--json`, `--verify`,
//! and the regression checks `--max-rss-kb` and `--baseline` (small counts;
//! no timing is asserted).

use std::process::Command;

fn bench(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bench_retention"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn prints_the_parsed_line_for_every_case() {
    for case in ["records", "arrays", "scalars", "keys", "shared", "frozen"] {
        let (code, out, err) = bench(&["--case", case, "--count", "500", "--iterations", "3"]);
        assert_eq!(code, 0, "{case}: {err}");
        let line = out.trim();
        let keys: Vec<&str> = line
            .split(' ')
            .map(|kv| kv.split('=').next().unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "case",
                "count",
                "iterations",
                "median_ms",
                "min_ms",
                "max_ms",
                "bytes",
                "checksum",
                "peak_rss_kb"
            ],
            "{line}"
        );
        assert!(
            line.starts_with(&format!("case={case} count=500 iterations=3 ")),
            "{line}"
        );
    }
}

#[test]
fn verify_checks_the_output_against_the_input() {
    for policy in [None, Some("guard"), Some("snapshot")] {
        let mut args = vec![
            "--case",
            "shared",
            "--count",
            "300",
            "--iterations",
            "1",
            "--verify",
        ];
        if let Some(p) = policy {
            args.extend(["--policy", p]);
        }
        let (code, _, err) = bench(&args);
        assert_eq!(code, 0, "{policy:?}: {err}");
        assert!(
            err.contains("decoded output equals the input: yes"),
            "{err}"
        );
    }
}

#[test]
fn rss_and_baseline_checks_fail_on_growth() {
    let (code, _, err) = bench(&[
        "--case",
        "scalars",
        "--count",
        "100",
        "--iterations",
        "1",
        "--max-rss-kb",
        "1",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("exceeds --max-rss-kb 1"), "{err}");

    let dir = std::env::temp_dir().join(format!("bench-baseline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (code, json, _) = bench(&[
        "--case",
        "records",
        "--count",
        "2000",
        "--iterations",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0);
    let saved = dir.join("base.json");
    std::fs::write(&saved, &json).unwrap();
    // the same run is within tolerance
    let (code, out, err) = bench(&[
        "--case",
        "records",
        "--count",
        "2000",
        "--iterations",
        "1",
        "--baseline",
        saved.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("baseline bytes: now"), "{out}");
    // twice the records: the output grows well beyond 5%
    let (code, out, _) = bench(&[
        "--case",
        "records",
        "--count",
        "4000",
        "--iterations",
        "1",
        "--baseline",
        saved.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("exceeds the 5% tolerance"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}
