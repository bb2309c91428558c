//! What every mode does after a run: the report on stdout (pgbench's, then what
//! [`super::after_report`] adds), the lines on stderr after it, the run's results
//! file, and writing the results files asked for (`--export-json`, `--export-html`),
//! each guarded by the mode's signal handler.

use crate::bench::plan::BenchPlan;
use crate::bench::txlog::LogLoss;
use crate::bench::RunOutcome;
use crate::diagnostic::{self, ExitStatus};
use crate::logging;
use pgbench_results::destination::{WriteError, Writes};
use pgbench_results::{ResultsFile, RunMeta, RunResult};
use pgbench_wire::redact_secrets;
use std::io::Write;

/// pgbench-rs's results files (`--export-json`, `--export-html`): what the session
/// writes after a mode, not what the run does (it keeps what `BenchPlan.keep` says).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Export {
    pub json: Option<String>,
    pub html: Option<String>,
}

impl Export {
    /// Whether any is written: the run then keeps histograms, the per-second series
    /// and the server's settings.
    pub fn any(&self) -> bool {
        self.json.is_some() || self.html.is_some()
    }

    /// The files asked for, JSON first.
    pub fn paths(&self) -> Vec<String> {
        [&self.json, &self.html]
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }
}

/// `heading` (a sweep's step line, a banner), the run's report and what its options
/// add after it, on stdout, flushed (stderr's lines come after it).
pub fn print_report(heading: &str, result: &RunResult, plan: &BenchPlan) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(heading.as_bytes());
    let _ = out.write_all(pgbench_results::report::render(result).as_bytes());
    let _ = out.write_all(super::after_report::render(result, plan).as_bytes());
    let _ = out.flush();
}

/// The abort line pgbench prints after a report whose clients aborted.
pub fn print_aborted(result: &RunResult) {
    if result.aborted_clients > 0 {
        logging::error("Run was aborted; the above results are incomplete.");
    }
}

/// The `-l` files that lost lines, each on stderr.
pub fn print_log_losses(losses: &[LogLoss]) {
    for loss in losses {
        logging::error(&format!(
            "{} lines could not be written to log file \"{}\": {}",
            loss.lines, loss.path, loss.reason
        ));
    }
}

/// Why the run stopped early and what the report covers (`show` prints the same
/// line from the results file).
pub fn print_ending_note(result: &RunResult) {
    if let Some(note) = result.ending_note() {
        logging::warning(&note);
    }
}

/// `--exit-on-abort`'s line when it stopped the run (pgbench 17: no report).
pub fn print_stopped_on_abort(thread: usize) {
    logging::error(&format!(
        "Run was aborted due to an error in thread {thread}"
    ));
}

/// The results file of a finished run: the runner's `meta` with the command line
/// (its secrets masked) and the plan's options (`command_line.options`) added.
pub fn results_file(
    result: &RunResult,
    meta: &RunMeta,
    plan: &BenchPlan,
    command_line: &super::CommandLine<'_>,
    dbname: &str,
) -> ResultsFile {
    let meta = RunMeta {
        // A connection string's password must not reach a file made to be shared.
        command_line: command_line
            .argv
            .iter()
            .map(|a| redact_secrets(a))
            .collect(),
        options: (command_line.options)(plan, dbname),
        ..meta.clone()
    };
    ResultsFile::from_run(result.clone(), meta)
}

/// The mode's signal handler, as the results files see it: a signal makes a FIFO's
/// write give up, and a later one's exit says which files were written.
pub trait GuardedWrites {
    /// Where the files are written.
    fn writes(&self) -> &Writes;
    /// The files are written from now on.
    fn writing(&self) {}
    /// The results file `path` is written whole.
    fn written(&self, path: &str);
}

impl GuardedWrites for crate::bench::RunStop {
    fn writes(&self) -> &Writes {
        crate::bench::RunStop::writes(self)
    }

    fn written(&self, path: &str) {
        self.file_written(path)
    }
}

/// `--export-json` and `--export-html`: each is written, or its error returned (one
/// that cannot be written does not cost the other). The page's series is labelled by
/// its file's name (`untitled` without one).
pub fn write_exports(
    export: &Export,
    file: &ResultsFile,
    guard: &dyn GuardedWrites,
    untitled: &str,
) -> Vec<WriteError> {
    guard.writing();
    // A FIFO no reader has opened yet: why the program has not ended.
    let write = |path: &str, text: &[u8]| {
        let written = guard.writes().write_with_notice(path, text, &mut || {
            logging::info(&format!(
                "waiting for a reader of FIFO \"{path}\" to write the results file (SIGINT or SIGTERM gives up)"
            ))
        });
        if written.is_ok() {
            guard.written(path);
        }
        written
    };
    let mut errors = Vec::new();
    if let Some(path) = &export.json {
        errors.extend(write(path, file.to_json().as_bytes()).err());
    }
    if let Some(path) = &export.html {
        // The page's own name labels its series (the command line, a label for every
        // one of them before, is the run's row's tooltip).
        let label = std::path::Path::new(path)
            .file_stem()
            .map_or(untitled.into(), |s| s.to_string_lossy().into_owned());
        let page = pgbench_results::html::render_page(&[(label, file.clone())]);
        errors.extend(write(path, page.as_bytes()).err());
    }
    errors
}

/// Finishes a plain run: prints the report, the abort line, the `-l` lines lost and
/// the stop's warning, writes the exports, and says how the run ends: 0, or 2 when a
/// client aborted or `--exit-on-abort` stopped the run; a run that could not start
/// and exports that could not be written are reported here ([`RunError`]'s and
/// [`super::SessionError::Exports`]' status), before a throwaway cluster is removed.
///
/// [`RunError`]: crate::bench::RunError
pub fn finish_run(
    outcome: Result<RunOutcome, crate::bench::RunError>,
    plan: &BenchPlan,
    command_line: &super::CommandLine<'_>,
    (target, dbname): (&pgbench_wire::ConnectArgs, &str),
    stop: &crate::bench::RunStop,
) -> ExitStatus {
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => return diagnostic::report(&e),
    };
    match &outcome {
        RunOutcome::Completed {
            result,
            meta,
            log_losses,
            ..
        } => {
            print_report("", result, plan);
            stop.report_printed();
            print_aborted(result);
            print_log_losses(log_losses);
            print_ending_note(result);
            if command_line.export.any() || command_line.history.is_some() {
                let file = results_file(result, meta, plan, command_line, dbname);
                let errors = write_exports(command_line.export, &file, stop, "this run");
                if let Some(history) = command_line.history {
                    super::history::record(history, &file, target, command_line.argv);
                }
                if !errors.is_empty() {
                    return diagnostic::report(&super::SessionError::Exports(errors));
                }
            }
        }
        RunOutcome::StoppedOnAbort { thread } => print_stopped_on_abort(*thread),
    }
    outcome.exit_status()
}
