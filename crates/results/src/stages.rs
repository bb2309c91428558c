//! A staged run's stages (`--rate-stages`, `--client-stages`): each stage's figures as
//! the results file keeps them (`run.stages`), the block the report prints after
//! pgbench's lines, and the marks on the page's charts (`compare`'s lines are in
//! `compare::stages`). A stage is a
//! window of the run clock; a transaction belongs to the stage in which it ends, so a
//! backlog left by one stage shows as late in the next.

use crate::histogram::LatencyCounts;
use crate::stats::StatsData;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// What the stages move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StageShape {
    /// `--rate-stages`: the `-R` schedule's rate, transactions per second.
    Rate,
    /// `--client-stages`: the number of active clients.
    Clients,
}

impl StageShape {
    /// The target's name in the report.
    pub fn name(self) -> &'static str {
        match self {
            StageShape::Rate => "rate",
            StageShape::Clients => "clients",
        }
    }
}

/// One stage's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageResult {
    /// The value at the stage's start (the previous target) and its target.
    pub from: f64,
    pub target: f64,
    /// Its start and end, seconds from the measured part's start.
    pub start_s: f64,
    pub end_s: f64,
    /// Successful transactions that ended in it.
    pub transactions: i64,
    /// Those of each script, with several scripts (a workload's mix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transactions_by_script: Vec<i64>,
    pub tps: f64,
    pub latency_avg_ms: f64,
    /// `None` when no transaction succeeded in it.
    pub latency_p50_ms: Option<f64>,
    pub latency_p99_ms: Option<f64>,
    pub failed: i64,
    /// `-L`: successful transactions over the limit, and those skipped.
    pub late: i64,
    pub skipped: i64,
    /// `-R`: the schedule lag's average, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_avg_ms: Option<f64>,
    /// `--workload=tpcc`: new orders per minute in it (HammerDB's step workloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm: Option<f64>,
}

/// The stages of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stages {
    pub shape: StageShape,
    pub stages: Vec<StageResult>,
}

/// What a stage counted while the run went on: the collector's counters for its
/// window.
#[derive(Debug, Clone, Default)]
pub struct StageCounts {
    pub total: StatsData,
    pub latencies: LatencyCounts,
    /// `-L`: successful transactions over the limit.
    pub late: i64,
    /// Successful transactions of each script (empty with one script).
    pub by_script: Vec<i64>,
}

/// A stage's window and targets, for [`StageResult::of`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageWindow {
    pub from: f64,
    pub target: f64,
    pub start_s: f64,
    pub end_s: f64,
}

impl StageResult {
    /// The figures of a stage from its counters; `throttled`: lag was measured.
    pub fn of(window: StageWindow, counts: &StageCounts, throttled: bool) -> StageResult {
        let t = &counts.total;
        let seconds = window.end_s - window.start_s;
        let quantiles = counts.latencies.value_at_quantiles([0.5, 0.99]);
        let ms = |us: u64| us as f64 / 1_000.0;
        StageResult {
            from: window.from,
            target: window.target,
            start_s: window.start_s,
            end_s: window.end_s,
            transactions: t.counts.cnt,
            transactions_by_script: counts.by_script.clone(),
            tps: if seconds > 0.0 {
                t.counts.cnt as f64 / seconds
            } else {
                0.0
            },
            latency_avg_ms: t.latency.mean() / 1_000.0,
            latency_p50_ms: quantiles.map(|q| ms(q[0])),
            latency_p99_ms: quantiles.map(|q| ms(q[1])),
            failed: t.failures(),
            late: counts.late,
            skipped: t.counts.skipped,
            lag_avg_ms: throttled.then(|| t.lag.mean() / 1_000.0),
            nopm: None,
        }
    }
}

