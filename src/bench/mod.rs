//! Benchmarking mode: the part of pgbench.c `main()` after option parsing, and
//! `threadRun`. Data flow:
//!
//! ```text
//! BenchPlan ─ setup (connect, banner, table info, vacuum)
//!           ─ worker (--worker=I/N only): join the run's other processes, take this
//!             process's share of the whole run's random states and numbers
//!           ─ launch: clients dealt to -j threads that share random states, -R
//!             schedule and log file; a thread of one client blocks on its socket, a
//!             thread of several multiplexes them (multiplex); all start at a gate
//!             (with --worker, once the barrier says all workers are ready, at the
//!             instant they agreed on)
//!           ─ events (batches of TxRecord, aborts, last words) over one channel
//!           ─ collector: counters, histograms, series; progress lines, abort lines;
//!             --reconnect's outages (availability)
//!           ─ outcome: RunResult (plain data), rendered by the caller
//! ```
//!
//! Nothing here reads the command line or picks an exit status: `cli` builds the
//! [`plan::BenchPlan`], prints the report from the [`RunOutcome`] and any
//! [`RunError`].

pub mod availability;
pub mod barrier;
pub mod client;
pub mod collector;
pub mod conditional;
pub mod control;
pub mod cpu_share;
pub(crate) mod doubt;
pub mod error;
pub mod events;
pub mod launch;
pub mod multiplex;
pub mod observer;
pub mod outcome;
pub mod phases;
pub mod plan;
pub mod progress;
pub mod retry;
pub mod run_workload;
pub mod scenario;
pub mod server_stats;
pub mod setup;
pub mod stages;
pub mod stop;
#[cfg(test)]
mod tests;
pub mod threads;
pub mod throttle;
pub mod txlog;
pub mod window;
pub mod worker;

pub use error::{ClientAbort, RunError};
pub use outcome::RunOutcome;
pub use run_workload::RunWorkload;

use crate::clock::{epoch_now_us, now_us, RunClock};
use crate::logging::Output;
use collector::CollectorPlan;
use launch::{RunShared, Start};
use observer::{BeforeRun, Observers, RunEnd, RunObserver};
use pgbench_wire::ConnectArgs;
use phases::Phases;
use plan::BenchPlan;
use std::sync::Arc;
use std::thread::JoinHandle;
pub use stop::RunStop;
use threads::Launch;

/// What a run is given besides its plan: where its lines go, what sees it as it goes
/// (`--metrics-listen`), and what stops it: the [`RunStop`] its caller attached to the
/// process's signal handling (a run takes over no signal itself).
#[derive(Clone)]
pub struct RunEnv {
    pub out: Arc<dyn Output>,
    pub metrics: Option<Arc<crate::metrics::Live>>,
    pub stop: Arc<RunStop>,
}

impl RunEnv {
    /// A run of the command line: the process's streams; `stop` is what the caller
    /// attached to the signals.
    pub fn process(metrics: Option<Arc<crate::metrics::Live>>, stop: Arc<RunStop>) -> RunEnv {
        RunEnv {
            out: Arc::new(crate::logging::ProcessOutput),
            metrics,
            stop,
        }
    }
}

