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
//!           ─ collector: counters, histograms, series; progress lines, abort lines
//!           ─ outcome: RunResult (plain data), rendered by the caller
//! ```
//!
//! Nothing here reads the command line or picks an exit status: `cli` builds the
//! [`plan::BenchPlan`], prints the report from the [`RunOutcome`] and any
//! [`RunError`].

pub mod barrier;
pub mod client;
pub mod clock;
pub mod collector;
pub mod conditional;
pub mod control;
pub mod cpu_share;
pub mod error;
pub mod events;
pub mod launch;
pub mod multiplex;
pub mod outcome;
pub mod phases;
pub mod plan;
pub mod progress;
pub mod retry;
pub mod server_stats;
pub mod setup;
#[cfg(test)]
mod tests;
pub mod throttle;
pub mod txlog;
pub mod window;
pub mod worker;

pub use error::{ClientAbort, RunError};
pub use outcome::RunOutcome;

use clock::{epoch_now_us, now_us};
use collector::CollectorPlan;
use control::RunControl;
use launch::{RunShared, Start, StartGate, ThreadShared, ThreadState};
use pgbench_script::prng::{Prng, SeedPlan};
use pgbench_script::variables::Variables;
use pgbench_wire::ConnectArgs;
use phases::Phases;
use plan::BenchPlan;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Runs the benchmark; `metrics` (`--metrics-listen`) sees it as it goes.
pub fn run(
    mut conn_args: ConnectArgs,
    plan: &BenchPlan,
    metrics: Option<Arc<crate::metrics::Live>>,
) -> Result<RunOutcome, RunError> {
    let settings = &plan.settings;
    let target = interrupts()?;
    let (setup, conn_opts) = setup::prepare(&mut conn_args, plan)?;
    // --worker: join the others (and take worker 0's seed unless one was given).
    let joined = worker::join(plan, &conn_opts)?;
    let seed = joined.as_ref().map_or(plan.random_seed, |j| j.seed());
    // Every random state, derived in pgbench's order (this worker's share of them).
    let seeds = worker::seed_plan(plan, seed);
    let vars = client_variables(plan, setup.scale, &seeds)?;
    let tpcc = crate::workload::tpcc::run::before(
        plan.workload.as_ref(),
        plan.worker.as_ref().is_none_or(|w| w.index == 0),
        plan.phases.has_warmup(),
        &conn_opts,
    )?;
    let sampler = server_stats::before(plan, &conn_opts)?;
    let (events, events_rx) = crossbeam_channel::unbounded();
    let scripts = launch::run_scripts(plan);
    let ctx = Arc::new(RunShared {
        weights: scripts.iter().map(|s| s.weight).collect(),
        scripts,
        conn_opts,
        control: RunControl::new(settings.clients),
        retry: retry::RetryPlan {
            max_tries: settings.max_tries,
            latency_limit_us: settings.latency_limit_us,
        },
        events,
        threads: thread_states(plan, &seeds)?,
        plan: plan.clone(),
        metrics,
        phases: Default::default(),
    });
    let _ = target.set(Arc::clone(&ctx));
    // pgbench: the start-up time that "initial connection time" counts from is taken
    // after setup and vacuum, right before the threads start.
    let start = now_us();
    let (clients, gate) = start_clients(&ctx, vars, seeds.clients)?;
    let starts = worker::start_together(joined, plan, &ctx.control, &gate, start)?;
    let phases = begin(&ctx, &gate, starts.clock_us);
    let (bench_start, measured_from) = (phases.start_us, phases.measure_from_us);
    let tpcc = tpcc.map(|t| t.measure_from(measured_from));
    let sampler = sampler.map(|s| s.measure_from(measured_from));
    let cpu_at_start = crate::sys::process_cpu_s();
    let waited_at_start = cpu_share::waited_ns();
    let collected = collector::collect(
        &collector_plan(&ctx, phases),
        &events_rx,
        starts.clock_us,
        &mut collector::Hooks {
            now: &mut now_us,
            out: &mut |text| crate::logging::raw(text),
            watch: &mut |now, longest| ctx.control.watch(now, longest),
            live: ctx.metrics.as_deref(),
        },
    );
    if let Some(thread) = collected.stopped_by_thread {
        // pgbench 17 exits without waiting for the other clients.
        finish_logs(&ctx, epoch_now_us());
        return Ok(RunOutcome::StoppedOnAbort { thread });
    }
    // A client given up on is left to the process's exit.
    if collected.abandoned == 0 {
        for c in clients {
            let _ = c.join();
        }
    }
    ctx.control.wait_for_cancels(control::CANCELS_WAIT);
    // pgbench's run ends when its last thread does (a signal may end it in the
    // warm-up, before the measured part).
    let end = collected.last_client_end.max(bench_start);
    let log_losses = finish_logs(&ctx, end + ctx.control.clock.epoch_shift_us);
    let timing = outcome::Timing {
        start: starts.timing_us,
        phases,
        end,
    };
    let ended = outcome::ending(
        ctx.control.cause(),
        ctx.control.signalled_at(),
        &timing,
        (collected.unfinished, collected.aborted),
    );
    let mut result = outcome::assemble(plan, &setup, &ctx.scripts, collected, (timing, ended));
    result.tpcc = tpcc.map(|t| t.finish(&result, &ctx.control));
    result.server = sampler.and_then(|s| server_stats::finish(s, &result, &ctx.control));
    result.client_cpu = client_cpu(plan, (cpu_at_start, waited_at_start), bench_start, end);
    let shift = ctx.control.clock.epoch_shift_us;
    let meta = pgbench_results::RunMeta {
        server_version: setup.server_version,
        server_settings: setup.server_settings,
        started_unix_us: measured_from.min(end) + shift,
        ended_unix_us: end + shift,
        random_seed: seed,
        worker: starts.worker,
        ..Default::default()
    };
    Ok(RunOutcome::Completed {
        result: Box::new(result),
        meta: Box::new(meta),
        stopped: ctx.control.cause(),
        log_losses,
    })
}

