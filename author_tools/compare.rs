//! `bench_retention --compare` and `--verify`.

use super::stats::{bootstrap, median, Lcg};
use super::{Args, Run};
use sereal::{Decoder, Encoder, EncoderOptions, Ref, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const DEFAULT_CASES: [&str; 6] = ["records", "arrays", "scalars", "keys", "shared", "frozen"];

/// An implementation measured by `--compare`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Impl {
    /// Our encoder, callbacks off; with `--decode`, our decoder.
    Sereal,
    /// Our encoder with a FREEZE handler and the Guard policy.
    Guard,
    /// Our encoder with a FREEZE handler and the Snapshot policy.
    Snapshot,
    Perl,
    Floor,
}

impl Impl {
    pub(super) fn name(self) -> &'static str {
        match self {
            Impl::Sereal => "sereal",
            Impl::Guard => "guard",
            Impl::Snapshot => "snapshot",
            Impl::Perl => "perl",
            Impl::Floor => "floor",
        }
    }
}

fn time(r: &Run) -> f64 {
    r.median_ms
}

fn rss(r: &Run) -> f64 {
    r.peak_rss_kb as f64
}

/// A ratio `--compare` reports: per case from the medians, and per pair with
/// a bootstrap interval.
struct Ratio {
    /// Its table heading; `None`: only in the per-pair notes.
    column: Option<&'static str>,
    /// Its label in the per-pair notes.
    note: &'static str,
    /// The numerator; `None`: ours (callbacks off, or guard for `frozen`).
    num: Option<Impl>,
    den: Impl,
    metric: fn(&Run) -> f64,
}

/// Ours over Perl's, in time and in peak RSS.
const TO_PERL: [Ratio; 2] = [
    Ratio {
        column: Some("ms/perl"),
        note: "time/perl",
        num: None,
        den: Impl::Perl,
        metric: time,
    },
    Ratio {
        column: Some("RSS/perl"),
        note: "RSS/perl",
        num: None,
        den: Impl::Perl,
        metric: rss,
    },
];

/// The encoder's callback policies over callbacks off.
const POLICIES: [Ratio; 2] = [
    Ratio {
        column: Some("guard/off"),
        note: "guard/off time",
        num: Some(Impl::Guard),
        den: Impl::Sereal,
        metric: time,
    },
    Ratio {
        column: None,
        note: "snapshot/off time",
        num: Some(Impl::Snapshot),
        den: Impl::Sereal,
        metric: time,
    },
];

/// What `--compare` measures: the encoders (ours under each callback policy,
/// Perl's, and the floor), or with `--decode` the decoders (ours and Perl's)
/// of each case's document.
pub(super) struct Plan {
    decode: bool,
    perl: bool,
}

impl Plan {
    /// The implementations run in each pair of `case`.
    fn impls(&self, case: &str) -> Vec<Impl> {
        let mut v = match (self.decode, case) {
            (true, _) => vec![Impl::Sereal],
            // `frozen` needs callbacks: there is no callbacks-off run of it.
            (false, "frozen") => vec![Impl::Guard, Impl::Snapshot],
            (false, _) => vec![Impl::Sereal, Impl::Guard, Impl::Snapshot],
        };
        if self.perl {
            v.push(Impl::Perl);
        }
        v
    }

    /// The table's columns.
    pub(super) fn columns(&self) -> &'static [Impl] {
        if self.decode {
            &[Impl::Sereal, Impl::Perl]
        } else {
            &[Impl::Sereal, Impl::Guard, Impl::Snapshot, Impl::Perl]
        }
    }

    /// Whether each case has a floor run (the encoder's floor).
    pub(super) fn floor(&self) -> bool {
        !self.decode
    }

    fn ratios(&self) -> impl Iterator<Item = &'static Ratio> {
        let policies: &'static [Ratio] = if self.decode { &[] } else { &POLICIES };
        TO_PERL.iter().chain(policies)
    }

    /// What the bytes and checksum of a run are.
    fn bytes_are(&self) -> &'static str {
        if self.decode {
            "document"
        } else {
            "output"
        }
    }

    pub(super) fn verb(&self) -> &'static str {
        if self.decode {
            "decode"
        } else {
            "encode"
        }
    }
}

fn perl_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench_retention.pl")
}

