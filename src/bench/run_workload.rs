//! What the engine asks of a `--workload` ([`RunWorkload`]): the host owns the
//! interface it calls, so the workloads (`crate::workload`) import `bench` and `bench`
//! imports none of them. The rest of a workload (its scripts, options, prepare,
//! `--check`) is the command line's and init's business, in `crate::workload`.

use super::observer::RunObserver;
use pgbench_wire::{ConnectArgs, Connection};
use std::fmt;

/// A configured workload as a run sees it. Its `Debug` shows every option (the run id
/// of `--worker` is a digest of the plan's `Debug`).
pub trait RunWorkload: fmt::Debug + Send + Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// What watches a run of it besides its clients, and fills its part of the
    /// result (`pgbench_results::workload`).
    fn observers(&self) -> Vec<Box<dyn RunObserver>>;
    /// Before a run: the tables the scripts use are those of a prepare that
    /// completed, else why not and the command that prepares them (with `target`,
    /// the connection options the user gave).
    fn check_tables(&self, conn: &mut Connection, target: &ConnectArgs) -> Result<(), String>;
    /// The scale the report shows, when its tables give it (TPC-C's warehouses).
    fn table_scale(&self, conn: &mut Connection) -> Option<i32>;
    /// After the tables passed their check: what of the prepared tables
    /// the run leaves unused (sysbench's tables beyond `-D tables`), as warnings
    /// printed before the run: a run told other sizes than were prepared measures
    /// another load than the user meant.
    fn unused_tables(&self, conn: &mut Connection) -> Vec<String> {
        let _ = conn;
        Vec::new()
    }
}
