//! Imports of real stock pgbench 15 output (recorded by
//! scripts/record-stock-results.sh under crates/results/tests/data/stock/) give the
//! figures stock printed, and percentiles from its -l logs equal the log's own.

use super::*;
use crate::summary::Summary;
use std::path::Path;

const CASES: &[&str] = &[
    "t-per-command-logged",
    "T-progress-logged",
    "T-aggregate",
    "several-scripts",
    "max-tries",
    "max-tries-aggregate",
    "rate-latency-limit",
    "connect",
];

fn dir(case: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/stock")
        .join(case)
}

fn files(case: &str, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir(case))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix))
        .collect();
    v.sort();
    v
}

fn paths(case: &str) -> Paths {
    Paths {
        report: dir(case).join("stdout"),
        progress: Some(dir(case).join("stderr")),
        logs: files(case, "log."),
        aggregate_logs: files(case, "agg."),
        test: None,
    }
}

fn stdout(case: &str) -> String {
    std::fs::read_to_string(dir(case).join("stdout")).unwrap()
}

/// Every figure of the summary, printed as stock prints it, is in stock's report.
fn assert_figures_printed(case: &str, s: &Summary) {
    let out = stdout(case);
    let has = |line: String| assert!(out.contains(&line), "{case}: no {line:?} in\n{out}");
    let tps = s.tps.unwrap();
    has(format!("tps = {tps:.6} ("));
    has(format!(
        "latency average = {:.3} ms",
        s.latency_avg_ms.unwrap()
    ));
    if let Some(sd) = s.latency_stddev_ms {
        has(format!("latency stddev = {sd:.3} ms"));
    }
    let f = s.failures.unwrap();
    has(format!("number of failed transactions: {} (", f.total));
    if let Some(n) = f.serialization {
        has(format!("number of serialization failures: {n} ("));
    }
    if s.max_tries != Some(1) {
        has(format!(
            "number of transactions retried: {} (",
            s.retried.unwrap()
        ));
        has(format!("total number of retries: {}\n", s.retries.unwrap()));
    }
    has(format!(
        "number of transactions actually processed: {}",
        s.transactions.unwrap()
    ));
    has(format!("number of clients: {}\n", s.clients.unwrap()));
    has(format!("number of threads: {}\n", s.threads.unwrap()));
    if let Some(t) = s.initial_connection_time_ms {
        has(format!("initial connection time = {t:.3} ms"));
    }
    if let Some(t) = s.average_connection_time_ms {
        has(format!("average connection time = {t:.3} ms"));
    }
    if let (Some(avg), Some(max)) = (s.lag_avg_ms, s.lag_max_ms) {
        has(format!(
            "rate limit schedule lag: avg {avg:.3} (max {max:.3}) ms"
        ));
    }
    if let Some(late) = s.late {
        has(format!(
            "above the {:.1} ms latency limit: {late}/",
            s.latency_limit_ms.unwrap()
        ));
        has(format!(
            "number of transactions skipped: {} (",
            s.skipped.unwrap()
        ));
    }
    for (i, sc) in s.scripts.iter().enumerate() {
        if s.scripts.len() > 1 {
            has(format!("SQL script {}: {}\n", i + 1, sc.name));
            has(format!(" - {} transactions (", sc.transactions.unwrap()));
            has(format!("tps = {:.6})", sc.tps.unwrap()));
            has(format!(
                " - latency average = {:.3} ms",
                sc.latency_avg_ms.unwrap()
            ));
        }
        for st in &sc.statements {
            has(format!("{:.3}", st.latency_ms));
            has(format!("  {}\n", st.command));
        }
    }
    let printed_statements = out
        .lines()
        .filter(|l| l.starts_with("   ") && !l.starts_with("    -"))
        .count();
    let parsed: usize = s.scripts.iter().map(|sc| sc.statements.len()).sum();
    assert_eq!(printed_statements, parsed, "{case}");
}

#[test]
fn every_recorded_case_imports_with_the_figures_stock_printed() {
    let schema = crate::document::tests::validator();
    for case in CASES {
        let doc = import_files(&paths(case)).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_figures_printed(case, &doc.summary);
        crate::document::tests::assert_valid(&schema, case, &doc.to_json());
        assert!(doc.run.is_none());
        assert_eq!(
            doc.client_version
                .as_deref()
                .map(|v| v.starts_with("pgbench 15.")),
            Some(true)
        );
        assert!(doc.random_seed.is_some(), "{case}");
        let back = ResultsFile::from_json(&doc.to_json()).unwrap();
        assert_eq!(back, doc, "{case}");
    }
}

