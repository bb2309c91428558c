//! Reads real sysbench 1.0's run output (its stdout: the banner, `Number of threads`,
//! the "SQL statistics", "General statistics" and "Latency (ms)" blocks) into a
//! [`Summary`], so a sysbench run and a `--workload=oltp_*` run of pgbench-rs compare
//! with `pgbench-report compare`: transactions and tps, the ignored errors as
//! failures, the latency average, maximum and sysbench's one percentile. What sysbench
//! does not print (stddev, the other percentiles, the test's name unless the import is
//! told it) stays `None`.

use crate::import::error::ImportError;
use crate::import::plausible;
use crate::import::report_text::Banner;
use crate::summary::{Failures, PercentileSummary, Summary};
use crate::workload::kind::{Imported, Importer, Tool};

/// The reader of sysbench's output.
pub struct Sysbench;

pub static IMPORTER: Sysbench = Sysbench;

static TOOL: Tool = Tool {
    name: SYSBENCH,
    percentiles_title: "latency percentile in milliseconds (sysbench's own):",
};

impl Importer for Sysbench {
    fn tool(&self) -> &'static Tool {
        &TOOL
    }

    fn recognises(&self, text: &str) -> bool {
        is_sysbench(text)
    }

    fn made(&self, transaction_type: &str, client: &str) -> bool {
        transaction_type.starts_with("<sysbench") || client.starts_with(SYSBENCH)
    }

    fn takes_test(&self) -> bool {
        true
    }

    /// The test, when given, is also the run's `workload` option.
    fn import(&self, file: &str, text: &str, test: Option<&str>) -> Result<Imported, ImportError> {
        let (summary, banner) = parse(file, text, test)?;
        let mut imported = Imported {
            summary,
            banner,
            ..Imported::default()
        };
        if let Some(t) = test {
            let workload = test_name(t).into();
            imported.options.insert("workload".to_string(), workload);
        }
        Ok(imported)
    }
}

/// Whether `text` is sysbench's output rather than a pgbench report.
pub fn is_sysbench(text: &str) -> bool {
    text.starts_with("sysbench ") || text.contains("\nSQL statistics:\n")
}

/// The word that starts `rest`, as a number's text (`358.46` of `358.46 per sec.)`,
/// `5.0181` of `5.0181s`).
fn first_word(rest: &str) -> &str {
    let word = rest.split_whitespace().next().unwrap_or("");
    word.trim_start_matches('(').trim_end_matches('s')
}

/// The transaction type an import of sysbench's output shows: sysbench does not print
/// the test it ran, so the name is what `pgbench-report import --test` gave, if
/// anything (`oltp_read_only`, or as sysbench was given it:
/// `/usr/share/sysbench/oltp_read_only.lua`).
pub fn transaction_type(test: Option<&str>) -> String {
    match test.map(test_name).filter(|n| !n.is_empty()) {
        Some(n) => format!("<sysbench: {n}>"),
        None => "<sysbench>".to_string(),
    }
}

/// A test's name as `--workload` spells it: without a directory or `.lua`.
pub fn test_name(test: &str) -> String {
    let base = test.rsplit('/').next().unwrap_or(test);
    base.strip_suffix(".lua").unwrap_or(base).to_string()
}

const SYSBENCH: &str = "sysbench";

