//! A sweep (`--sweep=NAME=V1,V2,...`) or a capacity search (`--find-max-rate=TARGET`)
//! in one results file: every step's run whole, as a results file of its own
//! ([`Step::file`]), and what was varied, how, and what came of it ([`Capacity`]). The
//! file's top level holds its representative step's figures (the sweep's peak, the
//! rate the search found; else its first step), so that a reader that knows nothing
//! of steps reads one run.
//!
//! - [`curve`]: the steps as a curve over the swept value: each value's mean and 95 %
//!   interval over its repeats, the peak and the knee;
//! - [`table`]: the line a step prints, and the lines before and after them, as the
//!   run printed them and `pgbench-report show` prints them again;
//! - [`compare`]: two sweeps point by point;
//! - [`merge`]: the workers' sweeps of one `--worker` run, step by step.

pub mod compare;
pub mod curve;
pub mod merge;
pub mod table;
#[cfg(test)]
mod tests;

pub use crate::document::steps::{
    Capacity, Found, Kind, Miss, Role, SearchSpec, Step, Verdict, CLOSED_LOOP,
};
use crate::document::ResultsFile;

/// A step's figures as its line and the charts show them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Figures {
    pub tps: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Failed transactions, % of all (failed, successful and skipped).
    pub failed_pct: Option<f64>,
    /// `-L`: successful transactions above it and those skipped, % of all.
    pub late_pct: Option<f64>,
    /// `--workload=tpcc`.
    pub nopm: Option<f64>,
    /// The codes of its validity warnings.
    pub warnings: Vec<String>,
}

impl Step {
    /// The swept value as a number, when it is one (a variable may be text).
    pub fn x(&self) -> Option<f64> {
        self.value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
    }

    pub fn figures(&self) -> Figures {
        figures(&self.file)
    }

    /// It ran to its end with every client: not interrupted, no client aborted. A
    /// peak or a knee is read only from such steps (a step cut short or missing
    /// clients measured something else than its value asked for).
    pub fn is_whole(&self) -> bool {
        self.file.run.as_ref().is_some_and(|r| {
            r.aborted_clients == 0 && !matches!(r.ended, Some(crate::Ended::Interrupted { .. }))
        })
    }
}

/// The figures of a run's document.
pub fn figures(doc: &ResultsFile) -> Figures {
    let s = &doc.summary;
    let percentile = |p: f64| {
        s.percentiles.as_ref().and_then(|ps| ps.at(p)).or_else(|| {
            let h = doc.histogram().filter(|h| !h.is_empty())?;
            Some(h.value_at_quantile(p / 100.0) as f64 / 1000.0)
        })
    };
    let failed = s.failures.map_or(0, |f| f.total);
    let skipped = s.skipped.unwrap_or(0);
    let all = s.transactions.map(|t| (t + failed + skipped) as f64);
    let share = |n: i64| all.filter(|a| *a > 0.0).map(|a| 100.0 * n as f64 / a);
    Figures {
        tps: s.tps,
        p50_ms: percentile(50.0),
        p99_ms: percentile(99.0),
        failed_pct: s.failures.and_then(|f| share(f.total)),
        late_pct: s.late.and_then(|late| share(late + skipped)),
        nopm: s.workload.tpcc.nopm.map(|n| n as f64),
        warnings: doc.warnings.iter().map(|w| w.code.clone()).collect(),
    }
}

impl Capacity {
    /// How the table and the charts name the swept value.
    pub fn value_label(&self) -> String {
        match (self.kind, self.parameter.as_str()) {
            (Kind::Search, _) | (_, "rate") => "-R".to_string(),
            (_, "clients") => "clients".to_string(),
            (_, name) => format!(":{name}"),
        }
    }
}

/// The step a sweep's top level holds: the first whole step run at its peak (the
/// value of the highest mean tps of its whole steps, [`Step::is_whole`]).
pub fn peak_step(capacity: &Capacity, steps: &[Step]) -> Option<u32> {
    let c = curve::curve(capacity, steps);
    let at_peak = &c.points[c.peak?].steps;
    steps
        .iter()
        .find(|s| at_peak.contains(&s.step) && s.is_whole())
        .map(|s| s.step)
}

impl ResultsFile {
    /// The step whose figures a sweep or search's top level holds, if it has steps.
    pub fn representative_step(&self) -> Option<&Step> {
        let n = self.capacity.as_ref()?.representative?;
        self.steps.iter().find(|s| s.step == n)
    }
}
