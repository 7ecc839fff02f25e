//! `bench_retention --baseline` and `--check-baselines`: a run against
//! saved runs. A baseline file holds `--json` lines, one per case and mode;
//! a run must do the same work as its saved one (same count, the same
//! output bytes and checksum) within the stated peak-RSS tolerance.

use super::Run;
use std::path::Path;
use std::process::{Command, Stdio};

/// How a run may differ from a saved one.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Allowed growth of peak RSS, in percent.
    pub percent: f64,
    /// Peak RSS growth below this many KiB never fails: a process's RSS moves
    /// by a few hundred KiB between identical runs (loader, allocator arenas,
    /// page rounding), which is more than the percentage of a small run.
    pub rss_slack_kb: u64,
}

/// The saved runs of a baseline file, read and checked before anything is
/// measured: a missing file, a line that is not a saved run, a run without
/// its mode, or two runs of one case and mode are errors naming the line.
pub fn load(path: &Path) -> Result<Vec<Run>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("baseline {}: {e}", path.display()))?;
    let mut runs: Vec<Run> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("baseline {}:{}", path.display(), n + 1);
        let run = Run::parse(line).ok_or_else(|| {
            format!(
                "{}: not a saved run (a line of `bench_retention --json`: case, mode, count, iterations, median_ms, min_ms, max_ms, bytes, checksum, peak_rss_kb)",
                at()
            )
        })?;
        if run.mode.is_empty() {
            return Err(format!(
                "{}: the run has no \"mode\" (encode, decode or floor); save it again with this bench_retention",
                at()
            ));
        }
        if runs
            .iter()
            .any(|r| r.case == run.case && r.mode == run.mode)
        {
            return Err(format!(
                "{}: a second saved run of case {} ({})",
                at(),
                run.case,
                run.mode
            ));
        }
        runs.push(run);
    }
    if runs.is_empty() {
        return Err(format!("baseline {}: no saved runs", path.display()));
    }
    Ok(runs)
}

/// The saved run of `run`'s case and mode.
fn saved_for<'a>(run: &Run, saved: &'a [Run], path: &Path) -> Result<&'a Run, String> {
    saved
        .iter()
        .find(|b| b.case == run.case && b.mode == run.mode)
        .ok_or_else(|| {
            let have: Vec<String> = saved
                .iter()
                .map(|b| format!("{} ({})", b.case, b.mode))
                .collect();
            format!(
                "baseline {}: no saved run of case {} ({}); it has {}",
                path.display(),
                run.case,
                run.mode,
                have.join(", ")
            )
        })
}

/// Compares `run` with its saved run, printing a line per measure. A count
/// other than the saved one is an error (the runs would not be comparable);
/// other output bytes or another checksum fail (the work changed), and so
/// does peak RSS grown past the tolerance.
pub fn check(run: &Run, saved: &[Run], path: &Path, tolerance: Tolerance) -> Result<bool, String> {
    let base = saved_for(run, saved, path)?;
    if run.count != base.count {
        return Err(format!(
            "baseline {}: case {} ({}) was saved with --count {}, this run has --count {}",
            path.display(),
            run.case,
            run.mode,
            base.count,
            run.count
        ));
    }
    let label = format!("{} ({})", run.case, run.mode);
    let mut ok = true;
    for (what, now, then) in [
        ("bytes", run.bytes, base.bytes),
        ("checksum", run.checksum, base.checksum),
    ] {
        let same = now == then;
        println!(
            "baseline {label} {what}: now {now}, saved {then}{}",
            if same { "" } else { ": the output changed" }
        );
        ok &= same;
    }
    let (now, then) = (run.peak_rss_kb, base.peak_rss_kb);
    let limit = then as f64 * (1.0 + tolerance.percent / 100.0);
    let grew = now as f64 > limit && now.saturating_sub(then) > tolerance.rss_slack_kb;
    println!(
        "baseline {label} peak_rss_kb: now {now}, saved {then} ({:+.1}%){}",
        (now as f64 / then.max(1) as f64 - 1.0) * 100.0,
        if grew {
            format!(
                ": grew past the {}% tolerance (and the {} KiB slack)",
                tolerance.percent, tolerance.rss_slack_kb
            )
        } else {
            String::new()
        }
    );
    ok &= !grew;
    Ok(ok)
}

/// Runs every saved run of `path` again, each in a fresh process of this
/// executable (peak RSS is a process's), and checks it against its saved
/// run. Returns whether all hold.
pub fn check_all(path: &Path, tolerance: Tolerance) -> Result<bool, String> {
    let saved = load(path)?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut ok = true;
    for base in &saved {
        let mut cmd = Command::new(&exe);
        cmd.args(["--case", &base.case])
            .args(["--count", &base.count.to_string()])
            .args(["--iterations", &base.iterations.to_string()])
            .arg("--json");
        match base.mode.as_str() {
            "encode" => {}
            "decode" => {
                cmd.arg("--decode");
            }
            "floor" => {
                cmd.arg("--floor");
            }
            other => {
                return Err(format!(
                    "baseline {}: unknown mode {other:?}",
                    path.display()
                ))
            }
        }
        let out = cmd
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!("case {} ({}) failed: {text}", base.case, base.mode));
        }
        let run = Run::parse(&text)
            .ok_or_else(|| format!("case {} ({}): cannot parse {text:?}", base.case, base.mode))?;
        ok &= check(&run, &saved, path, tolerance)?;
    }
    println!(
        "baseline {}: {} runs, {}",
        path.display(),
        saved.len(),
        if ok { "all hold" } else { "FAILED" }
    );
    Ok(ok)
}
