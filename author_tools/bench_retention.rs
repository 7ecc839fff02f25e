//! `bench_retention`: encoder (or, with `--decode`, decoder) median time and
//! peak memory on the cases of `author_tools/cases.rs`, side by side with
//! Perl's Sereal::Encoder and Sereal::Decoder (`author_tools/bench_retention.pl`).
//!
//! One run prints one line that scripts parse:
//! `case=records mode=encode count=200000 iterations=9 median_ms=... min_ms=... max_ms=...
//! bytes=... checksum=... peak_rss_kb=...`. `--compare` runs every case for
//! each implementation in a fresh process and prints a table.

#[path = "baseline.rs"]
mod baseline;
#[path = "cases.rs"]
mod cases;
#[path = "compare.rs"]
mod compare;
#[path = "plot.rs"]
mod plot;
#[path = "stats.rs"]
mod stats;

use clap::Parser;
use sereal::{Body, CallbackPolicy, Encoder, EncoderOptions, Value};
use std::process::ExitCode;
use std::time::Instant;

/// Encoder (or decoder) time and peak memory, against Perl's Sereal.
#[derive(Parser, Debug)]
#[command(name = "bench_retention", version)]
pub struct Args {
    /// Input case: records, arrays, scalars, keys, shared, frozen. Decoded,
    /// `records` and `shared` are the documents of heavy key repetition:
    /// after the first record, every hash key is a COPY of an earlier one.
    #[arg(long, default_value = "records")]
    case: String,
    /// Number of items (default per case: records 200000, arrays 300000,
    /// scalars 200000, keys 300000, shared 200000, frozen 200000).
    #[arg(long)]
    count: Option<usize>,
    /// Timed encodes after one warm-up encode.
    #[arg(long, default_value_t = 9)]
    iterations: usize,
    /// Protocol version, 1 to 5.
    #[arg(long, default_value_t = 5)]
    protocol_version: u8,
    /// Encode with freeze_callbacks on, a FREEZE handler for class `Rec`
    /// (returning [id, name]) and this callback policy: guard or snapshot.
    /// Without it, callbacks are off (the `frozen` case uses guard).
    #[arg(long)]
    policy: Option<String>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
    /// Measure the floor instead of the encoder: walk the graph without
    /// writing, plus a copy of the output into a buffer already in memory.
    #[arg(long)]
    floor: bool,
    /// Measure the decoder instead: encode the input once, then time K
    /// decodes of that document by one decoder (with a THAW handler that
    /// rebuilds `Rec` from [id, name]); each decoded value is freed outside
    /// the timed region. The line's bytes and checksum are the document's.
    /// With --compare: our decoder against Perl's Sereal::Decoder.
    #[arg(long)]
    decode: bool,
    /// Decode the output and check it equals the input; where Perl's Sereal
    /// is installed, check Perl decodes it to the same structure too.
    #[arg(long)]
    verify: bool,
    /// Exit 1 when the peak RSS exceeds this many KiB.
    #[arg(long)]
    max_rss_kb: Option<u64>,
    /// A file of saved `--json` runs (one line per case and mode): exit 1
    /// when this run's output bytes or checksum differ from its saved run's,
    /// or its peak RSS grew past `--tolerance`; a count other than the saved
    /// one is an error. The file is read before anything is measured.
    #[arg(long, conflicts_with = "compare")]
    baseline: Option<std::path::PathBuf>,
    /// Run every saved run of this baseline file again, each in a fresh
    /// process with its case, mode, count and iterations, and check each as
    /// `--baseline` does: exit 1 unless all hold.
    #[arg(long, conflicts_with_all = ["compare", "baseline", "case", "count", "decode", "floor"])]
    check_baselines: Option<std::path::PathBuf>,
    /// Allowed peak RSS growth over a saved run, in percent.
    #[arg(long, default_value_t = 10.0)]
    tolerance: f64,
    /// Peak RSS growth over a saved run below this many KiB is never a
    /// failure (identical runs differ by a few hundred KiB).
    #[arg(long, default_value_t = 1024)]
    rss_slack_kb: u64,
    /// Run every case for every implementation, each in a fresh process,
    /// and print a table of median ms, peak RSS and ratios to Perl (of the
    /// decoders with --decode).
    #[arg(long)]
    compare: bool,
    /// With --compare: measure N pairs (ours and Perl, in random order within
    /// each pair) and report the median ratio with a 95% bootstrap interval.
    #[arg(long, default_value_t = 1)]
    pairs: usize,
    /// With --compare: the cases to run (default: all).
    #[arg(long, value_delimiter = ',')]
    cases: Vec<String>,
    /// With --compare: draw the table as an SVG chart into this file.
    #[arg(long)]
    plot: Option<std::path::PathBuf>,
}

