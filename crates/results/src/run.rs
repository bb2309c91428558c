//! A finished run as plain data: how it was set up (the part of the options that
//! shapes the report), and every counter it measured. The runner's collector builds a
//! [`RunResult`]; the pgbench report, the percentiles section and the results file are
//! all rendered from it, and a results file read back renders the same report.

pub(crate) mod client_cpu;
pub mod ended;
pub mod phases;

use crate::histogram::LatencyHistogram;
use crate::series::Second;
use crate::stats::{CommandStats, StatsData};
use serde::{Deserialize, Serialize};

/// How queries are sent (`-M`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryMode {
    Simple,
    Extended,
    Prepared,
}

impl QueryMode {
    /// The name the report prints (`query mode: simple`) and `-M` takes.
    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }
}

/// What ends each client's run: `-t` or `-T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// `-t`: transactions per client (pgbench keeps it as a C int).
    Transactions(i32),
    /// `-T`: seconds from the start.
    Duration(i64),
}

impl Limit {
    /// The `-T` duration in seconds, if the run has one.
    pub fn duration(self) -> Option<i64> {
        match self {
            Limit::Duration(s) => Some(s),
            Limit::Transactions(_) => None,
        }
    }

    /// The `-t` count, if the run has one.
    pub fn transactions(self) -> Option<i32> {
        match self {
            Limit::Transactions(n) => Some(n),
            Limit::Duration(_) => None,
        }
    }
}

/// `--max-tries`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTries {
    /// `--max-tries=0`: retry as long as `-T` or `-L` allow.
    Unlimited,
    Limited(u32),
}

impl MaxTries {
    /// pgbench's `max_tries == 1`: failures are never retried (the report then leaves
    /// out the retry lines).
    pub fn is_single(self) -> bool {
        self == MaxTries::Limited(1)
    }

    /// Whether `tries` tries leave room for one more.
    pub fn allows_another(self, tries: u32) -> bool {
        match self {
            MaxTries::Unlimited => true,
            MaxTries::Limited(n) => tries < n,
        }
    }
}

/// The options that shape the report, with their units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    pub query_mode: QueryMode,
    pub clients: usize,
    /// `-j` after capping to the number of clients.
    pub threads: usize,
    pub limit: Limit,
    pub max_tries: MaxTries,
    pub failures_detailed: bool,
    /// pgbench 19's `--continue-on-error`: other SQL errors fail the transaction
    /// (counted as other failures) instead of aborting the client.
    #[serde(default)]
    pub continue_on_error: bool,
    /// `-R` as typed, transactions per second over all clients.
    pub rate: Option<f64>,
    /// `-L`.
    pub latency_limit_us: Option<i64>,
    /// `-P`.
    pub progress_s: Option<i64>,
    /// `-C`: a new connection per transaction.
    pub reconnect: bool,
    /// `-r`.
    pub report_per_command: bool,
    /// `--latency-percentiles`: which ones to print after the report.
    pub percentiles: Option<Vec<f64>>,
}

impl RunSettings {
    /// A run for tests to change what matters to them (`RunSettings { clients: 4,
    /// ..RunSettings::for_test() }`): pgbench's defaults, `-t 10`, no extras.
    #[cfg(any(test, feature = "synthetic"))]
    pub fn for_test() -> RunSettings {
        RunSettings {
            query_mode: QueryMode::Simple,
            clients: 1,
            threads: 1,
            limit: Limit::Transactions(10),
            max_tries: MaxTries::Limited(1),
            failures_detailed: false,
            continue_on_error: false,
            rate: None,
            latency_limit_us: None,
            progress_s: None,
            reconnect: false,
            report_per_command: false,
            percentiles: None,
        }
    }

    /// `-R` is on.
    pub fn throttled(&self) -> bool {
        self.rate.is_some()
    }
}

/// How `pgbench_accounts` is partitioned (from the setup phase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partitions {
    /// `range` or `hash`.
    pub method: String,
    pub count: i32,
}

/// One command of a script and its `-r` counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandResult {
    /// The command's first line as written (what `-r` prints).
    pub first_line: String,
    pub stats: CommandStats,
}

/// One script of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptResult {
    /// What the report calls it: a file name, or `<builtin: ...>`.
    pub desc: String,
    pub weight: i64,
    pub stats: StatsData,
    /// Every command in script order (counters are zero without `-r`).
    pub commands: Vec<CommandResult>,
    /// Latencies of its successful transactions, when the run kept histograms. A
    /// lone script's are the run's: a results file stores them once, as
    /// [`RunResult::histogram`] (see [`RunResult`]'s `Deserialize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<LatencyHistogram>,
}

