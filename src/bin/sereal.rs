//! `sereal`: inspect, validate and check Sereal documents.

use clap::{Parser, Subcommand};
use sereal::conformance::{read_cases, Report};
use sereal::Decoder;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sereal",
    version,
    about = "Inspect, validate and check Sereal documents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode each FILE fully and print one line per file: OK, or the error
    /// and its byte offset. Exits 1 if any file fails. `-` reads stdin.
    ///
    /// Example: sereal validate cache/*.srl
    Validate {
        /// Documents to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run the conformance checks on corpus files written by Perl's Sereal
    /// (zstd-compressed JSON Lines; see shared/corpus/README.md): decode
    /// `canon`, re-encode it with the case's options and require Perl's
    /// exact bytes; decode `srl` and require the same graph. Prints each
    /// failure and `N passed, M failed`; exits 1 on any failure.
    ///
    /// Example: sereal conformance corpus/perl-sereal-5.003/*.jsonl.zst
    Conformance {
        /// Corpus files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn read_input(path: &PathBuf) -> std::io::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf)?;
        Ok(buf)
    } else {
        std::fs::read(path)
    }
}

fn validate(files: &[PathBuf]) -> ExitCode {
    let dec = Decoder::default();
    let mut failed = 0;
    for f in files {
        let result = read_input(f).map_err(|e| e.to_string()).and_then(|doc| {
            dec.decode_with_header(&doc)
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        match result {
            Ok(()) => println!("{}: OK", f.display()),
            Err(e) => {
                failed += 1;
                println!("{}: {e}", f.display());
            }
        }
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn conformance(files: &[PathBuf]) -> ExitCode {
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
        println!("FAIL case {id} [{profile}] {name}: {what}{at}");
    }
    println!("{}", report.summary());
    if report.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Validate { files } => validate(files),
        Command::Conformance { files } => conformance(files),
    }
}
