//! What a TPC-C run adds around the clients, as two observers of the run
//! ([`crate::bench::observer`]): this process's figures (the new orders its clients
//! committed, the time profile's names), and the [`Monitor`], which watches the
//! measured window on a connection of its own (the server's counts read when the
//! window begins and when the clients are done), then, with `-D vacuum=1`, a third
//! that runs HammerDB's CHECKPOINT and VACUUM after those counts. The server's counts
//! are the whole run's, so under `--worker` only worker 0's monitor reads them (and
//! only worker 0 vacuums).

use super::monitor::Monitor;
use super::{Config, NEW_ORDER_SCRIPT};
use crate::bench::error::RunError;
use crate::bench::observer::{BeforeRun, Notice, RunEnd, RunObserver, Scope, WindowObserver};
use crate::bench::phases::Phases;
use pgbench_results::workload::tpcc::{ServerCounts, TpccResult};
use pgbench_results::workload::WorkloadResult;
use pgbench_results::RunResult;
use pgbench_wire::ConnectOptions;

/// A TPC-C run's observers, in the order they finish: the counts first, then the
/// server's beside them, then `-D vacuum=1`'s vacuum.
pub fn observers(config: &Config) -> Vec<Box<dyn RunObserver>> {
    let mut all: Vec<Box<dyn RunObserver>> = vec![
        Box::new(ClientCounts(config.clone())),
        Box::new(WindowObserver::new(Monitor::connect, server_counts)),
    ];
    if config.vacuum {
        all.push(Box::new(Vacuum(None)));
    }
    all
}

/// The new orders this process's clients committed, and the profile's names and
/// layout (the workload's options).
struct ClientCounts(Config);

impl RunObserver for ClientCounts {
    fn scope(&self) -> Scope {
        Scope::ThisProcess
    }

    fn before(&mut self, _: &BeforeRun) -> Result<(), RunError> {
        Ok(())
    }

    fn measure_from(&mut self, _: &Phases) {}

    fn finish(self: Box<Self>, _: &RunEnd, result: &mut RunResult) -> Vec<Notice> {
        // --client-stages (HammerDB's step workloads): each stage's new orders a
        // minute, as the clients committed them.
        for stage in result.stages.iter_mut().flat_map(|s| s.stages.iter_mut()) {
            let minutes = (stage.end_s - stage.start_s) / 60.0;
            let new_orders = stage.transactions_by_script.get(NEW_ORDER_SCRIPT);
            stage.nopm = new_orders
                .filter(|_| minutes > 0.0)
                .map(|&n| n as f64 / minutes);
        }
        result.workload = Some(WorkloadResult::Tpcc(TpccResult {
            server_lost: None,
            new_orders_committed: result
                .scripts
                .get(NEW_ORDER_SCRIPT)
                .map_or(0, |s| s.stats.counts.cnt),
            server: None,
            profile: self.0.profile(),
            layout: self.0.timeprofile,
        }));
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
    let Some(tpcc) = TpccResult::of_mut(result.workload.as_mut()) else {
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

/// `-D vacuum=1`: CHECKPOINT and VACUUM once the run's counts are taken, on a
/// connection of its own (where the run connects).
struct Vacuum(Option<ConnectOptions>);

impl RunObserver for Vacuum {
    fn scope(&self) -> Scope {
        Scope::WholeRun
    }

    fn before(&mut self, run: &BeforeRun) -> Result<(), RunError> {
        self.0 = Some(run.conn_opts.clone());
        Ok(())
    }

    fn measure_from(&mut self, _: &Phases) {}

    fn finish(self: Box<Self>, _: &RunEnd, _: &mut RunResult) -> Vec<Notice> {
        self.0
            .map(|opts| super::vacuum::after_run(&opts))
            .into_iter()
            .collect()
    }
}