/// Takes over SIGINT and SIGTERM for the run (before any thread starts). Until the
/// clients exist they end the process as the signal would; then the first one stops
/// the run and keeps its results, the same one again (a wrapper forwarding it) changes
/// nothing, and a later one exits at once, saying what is lost (the report and the
/// results files not yet out: [`control::lost_on_exit`]). After the report, one ends
/// the metrics endpoint's linger, and the first one a results file's wait on a FIFO.
fn interrupts() -> Result<Arc<std::sync::OnceLock<Arc<RunShared>>>, RunError> {
    use control::Interrupt;
    let target: Arc<std::sync::OnceLock<Arc<RunShared>>> = Arc::default();
    let seen = Arc::clone(&target);
    crate::sys::on_signals(&[libc::SIGINT, libc::SIGTERM], move |sig| {
        // After the report: the metrics endpoint's linger ends, then the process.
        if crate::metrics::end_linger() {
            return;
        }
        let exit_now = match seen.get() {
            None => true,
            Some(ctx) => match ctx.control.interrupt(sig) {
                // The first signal, after a run that ended by itself: a results file
                // waiting on a FIFO gives up (a later one exits at once, as below).
                Interrupt::Stop => {
                    pgbench_results::destination::abandon_waits(sig);
                    false
                }
                Interrupt::Repeat => false,
                Interrupt::ExitNow => {
                    let export = &ctx.plan.export;
                    let asked: Vec<&str> = [&export.json, &export.html]
                        .into_iter()
                        .flatten()
                        .map(String::as_str)
                        .collect();
                    crate::logging::error(&format!(
                        "{} again: exiting at once; {}",
                        signal_name(sig),
                        control::lost_on_exit(&asked)
                    ));
                    true
                }
            },
        };
        if exit_now {
            pgbench_results::destination::remove_unfinished();
            std::process::exit(128 + sig)
        }
    })
    .map_err(|e| RunError::SpawnThread(crate::sys::strerror(&e)))?;
    Ok(target)
}

/// SIGINT or SIGTERM by name.
pub(crate) fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".to_string(),
        libc::SIGTERM => "SIGTERM".to_string(),
        other => format!("signal {other}"),
    }
}

