//! What watches a run from beside its clients and adds its part to the result: the
//! server's statistics (`--server-stats`), a workload's own watcher (TPC-C's
//! monitor), the client process's CPU. The runner builds the list from the plan
//! ([`super::run`]), drops the observers of the whole run's figures on every worker
//! but worker 0 ([`Scope`], decided here once), and calls each at the run's three
//! moments: before the clients start, when the measured part begins, after the
//! clients are done. What went wrong is returned as notices, which the caller prints;
//! an observer prints nothing.
//!
//! The live metrics of `--metrics-listen` are not an observer: they are a view of what
//! the collector counts, fed by it as it counts (`collector::Hooks::live`).

use super::control::RunControl;
use super::error::RunError;
use super::phases::{PhasePlan, Phases};
use super::window::{self, Watcher};
use crate::logging::Level;
use pgbench_results::RunResult;
use pgbench_wire::ConnectOptions;

/// Whose figures an observer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The server's, which are the whole run's: under `--worker`, only worker 0 reads
    /// them.
    WholeRun,
    /// This process's own.
    ThisProcess,
}

/// What an observer knows before the clients start.
pub struct BeforeRun<'a> {
    pub conn_opts: &'a ConnectOptions,
    pub phases: &'a PhasePlan,
}

/// What an observer knows once the clients are done.
pub struct RunEnd<'a> {
    /// How the run ended, and the bounds its end keeps to.
    pub control: &'a RunControl,
    pub phases: Phases,
    /// When the last client ended, µs on the run clock.
    pub end_us: i64,
    /// The `-j` threads' run-queue wait, ns, when the kernel tells it.
    pub threads_waited_ns: Option<u64>,
    /// This process's clients' statements by kind, in the measured part.
    pub statements: super::events::StatementKinds,
}

/// A line for the caller to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub level: Level,
    pub text: String,
}

impl Notice {
    pub fn warning(text: String) -> Notice {
        Notice {
            level: Level::Warning,
            text,
        }
    }

    pub fn error(text: String) -> Notice {
        Notice {
            level: Level::Error,
            text,
        }
    }
}

/// Watches a run; see the module's header.
pub trait RunObserver: Send {
    fn scope(&self) -> Scope;
    /// Before the clients start: connect, and read what the window's start needs now
    /// (without a warm-up, before any client runs). An error stops the run before
    /// anything runs.
    fn before(&mut self, run: &BeforeRun) -> Result<(), RunError>;
    /// The clients were let go: the measured part begins at `phases.measure_from_us`.
    fn measure_from(&mut self, phases: &Phases);
    /// After the clients, within the bounds of how the run ended: its part of
    /// `result`.
    fn finish(self: Box<Self>, end: &RunEnd, result: &mut RunResult) -> Vec<Notice>;
}

/// A run's observers, called in order at each moment.
pub struct Observers(Vec<Box<dyn RunObserver>>);

impl Observers {
    /// The observers of this process: all of them, or on a worker other than worker 0
    /// of a `--worker` run, only those of its own figures.
    pub fn of_this_process(all: Vec<Box<dyn RunObserver>>, worker_index: Option<u32>) -> Observers {
        let measures_whole_run = worker_index.is_none_or(|i| i == 0);
        Observers(
            all.into_iter()
                .filter(|o| measures_whole_run || o.scope() == Scope::ThisProcess)
                .collect(),
        )
    }

    pub fn before(&mut self, run: &BeforeRun) -> Result<(), RunError> {
        self.0.iter_mut().try_for_each(|o| o.before(run))
    }

    pub fn measure_from(&mut self, phases: &Phases) {
        self.0.iter_mut().for_each(|o| o.measure_from(phases));
    }

    /// Each adds its part to `result`, in order; their notices, in order.
    pub fn finish(self, end: &RunEnd, result: &mut RunResult) -> Vec<Notice> {
        self.0
            .into_iter()
            .flat_map(|o| o.finish(end, result))
            .collect()
    }
}

