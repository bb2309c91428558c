//! The figures `compare` knows and which of them a comparison sets side by side, in
//! the table's order: a workload's own first (its headline rates), tps, latency,
//! the percentiles, failures, retries and lag, each script's and statement's, and the
//! server's. The summary's figures are rows of tables ([`FIGURES`], and each
//! workload's, from `crate::workload::registry`); `--fail-if`'s names and its error
//! text are read from the same tables.

use super::figure::{percentile_gate, Figure};
use super::spec::{second_weight, Better, Cell, FigureSpec, Shown, SweepSpec};
use super::{server, Format, Side};
use crate::document::ResultsFile;
use crate::summary::{Summary, SUMMARY_PERCENTILES};

pub(super) const TPS: FigureSpec = FigureSpec {
    name: "tps",
    label: "tps",
    format: Format::Real,
    better: Better::Higher,
    value: |s| s.tps,
    per_second: Some(|p| Some((p.tps, 1.0))),
    sweep: Some(SweepSpec {
        header: "tps",
        width: 10,
        cell: Cell::Number(1),
        shown: Shown::Always,
        of_file: None,
        chart: Some("transactions per second"),
        compared: Some("tps"),
        headline: false,
    }),
};

pub(super) const LATENCY_AVG: FigureSpec = FigureSpec {
    name: "latency_avg",
    label: "latency average (ms)",
    format: Format::Real,
    better: Better::Lower,
    value: |s| s.latency_avg_ms,
    per_second: Some(|p| Some((p.latency_avg_ms?, second_weight(p)))),
    sweep: None,
};

pub(super) const LATENCY_STDDEV: FigureSpec = FigureSpec {
    name: "latency_stddev",
    label: "latency stddev (ms)",
    format: Format::Real,
    better: Better::Lower,
    value: |s| s.latency_stddev_ms,
    per_second: None,
    sweep: None,
};

pub(super) const LATENCY_MAX: FigureSpec = FigureSpec {
    name: "max",
    label: "latency max (ms)",
    format: Format::Real,
    better: Better::Lower,
    value: |s| Some(s.percentiles.as_ref()?.max_ms),
    per_second: None,
    sweep: None,
};

/// Failed transactions, % of all (failed, successful and skipped).
fn failed_share(s: &Summary) -> Option<f64> {
    let f = s.failures?.total as f64;
    Some(100.0 * f / (s.transactions? as f64 + f + s.skipped.unwrap_or(0) as f64))
}

pub(super) const FAILED_PCT: FigureSpec = FigureSpec {
    name: "failed",
    label: "failed transactions (%)",
    format: Format::Real,
    better: Better::Lower,
    value: failed_share,
    per_second: None,
    sweep: Some(SweepSpec {
        header: "failed",
        width: 8,
        cell: Cell::Percent,
        shown: Shown::Always,
        // A share of no transactions is none in a step's line, not `NaN%`.
        of_file: Some(|d| failed_share(&d.summary).filter(|v| v.is_finite())),
        chart: None,
        compared: Some("failed %"),
        headline: false,
    }),
};

pub(super) const RETRIES: FigureSpec = FigureSpec {
    name: "retries",
    label: "retries",
    format: Format::Whole,
    better: Better::Lower,
    value: |s| s.retries.map(|r| r as f64),
    per_second: None,
    sweep: None,
};

pub(super) const LAG_AVG: FigureSpec = FigureSpec {
    name: "lag_avg",
    label: "schedule lag average (ms)",
    format: Format::Real,
    better: Better::Lower,
    value: |s| s.lag_avg_ms,
    per_second: Some(|p| Some((p.lag_avg_ms?, second_weight(p)))),
    sweep: None,
};

/// A latency percentile of a sweep's step: its summary's, else its histogram's (a
/// step's file written without the summary's percentiles).
fn step_percentile(doc: &ResultsFile, p: f64) -> Option<f64> {
    let s = &doc.summary;
    s.percentiles.as_ref().and_then(|ps| ps.at(p)).or_else(|| {
        let h = doc.histogram().filter(|h| !h.is_empty())?;
        Some(h.value_at_quantile(p / 100.0) as f64 / 1000.0)
    })
}

/// The median latency, as a sweep's column: compare has every percentile as
/// [`Figure::Percentile`], so this row is the sweep's only.
const P50: FigureSpec = FigureSpec {
    name: "p50",
    label: "latency p50 (ms)",
    format: Format::Real,
    better: Better::Lower,
    value: |s| s.percentiles.as_ref()?.at(50.0),
    per_second: None,
    sweep: Some(SweepSpec {
        header: "p50 ms",
        width: 9,
        cell: Cell::Number(3),
        shown: Shown::Always,
        of_file: Some(|d| step_percentile(d, 50.0)),
        chart: None,
        compared: None,
        headline: false,
    }),
};

