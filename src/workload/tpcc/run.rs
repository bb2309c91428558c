//! What a TPC-C run adds around the clients, as two observers of the run
//! ([`crate::bench::observer`]): this process's figures (the new orders its clients
//! committed, the time profile's names), and the [`Monitor`], which watches the
//! measured window on a connection of its own (the server's counts read when the
//! window begins and when the clients are done). The server's counts are the whole
//! run's, so under `--worker` only worker 0's monitor reads them.

use super::monitor::Monitor;
use super::{NEW_ORDER_SCRIPT, PROFILE_NAMES};
use crate::bench::error::RunError;
use crate::bench::observer::{BeforeRun, Notice, RunEnd, RunObserver, Scope, WindowObserver};
use crate::bench::phases::Phases;
use pgbench_results::tpcc::{ServerCounts, TpccResult};
use pgbench_results::RunResult;

/// A TPC-C run's observers, in the order they finish: the counts first, then the
/// server's beside them.
pub fn observers() -> Vec<Box<dyn RunObserver>> {
    vec![
        Box::new(ClientCounts),
        Box::new(WindowObserver::new(Monitor::connect, server_counts)),
    ]
}

/// The new orders this process's clients committed, and the profile's names.
struct ClientCounts;

impl RunObserver for ClientCounts {
    fn scope(&self) -> Scope {
        Scope::ThisProcess
    }

    fn before(&mut self, _: &BeforeRun) -> Result<(), RunError> {
        Ok(())
    }

    fn measure_from(&mut self, _: &Phases) {}

    fn finish(self: Box<Self>, _: &RunEnd, result: &mut RunResult) -> Vec<Notice> {
        result.tpcc = Some(TpccResult {
            server_lost: None,
            new_orders_committed: result
                .scripts
                .get(NEW_ORDER_SCRIPT)
                .map_or(0, |s| s.stats.counts.cnt),
            server: None,
            profile: PROFILE_NAMES
                .iter()
                .enumerate()
                .map(|(i, n)| (i, n.to_string()))
                .collect(),
        });
        Vec::new()
    }
}

/// The monitor's reading, beside the clients' counts. Counts that could not be read
/// are said, and kept as lost: the run then has no NOPM or TPM, and does not end as a
/// success.
fn server_counts(
    read: Result<Option<ServerCounts>, RunError>,
    result: &mut RunResult,
) -> Vec<Notice> {
    let Some(tpcc) = result.tpcc.as_mut() else {
        return Vec::new();
    };
    match read {
        Ok(counts) => {
            tpcc.server = counts;
            Vec::new()
        }
        Err(e) => {
            tpcc.server_lost = Some(e.to_string());
            vec![Notice::error(format!("{e}; the run has no NOPM or TPM"))]
        }
    }
}