/// One measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub case: String,
    /// What was timed: `encode`, `decode` or `floor` (empty in a line that
    /// does not say, such as Perl's).
    pub mode: String,
    pub count: usize,
    pub iterations: usize,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub bytes: u64,
    pub checksum: u64,
    pub peak_rss_kb: u64,
}

impl Run {
    fn line(&self) -> String {
        format!(
            "case={} mode={} count={} iterations={} median_ms={:.3} min_ms={:.3} max_ms={:.3} bytes={} checksum={} peak_rss_kb={}",
            self.case, self.mode, self.count, self.iterations, self.median_ms, self.min_ms, self.max_ms, self.bytes,
            self.checksum, self.peak_rss_kb
        )
    }

    fn json(&self) -> String {
        serde_json::json!({
            "case": self.case, "mode": self.mode, "count": self.count, "iterations": self.iterations,
            "median_ms": self.median_ms, "min_ms": self.min_ms, "max_ms": self.max_ms,
            "bytes": self.bytes, "checksum": self.checksum, "peak_rss_kb": self.peak_rss_kb,
        })
        .to_string()
    }

    /// Parses a `--json` line (ours or Perl's).
    pub fn parse(line: &str) -> Option<Run> {
        let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
        let num = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_f64().or_else(|| x.as_str()?.parse().ok()))
        };
        Some(Run {
            case: v.get("case")?.as_str()?.to_string(),
            mode: match v.get("mode") {
                None => String::new(),
                Some(m) => m.as_str()?.to_string(),
            },
            count: num("count")? as usize,
            iterations: num("iterations")? as usize,
            median_ms: num("median_ms")?,
            min_ms: num("min_ms")?,
            max_ms: num("max_ms")?,
            bytes: num("bytes")? as u64,
            checksum: num("checksum")? as u64,
            peak_rss_kb: num("peak_rss_kb")? as u64,
        })
    }
}

/// The process's own peak resident set size in KiB: `VmHWM` of
/// `/proc/self/status`, as the Perl side reads it. Where there is no
/// `/proc`, getrusage's `ru_maxrss`, which (unlike `VmHWM`) survives `exec`
/// and so also counts a launcher's peak, such as `cargo run`'s.
fn peak_rss_kb() -> u64 {
    let hwm = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        });
    if let Some(kb) = hwm {
        return kb;
    }
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    if rc != 0 {
        return 0;
    }
    // SAFETY: initialised by the successful call above.
    unsafe { ru.assume_init() }.ru_maxrss as u64
}