/// The 99th percentile latency, as a sweep's column and chart; compared point by
/// point as compare's [`Figure::Percentile`] of the same name.
const P99: FigureSpec = FigureSpec {
    name: "p99",
    label: "latency p99 (ms)",
    format: Format::Real,
    better: Better::Lower,
    value: |s| s.percentiles.as_ref()?.at(99.0),
    per_second: None,
    sweep: Some(SweepSpec {
        header: "p99 ms",
        width: 9,
        cell: Cell::Number(3),
        shown: Shown::Always,
        of_file: Some(|d| step_percentile(d, 99.0)),
        chart: Some("p99 latency (ms)"),
        compared: Some("p99 ms"),
        headline: false,
    }),
};

/// `-L`: successful transactions above it and those skipped, % of all (failed,
/// successful and skipped). A sweep's column only: compare has no such row.
const LATE_PCT: FigureSpec = FigureSpec {
    name: "late",
    label: "late transactions (%)",
    format: Format::Real,
    better: Better::Lower,
    value: |s| {
        let failed = s.failures.map_or(0, |f| f.total);
        let skipped = s.skipped.unwrap_or(0);
        let (late, all) = (s.late?, s.transactions? + failed + skipped);
        (all > 0).then(|| 100.0 * (late + skipped) as f64 / all as f64)
    },
    per_second: None,
    sweep: Some(SweepSpec {
        header: "late",
        width: 8,
        cell: Cell::Percent,
        shown: Shown::WhenMeasured,
        of_file: None,
        chart: None,
        compared: None,
        headline: false,
    }),
};

/// The summary's figures a sweep shows, in its columns' order, before the
/// workloads' (`crate::capacity::sweep_figures`).
pub static SWEEP_FIGURES: &[&FigureSpec] = &[&TPS, &P50, &P99, &FAILED_PCT, &LATE_PCT];

/// Every run's summary figures, in the table's order; the latency percentiles
/// (`PERCENTILES_AFTER`) go between the latency's stddev and its max.
pub static FIGURES: &[FigureSpec] = &[
    TPS,
    LATENCY_AVG,
    LATENCY_STDDEV,
    LATENCY_MAX,
    FAILED_PCT,
    RETRIES,
    LAG_AVG,
];

/// The summary's figures by name, as `compare` (derived latency, from tps) and the
/// tests name them.
#[allow(non_upper_case_globals)]
impl Figure {
    pub const Tps: Figure = Figure::Summary(&TPS);
    pub const LatencyAvg: Figure = Figure::Summary(&LATENCY_AVG);
    pub const LatencyStddev: Figure = Figure::Summary(&LATENCY_STDDEV);
    pub const LatencyMax: Figure = Figure::Summary(&LATENCY_MAX);
    /// Failed transactions, % of all.
    pub const FailedPct: Figure = Figure::Summary(&FAILED_PCT);
    pub const Retries: Figure = Figure::Summary(&RETRIES);
    pub const LagAvg: Figure = Figure::Summary(&LAG_AVG);
}

/// How many of [`FIGURES`] come before the percentiles' rows.
const PERCENTILES_AFTER: usize = 3;

/// The figures workloads add to their runs' summaries, a table per workload (each
/// workload's results own theirs). A workload's rows lead the comparison when the
/// first run has the first of them; their gate names follow [`FIGURES`]'.
fn workload_figures() -> impl Iterator<Item = &'static [FigureSpec]> {
    crate::workload::registry::figures()
}

/// Every gate name of the summary's figures, in the order `--fail-if`'s error
/// lists them: [`FIGURES`]' with the summary's percentiles among them, then the
/// workloads'.
pub fn gate_names() -> Vec<String> {
    let (before, after) = FIGURES.split_at(PERCENTILES_AFTER);
    let name = |f: &FigureSpec| f.name.to_string();
    before
        .iter()
        .map(name)
        .chain(SUMMARY_PERCENTILES.into_iter().map(percentile_gate))
        .chain(after.iter().map(name))
        .chain(workload_figures().flatten().map(name))
        .collect()
}

