//! Confidence intervals for the relative difference `b / a - 1` of a figure between
//! two sides, 95 %, both by the delta method on the log of the ratio with Student's t
//! at the Welch-Satterthwaite degrees of freedom (so an interval never reaches -100 %
//! and is wide, not wrong, when there is little data):
//!
//! - **repeated runs** (3 or more per side): from each side's runs, their mean and the
//!   variance of that mean (Welch's interval). A percentile bootstrap over the runs was
//!   tried first and rejected: with the 3 to 10 runs a side that benchmarks have, its
//!   intervals are too narrow (A/A groups of 3 synthetic runs: a third of the pairs
//!   called different);
//! - **single runs**: batch means over the per-second series. Neighbouring seconds are
//!   correlated (a checkpoint slows several in a row), so the seconds are cut into
//!   consecutive batches at least twice the series' autocorrelation time long
//!   (`(1 + r1) / (1 - r1)` seconds, `r1` the lag-1 autocorrelation), whose means are
//!   close to independent; each side's mean then has the standard error of its batch
//!   means, around the figure's own change. A side with fewer than [`MIN_BATCHES`]
//!   batches is too short to tell. Percentiles use the per-second percentiles' mean
//!   for the width (a proxy: percentiles of seconds do not add up to the run's).

/// Runs each side needs for a run-level interval.
pub const MIN_RUNS: usize = 3;

/// A 95 % interval for `b / a - 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn contains_zero(&self) -> bool {
        self.low <= 0.0 && self.high >= 0.0
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Over repeated runs: `a` and `b` hold the figure of each run.
pub fn over_runs(a: &[f64], b: &[f64]) -> Option<Interval> {
    if a.len() < MIN_RUNS || b.len() < MIN_RUNS {
        return None;
    }
    welch(a, b)
}

/// A sample's mean, the variance of that mean (the sample variance over n), and n:
/// what Welch's intervals take of each side.
fn sample_stats(v: &[f64]) -> (f64, f64, usize) {
    let m = mean(v);
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64;
    (m, var / v.len() as f64, v.len())
}

/// Welch's interval for the ratio of two means, on the log scale (delta method).
fn welch(a: &[f64], b: &[f64]) -> Option<Interval> {
    let ((ma, va, na), (mb, vb, nb)) = (sample_stats(a), sample_stats(b));
    if ma == 0.0 || mb == 0.0 {
        return None;
    }
    log_interval(mb / ma - 1.0, (ma, va, na), (mb, vb, nb))
}

/// The interval of `b / a` around `center + 1` from each side's mean, variance of
/// the mean and degrees of freedom + 1, by the delta method on the log of the ratio
/// with Student's t at the Welch-Satterthwaite degrees of freedom.
fn log_interval(center: f64, a: (f64, f64, usize), b: (f64, f64, usize)) -> Option<Interval> {
    let (ra, rb) = (a.1 / (a.0 * a.0), b.1 / (b.0 * b.0));
    let df = (ra + rb).powi(2) / (ra * ra / (a.2 - 1) as f64 + rb * rb / (b.2 - 1) as f64);
    let half = t975(if df.is_finite() { df } else { 1e9 }) * (ra + rb).sqrt();
    Some(Interval {
        low: (1.0 + center) * (-half).exp() - 1.0,
        high: (1.0 + center) * half.exp() - 1.0,
    })
}

/// A per-second series: each second's value and its weight (1 for tps, the
/// second's transactions for latencies).
pub type Series = Vec<(f64, f64)>;

/// Batches a single run's series needs for an interval.
pub const MIN_BATCHES: usize = 3;

/// The lag-`k` autocorrelation of `x`.
fn autocorrelation(x: &[f64], k: usize) -> f64 {
    let m = mean(x);
    let var: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    if var == 0.0 {
        return 0.0;
    }
    let cov: f64 = x.windows(k + 1).map(|w| (w[0] - m) * (w[k] - m)).sum();
    cov / var
}

/// The batch length for `x`: twice its autocorrelation time (as an AR(1) process),
/// at least 2 seconds.
pub fn batch_length(x: &[f64]) -> usize {
    let r1 = autocorrelation(x, 1).clamp(0.0, 0.95);
    let tau = (1.0 + r1) / (1.0 - r1);
    ((2.0 * tau).ceil() as usize).max(2)
}

/// Student's t 97.5 % quantile.
pub(crate) fn t975(df: f64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    let d = df.floor().max(1.0) as usize;
    TABLE.get(d - 1).copied().unwrap_or(1.96 + 2.4 / df)
}

