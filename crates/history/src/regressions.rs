//! Regressions over the history: each series of comparable runs (same workload,
//! scripts, scale, clients, threads and tags: the store's `series_key`) searched for
//! change points in a metric ([`crate::changepoint`]), each change point with the
//! first run after it; a change is a regression when it made the figure worse (tps,
//! qps, NOPM down; latencies, failed share up). What gates CI is each series' newest
//! change point ([`Finding::gates`]): an old regression since recovered does not.

use crate::changepoint::{self, ChangePoint, Options};
use crate::figures::{Better, Metric};
use crate::store::{Filter, Point, Store};
use crate::{HistoryError, RunId};
use pgbench_results::report::fmt_f;
use std::collections::BTreeMap;

/// One change point of one series.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub series_key: String,
    pub metric: Metric,
    pub change: ChangePoint,
    /// The first run after the change, and when it started.
    pub first_run: RunId,
    pub first_started_at: Option<String>,
    /// The runs of the series searched.
    pub runs: usize,
    /// The figure got worse.
    pub worse: bool,
    /// The series' newest change point.
    pub newest: bool,
}

impl Finding {
    /// Whether it fails a CI gate: the newest change point of its series, and worse.
    pub fn gates(&self) -> bool {
        self.newest && self.worse
    }

    /// One line: `tps -19.8% (1000.2 -> 802.1, p=3e-12) from run 38 (2026-...) in SERIES`.
    pub fn line(&self) -> String {
        let change = match self.change.relative_change {
            Some(r) => format!("{:+.1}%", 100.0 * r),
            None => "changed".to_string(),
        };
        let at = self
            .first_started_at
            .as_deref()
            .map_or(String::new(), |t| format!(" ({t})"));
        let what = match (self.worse, self.newest) {
            (true, true) => "regression",
            (true, false) => "regression, since changed again",
            (false, _) => "improvement",
        };
        format!(
            "{what}: {} {change} ({} -> {}, p={:.1e}) from run {}{at} in {}",
            self.metric.name(),
            fmt_f(self.change.mean_before, 3),
            fmt_f(self.change.mean_after, 3),
            self.change.p_value,
            self.first_run,
            self.series_key
        )
    }
}

/// The change points of `metric` in `points` (any order of series; each series'
/// points oldest first, as [`Store::series`] gives them).
pub fn find(points: &[Point], metric: Metric, opts: Options) -> Vec<Finding> {
    let mut series: BTreeMap<&str, Vec<&Point>> = BTreeMap::new();
    for p in points {
        series.entry(&p.series_key).or_default().push(p);
    }
    let mut out = Vec::new();
    for (key, pts) in series {
        let values: Vec<f64> = pts.iter().map(|p| p.value).collect();
        let cps = changepoint::detect(&values, opts);
        let last = cps.len().saturating_sub(1);
        for (i, c) in cps.into_iter().enumerate() {
            let worse = match metric.better() {
                Better::Higher => c.mean_after < c.mean_before,
                Better::Lower => c.mean_after > c.mean_before,
            };
            let first = pts[c.index];
            out.push(Finding {
                series_key: key.to_string(),
                metric,
                first_run: first.id,
                first_started_at: first.started_at.clone(),
                runs: pts.len(),
                worse,
                newest: i == last,
                change: c,
            });
        }
    }
    out
}

/// Every metric's change points over the runs `filter` selects.
pub fn search(
    store: &mut Store,
    filter: &Filter,
    metrics: &[Metric],
    opts: Options,
) -> Result<Vec<Finding>, HistoryError> {
    let mut out = Vec::new();
    for &m in metrics {
        out.extend(find(&store.series(filter, m)?, m, opts));
    }
    Ok(out)
}

/// The metrics searched when none is named: throughput, the latency average and
/// p99, the failed share, and the workloads' own.
pub const DEFAULT_METRICS: [Metric; 6] = [
    Metric::Tps,
    Metric::LatencyAvg,
    Metric::P99,
    Metric::Failed,
    Metric::Nopm,
    Metric::Qps,
];

/// Every finding a line, then a closing line saying what gates.
pub fn render(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&f.line());
        out.push('\n');
    }
    let gating = findings.iter().filter(|f| f.gates()).count();
    out.push_str(&match (findings.len(), gating) {
        (0, _) => "no change point\n".to_string(),
        (_, 0) => "no regression at the newest change point of any series\n".to_string(),
        (_, n) => format!("{n} series regressed at their newest change point\n"),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(key: &str, values: &[f64], first_id: i64) -> Vec<Point> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| Point {
                id: RunId(first_id + i as i64),
                started_at: None,
                started_us: Some(i as i64),
                value: *v,
                series_key: key.to_string(),
                tags: BTreeMap::new(),
            })
            .collect()
    }

    fn wobble(i: usize) -> f64 {
        [0.0, 1.5, -1.0, 0.5, -1.5, 1.0, -0.5][i % 7]
    }

    #[test]
    fn a_drop_in_tps_is_a_regression_named_by_its_first_run() {
        let tps: Vec<f64> = (0..30)
            .map(|i| if i < 20 { 100.0 } else { 80.0 } + wobble(i))
            .collect();
        let mut pts = points("a", &tps, 1);
        // Another series, steady: no finding of its own.
        pts.extend(points(
            "b",
            &(0..30).map(|i| 50.0 + wobble(i)).collect::<Vec<_>>(),
            100,
        ));
        let found = find(&pts, Metric::Tps, Options::default());
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0];
        assert_eq!((f.series_key.as_str(), f.first_run), ("a", RunId(21)));
        assert!(f.worse && f.newest && f.gates());
        let line = f.line();
        assert!(
            line.starts_with("regression: tps -19.9% (100.025 -> 80.100, p="),
            "{line}"
        );
        assert!(line.contains(" from run 21 in a"), "{line}");
        // The same step in a latency is an improvement.
        let lat = find(&pts, Metric::LatencyAvg, Options::default());
        assert!(!lat[0].worse && !lat[0].gates());
        assert!(render(&lat).ends_with("no regression at the newest change point of any series\n"));
    }

    #[test]
    fn a_regression_since_recovered_does_not_gate() {
        let tps: Vec<f64> = (0..45)
            .map(|i| match i {
                0..15 => 100.0,
                15..30 => 70.0,
                _ => 100.0,
            } + wobble(i))
            .collect();
        let found = find(&points("a", &tps, 1), Metric::Tps, Options::default());
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].worse && !found[0].gates());
        assert!(!found[1].worse && found[1].newest);
        assert!(render(&found).contains("regression, since changed again: tps"));
    }
}