/// Whether Perl's Sereal::Encoder and Decoder are installed.
pub fn perl_available() -> bool {
    Command::new("perl")
        .args(["-MSereal::Encoder", "-MSereal::Decoder", "-e", "1"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn run_one(imp: Impl, args: &Args, case: &str) -> Result<Run, String> {
    let mut cmd = match imp {
        Impl::Perl => {
            let mut c = Command::new("perl");
            c.arg(perl_script())
                .env("PERL_HASH_SEED", "0")
                .env("PERL_PERTURB_KEYS", "0");
            c
        }
        Impl::Sereal | Impl::Guard | Impl::Snapshot | Impl::Floor => {
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            let mut c = Command::new(exe);
            match imp {
                Impl::Floor => {
                    c.arg("--floor");
                }
                Impl::Guard | Impl::Snapshot => {
                    c.args(["--policy", imp.name()]);
                }
                _ => {}
            }
            c
        }
    };
    cmd.args([
        "--case",
        case,
        "--iterations",
        &args.iterations.to_string(),
        "--json",
    ]);
    cmd.args(["--protocol-version", &args.protocol_version.to_string()]);
    if let Some(n) = args.count {
        cmd.args(["--count", &n.to_string()]);
    }
    if args.decode {
        cmd.arg("--decode");
    }
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", imp.name()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("{} failed on {case}: {text}", imp.name()));
    }
    Run::parse(&text).ok_or_else(|| format!("{}: cannot parse output {text:?}", imp.name()))
}

/// One case's results: the runs of every pair, per implementation.
pub(super) struct CaseResult {
    pub(super) case: String,
    pub(super) count: usize,
    pub(super) pairs: Vec<Vec<(Impl, Run)>>,
    pub(super) floor: Option<Run>,
    pub(super) excluded: Vec<String>,
}

impl CaseResult {
    fn runs(&self, imp: Impl) -> Vec<&Run> {
        self.pairs
            .iter()
            .flatten()
            .filter(|(i, _)| *i == imp)
            .map(|(_, r)| r)
            .collect()
    }

    pub(super) fn median_of(&self, imp: Impl, f: impl Fn(&Run) -> f64) -> Option<f64> {
        let mut v: Vec<f64> = self.runs(imp).into_iter().map(f).collect();
        (!v.is_empty()).then(|| median(&mut v))
    }

    /// Our implementation in the ratios to Perl: callbacks off, or guard
    /// where there is no callbacks-off run (`frozen`'s encode).
    fn ours(&self) -> Impl {
        if self.runs(Impl::Sereal).is_empty() {
            Impl::Guard
        } else {
            Impl::Sereal
        }
    }

    /// The numerator and denominator of `ratio` in this case.
    fn sides(&self, ratio: &Ratio) -> (Impl, Impl) {
        (ratio.num.unwrap_or_else(|| self.ours()), ratio.den)
    }

    /// `ratio` in each pair that has both of its sides.
    fn pair_ratios(&self, ratio: &Ratio) -> Vec<f64> {
        let (a, b) = self.sides(ratio);
        self.pairs
            .iter()
            .filter_map(|p| {
                let get = |imp| {
                    p.iter()
                        .find(|(i, _)| *i == imp)
                        .map(|(_, x)| (ratio.metric)(x))
                };
                Some(get(a)? / get(b)?)
            })
            .collect()
    }
}

/// The comparison as one JSON document (`--compare --json`): per case, every
/// run of every pair, each implementation's medians, and each ratio's
/// median over the pairs with its 95% bootstrap interval.
fn json_document(results: &[CaseResult], plan: &Plan, rng: &mut Lcg) -> serde_json::Value {
    use serde_json::json;
    let run =
        |r: &Run| -> serde_json::Value { serde_json::from_str(&r.json()).unwrap_or_default() };
    let cases: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            let medians: serde_json::Map<String, serde_json::Value> = plan
                .columns()
                .iter()
                .filter(|&&i| !r.runs(i).is_empty())
                .map(|&i| {
                    let m = json!({
                        "median_ms": r.median_of(i, time),
                        "peak_rss_kb": r.median_of(i, rss),
                    });
                    (i.name().to_string(), m)
                })
                .collect();
            let ratios: Vec<serde_json::Value> = plan
                .ratios()
                .filter_map(|q| {
                    let v = r.pair_ratios(q);
                    (!v.is_empty()).then(|| {
                        let (m, lo, hi) = bootstrap(&v, rng);
                        json!({"ratio": q.note, "median": m, "ci95": [lo, hi], "pairs": v})
                    })
                })
                .collect();
            let pairs: Vec<serde_json::Value> = r
                .pairs
                .iter()
                .map(|p| {
                    p.iter()
                        .map(|(i, x)| json!({"impl": i.name(), "run": run(x)}))
                        .collect()
                })
                .collect();
            json!({
                "case": r.case,
                "count": r.count,
                "medians": medians,
                "ratios": ratios,
                "pairs": pairs,
                "floor": r.floor.as_ref().map(run),
                "excluded": r.excluded,
            })
        })
        .collect();
    json!({
        "mode": if plan.decode { "decode" } else { "encode" },
        "perl": plan.perl,
        "cases": cases,
    })
}

