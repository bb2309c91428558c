//! Reads real sysbench 1.0's run output (its stdout: the banner, `Number of threads`,
//! the "SQL statistics", "General statistics" and "Latency (ms)" blocks) into a
//! [`Summary`], so a sysbench run and a `--workload=oltp_*` run of pgbench-rs compare
//! with `pgbench-report compare`: transactions and tps, the ignored errors as
//! failures, the latency average, maximum and sysbench's one percentile. What sysbench
//! does not print (stddev, the other percentiles) stays `None`.

use super::report_text::Banner;
use super::ImportError;
use crate::summary::{Failures, PercentileSummary, Summary};

/// Whether `text` is sysbench's output rather than a pgbench report.
pub fn is_sysbench(text: &str) -> bool {
    text.starts_with("sysbench ") || text.contains("\nSQL statistics:\n")
}

/// The number that starts `rest` (`358.46` of `358.46 per sec.)`, `5.0181` of `5.0181s`).
fn number(rest: &str) -> Option<f64> {
    let word = rest.split_whitespace().next()?;
    let digits = word.trim_start_matches('(').trim_end_matches('s');
    digits.parse().ok()
}

/// Reads `file`'s text into the summary and the banner.
pub fn parse(file: &str, text: &str) -> Result<(Summary, Banner), ImportError> {
    let mut s = Summary {
        transaction_type: Some("<sysbench>".to_string()),
        ..Summary::default()
    };
    let mut banner = Banner::default();
    let (mut seconds, mut pct, mut max) = (None, None, None);
    for (i, line) in text.lines().enumerate() {
        let bad = |message: &str| ImportError::Report {
            file: file.to_string(),
            line: i + 1,
            message: message.to_string(),
        };
        let t = line.trim_start();
        let field = |label: &str| t.strip_prefix(label).and_then(number);
        if let Some(v) = t.strip_prefix("sysbench ") {
            banner.client = v.split_whitespace().next().map(|v| format!("sysbench {v}"));
        } else if let Some(n) = field("Number of threads:") {
            s.clients = Some(n as i64);
            s.threads = Some(n as i64);
        } else if let Some(rest) = t.strip_prefix("transactions:") {
            s.transactions = number(rest).map(|n| n as i64);
            let rate = rest.split_once('(').and_then(|(_, r)| number(r));
            s.tps = Some(rate.ok_or_else(|| bad("no rate on the transactions line"))?);
        } else if let Some(rest) = t.strip_prefix("ignored errors:") {
            let total = number(rest).ok_or_else(|| bad("no count of ignored errors"))?;
            s.failures = Some(Failures {
                total: total as i64,
                ..Failures::default()
            });
        } else if let Some(v) = field("total time:") {
            seconds = Some(v);
        } else if let Some(v) = field("avg:") {
            s.latency_avg_ms = Some(v);
        } else if let Some(v) = field("max:") {
            max = Some(v);
        } else if let Some((p, v)) = percentile(t) {
            pct = Some((p, v));
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
        count: s.transactions.unwrap_or(0).max(0) as u64,
    });
    Ok((s, banner))
}

/// `95th percentile:   12.98` → (95, 12.98).
fn percentile(line: &str) -> Option<(f64, f64)> {
    let (p, rest) = line.split_once("th percentile:")?;
    Some((p.trim().parse().ok()?, number(rest)?))
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
        let (s, banner) = parse("sb.txt", RUN).unwrap();
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
        assert!(parse("x", "sysbench 1.0.20\nFATAL: no such test\n").is_err());
    }
}
