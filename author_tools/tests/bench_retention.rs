//! The `bench_retention` binary: its line format, `--json`, `--verify`,
//! `--decode` (ours and Perl's) and `--decode --compare`, and the regression
//! checks `--max-rss-kb` and `--baseline` (small counts; no timing is
//! asserted).

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
    // peak RSS: growth within the absolute slack passes even past 5% ...
    let rss = saved_rss(&json);
    let (code, out, _) = bench_against(&json, rss.saturating_sub(400), &dir, &[]);
    assert_eq!(code, 0, "{out}");
    // ... and growth past both the slack and the percentage fails
    let (code, out, _) = bench_against(
        &json,
        rss.saturating_sub(1500),
        &dir,
        &["--rss-slack-kb", "100"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("peak_rss_kb") && out.contains("exceeds the 5% tolerance"),
        "{out}"
    );
    let (code, out, _) = bench_against(&json, rss / 2, &dir, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("exceeds the 5% tolerance"), "{out}");
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

/// The `peak_rss_kb` of a `--json` line.
fn saved_rss(json: &str) -> u64 {
    let at = json
        .find("\"peak_rss_kb\":")
        .expect("peak_rss_kb in the JSON line")
        + 14;
    json[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

/// Runs the 2000-record case against `json` with its peak RSS replaced by
/// `rss` KiB.
fn bench_against(
    json: &str,
    rss: u64,
    dir: &std::path::Path,
    extra: &[&str],
) -> (i32, String, String) {
    let edited = json.replace(
        &format!("\"peak_rss_kb\":{}", saved_rss(json)),
        &format!("\"peak_rss_kb\":{rss}"),
    );
    let path = dir.join("edited.json");
    std::fs::write(&path, edited).unwrap();
    let mut args = vec![
        "--case",
        "records",
        "--count",
        "2000",
        "--iterations",
        "1",
        "--baseline",
        path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    bench(&args)
}

/// Whether Perl's Sereal::Encoder and Decoder are installed.
fn perl_available() -> bool {
    Command::new("perl")
        .args(["-MSereal::Encoder", "-MSereal::Decoder", "-e", "1"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The `key=value` pairs of a result line, in order.
fn fields(line: &str) -> Vec<(&str, &str)> {
    line.split(' ')
        .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
        .collect()
}

#[test]
fn decode_prints_the_line_of_the_document_it_decodes() {
    for case in ["records", "keys", "frozen"] {
        let common = ["--case", case, "--count", "500", "--iterations", "3"];
        let (code, enc, err) = bench(&common);
        assert_eq!(code, 0, "{case}: {err}");
        let (code, dec, err) = bench(&[&common[..], &["--decode"]].concat());
        assert_eq!(code, 0, "{case}: {err}");
        let (enc, dec) = (fields(enc.trim()), fields(dec.trim()));
        let keys = |f: &[(&str, &str)]| f.iter().map(|(k, _)| k.to_string()).collect::<Vec<_>>();
        assert_eq!(keys(&dec), keys(&enc), "{dec:?}");
        assert_eq!(&dec[..3], &enc[..3], "{dec:?}");
        // bytes and checksum are the decoded document's: the encoder's output
        assert_eq!(&dec[6..8], &enc[6..8], "{case}: {dec:?} {enc:?}");
    }
}

#[test]
fn perl_decode_prints_the_same_line_format() {
    if !perl_available() {
        eprintln!("Perl's Sereal is not installed (apt-get install -y libsereal-perl): skipped");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench_retention.pl");
    for case in ["arrays", "frozen"] {
        let out = Command::new("perl")
            .args([
                script,
                "--case",
                case,
                "--count",
                "500",
                "--iterations",
                "3",
            ])
            .arg("--decode")
            .env("PERL_HASH_SEED", "0")
            .env("PERL_PERTURB_KEYS", "0")
            .output()
            .unwrap();
        assert!(out.status.success(), "{case}: {out:?}");
        let perl = String::from_utf8_lossy(&out.stdout).into_owned();
        let (code, ours, err) = bench(&[
            "--case",
            case,
            "--count",
            "500",
            "--iterations",
            "3",
            "--decode",
        ]);
        assert_eq!(code, 0, "{err}");
        let (perl, ours) = (fields(perl.trim()), fields(ours.trim()));
        let keys = |f: &[(&str, &str)]| f.iter().map(|(k, _)| k.to_string()).collect::<Vec<_>>();
        assert_eq!(keys(&perl), keys(&ours), "{perl:?}");
        // these cases hold no multi-key hash: both decode the same bytes
        assert_eq!(&perl[6..8], &ours[6..8], "{case}: {perl:?} {ours:?}");
    }
}

#[test]
fn decode_compare_prints_a_ratio_per_case() {
    if !perl_available() {
        eprintln!("Perl's Sereal is not installed (apt-get install -y libsereal-perl): skipped");
        return;
    }
    let cases = ["records", "arrays", "scalars", "keys", "shared", "frozen"];
    let (code, out, err) = bench(&[
        "--decode",
        "--compare",
        "--count",
        "1000",
        "--iterations",
        "1",
        "--pairs",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("Median milliseconds"), "{out}");
    let head: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        head,
        ["Input", "sereal", "perl", "sereal", "perl", "ms/perl", "RSS/perl"],
        "{out}"
    );
    for (case, row) in cases.iter().zip(&lines[2..]) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[..2], ["1k", *case], "{out}");
        assert_eq!(cells.len(), 8, "{row}");
        // a time can round to 0.000 ms: its ratio is `-` or 0; RSS is never 0
        let ratio = |cell: &str| cell.strip_suffix('x').map(|x| x.parse::<f64>().unwrap());
        assert!(cells[6] == "-" || ratio(cells[6]).is_some(), "{row}");
        assert!(ratio(cells[7]).is_some_and(|x| x > 0.0), "{row}");
        assert!(
            out.contains(&format!("{case}: document sereal ")),
            "{case}: {out}"
        );
    }
    assert!(!out.contains("excluded"), "{out}");
}
