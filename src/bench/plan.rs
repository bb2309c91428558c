//! The benchmark to run, validated and typed: what the command line asked for, in the
//! runner's own terms. The CLI builds a [`BenchPlan`] once; nothing in `bench` reads
//! the command line. The settings that shape the report are
//! `pgbench_results::RunSettings`, shared with the result.

use super::barrier::WorkerPlan;
use pgbench_results::RunSettings;
use pgbench_script::ast::Script;

/// A script to run and its weight (`-f FILE@W`, `-b NAME@W`).
#[derive(Debug, Clone)]
pub struct WeightedScript {
    pub script: Script,
    pub weight: i64,
    /// Its `\sleep`s are pauses between transactions, not part of them: outside the
    /// transaction's latency, and cut short at the end of `-T` (a workload's keying
    /// and thinking times; a script of `-f` keeps pgbench's timed sleeps).
    pub untimed_sleeps: bool,
    /// Under `-M prepared`, its statements are prepared when a client connects (a
    /// workload whose tool does so), not each at its first execution.
    pub prepare_on_connect: bool,
}

/// `-l` and its companions.
#[derive(Debug, Clone, PartialEq)]
pub struct LogPlan {
    /// `--log-prefix`, `pgbench_log` by default.
    pub prefix: String,
    /// `--sampling-rate`: the fraction of transactions logged.
    pub sample_rate: Option<f64>,
    /// `--aggregate-interval`: a line per interval instead of per transaction.
    pub aggregate_interval_s: Option<i64>,
}

/// The vacuum before the run (`-n`, `-v`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vacuum {
    /// `-n`.
    Skip,
    /// The small tables (and truncate the history), as pgbench does by default.
    Default,
    /// `-v`: `pgbench_accounts` too.
    All,
}

/// The scale: `-s` as given, and whether it was (a builtin script then reads the
/// real one from `pgbench_branches` and warns that `-s` is ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    pub value: i32,
    pub given: bool,
}

/// Everything benchmarking mode needs.
#[derive(Debug, Clone)]
pub struct BenchPlan {
    pub scripts: Vec<WeightedScript>,
    /// A builtin script is among them (the scale then comes from `pgbench_branches`).
    pub builtin_used: bool,
    pub settings: RunSettings,
    /// `--progress-timestamp`.
    pub progress_timestamp: bool,
    pub log: Option<LogPlan>,
    pub verbose_errors: bool,
    /// pgbench 17's `--exit-on-abort`.
    pub exit_on_abort: bool,
    /// `-D` definitions in command-line order (name, value).
    pub defines: Vec<(String, String)>,
    pub scale: Scale,
    pub vacuum: Vacuum,
    /// `-d`.
    pub debug: bool,
    /// The base random seed (`--random-seed`, `PGBENCH_RANDOM_SEED`, or the clock).
    pub random_seed: u64,
    /// `--worker=I/N`.
    pub worker: Option<WorkerPlan>,
    /// The run's phases: `--warmup`, seconds the clients run before the measured part
    /// (of `-T` seconds, or `-t` transactions per client) begins; nothing done in them
    /// is counted.
    pub phases: super::phases::PhasePlan,
    /// `--workload=NAME`: its tables are checked before the run.
    pub workload: Option<std::sync::Arc<dyn super::RunWorkload>>,
    /// `--metrics-listen`, `--metrics-linger`.
    pub metrics: Option<crate::metrics::MetricsPlan>,
    /// `--server-stats`; `print`: `--print-server-stats`, its block after the report.
    pub server_stats: Option<ServerStatsPlan>,
    /// `--print-warnings`: the validity checks' warnings after the report.
    pub print_warnings: bool,
    /// `--reconnect`: clients ride through a lost connection (docs/availability.md).
    pub availability: Option<AvailabilityPlan>,
    /// `--os-threads`: how many OS threads run the `-j` threads (default: one per
    /// CPU, at most `-j`; see [`super::threads::os_threads`]).
    pub os_threads: Option<usize>,
    /// What the run keeps beyond the counters every report needs: decided by its
    /// caller (what the report, the results files or a sweep's step will read of it),
    /// not by the run.
    pub keep: Keep,
    /// `--scenarios`: groups of the clients, threads and scripts above, each with its
    /// own rate and target; empty for a run of one group ([`super::scenario`] runs them).
    pub scenarios: Vec<ScenarioPlan>,
    /// `--rate-stages`, `--client-stages`: the load's shape over the run.
    pub stages: Option<super::stages::StagePlan>,
}

/// One scenario as the engine runs it, from a `[[scenario]]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioPlan {
    pub name: String,
    /// Its scripts: this range of the plan's.
    pub scripts: std::ops::Range<usize>,
    pub clients: usize,
    pub threads: usize,
    /// Its `-R`, transactions per second over its threads.
    pub rate: Option<f64>,
    /// Its conninfo (a string or URI), over the command line's connection options.
    pub conninfo: Option<String>,
    /// Its `rate_stages` or `client_stages`: its own rate or active clients over the
    /// run, which its stages last.
    pub stages: Option<super::stages::StagePlan>,
}