/// Runs the benchmark.
pub fn run(
    env: &RunEnv,
    mut conn_args: ConnectArgs,
    plan: &BenchPlan,
) -> Result<RunOutcome, RunError> {
    let out = &*env.out;
    let (setup, conn_opts) = setup::prepare(&mut conn_args, plan, out)?;
    // --worker: join the others (and take worker 0's seed unless one was given).
    let joined = worker::join(plan, &conn_opts, &env.out)?;
    let seed = joined.as_ref().map_or(plan.random_seed, |j| j.seed());
    // Every random state, derived in pgbench's order (this worker's share of them).
    let seeds = worker::seed_plan(plan, seed);
    let vars = launch::client_variables(plan, setup.scale, &seeds)?;
    let mut observers = observers(plan);
    observers.before(&BeforeRun {
        conn_opts: &conn_opts,
        phases: &plan.phases,
    })?;
    let conn = (&conn_args, conn_opts);
    let (ctx, events) = RunShared::new(plan, conn, &seeds, RunClock::new(), env)?;
    let ctx = Arc::new(ctx);
    env.stop.run_started(Arc::clone(&ctx));
    // pgbench: the start-up time that "initial connection time" counts from is taken
    // after setup and vacuum, right before the threads start.
    let start = now_us();
    if let (Some(board), None) = (&ctx.progress, &plan.worker) {
        // A --worker's schedule starts at the instant the workers agree on.
        board.start(start, ctx.control.clock.epoch_shift_us);
    }
    let how = Launch {
        os_threads: Some(threads::os_threads(plan, threads::cpus())),
        ..Launch::default()
    };
    let (clients, gate) = threads::start(&ctx, vars, seeds.clients, how)?;
    let starts = worker::start_together(joined, plan, (&ctx.control, &gate), start, out)?;
    let phases = begin(&ctx, starts.clock_us);
    gate.open(Start::Go);
    observers.measure_from(&phases);
    let collected = collect(&ctx, &events, phases, starts.clock_us);
    if let Some(thread) = collected.stopped_by_thread {
        // pgbench 17 exits without waiting for the other clients.
        finish_logs(&ctx, epoch_now_us());
        return Ok(RunOutcome::StoppedOnAbort { thread });
    }
    let end = wait_for_clients(&ctx, clients, &collected, phases);
    let timing = outcome::Timing {
        start: starts.timing_us,
        phases,
        end,
    };
    let log_losses = finish_logs(&ctx, end + ctx.control.clock.epoch_shift_us);
    let statements = collected.queries;
    let mut result = outcome::assemble(plan, &setup, &ctx, collected, timing);
    let targets: Vec<String> = ctx
        .groups
        .iter()
        .map(|g| scenario::target(&g.conn_opts))
        .collect();
    result.scenarios = scenario::results(plan, &result, &targets);
    for notice in observers.finish(&run_end(&ctx, &timing, statements), &mut result) {
        out.log(notice.level, &notice.text);
    }
    let shift = ctx.control.clock.epoch_shift_us;
    let meta = outcome::meta(setup, seed, &timing, starts.worker, shift);
    env.stop.run_finished();
    Ok(RunOutcome::Completed {
        result: Box::new(result),
        meta: Box::new(meta),
        stopped: ctx.control.cause(),
        log_losses,
    })
}

/// What watches this run besides its clients ([`observer`]): the server's statistics,
/// the workload's own, the client's CPU; those of the whole run's figures only on
/// worker 0 of a `--worker` run.
fn observers(plan: &BenchPlan) -> Observers {
    let mut all: Vec<Box<dyn RunObserver>> = Vec::new();
    all.extend(plan.workload.iter().flat_map(|w| w.observers()));
    all.extend(server_stats::observer(plan));
    all.push(Box::new(observer::ClientCpu::new(plan.settings.threads)));
    Observers::of_this_process(all, plan.worker.as_ref().map(|w| w.index))
}

/// What the observers learn of the run's end.
fn run_end<'a>(
    ctx: &'a RunShared,
    timing: &outcome::Timing,
    statements: events::StatementKinds,
) -> RunEnd<'a> {
    let waited = &ctx.threads_waited_ns;
    RunEnd {
        control: &ctx.control,
        phases: timing.phases,
        end_us: timing.end,
        threads_waited_ns: cpu_share::wait_measurable()
            .then(|| waited.load(std::sync::atomic::Ordering::Relaxed)),
        statements,
    }
}

