//! The interface a workload family implements, and the types it shares with the
//! command line, init and the runner: what the families import (the registry in
//! [`super`] imports the families, so they do not import it). The run-side part of a
//! configured workload is the engine's [`RunWorkload`], which [`Workload`] extends.

use super::prepare::{PrepareError, PrepareOptions};
pub use crate::bench::RunWorkload;
use pgbench_results::QueryMode;
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};
use std::sync::Arc;

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
    /// What pgbench's option `--OPTION=VALUE` meant where a user of the family's tool
    /// typed its own option of that name (sysbench's `--tables=N`, which getopt reads
    /// as `--tablespace=N`); `None` when the family has no such option.
    fn option_hint(&self, option: &str, value: &str) -> Option<String> {
        let _ = (option, value);
        None
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
    /// Under `-M prepared` its statements are prepared when a client connects, all
    /// in one round trip, before the clock starts (sysbench prepares every
    /// statement in its threads' init), not each at its first execution as
    /// pgbench prepares.
    pub prepare_on_connect: bool,
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

/// A workload with its options: everything the command line, `-i`, `--check`,
/// `--temp-instance` and `--show-script` ask of it, beyond what a run asks
/// ([`RunWorkload`]: its name, observers, tables and scale).
pub trait Workload: RunWorkload {
    /// How its runs differ from pgbench's.
    fn policy(&self) -> RunPolicy;
    /// The scripts of a run, with their weights.
    fn scripts(&self, ctx: ScriptContext) -> Vec<WorkloadScript>;
    /// What `--show-script=NAME` prints: the script(s) of a run.
    fn script_text(&self, ctx: ScriptContext) -> String;
    /// Variables the scripts need defined before they first run (name, value).
    fn variables(&self) -> Vec<(String, String)>;
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
    /// `--check`: its report and whether every check held, or why the checks could
    /// not run (`target`: the user's connection options, for the commands a failure
    /// suggests).
    fn check(&self, conn: &mut Connection, target: &ConnectArgs) -> Result<(String, bool), String>;
}