/// What a run keeps beyond the counters every report needs: each costs memory and
/// time in the clients or the collector, so a run keeps only what its caller will read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Keep {
    /// The latency histograms (percentiles, a results file, a workload's report).
    pub histograms: bool,
    /// The per-second series (a results file, the validity warnings).
    pub series: bool,
    /// The server's settings, read once before the run (a results file).
    pub server_settings: bool,
    /// The counters per command of each script, which only `-r` prints (its report
    /// lines, the statements of the results file). Each client keeps a set of its own
    /// (pgbench's one set is shared by its threads without a lock) for every command
    /// of every script, 273 KiB a client for a sysbench script of 250 tables (5,000
    /// commands): a run without `-r` keeps none, and its result lists the commands
    /// with their counters at zero.
    pub commands: bool,
}

impl Keep {
    /// The histograms and the series as well: a run whose figures are all read
    /// afterwards (a sweep's step, whose line and curve come from both).
    pub fn with_figures(self) -> Keep {
        Keep {
            histograms: true,
            series: true,
            ..self
        }
    }
}

/// `--reconnect`'s default `--reconnect-timeout`: a minute.
pub const DEFAULT_RECONNECT_TIMEOUT_US: i64 = 60_000_000;

/// `--reconnect` as asked: a client whose connection is lost (or whose server refuses
/// work on it: shutting down, read-only) counts the transaction in flight as failed,
/// connects again, and goes on with its script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AvailabilityPlan {
    /// `--reconnect-timeout`, µs: a client that cannot connect again within it aborts.
    pub timeout_us: i64,
}

/// `--server-stats` as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerStatsPlan {
    pub print: bool,
}

impl BenchPlan {
    /// What `--metrics-listen`'s live values are kept for ([`crate::metrics::start`]).
    pub fn live_plan(&self) -> crate::metrics::LivePlan {
        let s = &self.settings;
        crate::metrics::LivePlan {
            scripts: self.scripts.iter().map(|w| w.script.desc.clone()).collect(),
            weights: self.scripts.iter().map(|w| w.weight).collect(),
            clients: s.clients,
            throttled: s.throttled(),
            latency_limit_us: s.latency_limit_us,
            limit: s.limit,
            interval_us: s.progress_s.unwrap_or(1) * 1_000_000,
            reconnecting: self.availability.is_some(),
        }
    }

    /// The labels `--metrics-listen` serves its values under.
    pub fn metric_labels(&self) -> crate::metrics::encode::Labels {
        crate::metrics::encode::Labels {
            worker: self.worker.as_ref().map(|w| w.index),
            step: None,
            scripts: self
                .scripts
                .iter()
                .map(|w| (w.script.desc.clone(), w.weight))
                .collect(),
            scenarios: self
                .scenarios
                .iter()
                .flat_map(|s| std::iter::repeat_n(s.name.clone(), s.scripts.len()))
                .collect(),
        }
    }
    /// The mean delay between two `-R` transactions of one pgbench thread, µs.
    /// Computed in pgbench's order (`1e6 / rate`, then `* nthreads`), so the Poisson
    /// schedule draws the same values for the same seed.
    pub fn throttle_delay_us(&self) -> Option<f64> {
        self.settings
            .rate
            .map(|rate| 1_000_000.0 / rate * self.settings.threads as f64)
    }

    /// `-L`, µs.
    pub fn latency_limit_us(&self) -> Option<i64> {
        self.settings.latency_limit_us
    }

    /// The pgbench number of this process's first client: `I*C` under `--worker`, else 0.
    pub fn first_client(&self) -> usize {
        self.worker
            .as_ref()
            .map_or(0, |w| w.index as usize * self.settings.clients)
    }

    /// The pgbench number of this process's first thread: `I*J` under `--worker`, else 0.
    pub fn first_thread(&self) -> usize {
        self.worker
            .as_ref()
            .map_or(0, |w| w.index as usize * self.settings.threads)
    }

    /// Recomputes the digests `--worker` compares between workers (`digests`: the
    /// command line's, read from its option table) after the plan changed (a sweep's
    /// step); a plan without `--worker` has none.
    pub fn refresh_worker_digests(&mut self, digests: impl FnOnce(&BenchPlan) -> String) {
        if self.worker.is_some() {
            let digests = digests(self);
            if let Some(w) = self.worker.as_mut() {
                w.option_digests = digests;
            }
        }
    }

    /// Whether `-D` set this variable (then the automatic one is not set).
    pub fn defines_variable(&self, name: &str) -> bool {
        self.defines.iter().any(|(n, _)| n == name)
    }
}
