//! `pgbench-report show`: a results file as text. A pgbench-rs run prints its report
//! exactly as the run did ([`report::render`] of the embedded [`RunResult`]), then,
//! for a run stopped early, the warning the run printed after it (why it stopped and
//! the seconds the report covers: its `duration:` line is `-T`'s, as pgbench prints
//! it); an imported stock run prints, in pgbench's wording, the figures its files
//! gave.
//!
//! [`RunResult`]: crate::run::RunResult

use crate::capacity::table;
use crate::document::{Origin, ResultsFile};
use crate::report::{self, fmt_f};
use crate::stock::PG_VERSION_BEFORE_RECORDED;
use crate::summary::{Failures, PercentileSummary, ScriptSummary, Summary};
use crate::workload::kind::Tool;
use crate::workload::registry;
use std::fmt::Write;

/// The stock pgbench release a pgbench-rs results file's run reproduced.
pub fn pgbench_version(doc: &ResultsFile) -> &str {
    doc.pgbench_version
        .as_deref()
        .unwrap_or(PG_VERSION_BEFORE_RECORDED)
}

/// pgbench.c `printVersion`, the first line of a run's stdout: `ours` is the client's
/// `PG_VERSION` text, `ours_num` its number; the server's version follows when its
/// number differs.
pub fn banner(ours: &str, ours_num: i32, server: Option<&str>, server_num: i32) -> String {
    if server_num == ours_num {
        format!("pgbench ({ours})\n")
    } else {
        format!("pgbench ({ours}, server {})\n", server.unwrap_or("unknown"))
    }
}

/// A `server_version` string's number as libpq's `PQserverVersion` computes it when
/// the server does not report `server_version_num`: `15.18 (Debian ...)` is 150018,
/// `9.6.24` 90624. The one home of the rule: the runner uses it for a connection
/// (`src/version.rs` `server_version_num`), `show` for a results file.
pub fn version_num(v: &str) -> i32 {
    let nums: Vec<i32> = v
        .split(|c: char| !c.is_ascii_digit())
        .take_while(|s| !s.is_empty())
        .take(3)
        .filter_map(|s| s.parse().ok())
        .collect();
    match nums.as_slice() {
        [major, minor, rev] if *major < 10 => major * 10000 + minor * 100 + rev,
        [major, minor, ..] if *major >= 10 => major * 10000 + minor,
        [major, minor] => major * 10000 + minor * 100,
        [major] => major * 10000,
        _ => 0,
    }
}

/// The text `show` prints: a pgbench-rs run's stdout (banner, then report) as the run
/// printed it; a sweep's or search's steps ([`crate::capacity::table`]), then the
/// report of its representative step, which the top level holds.
pub fn render(doc: &ResultsFile) -> String {
    let Some(capacity) = &doc.capacity else {
        return render_run(doc);
    };
    let mut out = table::render(capacity, &doc.steps);
    if let Some(step) = doc.representative_step() {
        out.push_str(&table::report_heading(capacity, step));
        out.push_str(&render_run(doc));
    }
    out
}

/// The text of the run a document's top level holds.
fn render_run(doc: &ResultsFile) -> String {
    if let Some(run) = &doc.run {
        let mut out = match &doc.client_version {
            Some(client) if client.starts_with("pgbench-rs ") => {
                let server = doc.server_version.as_deref();
                let num = server.map_or(0, version_num);
                let ours = pgbench_version(doc);
                banner(
                    &format!("{ours} ({client})"),
                    version_num(ours),
                    server,
                    num,
                )
            }
            _ => String::new(),
        };
        out.push_str(&report::render(run));
        // The stages' and --reconnect's blocks, as the run printed them after the
        // report.
        if let Some(stages) = &run.stages {
            out.push_str(&crate::stages::render_block(stages));
        }
        if let Some(a) = &run.availability {
            out.push_str(&crate::availability::render_block(a));
        }
        if let Some(note) = run.ending_note() {
            let _ = writeln!(out, "warning: {note}");
        }
        return out;
    }
    let mut out = String::new();
    let files = match &doc.origin {
        Origin::StockImport { files } => files.join(", "),
        Origin::PgbenchRs => String::new(),
    };
    let source = Source::of(doc);
    let _ = writeln!(
        out,
        "imported from {} output ({files}): the figures it printed, not its exact counters",
        source.tool()
    );
    if let Some(v) = &doc.client_version {
        let _ = writeln!(out, "client: {v}");
    }
    render_summary(&doc.summary, source, &mut out);
    out
}

