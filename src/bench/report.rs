//! The final report's text. Mirrors pgbench.c `printResults()` of pgbench 15 line by
//! line (order, wording, number formats), then pgbench-rs's latency percentiles when
//! asked for. Pure: no I/O, no clocks.

use super::percentiles::Percentiles;
use super::stats::{CommandStats, StatsData};
use crate::cli::options::QueryMode;
use std::fmt::Write;

/// Formats `v` like PostgreSQL's `snprintf` with `%.<prec>f`: `NaN`, `Infinity` and
/// `-Infinity` spelled out, everything else as C prints it.
pub fn fmt_f(v: f64, prec: usize) -> String {
    if v.is_nan() {
        "NaN".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        format!("{v:.prec$}")
    }
}

/// One script as the report names it.
#[derive(Debug, Clone)]
pub struct ScriptReport {
    pub desc: String,
    pub weight: i64,
    pub stats: StatsData,
    /// `first_line` and counters of each command, in script order.
    pub commands: Vec<(String, CommandStats)>,
    pub percentiles: Option<Percentiles>,
}

/// Everything the report shows.
#[derive(Debug, Clone)]
pub struct Report {
    pub scale: i32,
    /// `(method, count)` when pgbench_accounts is partitioned.
    pub partitions: Option<(&'static str, i32)>,
    pub query_mode: QueryMode,
    pub nclients: usize,
    pub nthreads: usize,
    pub max_tries: u32,
    /// `-t` per client (0 under `-T`).
    pub nxacts: i64,
    /// `-T` seconds (0 under `-t`).
    pub duration: i64,
    pub failures_detailed: bool,
    /// `-R` is on.
    pub throttled: bool,
    /// `-L` in µs, 0 when off.
    pub latency_limit: i64,
    /// `-P` is on.
    pub progress: bool,
    pub is_connect: bool,
    pub report_per_command: bool,
    pub total: StatsData,
    /// From the first client's start to the end of the run, µs.
    pub bench_duration_us: f64,
    /// Time spent connecting and disconnecting, summed over threads, µs (`-C`).
    pub conn_total_duration_us: f64,
    /// From program start to the first client's start, µs.
    pub conn_elapsed_duration_us: f64,
    /// Successful transactions over the `-L` limit.
    pub latency_late: i64,
    pub scripts: Vec<ScriptReport>,
    /// Whole-run latency percentiles (`--latency-percentiles`).
    pub percentiles: Option<Percentiles>,
}

fn pct(part: i64, whole: i64) -> String {
    fmt_f(100.0 * part as f64 / whole as f64, 3)
}

fn simple_stats(out: &mut String, prefix: &str, s: &super::stats::SimpleStats) {
    if s.count > 0 {
        let _ = writeln!(out, "{prefix} average = {} ms", fmt_f(0.001 * s.mean(), 3));
        let _ = writeln!(out, "{prefix} stddev = {} ms", fmt_f(0.001 * s.stddev(), 3));
    }
}

impl Report {
    /// The text pgbench prints on stdout after the run.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(2048);
        self.render_pgbench(&mut out);
        self.render_percentiles(&mut out);
        out
    }

