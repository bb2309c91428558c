//! Stock pgbench's log files. A `-l` per-transaction log (one file per thread) holds
//! every transaction's latency: from it come an exact latency histogram (run and per
//! script) and a per-second series with that second's percentiles. An
//! `--aggregate-interval` log holds each interval's counters (count, latency sum,
//! sum of squares, min, max, lag, skipped, retries, failures by kind) but no
//! percentiles.

use super::ImportError;
use crate::histogram::LatencyHistogram;
use crate::series::{Second, SeriesRecorder};
use crate::stats::{Counts, StatsData, TxOutcome};
use crate::timeline::{stats_ms, Point, Timeline, TimelineSource};
use std::collections::BTreeMap;

/// Which optional columns the logs have, from the report.
#[derive(Debug, Clone, Copy)]
pub struct Columns {
    /// `-R`: a schedule-lag column.
    pub lag: bool,
    /// `--max-tries` other than 1: a retries column.
    pub retries: bool,
}

/// One line of a `-l` log.
struct Tx {
    end_us: i64,
    latency: f64,
    lag: f64,
    tries: u32,
    outcome: TxOutcome,
    script: usize,
}

/// What the `-l` logs give.
#[derive(Debug)]
pub struct TxLogs {
    pub histogram: LatencyHistogram,
    /// By script number (0-based, as the log writes it).
    pub scripts: BTreeMap<usize, LatencyHistogram>,
    pub seconds: Vec<Second>,
    pub total: StatsData,
}

fn tx_line(file: &str, line_no: usize, line: &str, cols: Columns) -> Result<Tx, ImportError> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let want = 6 + usize::from(cols.lag) + usize::from(cols.retries);
    let bad = |message: String| ImportError::Log {
        file: file.to_string(),
        line: line_no,
        message,
    };
    if w.len() != want {
        return Err(bad(format!(
            "expected {want} fields of a -l log line, found {}",
            w.len()
        )));
    }
    let int = |s: &str| {
        s.parse::<i64>()
            .map_err(|_| bad(format!("not a number: {s}")))
    };
    let (outcome, latency) = match w[2] {
        "skipped" => (TxOutcome::Skipped, 0.0),
        "failed" | "serialization" => (TxOutcome::SerializationFailure, 0.0),
        "deadlock" => (TxOutcome::DeadlockFailure, 0.0),
        "other" => (TxOutcome::OtherFailure, 0.0),
        v => (TxOutcome::Success, int(v)? as f64),
    };
    let lag = if cols.lag { int(w[6])? as f64 } else { 0.0 };
    let retries = if cols.retries { int(w[want - 1])? } else { 0 };
    let (secs, usecs) = (int(w[4])?, int(w[5])?);
    if !(0..MAX_UNIX_S).contains(&secs) || !(0..1_000_000).contains(&usecs) {
        return Err(bad(format!("not a time: {secs} {usecs}")));
    }
    if latency < 0.0 || lag < 0.0 {
        return Err(bad("a negative latency or lag".to_string()));
    }
    Ok(Tx {
        end_us: secs * 1_000_000 + usecs,
        latency,
        lag,
        tries: u32::try_from(retries + 1).map_err(|_| bad("bad retries".to_string()))?,
        outcome,
        script: usize::try_from(int(w[3])?).map_err(|_| bad("bad script".to_string()))?,
    })
}

/// Unix seconds a log line may carry (year 2100): its microseconds then fit an i64.
const MAX_UNIX_S: i64 = 4_102_444_800;
/// How far apart two transactions of one run may end. The per-second series has an
/// entry for every second between the first and the last: one bad timestamp made a
/// 420 MB file of empty seconds.
const MAX_SPAN_US: i64 = 31 * 86_400 * 1_000_000;

