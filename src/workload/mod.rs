//! Workloads beyond pgbench's builtins, chosen with `--workload=NAME`. Each is a
//! generated pgbench script (so every option of a run applies to it unchanged, and
//! `--show-script=NAME` prints it) plus a prepare step for `-i`, configured by `-D`
//! options under the workload's own names. This module is the interface and the
//! registry: a [`WorkloadFamily`] names its workloads and configures one from `-D`;
//! the configured [`Workload`] is everything the command line, the runner, init mode
//! and `--check` ask of it. Each family lives in a folder of its own ([`sysbench`],
//! [`tpcc`]); [`FAMILIES`] lists them. Its part of the results is in the results
//! crate's `workload` module.

mod check;
mod hint;
mod prepare;
pub mod sysbench;
pub mod tpcc;

pub use check::{run_check, CheckError, CheckReport};
pub use prepare::{PrepareError, PrepareOptions};

use crate::bench::observer::RunObserver;
use pgbench_results::QueryMode;
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};
use std::fmt;
use std::sync::Arc;

/// Every family of workloads, in the order `--help` and errors list them. A new
/// workload is a folder beside these and a line here.
pub static FAMILIES: &[&dyn WorkloadFamily] = &[&sysbench::FAMILY, &tpcc::FAMILY];

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

/// A family of workloads: one tool's (sysbench's tests), or a single one (TPC-C).
pub trait WorkloadFamily: Sync {
    /// Its workloads' names, as `--workload` takes them, in the order lists show
    /// them.
    fn names(&self) -> Vec<&'static str>;
    /// How `--help` names the family.
    fn help(&self) -> &'static str;
    /// The workload `name` (one of [`Self::names`]) with its `-D` options applied;
    /// every `-D` must be one of its options.
    fn configure(
        &self,
        name: &'static str,
        defines: &[(String, String)],
    ) -> Result<Arc<dyn Workload>, WorkloadError>;
}

/// A workload by name, not yet configured.
#[derive(Clone, Copy)]
pub struct Chosen {
    family: &'static dyn WorkloadFamily,
    name: &'static str,
}

impl fmt::Debug for Chosen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Chosen({})", self.name)
    }
}

impl Chosen {
    /// Its name, as `--workload` takes it.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The workload with its `-D` options applied (every `-D` must be one of them).
    pub fn configure(
        self,
        defines: &[(String, String)],
    ) -> Result<Arc<dyn Workload>, WorkloadError> {
        self.family.configure(self.name, defines)
    }
}

/// Every workload's name, in the order `--help` and errors list them.
pub fn names() -> Vec<&'static str> {
    FAMILIES.iter().flat_map(|f| f.names()).collect()
}

/// The workload called `name` (exactly).
pub fn find(name: &str) -> Result<Chosen, WorkloadError> {
    FAMILIES
        .iter()
        .find_map(|&family| {
            let name = family.names().into_iter().find(|n| *n == name)?;
            Some(Chosen { family, name })
        })
        .ok_or_else(|| WorkloadError::Unknown {
            name: name.to_string(),
            known: names().join(", "),
        })
}

/// The families as `--help` lists them.
pub fn help_list() -> String {
    let names: Vec<&str> = FAMILIES.iter().map(|f| f.help()).collect();
    names.join(", ")
}

/// What `--tables=N` meant where getopt read it as `--tablespace=N` (sysbench's
/// option, given as a workload's `-D` here).
pub fn tables_option_hint(value: &str) -> String {
    sysbench::tables_option_hint(value)
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

/// How a run of a workload differs from a run of pgbench's scripts, as its tool
/// runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunPolicy {
    /// The query mode a run uses when `-M` is not given (`None`: pgbench's, simple).
    pub query_mode: Option<QueryMode>,
    /// The run goes on after an SQL error (`--continue-on-error`): the failed
    /// transaction is counted and the client goes on.
    pub continue_on_error: bool,
    /// The run keeps latency histograms (its report needs percentiles).
    pub keep_histograms: bool,
    /// No vacuum before the run (pgbench's tables are not there).
    pub skip_vacuum: bool,
}

/// A workload with its options: everything a run, `-i`, `--check`,
/// `--temp-instance` and `--show-script` ask of it. Its `Debug` shows every option
/// (the run id of `--worker` is a digest of the plan's `Debug`).
pub trait Workload: fmt::Debug + Send + Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// How its runs differ from pgbench's.
    fn policy(&self) -> RunPolicy;
    /// The scripts of a run, with their weights.
    fn scripts(&self, ctx: ScriptContext) -> Vec<WorkloadScript>;
    /// What `--show-script=NAME` prints: the script(s) of a run.
    fn script_text(&self, ctx: ScriptContext) -> String;
    /// Variables the scripts need defined before they first run (name, value).
    fn variables(&self) -> Vec<(String, String)>;
    /// What watches a run of it besides its clients, and fills its part of the
    /// result (`pgbench_results::workload`).
    fn observers(&self) -> Vec<Box<dyn RunObserver>>;
    /// `-i --workload=NAME`: creates and fills its tables over `how.jobs`
    /// connections (the first is `main`).
    fn prepare(
        &self,
        main: Connection,
        options: &ConnectOptions,
        how: &PrepareOptions,
    ) -> Result<(), PrepareError>;
    /// After a prepare that failed or was interrupted: what it left.
    fn incomplete_note(&self) -> String;
    /// Before a run: the tables the scripts use are those of a prepare that
    /// completed, else why not and the command that prepares them (with `target`,
    /// the connection options the user gave).
    fn check_tables(&self, conn: &mut Connection, target: &ConnectArgs) -> Result<(), String>;
    /// The scale the report shows, when its tables give it (TPC-C's warehouses).
    fn table_scale(&self, conn: &mut Connection) -> Option<i32>;
    /// `--check`: its report and whether every check held, or why the checks could
    /// not run (`target`: the user's connection options, for the commands a failure
    /// suggests).
    fn check(&self, conn: &mut Connection, target: &ConnectArgs) -> Result<(String, bool), String>;
}

#[cfg(test)]
mod tests;
