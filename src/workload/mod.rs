//! Workloads beyond pgbench's builtins, chosen with `--workload=NAME`. Each is a
//! generated pgbench script (so every option of a run applies to it unchanged, and
//! `--show-script=NAME` prints it) plus a prepare step for `-i`, configured by `-D`
//! options under the workload's own names. This module is the registry: the names,
//! the lookup, and what a configured workload offers the command line, the runner and
//! init mode. Each family of workloads lives in a submodule ([`sysbench`], [`tpcc`]).

mod hint;
pub mod sysbench;
pub mod tpcc;

use crate::diagnostic::Diagnostic;
use pgbench_results::QueryMode;
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};

/// Why a workload cannot be used as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    #[error("unknown workload \"{name}\"; known workloads: {known}")]
    Unknown { name: String, known: String },
    #[error("unknown option \"{name}\" for workload {workload}; its options: {known}")]
    UnknownOption {
        workload: &'static str,
        name: String,
        known: String,
    },
    #[error("invalid value \"{value}\" for option {name} of workload {workload}: {why}")]
    InvalidValue {
        workload: &'static str,
        name: String,
        value: String,
        why: String,
    },
    #[error("workload {workload}: {message}")]
    Unsupported {
        workload: &'static str,
        message: String,
    },
}

/// A workload by name, not yet configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    Sysbench(sysbench::Test),
    /// TPC-C as HammerDB runs it on PostgreSQL (TPROC-C).
    Tpcc,
}

/// Every workload's name, in the order `--help` and errors list them.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&str> = sysbench::TESTS.iter().map(|t| t.name()).collect();
    names.push(tpcc::NAME);
    names
}

/// The workload called `name` (exactly).
pub fn find(name: &str) -> Result<Workload, WorkloadError> {
    if let Some(test) = sysbench::TESTS.iter().find(|t| t.name() == name) {
        return Ok(Workload::Sysbench(*test));
    }
    if name == tpcc::NAME {
        return Ok(Workload::Tpcc);
    }
    Err(WorkloadError::Unknown {
        name: name.to_string(),
        known: names().join(", "),
    })
}

impl Workload {
    /// Its name, as `--workload` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Sysbench(t) => t.name(),
            Workload::Tpcc => tpcc::NAME,
        }
    }

    /// The workload with its `-D` options applied (every `-D` must be one of them).
    pub fn configure(self, defines: &[(String, String)]) -> Result<Configured, WorkloadError> {
        match self {
            Workload::Sysbench(t) => Ok(Configured::Sysbench(sysbench::Config::new(t, defines)?)),
            Workload::Tpcc => Ok(Configured::Tpcc(tpcc::Config::new(defines)?)),
        }
    }
}

/// What the generated script may depend on besides the workload's options.
#[derive(Debug, Clone, Copy)]
pub struct ScriptContext {
    pub query_mode: QueryMode,
    /// `-c` (sysbench's `--threads`, for workloads that split the table by client).
    pub clients: usize,
    /// `--worker=I/N`'s N (1 without it): the run's clients are `clients * workers`.
    pub workers: usize,
}

/// A workload with its options.
#[derive(Debug, Clone, PartialEq)]
pub enum Configured {
    Sysbench(sysbench::Config),
    Tpcc(tpcc::Config),
}

/// One script of a workload's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadScript {
    pub name: String,
    pub description: String,
    pub text: String,
    pub weight: i64,
    /// Its `\sleep`s are pauses between transactions (TPC-C's keying and thinking):
    /// outside the transaction's latency, and cut short at the end of `-T`.
    pub untimed_sleeps: bool,
}

/// How `-i --workload=NAME` loads.
#[derive(Debug, Clone, Copy)]
pub struct PrepareOptions {
    /// `-j`: connections to load over.
    pub jobs: usize,
    /// `--random-seed` (sysbench's generated values).
    pub seed: u64,
    /// `-s` (TPC-C's warehouses).
    pub scale: i32,
    /// `-q`: progress lines every 5 s.
    pub quiet: bool,
}