#[test]
fn the_mode_specific_figures_are_there() {
    let s = |case: &str| import_files(&paths(case)).unwrap().summary;
    let tries = s("max-tries");
    assert_eq!(tries.max_tries, Some(10));
    assert!(tries.retries.unwrap() > 0 && tries.failures.unwrap().serialization.is_some());
    assert_eq!(tries.scripts[0].statements.len(), 6);
    assert!(tries.scripts[0]
        .statements
        .iter()
        .any(|st| st.retries.unwrap() > 0));
    let several = s("several-scripts");
    assert_eq!(
        several.transaction_type.as_deref(),
        Some("multiple scripts")
    );
    assert_eq!(several.scripts.len(), 2);
    assert_eq!(several.scripts[0].weight, Some(3));
    assert_eq!(several.scripts[1].name, "<builtin: simple update>");
    let rate = s("rate-latency-limit");
    assert_eq!(rate.latency_limit_ms, Some(2.0));
    assert!(rate.lag_max_ms.is_some() && rate.skipped.is_some());
    let connect = s("connect");
    assert!(connect.latency_avg_derived && connect.average_connection_time_ms.is_some());
    assert_eq!(connect.transactions_per_client, Some(50));
}

/// Nearest-rank percentile of sorted values (HdrHistogram's definition).
fn exact(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank - 1]
}

#[test]
fn percentiles_from_logs_equal_the_logs_own() {
    for case in [
        "t-per-command-logged",
        "T-progress-logged",
        "max-tries",
        "rate-latency-limit",
        "several-scripts",
    ] {
        let doc = import_files(&paths(case)).unwrap();
        let mut lat: Vec<f64> = Vec::new();
        for f in files(case, "log.") {
            for line in std::fs::read_to_string(f).unwrap().lines() {
                if let Ok(us) = line.split_whitespace().nth(2).unwrap().parse::<f64>() {
                    lat.push(us / 1000.0);
                }
            }
        }
        lat.sort_by(f64::total_cmp);
        let p = doc.summary.percentiles.as_ref().unwrap();
        assert_eq!(p.count as usize, lat.len(), "{case}");
        for (q, got) in &p.values {
            let want = exact(&lat, *q);
            // The histogram keeps 3 significant digits (and whole µs).
            assert!(
                (got - want).abs() <= want * 0.001 + 0.001,
                "{case}: p{q} = {got}, the log's is {want}"
            );
        }
        let max = *lat.last().unwrap();
        assert!((p.max_ms - max).abs() <= max * 0.001 + 0.001, "{case}");
        let t = doc.imported_timeline.unwrap();
        assert_eq!(t.source, TimelineSource::TransactionLog);
        let per_second: i64 = t.points.iter().map(|p| p.transactions.unwrap()).sum();
        assert_eq!(per_second, lat.len() as i64, "{case}");
    }
}

#[test]
fn progress_lines_and_aggregate_logs_become_timelines() {
    let mut p = paths("max-tries");
    p.logs.clear();
    let doc = import_files(&p).unwrap();
    let t = doc.imported_timeline.unwrap();
    assert_eq!(t.source, TimelineSource::Progress);
    let err = std::fs::read_to_string(dir("max-tries").join("stderr")).unwrap();
    assert_eq!(t.points.len(), err.matches("progress: ").count());
    assert_eq!((t.points[0].t_s, t.points[0].length_s), (0.0, 1.0));
    assert!(t.points[0].retries.unwrap() > 0);
    assert!(t.has_failures_or_retries());
    // Stock 15 does not log the last, partial interval, so the logs' own columns are
    // what the timeline must add up to, not the report's totals.
    for case in ["T-aggregate", "max-tries-aggregate"] {
        let doc = import_files(&paths(case)).unwrap();
        let t = doc.imported_timeline.unwrap();
        assert_eq!(t.source, TimelineSource::AggregateLog, "{case}");
        let column = |i: usize| -> i64 {
            files(case, "agg.")
                .iter()
                .flat_map(|f| {
                    std::fs::read_to_string(f)
                        .unwrap()
                        .lines()
                        .map(|l| l.split_whitespace().nth(i).unwrap().parse::<i64>().unwrap())
                        .collect::<Vec<_>>()
                })
                .sum()
        };
        let sum = |f: fn(&crate::timeline::Point) -> Option<i64>| -> i64 {
            t.points.iter().map(|p| f(p).unwrap_or(0)).sum()
        };
        assert_eq!(sum(|p| p.transactions), column(1), "{case}");
        assert!(column(1) <= doc.summary.transactions.unwrap());
        assert_eq!(sum(|p| p.retries), column(12), "{case}");
        assert_eq!(sum(|p| p.failures), column(13) + column(14), "{case}");
        let total_latency_ms: f64 = t
            .points
            .iter()
            .map(|p| p.latency_avg_ms.unwrap() * p.transactions.unwrap() as f64)
            .sum();
        let want = column(2) as f64 / 1000.0;
        assert!((total_latency_ms - want).abs() < want * 1e-9, "{case}");
    }
}

