//! The statistics of `bench_retention --compare`: medians of per-pair
//! ratios and their bootstrap intervals.

/// A small deterministic generator for shuffling and resampling.
pub(super) struct Lcg(pub(super) u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

pub(super) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    super::median(v)
}

/// Median of `ratios` and its 95% bootstrap interval.
pub(super) fn bootstrap(ratios: &[f64], rng: &mut Lcg) -> (f64, f64, f64) {
    let mut r = ratios.to_vec();
    let mid = median(&mut r);
    if ratios.len() < 2 {
        return (mid, mid, mid);
    }
    let mut meds: Vec<f64> = (0..10_000)
        .map(|_| {
            let mut s: Vec<f64> = (0..ratios.len())
                .map(|_| ratios[rng.below(ratios.len())])
                .collect();
            median(&mut s)
        })
        .collect();
    meds.sort_by(f64::total_cmp);
    (mid, meds[249], meds[9_749])
}