impl Configured {
    /// The workload's name.
    pub fn name(&self) -> &'static str {
        match self {
            Configured::Sysbench(c) => c.test.name(),
            Configured::Tpcc(_) => tpcc::NAME,
        }
    }

    /// What the report shows as the transaction type.
    pub fn description(&self) -> String {
        format!("<workload: {}>", self.name())
    }

    /// What `--show-script=NAME` prints: the script(s) of a run.
    pub fn script_text(&self, ctx: ScriptContext) -> String {
        match self {
            Configured::Sysbench(c) => sysbench::script::generate(c, ctx),
            Configured::Tpcc(c) => c.show_scripts(ctx),
        }
    }

    /// The scripts of a run, with their weights.
    pub fn scripts(&self, ctx: ScriptContext) -> Vec<WorkloadScript> {
        match self {
            Configured::Sysbench(_) => vec![WorkloadScript {
                name: self.name().to_string(),
                description: self.description(),
                text: self.script_text(ctx),
                weight: 1,
                untimed_sleeps: false,
            }],
            Configured::Tpcc(c) => c.scripts(ctx),
        }
    }

    /// Variables the script needs defined before it first runs (name, value).
    pub fn variables(&self) -> Vec<(String, String)> {
        match self {
            Configured::Sysbench(c) => c.variables(),
            Configured::Tpcc(c) => c.variables(),
        }
    }

    /// What watches a run of the workload besides its clients and fills its part of
    /// the result (TPC-C's counts and its monitor of the server's, sysbench's summary
    /// from the clients' statements by kind).
    pub fn observers(&self) -> Vec<Box<dyn crate::bench::observer::RunObserver>> {
        match self {
            Configured::Sysbench(c) => vec![Box::new(sysbench::run::Summary::new(c))],
            Configured::Tpcc(c) => tpcc::run::observers(c),
        }
    }

    /// Whether the workload runs under `--continue-on-error`: sysbench rolls back and
    /// ignores the errors concurrency brings (a duplicate key after a concurrent
    /// delete and insert, deadlocks), so they are failures, not aborts; so do
    /// HammerDB's virtual users (TPC-C's mode `hammerdb`).
    pub fn continues_on_error(&self) -> bool {
        match self {
            Configured::Sysbench(_) => true,
            Configured::Tpcc(c) => c.continues_on_error(),
        }
    }

    /// The query mode a run uses when `-M` is not given (`None`: pgbench's, simple):
    /// its tool's. sysbench's `--db-ps-mode=auto` (its default) and HammerDB's driver
    /// (`pg_exec_prepared`) prepare each statement once per connection; HammerDB's
    /// CALLs of its procedures are plain text.
    pub fn default_query_mode(&self) -> Option<QueryMode> {
        match self {
            Configured::Sysbench(_) => Some(QueryMode::Prepared),
            Configured::Tpcc(c) => Some(c.default_query_mode()),
        }
    }

    /// `-i --workload=NAME`: creates and fills the workload's tables over `jobs`
    /// connections (the first is `main`).
    pub fn prepare(
        &self,
        main: Connection,
        options: &ConnectOptions,
        how: &PrepareOptions,
    ) -> Result<(), PrepareError> {
        match self {
            Configured::Sysbench(c) => sysbench::prepare::run(c, main, options, how.jobs, how.seed),
            Configured::Tpcc(c) => tpcc::init::prepare(c, main, options, how),
        }
    }

    /// Before a run: the tables the script uses are those of a prepare that
    /// completed, else why not and the command that prepares them (with `target`,
    /// the connection options the user gave).
    pub fn check_tables(&self, conn: &mut Connection, target: &ConnectArgs) -> Result<(), String> {
        match self {
            Configured::Sysbench(c) => sysbench::prepare::check_tables(c, conn, target),
            Configured::Tpcc(c) => c.check_tables(conn, target),
        }
    }

    /// After a prepare that failed or was interrupted: what it left.
    pub fn incomplete_note(&self) -> String {
        match self {
            Configured::Sysbench(_) => format!(
                "the {} prepare did not complete: each table is there whole or not at all, \
                 and a run refuses missing ones",
                self.name()
            ),
            Configured::Tpcc(_) => "the tpcc load did not complete: a run and --check refuse \
                 its tables until -i --workload=tpcc completes"
                .to_string(),
        }
    }

    /// The scale the report shows, when the workload's tables give it (TPC-C's
    /// warehouses).
    pub fn table_scale(&self, conn: &mut Connection) -> Option<i32> {
        match self {
            Configured::Sysbench(_) => None,
            Configured::Tpcc(_) => tpcc::monitor::warehouses(conn).ok(),
        }
    }
}

/// A failure of a workload's prepare step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    #[error("could not create connection for initialization: {0}")]
    Connect(String),
    #[error("query failed: {message}")]
    Query { message: String, sql: String },
    #[error("COPY into {table} failed: {message}")]
    Copy { table: String, message: String },
    #[error("initialization stopped by a signal")]
    Interrupted,
    /// A loading connection stopped because another one failed (whose error is
    /// unknown: its thread panicked).
    #[error("initialization aborted after a failure on another connection")]
    Aborted,
}

impl Diagnostic for PrepareError {
    /// The lines to print, with `progname`'s prefix (a failed statement's text as
    /// pgbench's `detail:`).
    fn render(&self, progname: &str) -> String {
        let text = self.to_string();
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let mut out = format!("{progname}: error: {text}\n");
        if let PrepareError::Query { sql, .. } = self {
            out.push_str(&format!("{progname}: detail: Query was: {sql}\n"));
        }
        out
    }
}

/// What `--workload=NAME --check` found: its report (for stdout) and whether every
/// check held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    pub workload: &'static str,
    pub text: String,
    pub all_hold: bool,
}

impl CheckReport {
    /// A check that failed is an error, said after the report.
    pub fn verdict(&self) -> Result<(), CheckError> {
        if self.all_hold {
            Ok(())
        } else {
            Err(CheckError::Failed(self.workload))
        }
    }
}

/// Why `--check` did not pass (exit status 1).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{0}")]
    Connect(#[from] pgbench_wire::ConnError),
    /// The checks could not run (a query failed, the tables are not a complete load).
    #[error("{0}")]
    Run(String),
    /// They ran, and one failed (the report says which).
    #[error("the {0} check failed")]
    Failed(&'static str),
}

impl Diagnostic for CheckError {
    fn render(&self, progname: &str) -> String {
        crate::logging::line(progname, crate::logging::Level::Error, &self.to_string())
    }
}

/// `--workload=NAME --check`: the workload's checks of its tables (and TPC-C's
/// consistency conditions), or why they could not run.
pub fn run_check(workload: &Configured, args: &ConnectArgs) -> Result<CheckReport, CheckError> {
    let mut args = args.clone();
    let (mut conn, _) = crate::connect::connect_with_prompt(&mut args)?;
    // The command a failure suggests names the user's options, not the prompt's
    // password.
    args.password = None;
    let checked = match workload {
        Configured::Sysbench(c) => sysbench::check::check(c, &mut conn, &args),
        Configured::Tpcc(c) => tpcc::check::check(c, &mut conn, &args),
    };
    let (text, all_hold) = checked.map_err(CheckError::Run)?;
    Ok(CheckReport {
        workload: workload.name(),
        text,
        all_hold,
    })
}