/// The collector, on this thread, until every client said its last word.
fn collect(
    ctx: &RunShared,
    events: &crossbeam_channel::Receiver<events::Event>,
    phases: Phases,
    start_us: i64,
) -> collector::Collected {
    collector::collect(
        &collector_plan(ctx, phases),
        events,
        start_us,
        &mut collector::Hooks {
            now: &mut now_us,
            out: &mut |text| ctx.out.stderr(text),
            watch: &mut |now, longest| ctx.control.watch(now, longest),
            live: ctx.metrics.as_deref(),
            outbox: Some(&ctx.outbox),
            board: ctx.progress.as_ref(),
        },
    )
}

/// After the collector: the client threads joined (a client given up on is left to
/// the process's exit) and the cancel requests given their moment; when the run
/// ended: when its last thread did, as pgbench's does (a signal may end it in the
/// warm-up, before the measured part).
fn wait_for_clients(
    ctx: &RunShared,
    clients: Vec<JoinHandle<()>>,
    collected: &collector::Collected,
    phases: Phases,
) -> i64 {
    if collected.abandoned == 0 {
        for c in clients {
            let _ = c.join();
        }
    }
    ctx.control.wait_for_cancels(control::CANCELS_WAIT);
    collected.last_client_end.max(phases.start_us)
}

/// Everyone is connected: fix the run's phases on its clock, set the `-T` deadline,
/// the `-R` schedules and the log intervals. The clients go when the caller opens the
/// gate.
fn begin(ctx: &RunShared, start: i64) -> Phases {
    let clock = &ctx.control.clock;
    let bench_start = clock.now_us();
    let phases = ctx.plan.phases.anchored(bench_start);
    let _ = ctx.phases.set(phases);
    if let Some(secs) = ctx.plan.settings.limit.duration() {
        // pgbench sets its alarm when the threads are created, before they connect:
        // -T counts from the start-up time. After a warm-up, -T is what is measured.
        let from = if phases.has_warmup() {
            phases.measure_from_us
        } else {
            start
        };
        clock.set_end(from + secs * 1_000_000);
        for group in &ctx.groups {
            group.place_stages(from + secs * 1_000_000);
        }
        if let Some(stages) = &ctx.plan.stages {
            let _ = ctx
                .stage_clock
                .set(stages.on_clock(from + secs * 1_000_000));
        }
    }
    let measured_from = phases.measure_from_us;
    for t in &ctx.threads {
        let mut st = t.lock();
        // The -R schedule runs on through the warm-up's end: a fresh one would start
        // with a burst or a gap.
        st.throttle_trigger = bench_start;
        if let Some(log) = st.log.as_mut() {
            log.restart_intervals(measured_from + clock.epoch_shift_us);
        }
    }
    if let Some(board) = &ctx.progress {
        // The lines' schedule counts from when the client threads started.
        let stages = ctx.plan.stages.clone().zip(ctx.stage_clock.get().cloned());
        board.begin(start, phases, stages, clock.epoch_shift_us);
    }
    ctx.control.started(bench_start);
    phases
}

/// What the collector needs of the plan.
fn collector_plan(ctx: &RunShared, phases: Phases) -> CollectorPlan {
    let plan = &ctx.plan;
    let s = &plan.settings;
    CollectorPlan {
        clients: s.clients,
        scripts: ctx.scripts.len(),
        latency_limit_us: s.latency_limit_us,
        throttled: s.throttled(),
        // What the caller will read of the run ([`plan::Keep`]).
        histograms: plan.keep.histograms,
        series: plan.keep.series,
        exit_on_abort: plan.exit_on_abort,
        phases,
        duration_s: s.limit.duration(),
        availability: plan.availability,
        stages: plan.stages.clone().zip(ctx.stage_clock.get().cloned()),
    }
}

/// Writes what the logs still hold (the last aggregate interval included); returns
/// the files that lost lines.
fn finish_logs(ctx: &RunShared, end_epoch_us: i64) -> Vec<txlog::LogLoss> {
    ctx.threads
        .iter()
        .filter_map(|t| {
            t.lock()
                .log
                .as_mut()
                .and_then(|log| log.finish(end_epoch_us, &*ctx.out))
        })
        .collect()
}
