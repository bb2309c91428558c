//! What a TPC-C run does around the clients: the monitor's connection is made before
//! they start, and reads the server's counts at once when the run has no warm-up (no
//! client has connected yet, so the counts are exact); after a warm-up a thread of
//! its own reads them when the measured part begins; when the clients are done it reads them again, and the
//! run's result gets its [`TpccResult`]. Under `--worker`, only worker 0 reads the
//! server's counts (they are the whole run's).

use super::monitor::Monitor;
use super::{NEW_ORDER_SCRIPT, PROFILE_NAMES};
use crate::bench::clock::now_us;
use crate::bench::plan::BenchPlan;
use crate::bench::RunError;
use pgbench_results::tpcc::TpccResult;
use pgbench_results::RunResult;
use pgbench_wire::{ConnectOptions, Connection};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Before the clients start.
pub struct Before {
    conn: Option<Connection>,
    started: Option<Monitor>,
}

/// While they run.
pub struct During {
    stop: Arc<AtomicBool>,
    started: Option<JoinHandle<Result<Option<Monitor>, RunError>>>,
}

/// For a TPC-C run: the monitor's connection (worker 0 or no `--worker` only).
pub fn before(plan: &BenchPlan, opts: &ConnectOptions) -> Result<Option<Before>, RunError> {
    if !matches!(plan.workload, Some(crate::workload::Configured::Tpcc(_))) {
        return Ok(None);
    }
    let measures = plan.worker.as_ref().is_none_or(|w| w.index == 0);
    let conn = measures.then(|| Monitor::connect(opts)).transpose()?;
    Ok(Some(match (conn, plan.warmup_s) {
        (Some(conn), None) => Before {
            conn: None,
            started: Some(Monitor::start(conn)?),
        },
        (conn, _) => Before {
            conn,
            started: None,
        },
    }))
}

impl Before {
    /// Reads the first counts at `at_us` (run clock), in a thread of its own.
    pub fn measure_from(self, at_us: i64) -> During {
        let stop = Arc::new(AtomicBool::new(false));
        if let Some(monitor) = self.started {
            return During {
                stop,
                started: Some(std::thread::spawn(move || Ok(Some(monitor)))),
            };
        }
        let started = self.conn.map(|conn| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while now_us() < at_us {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(None);
                    }
                    let left = (at_us - now_us()).clamp(0, 50_000) as u64;
                    std::thread::sleep(std::time::Duration::from_micros(left));
                }
                Monitor::start(conn).map(Some)
            })
        });
        During { stop, started }
    }
}

impl During {
    /// After the clients: the run's TPC-C figures (a failed count is said and left out).
    pub fn finish(self, result: &RunResult) -> TpccResult {
        self.stop.store(true, Ordering::Relaxed);
        let server = self.started.and_then(|h| {
            let counted = h
                .join()
                .unwrap_or_else(|_| {
                    Err(RunError::Setup {
                        message: "the TPC-C monitor's thread failed".into(),
                        hint: None,
                    })
                })
                .and_then(|m| m.map(Monitor::finish).transpose());
            match counted {
                Ok(counts) => counts,
                Err(e) => {
                    crate::logging::warning(&e.to_string());
                    None
                }
            }
        });
        TpccResult {
            new_orders_committed: result
                .scripts
                .get(NEW_ORDER_SCRIPT)
                .map_or(0, |s| s.stats.cnt),
            server,
            profile: PROFILE_NAMES
                .iter()
                .enumerate()
                .map(|(i, n)| (i, n.to_string()))
                .collect(),
        }
    }
}
