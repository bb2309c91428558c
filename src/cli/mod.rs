//! The command line: what `main` calls. Parses arguments as pgbench does
//! ([`args`], [`options`]) and runs the chosen mode.

mod after_report;
pub mod args;
pub mod export;
pub mod help;
pub mod option_table;
pub mod options;

use crate::bench::RunOutcome;
use crate::logging;
use options::{Action, ProcessEnv};
use pgbench_results::destination::{self, WriteError};
use std::io::Write;

/// Runs pgbench-rs with this process's arguments; returns the exit status.
pub fn main() -> i32 {
    crate::sys::limit_malloc_arenas();
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let argv0 = argv
        .first()
        .cloned()
        .unwrap_or_else(|| "pgbench".to_string());
    logging::init_progname(&argv0);
    let interpretation = options::interpret(&argv0, &argv[1..], &ProcessEnv);
    for notice in &interpretation.notices {
        logging::info(notice);
    }
    let action = match interpretation.outcome {
        Ok(a) => a,
        Err(e) => {
            logging::raw(&e.render());
            return 1;
        }
    };
    match action {
        Action::Help => {
            let _ = std::io::stdout().write_all(help::usage_text(logging::progname()).as_bytes());
            0
        }
        Action::Version => {
            let _ = std::io::stdout().write_all(help::version_text().as_bytes());
            0
        }
        Action::PrintAndExit(text) => {
            logging::raw(&text);
            0
        }
        Action::Init {
            conn,
            init,
            temp_instance,
        } => {
            if let Some(kind) = temp_instance {
                warn_ignored_by_temp_instance(&conn);
                return match crate::temp_instance::run_init(kind, &init) {
                    Ok(()) => 0,
                    Err(e) => {
                        logging::raw(&e.render(logging::progname()));
                        1
                    }
                };
            }
            let _ctrl_c = crate::init::interrupt::attach(&signals_for_init());
            let Some((main, opts)) = connect_for_init(&conn) else {
                return 1;
            };
            match crate::init::run_on(main, &opts, &init, logging::progname()) {
                Ok(()) => 0,
                Err(e) => {
                    logging::raw(&e.render(logging::progname()));
                    1
                }
            }
        }
        Action::Prepare {
            conn,
            workload,
            jobs,
            seed,
            scale,
            quiet,
            temp_instance,
        } => {
            let how = crate::workload::PrepareOptions {
                jobs,
                seed,
                scale,
                quiet,
            };
            if let Some(kind) = temp_instance {
                warn_ignored_by_temp_instance(&conn);
                return match crate::temp_instance::run_prepare(kind, &workload, &how) {
                    Ok(()) => 0,
                    Err(e) => {
                        logging::raw(&e.render(logging::progname()));
                        1
                    }
                };
            }
            let _ctrl_c = crate::init::interrupt::attach(&signals_for_init());
            prepare_workload(&conn, &workload, &how)
        }
        Action::CheckWorkload { conn, workload } => {
            crate::workload::run_check(&workload, &conn.connect_args())
        }
        Action::Bench {
            conn,
            plan,
            temp_instance,
        } => {
            if let Err(e) = check_exports(&plan.export) {
                logging::error(&e.to_string());
                return 1;
            }
            // Before any thread: a run's signals are its own from the start.
            let signals = match crate::signals::install() {
                Ok(s) => s,
                Err(e) => {
                    let e = crate::bench::RunError::SpawnThread(crate::sys::strerror(&e));
                    logging::raw(&e.render());
                    return e.exit_status();
                }
            };
            run_bench(&conn, &plan, temp_instance, &argv, &signals)
        }
    }
}

/// Benchmarking mode: the metrics endpoint (bound before anything connects), the run
/// on the server or a temporary instance, the report, then the endpoint's linger.
fn run_bench(
    conn: &options::ConnArgs,
    plan: &crate::bench::plan::BenchPlan,
    temp_instance: Option<crate::temp_instance::TempInstance>,
    argv: &[String],
    signals: &crate::signals::Signals,
) -> i32 {
    // Before connecting: a port in use ends the run before it starts.
    let endpoint = match crate::metrics::start(
        plan.metrics.as_ref(),
        plan.live_plan(),
        plan.metric_labels(),
    ) {
        Ok(e) => e,
        Err(message) => {
            logging::error(&message);
            return 1;
        }
    };
    let live = endpoint.as_ref().map(crate::metrics::Endpoint::live);
    // The run's, until the report is out and the results files are written.
    let stop = crate::bench::RunStop::new();
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
            match crate::temp_instance::run_bench(kind, plan, &env, run) {
                Ok(code) => code,
                Err(e) => {
                    logging::raw(&e.render(logging::progname()));
                    1
                }
            }
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
    code
}

/// The process's signal handling for `-i`: where no thread can be made for it, Ctrl-C
/// keeps its default action (the process ends at once, without the cancels): `-i`
/// itself needs no other thread, as pgbench's needs none, so it goes on.
fn signals_for_init() -> crate::signals::Signals {
    crate::signals::install().unwrap_or_else(|_| crate::signals::Signals::detached())
}

/// The first connection of `-i` (pgbench's doConnect: a password prompt if the server
/// wants one); `None` when it failed, said on stderr.
fn connect_for_init(
    conn: &options::ConnArgs,
) -> Option<(pgbench_wire::Connection, pgbench_wire::ConnectOptions)> {
    let mut args = conn.connect_args();
    match crate::connect::connect_with_prompt(&mut args) {
        Ok(made) => Some(made),
        Err(e) => {
            logging::error(&e.to_string());
            logging::error("could not create connection for initialization");
            None
        }
    }
}

/// `-i --workload=NAME`: connects as `-i` does and runs the workload's prepare step;
/// after a failure, says what it left.
fn prepare_workload(
    conn: &options::ConnArgs,
    workload: &crate::workload::Configured,
    how: &crate::workload::PrepareOptions,
) -> i32 {
    let Some((main, opts)) = connect_for_init(conn) else {
        return 1;
    };
    match workload.prepare(main, &opts, how) {
        Ok(()) => 0,
        Err(e) => {
            logging::raw(&e.render(logging::progname()));
            logging::info(&workload.incomplete_note());
            1
        }
    }
}

/// Finishes a benchmark: prints the report, the abort line, the `-l` lines lost and
/// the stop's warning, writes the exports, and picks the exit status: 0, or 2 when a
/// client aborted or `--exit-on-abort` stopped the run, 1 when it could not run or an
/// export could not be written, 128 + the signal when one ended a FIFO export's wait.
pub fn finish_bench(
    outcome: Result<RunOutcome, crate::bench::RunError>,
    plan: &crate::bench::plan::BenchPlan,
    argv: &[String],
    dbname: &str,
    stop: &crate::bench::RunStop,
) -> i32 {
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            logging::raw(&e.render());
            return e.exit_status();
        }
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
                let file = export::results_file(result, meta, plan, argv, dbname);
                let errors = write_exports(&plan.export, &file, stop);
                for e in &errors {
                    logging::error(&e.to_string());
                }
                // A signal that ended a FIFO's wait ends the program as it would have.
                let signal = errors.iter().find_map(|e| match e {
                    WriteError::Abandoned { signal, .. } => Some(128 + signal),
                    _ => None,
                });
                if !errors.is_empty() {
                    return signal.unwrap_or(1);
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
