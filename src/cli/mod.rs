//! The command line: what `main` calls. Parses arguments as pgbench does
//! ([`args`], [`options`]) and runs the chosen mode, a run or a sweep in a
//! [`crate::session`]; a mode's failure is returned as its error's
//! [`crate::diagnostic::Diagnostic`], which `main` reports.

pub mod args;
mod error;
pub mod export;
pub mod help;
pub mod option_table;
pub mod options;

use crate::bench::plan::BenchPlan;
use crate::bench::RunOutcome;
use crate::capacity::plan::CapacityPlan;
use crate::diagnostic;
pub use crate::diagnostic::{Exit, ExitStatus};
use crate::logging;
use crate::session::{finish, CommandLine, Session, Target};
pub use error::CliError;
use options::{Action, ProcessEnv};
use pgbench_results::destination::{self, WriteError};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

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
            Ok(ExitStatus::Ok)
        }
        Action::Version => {
            let _ = std::io::stdout().write_all(help::version_text().as_bytes());
            Ok(ExitStatus::Ok)
        }
        Action::PrintAndExit(text) => {
            logging::raw(&text);
            Ok(ExitStatus::Ok)
        }
        Action::Init {
            conn,
            init,
            temp_instance: Some(kind),
            metrics,
        } => {
            let endpoint = load_endpoint(metrics.as_ref())?;
            warn_ignored_by_temp_instance(&conn);
            crate::temp_instance::run_init(kind, &init)?;
            linger(endpoint, None);
            Ok(ExitStatus::Ok)
        }
        Action::Init {
            conn,
            init,
            temp_instance: None,
            metrics,
        } => {
            let signals = signals_for_init();
            let endpoint = load_endpoint(metrics.as_ref())?;
            let ctrl_c = crate::init::interrupt::attach(&signals);
            let (main, opts) = connect_for_init(&conn)?;
            crate::init::run_on(main, &opts, &init, logging::progname())?;
            drop(ctrl_c);
            linger(endpoint, Some(&signals));
            Ok(ExitStatus::Ok)
        }
        Action::Prepare {
            conn,
            workload,
            how,
            temp_instance,
            metrics,
        } => {
            // A throwaway cluster's prepare leaves the signals their default actions.
            let signals = temp_instance.is_none().then(signals_for_init);
            let endpoint = load_endpoint(metrics.as_ref())?;
            let status =
                prepare_workload(&conn, &*workload, &how, temp_instance, signals.as_ref())?;
            linger(endpoint, signals.as_ref());
            Ok(status)
        }
        Action::CheckTables { conn } => {
            let report = crate::workload::run_table_check(&conn.connect_args())?;
            let _ = std::io::stdout().lock().write_all(report.text.as_bytes());
            report.verdict()?;
            Ok(ExitStatus::Ok)
        }
        Action::CheckWorkload { conn, workload } => {
            let report = crate::workload::run_check(&*workload, &conn.connect_args())?;
            let _ = std::io::stdout().lock().write_all(report.text.as_bytes());
            report.verdict()?;
            Ok(ExitStatus::Ok)
        }
        Action::Bench {
            conn,
            plan,
            temp_instance,
            workload,
            history,
            export,
        } => {
            check_exports(&export).map_err(CliError::Export)?;
            // Before any thread: a run's signals are its own from the start.
            let signals = install_signals()?;
            run_bench(
                &conn,
                &plan,
                target(&conn, temp_instance, workload),
                (argv, history.as_ref(), &export),
                &signals,
            )
        }
        Action::Sweep {
            conn,
            base,
            capacity,
            temp_instance,
            workload,
            history,
            export,
        } => {
            check_exports(&export).map_err(CliError::Export)?;
            let signals = install_signals()?;
            if temp_instance.is_some() {
                warn_ignored_by_temp_instance(&conn);
            }
            let (options, digests) = recorders(Some(&capacity));
            let command_line = CommandLine {
                argv,
                options: &options,
                worker_digests: &digests,
                history: history.as_ref(),
                export: &export,
            };
            crate::capacity::runner::run(
                target(&conn, temp_instance, workload),
                &base,
                &capacity,
                &command_line,
                &signals,
            )
        }
    }
}

/// The process's signal handling for a run, installed before any thread starts.
fn install_signals() -> Result<crate::signals::Signals, crate::bench::RunError> {
    crate::signals::install()
        .map_err(|e| crate::bench::RunError::SpawnThread(crate::sys::strerror(&e)))
}

