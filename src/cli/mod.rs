//! The command line: what `main` calls. Parses arguments as pgbench does
//! ([`args`], [`options`]) and runs the chosen mode; a mode's failure is returned as
//! its error's [`Diagnostic`], which `main` reports ([`crate::diagnostic`]).

pub(crate) mod after_report;
pub mod args;
mod error;
pub mod export;
pub mod help;
pub mod option_table;
pub mod options;

use crate::bench::RunOutcome;
use crate::diagnostic::{self, Diagnostic};
use crate::logging;
pub use error::CliError;
use options::{Action, ProcessEnv};
use pgbench_results::destination::{self, WriteError};
use std::io::Write;

/// What a mode ends with: its exit status, or the error that ended it (not yet
/// printed).
pub type Exit = Result<i32, Box<dyn Diagnostic>>;

/// Runs pgbench-rs with the arguments `argv` (`argv[0]` names the program in its
/// messages).
pub fn run(argv: &[String]) -> Exit {
    let argv0 = argv.first().map_or("pgbench", String::as_str);
    logging::init_progname(argv0);
    let interpretation = options::interpret(argv0, argv.get(1..).unwrap_or_default(), &ProcessEnv);
    for notice in &interpretation.notices {
        logging::info(notice);
    }
    match interpretation.outcome? {
        Action::Help => {
            let _ = std::io::stdout().write_all(help::usage_text(logging::progname()).as_bytes());
            Ok(0)
        }
        Action::Version => {
            let _ = std::io::stdout().write_all(help::version_text().as_bytes());
            Ok(0)
        }
        Action::PrintAndExit(text) => {
            logging::raw(&text);
            Ok(0)
        }
        Action::Init {
            conn,
            init,
            temp_instance: Some(kind),
        } => {
            warn_ignored_by_temp_instance(&conn);
            crate::temp_instance::run_init(kind, &init)?;
            Ok(0)
        }
        Action::Init {
            conn,
            init,
            temp_instance: None,
        } => {
            let _ctrl_c = crate::init::interrupt::attach(&signals_for_init());
            let (main, opts) = connect_for_init(&conn)?;
            crate::init::run_on(main, &opts, &init, logging::progname())?;
            Ok(0)
        }
        Action::Prepare {
            conn,
            workload,
            how,
            temp_instance,
        } => prepare_workload(&conn, &*workload, &how, temp_instance),
        Action::CheckWorkload { conn, workload } => {
            let report = crate::workload::run_check(&*workload, &conn.connect_args())?;
            let _ = std::io::stdout().lock().write_all(report.text.as_bytes());
            report.verdict()?;
            Ok(0)
        }
        Action::Bench {
            conn,
            plan,
            temp_instance,
        } => {
            check_exports(&plan.export).map_err(CliError::Export)?;
            // Before any thread: a run's signals are its own from the start.
            let signals = install_signals()?;
            run_bench(&conn, &plan, temp_instance, argv, &signals)
        }
        Action::Sweep {
            conn,
            base,
            capacity,
            temp_instance,
        } => {
            check_exports(&base.export).map_err(CliError::Export)?;
            let signals = install_signals()?;
            if temp_instance.is_some() {
                warn_ignored_by_temp_instance(&conn);
            }
            Ok(crate::capacity::runner::run(
                &conn,
                &base,
                &capacity,
                temp_instance,
                argv,
                &signals,
            ))
        }
    }
}

/// The process's signal handling for a run, installed before any thread starts.
fn install_signals() -> Result<crate::signals::Signals, crate::bench::RunError> {
    crate::signals::install()
        .map_err(|e| crate::bench::RunError::SpawnThread(crate::sys::strerror(&e)))
}

/// Benchmarking mode: the metrics endpoint (bound before anything connects), the run
/// on the server or a temporary instance, the report, then the endpoint's linger. The
/// run's error is reported before the linger, as the report is printed before it.
fn run_bench(
    conn: &options::ConnArgs,
    plan: &crate::bench::plan::BenchPlan,
    temp_instance: Option<crate::temp_instance::TempInstance>,
    argv: &[String],
    signals: &crate::signals::Signals,
) -> Exit {
    // Before connecting: a port in use ends the run before it starts.
    let endpoint = crate::metrics::start(
        plan.metrics.as_ref(),
        plan.live_plan(),
        plan.metric_labels(),
    )
    .map_err(CliError::Metrics)?;
    let live = endpoint.as_ref().map(crate::metrics::Endpoint::live);
    // The run's, until the report is out and the results files are written.
    let stop = crate::bench::RunStop::new();
    stop.will_write(plan.export.paths());
    let attached = signals.attach(stop.clone());
    let env = crate::bench::RunEnv::process(live, std::sync::Arc::clone(&stop));
    // A run stopped by a signal ends at once, without the linger.
    let mut interrupted = false;
    let mut report = |outcome: Result<RunOutcome, crate::bench::RunError>, db: &str| {
        interrupted = matches!(
            &outcome,
            Ok(RunOutcome::Completed {
                stopped: Some(crate::bench::control::StopCause::Signal(_)),
                ..
            })
        );
        finish_bench(outcome, plan, argv, db, &stop)
    };
    let code = match temp_instance {
        Some(kind) => {
            warn_ignored_by_temp_instance(conn);
            let run = |outcome| report(outcome, "postgres");
            crate::temp_instance::run_bench(kind, plan, &env, run)
                .unwrap_or_else(|e| diagnostic::report(&e))
        }
        None => report(
            crate::bench::run(&env, conn.connect_args(), plan),
            &conn.dbname,
        ),
    };
    match endpoint {
        // A signal after the run, while its report and results files were written,
        // went to the run's handler: no linger then either.
        Some(e) if !interrupted && !stop.signalled() => {
            let _lingering = signals.attach(e.linger_stop());
            e.linger()
        }
        _ => {}
    }
    drop(attached);
    Ok(code)
}

