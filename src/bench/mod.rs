//! Benchmarking mode: connect, look at the tables, vacuum, run the clients, report.
//! Mirrors the part of pgbench.c `main()` after option parsing, and `threadRun`.
//!
//! Data flow: one OS thread per client ([`client`]) on its own blocking connection;
//! clients of one pgbench thread (`-j`) share that thread's random states, `-R`
//! schedule and log file ([`ThreadShared`]); every client sends batches of
//! [`TxRecord`]s over a crossbeam channel to the stats thread ([`collector`]), which
//! prints `progress:` lines and builds the final [`report`].

pub mod client;
pub mod collector;
pub mod conditional;
pub mod progress;
pub mod setup;
pub mod txlog;

pub use pgbench_results::{histogram as percentiles, report, stats};

use crate::cli::options::{BenchOptions, Common, QueryMode};
use crate::logging;
use pgbench_script::ast::{CommandKind, Script};
use pgbench_script::prng::{Prng, SeedPlan};
use pgbench_wire::{ConnectArgs, ConnectOptions};
use stats::{CommandStats, TxOutcome};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The run's clock: CLOCK_MONOTONIC in µs, as pgbench's `pg_time_now()`. Read a few
/// times per transaction, so it goes straight to the vDSO.
#[inline]
pub fn now_us() -> i64 {
    crate::sys::monotonic_us()
}

/// Unix time in µs.
pub fn epoch_now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// One finished (or skipped, or failed) transaction, as the stats thread sees it.
#[derive(Debug, Clone, Copy)]
pub struct TxRecord {
    pub script: u32,
    pub outcome: TxOutcome,
    /// µs
    pub latency: f64,
    /// µs
    pub lag: f64,
    pub tries: u32,
}

/// What clients send the stats thread.
pub enum StatsMsg {
    Batch(Vec<TxRecord>),
    /// A client is done: its `-r` counters and `-C` connection time.
    ClientDone {
        aborted: bool,
        commands: Vec<Vec<CommandStats>>,
        conn_duration_us: f64,
        /// When the client finished, µs on the run clock.
        end_us: i64,
    },
}

/// A script ready to run: the parsed script plus what the query modes need.
pub struct RunScript {
    pub script: Script,
    pub weight: i64,
    /// `$n` text of each SQL command (empty for meta-commands).
    pub parameterized: Vec<String>,
    /// Prepared statement names (`P_0`, `P_1`, ... over all scripts).
    pub prepared_names: Vec<String>,
}

/// What every client reads.
pub struct Shared {
    pub scripts: Vec<RunScript>,
    pub weights: Vec<i64>,
    pub conn_opts: ConnectOptions,
    pub query_mode: QueryMode,
    pub nxacts: i64,
    pub duration: i64,
    pub is_connect: bool,
    /// Per-thread mean delay of `-R`, µs.
    pub throttle_delay: f64,
    /// `-L`, µs.
    pub latency_limit: i64,
    pub max_tries: u32,
    pub verbose_errors: bool,
    pub report_per_command: bool,
    pub use_log: bool,
    pub debug: bool,
    /// Unix µs minus run-clock µs.
    pub epoch_shift_us: i64,
    /// End of a `-T` run on the run clock (set when the clients start), 0 = none yet.
    end_time: AtomicI64,
    pub stats_tx: crossbeam_channel::Sender<StatsMsg>,
}

impl Shared {
    /// `timer_exceeded`: the `-T` duration is over.
    #[inline]
    pub fn timer_exceeded(&self) -> bool {
        let end = self.end_time.load(Ordering::Relaxed);
        self.duration > 0 && end > 0 && now_us() >= end
    }

    /// The end of a `-T` run, µs on the run clock.
    pub fn end_time_us(&self) -> i64 {
        self.end_time.load(Ordering::Relaxed)
    }
}

/// The state one pgbench thread shares among its clients.
pub struct ThreadShared {
    pub id: usize,
    state: Mutex<ThreadState>,
}

/// Behind the thread's lock.
pub struct ThreadState {
    pub choose_rng: Prng,
    pub throttle_rng: Prng,
    /// Next `-R` slot, µs on the run clock.
    pub throttle_trigger: i64,
    pub log: Option<txlog::ThreadLog>,
}

