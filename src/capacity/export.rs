//! What a sweep or search leaves: the report of its representative step on stdout
//! (after the steps' lines), and one results file holding every step's run
//! (`--export-json`; `--export-html` draws it), whose top level is that step's.

use super::stop::SweepStop;
use crate::bench::plan::{BenchPlan, Export};
use crate::logging;
use pgbench_results::capacity::{Capacity, Step};
use pgbench_results::destination::WriteError;
use pgbench_results::{show, ResultsFile};
use std::io::Write;

/// The file of every step: the representative step's (or else the first's) at the
/// top level, with the command line's options.
pub fn file(
    base: &BenchPlan,
    plan: &super::plan::CapacityPlan,
    dbname: &str,
    capacity: Capacity,
    steps: Vec<Step>,
) -> Option<ResultsFile> {
    let top = steps
        .iter()
        .find(|s| Some(s.step) == capacity.representative)
        .or(steps.first())?;
    let mut doc = top.file.clone();
    let planned = crate::cli::option_table::Planned {
        plan: base,
        capacity: Some(plan),
    };
    doc.options = crate::cli::export::effective_options(&planned, dbname);
    doc.capacity = Some(capacity);
    doc.steps = steps;
    Some(doc)
}

/// The representative step's report on stdout, as its run would have printed it
/// (banner, report, what `--print-server-stats` and `--print-warnings` add), headed
/// by the step; why it stopped early, if it did, on stderr.
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
    text.push_str(&pgbench_results::report::render(run));
    text.push_str(&crate::cli::after_report::render(run, plan));
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    drop(out);
    if let Some(note) = run.ending_note() {
        logging::warning(&note);
    }
}

/// `--export-json` and `--export-html`: each written, or its error returned.
pub fn write(export: &Export, file: &ResultsFile, stop: &SweepStop) -> Vec<WriteError> {
    stop.writing();
    let write = |path: &str, text: &[u8]| {
        stop.writes().write_with_notice(path, text, &mut || {
            logging::info(&format!(
                "waiting for a reader of FIFO \"{path}\" to write the results file (SIGINT or SIGTERM gives up)"
            ))
        })
    };
    let mut errors = Vec::new();
    if let Some(path) = &export.json {
        match write(path, file.to_json().as_bytes()) {
            Ok(()) => stop.written(),
            Err(e) => errors.push(e),
        }
    }
    if let Some(path) = &export.html {
        let label = std::path::Path::new(path)
            .file_stem()
            .map_or("this sweep".into(), |s| s.to_string_lossy().into_owned());
        let page = pgbench_results::html::render_page(&[(label, file.clone())]);
        errors.extend(write(path, page.as_bytes()).err());
    }
    errors
}