/// Reads `file`'s text into the summary and the banner; `test` is the test's name.
pub fn parse(file: &str, text: &str, test: Option<&str>) -> Result<(Summary, Banner), ImportError> {
    let mut s = Summary {
        transaction_type: Some(transaction_type(test)),
        ..Summary::default()
    };
    let mut banner = Banner::default();
    let (mut seconds, mut pct, mut max) = (None, None, None);
    for (i, line) in text.lines().enumerate() {
        let at = |message: String| ImportError::Report {
            file: file.to_string(),
            line: i + 1,
            message,
        };
        let count = |v: &str, what: &str, max: i64| {
            plausible::count(first_word(v), what, max, SYSBENCH).map_err(at)
        };
        let figure =
            |v: &str, what: &str| plausible::figure(first_word(v), what, SYSBENCH).map_err(at);
        let t = line.trim_start();
        if let Some(v) = t.strip_prefix("sysbench ") {
            banner.client = v.split_whitespace().next().map(|v| format!("sysbench {v}"));
        } else if let Some(rest) = t.strip_prefix("Number of threads:") {
            let n = count(rest, "number of threads", plausible::MAX_CLIENTS)?;
            (s.clients, s.threads) = (Some(n), Some(n));
        } else if let Some(rest) = t.strip_prefix("transactions:") {
            s.transactions = Some(count(rest, "transactions", i64::MAX)?);
            let (_, rate) = rest
                .split_once('(')
                .ok_or_else(|| at("no rate on the transactions line".to_string()))?;
            s.tps = Some(figure(rate, "the transactions' rate")?);
        } else if let Some(rest) = t.strip_prefix("ignored errors:") {
            s.failures = Some(Failures {
                total: count(rest, "ignored errors", i64::MAX)?,
                ..Failures::default()
            });
        } else if let Some(rest) = t.strip_prefix("total time:") {
            let v = figure(rest, "total time")?;
            seconds = Some(plausible::duration_s(v, "total time", SYSBENCH).map_err(at)?);
        } else if let Some(rest) = t.strip_prefix("avg:") {
            s.latency_avg_ms = Some(figure(rest, "the latency average")?);
        } else if let Some(rest) = t.strip_prefix("max:") {
            max = Some(figure(rest, "the latency maximum")?);
        } else if let Some((p, rest)) = t.split_once("th percentile:") {
            let p = figure(p, "the percentile")?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(at(format!("the {p}th percentile is not a percentile")));
            }
            pct = Some((p, figure(rest, "the percentile's latency")?));
        }
    }
    if s.transactions.is_none() || s.tps.is_none() {
        return Err(ImportError::NotAReport {
            file: file.to_string(),
        });
    }
    s.duration_s = seconds.map(|v| v.round() as i64);
    s.percentiles = max.map(|max_ms| PercentileSummary {
        values: pct.into_iter().collect(),
        max_ms,
        count: s.transactions.unwrap_or(0) as u64,
    });
    Ok((s, banner))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 2
Initializing random number generator from current time


Initializing worker threads...

Threads started!

