//! sysbench 1.0's end-of-run summary for a `--workload` run, printed after pgbench's
//! report: its "SQL statistics" block (`db_report_cumulative` in sysbench's
//! `db_driver.c`: queries by kind, transactions, queries, ignored errors and
//! reconnects with their rates), "General statistics" and "Latency (ms)"
//! (`sb_report_cumulative`), in sysbench's layout and number formats. Pure: the figures
//! come from the [`RunResult`].

use super::SysbenchSummary;
use crate::run::RunResult;
use std::fmt::Write;

/// Appends the summary blocks of `r`, whose sysbench part is `s`.
pub fn render(r: &RunResult, s: &SysbenchSummary, out: &mut String) {
    let seconds = r.bench_duration_us / 1e6;
    let q = &s.queries;
    let rate = |n: i64| n as f64 / seconds;
    let events = r.total.counts.cnt;
    let _ = writeln!(out, "SQL statistics:");
    let _ = writeln!(out, "    queries performed:");
    for (name, n) in [
        ("read", q.read),
        ("write", q.write),
        ("other", q.other),
        ("total", q.total()),
    ] {
        let _ = writeln!(out, "        {:<33}{n}", format!("{name}:"));
    }
    for (name, n) in [
        ("transactions", events),
        ("queries", q.total()),
        ("ignored errors", q.errors),
        ("reconnects", q.reconnects),
    ] {
        let _ = writeln!(
            out,
            "    {:<37}{n:<6} ({:.2} per sec.)",
            format!("{name}:"),
            rate(n)
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "General statistics:");
    let _ = writeln!(
        out,
        "    total time:                          {seconds:.4}s"
    );
    let _ = writeln!(out, "    total number of events:              {events}");
    let _ = writeln!(out);
    latency_block(r, s.percentile, out);
}

/// `Latency (ms):` with min, avg, max, the percentile and the sum.
fn latency_block(r: &RunResult, percentile: u32, out: &mut String) {
    let lat = &r.total.latency;
    let ms = |us: f64| us / 1000.0;
    let avg = if lat.count > 0 {
        lat.sum / lat.count as f64
    } else {
        0.0
    };
    let _ = writeln!(out, "Latency (ms):");
    let _ = writeln!(out, "         min: {:39.2}", ms(lat.min));
    let _ = writeln!(out, "         avg: {:39.2}", ms(avg));
    let _ = writeln!(out, "         max: {:39.2}", ms(lat.max));
    match (&r.histogram, percentile) {
        (_, 0) => {
            let _ = writeln!(out, "         percentile stats:               disabled");
        }
        (Some(h), p) if !h.is_empty() => {
            let us = h.value_at_quantile(f64::from(p) / 100.0) as f64;
            let _ = writeln!(out, "        {p:3}th percentile: {:27.2}", ms(us));
        }
        (_, p) => {
            let _ = writeln!(out, "        {p:3}th percentile: {:27.2}", 0.0);
        }
    }
    let _ = writeln!(out, "         sum: {:39.2}", ms(lat.sum));
    let _ = writeln!(out);
}

#[cfg(test)]
mod tests {
    use super::super::QueryCounts;
    use super::*;
    use crate::histogram::LatencyHistogram;
    use crate::stats::TxOutcome;

    #[test]
    fn blocks_have_sysbench_layout() {
        let mut r = crate::synthetic::run(&crate::synthetic::Spec::tpcb(1, 5, 100.0, 1000.0));
        r.bench_duration_us = 5_018_100.0;
        r.total = Default::default();
        let mut h = LatencyHistogram::new();
        for us in [570u64, 5_000, 12_000, 1_024_500] {
            r.total.accum(TxOutcome::Success, us as f64, 0.0, 1, false);
            h.record(us as f64);
        }
        r.histogram = Some(h);
        let s = SysbenchSummary {
            percentile: 95,
            queries: QueryCounts {
                read: 25284,
                write: 7199,
                other: 3622,
                errors: 7,
                reconnects: 0,
            },
            tables: None,
            table_size: None,
        };
        let mut out = String::new();
        render(&r, &s, &mut out);
        let expected = "SQL statistics:
    queries performed:
        read:                            25284
        write:                           7199
        other:                           3622
        total:                           36105
    transactions:                        4      (0.80 per sec.)
    queries:                             36105  (7194.95 per sec.)
    ignored errors:                      7      (1.39 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          5.0181s
    total number of events:              4

Latency (ms):
         min:                                    0.57
         avg:                                  260.52
         max:                                 1024.50
";
        assert!(out.starts_with(expected), "{out}");
        assert!(out.contains("\n         95th percentile: "), "{out}");
        assert!(
            out.ends_with("         sum:                                 1042.07\n\n"),
            "{out}"
        );
    }
}
