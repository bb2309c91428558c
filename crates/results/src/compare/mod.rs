//! `pgbench-report compare`: two or more sides (one run each, or groups of repeated
//! runs) side by side, figure by figure, each later side against the first: the
//! change, a 95 % confidence interval for it ([`interval`] says how), and whether it
//! is within or beyond noise. Regression gates (`--fail-if 'tps<-5%'`) read the same
//! rows. Reads only summaries and timelines, so stock imports and pgbench-rs runs
//! compare alike; [`caveats`] says what makes the runs unlike (their warnings, their
//! lengths).

pub mod caveats;
mod figure;
pub mod figures;
pub mod interval;
pub mod outages;
pub mod scenarios;
pub mod server;
pub mod spec;
pub mod stages;
mod table;

use crate::document::ResultsFile;
pub use figure::Figure;
use figures::figures;
use interval::{Interval, NoInterval, Series};
pub use server::ServerFigure;
pub use spec::{Better, FigureSpec, Format};
pub use table::render_table;

/// Why a comparison could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("compare needs at least two sides (two files, or --a ... --b ...)")]
    OneSide,
    #[error("side {0} has no files")]
    EmptySide(String),
    #[error("cannot read --fail-if \"{0}\": expected FIGURE<PERCENT or FIGURE>PERCENT, e.g. 'tps<-5%' or 'p99>10%'")]
    BadGate(String),
    #[error(
        "--fail-if: unknown figure \"{0}\" (one of: {names}, {wait}TYPE:EVENT)",
        names = gate_figures().join(", "),
        wait = server::WAIT_GATE
    )]
    UnknownFigure(String),
}

/// The figures a gate can name, but for the wait events' (`wait:TYPE:EVENT`): the
/// summary's ([`figures::gate_names`]), then the server's.
pub fn gate_figures() -> Vec<String> {
    let mut names = figures::gate_names();
    names.extend(server::gate_names());
    names
}

/// One side: a label and its runs.
#[derive(Debug, Clone)]
pub struct Side {
    pub label: String,
    pub runs: Vec<ResultsFile>,
}

/// What a change amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Same,
    Better,
    Worse,
    /// Beyond noise, for a figure with no better direction.
    Higher,
    Lower,
    WithinNoise,
    /// Single runs whose series have too few batches of seconds.
    TooShort,
    /// Groups of fewer than 3 runs a side.
    TooFewRuns,
    /// No interval for this figure (single runs, no per-second counterpart).
    NoInterval,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Better => "beyond noise: better",
            Verdict::Worse => "beyond noise: worse",
            Verdict::Higher => "beyond noise: higher",
            Verdict::Lower => "beyond noise: lower",
            Verdict::WithinNoise => "within noise",
            Verdict::TooShort => "too short to tell",
            Verdict::TooFewRuns => "too few runs to tell",
            Verdict::NoInterval => "no interval",
        }
    }
}

/// One later side against the first.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// `b / a - 1`.
    pub ratio: Option<f64>,
    pub interval: Option<Interval>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub figure: Figure,
    /// Each side's figure (the mean over its runs).
    pub values: Vec<Option<f64>>,
    /// For each side after the first.
    pub changes: Vec<Change>,
}

/// How intervals were computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Welch's interval over repeated runs.
    Runs,
    /// Batch means over the per-second series of single runs.
    Seconds,
    /// Groups too small for either.
    None,
}

#[derive(Debug, Clone)]
pub struct Comparison {
    pub labels: Vec<String>,
    /// Each side's files, for the table's header.
    pub files: Vec<usize>,
    pub method: Method,
    pub rows: Vec<Row>,
    /// What the verdicts do not show: the files' warnings, runs of unlike lengths.
    pub caveats: Vec<String>,
    /// `--reconnect` runs: their outages side by side ([`outages`]).
    pub outages: Vec<String>,
    /// `--scenarios` runs: each scenario's figures side by side ([`scenarios`]).
    pub scenarios: Vec<String>,
    /// Staged runs: their stages side by side ([`stages`]).
    pub stages: Vec<String>,
}

/// Both sides' latency average is pgbench's derived one (no `-P`, `-R`, `-L`).
fn derived_latency(fig: &Figure, a: &Side, b: &Side) -> bool {
    *fig == Figure::LatencyAvg && [a, b].iter().all(|s| s.runs[0].summary.latency_avg_derived)
}

/// pgbench's derived latency average is `clients / tps`, so its change mirrors tps's:
/// the interval is tps's, inverted, around the latency's own change.
fn derived_interval(a: &Side, b: &Side, ratio: f64) -> Result<Interval, Verdict> {
    let (da, db) = (&a.runs[0], &b.runs[0]);
    let (Some(ta), Some(tb)) = (Figure::Tps.value(da), Figure::Tps.value(db)) else {
        return Err(Verdict::NoInterval);
    };
    let (Some(sa), Some(sb)) = (Figure::Tps.per_second(da), Figure::Tps.per_second(db)) else {
        return Err(Verdict::NoInterval);
    };
    let tps_change = tb / ta - 1.0;
    let i = interval::over_seconds(&sa, &sb, tps_change).map_err(no_interval)?;
    let inv = |x: f64| 1.0 / (1.0 + x) - 1.0;
    Ok(Interval {
        low: ratio + inv(i.high) - inv(tps_change),
        high: ratio + inv(i.low) - inv(tps_change),
    })
}

