//! pgbench-rs's run history: every run's results file kept in a store, with the
//! figures people filter and plot indexed beside it, and what is computed over them.
//!
//! - [`store`]: [`Store`], a SQLite file (the embedded default) or a team's shared
//!   PostgreSQL database (schema `pgbench_rs_history`, made on first use); versioned
//!   migrations; record, list, get, series, rm;
//! - [`environment`]: what a run ran on ([`Environment`]: the client machine, the
//!   server's version, non-default settings, identity and managed service);
//! - [`figures`]: the indexed figures of a results file and the [`Metric`]s;
//! - [`changepoint`], [`regressions`]: change points in each series of comparable
//!   runs, and which of them made a figure worse;
//! - [`diff`]: what differed between two runs' environments beside the figures that
//!   moved;
//! - [`export`], [`trend`]: the runs as JSON or CSV, a metric's trend as one
//!   self-contained HTML page;
//! - [`time`]: instants as the store keeps them.
//!
//! The API a benchmark run records through (a failure is the caller's warning, never
//! the run's end, so every error names the store and says what happened):
//!
//! ```no_run
//! use pgbench_history::{Environment, RecordInput, Store};
//! # fn run(doc: &pgbench_results::ResultsFile, conn: &mut pgbench_wire::Connection)
//! # -> Result<(), pgbench_history::HistoryError> {
//! let mut store = Store::open_default()?; // or Store::open("ci.sqlite" / "postgresql://...")
//! let environment = Environment {
//!     client: Some(Environment::client("pgbench-rs 0.1.0")),
//!     server: Some(Environment::server(conn)),
//! };
//! let id = store.record(doc, RecordInput {
//!     tags: vec![("branch".into(), "main".into())],
//!     command_line: std::env::args().collect(),
//!     environment,
//! })?;
//! println!("recorded as run {id}");
//! # Ok(()) }
//! ```

pub mod changepoint;
pub mod diff;
pub mod environment;
mod error;
pub mod export;
pub mod figures;
pub mod regressions;
pub mod store;
pub mod time;
pub mod trend;

pub use environment::{ClientFacts, Environment, ServerFacts, Setting};
pub use error::HistoryError;
pub use figures::Metric;
pub use store::spec::{default_store, StoreSpec};
pub use store::{Filter, Point, RecordInput, RunRow, Store, StoredRun};

use serde::{Deserialize, Serialize};

/// A stored run's number in its store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Its own Display, so widths and alignment apply.
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::str::FromStr for RunId {
    type Err = HistoryError;

    fn from_str(s: &str) -> Result<RunId, HistoryError> {
        s.parse()
            .ok()
            .filter(|n: &i64| *n > 0)
            .map(RunId)
            .ok_or_else(|| {
                HistoryError::Invalid(format!("\"{s}\" is not a run id (a number, from list)"))
            })
    }
}

#[cfg(test)]
mod tests;
