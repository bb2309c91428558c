//! A run over time, in one shape whatever it was recorded from: pgbench-rs's
//! per-second series, stock pgbench's `progress:` lines, or its `-l` and
//! `--aggregate-interval` logs. Each point covers one interval; what a source does not
//! tell is `None`. The html charts and compare's per-second confidence intervals read
//! this.

use crate::series::Second;
use crate::stats::SimpleStats;
use serde::{Deserialize, Serialize};

/// Where the points came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimelineSource {
    /// pgbench-rs's per-second series (exact counters and percentiles).
    Series,
    /// Stock pgbench's `progress:` lines (rounded figures, no percentiles).
    Progress,
    /// Stock pgbench's `--aggregate-interval` log (exact counters, no percentiles).
    AggregateLog,
    /// Stock pgbench's `-l` per-transaction log, binned by second (exact).
    TransactionLog,
}

/// One interval of the run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Point {
    /// Start of the interval, seconds since the run started.
    pub t_s: f64,
    pub length_s: f64,
    /// Successful transactions per second in the interval.
    pub tps: f64,
    /// Successful transactions, when counted exactly.
    pub transactions: Option<i64>,
    pub latency_avg_ms: Option<f64>,
    pub latency_stddev_ms: Option<f64>,
    pub latency_min_ms: Option<f64>,
    pub latency_max_ms: Option<f64>,
    /// p50, p90, p99, p99.9 of the interval's latencies, in ms.
    pub percentiles_ms: Option<[f64; 4]>,
    pub failures: Option<i64>,
    pub retried: Option<i64>,
    pub retries: Option<i64>,
    pub skipped: Option<i64>,
    pub lag_avg_ms: Option<f64>,
    pub lag_max_ms: Option<f64>,
}

/// The run over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    pub source: TimelineSource,
    pub points: Vec<Point>,
}

impl Timeline {
    /// From a per-second series (pgbench-rs's, or one binned from a `-l` log).
    pub fn from_seconds(source: TimelineSource, seconds: &[Second]) -> Timeline {
        Timeline {
            source,
            points: seconds.iter().map(point_of_second).collect(),
        }
    }

    /// Whether any interval had failures or retries (html then draws them).
    pub fn has_failures_or_retries(&self) -> bool {
        self.points
            .iter()
            .any(|p| p.failures.unwrap_or(0) > 0 || p.retries.unwrap_or(0) > 0)
    }
}

/// Mean, stddev, min and max in ms of a latency or lag series in µs, when non-empty.
pub(crate) fn stats_ms(s: &SimpleStats) -> Option<(f64, f64, f64, f64)> {
    (s.count > 0).then(|| {
        (
            s.mean() / 1000.0,
            s.stddev() / 1000.0,
            s.min / 1000.0,
            s.max / 1000.0,
        )
    })
}

/// A second as a point: a partial last second (the run ended in it) keeps its real
/// length, so its tps is its rate, not its count.
fn point_of_second(s: &Second) -> Point {
    let lat = stats_ms(&s.latency);
    let lag = stats_ms(&s.lag);
    let length_s = s.length_s.unwrap_or(1.0);
    Point {
        t_s: s.t as f64,
        length_s,
        tps: s.counts.cnt as f64 / length_s,
        transactions: Some(s.counts.cnt),
        latency_avg_ms: lat.map(|l| l.0),
        latency_stddev_ms: lat.map(|l| l.1),
        latency_min_ms: lat.map(|l| l.2),
        latency_max_ms: lat.map(|l| l.3),
        percentiles_ms: s.quantiles_us.map(|q| q.map(|us| us as f64 / 1000.0)),
        failures: Some(s.failures()),
        retried: Some(s.counts.retried),
        retries: Some(s.counts.retries),
        skipped: Some(s.counts.skipped),
        lag_avg_ms: lag.map(|l| l.0),
        lag_max_ms: lag.map(|l| l.3),
    }
}