impl ThreadShared {
    pub fn lock(&self) -> MutexGuard<'_, ThreadState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// pgbench's deal of clients to threads: thread i gets the next
/// `(nclients - dealt + nthreads - i - 1) / (nthreads - i)` clients.
pub fn deal_clients(nclients: usize, nthreads: usize) -> Vec<usize> {
    let mut dealt = 0;
    (0..nthreads)
        .map(|i| {
            let n = (nclients - dealt + nthreads - i - 1) / (nthreads - i);
            dealt += n;
            n
        })
        .collect()
}

fn run_scripts(bench: &BenchOptions) -> Vec<RunScript> {
    let mut next_prepared = 0;
    bench
        .scripts
        .iter()
        .map(|ws| {
            let mut parameterized = Vec::new();
            let mut prepared_names = Vec::new();
            for cmd in &ws.script.commands {
                match &cmd.kind {
                    CommandKind::Sql(sql) => {
                        parameterized.push(sql.parameterized_text());
                        prepared_names.push(format!("P_{next_prepared}"));
                        next_prepared += 1;
                    }
                    CommandKind::Meta(_) => {
                        parameterized.push(String::new());
                        prepared_names.push(String::new());
                    }
                }
            }
            RunScript {
                script: ws.script.clone(),
                weight: ws.weight,
                parameterized,
                prepared_names,
            }
        })
        .collect()
}

/// Runs the benchmark; returns the exit status (0, or 2 when a client aborted).
pub fn run(mut conn_args: ConnectArgs, bench: &BenchOptions, common: &Common) -> i32 {
    let epoch_shift_us = epoch_now_us() - now_us();

    // Every random state, derived in pgbench's order.
    let defined = |name: &str| bench.defines.iter().any(|(n, _)| n == name);
    let seeds = SeedPlan::new(
        common.random_seed,
        bench.nclients,
        bench.nthreads,
        defined("default_seed"),
    );

    let (setup, conn_opts) = match setup::prepare(&mut conn_args, bench, common) {
        Ok(s) => s,
        Err(code) => return code,
    };

    // Client variables: -D first, then the automatic ones unless -D set them.
    let mut base_vars = pgbench_script::variables::Variables::new();
    for (name, value) in &bench.defines {
        if let Err(e) = base_vars.set_text("option", name, value) {
            logging::error(&e.to_string());
            return 1;
        }
    }
    let client_vars: Vec<_> = (0..bench.nclients)
        .map(|i| {
            let mut v = base_vars.clone();
            if !defined("scale") {
                let _ = v.set_int("startup", "scale", i64::from(setup.scale));
            }
            if !defined("client_id") {
                let _ = v.set_int("startup", "client_id", i as i64);
            }
            if let Some(seed) = seeds.default_seed {
                let _ = v.set_int("startup", "default_seed", seed);
            }
            if !defined("random_seed") {
                let _ = v.set_int("startup", "random_seed", seeds.random_seed);
            }
            v
        })
        .collect();

    let (stats_tx, stats_rx) = crossbeam_channel::unbounded();
    let scripts = run_scripts(bench);
    let shared = Shared {
        weights: scripts.iter().map(|s| s.weight).collect(),
        scripts,
        conn_opts,
        query_mode: bench.query_mode,
        nxacts: bench.nxacts,
        duration: bench.duration,
        is_connect: bench.is_connect,
        throttle_delay: bench.throttle_delay,
        latency_limit: bench.latency_limit,
        max_tries: bench.max_tries,
        verbose_errors: bench.verbose_errors,
        report_per_command: bench.report_per_command,
        use_log: bench.use_log,
        debug: common.debug,
        epoch_shift_us,
        end_time: AtomicI64::new(0),
        stats_tx,
    };
    let log_fmt = txlog::LogFormat {
        throttled: bench.throttle_delay > 0.0,
        latency_limit: bench.latency_limit > 0,
        max_tries: bench.max_tries,
        failures_detailed: bench.failures_detailed,
        agg_interval: bench.agg_interval,
        sample_rate: bench.sample_rate,
    };
    let pid = std::process::id();
    let prefix = bench.log_prefix.as_deref().unwrap_or("pgbench_log");
    let mut threads = Vec::with_capacity(bench.nthreads);
    for (t, ts) in seeds.threads.iter().enumerate() {
        let log = if bench.use_log {
            let path = txlog::log_file_name(prefix, pid, t);
            // The first aggregate interval starts at the run's start; set below.
            match txlog::ThreadLog::create(&path, log_fmt, epoch_now_us(), ts.sample.clone()) {
                Ok(l) => Some(l),
                Err(e) => {
                    logging::error(&format!(
                        "could not open logfile \"{path}\": {}",
                        crate::sys::strerror(&e)
                    ));
                    return 1;
                }
            }
        } else {
            None
        };
        threads.push(ThreadShared {
            id: t,
            state: Mutex::new(ThreadState {
                choose_rng: ts.choose.clone(),
                throttle_rng: ts.throttle.clone(),
                throttle_trigger: 0,
                log,
            }),
        });
    }
    let deal = deal_clients(bench.nclients, bench.nthreads);
    let mut thread_of_client = Vec::with_capacity(bench.nclients);
    for (t, n) in deal.iter().enumerate() {
        thread_of_client.extend(std::iter::repeat_n(t, *n));
    }

    let collector_cfg = collector::Config {
        nclients: bench.nclients,
        nscripts: shared.scripts.len(),
        progress_s: bench.progress,
        progress_fmt: progress::ProgressFormat {
            timestamp: bench.progress_timestamp,
            throttled: bench.throttle_delay > 0.0,
            latency_limit: bench.latency_limit > 0,
            max_tries: bench.max_tries,
        },
        latency_limit: bench.latency_limit,
        throttled: bench.throttle_delay > 0.0,
        epoch_shift_us,
        histograms: bench.latency_percentiles.is_some(),
    };

    // pgbench: the start-up time that "initial connection time" counts from is taken
    // after setup and vacuum, right before the threads start.
    let start_time = now_us();
    let barrier = std::sync::Barrier::new(bench.nclients + 1);
    let connect_failed = std::sync::atomic::AtomicBool::new(false);
    let exit_on_abort = bench.exit_on_abort;
    let (collected, bench_start, end) = std::thread::scope(|scope| {
        let shared = &shared;
        let barrier = &barrier;
        let threads = &threads;
        let connect_failed = &connect_failed;
        let mut handles = Vec::with_capacity(bench.nclients);
        for (id, (vars, rng)) in client_vars.into_iter().zip(seeds.clients).enumerate() {
            let thread = &threads[thread_of_client[id]];
            let handle = std::thread::Builder::new()
                .name(format!("client {id}"))
                // As pthread's default (8 MiB): evaluation recurses over the expression
                // tree, which a long `1+1+...` chain makes deep. Only touched pages count.
                .stack_size(8 * 1024 * 1024)
                .spawn_scoped(scope, move || {
                    let mut c = client::Client::new(id, shared, thread, vars, rng);
                    if !shared.is_connect {
                        if let Err(msg) = c.connect_initial() {
                            // pgbench: a fatal error, the whole run exits at once. Only
                            // the first client to fail says so.
                            if !connect_failed.swap(true, Ordering::SeqCst) {
                                logging::error(&msg);
                                logging::error(&format!(
                                    "could not create connection for client {id}"
                                ));
                                std::process::exit(1);
                            }
                        }
                    }
                    // Everyone is connected; the main thread sets the start.
                    barrier.wait();
                    barrier.wait();
                    let exit = c.run();
                    let aborted = exit == client::ClientExit::Aborted;
                    if aborted && exit_on_abort {
                        // pgbench 17: the whole run stops, no report.
                        for t in threads.iter() {
                            if let Some(log) = t.lock().log.as_mut() {
                                let _ = log.finish(epoch_now_us());
                            }
                        }
                        logging::error(&format!(
                            "Run was aborted due to an error in thread {}",
                            thread.id
                        ));
                        std::process::exit(2);
                    }
                    let (commands, conn_duration_us) = c.into_results();
                    let _ = shared.stats_tx.send(StatsMsg::ClientDone {
                        aborted,
                        commands,
                        conn_duration_us,
                        end_us: now_us(),
                    });
                })
                .unwrap_or_else(|e| {
                    // As pgbench's pg_fatal: the threads already started wait at the
                    // barrier, and exiting ends them.
                    logging::error(&format!(
                        "could not create thread: {}",
                        crate::sys::strerror(&e)
                    ));
                    std::process::exit(1)
                });
            handles.push(handle);
        }
        barrier.wait();
        let bench_start = now_us();
        if bench.duration > 0 {
            // pgbench sets its alarm when the threads are created, before they
            // connect: -T counts from the start-up time.
            shared
                .end_time
                .store(start_time + bench.duration * 1_000_000, Ordering::SeqCst);
        }
        for t in threads.iter() {
            let mut st = t.lock();
            st.throttle_trigger = bench_start;
            if let Some(log) = st.log.as_mut() {
                log.restart_intervals(bench_start + epoch_shift_us);
            }
        }
        barrier.wait();
        let collected = collector::collect(&collector_cfg, &stats_rx, start_time);
        for h in handles {
            let _ = h.join();
        }
        // pgbench's run ends when its last thread does.
        let end = collected.last_client_end.max(bench_start);
        for t in threads.iter() {
            if let Some(log) = t.lock().log.as_mut() {
                if let Err(e) = log.finish(end + epoch_shift_us) {
                    logging::error(&format!("could not write to log file: {e}"));
                }
            }
        }
        (collected, bench_start, end)
    });

    let result = pgbench_results::RunResult {
        settings: pgbench_results::RunSettings {
            query_mode: bench.query_mode,
            clients: bench.nclients,
            threads: bench.nthreads,
            limit: if bench.duration > 0 {
                pgbench_results::Limit::Duration(bench.duration)
            } else {
                pgbench_results::Limit::Transactions(bench.nxacts as i32)
            },
            max_tries: if bench.max_tries == 0 {
                pgbench_results::MaxTries::Unlimited
            } else {
                pgbench_results::MaxTries::Limited(bench.max_tries)
            },
            failures_detailed: bench.failures_detailed,
            rate: (bench.throttle_delay > 0.0)
                .then(|| 1e6 * bench.nthreads as f64 / bench.throttle_delay),
            latency_limit_us: (bench.latency_limit > 0).then_some(bench.latency_limit),
            progress_s: (bench.progress > 0).then_some(bench.progress),
            reconnect: bench.is_connect,
            report_per_command: bench.report_per_command,
            percentiles: bench.latency_percentiles.clone(),
        },
        scale: setup.scale,
        partitions: setup
            .partitions
            .map(|(method, count)| pgbench_results::Partitions {
                method: method.to_string(),
                count,
            }),
        total: collected.total,
        bench_duration_us: (end - bench_start) as f64,
        conn_total_duration_us: collected.conn_total_duration_us,
        conn_elapsed_duration_us: (bench_start - start_time) as f64,
        latency_late: collected.latency_late,
        aborted_clients: collected.aborted,
        histogram: bench
            .latency_percentiles
            .is_some()
            .then(|| collected.histogram.clone()),
        series: Vec::new(),
        scripts: shared
            .scripts
            .iter()
            .enumerate()
            .map(|(i, s)| pgbench_results::ScriptResult {
                desc: s.script.desc.clone(),
                weight: s.weight,
                stats: collected.per_script[i],
                commands: s
                    .script
                    .commands
                    .iter()
                    .zip(&collected.commands[i])
                    .map(|(c, st)| pgbench_results::CommandResult {
                        first_line: c.first_line.clone(),
                        stats: *st,
                    })
                    .collect(),
                histogram: bench
                    .latency_percentiles
                    .is_some()
                    .then(|| collected.script_histograms[i].clone()),
            })
            .collect(),
    };
    let text = report::render(&result);
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
    if collected.aborted > 0 {
        logging::error("Run was aborted; the above results are incomplete.");
        return 2;
    }
    0
}
