//! What a TPC-C run does around the clients: its [`Monitor`] watches the measured
//! window (see [`crate::bench::window`]: connected before the clients start, the
//! server's counts read when the window begins and when the clients are done), and
//! the run's result gets its [`TpccResult`]. Under `--worker`, only worker 0 reads
//! the server's counts (they are the whole run's).

use super::monitor::Monitor;
use super::{NEW_ORDER_SCRIPT, PROFILE_NAMES};
use crate::bench::control::RunControl;
use crate::bench::error::RunError;
use crate::bench::window;
use pgbench_results::tpcc::TpccResult;
use pgbench_results::RunResult;
use pgbench_wire::ConnectOptions;

/// Before the clients start.
pub struct Before(Option<window::Before<Monitor>>);

/// While they run.
pub struct During(Option<window::During<Monitor>>);

/// For a run of `workload` (none unless TPC-C): the monitor, when this process
/// `measures` (worker 0 or no `--worker`); it starts after the warm-up if `warmup`.
pub fn before(
    workload: Option<&crate::workload::Configured>,
    measures: bool,
    warmup: bool,
    opts: &ConnectOptions,
) -> Result<Option<Before>, RunError> {
    if !matches!(workload, Some(crate::workload::Configured::Tpcc(_))) {
        return Ok(None);
    }
    let monitor = measures
        .then(|| window::before(Monitor::connect(opts)?, warmup))
        .transpose()?;
    Ok(Some(Before(monitor)))
}

impl Before {
    /// The measured part starts at `at_us` (run clock).
    pub fn measure_from(self, at_us: i64) -> During {
        During(self.0.map(|b| b.measure_from(at_us)))
    }
}

impl During {
    /// After the clients (within the bounds of how the run ended, `control`): the
    /// run's TPC-C figures. Counts that could not be read are said, and kept as lost:
    /// the run then has no NOPM or TPM, and does not end as a success.
    pub fn finish(self, result: &RunResult, control: &RunControl) -> TpccResult {
        let mut server_lost = None;
        let server = self.0.and_then(|d| match d.finish(control) {
            Ok(counts) => counts,
            Err(e) => {
                crate::logging::error(&format!("{e}; the run has no NOPM or TPM"));
                server_lost = Some(e.to_string());
                None
            }
        });
        TpccResult {
            server_lost,
            new_orders_committed: result
                .scripts
                .get(NEW_ORDER_SCRIPT)
                .map_or(0, |s| s.stats.counts.cnt),
            server,
            profile: PROFILE_NAMES
                .iter()
                .enumerate()
                .map(|(i, n)| (i, n.to_string()))
                .collect(),
        }
    }
}
