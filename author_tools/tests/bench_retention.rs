//! The `bench_retention` binary: its line format, `--json`, `--verify`,
//! `--decode` (ours and Perl's), `--compare` (its table, and its JSON),
//! and the regression checks `--max-rss-kb`, `--baseline` and
//! `--check-baselines`, with the committed baselines (small counts; no
//! timing is asserted).

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
                "mode",
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
            line.starts_with(&format!("case={case} mode=encode count=500 iterations=3 ")),
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

    let dir = temp_dir("growth");
    let json = saved_records_run();
    let saved = dir.join("base.json");
    std::fs::write(&saved, &json).unwrap();
    // the same run holds
    let (code, out, err) = records_against(&saved, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("baseline records (encode) bytes: now") && out.contains("checksum: now"),
        "{out}"
    );
    // peak RSS: growth within the absolute slack passes even past 10% (a
    // run this small moves by some 600 KiB between runs) ...
    let rss = field(&json, "peak_rss_kb");
    let (code, out, _) = records_against(
        &edited(&json, &dir, "peak_rss_kb", rss, rss.saturating_sub(600)),
        &["--rss-slack-kb", "2048"],
    );
    assert_eq!(code, 0, "{out}");
    // ... and growth past both the slack and the percentage fails
    let smaller = edited(&json, &dir, "peak_rss_kb", rss, rss.saturating_sub(1500));
    let (code, out, _) = records_against(&smaller, &["--rss-slack-kb", "100", "--tolerance", "2"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("grew past the 2% tolerance"), "{out}");
    let (code, out, _) = records_against(&edited(&json, &dir, "peak_rss_kb", rss, rss / 2), &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("grew past the 10% tolerance"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_baseline_fails_on_any_change_of_the_work() {
    let dir = temp_dir("work");
    let json = saved_records_run();
    // output smaller or larger, or another checksum: the work changed
    for (key, by) in [("bytes", -1i64), ("bytes", 1), ("checksum", 7)] {
        let v = field(&json, key);
        let path = edited(&json, &dir, key, v, v.checked_add_signed(by).unwrap());
        let (code, out, _) = records_against(&path, &[]);
        assert_eq!(code, 1, "{key} {by}: {out}");
        assert!(
            out.contains(&format!("{key}: now {v}")) && out.contains("the output changed"),
            "{out}"
        );
    }
    // another count is an error, not a comparison
    let saved = dir.join("base.json");
    std::fs::write(&saved, &json).unwrap();
    let (code, out, err) = bench(&[
        "--case",
        "records",
        "--count",
        "1000",
        "--iterations",
        "1",
        "--baseline",
        saved.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("saved with --count 2000, this run has --count 1000"),
        "{err}"
    );
    // a decode run is not checked against an encode run
    let (code, _, err) = bench(&[
        "--case",
        "records",
        "--count",
        "2000",
        "--iterations",
        "1",
        "--decode",
        "--baseline",
        saved.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no saved run of case records (decode); it has records (encode)"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unusable_baseline_is_refused_before_the_run() {
    let dir = temp_dir("unusable");
    let json = saved_records_run();
    let missing = dir.join("missing.json");
    let malformed = dir.join("malformed.json");
    std::fs::write(&malformed, format!("{json}\n{{\"case\": \"records\"}}\n")).unwrap();
    let no_mode = dir.join("no_mode.json");
    std::fs::write(&no_mode, json.replace("\"mode\":\"encode\",", "")).unwrap();
    let twice = dir.join("twice.json");
    std::fs::write(&twice, format!("{json}\n{json}\n")).unwrap();
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "\n").unwrap();
    for (path, says) in [
        (&missing, "missing.json: No such file"),
        (&malformed, "malformed.json:2: not a saved run"),
        (&no_mode, "no_mode.json:1: the run has no \"mode\""),
        (
            &twice,
            "twice.json:2: a second saved run of case records (encode)",
        ),
        (&empty, "empty.json: no saved runs"),
    ] {
        for flag in ["--baseline", "--check-baselines"] {
            let mut args = vec![flag, path.to_str().unwrap()];
            if flag == "--baseline" {
                args.extend(["--case", "records", "--count", "2000", "--iterations", "1"]);
            }
            let (code, out, err) = bench(&args);
            assert_eq!(code, 1, "{flag} {says}");
            assert!(err.contains(says), "{flag}: {err}");
            // nothing was measured
            assert!(out.is_empty(), "{flag}: {out}");
        }
    }
    // --compare does not take a baseline; it writes JSON with --json
    let (code, _, err) = bench(&["--compare", "--baseline", missing.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_baselines_reruns_every_saved_run() {
    let dir = temp_dir("all");
    let mut lines = String::new();
    for (case, mode) in [
        ("scalars", None),
        ("arrays", Some("--decode")),
        ("keys", Some("--floor")),
    ] {
        let mut args = vec![
            "--case",
            case,
            "--count",
            "3000",
            "--iterations",
            "1",
            "--json",
        ];
        args.extend(mode);
        let (code, out, err) = bench(&args);
        assert_eq!(code, 0, "{err}");
        lines += &out;
    }
    let path = dir.join("all.jsonl");
    std::fs::write(&path, &lines).unwrap();
    let (code, out, err) = bench(&["--check-baselines", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    for label in ["scalars (encode)", "arrays (decode)", "keys (floor)"] {
        assert!(
            out.contains(&format!("baseline {label} peak_rss_kb: now")),
            "{out}"
        );
    }
    assert!(out.contains("3 runs, all hold"), "{out}");
    // one saved run whose output differs fails the whole check
    let bytes = field(&lines, "bytes");
    std::fs::write(
        &path,
        lines.replacen(&format!("\"bytes\":{bytes}"), "\"bytes\":1", 1),
    )
    .unwrap();
    let (code, out, _) = bench(&["--check-baselines", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("the output changed") && out.contains("FAILED"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The committed baselines (`author_tools/baselines.jsonl`): peak RSS of
/// every case, encode and decode, within the stated tolerance, and the same
/// output. Release builds only, without a sanitizer: a debug or
/// AddressSanitizer build has other memory figures.
#[test]
fn committed_baselines_hold() {
    if cfg!(debug_assertions) || std::env::var_os("SEREAL_SANITIZER").is_some() {
        eprintln!("committed_baselines_hold: release builds without a sanitizer only: skipped");
        return;
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/baselines.jsonl");
    let (code, out, err) = bench(&["--check-baselines", path]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("12 runs, all hold"), "{out}");
}

#[test]
fn compare_json_is_one_document() {
    let (code, out, err) = bench(&[
        "--compare",
        "--json",
        "--cases",
        "scalars,arrays",
        "--count",
        "1000",
        "--iterations",
        "1",
        "--pairs",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(doc["mode"], "encode");
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for (c, name) in cases.iter().zip(["scalars", "arrays"]) {
        assert_eq!(c["case"], name);
        assert_eq!(c["count"], 1000);
        assert_eq!(c["pairs"].as_array().unwrap().len(), 2);
        let run = &c["pairs"][0][0]["run"];
        assert_eq!(run["case"], name);
        assert!(run["peak_rss_kb"].as_u64().unwrap() > 0, "{run}");
        assert!(
            c["medians"]["sereal"]["peak_rss_kb"].as_f64().unwrap() > 0.0,
            "{c}"
        );
    }
}

fn temp_dir(what: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("bench-baseline-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `--json` run of 2000 records.
fn saved_records_run() -> String {
    let (code, json, err) = bench(&[
        "--case",
        "records",
        "--count",
        "2000",
        "--iterations",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    json.trim().to_string()
}

/// The number `key` of the first `--json` line in `json`.
fn field(json: &str, key: &str) -> u64 {
    let at = json
        .find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("{key} in {json}"))
        + key.len()
        + 3;
    json[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

/// `json` with its `key` changed from `from` to `to`, written to a file.
fn edited(json: &str, dir: &std::path::Path, key: &str, from: u64, to: u64) -> std::path::PathBuf {
    let text = json.replace(&format!("\"{key}\":{from}"), &format!("\"{key}\":{to}"));
    assert_ne!(text, json, "{key} not replaced");
    let path = dir.join(format!("edited-{key}-{to}.json"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The 2000-record run checked against the baseline `path`.
fn records_against(path: &std::path::Path, extra: &[&str]) -> (i32, String, String) {
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
        assert_eq!(
            (dec[0], dec[2], dec[3]),
            (enc[0], enc[2], enc[3]),
            "{dec:?}"
        );
        assert_eq!((dec[1].1, enc[1].1), ("decode", "encode"));
        // bytes and checksum are the decoded document's: the encoder's output
        assert_eq!(&dec[7..9], &enc[7..9], "{case}: {dec:?} {enc:?}");
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
        assert_eq!(&perl[..2], &ours[..2], "{case}: {perl:?} {ours:?}");
        assert_eq!(&perl[7..9], &ours[7..9], "{case}: {perl:?} {ours:?}");
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
