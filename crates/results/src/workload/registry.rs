//! Every workload's results in one list ([`KINDS`]), and the one place the generic
//! code goes through to reach them: the report's scale lines and sections, `show`'s
//! figures and the tool an import came from, compare's and the HTML page's figures,
//! a sweep's figures, the importers.

use super::kind::{Importer, PartReport, Tool, WorkloadKind};
use super::WorkloadResult;
use crate::compare::spec::FigureSpec;
use crate::run::RunResult;
use crate::summary::Summary;

/// Every workload's results, in the order their figures are listed and their
/// importers tried.
pub static KINDS: &[&dyn WorkloadKind] = &[&super::sysbench::kind::KIND, &super::tpcc::kind::KIND];

/// How a run's part is reported: the part itself, which answers for its lines.
pub fn report_of(w: &WorkloadResult) -> &dyn PartReport {
    match w {
        WorkloadResult::Tpcc(t) => t,
        WorkloadResult::Sysbench(s) => s,
    }
}

/// The report's lines in place of pgbench's `scaling factor` for `r` (`None`:
/// pgbench's).
pub fn scale_lines(r: &RunResult) -> Option<String> {
    report_of(r.workload.as_ref()?).scale_lines(r)
}

/// What the report prints after pgbench's report and its percentiles for `r`.
pub fn render(r: &RunResult, out: &mut String) {
    if let Some(w) = &r.workload {
        report_of(w).render(r, out);
    }
}

/// What `show` prints of a summary's workload figures after its tps line.
pub fn summary_lines(s: &Summary, out: &mut String) {
    for kind in KINDS {
        kind.summary_lines(s, out);
    }
}

/// Each workload's figures, a table per workload.
pub fn figures() -> impl Iterator<Item = &'static [FigureSpec]> {
    KINDS.iter().map(|k| k.figures())
}

/// Each workload's figures a sweep shows, in [`KINDS`]' order.
pub fn sweep_figures() -> impl Iterator<Item = &'static FigureSpec> {
    KINDS.iter().flat_map(|k| k.sweep_figures().iter().copied())
}

/// The importers of the workloads' tools, in the order they are tried.
pub fn importers() -> impl Iterator<Item = &'static dyn Importer> {
    KINDS.iter().filter_map(|k| k.importer())
}

/// The tool whose import made a summary of `transaction_type` and `client`, if any.
pub fn tool_of(transaction_type: &str, client: &str) -> Option<&'static Tool> {
    importers()
        .find(|i| i.made(transaction_type, client))
        .map(|i| i.tool())
}

/// What `pgbench-report import --help` says of the tools' outputs it reads besides
/// stock pgbench's (those of [`importers`]), as its lines.
pub const IMPORTS_HELP: &str = "A sysbench run's output, or HammerDB's
(hammerdbcli's, with its time profile appended where it has one), is read as the
report, told apart by its content.";

/// `pgbench-report import --test`'s help: the test a tool's output is of, where the
/// tool does not print it (the importer that [`Importer::takes_test`]).
pub const TEST_OPTION_HELP: &str =
    "the sysbench test the report is of (oltp_read_only, ...), which sysbench's
output does not name: the import's transaction type is then
<sysbench: NAME> rather than <sysbench>";