/// The process's signal handling for `-i`: where no thread can be made for it, Ctrl-C
/// keeps its default action (the process ends at once, without the cancels): `-i`
/// itself needs no other thread, as pgbench's needs none, so it goes on.
fn signals_for_init() -> crate::signals::Signals {
    crate::signals::install().unwrap_or_else(|_| crate::signals::Signals::detached())
}

/// The first connection of `-i` (pgbench's doConnect: a password prompt if the server
/// wants one).
fn connect_for_init(
    conn: &options::ConnArgs,
) -> Result<(pgbench_wire::Connection, pgbench_wire::ConnectOptions), CliError> {
    let mut args = conn.connect_args();
    crate::connect::connect_with_prompt(&mut args).map_err(CliError::InitConnect)
}

/// `-i --workload=NAME`: connects as `-i` does (or starts a throwaway cluster) and
/// runs the workload's prepare step; after a failure on the user's server, says what
/// it left.
fn prepare_workload(
    conn: &options::ConnArgs,
    workload: &dyn crate::workload::Workload,
    how: &crate::workload::PrepareOptions,
    temp_instance: Option<crate::temp_instance::TempInstance>,
) -> Exit {
    if let Some(kind) = temp_instance {
        warn_ignored_by_temp_instance(conn);
        crate::temp_instance::run_prepare(kind, workload, how)?;
        return Ok(0);
    }
    let _ctrl_c = crate::init::interrupt::attach(&signals_for_init());
    let (main, opts) = connect_for_init(conn)?;
    workload
        .prepare(main, &opts, how)
        .map_err(|error| CliError::Prepare {
            error,
            incomplete: workload.incomplete_note(),
        })?;
    Ok(0)
}

/// Finishes a benchmark: prints the report, the abort line, the `-l` lines lost and
/// the stop's warning, writes the exports, and picks the exit status: 0, or 2 when a
/// client aborted or `--exit-on-abort` stopped the run; a run that could not start
/// and exports that could not be written are reported here ([`RunError`]'s and
/// [`CliError::Exports`]' status), before a throwaway cluster is removed.
///
/// [`RunError`]: crate::bench::RunError
pub fn finish_bench(
    outcome: Result<RunOutcome, crate::bench::RunError>,
    plan: &crate::bench::plan::BenchPlan,
    argv: &[String],
    dbname: &str,
    stop: &crate::bench::RunStop,
) -> i32 {
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
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(pgbench_results::report::render(result).as_bytes());
            let _ = out.write_all(after_report::render(result, plan).as_bytes());
            let _ = out.flush();
            drop(out);
            stop.report_printed();
            if result.aborted_clients > 0 {
                logging::error("Run was aborted; the above results are incomplete.");
            }
            for loss in log_losses {
                logging::error(&format!(
                    "{} lines could not be written to log file \"{}\": {}",
                    loss.lines, loss.path, loss.reason
                ));
            }
            // Why the run stopped early and what the report covers (`show` prints
            // the same line from the results file).
            if let Some(note) = result.ending_note() {
                logging::warning(&note);
            }
            if plan.export.any() {
                let planned = option_table::Planned {
                    plan,
                    capacity: None,
                };
                let file = export::results_file(result, meta, &planned, argv, dbname);
                let errors = write_exports(&plan.export, &file, stop);
                if !errors.is_empty() {
                    return diagnostic::report(&CliError::Exports(errors));
                }
            }
        }
        RunOutcome::StoppedOnAbort { thread } => {
            logging::error(&format!(
                "Run was aborted due to an error in thread {thread}"
            ));
        }
    }
    outcome.exit_status()
}

/// Tries the destinations of `--export-json` and `--export-html` before the run, as
/// pgbench opens its `-l` files before the clients start.
fn check_exports(export: &crate::bench::plan::Export) -> Result<(), WriteError> {
    for path in [&export.json, &export.html].into_iter().flatten() {
        destination::check(path)?;
    }
    Ok(())
}

/// `--export-json` and `--export-html`: each is written, or its error returned (one
/// that cannot be written does not cost the other).
fn write_exports(
    export: &crate::bench::plan::Export,
    file: &pgbench_results::ResultsFile,
    stop: &crate::bench::RunStop,
) -> Vec<WriteError> {
    // A FIFO no reader has opened yet: why the program has not ended.
    let write = |path: &str, text: &[u8]| {
        let written = stop.writes().write_with_notice(path, text, &mut || {
            logging::info(&format!(
                "waiting for a reader of FIFO \"{path}\" to write the results file (SIGINT or SIGTERM gives up)"
            ))
        });
        if written.is_ok() {
            stop.file_written(path);
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
            .map_or("this run".into(), |s| s.to_string_lossy().into_owned());
        let page = pgbench_results::html::render_page(&[(label, file.clone())]);
        errors.extend(write(path, page.as_bytes()).err());
    }
    errors
}

/// The connection options of the command line that the throwaway cluster ignores,
/// each named once so a user who meant a real server notices.
fn warn_ignored_by_temp_instance(conn: &options::ConnArgs) {
    let ignored: Vec<&str> = [
        (conn.host.is_some(), "-h"),
        (conn.port.is_some(), "-p"),
        (conn.user.is_some(), "-U"),
        (conn.dbname_given, "the database name"),
    ]
    .iter()
    .filter_map(|&(given, what)| given.then_some(what))
    .collect();
    if !ignored.is_empty() {
        logging::warning(&format!(
            "--temp-instance ignores {}: the run uses its own throwaway server",
            ignored.join(", ")
        ));
    }
}