    fn render_pgbench(&self, out: &mut String) {
        let total = &self.total;
        let failures = total.failures();
        let total_cnt = total.total();
        let bench_duration = self.bench_duration_us / 1e6;
        let tps = total.cnt as f64 / bench_duration;
        let per_script_stats = self.scripts.len() > 1;
        let desc = if per_script_stats {
            "multiple scripts"
        } else {
            self.scripts.first().map(|s| s.desc.as_str()).unwrap_or("")
        };

        let _ = writeln!(out, "transaction type: {desc}");
        let _ = writeln!(out, "scaling factor: {}", self.scale);
        if let Some((method, n)) = self.partitions {
            let _ = writeln!(out, "partition method: {method}\npartitions: {n}");
        }
        let _ = writeln!(out, "query mode: {}", self.query_mode.name());
        let _ = writeln!(out, "number of clients: {}", self.nclients);
        let _ = writeln!(out, "number of threads: {}", self.nthreads);
        if self.max_tries != 0 {
            let _ = writeln!(out, "maximum number of tries: {}", self.max_tries);
        }
        if self.duration <= 0 {
            let _ = writeln!(out, "number of transactions per client: {}", self.nxacts);
            let _ = writeln!(
                out,
                "number of transactions actually processed: {}/{}",
                total.cnt,
                // pgbench multiplies two ints.
                (self.nxacts as i32).wrapping_mul(self.nclients as i32)
            );
        } else {
            let _ = writeln!(out, "duration: {} s", self.duration);
            let _ = writeln!(
                out,
                "number of transactions actually processed: {}",
                total.cnt
            );
        }
        self.failure_lines(out, "", total);
        // pgbench: the remaining figures are nonsensical if nothing ran.
        if total.cnt + total.skipped <= 0 {
            return;
        }
        if self.throttled && self.latency_limit != 0 {
            let _ = writeln!(
                out,
                "number of transactions skipped: {} ({}%)",
                total.skipped,
                pct(total.skipped, total_cnt)
            );
        }
        if self.latency_limit != 0 {
            let late_pct = if total.cnt > 0 {
                100.0 * self.latency_late as f64 / total.cnt as f64
            } else {
                0.0
            };
            let _ = writeln!(
                out,
                "number of transactions above the {} ms latency limit: {}/{} ({}%)",
                fmt_f(self.latency_limit as f64 / 1000.0, 1),
                self.latency_late,
                total.cnt,
                fmt_f(late_pct, 3)
            );
        }
        if self.throttled || self.progress || self.latency_limit != 0 {
            simple_stats(out, "latency", &total.latency);
        } else {
            // pgbench: without per-transaction measurement, the average comes from the
            // run time.
            let _ = writeln!(
                out,
                "latency average = {} ms{}",
                fmt_f(
                    0.001 * self.bench_duration_us * self.nclients as f64 / total_cnt as f64,
                    3
                ),
                if failures > 0 {
                    " (including failures)"
                } else {
                    ""
                }
            );
        }
        if self.throttled {
            let _ = writeln!(
                out,
                "rate limit schedule lag: avg {} (max {}) ms",
                fmt_f(0.001 * total.lag.sum / total.cnt as f64, 3),
                fmt_f(0.001 * total.lag.max, 3)
            );
        }
        if self.is_connect {
            let _ = writeln!(
                out,
                "average connection time = {} ms",
                fmt_f(
                    0.001 * self.conn_total_duration_us / (total.cnt + failures) as f64,
                    3
                )
            );
            let _ = writeln!(
                out,
                "tps = {} (including reconnection times)",
                fmt_f(tps, 6)
            );
        } else {
            let _ = writeln!(
                out,
                "initial connection time = {} ms",
                fmt_f(0.001 * self.conn_elapsed_duration_us, 3)
            );
            let _ = writeln!(
                out,
                "tps = {} (without initial connection time)",
                fmt_f(tps, 6)
            );
        }

        if !(per_script_stats || self.report_per_command) {
            return;
        }
        let total_weight: i64 = self.scripts.iter().map(|s| s.weight).sum();
        for (i, script) in self.scripts.iter().enumerate() {
            if per_script_stats {
                let s = &script.stats;
                let script_total = s.total();
                let _ = writeln!(out, "SQL script {}: {}", i + 1, script.desc);
                let _ = writeln!(
                    out,
                    " - weight: {} (targets {}% of total)",
                    script.weight,
                    fmt_f(100.0 * script.weight as f64 / total_weight as f64, 1)
                );
                let _ = writeln!(
                    out,
                    " - {} transactions ({}% of total, tps = {})",
                    s.cnt,
                    fmt_f(100.0 * s.cnt as f64 / total.cnt as f64, 1),
                    fmt_f(s.cnt as f64 / bench_duration, 6)
                );
                self.failure_lines(out, " - ", s);
                if self.throttled && self.latency_limit != 0 && script_total > 0 {
                    let _ = writeln!(
                        out,
                        " - number of transactions skipped: {} ({}%)",
                        s.skipped,
                        pct(s.skipped, script_total)
                    );
                }
                simple_stats(out, " - latency", &s.latency);
            }
            if self.report_per_command {
                let _ = writeln!(
                    out,
                    "{}statement latencies in milliseconds{}:",
                    if per_script_stats { " - " } else { "" },
                    if self.max_tries == 1 {
                        " and failures"
                    } else {
                        ", failures and retries"
                    }
                );
                for (first_line, c) in &script.commands {
                    let avg = if c.elapsed.count > 0 {
                        1000.0 * c.elapsed.sum / c.elapsed.count as f64
                    } else {
                        0.0
                    };
                    if self.max_tries == 1 {
                        let _ = writeln!(
                            out,
                            "   {:>11}  {:>10}  {first_line}",
                            fmt_f(avg, 3),
                            c.failures
                        );
                    } else {
                        let _ = writeln!(
                            out,
                            "   {:>11}  {:>10}  {:>10}  {first_line}",
                            fmt_f(avg, 3),
                            c.failures,
                            c.retries
                        );
                    }
                }
            }
        }
    }

    /// The failed / serialization / deadlock / retried / retries lines, for the whole
    /// run (no prefix) or one script (` - `); percentages of all its transactions.
    fn failure_lines(&self, out: &mut String, prefix: &str, s: &StatsData) {
        let total = s.total();
        let failures = s.failures();
        let _ = writeln!(
            out,
            "{prefix}number of failed transactions: {failures} ({}%)",
            pct(failures, total)
        );
        if self.failures_detailed {
            let _ = writeln!(
                out,
                "{prefix}number of serialization failures: {} ({}%)",
                s.serialization_failures,
                pct(s.serialization_failures, total)
            );
            let _ = writeln!(
                out,
                "{prefix}number of deadlock failures: {} ({}%)",
                s.deadlock_failures,
                pct(s.deadlock_failures, total)
            );
        }
        if self.max_tries != 1 {
            let _ = writeln!(
                out,
                "{prefix}number of transactions retried: {} ({}%)",
                s.retried,
                pct(s.retried, total)
            );
            let _ = writeln!(out, "{prefix}total number of retries: {}", s.retries);
        }
    }

    /// pgbench-rs's addition, after everything pgbench prints.
    fn render_percentiles(&self, out: &mut String) {
        let Some(p) = &self.percentiles else {
            return;
        };
        let _ = writeln!(out, "latency percentiles in milliseconds:");
        p.render(out, "  ");
        if self.scripts.len() > 1 {
            for (i, script) in self.scripts.iter().enumerate() {
                if let Some(sp) = &script.percentiles {
                    let _ = writeln!(
                        out,
                        "SQL script {}: {} latency percentiles in milliseconds:",
                        i + 1,
                        script.desc
                    );
                    sp.render(out, "  ");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
