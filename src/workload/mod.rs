//! Workloads beyond pgbench's builtins, chosen with `--workload=NAME`. Each is a
//! generated pgbench script (so every option of a run applies to it unchanged, and
//! `--show-script=NAME` prints it) plus a prepare step for `-i`, configured by `-D`
//! options under the workload's own names. This module is the registry: the names,
//! the lookup, and what a configured workload offers the command line, the runner and
//! init mode. Each family of workloads lives in a submodule ([`sysbench`]).

pub mod sysbench;

use pgbench_results::QueryMode;
use pgbench_wire::{ConnectOptions, Connection};

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
}

/// Every workload's name, in the order `--help` and errors list them.
pub fn names() -> Vec<&'static str> {
    sysbench::TESTS.iter().map(|t| t.name()).collect()
}

/// The workload called `name` (exactly).
pub fn find(name: &str) -> Result<Workload, WorkloadError> {
    if let Some(test) = sysbench::TESTS.iter().find(|t| t.name() == name) {
        return Ok(Workload::Sysbench(*test));
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
        }
    }

    /// The workload with its `-D` options applied (every `-D` must be one of them).
    pub fn configure(self, defines: &[(String, String)]) -> Result<Configured, WorkloadError> {
        match self {
            Workload::Sysbench(t) => Ok(Configured::Sysbench(sysbench::Config::new(t, defines)?)),
        }
    }
}

/// What the generated script may depend on besides the workload's options.
#[derive(Debug, Clone, Copy)]
pub struct ScriptContext {
    pub query_mode: QueryMode,
    /// `-c` (sysbench's `--threads`, for workloads that split the table by client).
    pub clients: usize,
}

/// A workload with its options.
#[derive(Debug, Clone, PartialEq)]
pub enum Configured {
    Sysbench(sysbench::Config),
}

impl Configured {
    /// The workload's name.
    pub fn name(&self) -> &'static str {
        match self {
            Configured::Sysbench(c) => c.test.name(),
        }
    }

    /// What the report shows as the transaction type.
    pub fn description(&self) -> String {
        format!("<workload: {}>", self.name())
    }

    /// The pgbench script of one transaction (sysbench's event).
    pub fn script_text(&self, ctx: ScriptContext) -> String {
        match self {
            Configured::Sysbench(c) => sysbench::script::generate(c, ctx),
        }
    }

    /// Variables the script needs defined before it first runs (name, value).
    pub fn variables(&self) -> Vec<(String, String)> {
        match self {
            Configured::Sysbench(c) => c.variables(),
        }
    }

    /// `-i --workload=NAME`: creates and fills the workload's tables over `jobs`
    /// connections (the first is `main`).
    pub fn prepare(
        &self,
        main: Connection,
        options: &ConnectOptions,
        jobs: usize,
        seed: u64,
    ) -> Result<(), PrepareError> {
        match self {
            Configured::Sysbench(c) => sysbench::prepare::run(c, main, options, jobs, seed),
        }
    }

    /// Before a run: the tables the script uses exist, else how to prepare them.
    pub fn check_tables(&self, conn: &mut Connection) -> Result<(), String> {
        match self {
            Configured::Sysbench(c) => sysbench::prepare::check_tables(c, conn),
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
}
