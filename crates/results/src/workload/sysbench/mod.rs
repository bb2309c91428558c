//! What a sysbench-shaped run (`--workload=oltp_*`) keeps in its `RunResult`
//! beyond pgbench's figures: queries by kind as sysbench counts them, its
//! `--percentile` and its tables. Data only: [`report`] renders sysbench's summary
//! from it, [`import`] reads sysbench's output, [`kind`] is its entry in the
//! registry.

pub mod import;
pub mod kind;
pub mod report;

use serde::{Deserialize, Serialize};

/// The key of its section in a results file's `run`.
pub const KEY: &str = "sysbench";

/// Queries by how sysbench's `pgsql` driver counts them: a result with rows is a read,
/// a command that changed rows a write, any other command (`BEGIN`, `COMMIT`, an
/// `UPDATE` of no row) other; each SQL error a transaction survived is an ignored error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueryCounts {
    pub read: i64,
    pub write: i64,
    pub other: i64,
    pub errors: i64,
    /// Connections made again after a loss (`--reconnect`; else 0).
    pub reconnects: i64,
}

impl QueryCounts {
    /// Adds another client's counts.
    pub fn add(&mut self, o: &QueryCounts) {
        self.read += o.read;
        self.write += o.write;
        self.other += o.other;
        self.errors += o.errors;
        self.reconnects += o.reconnects;
    }

    /// Read, write and other queries.
    pub fn total(&self) -> i64 {
        self.read + self.write + self.other
    }
}

/// What the sysbench summary of a run needs beyond pgbench's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SysbenchSummary {
    /// sysbench's `--percentile` (0: disabled).
    pub percentile: u32,
    pub queries: QueryCounts,
    /// sysbench's `--tables` and `--table-size`: what the report shows in place of
    /// pgbench's scaling factor (absent from files written before they were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_size: Option<u32>,
}

impl SysbenchSummary {
    /// Another worker's part added (`pgbench-report merge`): its queries counted with
    /// these. Its `--percentile` and its tables are the run's options, the same in
    /// every worker (the merge's checks compare the options).
    pub fn merge(&mut self, other: &SysbenchSummary) {
        self.queries.add(&other.queries);
    }

    /// Queries per second (reads, writes and other commands, as its summary counts
    /// them) over a measured part of `measured_us`, as sysbench's summary prints it.
    pub fn qps(&self, measured_us: f64) -> Option<f64> {
        let seconds = measured_us / 1e6;
        (seconds > 0.0).then(|| self.queries.total() as f64 / seconds)
    }
}
