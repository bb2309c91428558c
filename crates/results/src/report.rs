//! The final report's text. Mirrors pgbench.c `printResults()` of pgbench 15 line by
//! line (order, wording, number formats), then pgbench-rs's latency percentiles when
//! asked for. Pure: no I/O, no clocks.

use crate::run::{Limit, MaxTries, RunResult, RunSettings, ScriptResult};
use crate::stats::{SimpleStats, StatsData};
use std::fmt::Write;

pub use pgbench_script::cnum::fmt_f;

pub(crate) fn pct(part: i64, whole: i64) -> String {
    fmt_f(100.0 * part as f64 / whole as f64, 3)
}

fn simple_stats(out: &mut String, prefix: &str, s: &SimpleStats) {
    if s.count > 0 {
        let _ = writeln!(out, "{prefix} average = {} ms", fmt_f(0.001 * s.mean(), 3));
        let _ = writeln!(out, "{prefix} stddev = {} ms", fmt_f(0.001 * s.stddev(), 3));
    }
}

/// The text printed on stdout after the run: pgbench's report, then the percentiles
/// when `--latency-percentiles` asked for them.
pub fn render(r: &RunResult) -> String {
    let mut out = String::with_capacity(2048);
    render_pgbench(r, &mut out);
    render_percentiles(r, &mut out);
    crate::scenarios::render(&r.scenarios, &mut out);
    crate::workload::registry::render(r, &mut out);
    out
}

/// pgbench's `printResults()`.
fn render_pgbench(r: &RunResult, out: &mut String) {
    header(r, out);
    failure_lines(&r.settings, out, "", &r.total);
    // pgbench: the remaining figures are nonsensical if nothing ran.
    if r.total.counts.cnt + r.total.counts.skipped <= 0 {
        return;
    }
    latency_lines(r, out);
    connection_and_tps(r, out);
    if r.scripts.len() > 1 || r.settings.report_per_command {
        for (i, script) in r.scripts.iter().enumerate() {
            script_section(r, i, script, out);
        }
    }
}

/// From `transaction type` to `number of transactions actually processed`.
fn header(r: &RunResult, out: &mut String) {
    let set = &r.settings;
    let _ = writeln!(out, "transaction type: {}", r.transaction_type());
    scale_lines(r, out);
    if let Some(p) = &r.partitions {
        let _ = writeln!(
            out,
            "partition method: {}\npartitions: {}",
            p.method, p.count
        );
    }
    let _ = writeln!(out, "query mode: {}", set.query_mode.name());
    let _ = writeln!(out, "number of clients: {}", set.clients);
    let _ = writeln!(out, "number of threads: {}", set.threads);
    if let MaxTries::Limited(n) = set.max_tries {
        let _ = writeln!(out, "maximum number of tries: {n}");
    }
    match set.limit {
        Limit::Transactions(n) => {
            let _ = writeln!(out, "number of transactions per client: {n}");
            let _ = writeln!(
                out,
                "number of transactions actually processed: {}/{}",
                r.total.counts.cnt,
                // pgbench multiplies two ints.
                n.wrapping_mul(set.clients as i32)
            );
        }
        Limit::Duration(secs) => {
            let _ = writeln!(out, "duration: {secs} s");
            let _ = writeln!(
                out,
                "number of transactions actually processed: {}",
                r.total.counts.cnt
            );
        }
    }
}

/// pgbench's `scaling factor`, or what a workload's tables are measured in where
/// pgbench's scale means nothing (TPC-C's warehouses, say).
fn scale_lines(r: &RunResult, out: &mut String) {
    match crate::workload::registry::scale_lines(r) {
        Some(lines) => out.push_str(&lines),
        None => {
            let _ = writeln!(out, "scaling factor: {}", r.scale);
        }
    }
}

/// Skipped and late transactions, latency average and stddev, schedule lag.
fn latency_lines(r: &RunResult, out: &mut String) {
    let set = &r.settings;
    let total = &r.total;
    if let (true, Some(_)) = (set.throttled(), set.latency_limit_us) {
        let _ = writeln!(
            out,
            "number of transactions skipped: {} ({}%)",
            total.counts.skipped,
            pct(total.counts.skipped, total.total())
        );
    }
    if let Some(limit) = set.latency_limit_us {
        let late_pct = if total.counts.cnt > 0 {
            100.0 * r.latency_late as f64 / total.counts.cnt as f64
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "number of transactions above the {} ms latency limit: {}/{} ({}%)",
            fmt_f(limit as f64 / 1000.0, 1),
            r.latency_late,
            total.counts.cnt,
            fmt_f(late_pct, 3)
        );
    }
    if set.throttled() || set.progress_s.is_some() || set.latency_limit_us.is_some() {
        simple_stats(out, "latency", &total.latency);
    } else {
        // pgbench: without per-transaction measurement, the average comes from the
        // run time.
        let _ = writeln!(
            out,
            "latency average = {} ms{}",
            fmt_f(
                0.001 * r.bench_duration_us * set.clients as f64 / total.total() as f64,
                3
            ),
            if total.failures() > 0 {
                " (including failures)"
            } else {
                ""
            }
        );
    }
    if set.throttled() {
        let _ = writeln!(
            out,
            "rate limit schedule lag: avg {} (max {}) ms",
            fmt_f(0.001 * total.lag.sum / total.counts.cnt as f64, 3),
            fmt_f(0.001 * total.lag.max, 3)
        );
    }
}