fn no_interval(e: NoInterval) -> Verdict {
    match e {
        NoInterval::TooShort => Verdict::TooShort,
        NoInterval::NoSeries | NoInterval::ZeroMean => Verdict::NoInterval,
    }
}

/// What an interval says of a change up (or down) of `fig`.
fn verdict(fig: &Figure, interval: Result<Interval, Verdict>, up: bool) -> Verdict {
    match interval {
        Err(v) => v,
        Ok(i) if i.contains_zero() => Verdict::WithinNoise,
        Ok(_) => match (fig.better(), up) {
            (Better::Higher, true) | (Better::Lower, false) => Verdict::Better,
            (Better::Higher, false) | (Better::Lower, true) => Verdict::Worse,
            (Better::Neither, true) => Verdict::Higher,
            (Better::Neither, false) => Verdict::Lower,
        },
    }
}

/// Each run's figure of a side.
fn run_values(fig: &Figure, s: &Side) -> Vec<f64> {
    s.runs.iter().filter_map(|d| fig.value(d)).collect()
}

/// Both sides' per-second series of `fig` (single runs).
fn series(fig: &Figure, a: &Side, b: &Side) -> Result<(Series, Series), Verdict> {
    fig.per_second(&a.runs[0])
        .zip(fig.per_second(&b.runs[0]))
        .ok_or(Verdict::NoInterval)
}

/// `v` is printed as 0 in `fig`'s format.
fn shows_as_zero(fig: &Figure, v: f64) -> bool {
    v == 0.0 || fig.format().show(Some(v)).parse::<f64>() == Ok(0.0)
}

/// A change from 0 has no percentage, but the difference can still be beyond noise
/// (0 WAL bytes a transaction against 5 kB).
fn change_from_zero(fig: &Figure, method: Method, a: &Side, b: &Side, vb: f64) -> Change {
    let interval = match method {
        Method::Runs => {
            interval::difference_over_runs(&run_values(fig, a), &run_values(fig, b), vb)
                .ok_or(Verdict::TooFewRuns)
        }
        Method::Seconds => series(fig, a, b).and_then(|(sa, sb)| {
            interval::difference_over_seconds(&sa, &sb, vb).map_err(no_interval)
        }),
        Method::None => Err(Verdict::TooFewRuns),
    };
    Change {
        ratio: None,
        interval: None,
        verdict: verdict(fig, interval, vb > 0.0),
    }
}

fn change(fig: &Figure, method: Method, a: &Side, b: &Side, va: f64, vb: f64) -> Change {
    // Equal as the table shows them (0.000 and 0.000 printed +inf% before): the same.
    let shown = |v| fig.format().show(Some(v));
    if va == vb || shown(va) == shown(vb) {
        return Change {
            ratio: Some(0.0),
            interval: None,
            verdict: Verdict::Same,
        };
    }
    // A base the table shows as 0 (0.0003 WAL bytes a transaction of the server's own
    // background writes) is 0 to the reader: a percentage of it would be in the billions.
    if shows_as_zero(fig, va) {
        return change_from_zero(fig, method, a, b, vb);
    }
    let ratio = vb / va - 1.0;
    let interval = match method {
        Method::Runs => {
            interval::over_runs(&run_values(fig, a), &run_values(fig, b)).ok_or(Verdict::TooFewRuns)
        }
        Method::Seconds if derived_latency(fig, a, b) => derived_interval(a, b, ratio),
        Method::Seconds => series(fig, a, b).and_then(|(sa, sb)| {
            match interval::over_seconds(&sa, &sb, ratio) {
                // No interval of the ratio, but the difference's tells noise from a
                // change, as it does for a change from 0.
                Err(NoInterval::ZeroMean) => Err(verdict(
                    fig,
                    interval::difference_over_seconds(&sa, &sb, vb - va).map_err(no_interval),
                    ratio > 0.0,
                )),
                i => i.map_err(no_interval),
            }
        }),
        Method::None => Err(Verdict::TooFewRuns),
    };
    Change {
        ratio: Some(ratio),
        interval: interval.ok(),
        verdict: verdict(fig, interval, ratio > 0.0),
    }
}

