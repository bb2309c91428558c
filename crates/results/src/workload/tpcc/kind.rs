//! TPC-C's entry in the registry, and its part's answers (`WorkloadPart`,
//! `PartReport`): the report's `warehouses:` line and HammerDB's
//! lines after it, the NOPM and TPM that compare sets side by side (whole numbers, as
//! HammerDB prints them) and `show` prints, NOPM a sweep's column and chart too, and
//! the importer of HammerDB's output.

use super::TpccResult;
use super::{import, report};
use crate::compare::spec::{Better, Cell, FigureSpec, Format, Shown, SweepSpec};
use crate::run::RunResult;
use crate::summary::Summary;
use crate::workload::kind::{Importer, PartReport, WorkloadKind};
use crate::workload::WorkloadPart;
use std::fmt::Write;

/// TPC-C's results.
pub struct Tpcc;

pub static KIND: Tpcc = Tpcc;

/// HammerDB's new orders per minute.
const NOPM: FigureSpec = FigureSpec {
    name: "nopm",
    label: "NOPM",
    format: Format::Whole,
    better: Better::Higher,
    value: |s| s.workload.tpcc.nopm.map(|v| v as f64),
    per_second: None,
    // A TPC-C sweep's headline: its column, its chart, its row point by point.
    sweep: Some(SweepSpec {
        header: "NOPM",
        width: 8,
        cell: Cell::Number(0),
        shown: Shown::WhenMeasured,
        of_file: None,
        chart: Some("NOPM"),
        compared: Some("NOPM"),
        headline: true,
    }),
};

/// HammerDB's PostgreSQL transactions per minute.
const TPM: FigureSpec = FigureSpec {
    name: "tpm",
    label: "TPM",
    format: Format::Whole,
    better: Better::Higher,
    value: |s| s.workload.tpcc.tpm.map(|v| v as f64),
    per_second: None,
    sweep: None,
};

static FIGURES: &[FigureSpec] = &[NOPM, TPM];

static SWEEP_FIGURES: &[&FigureSpec] = &[&FIGURES[0]];

impl WorkloadPart for TpccResult {
    fn key(&self) -> &'static str {
        super::KEY
    }

    fn lost(&self) -> Option<&str> {
        self.server_lost.as_deref()
    }

    fn summary(&self, measured_us: f64) -> crate::workload::SummaryFigures {
        crate::workload::SummaryFigures {
            tpcc: TpccResult::summary(self, measured_us),
        }
    }
}

impl PartReport for TpccResult {
    /// Its scale is its warehouses.
    fn scale_lines(&self, r: &RunResult) -> Option<String> {
        Some(format!("warehouses: {}\n", r.scale))
    }

    fn render(&self, r: &RunResult, out: &mut String) {
        report::render(r, self, out);
    }
}

impl WorkloadKind for Tpcc {
    /// HammerDB's result line, when the summary has both figures.
    fn summary_lines(&self, s: &Summary, out: &mut String) {
        if let (Some(nopm), Some(tpm)) = (s.workload.tpcc.nopm, s.workload.tpcc.tpm) {
            let _ = writeln!(
                out,
                "TEST RESULT : System achieved {nopm} NOPM from {tpm} PostgreSQL TPM"
            );
        }
    }

    fn figures(&self) -> &'static [FigureSpec] {
        FIGURES
    }

    fn sweep_figures(&self) -> &'static [&'static FigureSpec] {
        SWEEP_FIGURES
    }

    fn importer(&self) -> Option<&'static dyn Importer> {
        Some(&import::IMPORTER)
    }
}

#[cfg(test)]
mod figures {
    use crate::compare::Figure;

    /// TPC-C's figures by name, as the tests name them.
    #[allow(non_upper_case_globals)]
    impl Figure {
        /// HammerDB's new orders and server transactions per minute.
        pub const Nopm: Figure = Figure::Summary(&super::NOPM);
        pub const Tpm: Figure = Figure::Summary(&super::TPM);
    }
}
