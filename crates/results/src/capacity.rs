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

use crate::document::ResultsFile;
use serde::{Deserialize, Serialize};

/// A sweep, or a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `--sweep`: the same run at each value given.
    Sweep,
    /// `--find-max-rate`: the highest `-R` whose measured part meets a target.
    Search,
}

/// What a file of steps varied, how, and what it found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub kind: Kind,
    /// What varies: `clients` (`-c`), `rate` (`-R`) or a script variable's name (`-D`).
    pub parameter: String,
    /// A sweep's values as given, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// `--repeat`: how many times each value runs (in rounds: every value once, then
    /// again).
    pub repeat: u32,
    /// A search's target and bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchSpec>,
    /// A search's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<Found>,
    /// The step (its number) whose figures the file's top level holds: the sweep's
    /// peak, the rate the search found; `None` when the search found none (the top
    /// level then holds the first step's).
    pub representative: Option<u32>,
    /// Why the steps ended before the last one planned (a signal, an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// `--find-max-rate` and its companions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchSpec {
    /// The target as given, e.g. `p99<=20ms,failed<=0.1%`.
    pub target: String,
    /// `--search-tolerance`: the bracket the search narrows to, as a fraction (0.05).
    pub tolerance: f64,
    /// `--search-steps`: the most steps it runs, the closed-loop one included.
    pub max_steps: u32,
    /// `--fail-if-below`, transactions per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_if_below: Option<f64>,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// tps of the closed-loop step (no `-R`): the most the clients did.
    pub closed_loop_tps: Option<f64>,
    /// The highest rate whose step met the target, and that step.
    pub rate: Option<f64>,
    pub step: Option<u32>,
    /// The lowest rate above it whose step missed, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_miss: Option<Miss>,
    /// The rate found and the first miss are within `--search-tolerance` of each
    /// other (false when the steps ran out first, or no rate missed).
    pub within_tolerance: bool,
}

/// A step that missed the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Miss {
    pub rate: f64,
    pub step: u32,
    pub why: String,
}

/// What a search's step was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Without `-R`: the most the clients do.
    ClosedLoop,
    /// A rung of the ladder of rates from the closed-loop maximum.
    Ladder,
    /// Between the highest rate that met the target and the lowest that missed.
    Bisection,
}

/// A search's step against the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub met: bool,
    /// Each part of the target it missed (`p99 31.2 ms > 20 ms`); empty when met.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

/// One step: the run at one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// 1, 2, ... in the order run.
    pub step: u32,
    /// The value it ran at, as given (`4`; a rate as `-R` took it; `closed loop` for a
    /// search's first step).
    pub value: String,
    /// Which round of `--repeat` (1 without it).
    pub round: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The step's run, as its own results file would hold it.
    pub file: ResultsFile,
}

/// What `value` a search's closed-loop step has.
pub const CLOSED_LOOP: &str = "closed loop";

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

/// The step a sweep's top level holds: the first step run at its peak (the value of
/// the highest mean tps).
pub fn peak_step(capacity: &Capacity, steps: &[Step]) -> Option<u32> {
    let c = curve::curve(capacity, steps);
    c.peak.and_then(|i| c.points[i].steps.first().copied())
}

/// Everything `show` prints of a file of steps: the steps' lines, then the report of
/// its representative step (`run` prints the top level's report, its banner first).
pub fn show(doc: &ResultsFile, run: impl Fn(&ResultsFile) -> String) -> String {
    let Some(capacity) = &doc.capacity else {
        return run(doc);
    };
    let mut out = table::render(capacity, &doc.steps);
    if let Some(step) = doc.representative_step() {
        out.push_str(&report_heading(capacity, step));
        out.push_str(&run(doc));
    }
    out
}

/// The line before the representative step's report.
pub fn report_heading(capacity: &Capacity, step: &Step) -> String {
    let what = match capacity.kind {
        Kind::Sweep => "the peak",
        Kind::Search => "the rate found",
    };
    format!(
        "\nreport of step {} ({}, {what}):\n",
        step.step,
        table::at(capacity, &step.value)
    )
}

impl ResultsFile {
    /// The step whose figures a sweep or search's top level holds, if it has steps.
    pub fn representative_step(&self) -> Option<&Step> {
        let n = self.capacity.as_ref()?.representative?;
        self.steps.iter().find(|s| s.step == n)
    }
}
