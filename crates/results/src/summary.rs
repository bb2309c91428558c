//! The figures of pgbench's report as named numbers, at full precision: what a results
//! file's `summary` holds. For a pgbench-rs run they are computed from the
//! [`RunResult`] by the same formulas the report prints them with
//! ([`Summary::from_run`]); for an imported stock run they are read back from its text,
//! so a figure the text does not print is `None` (`null` in JSON). Compare and html
//! read only this, so runs of both origins compare alike.

use crate::histogram::LatencyHistogram;
use crate::run::{Limit, MaxTries, RunResult, ScriptResult};
use crate::stats::StatsData;
use serde::{Deserialize, Serialize};

/// The percentiles a summary lists (pgbench-rs's `--latency-percentiles` default).
pub const SUMMARY_PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// Failed transactions by kind.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Failures {
    pub total: i64,
    /// `None` when the run did not tell them apart (stock without `--failures-detailed`).
    pub serialization: Option<i64>,
    pub deadlock: Option<i64>,
    /// `--continue-on-error`'s other SQL failures (`None` without it).
    #[serde(default)]
    pub other: Option<i64>,
}

/// Latency percentiles from a histogram, in ms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PercentileSummary {
    /// `[percentile, ms]` pairs in ascending order.
    pub values: Vec<(f64, f64)>,
    pub max_ms: f64,
    /// Transactions in the histogram.
    pub count: u64,
}

impl PercentileSummary {
    pub fn from_histogram(h: &LatencyHistogram) -> Option<PercentileSummary> {
        if h.is_empty() {
            return None;
        }
        let p = h.percentiles(&SUMMARY_PERCENTILES);
        Some(PercentileSummary {
            values: p.values,
            max_ms: p.max,
            count: p.count,
        })
    }

    /// The latency at percentile `p`, if listed.
    pub fn at(&self, p: f64) -> Option<f64> {
        self.values.iter().find(|(q, _)| *q == p).map(|(_, v)| *v)
    }
}

/// One `-r` line: a command's average latency and what it caused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementSummary {
    pub command: String,
    pub latency_ms: f64,
    pub failures: i64,
    /// `None` where the report has no retries column (`--max-tries=1`) and the
    /// counter is not otherwise known.
    pub retries: Option<i64>,
}

/// One script's block of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptSummary {
    pub name: String,
    pub weight: Option<i64>,
    pub transactions: Option<i64>,
    pub tps: Option<f64>,
    pub failures: Option<Failures>,
    pub retried: Option<i64>,
    pub retries: Option<i64>,
    pub skipped: Option<i64>,
    pub latency_avg_ms: Option<f64>,
    pub latency_stddev_ms: Option<f64>,
    pub percentiles: Option<PercentileSummary>,
    /// `-r` lines, in script order; empty without `-r`.
    pub statements: Vec<StatementSummary>,
}

/// Every figure the report prints, plus percentiles.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Summary {
    pub transaction_type: Option<String>,
    pub scaling_factor: Option<i64>,
    pub partition_method: Option<String>,
    pub partitions: Option<i64>,
    pub query_mode: Option<String>,
    pub clients: Option<i64>,
    pub threads: Option<i64>,
    /// `--max-tries`; 0 means unlimited.
    pub max_tries: Option<i64>,
    /// `-t`.
    pub transactions_per_client: Option<i64>,
    /// `-T`.
    pub duration_s: Option<i64>,
    /// Successful transactions ("actually processed").
    pub transactions: Option<i64>,
    pub failures: Option<Failures>,
    pub retried: Option<i64>,
    pub retries: Option<i64>,
    /// `-R -L`: transactions skipped because they were already late.
    pub skipped: Option<i64>,
    /// `-L` in ms, and the successful transactions above it.
    pub latency_limit_ms: Option<f64>,
    pub late: Option<i64>,
    /// The report's `latency average`: measured per transaction with `-P`, `-R` or
    /// `-L`, otherwise derived from the run time (then `latency_avg_derived`).
    pub latency_avg_ms: Option<f64>,
    pub latency_avg_derived: bool,
    pub latency_stddev_ms: Option<f64>,
    pub lag_avg_ms: Option<f64>,
    pub lag_max_ms: Option<f64>,
    pub initial_connection_time_ms: Option<f64>,
    /// `-C`: average connection time per transaction.
    pub average_connection_time_ms: Option<f64>,
    pub tps: Option<f64>,
    /// Clients that aborted (the report is then incomplete).
    pub aborted_clients: Option<i64>,
    pub percentiles: Option<PercentileSummary>,
    pub scripts: Vec<ScriptSummary>,
    /// The figures a workload adds (its rates, say), under their own names.
    #[serde(flatten)]
    pub workload: crate::workload::SummaryFigures,
}

fn ms(us: f64) -> f64 {
    us / 1000.0
}

