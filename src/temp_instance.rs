//! `--temp-instance`: the one-command way to try pgbench-rs. Starts a throwaway local
//! PostgreSQL cluster (server binaries from PATH or `pg_config --bindir`), initialises
//! the standard tables at scale `-s` (or prepares `--workload`'s tables, as its `-i`
//! does with the same `-s` and `-D` options), runs the scripts' setup files (a `--
//! setup: FILE` header line, or a companion `NAME.setup.sql`), runs the job there,
//! and removes the cluster.
//!
//! The cluster runs with `fsync`, `synchronous_commit` and `full_page_writes` off (what
//! the test clusters use: nothing of it needs to survive a crash), which its opening
//! line says; `--temp-instance-durable` keeps the server's durable defaults instead.

use crate::bench::plan::BenchPlan;
use crate::diagnostic::Diagnostic;
use crate::init::{InitError, InitOptions};
use crate::logging;
use crate::workload::{PrepareError, PrepareOptions, Workload};
use pgbench_cluster::{Cluster, ClusterError, ClusterOptions};
use pgbench_wire::{ConnError, QueryError};

/// Why a temporary instance could not be made ready; the run did not start.
#[derive(Debug, thiserror::Error)]
pub enum TempInstanceError {
    /// The cluster did not start.
    #[error("could not start a temporary instance: {0}")]
    Start(#[from] ClusterError),
    /// Its connection options, or the connection for the setup files, failed.
    #[error("{0}")]
    Connect(#[from] ConnError),
    /// `-i` on it failed.
    #[error("{0}")]
    Init(#[from] InitError),
    /// `-i --workload` on it failed.
    #[error("{0}")]
    Prepare(#[from] PrepareError),
    /// A setup file could not be read.
    #[error("could not read file \"{path}\": {why}")]
    ReadSetup {
        /// The file.
        path: String,
        /// `strerror`'s text.
        why: String,
    },
    /// A setup file's SQL failed.
    #[error("{path}: {error}")]
    Setup {
        /// The file.
        path: String,
        /// The server's error.
        error: QueryError,
    },
}

impl Diagnostic for TempInstanceError {
    /// The lines to print, `progname`'s `error:` lines (an `-i` failure's as pgbench
    /// prints them; a message's own last newline is not doubled, as `logging` does).
    fn render(&self, progname: &str) -> String {
        match self {
            TempInstanceError::Init(e) => e.render(progname),
            TempInstanceError::Prepare(e) => e.render(progname),
            other => {
                let text = other.to_string();
                let text = text.strip_suffix('\n').unwrap_or(&text);
                format!("{progname}: error: {text}\n")
            }
        }
    }
}

/// Which throwaway server: `--temp-instance` or `--temp-instance-durable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TempInstance {
    /// `fsync`, `synchronous_commit` and `full_page_writes` off.
    Fast,
    /// The server's defaults for them (on).
    Durable,
}

/// The settings a durable instance puts back (written after the fast ones, so they win).
const DURABLE: [&str; 3] = ["fsync", "synchronous_commit", "full_page_writes"];

fn start(kind: TempInstance) -> Result<Cluster, TempInstanceError> {
    let (opening, config) = match kind {
        TempInstance::Fast => (
            "starting a temporary PostgreSQL instance (fsync, synchronous_commit and \
             full_page_writes off: not durable; --temp-instance-durable keeps them on)...",
            Vec::new(),
        ),
        TempInstance::Durable => (
            "starting a temporary PostgreSQL instance (durable: fsync, synchronous_commit \
             and full_page_writes on)...",
            DURABLE.map(|k| (k.to_string(), "on".to_string())).to_vec(),
        ),
    };
    logging::info(opening);
    Ok(Cluster::start(ClusterOptions {
        config,
        ..ClusterOptions::default()
    })?)
}

/// Where the throwaway cluster listens. Connection options given on the command line
/// (`-h -p -U`, DBNAME) are for real servers and do not apply.
fn connect_args(cluster: &Cluster) -> pgbench_wire::ConnectArgs {
    pgbench_wire::ConnectArgs {
        host: Some(cluster.socket_dir().display().to_string()),
        port: Some(cluster.port().to_string()),
        user: Some(cluster.user().to_string()),
        password: None,
        dbname: Some("postgres".to_string()),
        fallback_application_name: Some(logging::progname().to_string()),
    }
}

/// The setup files of the scripts (the examples' convention for tables beyond
/// pgbench's own), run once after initialising: a `-- setup: FILE` line in a script's
/// leading comments (FILE relative to the script), else its companion
/// `NAME.setup.sql` if there is one. Each file runs once, in command-line order.
fn setup_files(bench: &BenchPlan) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for ws in &bench.scripts {
        let path = std::path::Path::new(&ws.script.name);
        let declared: Vec<String> = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .take_while(|l| l.trim_start().starts_with("--") || l.trim().is_empty())
            .filter_map(|l| l.trim_start().strip_prefix("--"))
            .filter_map(|l| l.trim().strip_prefix("setup:"))
            // The first word is the file; the rest of the line may explain it.
            .filter_map(|f| f.split_whitespace().next())
            .map(|f| {
                let dir = path.parent().unwrap_or(std::path::Path::new(""));
                dir.join(f).display().to_string()
            })
            .collect();
        let found = if declared.is_empty() {
            ws.script
                .name
                .strip_suffix(".sql")
                .map(|stem| format!("{stem}.setup.sql"))
                .filter(|p| std::path::Path::new(p).is_file())
                .into_iter()
                .collect()
        } else {
            declared
        };
        for f in found {
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }
    files
}

fn run_setup_files(
    opts: &pgbench_wire::ConnectOptions,
    bench: &BenchPlan,
) -> Result<(), TempInstanceError> {
    let files = setup_files(bench);
    if files.is_empty() {
        return Ok(());
    }
    let mut conn = pgbench_wire::Connection::connect(opts)?;
    for path in files {
        logging::info(&format!("running {path}"));
        let sql = match std::fs::read_to_string(&path) {
            Ok(sql) => sql,
            Err(e) => {
                let why = crate::sys::strerror(&e);
                return Err(TempInstanceError::ReadSetup { path, why });
            }
        };
        if let Err(error) = conn.execute(&sql) {
            return Err(TempInstanceError::Setup { path, error });
        }
    }
    Ok(())
}

/// `-i --temp-instance`: initialise on a throwaway cluster (useful to time a load).
pub fn run_init(kind: TempInstance, init: &InitOptions) -> Result<(), TempInstanceError> {
    let cluster = start(kind)?;
    let opts = pgbench_wire::ConnectOptions::from_args(&connect_args(&cluster))?;
    crate::init::run(&opts, init, logging::progname())?;
    Ok(())
}

/// `-i --workload=NAME --temp-instance`: prepare on a throwaway cluster.
pub fn run_prepare(
    kind: TempInstance,
    workload: &dyn Workload,
    how: &PrepareOptions,
) -> Result<(), TempInstanceError> {
    let cluster = start(kind)?;
    let opts = pgbench_wire::ConnectOptions::from_args(&connect_args(&cluster))?;
    workload.prepare(pgbench_wire::Connection::connect(&opts)?, &opts, how)?;
    drop(cluster);
    Ok(())
}

/// How a run's workload is prepared on the throwaway cluster: as its `-i` would with
/// the run's `-s`, `-D` and seed, over as many connections as the cores give each
/// session and its backend one (the cluster shares this machine), at most `-j`.
fn prepare_options(bench: &BenchPlan) -> PrepareOptions {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    PrepareOptions {
        jobs: (cores / 2).clamp(1, bench.settings.threads.max(1)),
        seed: bench.random_seed,
        scale: bench.scale.value,
        quiet: false,
        resumable: Default::default(),
    }
}

/// Whatever `body` does with a throwaway cluster initialised for `bench` (a run's,
/// a sweep's; its `workload`'s tables prepared): where it listens, and the plan to run there. Its outcome, before
/// the cluster is removed.
pub fn on_instance<T>(
    kind: TempInstance,
    bench: &BenchPlan,
    workload: Option<&dyn Workload>,
    body: impl FnOnce(pgbench_wire::ConnectArgs, &BenchPlan) -> T,
) -> Result<T, TempInstanceError> {
    let cluster = start(kind)?;
    let args = connect_args(&cluster);
    let opts = pgbench_wire::ConnectOptions::from_args(&args)?;
    match workload {
        Some(workload) => {
            let main = pgbench_wire::Connection::connect(&opts)?;
            workload.prepare(main, &opts, &prepare_options(bench))?;
        }
        None => {
            let init = InitOptions {
                scale: bench.scale.value,
                ..InitOptions::default()
            };
            crate::init::run(&opts, &init, logging::progname())?;
            run_setup_files(&opts, bench)?;
        }
    }
    // The scale was used to initialise: the run has no reason to warn that it ignores it.
    let mut run = bench.clone();
    run.scale.given = false;
    let outcome = body(args, &run);
    logging::info("removing the temporary instance");
    drop(cluster);
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::options::{interpret, Action, ProcessEnv};

    #[test]
    fn setup_files_come_from_headers_or_companions_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n).display().to_string();
        std::fs::write(p("a.sql"), "-- uses x\n-- setup: x.setup.sql\nSELECT 1;\n").unwrap();
        std::fs::write(p("b.sql"), "-- setup: x.setup.sql (shared)\nSELECT 2;\n").unwrap();
        std::fs::write(p("c.sql"), "SELECT 3;\n").unwrap();
        std::fs::write(p("c.setup.sql"), "CREATE TABLE c();\n").unwrap();
        std::fs::write(p("d.sql"), "SELECT 4;\n-- setup: not-a-header.sql\n").unwrap();
        let args: Vec<String> = ["a.sql", "b.sql", "c.sql", "d.sql"]
            .iter()
            .flat_map(|f| ["-f".to_string(), p(f)])
            .collect();
        let Ok(Action::Bench { plan: bench, .. }) =
            interpret("pgbench-rs", &args, &ProcessEnv).outcome
        else {
            panic!("not a benchmark");
        };
        assert_eq!(
            setup_files(&bench),
            vec![p("x.setup.sql"), p("c.setup.sql")]
        );
    }

    #[test]
    fn errors_are_values_rendered_as_pgbench_error_lines() {
        let e = TempInstanceError::ReadSetup {
            path: "x.sql".into(),
            why: "No such file or directory".into(),
        };
        assert_eq!(
            e.render("pgbench"),
            "pgbench: error: could not read file \"x.sql\": No such file or directory\n"
        );
        let e = TempInstanceError::from(InitError::UnknownStep('x'));
        assert_eq!(
            e.render("pgbench"),
            "pgbench: error: unrecognized initialization step \"x\"\n"
        );
    }
}