/// Each client's variables: `-D` first, then the automatic ones unless `-D` set them.
fn client_variables(
    plan: &BenchPlan,
    scale: i32,
    seeds: &SeedPlan,
) -> Result<Vec<Variables>, RunError> {
    let mut base = Variables::new();
    for (name, value) in &plan.defines {
        base.set_text("option", name, value)
            .map_err(|e| RunError::Define(e.to_string()))?;
    }
    let automatic = |name: &str| !plan.defines_variable(name);
    Ok((0..plan.settings.clients)
        .map(|i| {
            let mut v = base.clone();
            // These names are valid and their values integers: setting cannot fail.
            if automatic("scale") {
                let _ = v.set_int("startup", "scale", i64::from(scale));
            }
            if automatic("client_id") {
                let _ = v.set_int("startup", "client_id", (plan.first_client() + i) as i64);
            }
            if let Some(seed) = seeds.default_seed {
                let _ = v.set_int("startup", "default_seed", seed);
            }
            if automatic("random_seed") {
                let _ = v.set_int("startup", "random_seed", seeds.random_seed);
            }
            v
        })
        .collect())
}

/// Each pgbench thread's random states and log file.
fn thread_states(plan: &BenchPlan, seeds: &SeedPlan) -> Result<Vec<ThreadShared>, RunError> {
    let pid = std::process::id();
    seeds
        .threads
        .iter()
        .enumerate()
        .map(|(t, ts)| {
            // Numbered as the whole run numbers them (--worker).
            let t = plan.first_thread() + t;
            let log = match &plan.log {
                Some(lp) => Some(txlog::ThreadLog::open(lp, plan, pid, t, ts.sample.clone())?),
                None => None,
            };
            Ok(ThreadShared::new(
                t,
                ThreadState {
                    choose_rng: ts.choose.clone(),
                    throttle_rng: ts.throttle.clone(),
                    throttle_trigger: 0,
                    log,
                },
            ))
        })
        .collect()
}

/// Starts the `-j` threads: a thread with one client blocks on its socket, a thread
/// with several waits on all of theirs ([`multiplex`]). Each connects its clients in
/// order (unless `-C`), then waits at the gate; returns when all are ready. A refused
/// thread or a failed connection stops the clients already started and is the run's
/// error, as in pgbench.
fn start_clients(
    ctx: &Arc<RunShared>,
    vars: Vec<Variables>,
    rngs: Vec<Prng>,
) -> Result<(Vec<JoinHandle<()>>, Arc<StartGate>), RunError> {
    let settings = &ctx.plan.settings;
    let gate = Arc::new(StartGate::default());
    let mut handles = Vec::with_capacity(settings.threads);
    let mut states = vars.into_iter().zip(rngs).enumerate();
    for (thread, count) in launch::deal_clients(settings.clients, settings.threads)
        .into_iter()
        .enumerate()
    {
        let own: Vec<(usize, (Variables, Prng))> = states.by_ref().take(count).collect();
        if own.is_empty() {
            continue;
        }
        let (ctx, waiting) = (Arc::clone(ctx), Arc::clone(&gate));
        let spawned = std::thread::Builder::new()
            .name(format!("thread {thread}"))
            // As pthread's default (8 MiB): evaluation recurses over the expression
            // tree, which a long `1+1+...` chain makes deep. Only touched pages count.
            .stack_size(8 * 1024 * 1024)
            .spawn(move || run_thread(&ctx, thread, own, &waiting));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                gate.open(Start::Stop);
                return Err(RunError::SpawnThread(crate::sys::strerror(&e)));
            }
        }
    }
    if let Err((client, source)) = gate.wait_ready(settings.clients) {
        gate.open(Start::Stop);
        return Err(RunError::ClientConnect { client, source });
    }
    Ok((handles, gate))
}

