//! sysbench's entry in the registry: the report's `tables:` and `table size:` lines,
//! sysbench's summary after the report, and the importer of sysbench's output. It
//! adds no figure to summaries: compare reads its runs' like any other's.

use super::{import, report};
use crate::compare::spec::FigureSpec;
use crate::run::RunResult;
use crate::summary::Summary;
use crate::workload::kind::{Importer, WorkloadKind};
use crate::workload::WorkloadResult;

/// sysbench's results.
pub struct Sysbench;

pub static KIND: Sysbench = Sysbench;

impl WorkloadKind for Sysbench {
    fn key(&self) -> &'static str {
        super::KEY
    }

    /// Its tables and their size, where the run kept them (files written before
    /// show pgbench's line).
    fn scale_lines(&self, _: &RunResult, w: &WorkloadResult) -> Option<String> {
        let WorkloadResult::Sysbench(s) = w else {
            return None;
        };
        let (tables, size) = s.tables.zip(s.table_size)?;
        Some(format!("tables: {tables}\ntable size: {size}\n"))
    }

    /// After a blank line.
    fn render(&self, r: &RunResult, w: &WorkloadResult, out: &mut String) {
        if let WorkloadResult::Sysbench(s) = w {
            out.push('\n');
            report::render(r, s, out);
        }
    }

    fn summary_lines(&self, _: &Summary, _: &mut String) {}

    fn figures(&self) -> &'static [FigureSpec] {
        &[]
    }

    fn importer(&self) -> Option<&'static dyn Importer> {
        Some(&import::IMPORTER)
    }
}