SQL statistics:
    queries performed:
        read:                            25284
        write:                           7199
        other:                           3622
        total:                           36105
    transactions:                        1799   (358.46 per sec.)
    queries:                             36105  (7194.17 per sec.)
    ignored errors:                      7      (1.39 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          5.0181s
    total number of events:              1799

Latency (ms):
         min:                                    0.57
         avg:                                    5.56
         max:                                 1024.50
         95th percentile:                       12.98
         sum:                                10008.08

Threads fairness:
    events (avg/stddev):           899.5000/2.50
    execution time (avg/stddev):   5.0040/0.00
";

    #[test]
    fn a_real_run_reads_back() {
        assert!(is_sysbench(RUN));
        let (s, banner) = parse("sb.txt", RUN, None).unwrap();
        assert_eq!(banner.client.as_deref(), Some("sysbench 1.0.20"));
        assert_eq!(
            (s.clients, s.transactions, s.tps),
            (Some(2), Some(1799), Some(358.46))
        );
        assert_eq!(s.failures.map(|f| f.total), Some(7));
        assert_eq!((s.duration_s, s.latency_avg_ms), (Some(5), Some(5.56)));
        let p = s.percentiles.unwrap();
        assert_eq!((p.values, p.max_ms), (vec![(95.0, 12.98)], 1024.5));
    }

    #[test]
    fn a_pgbench_report_is_not_sysbench_output() {
        assert!(!is_sysbench(
            "pgbench (15.18)\ntransaction type: <builtin: TPC-B (sort of)>\n"
        ));
        assert!(parse("x", "sysbench 1.0.20\nFATAL: no such test\n", None).is_err());
    }

    /// #38: a capture with `transactions: -1799` was imported as -1799 transactions;
    /// every count is whole and not negative, every figure finite.
    #[test]
    fn implausible_figures_are_refused_with_their_line() {
        for (from, to, want) in [
            (
                "1799   (358.46",
                "-1799   (358.46",
                "sb.txt:18: transactions is -1799, not a count sysbench prints",
            ),
            (
                "(358.46 per sec.)",
                "(nan per sec.)",
                "sb.txt:18: the transactions' rate is NaN, not a figure sysbench prints",
            ),
            (
                "Number of threads: 2",
                "Number of threads: 4294967295",
                "sb.txt:4: number of threads is 4294967295, not a count sysbench prints",
            ),
            (
                "5.0181s",
                "999999999999.0s",
                "sb.txt:24: total time is 999999999999 s, longer than any run",
            ),
            (
                "avg:                                    5.56",
                "avg:                                    inf",
                "sb.txt:29: the latency average is inf, not a figure sysbench prints",
            ),
            (
                "95th percentile:",
                "195th percentile:",
                "sb.txt:31: the 195th percentile is not a percentile",
            ),
            (
                "7      (1.39",
                "-7      (1.39",
                "sb.txt:20: ignored errors is -7, not a count sysbench prints",
            ),
        ] {
            assert!(RUN.contains(from), "{from}");
            let e = parse("sb.txt", &RUN.replace(from, to), None)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(want), "{to}: {e}");
        }
    }

    /// #33: sysbench does not print its test's name; `import --test` keeps it.
    #[test]
    fn the_test_given_names_the_transaction_type() {
        let (s, _) = parse("sb.txt", RUN, Some("oltp_read_only")).unwrap();
        assert_eq!(
            s.transaction_type.as_deref(),
            Some("<sysbench: oltp_read_only>")
        );
        let path = transaction_type(Some("/usr/share/sysbench/oltp_insert.lua"));
        assert_eq!(path, "<sysbench: oltp_insert>");
        assert_eq!(transaction_type(None), "<sysbench>");
    }

    /// #33: the import lost the test's name, `show` called sysbench's own 95th
    /// percentile one "from the -l logs", and `compare` dropped its row.
    #[test]
    fn show_and_compare_keep_what_sysbench_printed() {
        use crate::compare::{compare, Figure, Side};
        use crate::document::{ResultsFile, RunMeta};
        use crate::import::{import, Inputs};
        use crate::synthetic::{run, Spec};
        let imported = import(&Inputs {
            report: ("sb.txt".to_string(), RUN.to_string()),
            test: Some("oltp_read_only".to_string()),
            ..Inputs::default()
        })
        .unwrap();
        assert_eq!(imported.options["workload"], "oltp_read_only");
        let shown = crate::show::render(&imported);
        assert!(
            shown.starts_with("imported from sysbench output (sb.txt)"),
            "{shown}"
        );
        assert!(
            shown.contains("transaction type: <sysbench: oltp_read_only>\n"),
            "{shown}"
        );
        assert!(
            shown.ends_with(
                "latency percentile in milliseconds (sysbench's own):\n  p95 = 12.980\n  max = 1024.500\n"
            ),
            "{shown}"
        );
        assert!(!shown.contains("-l logs"), "{shown}");
        // Ours has no 95th in its summary: compare reads it from its histogram.
        let ours = ResultsFile::from_run(run(&Spec::tpcb(2, 5, 300.0, 2000.0)), RunMeta::default());
        let p95 = ours.histogram().unwrap().value_at_quantile(0.95) as f64 / 1000.0;
        let sides = [
            Side {
                label: "sysbench".into(),
                runs: vec![imported],
            },
            Side {
                label: "ours".into(),
                runs: vec![ours],
            },
        ];
        let c = compare(&sides).unwrap();
        let row = c
            .rows
            .iter()
            .find(|r| r.figure == Figure::Percentile(95.0))
            .expect("a p95 row");
        assert_eq!(row.values, [Some(12.98), Some(p95)]);
        let figures: Vec<&Figure> = c.rows.iter().map(|r| &r.figure).collect();
        let at = |f: Figure| figures.iter().position(|g| **g == f).unwrap();
        assert!(at(Figure::Percentile(90.0)) < at(Figure::Percentile(95.0)));
        assert!(at(Figure::Percentile(95.0)) < at(Figure::Percentile(99.0)));
        let table = crate::compare::render_table(&c);
        assert!(
            table.lines().any(|l| l.starts_with("latency p95 (ms)")),
            "{table}"
        );
    }
}