/// Compares every later side with the first.
pub fn compare(sides: &[Side]) -> Result<Comparison, CompareError> {
    if sides.len() < 2 {
        return Err(CompareError::OneSide);
    }
    if let Some(s) = sides.iter().find(|s| s.runs.is_empty()) {
        return Err(CompareError::EmptySide(s.label.clone()));
    }
    let method = if sides.iter().all(|s| s.runs.len() == 1) {
        Method::Seconds
    } else if sides.iter().all(|s| s.runs.len() >= interval::MIN_RUNS) {
        Method::Runs
    } else {
        Method::None
    };
    let mean = |fig: &Figure, s: &Side| {
        let v: Vec<f64> = s.runs.iter().filter_map(|d| fig.value(d)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let rows = figures(sides)
        .into_iter()
        .filter_map(|fig| {
            let values: Vec<Option<f64>> = sides.iter().map(|s| mean(&fig, s)).collect();
            values.iter().any(Option::is_some).then_some(())?;
            let changes = sides[1..]
                .iter()
                .zip(&values[1..])
                .map(|(b, vb)| match (values[0], vb) {
                    (Some(va), Some(vb)) => change(&fig, method, &sides[0], b, va, *vb),
                    _ => Change {
                        ratio: None,
                        interval: None,
                        verdict: Verdict::NoInterval,
                    },
                })
                .collect();
            Some(Row {
                figure: fig,
                values,
                changes,
            })
        })
        .collect();
    Ok(Comparison {
        labels: sides.iter().map(|s| s.label.clone()).collect(),
        files: sides.iter().map(|s| s.runs.len()).collect(),
        method,
        rows,
        caveats: caveats::of(sides),
        outages: outages::lines(sides),
        scenarios: scenarios::lines(sides),
        stages: stages::lines(sides),
    })
}

/// `--fail-if FIGURE<PERCENT` or `FIGURE>PERCENT`: fail when a later side's change of
/// the figure passes the threshold beyond noise; when it passes it but the data cannot
/// tell it from noise (too short, too few runs, no interval), say so apart.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub figure: String,
    pub below: bool,
    /// Percent.
    pub threshold: f64,
    pub text: String,
}

impl Gate {
    pub fn parse(text: &str) -> Result<Gate, CompareError> {
        let bad = || CompareError::BadGate(text.to_string());
        let (i, below) = match (text.find('<'), text.find('>')) {
            (Some(i), None) => (i, true),
            (None, Some(i)) => (i, false),
            _ => return Err(bad()),
        };
        let figure = text[..i].trim().to_string();
        let num = text[i + 1..].trim().trim_end_matches('%');
        let threshold: f64 = num.parse().map_err(|_| bad())?;
        let known = gate_figures().contains(&figure);
        if !known && !figure.starts_with(server::WAIT_GATE) {
            return Err(CompareError::UnknownFigure(figure));
        }
        Ok(Gate {
            figure,
            below,
            threshold,
            text: text.to_string(),
        })
    }

    /// What this gate finds for each later side whose change passes its threshold;
    /// a figure the files do not have (server figures without `--server-stats`, a
    /// workload's figure of a run of another workload) cannot pass: that is undecided.
    pub fn check(&self, c: &Comparison) -> Vec<GateFinding> {
        let Some(row) = c
            .rows
            .iter()
            .find(|r| r.figure.gate_name().as_deref() == Some(&self.figure))
        else {
            return vec![GateFinding::Undecided(format!(
                "{}: not in these files, so --fail-if '{}' cannot be checked",
                self.figure, self.text
            ))];
        };
        row.changes
            .iter()
            .enumerate()
            .filter_map(|(i, ch)| {
                // A change from 0 passes any threshold in its direction.
                let (pct, by) = match ch.ratio {
                    Some(r) => (100.0 * r, format!("by {}%", table::signed(100.0 * r, 1))),
                    None => {
                        let to = row.values[i + 1].filter(|v| *v != 0.0)?;
                        let from_zero =
                            row.values[0].is_some_and(|v| shows_as_zero(&row.figure, v));
                        from_zero.then_some(())?;
                        (
                            f64::INFINITY.copysign(to),
                            format!("from 0 to {}", row.figure.format().show(Some(to))),
                        )
                    }
                };
                let passed = if self.below {
                    pct < self.threshold
                } else {
                    pct > self.threshold
                };
                if !passed {
                    return None;
                }
                let change = format!(
                    "{} vs {}: {} changed {by} ({})",
                    c.labels[i + 1],
                    c.labels[0],
                    self.figure,
                    ch.verdict.text(),
                );
                match ch.verdict {
                    Verdict::Better | Verdict::Worse | Verdict::Higher | Verdict::Lower => {
                        Some(GateFinding::Regression(format!(
                            "{change}, beyond --fail-if '{}'",
                            self.text
                        )))
                    }
                    Verdict::WithinNoise | Verdict::Same => None,
                    Verdict::TooShort | Verdict::TooFewRuns | Verdict::NoInterval => {
                        Some(GateFinding::Undecided(format!(
                            "{change}: --fail-if '{}' cannot tell it from noise",
                            self.text
                        )))
                    }
                }
            })
            .collect()
    }
}

/// What a `--fail-if` gate found for one later side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateFinding {
    /// The change passes the threshold beyond noise: the gate trips.
    Regression(String),
    /// The change passes the threshold, but the data cannot tell it from noise.
    Undecided(String),
}

#[cfg(test)]
mod tests;
