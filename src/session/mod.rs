//! The shell every mode puts around the engine ([`crate::bench::run`]): a plain run
//! (`cli`) and a sweep or search ([`crate::capacity`]) both go through it.
//!
//! ```text
//! Session::open    the metrics endpoint bound (before anything connects), the
//!                  mode's stop attached to the process's signals
//! Session::on_target   the body on the user's server, or on a throwaway one
//!                  initialised for the plan (--temp-instance), removed after it
//!   └─ each run:   bench::run, then finish: the report (pgbench's, then what
//!                  after_report adds), the lines after it, the results file
//!                  (finish::results_file) and the exports (finish::write_exports)
//! Session::close   the endpoint's linger (not after a signal), the stop detached
//! ```
//!
//! It owns what is the same for every mode; a mode owns what it runs and what its
//! output says. What the results file records of the command line (its options, read
//! from the command line's option table) is given to it ([`CommandLine`]), so nothing
//! here reads the command line. Exit statuses are [`ExitStatus`]es (made in
//! `crate::diagnostic`, the ground floor the engine's outcomes use too).

pub mod after_report;
mod error;
pub mod finish;
pub mod history;

pub use crate::diagnostic::{Exit, ExitStatus};
pub use error::SessionError;
pub use finish::Export;

use crate::bench::plan::BenchPlan;
use crate::signals::{Attached, OnSignal, Signals};
use pgbench_wire::ConnectArgs;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a results file records of the command line, given by the command line: its
/// words, every effective option of a plan by its long name (the database's too), and
/// the digests of the options the workers of one `--worker` run must share.
pub struct CommandLine<'a> {
    pub argv: &'a [String],
    /// The options of `plan` run on the database `dbname`.
    pub options: &'a dyn Fn(&BenchPlan, &str) -> BTreeMap<String, Value>,
    /// `bench::barrier`'s option digests of `plan`.
    pub worker_digests: &'a dyn Fn(&BenchPlan) -> String,
    /// Where the mode's results file is recorded (`--history`, `PGBENCH_RS_HISTORY`),
    /// with the run's tags.
    pub history: Option<&'a history::HistoryPlan>,
    /// The results files to write (`--export-json`, `--export-html`).
    pub export: &'a finish::Export,
}

/// Where the runs go: the user's server (its connection options and database name),
/// or a throwaway one.
pub struct Target {
    pub args: ConnectArgs,
    pub dbname: String,
    /// `--temp-instance` or `--temp-instance-durable`.
    pub temp_instance: Option<crate::temp_instance::TempInstance>,
    /// `--workload=NAME`: what a throwaway server is prepared with.
    pub workload: Option<Arc<dyn crate::workload::Workload>>,
}

/// A mode under way: its metrics endpoint and its signal handler.
pub struct Session<'a> {
    signals: &'a Signals,
    endpoint: Option<crate::metrics::Endpoint>,
    attached: Option<Attached>,
}

impl<'a> Session<'a> {
    /// Binds `--metrics-listen`'s endpoint (a port in use ends the mode before anything
    /// connects), sized by `live`, and attaches `stop` to the process's signals until
    /// [`Session::close`].
    pub fn open(
        signals: &'a Signals,
        plan: &BenchPlan,
        live: crate::metrics::LivePlan,
        stop: Arc<dyn OnSignal>,
    ) -> Result<Session<'a>, SessionError> {
        let endpoint = crate::metrics::start(plan.metrics.as_ref(), live, plan.metric_labels())
            .map_err(SessionError::Metrics)?;
        let attached = Some(signals.attach(stop));
        Ok(Session {
            signals,
            endpoint,
            attached,
        })
    }

    /// The endpoint, if `--metrics-listen` asked for one.
    pub fn endpoint(&self) -> Option<&crate::metrics::Endpoint> {
        self.endpoint.as_ref()
    }

    /// `body` with where to connect, the plan to run there and the database's name:
    /// the user's server, or a throwaway cluster initialised for `plan` (as its `-i`
    /// or its workload's prepare would), removed after `body`.
    pub fn on_target<T>(
        &self,
        target: Target,
        plan: &BenchPlan,
        body: impl FnOnce(ConnectArgs, &BenchPlan, &str) -> T,
    ) -> Result<T, crate::temp_instance::TempInstanceError> {
        match target.temp_instance {
            Some(kind) => crate::temp_instance::on_instance(
                kind,
                plan,
                target.workload.as_deref(),
                |args, run| body(args, run, "postgres"),
            ),
            None => Ok(body(target.args, plan, &target.dbname)),
        }
    }

    /// The end of the mode: the endpoint lingers for a last scrape unless a signal
    /// stopped the mode (it then ends at once), then the mode's stop is detached.
    pub fn close(mut self, signalled: bool) {
        if let Some(e) = self.endpoint.take() {
            if !signalled {
                let _lingering = self.signals.attach(e.linger_stop());
                e.linger();
            }
        }
        drop(self.attached.take());
    }
}