/// A side's weighted mean, its standard error from batch means, and the batches.
fn batch_mean(s: &Series) -> Option<(f64, f64, usize)> {
    let values: Vec<f64> = s.iter().map(|p| p.0).collect();
    let len = batch_length(&values);
    let k = s.len() / len;
    if k < MIN_BATCHES {
        return None;
    }
    let means: Vec<f64> = s
        .chunks_exact(len)
        .map(|b| {
            let w: f64 = b.iter().map(|p| p.1).sum();
            b.iter().map(|p| p.0 * p.1).sum::<f64>() / w
        })
        .collect();
    let m = mean(&means);
    let var = means.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (k - 1) as f64;
    Some((m, (var / k as f64).sqrt(), k))
}

/// Why a single-run interval could not be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoInterval {
    /// Fewer than [`MIN_BATCHES`] batches of seconds on a side.
    TooShort,
    /// The figure has no per-second counterpart, or a side has no series.
    NoSeries,
    /// A side's seconds average 0, so the change has no ratio to put an interval on
    /// (a select-only run's few WAL bytes all fell outside its whole seconds).
    ZeroMean,
}

/// Over the per-second series of one run per side; the interval is centred on
/// `center`, the change of the figure itself (the series' means can differ from the
/// run's figure: pgbench derives its latency average from the run time without `-P`).
pub fn over_seconds(a: &Series, b: &Series, center: f64) -> Result<Interval, NoInterval> {
    if a.is_empty() || b.is_empty() {
        return Err(NoInterval::NoSeries);
    }
    let (ma, sa, ka) = batch_mean(a).ok_or(NoInterval::TooShort)?;
    let (mb, sb, kb) = batch_mean(b).ok_or(NoInterval::TooShort)?;
    if ma == 0.0 || mb == 0.0 {
        return Err(NoInterval::ZeroMean);
    }
    log_interval(center, (ma, sa * sa, ka), (mb, sb * sb, kb)).ok_or(NoInterval::NoSeries)
}

/// A 95 % interval for the difference `b - a` around `center`, by Welch's t, from
/// each side's mean, variance of the mean and count: for a change from 0, which has
/// no ratio (a select-only run's WAL against an insert-heavy run's).
fn difference(center: f64, a: (f64, f64, usize), b: (f64, f64, usize)) -> Interval {
    let df = (a.1 + b.1).powi(2) / (a.1 * a.1 / (a.2 - 1) as f64 + b.1 * b.1 / (b.2 - 1) as f64);
    let half = t975(if df.is_finite() { df } else { 1e9 }) * (a.1 + b.1).sqrt();
    Interval {
        low: center - half,
        high: center + half,
    }
}

/// The interval of the difference over repeated runs.
pub fn difference_over_runs(a: &[f64], b: &[f64], center: f64) -> Option<Interval> {
    if a.len() < MIN_RUNS || b.len() < MIN_RUNS {
        return None;
    }
    Some(difference(center, sample_stats(a), sample_stats(b)))
}

/// The interval of the difference over the per-second series of one run per side.
pub fn difference_over_seconds(
    a: &Series,
    b: &Series,
    center: f64,
) -> Result<Interval, NoInterval> {
    if a.is_empty() || b.is_empty() {
        return Err(NoInterval::NoSeries);
    }
    let (ma, sa, ka) = batch_mean(a).ok_or(NoInterval::TooShort)?;
    let (mb, sb, kb) = batch_mean(b).ok_or(NoInterval::TooShort)?;
    Ok(difference(center, (ma, sa * sa, ka), (mb, sb * sb, kb)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::SplitMix;

    #[test]
    fn batches_grow_with_autocorrelation() {
        let mut rng = SplitMix::new(1);
        let white: Vec<f64> = (0..400).map(|_| rng.normal()).collect();
        let mut x = 0.0;
        let red: Vec<f64> = (0..400)
            .map(|_| {
                x = 0.95 * x + rng.normal();
                x
            })
            .collect();
        assert!(batch_length(&white) <= 3, "{}", batch_length(&white));
        assert!(batch_length(&red) >= 20, "{}", batch_length(&red));
    }

    #[test]
    fn run_intervals_need_three_runs_a_side_and_cover_the_truth() {
        assert_eq!(over_runs(&[1.0, 2.0], &[1.0, 2.0, 3.0]), None);
        let i = over_runs(&[100.0, 102.0, 98.0, 101.0], &[110.0, 112.0, 108.0, 111.0]).unwrap();
        assert!(i.low > 0.05 && i.high < 0.15 && !i.contains_zero(), "{i:?}");
        let same = over_runs(&[100.0, 102.0, 98.0], &[101.0, 99.0, 100.0]).unwrap();
        assert!(same.contains_zero(), "{same:?}");
    }

    #[test]
    fn short_series_are_too_short_to_tell() {
        let s: Series = (0..20).map(|i| (100.0 + i as f64, 1.0)).collect();
        assert_eq!(over_seconds(&s, &s, 0.0), Err(NoInterval::TooShort));
        assert_eq!(over_seconds(&vec![], &s, 0.0), Err(NoInterval::NoSeries));
    }
}