/// Runs the comparison; returns whether every run succeeded.
pub fn run(args: &Args) -> Result<bool, String> {
    let cases: Vec<String> = if args.cases.is_empty() {
        DEFAULT_CASES.iter().map(|s| s.to_string()).collect()
    } else {
        args.cases.clone()
    };
    let plan = Plan {
        decode: args.decode,
        perl: perl_available(),
    };
    if !plan.perl {
        eprintln!("note: Perl's Sereal is not installed (apt-get install -y libsereal-perl): no Perl column");
    }
    let pairs = args.pairs.max(1);
    let total: usize = cases
        .iter()
        .map(|c| pairs * plan.impls(c).len() + usize::from(plan.floor()))
        .sum();
    let mut done = 0;
    let mut rng = Lcg(0x5eed ^ std::process::id() as u64);
    let mut results = Vec::new();
    for case in &cases {
        let count = args
            .count
            .or_else(|| super::cases::default_count(case))
            .ok_or("unknown case")?;
        let mut res = CaseResult {
            case: case.clone(),
            count,
            pairs: Vec::new(),
            floor: None,
            excluded: Vec::new(),
        };
        for p in 0..pairs {
            let mut order = plan.impls(case);
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i + 1));
            }
            let mut pair = Vec::new();
            for imp in order {
                done += 1;
                eprint!(
                    "[{done}/{total}] {case} {} {} pair {}/{pairs} ... ",
                    imp.name(),
                    plan.verb(),
                    p + 1
                );
                let r = run_one(imp, args, case)?;
                eprintln!("{:.1} ms, {} KiB", r.median_ms, r.peak_rss_kb);
                pair.push((imp, r));
            }
            res.pairs.push(pair);
        }
        if plan.floor() {
            done += 1;
            eprint!("[{done}/{total}] {case} floor ... ");
            let f = run_one(Impl::Floor, args, case)?;
            eprintln!("{:.1} ms", f.median_ms);
            res.floor = Some(f);
        }
        exclude_unequal_work(&mut res, &plan);
        results.push(res);
    }
    if args.json {
        println!("{}", json_document(&results, &plan, &mut rng));
    } else {
        print_table(&results, &plan, &mut rng);
    }
    if let Some(path) = &args.plot {
        std::fs::write(path, super::plot::svg(&results, &plan))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(true)
}

/// Drops pairs of unequal work, recording why: a run whose checksum differs
/// from the other runs of the same implementation, or, for decoders, a pair
/// whose implementations decoded documents of different sizes. (Documents of
/// one size can still differ in bytes: Perl writes a hash's keys in its own
/// order; the table's notes say where.)
fn exclude_unequal_work(res: &mut CaseResult, plan: &Plan) {
    let mut keep = Vec::new();
    for (n, pair) in std::mem::take(&mut res.pairs).into_iter().enumerate() {
        let inconsistent = pair.iter().find_map(|(imp, r)| {
            let all = res_checksums(&keep, *imp);
            (!all.is_empty() && !all.contains(&r.checksum)).then(|| {
                format!(
                    "{} checksum {} differs from its other runs",
                    imp.name(),
                    r.checksum
                )
            })
        });
        let unequal_size = || {
            let (first, rest) = pair.split_first()?;
            let other = rest.iter().find(|(_, r)| r.bytes != first.1.bytes)?;
            plan.decode.then(|| {
                format!(
                    "{} decoded {} bytes, {} {} bytes",
                    first.0.name(),
                    first.1.bytes,
                    other.0.name(),
                    other.1.bytes
                )
            })
        };
        match inconsistent.or_else(unequal_size) {
            Some(why) => res.excluded.push(format!("pair {} excluded: {why}", n + 1)),
            None => keep.push(pair),
        }
    }
    res.pairs = keep;
}