/// Everything a run measured.
///
/// Serialised, a lone script's histogram is left out: it is the run's, which is
/// written (schema 4; versions 1 to 3 wrote both). Read back, the script gets a copy
/// of the run's again, so every reader sees the model the run made. The derives write
/// the inherent `RunResult::serialize` and `RunResult::deserialize` (serde's `remote =
/// "Self"`); the trait impls below wrap them, and are what serde and every caller
/// must use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct RunResult {
    pub settings: RunSettings,
    /// The scale the report prints: `-s`, or `pgbench_branches`' count with a builtin.
    pub scale: i32,
    pub partitions: Option<Partitions>,
    pub total: StatsData,
    #[serde(serialize_with = "lone_script_without_histogram")]
    pub scripts: Vec<ScriptResult>,
    /// The measured part's length: from the clients' start (or the end of
    /// `--warmup`) to the end of the run, which a signal may have brought forward.
    pub bench_duration_us: f64,
    /// `-C`: time spent connecting and disconnecting, summed over clients.
    pub conn_total_duration_us: f64,
    /// From program start to the clients' start (the initial connections).
    pub conn_elapsed_duration_us: f64,
    /// Successful transactions over the `-L` limit.
    pub latency_late: i64,
    /// Clients that aborted; the report is then incomplete (exit status 2).
    pub aborted_clients: usize,
    /// Transactions in doubt: their connection was lost (or their client aborted or
    /// was stopped) after they sent a statement that may commit, so the server may
    /// have committed them; successful ≤ rows written ≤ successful + in doubt. Those
    /// that failed are also in `total`'s failures (`total.in_doubt` of them); the
    /// rest were cut short and counted nowhere else. Files written before it was
    /// counted read as 0.
    #[serde(default)]
    pub in_doubt: i64,
    /// Latencies of every successful transaction, when the run kept histograms.
    pub histogram: Option<LatencyHistogram>,
    /// Per-second figures, when the run recorded them (`--export-json`).
    pub series: Vec<Second>,
    /// `--warmup`: what ran before the measured part, which nothing above counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Warmup>,
    /// `--workload`: the workload's own part, stored under its workload's key.
    #[serde(flatten, with = "crate::workload::section")]
    pub workload: Option<crate::workload::WorkloadResult>,
    /// `--server-stats`: what the server did in the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::server::ServerStats>,
    /// The client process's CPU time over the run (for the client-bottleneck check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu: Option<client_cpu::ClientCpu>,
    /// How the run ended (to its end, or stopped early); `None` in files written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<ended::Ended>,
    /// The run's phases (the warm-up, the measured part) on its clock; empty in files
    /// written before they were recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<phases::PhaseSpan>,
    /// `--reconnect`: the outages the clients rode through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<crate::availability::Availability>,
    /// `--scenarios`: each scenario's figures; empty without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<crate::scenarios::ScenarioResult>,
    /// `--rate-stages`, `--client-stages`: each stage's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<crate::stages::Stages>,
}

impl Serialize for RunResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RunResult::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for RunResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RunResult, D::Error> {
        let mut run = RunResult::deserialize(d)?;
        // A file of schema 4 left it out; one of 1 to 3 has its own copy.
        if let [script] = run.scripts.as_mut_slice() {
            if script.histogram.is_none() {
                script.histogram.clone_from(&run.histogram);
            }
        }
        Ok(run)
    }
}

/// A run's scripts as a results file stores them: a lone script without its
/// histogram (the run's), several with theirs.
fn lone_script_without_histogram<S: serde::Serializer>(
    scripts: &[ScriptResult],
    s: S,
) -> Result<S::Ok, S::Error> {
    match scripts {
        [lone] => {
            // Every field but the histogram; listed, so that a new one is not missed.
            let stored = ScriptResult {
                desc: lone.desc.clone(),
                weight: lone.weight,
                stats: lone.stats,
                commands: lone.commands.clone(),
                histogram: None,
            };
            [stored].serialize(s)
        }
        several => several.serialize(s),
    }
}

/// The warm-up of a run (`--warmup`), kept apart from what was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// `--warmup` as given.
    pub seconds: i64,
    /// Its transactions (those that ended before the measured part began).
    pub total: StatsData,
    /// Its per-second figures, `t` counted from the clients' start (when the run
    /// recorded a series); the run's own series starts where this one ends.
    pub series: Vec<Second>,
}

impl RunResult {
    /// tps as the report computes it: successful transactions over the run's time.
    pub fn tps(&self) -> f64 {
        self.total.counts.cnt as f64 / (self.bench_duration_us / 1e6)
    }

    /// The description the report's first line gives.
    pub fn transaction_type(&self) -> &str {
        if self.scripts.len() > 1 {
            "multiple scripts"
        } else {
            self.scripts.first().map(|s| s.desc.as_str()).unwrap_or("")
        }
    }
}