/// One `-j` thread: connects its clients, waits for the start, runs them.
fn run_thread(
    ctx: &RunShared,
    thread: usize,
    own: Vec<(usize, (Variables, Prng))>,
    gate: &StartGate,
) {
    let shared = &ctx.threads[thread];
    let alone = own.len() == 1;
    // Chosen before the clients connect: an io_uring driver does their I/O.
    let driver = (!alone).then(|| multiplex::Driver::new(own.len()));
    let local_indexes: Vec<usize> = own.iter().map(|(local, _)| *local).collect();
    let mut clients: Vec<client::Client> = own
        .into_iter()
        .map(|(local, (vars, rng))| {
            let number = ctx.plan.first_client() + local;
            let c = client::Client::new((local, number), ctx, shared, vars, rng);
            match &driver {
                None => c,
                Some(d) => c.with_socket_io(d.socket_io()),
            }
        })
        .collect();
    let count = clients.len();
    let mut failed = None;
    if !ctx.plan.settings.reconnect {
        for c in &mut clients {
            if let Err(e) = c.connect_initial() {
                failed = Some((c.id, e));
                break;
            }
            if let Some(m) = &ctx.metrics {
                m.connected(1);
            }
        }
    }
    let start = match failed {
        None => gate.arrive(count),
        Some((client, e)) => gate.fail(client, e, count),
    };
    if start != Start::Go {
        return;
    }
    let waited = cpu_share::Waited::start();
    // A panic (a bug) must not leave the collector waiting for clients that are gone.
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match driver {
        None => clients.into_iter().for_each(client::Client::run),
        Some(d) => d.drive(clients, &ctx.control.clock),
    }));
    waited.finish();
    if ran.is_err() {
        report_lost_clients(ctx, thread, &local_indexes);
    }
}

/// The last words of the clients of a thread that panicked, as aborts: the run ends
/// with its report and exit status 2.
fn report_lost_clients(ctx: &RunShared, thread: usize, local_indexes: &[usize]) {
    for &local in local_indexes
        .iter()
        .filter(|&&s| !ctx.control.has_reported(s))
    {
        ctx.control.transaction_ended(local);
        ctx.control.unregister(local);
        let client = ctx.plan.first_client() + local;
        for event in events::lost_client(thread, client, now_us()) {
            let _ = ctx.events.send(event);
        }
        ctx.control.reported(local);
    }
}

/// Everyone is connected: fix the run's phases on its clock, set the `-T` deadline,
/// the `-R` schedules and the log intervals, then let the clients go.
fn begin(ctx: &RunShared, gate: &StartGate, start: i64) -> Phases {
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
    ctx.control.started(bench_start);
    gate.open(Start::Go);
    phases
}

/// The process's CPU time and its `-j` threads' run-queue wait from the clients' start
/// (`at_start`: the CPU seconds and the wait then) to the run's end, beside what its
/// threads could have used.
fn client_cpu(
    plan: &BenchPlan,
    at_start: (Option<f64>, Option<u64>),
    start_us: i64,
    end_us: i64,
) -> Option<pgbench_results::warnings::ClientCpu> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let waited = cpu_share::waited_ns().zip(at_start.1);
    Some(pgbench_results::warnings::ClientCpu {
        cpu_s: crate::sys::process_cpu_s()? - at_start.0?,
        wall_s: (end_us - start_us) as f64 / 1e6,
        threads: plan.settings.threads.min(cores),
        cpu_limit: cpu_share::cpu_limit(),
        wait_s: waited.map(|(now, then)| now.saturating_sub(then) as f64 / 1e9),
    })
    .filter(|c| c.wall_s > 0.0)
}

/// What the collector needs of the plan.
fn collector_plan(ctx: &RunShared, phases: Phases) -> CollectorPlan {
    let plan = &ctx.plan;
    let s = &plan.settings;
    CollectorPlan {
        clients: s.clients,
        scripts: ctx.scripts.len(),
        progress: s.progress_s.map(|secs| {
            let format = progress::ProgressFormat {
                timestamp: plan.progress_timestamp,
                throttled: s.throttled(),
                latency_limit: s.latency_limit_us.is_some(),
                show_retries: !s.max_tries.is_single(),
            };
            (secs * 1_000_000, format)
        }),
        latency_limit_us: s.latency_limit_us,
        throttled: s.throttled(),
        // TPC-C's report ends with per-transaction percentiles, sysbench's
        // summary with its percentile.
        histograms: s.percentiles.is_some() || plan.export.any() || plan.workload.is_some(),
        series: plan.export.any() || plan.print_warnings,
        exit_on_abort: plan.exit_on_abort,
        epoch_shift_us: ctx.control.clock.epoch_shift_us,
        phases,
        duration_s: s.limit.duration(),
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
                .and_then(|log| log.finish(end_epoch_us))
        })
        .collect()
}