#[test]
fn bad_input_is_named_with_its_line() {
    let report = ("out.txt".to_string(), stdout("max-tries"));
    let with = |progress: Option<&str>, logs: Vec<&str>| Inputs {
        report: report.clone(),
        progress: progress.map(|t| ("err.txt".to_string(), t.to_string())),
        logs: logs
            .into_iter()
            .map(|t| ("log.0".to_string(), t.to_string()))
            .collect(),
        ..Inputs::default()
    };
    let err = |i: Inputs| import(&i).unwrap_err().to_string();
    assert_eq!(
        err(Inputs {
            report: ("x".into(), "hello\n".into()),
            ..Inputs::default()
        }),
        "x: not a pgbench report (no \"transaction type:\" line)"
    );
    assert_eq!(
        err(with(Some("ok\nprogress: 1.0 s, many tps\n"), vec![])),
        "err.txt:2: cannot read this progress: line"
    );
    assert_eq!(
        err(with(None, vec!["0 1 100 0 1796114956\n"])),
        "log.0:1: expected 7 fields of a -l log line, found 5"
    );
    assert!(err(with(None, vec!["0 1 100 0 1796114956 1 0\n"])).starts_with("the -l logs hold 1 "));
    // A log line far in time from the others would make a series of empty seconds.
    let far = "0 1 100 0 1796114956 1 0\n0 2 100 0 2796114956 1 0\n";
    assert_eq!(
        err(with(None, vec![far])),
        "log.0:2: this transaction lies 1000000000 s from the middle of the run's other lines (at 1796114956 s), outside the run (4 s by its report)"
    );
    assert_eq!(
        err(with(None, vec!["0 1 100 0 99999999999999 1 0\n"])),
        "log.0:1: not a time: 99999999999999 1"
    );
    // Two reports in one file, a report cut short, a wrapped client count.
    let two = format!("{}{}", stdout("max-tries"), stdout("max-tries"));
    let e = err(Inputs {
        report: ("out.txt".into(), two),
        ..Inputs::default()
    });
    assert!(
        e.contains(": a second report starts here (one report per file)"),
        "{e}"
    );
    let whole = stdout("max-tries");
    let cut = &whole[..whole.find("tps = ").unwrap()];
    let e = err(Inputs {
        report: ("out.txt".into(), cut.to_string()),
        ..Inputs::default()
    });
    assert!(
        e.contains("the report ends before its \"tps = \" line"),
        "{e}"
    );
    let wrapped = whole.replace("number of clients: 4", "number of clients: -2147483648");
    assert_eq!(
        err(Inputs {
            report: ("out.txt".into(), wrapped),
            ..Inputs::default()
        }),
        "out.txt:5: number of clients is -2147483648, not a count pgbench prints"
    );
    let mut broken = stdout("max-tries");
    broken = broken.replace("number of clients: 4", "number of clients: four");
    assert_eq!(
        err(Inputs {
            report: ("out.txt".into(), broken),
            ..Inputs::default()
        }),
        "out.txt:5: cannot read number of clients"
    );
    assert!(import_files(&Paths {
        report: "/nonexistent/out.txt".into(),
        ..Paths::default()
    })
    .unwrap_err()
    .to_string()
    .starts_with("/nonexistent/out.txt: No such file"));
}