/// Benchmarking mode: the session around one run ([`crate::session`]): the metrics
/// endpoint (bound before anything connects), the run on the server or a temporary
/// instance, the report and results files, then the endpoint's linger. The run's
/// error is reported before the linger, as the report is printed before it.
fn run_bench(
    conn: &options::ConnArgs,
    plan: &BenchPlan,
    target: Target,
    (argv, history, export): (
        &[String],
        Option<&crate::session::history::HistoryPlan>,
        &crate::session::Export,
    ),
    signals: &crate::signals::Signals,
) -> Exit {
    // The run's, until the report is out and the results files are written.
    let stop = crate::bench::RunStop::new();
    stop.will_write(export.paths());
    let session = Session::open(signals, plan, plan.live_plan(), stop.clone())?;
    let live = session.endpoint().and_then(crate::metrics::Endpoint::live);
    let env = crate::bench::RunEnv::process(live, Arc::clone(&stop));
    if target.temp_instance.is_some() {
        warn_ignored_by_temp_instance(conn);
    }
    let (options, digests) = recorders(None);
    let command_line = CommandLine {
        argv,
        options: &options,
        worker_digests: &digests,
        history,
        export,
    };
    // A run stopped by a signal ends at once, without the linger.
    let mut interrupted = false;
    let status = session
        .on_target(target, plan, |args, run, dbname| {
            // Kept for the history's look at the server after the run.
            let outcome = crate::bench::run(&env, args.clone(), run);
            interrupted = matches!(
                &outcome,
                Ok(RunOutcome::Completed {
                    stopped: Some(crate::bench::control::StopCause::Signal(_)),
                    ..
                })
            );
            // The plan as the command line gave it (a throwaway instance's run only
            // leaves out the scale's warning).
            finish::finish_run(outcome, plan, &command_line, (&args, dbname), &stop)
        })
        .unwrap_or_else(|e| diagnostic::report(&e));
    // A signal after the run, while its report and results files were written, went
    // to the run's handler: no linger then either.
    session.close(interrupted || stop.signalled());
    Ok(status)
}

/// Where the runs go: the command line's server, or a throwaway one.
fn target(
    conn: &options::ConnArgs,
    temp_instance: Option<crate::temp_instance::TempInstance>,
    workload: Option<Arc<dyn crate::workload::Workload>>,
) -> Target {
    Target {
        args: conn.connect_args(),
        dbname: conn.dbname.clone(),
        temp_instance,
        workload,
    }
}

/// What the results file records of a plan, and the workers' option digests, read
/// from [`option_table::OPTIONS`] with the sweep or search around the plan, if any.
#[allow(clippy::type_complexity)]
fn recorders(
    capacity: Option<&CapacityPlan>,
) -> (
    impl Fn(&BenchPlan, &str) -> BTreeMap<String, Value> + '_,
    impl Fn(&BenchPlan) -> String + '_,
) {
    (
        move |plan: &BenchPlan, dbname: &str| {
            export::effective_options(&option_table::Planned { plan, capacity }, dbname)
        },
        move |plan: &BenchPlan| {
            option_table::worker_digests(&option_table::Planned { plan, capacity })
        },
    )
}

/// The process's signal handling for `-i`: where no thread can be made for it, Ctrl-C
/// keeps its default action (the process ends at once, without the cancels): `-i`
/// itself needs no other thread, as pgbench's needs none, so it goes on.
fn signals_for_init() -> crate::signals::Signals {
    crate::signals::install().unwrap_or_else(|_| crate::signals::Signals::detached())
}

/// `-i` under `--metrics-listen`: the endpoint bound before anything connects (a port
/// in use ends the mode first), serving the load's progress.
fn load_endpoint(
    metrics: Option<&crate::metrics::MetricsPlan>,
) -> Result<Option<crate::metrics::Endpoint>, CliError> {
    crate::metrics::start_load(metrics).map_err(CliError::Metrics)
}

/// After a load that completed: the endpoint serves its final values for the linger,
/// which SIGINT or SIGTERM ends at once, the exit status the load's (a failed load
/// ends without it, as a run stopped does). `signals`: the load's, else (a throwaway
/// cluster's load, or a workload's prepare, which leave the signals' default actions
/// during the load) installed now.
fn linger(endpoint: Option<crate::metrics::Endpoint>, signals: Option<&crate::signals::Signals>) {
    let Some(e) = endpoint else {
        return;
    };
    crate::metrics::load::step(crate::metrics::load::DONE);
    let installed;
    let signals = match signals {
        Some(s) => s,
        None => {
            installed = signals_for_init();
            &installed
        }
    };
    let _lingering = signals.attach(e.linger_stop());
    e.linger();
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
/// runs the workload's prepare step, Ctrl-C cancelling it through `signals` (the
/// user's server only); after a failure on the user's server, says what it left.
fn prepare_workload(
    conn: &options::ConnArgs,
    workload: &dyn crate::workload::Workload,
    how: &crate::workload::PrepareOptions,
    temp_instance: Option<crate::temp_instance::TempInstance>,
    signals: Option<&crate::signals::Signals>,
) -> Exit {
    if let Some(kind) = temp_instance {
        warn_ignored_by_temp_instance(conn);
        crate::temp_instance::run_prepare(kind, workload, how)?;
        return Ok(ExitStatus::Ok);
    }
    let _ctrl_c = signals.map(crate::init::interrupt::attach);
    let (main, opts) = connect_for_init(conn)?;
    workload
        .prepare(main, &opts, how)
        .map_err(|error| CliError::Prepare {
            error,
            incomplete: workload.incomplete_note(),
        })?;
    Ok(ExitStatus::Ok)
}

/// Tries the destinations of `--export-json` and `--export-html` before the run, as
/// pgbench opens its `-l` files before the clients start.
fn check_exports(export: &crate::session::Export) -> Result<(), WriteError> {
    for path in [&export.json, &export.html].into_iter().flatten() {
        destination::check(path)?;
    }
    Ok(())
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
