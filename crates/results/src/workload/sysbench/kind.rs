//! sysbench's entry in the registry, and its part's answers (`WorkloadPart`,
//! `PartReport`): the report's `tables:` and `table size:` lines,
//! sysbench's summary after the report, its queries per second as a sweep's column
//! and chart, and the importer of sysbench's output. It adds no figure to summaries:
//! compare reads its runs' like any other's.

use super::SysbenchSummary;
use super::{import, report};
use crate::compare::spec::{Better, Cell, FigureSpec, Format, Shown, SweepSpec};
use crate::run::RunResult;
use crate::summary::Summary;
use crate::workload::kind::{Importer, PartReport, WorkloadKind};
use crate::workload::WorkloadPart;
use crate::workload::{SummaryFigures, WorkloadResult};

/// sysbench's results.
pub struct Sysbench;

pub static KIND: Sysbench = Sysbench;

/// sysbench's queries per second: its headline in a sweep, as NOPM is TPC-C's. Not a
/// figure of the summary (a summary keeps what every tool's import can fill), so
/// compare has no row of it; a sweep reads it from each step's run.
const QPS: FigureSpec = FigureSpec {
    name: "qps",
    label: "queries per second",
    format: Format::Real,
    better: Better::Higher,
    value: |_| None,
    per_second: None,
    sweep: Some(SweepSpec {
        header: "qps",
        width: 10,
        cell: Cell::Number(1),
        shown: Shown::WhenMeasured,
        of_file: Some(|d| {
            let r = d.run.as_ref()?;
            match r.workload.as_ref()? {
                WorkloadResult::Sysbench(s) => s.qps(r.bench_duration_us),
                _ => None,
            }
        }),
        chart: Some("queries per second"),
        compared: None,
        headline: true,
    }),
};

static SWEEP_FIGURES: &[&FigureSpec] = &[&QPS];

impl WorkloadPart for SysbenchSummary {
    fn key(&self) -> &'static str {
        super::KEY
    }

    fn lost(&self) -> Option<&str> {
        None
    }

    /// None: sysbench's figures are pgbench's (its qps a sweep reads from the run).
    fn summary(&self, _: f64) -> SummaryFigures {
        SummaryFigures::default()
    }
}

impl PartReport for SysbenchSummary {
    /// Its tables and their size, where the run kept them (files written before
    /// show pgbench's line).
    fn scale_lines(&self, _: &RunResult) -> Option<String> {
        let (tables, size) = self.tables.zip(self.table_size)?;
        Some(format!("tables: {tables}\ntable size: {size}\n"))
    }

    /// After a blank line.
    fn render(&self, r: &RunResult, out: &mut String) {
        out.push('\n');
        report::render(r, self, out);
    }
}

impl WorkloadKind for Sysbench {
    fn summary_lines(&self, _: &Summary, _: &mut String) {}

    fn figures(&self) -> &'static [FigureSpec] {
        &[]
    }

    fn sweep_figures(&self) -> &'static [&'static FigureSpec] {
        SWEEP_FIGURES
    }

    fn importer(&self) -> Option<&'static dyn Importer> {
        Some(&import::IMPORTER)
    }
}