/// A [`Watcher`] of the measured window on a connection of its own, as an observer:
/// `connect` makes it before the clients start, `finish` puts what it read (or why it
/// could not) into the result.
pub struct WindowObserver<W: Watcher> {
    stage: Stage<W>,
    connect: Option<Connect<W>>,
    finish: Finish<W>,
}

type Connect<W> = Box<dyn FnOnce(&ConnectOptions) -> Result<W, RunError> + Send>;
type Finish<W> = Box<
    dyn FnOnce(Result<Option<<W as Watcher>::Output>, RunError>, &mut RunResult) -> Vec<Notice>
        + Send,
>;

enum Stage<W: Watcher> {
    NotConnected,
    Before(window::Before<W>),
    During(window::During<W>),
}

impl<W: Watcher> WindowObserver<W> {
    pub fn new(
        connect: impl FnOnce(&ConnectOptions) -> Result<W, RunError> + Send + 'static,
        finish: impl FnOnce(Result<Option<W::Output>, RunError>, &mut RunResult) -> Vec<Notice>
            + Send
            + 'static,
    ) -> WindowObserver<W> {
        WindowObserver {
            stage: Stage::NotConnected,
            connect: Some(Box::new(connect)),
            finish: Box::new(finish),
        }
    }
}

impl<W: Watcher> RunObserver for WindowObserver<W> {
    fn scope(&self) -> Scope {
        Scope::WholeRun
    }

    fn before(&mut self, run: &BeforeRun) -> Result<(), RunError> {
        if let Some(connect) = self.connect.take() {
            let watcher = connect(run.conn_opts)?;
            self.stage = Stage::Before(window::before(watcher, run.phases.has_warmup())?);
        }
        Ok(())
    }

    fn measure_from(&mut self, phases: &Phases) {
        if let Stage::Before(before) = std::mem::replace(&mut self.stage, Stage::NotConnected) {
            self.stage = Stage::During(before.measure_from(phases.measure_from_us));
        }
    }

    fn finish(self: Box<Self>, end: &RunEnd, result: &mut RunResult) -> Vec<Notice> {
        let read = match self.stage {
            Stage::During(during) => during.finish(end.control),
            // The run stopped before its window began.
            Stage::NotConnected | Stage::Before(_) => Ok(None),
        };
        (self.finish)(read, result)
    }
}

/// The client process's CPU time over the run, beside what its threads could use: the
/// evidence of a client that was the bottleneck.
pub struct ClientCpu {
    threads: usize,
    /// The process's CPU seconds and the threads' wait when the clients were let go.
    at_start: Option<(Option<f64>, i64)>,
}

impl ClientCpu {
    pub fn new(threads: usize) -> ClientCpu {
        ClientCpu {
            threads,
            at_start: None,
        }
    }
}

impl RunObserver for ClientCpu {
    fn scope(&self) -> Scope {
        Scope::ThisProcess
    }

    fn before(&mut self, _: &BeforeRun) -> Result<(), RunError> {
        Ok(())
    }

    fn measure_from(&mut self, phases: &Phases) {
        self.at_start = Some((crate::sys::process_cpu_s(), phases.start_us));
    }

    fn finish(self: Box<Self>, end: &RunEnd, result: &mut RunResult) -> Vec<Notice> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        result.client_cpu = self.at_start.and_then(|(cpu_at_start, start_us)| {
            Some(pgbench_results::warnings::ClientCpu {
                cpu_s: crate::sys::process_cpu_s()? - cpu_at_start?,
                wall_s: (end.end_us - start_us) as f64 / 1e6,
                threads: self.threads.min(cores),
                cpu_limit: super::cpu_share::cpu_limit(),
                wait_s: end.threads_waited_ns.map(|ns| ns as f64 / 1e9),
            })
            .filter(|c| c.wall_s > 0.0)
        });
        Vec::new()
    }
}
