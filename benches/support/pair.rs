//! Interleaved pairs: each round times a batch of our calls and a batch
//! of a peer's, in alternating order, and the ratio of the two is one
//! sample. A line gives the median of the rounds' ratios with its 95%
//! interval (the order statistics that bound a median, from the binomial
//! distribution), so a load that comes and goes on a shared machine moves
//! both sides of a ratio alike.

use std::time::Instant;

/// Rounds per line: enough for a 95% interval of the median between the
/// 10th and 22nd of 31 ordered ratios.
const ROUNDS: usize = 31;

/// A batch's length in nanoseconds, about.
const BATCH_NS: f64 = 1e6;

/// Nanoseconds per call of `f` over a batch of `n` calls.
fn batch(f: &mut dyn FnMut(), n: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

/// Calls per batch, so that a batch of `f` takes about `BATCH_NS`.
fn calls(f: &mut dyn FnMut()) -> usize {
    let mut n = 1;
    while batch(f, n) * (n as f64) < BATCH_NS / 8.0 {
        n *= 2;
    }
    n * 8
}

/// P(X <= k) for X binomial(n, 1/2).
fn binomial_cdf(n: usize, k: usize) -> f64 {
    let mut term = 0.5f64.powi(n as i32);
    let mut sum = term;
    for i in 0..k {
        term *= (n - i) as f64 / (i + 1) as f64;
        sum += term;
    }
    sum
}

/// The 0-based order statistics bounding the median of `n` samples with at
/// least 95% confidence.
fn median_interval(n: usize) -> (usize, usize) {
    let mut k = 0;
    while binomial_cdf(n, k + 1) <= 0.025 {
        k += 1;
    }
    (k, n - 1 - k)
}

/// Times `ours` against `theirs` in `ROUNDS` interleaved pairs and prints
/// the line; returns the median nanoseconds per call of each.
pub fn pair(
    line: &str,
    peer: &str,
    ours: &mut dyn FnMut(),
    theirs: &mut dyn FnMut(),
) -> (f64, f64) {
    let (n, m) = (calls(ours), calls(theirs));
    let (mut a, mut b, mut r) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (x, y) = if round % 2 == 0 {
            let x = batch(ours, n);
            (x, batch(theirs, m))
        } else {
            let y = batch(theirs, m);
            (batch(ours, n), y)
        };
        a.push(x);
        b.push(y);
        r.push(x / y);
    }
    for v in [&mut a, &mut b, &mut r] {
        v.sort_by(f64::total_cmp);
    }
    let (lo, hi) = median_interval(ROUNDS);
    let mid = ROUNDS / 2;
    println!(
        "{line:24} sereal {:>10} {peer} {:>10} ratio {:.3} (95% CI {:.3}-{:.3})",
        show(a[mid]),
        show(b[mid]),
        r[mid],
        r[lo],
        r[hi]
    );
    (a[mid], b[mid])
}

fn show(ns: f64) -> String {
    match ns {
        ns if ns < 1e3 => format!("{ns:.1} ns"),
        ns if ns < 1e6 => format!("{:.2} µs", ns / 1e3),
        ns => format!("{:.2} ms", ns / 1e6),
    }
}