/// Whose output an import read. Stock pgbench's report is shown again in its own
/// words, percentages and the tps line's note included (the summary holds what they
/// are computed from); a workload's tool's (`crate::workload::registry`) in
/// pgbench's words, with only the figures it printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Stock,
    Tool(&'static Tool),
}

impl Source {
    /// By the transaction type its importer gave, or else by its client's banner.
    pub fn of(doc: &ResultsFile) -> Source {
        let kind = doc.summary.transaction_type.as_deref().unwrap_or("");
        let client = doc.client_version.as_deref().unwrap_or("");
        registry::tool_of(kind, client).map_or(Source::Stock, Source::Tool)
    }

    fn tool(self) -> &'static str {
        match self {
            Source::Stock => "stock pgbench",
            Source::Tool(t) => t.name,
        }
    }
}

fn line<T: std::fmt::Display>(out: &mut String, label: &str, v: Option<T>) {
    if let Some(v) = v {
        let _ = writeln!(out, "{label}{v}");
    }
}

fn ms(v: Option<f64>) -> Option<String> {
    v.map(|v| format!("{} ms", fmt_f(v, 3)))
}

/// `n`, and its share of `total` as pgbench prints it (`12 (3.400%)`) where the
/// total is known.
fn counted(n: i64, total: Option<i64>) -> String {
    match total {
        Some(t) => format!("{n} ({}%)", report::pct(n, t)),
        None => n.to_string(),
    }
}

/// pgbench's total of a run or script: successes, skipped and failed.
fn all_transactions(done: Option<i64>, skipped: Option<i64>, f: Option<Failures>) -> Option<i64> {
    Some(done? + skipped.unwrap_or(0) + f?.total)
}

/// The failure lines, with their shares of `total` when it is given.
fn failure_lines(out: &mut String, prefix: &str, f: Option<Failures>, total: Option<i64>) {
    if let Some(f) = f {
        let kinds = [
            ("failed transactions", Some(f.total)),
            ("serialization failures", f.serialization),
            ("deadlock failures", f.deadlock),
            ("other failures", f.other),
        ];
        for (kind, n) in kinds {
            let label = format!("{prefix}number of {kind}: ");
            line(out, &label, n.map(|n| counted(n, total)));
        }
    }
}

/// The retry lines (runs that may retry).
fn retry_lines(
    out: &mut String,
    prefix: &str,
    retried: Option<i64>,
    retries: Option<i64>,
    total: Option<i64>,
) {
    let label = format!("{prefix}number of transactions retried: ");
    line(out, &label, retried.map(|n| counted(n, total)));
    line(out, &format!("{prefix}total number of retries: "), retries);
}

fn percentile_lines(out: &mut String, title: &str, p: Option<&PercentileSummary>) {
    if let Some(p) = p {
        let _ = writeln!(out, "{title}");
        for (q, v) in &p.values {
            let _ = writeln!(out, "  p{q} = {}", fmt_f(*v, 3));
        }
        let _ = writeln!(out, "  max = {}", fmt_f(p.max_ms, 3));
    }
}