#[test]
fn progress_timestamps_and_aborted_runs() {
    let err = "pgbench: setting random seed to 42\n\
               progress: 1796114957.000 s, 100.0 tps, lat 1.000 ms stddev 0.100, 0 failed\n\
               progress: 1796114959.000 s, 50.0 tps, lat 2.000 ms stddev 0.200, 3 failed, lag 0.5 ms, 1 skipped\n\
               pgbench: error: client 1 aborted in command 2 (SQL) of script 0; ...\n\
               pgbench: error: Run was aborted; the above results are incomplete.\n";
    let s = progress::parse("err", err).unwrap();
    assert!(s.aborted);
    assert_eq!(s.random_seed, Some(42));
    let t = s.timeline.unwrap();
    // With --progress-timestamp the first interval is taken as long as the next.
    assert_eq!((t.points[0].t_s, t.points[0].length_s), (0.0, 2.0));
    assert_eq!((t.points[1].t_s, t.points[1].length_s), (2.0, 2.0));
    assert_eq!(
        (t.points[1].failures, t.points[1].skipped),
        (Some(3), Some(1))
    );
    assert_eq!(t.points[1].lag_avg_ms, Some(0.5));
    let doc = import(&Inputs {
        report: ("out".into(), stdout("connect")),
        progress: Some(("err".into(), err.into())),
        ..Inputs::default()
    })
    .unwrap();
    assert_eq!(
        doc.summary.aborted_clients, None,
        "aborted: how many is not printed"
    );
}

/// The recorded case's files as text, with `edit` applied to the file named `name`.
fn inputs_edited(case: &str, name: &str, edit: impl Fn(&str) -> String) -> Inputs {
    let read = |p: &PathBuf| {
        let text = std::fs::read_to_string(p).unwrap();
        let file = p.file_name().unwrap().to_str().unwrap().to_string();
        let text = if file == name { edit(&text) } else { text };
        (file, text)
    };
    let p = paths(case);
    Inputs {
        report: read(&p.report),
        progress: p.progress.as_ref().map(read),
        logs: p.logs.iter().map(read).collect(),
        aggregate_logs: p.aggregate_logs.iter().map(read).collect(),
        test: None,
    }
}

/// #38: one `-l` line 30 days off made a 4 s run's results file gigabytes of empty
/// seconds (the bound was 31 days from the first line); a line far outside the run
/// the report describes is refused with its line number, and so is a latency that
/// would start the run that far back, or a script the report does not have.
#[test]
fn a_log_line_outside_the_run_is_refused_with_its_line() {
    let case = "T-progress-logged";
    let shift = |text: &str, line: usize, by_s: i64| -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut w: Vec<String> = lines[line - 1].split(' ').map(str::to_string).collect();
        w[4] = (w[4].parse::<i64>().unwrap() + by_s).to_string();
        lines[line - 1] = w.join(" ");
        lines.join("\n") + "\n"
    };
    let e = import(&inputs_edited(case, "log.0", |t| shift(t, 7, 30 * 86_400)))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("log.0:7: this transaction lies 25919"), "{e}");
    assert!(e.ends_with("outside the run (4 s by its report)"), "{e}");
    // A few seconds off is the run's own slack: it imports.
    let doc = import(&inputs_edited(case, "log.0", |t| shift(t, 7, 5))).unwrap();
    assert!(doc.imported_timeline.unwrap().points.len() < 20);
    // A latency of 30 days would start the series that far back.
    let long = |t: &str| {
        let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
        let mut w: Vec<String> = lines[2].split(' ').map(str::to_string).collect();
        w[2] = (30_i64 * 86_400 * 1_000_000).to_string();
        lines[2] = w.join(" ");
        lines.join("\n") + "\n"
    };
    let e = import(&inputs_edited(case, "log.1", long))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("log.1:3: this transaction lies "), "{e}");
    // The first line's script number (before its seconds, 1796...), 0, made 7.
    let script = |t: &str| t.replacen(" 0 1", " 7 1", 1);
    let e = import(&inputs_edited(case, "log.0", script))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "log.0:1: script 7 is not one of the report's 1 script(s)"
    );
}