/// The connection time and tps lines.
fn connection_and_tps(r: &RunResult, out: &mut String) {
    let total = &r.total;
    if r.settings.reconnect {
        let _ = writeln!(
            out,
            "average connection time = {} ms",
            fmt_f(
                0.001 * r.conn_total_duration_us / (total.counts.cnt + total.failures()) as f64,
                3
            )
        );
        let _ = writeln!(
            out,
            "tps = {} (including reconnection times)",
            fmt_f(r.tps(), 6)
        );
    } else {
        let _ = writeln!(
            out,
            "initial connection time = {} ms",
            fmt_f(0.001 * r.conn_elapsed_duration_us, 3)
        );
        let _ = writeln!(
            out,
            "tps = {} (without initial connection time)",
            fmt_f(r.tps(), 6)
        );
    }
}

/// One script's block: its counters when there are several scripts, its statement
/// latencies under `-r`.
fn script_section(r: &RunResult, i: usize, script: &ScriptResult, out: &mut String) {
    let set = &r.settings;
    let per_script_stats = r.scripts.len() > 1;
    if per_script_stats {
        let s = &script.stats;
        let total_weight: i64 = r.scripts.iter().map(|s| s.weight).sum();
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
            s.counts.cnt,
            fmt_f(100.0 * s.counts.cnt as f64 / r.total.counts.cnt as f64, 1),
            fmt_f(s.counts.cnt as f64 / (r.bench_duration_us / 1e6), 6)
        );
        failure_lines(set, out, " - ", s);
        if set.throttled() && set.latency_limit_us.is_some() && s.total() > 0 {
            let _ = writeln!(
                out,
                " - number of transactions skipped: {} ({}%)",
                s.counts.skipped,
                pct(s.counts.skipped, s.total())
            );
        }
        simple_stats(out, " - latency", &s.latency);
    }
    if !set.report_per_command {
        return;
    }
    let single = set.max_tries.is_single();
    let _ = writeln!(
        out,
        "{}statement latencies in milliseconds{}:",
        if per_script_stats { " - " } else { "" },
        if single {
            " and failures"
        } else {
            ", failures and retries"
        }
    );
    for c in &script.commands {
        let e = &c.stats.elapsed;
        let avg = if e.count > 0 {
            1000.0 * e.sum / e.count as f64
        } else {
            0.0
        };
        let _ = if single {
            writeln!(
                out,
                "   {:>11}  {:>10}  {}",
                fmt_f(avg, 3),
                c.stats.failures,
                c.first_line
            )
        } else {
            writeln!(
                out,
                "   {:>11}  {:>10}  {:>10}  {}",
                fmt_f(avg, 3),
                c.stats.failures,
                c.stats.retries,
                c.first_line
            )
        };
    }
}

/// The failed / serialization / deadlock / retried / retries lines, for the whole
/// run (no prefix) or one script (` - `); percentages of all its transactions.
fn failure_lines(set: &RunSettings, out: &mut String, prefix: &str, s: &StatsData) {
    let total = s.total();
    let failures = s.failures();
    let _ = writeln!(
        out,
        "{prefix}number of failed transactions: {failures} ({}%)",
        pct(failures, total)
    );
    if set.failures_detailed {
        // pgbench 19 prints the other failures always; pgbench 15, which we match
        // otherwise, has none, so only its --continue-on-error shows that line
        let kinds = [
            ("serialization", s.counts.serialization_failures),
            ("deadlock", s.counts.deadlock_failures),
        ];
        let other = set
            .continue_on_error
            .then_some(("other", s.counts.other_sql_failures));
        for (kind, n) in kinds.into_iter().chain(other) {
            let _ = writeln!(
                out,
                "{prefix}number of {kind} failures: {n} ({}%)",
                pct(n, total)
            );
        }
    }
    if !set.max_tries.is_single() {
        let _ = writeln!(
            out,
            "{prefix}number of transactions retried: {} ({}%)",
            s.counts.retried,
            pct(s.counts.retried, total)
        );
        let _ = writeln!(out, "{prefix}total number of retries: {}", s.counts.retries);
    }
}

/// pgbench-rs's addition, after everything pgbench prints.
fn render_percentiles(r: &RunResult, out: &mut String) {
    let (Some(wanted), Some(hist)) = (&r.settings.percentiles, &r.histogram) else {
        return;
    };
    let _ = writeln!(out, "latency percentiles in milliseconds:");
    hist.percentiles(wanted).render(out, "  ");
    if r.scripts.len() > 1 {
        for (i, script) in r.scripts.iter().enumerate() {
            if let Some(h) = &script.histogram {
                let _ = writeln!(
                    out,
                    "SQL script {}: {} latency percentiles in milliseconds:",
                    i + 1,
                    script.desc
                );
                h.percentiles(wanted).render(out, "  ");
            }
        }
    }
}

#[cfg(test)]
mod tests;