/// The summary's figures in the report's order and words.
pub fn render_summary(s: &Summary, source: Source, out: &mut String) {
    let stock = source == Source::Stock;
    line(out, "transaction type: ", s.transaction_type.as_ref());
    line(out, "scaling factor: ", s.scaling_factor);
    line(out, "partition method: ", s.partition_method.as_ref());
    line(out, "partitions: ", s.partitions);
    line(out, "query mode: ", s.query_mode.as_ref());
    line(out, "number of clients: ", s.clients);
    line(out, "number of threads: ", s.threads);
    line(
        out,
        "maximum number of tries: ",
        s.max_tries.filter(|&n| n > 0),
    );
    line(
        out,
        "number of transactions per client: ",
        s.transactions_per_client,
    );
    line(out, "duration: ", s.duration_s.map(|d| format!("{d} s")));
    // pgbench multiplies two ints for a -t run's total.
    let of = match (stock, s.transactions_per_client, s.clients) {
        (true, Some(n), Some(c)) => format!("/{}", (n as i32).wrapping_mul(c as i32)),
        _ => String::new(),
    };
    line(
        out,
        "number of transactions actually processed: ",
        s.transactions.map(|n| format!("{n}{of}")),
    );
    let total = all_transactions(s.transactions, s.skipped, s.failures).filter(|_| stock);
    failure_lines(out, "", s.failures, total);
    if s.max_tries != Some(1) {
        retry_lines(out, "", s.retried, s.retries, total);
    }
    limit_lines(s, stock, total, out);
    let including = stock && s.latency_avg_derived && s.failures.is_some_and(|f| f.total > 0);
    let avg = ms(s.latency_avg_ms).map(|a| {
        a + if including {
            " (including failures)"
        } else {
            ""
        }
    });
    line(out, "latency average = ", avg);
    line(out, "latency stddev = ", ms(s.latency_stddev_ms));
    if let (Some(a), Some(m)) = (s.lag_avg_ms, s.lag_max_ms) {
        let _ = writeln!(
            out,
            "rate limit schedule lag: avg {} (max {}) ms",
            fmt_f(a, 3),
            fmt_f(m, 3)
        );
    }
    line(
        out,
        "initial connection time = ",
        ms(s.initial_connection_time_ms),
    );
    line(
        out,
        "average connection time = ",
        ms(s.average_connection_time_ms),
    );
    let note = match (stock, s.average_connection_time_ms) {
        (false, _) => "",
        (true, Some(_)) => " (including reconnection times)",
        (true, None) => " (without initial connection time)",
    };
    line(
        out,
        "tps = ",
        s.tps.map(|t| format!("{}{note}", fmt_f(t, 6))),
    );
    registry::summary_lines(s, out);
    script_lines(s, source, out);
}

/// `-L`'s lines: the skipped transactions (stock prints them under `-R` only) and
/// those above the limit.
fn limit_lines(s: &Summary, stock: bool, total: Option<i64>, out: &mut String) {
    let Some(limit) = s.latency_limit_ms else {
        return;
    };
    if !stock || s.lag_avg_ms.is_some() {
        line(
            out,
            "number of transactions skipped: ",
            s.skipped.map(|n| counted(n, total)),
        );
    }
    match (stock, s.late, s.transactions) {
        (true, Some(late), Some(done)) => {
            let share = if done > 0 {
                100.0 * late as f64 / done as f64
            } else {
                0.0
            };
            let _ = writeln!(
                out,
                "number of transactions above the {} ms latency limit: {late}/{done} ({}%)",
                fmt_f(limit, 1),
                fmt_f(share, 3)
            );
        }
        _ => line(
            out,
            "number of transactions above the latency limit: ",
            s.late,
        ),
    }
}

/// One script's counters when there are several, as stock prints them or in
/// pgbench's words.
fn script_counters(s: &Summary, sc: &ScriptSummary, stock: bool, out: &mut String) {
    let weights: Option<i64> = s.scripts.iter().map(|sc| sc.weight).sum();
    match (
        stock,
        sc.weight,
        weights,
        sc.transactions,
        s.transactions,
        sc.tps,
    ) {
        (true, Some(w), Some(all_w), Some(n), Some(all_n), Some(tps)) => {
            let share = |part: i64, whole: i64| fmt_f(100.0 * part as f64 / whole as f64, 1);
            let _ = writeln!(
                out,
                " - weight: {w} (targets {}% of total)",
                share(w, all_w)
            );
            let _ = writeln!(
                out,
                " - {n} transactions ({}% of total, tps = {})",
                share(n, all_n),
                fmt_f(tps, 6)
            );
        }
        _ => {
            line(out, " - weight: ", sc.weight);
            line(out, " - transactions: ", sc.transactions);
            line(out, " - tps = ", sc.tps.map(|t| fmt_f(t, 6)));
        }
    }
    let total = all_transactions(sc.transactions, sc.skipped, sc.failures).filter(|_| stock);
    failure_lines(out, " - ", sc.failures, total);
    if stock && s.max_tries != Some(1) {
        retry_lines(out, " - ", sc.retried, sc.retries, total);
    }
    if stock && s.lag_avg_ms.is_some() && s.latency_limit_ms.is_some() && total > Some(0) {
        line(
            out,
            " - number of transactions skipped: ",
            sc.skipped.map(|n| counted(n, total)),
        );
    }
    line(out, " - latency average = ", ms(sc.latency_avg_ms));
    line(out, " - latency stddev = ", ms(sc.latency_stddev_ms));
}