/// The percentiles compared: pgbench-rs's, and any other a side's summary lists (an
/// imported tool's own, a 95th say), in order.
fn percentiles(sides: &[Side]) -> Vec<f64> {
    let listed = sides
        .iter()
        .flat_map(|s| &s.runs)
        .filter_map(|d| d.summary.percentiles.as_ref())
        .flat_map(|p| p.values.iter().map(|(q, _)| *q));
    let mut all: Vec<f64> = SUMMARY_PERCENTILES
        .into_iter()
        .chain(listed)
        .filter(|q| q.is_finite())
        .collect();
    all.sort_by(f64::total_cmp);
    all.dedup();
    all
}

pub(super) fn figures(sides: &[Side]) -> Vec<Figure> {
    let first = &sides[0].runs[0].summary;
    let (before, after) = FIGURES.split_at(PERCENTILES_AFTER);
    let mut v: Vec<Figure> = workload_figures()
        .filter(|w| w.first().is_some_and(|f| (f.value)(first).is_some()))
        .flatten()
        .map(Figure::Summary)
        .collect();
    v.extend(before.iter().map(Figure::Summary));
    v.extend(percentiles(sides).into_iter().map(Figure::Percentile));
    v.extend(after.iter().map(Figure::Summary));
    if first.scripts.len() > 1 {
        for sc in &first.scripts {
            v.push(Figure::ScriptTps(sc.name.clone()));
            v.push(Figure::ScriptLatency(sc.name.clone()));
        }
    }
    for (name, st) in first.statements() {
        v.push(Figure::Statement(format!("{name}: {}", st.command)));
    }
    let all: Vec<&ResultsFile> = sides.iter().flat_map(|s| &s.runs).collect();
    v.extend(server::figures(&all).into_iter().map(Figure::Server));
    v
}

#[cfg(test)]
mod tests {
    use super::super::server::{self, ServerFigure};
    use super::super::{CompareError, Gate};
    use super::*;

    /// The gate names `--fail-if`'s error lists, but for `wait:TYPE:EVENT`.
    fn listed() -> Vec<String> {
        let text = CompareError::UnknownFigure("speed".into()).to_string();
        let list = text.split_once("(one of: ").unwrap().1;
        let list = list.strip_suffix(')').unwrap();
        let (names, wait) = list.rsplit_once(", ").unwrap();
        assert_eq!(wait, format!("{}TYPE:EVENT", server::WAIT_GATE));
        names.split(", ").map(String::from).collect()
    }

    /// Every figure with a fixed gate name, from the tables.
    fn known() -> Vec<Figure> {
        let workloads = workload_figures().flatten();
        FIGURES
            .iter()
            .chain(workloads)
            .map(Figure::Summary)
            .chain(SUMMARY_PERCENTILES.map(Figure::Percentile))
            .chain(server::figures_with_fixed_names().map(Figure::Server))
            .collect()
    }

    #[test]
    fn the_gate_error_lists_exactly_the_figures_the_tables_know() {
        let names = listed();
        let known: Vec<String> = known().iter().map(|f| f.gate_name().unwrap()).collect();
        for name in &names {
            assert!(
                known.contains(name),
                "{name} is listed but no figure has it"
            );
            Gate::parse(&format!("{name}<-5%")).unwrap();
        }
        for name in &known {
            assert!(names.contains(name), "{name} is a figure but not listed");
        }
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        // The text as it was when the names were a hand-kept string.
        assert_eq!(
            CompareError::UnknownFigure("speed".into()).to_string(),
            "--fail-if: unknown figure \"speed\" (one of: tps, latency_avg, latency_stddev, \
             p50, p90, p99, p99.9, p99.99, max, failed, retries, lag_avg, nopm, tpm, \
             wal_bytes_per_transaction, fpi_share, blks_read_per_transaction, hit_ratio, \
             checkpoints, wait:TYPE:EVENT)"
        );
        assert!(Gate::parse("wait:LWLock:WALWrite<-5%").is_ok());
        assert!(matches!(
            Gate::parse("tps_avg<-5%"),
            Err(CompareError::UnknownFigure(_))
        ));
    }

    #[test]
    fn a_summary_figure_is_its_row_of_the_table() {
        let tps = Figure::Summary(&FIGURES[0]);
        assert_eq!(tps, Figure::Tps);
        assert_eq!(tps.label(), "tps");
        assert_eq!(Figure::Nopm.label(), "NOPM");
        assert_eq!(Figure::Nopm.format(), Format::Whole);
        assert_ne!(Figure::Nopm, Figure::Tpm);
        assert_eq!(
            Figure::Server(ServerFigure::Checkpoints)
                .gate_name()
                .as_deref(),
            Some("checkpoints")
        );
    }
}