fn res_checksums(pairs: &[Vec<(Impl, Run)>], imp: Impl) -> Vec<u64> {
    pairs
        .iter()
        .flatten()
        .filter(|(i, _)| *i == imp)
        .map(|(_, r)| r.checksum)
        .collect()
}

/// One row of the table: the label, then each section's cells and widths.
fn table_row(label: &str, sections: &[(Vec<String>, Vec<usize>)]) -> String {
    let mut s = format!("{label:<15}");
    for (k, (cells, widths)) in sections.iter().enumerate() {
        s += if k == 0 { " " } else { "   " };
        let cells: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, &w)| format!("{c:>w$}"))
            .collect();
        s += &cells.join(" ");
    }
    s
}

fn print_table(results: &[CaseResult], plan: &Plan, rng: &mut Lcg) {
    let cols = plan.columns();
    let columns: Vec<&Ratio> = plan.ratios().filter(|r| r.column.is_some()).collect();
    let mut heads: [Vec<String>; 3] = [
        cols.iter().map(|i| i.name().to_string()).collect(),
        cols.iter().map(|i| i.name().to_string()).collect(),
        columns
            .iter()
            .filter_map(|r| r.column.map(String::from))
            .collect(),
    ];
    let mut widths = [
        vec![8; cols.len()],
        vec![9; cols.len()],
        vec![8; columns.len()],
    ];
    if plan.floor() {
        heads[0].push(Impl::Floor.name().into());
        widths[0].push(10);
    }
    let titles = ["Median milliseconds", "Peak RSS (KiB)", "Ratios"];
    // Widen a section whose title is wider than its columns.
    for (w, title) in widths.iter_mut().zip(titles) {
        let span = w.iter().sum::<usize>() + w.len() - 1;
        w[0] += title.len().saturating_sub(span);
    }
    let spans = widths
        .clone()
        .map(|w| vec![w.iter().sum::<usize>() + w.len() - 1]);
    let title_row: Vec<_> = titles
        .iter()
        .zip(spans)
        .map(|(t, s)| (vec![t.to_string()], s))
        .collect();
    println!("{}", table_row("", &title_row));
    let head_row: Vec<_> = heads.into_iter().zip(widths.clone()).collect();
    println!("{}", table_row("Input", &head_row));
    let fmt = |x: Option<f64>, prec: usize| x.map_or("-".to_string(), |v| format!("{v:.prec$}"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.3}x", a / b),
        _ => "-".into(),
    };
    let mut notes = Vec::new();
    for r in results {
        let mut ms: Vec<String> = cols.iter().map(|&i| fmt(r.median_of(i, time), 2)).collect();
        if plan.floor() {
            ms.push(fmt(r.floor.as_ref().map(|f| f.median_ms), 2));
        }
        let rss_cells = cols.iter().map(|&i| fmt(r.median_of(i, rss), 0)).collect();
        let ratio_cells = columns
            .iter()
            .map(|q| {
                let (a, b) = r.sides(q);
                ratio(r.median_of(a, q.metric), r.median_of(b, q.metric))
            })
            .collect();
        let row = [ms, rss_cells, ratio_cells];
        let row: Vec<_> = row.into_iter().zip(widths.clone()).collect();
        println!(
            "{}",
            table_row(&format!("{}k {}", r.count / 1000, r.case), &row)
        );
        if r.pairs.len() > 1 {
            let mut line = format!("{}: over {} pairs:", r.case, r.pairs.len());
            for q in plan.ratios() {
                let v = r.pair_ratios(q);
                if !v.is_empty() {
                    let (m, lo, hi) = bootstrap(&v, rng);
                    line += &format!(" {} {m:.3}x (95% CI {lo:.3}-{hi:.3});", q.note);
                }
            }
            notes.push(line);
        }
        notes.extend(r.excluded.iter().map(|e| format!("{}: {e}", r.case)));
        let firsts: Vec<(Impl, &Run)> = cols
            .iter()
            .filter_map(|&i| r.runs(i).first().map(|x| (i, *x)))
            .collect();
        let bytes: Vec<String> = firsts
            .iter()
            .map(|(i, x)| format!("{} {} bytes ({})", i.name(), x.bytes, x.checksum))
            .collect();
        notes.push(format!(
            "{}: {} {}",
            r.case,
            plan.bytes_are(),
            bytes.join(", ")
        ));
        if plan.decode
            && firsts
                .windows(2)
                .any(|w| w[0].1.checksum != w[1].1.checksum)
        {
            notes.push(format!(
                "{}: the documents differ (same size, different checksums), pairs kept: expected where Perl's hash order is not the insertion order",
                r.case
            ));
        }
    }
    println!();
    for n in notes {
        println!("{n}");
    }
}