/// Each script's block, then the percentiles.
fn script_lines(s: &Summary, source: Source, out: &mut String) {
    let stock = source == Source::Stock;
    // Stock's columns: no retries column for runs that do not retry.
    let single = stock && s.max_tries == Some(1);
    let several = s.scripts.len() > 1;
    for (i, sc) in s.scripts.iter().enumerate() {
        if several {
            let _ = writeln!(out, "SQL script {}: {}", i + 1, sc.name);
            script_counters(s, sc, stock, out);
        }
        if !sc.statements.is_empty() {
            let _ = writeln!(
                out,
                "{}statement latencies in milliseconds{}:",
                if several { " - " } else { "" },
                if single {
                    " and failures"
                } else {
                    ", failures and retries"
                }
            );
            for st in &sc.statements {
                let retries = st.retries.map_or("-".to_string(), |r| r.to_string());
                let retries = if single {
                    String::new()
                } else {
                    format!("  {retries:>10}")
                };
                let _ = writeln!(
                    out,
                    "   {:>11}  {:>10}{retries}  {}",
                    fmt_f(st.latency_ms, 3),
                    st.failures,
                    st.command
                );
            }
        }
    }
    let title = match source {
        Source::Tool(t) => t.percentiles_title,
        Source::Stock => "latency percentiles in milliseconds (from the -l logs):",
    };
    percentile_lines(out, title, s.percentiles.as_ref());
    if several {
        for (i, sc) in s.scripts.iter().enumerate() {
            let title = format!(
                "SQL script {}: {} latency percentiles in milliseconds:",
                i + 1,
                sc.name
            );
            percentile_lines(out, &title, sc.percentiles.as_ref());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::RunMeta;
    use crate::synthetic::{run, Spec};

    fn shown(server_version: Option<&str>) -> String {
        let meta = RunMeta {
            server_version: server_version.map(str::to_string),
            ..RunMeta::default()
        };
        let result = run(&Spec::tpcb(1, 3, 100.0, 1000.0));
        let report = report::render(&result);
        let text = render(&ResultsFile::from_run(result, meta));
        let banner = text
            .strip_suffix(&report)
            .expect("the report follows the banner");
        banner.to_string()
    }

    #[test]
    fn a_run_shows_the_banner_it_printed() {
        let ours = format!("15.20 (pgbench-rs {})", env!("CARGO_PKG_VERSION"));
        assert_eq!(
            shown(Some("15.20 (Debian 15.20-0+deb12u1)")),
            format!("pgbench ({ours})\n")
        );
        assert_eq!(
            shown(Some("15.18 (Debian 15.18-0+deb12u1)")),
            format!("pgbench ({ours}, server 15.18 (Debian 15.18-0+deb12u1))\n")
        );
        assert_eq!(
            shown(Some("17.2")),
            format!("pgbench ({ours}, server 17.2)\n")
        );
        assert_eq!(shown(None), format!("pgbench ({ours}, server unknown)\n"));
    }

    /// #33: a run stopped by Ctrl-C at 12 s of `-T 60` showed `duration: 60 s` and
    /// nothing else; the run itself had said it covered 12 s.
    #[test]
    fn an_interrupted_run_shows_the_time_it_ran_after_its_report() {
        let mut result = run(&Spec::tpcb(1, 12, 100.0, 1000.0));
        result.settings.limit = crate::run::Limit::Duration(60);
        result.bench_duration_us = 12_034_567.0;
        result.ended = Some(crate::run::ended::Ended::Interrupted {
            signal: "SIGINT".into(),
            at_s: 12.0,
            during_warmup: false,
            unfinished: 4,
        });
        let report = report::render(&result);
        assert!(report.contains("duration: 60 s\n"), "{report}");
        let text = render(&ResultsFile::from_run(result, RunMeta::default()));
        let after = text.split_once(&report).expect("the report as printed").1;
        assert_eq!(
            after,
            "warning: run interrupted by SIGINT; the results above cover the 12.0 s it ran; 4 unfinished transactions were not counted\n"
        );
    }

    #[test]
    fn version_numbers_as_the_connection_computes_them() {
        assert_eq!(version_num("15.18"), 150018);
        assert_eq!(version_num("16beta1"), 160000);
        assert_eq!(version_num("9.6.24"), 90624);
        assert_eq!(version_num("devel"), 0);
    }
}