fn failures(s: &StatsData) -> Failures {
    Failures {
        total: s.failures(),
        serialization: Some(s.counts.serialization_failures),
        deadlock: Some(s.counts.deadlock_failures),
        other: (s.counts.other_sql_failures > 0).then_some(s.counts.other_sql_failures),
    }
}

impl Summary {
    /// The figures of `r`'s report, by the report's formulas, unrounded.
    pub fn from_run(r: &RunResult) -> Summary {
        let set = &r.settings;
        let t = &r.total;
        let ran = t.counts.cnt + t.counts.skipped > 0;
        let measured =
            set.throttled() || set.progress_s.is_some() || set.latency_limit_us.is_some();
        let (latency_avg_ms, latency_stddev_ms) = if !ran {
            (None, None)
        } else if measured {
            let some = t.latency.count > 0;
            (
                some.then(|| ms(t.latency.mean())),
                some.then(|| ms(t.latency.stddev())),
            )
        } else {
            (
                Some(ms(
                    r.bench_duration_us * set.clients as f64 / t.total() as f64
                )),
                None,
            )
        };
        Summary {
            transaction_type: Some(r.transaction_type().to_string()),
            scaling_factor: Some(i64::from(r.scale)),
            partition_method: r.partitions.as_ref().map(|p| p.method.clone()),
            partitions: r.partitions.as_ref().map(|p| i64::from(p.count)),
            query_mode: Some(set.query_mode.name().to_string()),
            clients: Some(set.clients as i64),
            threads: Some(set.threads as i64),
            max_tries: Some(match set.max_tries {
                MaxTries::Unlimited => 0,
                MaxTries::Limited(n) => i64::from(n),
            }),
            transactions_per_client: set.limit.transactions().map(i64::from),
            duration_s: match set.limit {
                Limit::Duration(s) => Some(s),
                Limit::Transactions(_) => None,
            },
            transactions: Some(t.counts.cnt),
            failures: Some(failures(t)),
            retried: Some(t.counts.retried),
            retries: Some(t.counts.retries),
            skipped: Some(t.counts.skipped),
            latency_limit_ms: set.latency_limit_us.map(|l| l as f64 / 1000.0),
            late: set.latency_limit_us.map(|_| r.latency_late),
            latency_avg_ms,
            latency_avg_derived: ran && !measured,
            latency_stddev_ms,
            lag_avg_ms: (ran && set.throttled()).then(|| ms(t.lag.sum / t.counts.cnt as f64)),
            lag_max_ms: (ran && set.throttled()).then(|| ms(t.lag.max)),
            initial_connection_time_ms: (ran && !set.reconnect)
                .then(|| ms(r.conn_elapsed_duration_us)),
            average_connection_time_ms: (ran && set.reconnect)
                .then(|| ms(r.conn_total_duration_us / (t.counts.cnt + t.failures()) as f64)),
            tps: ran.then(|| r.tps()),
            aborted_clients: Some(r.aborted_clients as i64),
            percentiles: r
                .histogram
                .as_ref()
                .and_then(PercentileSummary::from_histogram),
            scripts: r.scripts.iter().map(|s| script_summary(r, s)).collect(),
            workload: r
                .workload
                .as_ref()
                .map(|w| w.summary(r.bench_duration_us))
                .unwrap_or_default(),
        }
    }

    /// The first script's statements, or every script's when there are several, with
    /// the script's name: what compare and html list per statement.
    pub fn statements(&self) -> Vec<(String, &StatementSummary)> {
        self.scripts
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                s.statements
                    .iter()
                    .map(move |st| (format!("{}: {}", i + 1, s.name), st))
            })
            .collect()
    }
}

fn script_summary(r: &RunResult, s: &ScriptResult) -> ScriptSummary {
    let st = &s.stats;
    let secs = r.bench_duration_us / 1e6;
    let some = st.latency.count > 0;
    ScriptSummary {
        name: s.desc.clone(),
        weight: Some(s.weight),
        transactions: Some(st.counts.cnt),
        tps: Some(st.counts.cnt as f64 / secs),
        failures: Some(failures(st)),
        retried: Some(st.counts.retried),
        retries: Some(st.counts.retries),
        skipped: Some(st.counts.skipped),
        latency_avg_ms: some.then(|| ms(st.latency.mean())),
        latency_stddev_ms: some.then(|| ms(st.latency.stddev())),
        percentiles: s
            .histogram
            .as_ref()
            .and_then(PercentileSummary::from_histogram),
        statements: if r.settings.report_per_command {
            s.commands
                .iter()
                .map(|c| {
                    let e = &c.stats.elapsed;
                    StatementSummary {
                        command: c.first_line.clone(),
                        latency_ms: if e.count > 0 {
                            1000.0 * e.sum / e.count as f64
                        } else {
                            0.0
                        },
                        failures: c.stats.failures,
                        retries: Some(c.stats.retries),
                    }
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}