/// #38: pgbench's own report import already refused a wrapped client count; every
/// count of the report, the progress lines and the aggregate logs is now whole and
/// not negative, every figure finite and not negative, a duration within `-T`'s.
#[test]
fn implausible_figures_of_stock_output_are_refused() {
    let report = |from: &str, to: &str| {
        let e = import(&inputs_edited("max-tries", "stdout", |t| {
            assert!(t.contains(from), "{from}");
            t.replace(from, to)
        }))
        .unwrap_err()
        .to_string();
        e.split_once(": ").map(|(_, m)| m.to_string()).unwrap()
    };
    for (from, to, want) in [
        (
            "tps = 507.035462",
            "tps = nan",
            "tps is NaN, not a figure pgbench prints",
        ),
        (
            "latency average = 7.244 ms",
            "latency average = inf ms",
            "latency average is inf, not a figure pgbench prints",
        ),
        (
            "latency stddev = 7.144 ms",
            "latency stddev = -7.144 ms",
            "latency stddev is -7.144, not a figure pgbench prints",
        ),
        (
            "actually processed: 2023",
            "actually processed: -1799",
            "number of transactions actually processed is -1799, not a count pgbench prints",
        ),
        (
            "number of failed transactions: 36",
            "number of failed transactions: -36",
            "number of failed transactions is -36, not a count pgbench prints",
        ),
        (
            "total number of retries: 2631",
            "total number of retries: 99999999999999999999",
            "total number of retries is 99999999999999999999, not a count pgbench prints",
        ),
        (
            "duration: 4 s",
            "duration: 999999999999 s",
            "duration is 999999999999, not a count pgbench prints",
        ),
        (
            "0.235          36",
            "NaN          36",
            "statement latency is NaN, not a figure pgbench prints",
        ),
    ] {
        assert!(
            report(from, to).ends_with(want),
            "{to}: {}",
            report(from, to)
        );
    }
    let progress = |to: &str| {
        import(&inputs_edited("max-tries", "stderr", |t| {
            let first = t.lines().find(|l| l.starts_with("progress: ")).unwrap();
            t.replace(first, to)
        }))
        .unwrap_err()
        .to_string()
    };
    for (line, want) in [
        (
            "progress: 1.0 s, nan tps, lat 7.0 ms stddev 1.0, 0 failed",
            "tps is NaN, not a figure pgbench prints",
        ),
        (
            "progress: 1.0 s, 500.0 tps, lat inf ms stddev 1.0, 0 failed",
            "lat is inf, not a figure pgbench prints",
        ),
        (
            "progress: 1.0 s, 500.0 tps, lat 7.0 ms stddev 1.0, -3 failed",
            "failed is -3, not a count pgbench prints",
        ),
        (
            "progress: inf s, 500.0 tps, lat 7.0 ms stddev 1.0, 0 failed",
            "the time is inf, not a figure pgbench prints",
        ),
        (
            "progress: 1e300 s, 500.0 tps, lat 7.0 ms stddev 1.0, 0 failed",
            "the time 1e300 s is not a time pgbench prints",
        ),
    ] {
        let e = progress(line);
        assert!(e.starts_with("stderr:") && e.ends_with(want), "{line}: {e}");
    }
    let aggregate = |from_col: usize, to: &str| {
        import(&inputs_edited("T-aggregate", "agg.0", |t| {
            let mut w: Vec<&str> = t.lines().next().unwrap().split(' ').collect();
            w[from_col] = to;
            t.replacen(t.lines().next().unwrap(), &w.join(" "), 1)
        }))
        .unwrap_err()
        .to_string()
    };
    assert_eq!(
        aggregate(2, "nan"),
        "agg.0:1: column 3 is NaN, not a figure pgbench prints"
    );
    assert_eq!(
        aggregate(1, "-5"),
        "agg.0:1: column 2 is -5, not a count pgbench prints"
    );
    assert_eq!(
        aggregate(0, "99999999999"),
        "agg.0:1: not a time: 99999999999"
    );
}
/// #33: `show` of an imported stock report dropped `(0.000%)` and `(without initial
/// connection time)` (and the other shares, `/N` of a -t run, stock's -L line and
/// statement columns): it now prints stock's report as stock printed it, less the
/// banner, then the percentiles of its -l logs.
#[test]
fn show_of_a_stock_import_prints_stocks_report() {
    for case in CASES {
        let doc = import_files(&paths(case)).unwrap();
        let shown = crate::show::render(&doc);
        let (header, rest) = shown.split_at(shown.match_indices('\n').nth(1).unwrap().0 + 1);
        assert!(
            header.starts_with("imported from stock pgbench output ("),
            "{header}"
        );
        let out = stdout(case);
        let report = out.split_once('\n').unwrap().1;
        let tail = rest
            .strip_prefix(report)
            .unwrap_or_else(|| panic!("{case}: shown\n{rest}\nstock\n{report}"));
        assert!(
            tail.is_empty()
                || tail.starts_with("latency percentiles in milliseconds (from the -l logs):\n"),
            "{case}: {tail}"
        );
    }
}