/// Reads every thread's `-l` log of one run.
pub fn tx_logs(files: &[(String, String)], cols: Columns) -> Result<TxLogs, ImportError> {
    let mut txs = Vec::new();
    let mut first_end = None;
    for (name, text) in files {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let tx = tx_line(name, i + 1, line, cols)?;
            let first = *first_end.get_or_insert(tx.end_us);
            if (tx.end_us - first).abs() > MAX_SPAN_US {
                return Err(ImportError::Log {
                    file: name.clone(),
                    line: i + 1,
                    message: format!(
                        "time {} s is more than 31 days from the first line's, {} s",
                        tx.end_us / 1_000_000,
                        first / 1_000_000
                    ),
                });
            }
            txs.push(tx);
        }
    }
    txs.sort_by_key(|t| t.end_us);
    // The run starts when its first transaction did.
    let origin = txs
        .iter()
        .map(|t| t.end_us - t.latency as i64)
        .min()
        .unwrap_or(0);
    let mut out = TxLogs {
        histogram: LatencyHistogram::new(),
        scripts: BTreeMap::new(),
        seconds: Vec::new(),
        total: StatsData::default(),
    };
    let mut series = SeriesRecorder::new(origin);
    for t in &txs {
        let mut one = StatsData::default();
        one.accum(t.outcome, t.latency, t.lag, t.tries, cols.lag);
        out.total.merge(&one);
        let ok = t.outcome == TxOutcome::Success;
        series.record(t.end_us, t.outcome, t.latency, t.lag, t.tries, cols.lag);
        let per_script = out.scripts.entry(t.script).or_default();
        if ok {
            out.histogram.record(t.latency);
            per_script.record(t.latency);
        }
    }
    let last = txs.last().map_or(origin, |t| t.end_us);
    out.seconds = series.finish(last);
    Ok(out)
}

/// Reads every thread's `--aggregate-interval` log of one run into a timeline
/// (intervals of all threads with the same start added up). `detailed`: the run had
/// `--failures-detailed`, without which pgbench 15 writes its failure columns as 0.
pub fn aggregate_logs(
    files: &[(String, String)],
    cols: Columns,
    detailed: bool,
) -> Result<Timeline, ImportError> {
    let mut by_start: BTreeMap<i64, StatsData> = BTreeMap::new();
    for (name, text) in files {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (start, agg) = aggregate_line(name, i + 1, line)?;
            by_start.entry(start).or_default().merge(&agg);
        }
    }
    let starts: Vec<i64> = by_start.keys().copied().collect();
    let interval = starts
        .windows(2)
        .map(|w| w[1] - w[0])
        .min()
        .unwrap_or(1)
        .max(1);
    let first = starts.first().copied().unwrap_or(0);
    let points = by_start
        .iter()
        .map(|(start, s)| {
            let lat = stats_ms(&s.latency);
            let lag = stats_ms(&s.lag).filter(|_| cols.lag);
            Point {
                t_s: (start - first) as f64,
                length_s: interval as f64,
                tps: s.counts.cnt as f64 / interval as f64,
                transactions: Some(s.counts.cnt),
                latency_avg_ms: lat.map(|l| l.0),
                latency_stddev_ms: lat.map(|l| l.1),
                latency_min_ms: lat.map(|l| l.2),
                latency_max_ms: lat.map(|l| l.3),
                percentiles_ms: None,
                failures: detailed.then(|| s.failures()),
                retried: cols.retries.then_some(s.counts.retried),
                retries: cols.retries.then_some(s.counts.retries),
                skipped: Some(s.counts.skipped),
                lag_avg_ms: lag.map(|l| l.0),
                lag_max_ms: lag.map(|l| l.3),
            }
        })
        .collect();
    Ok(Timeline {
        source: TimelineSource::AggregateLog,
        points,
    })
}

/// `start cnt lat_sum lat_sum2 lat_min lat_max lag_sum lag_sum2 lag_min lag_max
/// skipped retried retries serialization deadlock`: pgbench 15 writes all 15.
fn aggregate_line(file: &str, line_no: usize, line: &str) -> Result<(i64, StatsData), ImportError> {
    let bad = |message: String| ImportError::Log {
        file: file.to_string(),
        line: line_no,
        message,
    };
    let w: Vec<&str> = line.split_whitespace().collect();
    if w.len() != 15 {
        return Err(bad(format!(
            "expected 15 fields of an --aggregate-interval log line, found {}",
            w.len()
        )));
    }
    let n: Vec<f64> = w
        .iter()
        .map(|s| {
            s.parse::<f64>()
                .map_err(|_| bad(format!("not a number: {s}")))
        })
        .collect::<Result<_, _>>()?;
    let simple = |o: usize, count: i64| crate::stats::SimpleStats {
        count,
        sum: n[o],
        sum2: n[o + 1],
        min: n[o + 2],
        max: n[o + 3],
    };
    let cnt = n[1] as i64;
    let s = StatsData {
        counts: Counts {
            cnt,
            skipped: n[10] as i64,
            retried: n[11] as i64,
            retries: n[12] as i64,
            serialization_failures: n[13] as i64,
            deadlock_failures: n[14] as i64,
            // pgbench 19 logs a 16th column: its other failures
            other_sql_failures: n.get(15).map_or(0, |v| *v as i64),
        },
        latency: simple(2, cnt),
        lag: simple(6, cnt),
    };
    Ok((n[0] as i64, s))
}