/// The block after pgbench's report: a line per stage.
pub fn render_block(stages: &Stages) -> String {
    let mut out = String::new();
    let name = stages.shape.name();
    let _ = writeln!(out, "stages ({name}):");
    for (i, s) in stages.stages.iter().enumerate() {
        let target = match stages.shape {
            StageShape::Rate => format!("{} -> {} tps", number(s.from), number(s.target)),
            StageShape::Clients => format!("{} -> {} clients", s.from, s.target),
        };
        let _ = write!(
            out,
            "stage {} ({:.1}-{:.1} s, {target}): tps = {:.6}, latency average = {:.3} ms",
            i + 1,
            s.start_s,
            s.end_s,
            s.tps,
            s.latency_avg_ms
        );
        if let (Some(p50), Some(p99)) = (s.latency_p50_ms, s.latency_p99_ms) {
            let _ = write!(out, ", p50 = {p50:.3} ms, p99 = {p99:.3} ms");
        }
        let _ = write!(out, ", failed = {}", s.failed);
        if let Some(lag) = s.lag_avg_ms {
            let _ = write!(out, ", lag = {lag:.3} ms");
        }
        let _ = write!(out, ", late = {}, skipped = {}", s.late, s.skipped);
        if let Some(nopm) = s.nopm {
            // HammerDB prints NOPM whole.
            let _ = write!(out, ", NOPM = {nopm:.0}");
        }
        out.push('\n');
    }
    out
}

/// Where each stage begins on the charts' axis (seconds from the measured part's
/// start), and its name: `stage 2: 100→500 tps`, `stage 3: 4 clients`.
pub fn chart_marks(stages: &Stages) -> Vec<(f64, String)> {
    stages
        .stages
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let unit = match stages.shape {
                StageShape::Rate => "tps",
                StageShape::Clients => "clients",
            };
            let value = if s.from == s.target {
                number(s.target)
            } else {
                format!("{}\u{2192}{}", number(s.from), number(s.target))
            };
            (s.start_s, format!("stage {}: {value} {unit}", i + 1))
        })
        .collect()
}

/// A rate as typed: no fraction when it has none.
fn number(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::TxOutcome;

    fn counts(n: i64, latency_us: f64) -> StageCounts {
        let mut c = StageCounts::default();
        for _ in 0..n {
            c.total
                .accum(TxOutcome::Success, latency_us, 100.0, 1, true);
            c.latencies.record(latency_us);
        }
        c.total.accum(TxOutcome::Skipped, 0.0, 0.0, 1, true);
        c.late = 2;
        c
    }

    fn window(from: f64, target: f64, start_s: f64) -> StageWindow {
        StageWindow {
            from,
            target,
            start_s,
            end_s: start_s + 6.0,
        }
    }

    #[test]
    fn a_stage_has_its_own_tps_percentiles_and_late_transactions() {
        let s = StageResult::of(window(100.0, 500.0, 6.0), &counts(1_800, 2_000.0), true);
        assert_eq!(s.transactions, 1_800);
        assert_eq!(s.tps, 300.0);
        assert_eq!(s.latency_avg_ms, 2.0);
        assert_eq!(s.latency_p99_ms, Some(2.0));
        assert_eq!((s.late, s.skipped, s.failed), (2, 1, 0));
        assert_eq!(s.lag_avg_ms, Some(0.1));
        let empty = StageResult::of(window(0.0, 0.0, 0.0), &StageCounts::default(), false);
        assert_eq!(
            (empty.tps, empty.latency_p99_ms, empty.lag_avg_ms),
            (0.0, None, None)
        );
        let block = render_block(&Stages {
            shape: StageShape::Rate,
            stages: vec![s.clone()],
        });
        assert_eq!(
            block,
            "stages (rate):\nstage 1 (6.0-12.0 s, 100 -> 500 tps): tps = 300.000000, \
             latency average = 2.000 ms, p50 = 2.000 ms, p99 = 2.000 ms, failed = 0, \
             lag = 0.100 ms, late = 2, skipped = 1\n"
        );
    }
}
