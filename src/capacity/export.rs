//! What a sweep or search leaves: the report of its representative step on stdout
//! (after the steps' lines), and one results file holding every step's run
//! (`--export-json`; `--export-html` draws it), whose top level is that step's. The
//! session's finishing ([`crate::session::finish`]) prints and writes them.

use crate::bench::plan::BenchPlan;
use crate::session::finish;
use pgbench_results::capacity::{Capacity, Step};
use pgbench_results::{show, ResultsFile};
use serde_json::Value;
use std::collections::BTreeMap;

/// The file of every step: the representative step's (or else the first's) at the
/// top level, with the command line's `options`.
pub fn file(
    options: BTreeMap<String, Value>,
    capacity: Capacity,
    steps: Vec<Step>,
) -> Option<ResultsFile> {
    let top = steps
        .iter()
        .find(|s| Some(s.step) == capacity.representative)
        .or(steps.first())?;
    let mut doc = top.file.clone();
    doc.options = options;
    doc.capacity = Some(capacity);
    doc.steps = steps;
    Some(doc)
}

/// The representative step's report on stdout, as its run would have printed it
/// (banner, report, what `--print-server-stats` and `--print-warnings` add), headed
/// by the step; on stderr, that its clients aborted and why it stopped early, if so.
pub fn print_report(capacity: &Capacity, step: &Step, plan: &BenchPlan) {
    let Some(run) = &step.file.run else { return };
    let server = step.file.server_version.as_deref();
    let mut text = pgbench_results::capacity::table::report_heading(capacity, step);
    text.push_str(&show::banner(
        &crate::version::pg_version(),
        pgbench_results::stock::PG_VERSION_NUM,
        server,
        server.map_or(0, show::version_num),
    ));
    finish::print_report(&text, run, plan);
    // As a single run prints them after its report.
    finish::print_aborted(run);
    finish::print_ending_note(run);
}