/// The decoder of `--decode` and `--verify`: defaults, and a THAW handler
/// for `Rec` that rebuilds the object from the `[id, name]` its FREEZE
/// returned, as `bench_retention.pl`'s `Rec::THAW` does.
pub fn decoder() -> Decoder {
    let mut dec = Decoder::default();
    dec.on_thaw("Rec", |class, vals| {
        let pair = vals.into_iter().next().unwrap_or_default();
        let (id, name) = (
            pair.at(0).unwrap_or_default(),
            pair.at(1).unwrap_or_default(),
        );
        Ok(Value::Ref(
            Ref::hash([("id", id), ("name", name)].into_iter().collect()).blessed(class),
        ))
    });
    dec
}

/// What a document of the `frozen` case decodes to: its FREEZE keeps only
/// `[id, name]`, and THAW (ours, and Perl's in `verify`) rebuilds `Rec`
/// objects of those two fields.
fn frozen_view(input: &Value) -> Value {
    let recs = input.node().expect("frozen input is an array");
    let items = recs.as_array().expect("frozen input is an array");
    Value::array(items.iter().map(|r| {
        let field = |k| r.get(k).unwrap_or_default();
        Value::Ref(
            Ref::hash(
                [("id", field("id")), ("name", field("name"))]
                    .into_iter()
                    .collect(),
            )
            .blessed("Rec"),
        )
    }))
}

/// Decodes `out` and compares it with `input`; where Perl is installed, has
/// Perl decode `out` and re-encode it canonically, and compares that with
/// our canonical encoding of `input`. For the `frozen` case both decoders
/// THAW `Rec` objects from `[id, name]` and `input` is compared as such.
pub fn verify(input: &Value, out: &[u8], version: u8, frozen: bool) -> Result<bool, String> {
    let dec = decoder();
    let expected = if frozen {
        frozen_view(input)
    } else {
        input.clone()
    };
    let decoded = dec
        .decode(out)
        .map_err(|e| format!("verify: decode: {e}"))?;
    let mut ok = decoded == expected;
    eprintln!(
        "verify: decoded output equals the input: {}",
        if ok { "yes" } else { "NO" }
    );
    if !perl_available() {
        eprintln!("verify: Perl's Sereal is not installed; Perl check skipped");
        return Ok(ok);
    }
    let script = "use Sereal::Decoder; use Sereal::Encoder; \
        sub Rec::THAW { my ($c, $s, $d) = @_; return bless {id => $d->[0], name => $d->[1]}, $c } \
        local $/; my $d = <STDIN>; binmode STDOUT; \
        print Sereal::Encoder->new({canonical => 1, protocol_version => $ARGV[0]})\
        ->encode(Sereal::Decoder->new->decode($d));";
    let mut child = Command::new("perl")
        .args(["-e", script, &version.to_string()])
        .env("PERL_HASH_SEED", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let doc = out.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&doc));
    let result = child.wait_with_output().map_err(|e| e.to_string())?;
    writer
        .join()
        .map_err(|_| "writer panicked")?
        .map_err(|e| e.to_string())?;
    let ours = Encoder::new(
        EncoderOptions::new()
            .protocol_version(version)
            .canonical(true),
    )
    .and_then(|mut e| e.encode(&expected))
    .map_err(|e| e.to_string())?;
    let same = result.status.success() && result.stdout == ours;
    eprintln!(
        "verify: Perl decodes it to the same structure (canonical re-encodings equal, {} bytes): {}",
        ours.len(),
        if same { "yes" } else { "NO" }
    );
    ok &= same;
    Ok(ok)
}
