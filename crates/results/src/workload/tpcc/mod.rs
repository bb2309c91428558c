//! What a TPC-C run (`--workload=tpcc`) keeps in its `RunResult`:
//! the new orders its clients committed, the server's counts over the measured part,
//! and the names of the time profile; and the NOPM and TPM its summary adds. Data
//! only: [`report`] renders HammerDB's lines from it, [`import`] reads HammerDB's
//! output, [`kind`] is its entry in the registry.

pub mod import;
pub mod kind;
pub mod report;

use super::WorkloadResult;
use serde::{Deserialize, Serialize};

/// The key of its section in a results file's `run`.
pub const KEY: &str = "tpcc";

/// What the server counted between the start and the end of the measured part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCounts {
    /// `sum(xact_commit + xact_rollback)` of `pg_stat_database`: every database's.
    pub transactions: i64,
    /// `sum(d_next_o_id)` of `district`: the new orders committed.
    pub new_orders: i64,
    /// The run's connections still open when the end was counted (waited for up to
    /// 2 s): what they commit after it is not in the counts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub backends_left: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// A TPC-C run's own figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TpccResult {
    /// New orders this process's clients committed in the measured part.
    pub new_orders_committed: i64,
    /// The server's counts (`None` for a `--worker` other than 0: worker 0 measures
    /// the whole run's, and a merge adds them up once).
    pub server: Option<ServerCounts>,
    /// The script of each transaction in the run's scripts, with its name in the
    /// time profile (the two new-order scripts share one).
    pub profile: Vec<(usize, String)>,
    /// Why the server's counts could not be read, when this process was to read
    /// them: the run has no NOPM or TPM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_lost: Option<String>,
    /// How the time profile is printed (`-D timeprofile`; files written before it
    /// was chosen print the table).
    #[serde(default, skip_serializing_if = "ProfileLayout::is_table")]
    pub layout: ProfileLayout,
}

/// The time profile's layout after the result line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProfileLayout {
    /// pgbench-rs's table: a line per transaction, latencies in ms.
    #[default]
    Table,
    /// HammerDB 6's `xtprof` summary (`>>>>> PROC: NEWORD`, `CALLS: ...`), which
    /// scripts written for HammerDB's `hdbxtprofile.log` parse.
    Xtprof,
    /// No time profile.
    None,
}

impl ProfileLayout {
    pub fn is_table(&self) -> bool {
        *self == ProfileLayout::Table
    }
}

impl TpccResult {
    /// The TPC-C part of a run's result, if it is a TPC-C run's.
    pub fn of(w: Option<&WorkloadResult>) -> Option<&TpccResult> {
        match w? {
            WorkloadResult::Tpcc(t) => Some(t),
            _ => None,
        }
    }

    /// The same, to change.
    pub fn of_mut(w: Option<&mut WorkloadResult>) -> Option<&mut TpccResult> {
        match w? {
            WorkloadResult::Tpcc(t) => Some(t),
            _ => None,
        }
    }

    /// NOPM and TPM over `minutes`, when the server's counts are there.
    pub fn per_minute(&self, minutes: f64) -> Option<(i64, i64)> {
        let s = self.server?;
        (minutes > 0.0).then(|| {
            (
                (s.new_orders as f64 / minutes).round() as i64,
                (s.transactions as f64 / minutes).round() as i64,
            )
        })
    }

    /// Its summary's figures over a measured part of `measured_us`.
    pub fn summary(&self, measured_us: f64) -> SummaryFigures {
        let per_minute = self.per_minute(measured_us / 60e6);
        SummaryFigures {
            nopm: per_minute.map(|(n, _)| n),
            tpm: per_minute.map(|(_, t)| t),
        }
    }

    /// Another worker's figures added (`pgbench-report merge`).
    pub fn merge(&mut self, other: &TpccResult) {
        self.new_orders_committed += other.new_orders_committed;
        self.server = match (self.server, other.server) {
            (Some(a), Some(b)) => Some(ServerCounts {
                transactions: a.transactions + b.transactions,
                new_orders: a.new_orders + b.new_orders,
                backends_left: a.backends_left + b.backends_left,
            }),
            (a, b) => a.or(b),
        };
        if self.server_lost.is_none() {
            self.server_lost.clone_from(&other.server_lost);
        }
    }
}

/// HammerDB's NOPM and TPM (new orders and server transactions per measured minute):
/// what a TPC-C run adds to its summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SummaryFigures {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm: Option<i64>,
}