/// Sum of the bytes modulo 2^32: Perl's `unpack("%32C*", $out)`.
fn checksum(bytes: &[u8]) -> u64 {
    u64::from(
        bytes
            .iter()
            .fold(0u32, |s, &b| s.wrapping_add(u32::from(b))),
    )
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Visits every slot of the graph without writing into the output: the
/// traversal part of the floor. Through the public API, as any reader of a
/// graph: each node's body is borrowed (a counter written and restored),
/// where the encoder reads the bodies without, so the row is a little
/// above the floor of a walk that only reads.
fn walk(v: &Value) -> u64 {
    match v {
        Value::Ref(r) | Value::Alias(r) => match &*r.body() {
            Body::Scalar(v) => 1 + walk(v),
            Body::Array(a) | Body::Frozen(a) => a.iter().map(walk).sum::<u64>() + 1,
            Body::Hash(h) => {
                h.iter()
                    .map(|(k, v)| k.as_bytes().len() as u64 + walk(v))
                    .sum::<u64>()
                    + 1
            }
            Body::Regexp(_) => 1,
        },
        Value::Bytes(s) | Value::Utf8(s) => s.len() as u64,
        _ => 1,
    }
}

/// The encoder a run measures: callbacks off, or on with a FREEZE handler
/// for `Rec` under the given policy.
fn encoder(args: &Args) -> Result<Encoder, String> {
    let mut opts = EncoderOptions::new().protocol_version(args.protocol_version);
    let policy = match (args.policy.as_deref(), args.case.as_str()) {
        (None, "frozen") | (Some("guard"), _) => Some(CallbackPolicy::Guard),
        (Some("snapshot"), _) => Some(CallbackPolicy::Snapshot),
        (None, _) => None,
        (Some(p), _) => return Err(format!("unknown policy '{p}' (guard or snapshot)")),
    };
    if let Some(p) = policy {
        opts = opts.freeze_callbacks(true).policy(p);
    }
    let mut enc = Encoder::new(opts).map_err(|e| e.to_string())?;
    if policy.is_some() {
        enc.on_freeze("Rec", |rec| {
            let h = rec.as_hash().ok_or_else(|| {
                sereal::Error::new(sereal::ErrorKind::Invalid("Rec is not a hash".into()))
            })?;
            let field = |k| h.get(k).cloned().unwrap_or_default();
            Ok(vec![Value::array([field("id"), field("name")])])
        });
    }
    Ok(enc)
}

fn measure(args: &Args, input: &Value) -> Result<(Run, Vec<u8>), String> {
    let mut enc = encoder(args)?;
    let mut out = enc.encode(input).map_err(|e| e.to_string())?;
    let dec = compare::decoder();
    let mut times = Vec::with_capacity(args.iterations);
    // The floor's copy goes into a buffer whose pages are in memory already,
    // as the encoder's output buffer is after its first document.
    let mut copy = if args.floor { out.clone() } else { Vec::new() };
    for _ in 0..args.iterations {
        if args.floor {
            let t0 = Instant::now();
            let visited = walk(input);
            copy.clear();
            copy.extend_from_slice(&out);
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box((visited, &copy));
            assert_eq!(copy.len(), out.len());
        } else if args.decode {
            let t0 = Instant::now();
            let v = dec.decode(&out).map_err(|e| e.to_string())?;
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            // Freeing the graph is not part of the decode.
            drop(std::hint::black_box(v));
        } else {
            let t0 = Instant::now();
            let o = enc.encode(input).map_err(|e| e.to_string())?;
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            out = o;
        }
    }
    times.sort_by(f64::total_cmp);
    let mode = if args.floor {
        "floor"
    } else if args.decode {
        "decode"
    } else {
        "encode"
    };
    let run = Run {
        case: args.case.clone(),
        mode: mode.to_string(),
        count: 0,
        iterations: args.iterations,
        median_ms: median(&times),
        min_ms: times[0],
        max_ms: times[times.len() - 1],
        bytes: out.len() as u64,
        checksum: checksum(&out),
        peak_rss_kb: peak_rss_kb(),
    };
    Ok((run, out))
}

fn single(args: &Args) -> Result<bool, String> {
    let count = args
        .count
        .or_else(|| cases::default_count(&args.case))
        .ok_or_else(|| format!("unknown case '{}'", args.case))?;
    if args.iterations == 0 {
        return Err("--iterations must be at least 1".into());
    }
    // A baseline that cannot be used is said before the run, not after.
    let saved = args.baseline.as_deref().map(baseline::load).transpose()?;
    let input =
        cases::build(&args.case, count).ok_or_else(|| format!("unknown case '{}'", args.case))?;
    let (mut run, out) = measure(args, &input)?;
    run.count = count;
    println!("{}", if args.json { run.json() } else { run.line() });
    let mut ok = true;
    if args.verify {
        ok &= compare::verify(&input, &out, args.protocol_version, args.case == "frozen")?;
    }
    if let Some(max) = args.max_rss_kb {
        if run.peak_rss_kb > max {
            eprintln!("peak_rss_kb {} exceeds --max-rss-kb {max}", run.peak_rss_kb);
            ok = false;
        }
    }
    if let (Some(path), Some(saved)) = (&args.baseline, &saved) {
        ok &= baseline::check(&run, saved, path, tolerance(args))?;
    }
    Ok(ok)
}

fn tolerance(args: &Args) -> baseline::Tolerance {
    baseline::Tolerance {
        percent: args.tolerance,
        rss_slack_kb: args.rss_slack_kb,
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = if let Some(path) = &args.check_baselines {
        baseline::check_all(path, tolerance(&args))
    } else if args.compare {
        compare::run(&args)
    } else {
        single(&args)
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("bench_retention: {e}");
            ExitCode::FAILURE
        }
    }
}
