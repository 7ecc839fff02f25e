//! `validate` and `conformance`: pass or fail, per document or case.

use crate::input::{Doc, Res, Stop};
use sereal::conformance::{read_cases, Report};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Decodes one document fully (user header data and body): prints `OK`
/// (unless `quiet`) or the error, on one line.
pub fn validate(doc: &Doc, quiet: bool, out: &mut dyn Write) -> Res<usize> {
    let dec = crate::input::decoder();
    let decoded = dec
        .decode_header(doc.bytes)
        .and_then(|_| dec.decode_prefix(doc.bytes).map(|(_, used)| used));
    match decoded {
        Ok(used) => {
            if !quiet {
                writeln!(out, "{}: OK", doc.label(Some(used)))?;
            }
            Ok(used)
        }
        Err(e) => {
            writeln!(out, "{}", doc.named_error_text(&e, None))?;
            Err(Stop::Failed)
        }
    }
}

/// Ends `validate`: `N ok, M failed` on standard error, after the
/// documents' lines on standard output. Whether none failed.
pub fn summary(passed: usize, failed: usize) -> bool {
    let _ = writeln!(std::io::stderr(), "{passed} ok, {failed} failed");
    failed == 0
}

/// Prints a line; a closed output is not worth a panic.
fn say(line: std::fmt::Arguments) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

pub fn conformance(files: &[PathBuf]) -> ExitCode {
    let mut report = Report::default();
    for f in files {
        match read_cases(f) {
            Ok(cases) => report.add(&cases),
            Err(e) => {
                eprintln!("sereal: cannot read {}: {e}", f.display());
                return ExitCode::FAILURE;
            }
        }
    }
    for (id, name, profile, what, at) in &report.failed {
        let at = at
            .map(|o| format!(" (first difference at byte {o})"))
            .unwrap_or_default();
        say(format_args!(
            "FAIL case {id} [{profile}] {name}: {what}{at}"
        ));
    }
    say(format_args!("{}", report.summary()));
    if report.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
