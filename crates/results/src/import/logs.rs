//! Stock pgbench's log files. A `-l` per-transaction log (one file per thread) holds
//! every transaction's latency: from it come an exact latency histogram (run and per
//! script) and a per-second series with that second's percentiles. An
//! `--aggregate-interval` log holds each interval's counters (count, latency sum,
//! sum of squares, min, max, lag, skipped, retries, failures by kind) but no
//! percentiles.

use super::{plausible, ImportError};
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
    /// Which file (by its place in the list) and line it was.
    at: (usize, usize),
}

/// What the report says of the run that its `-l` lines must fit.
#[derive(Debug, Clone, Copy)]
pub struct RunShape {
    /// How long the run took, seconds, where the report tells: its `-T`, or its
    /// transactions over its tps, whichever is longer.
    pub length_s: Option<f64>,
    /// Its scripts: a line's script number is below.
    pub scripts: usize,
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

fn tx_line(
    file: &str,
    line_no: usize,
    line: &str,
    cols: Columns,
    scripts: usize,
) -> Result<Tx, ImportError> {
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
        "skipped" => (TxOutcome::Skipped, 0),
        "failed" | "serialization" => (TxOutcome::SerializationFailure, 0),
        "deadlock" => (TxOutcome::DeadlockFailure, 0),
        "other" => (TxOutcome::OtherFailure, 0),
        v => (TxOutcome::Success, int(v)?),
    };
    let lag = if cols.lag { int(w[6])? } else { 0 };
    let retries = if cols.retries { int(w[want - 1])? } else { 0 };
    let (secs, usecs) = (int(w[4])?, int(w[5])?);
    if !(0..MAX_UNIX_S).contains(&secs) || !(0..1_000_000).contains(&usecs) {
        return Err(bad(format!("not a time: {secs} {usecs}")));
    }
    if latency < 0 || lag < 0 {
        return Err(bad("a negative latency or lag".to_string()));
    }
    let tries = u32::try_from(retries)
        .ok()
        .and_then(|r| r.checked_add(1))
        .ok_or_else(|| bad(format!("not a count of retries: {retries}")))?;
    let script = usize::try_from(int(w[3])?)
        .ok()
        .filter(|&s| s < scripts)
        .ok_or_else(|| {
            bad(format!(
                "script {} is not one of the report's {scripts} script(s)",
                w[3]
            ))
        })?;
    Ok(Tx {
        end_us: secs * 1_000_000 + usecs,
        latency: latency as f64,
        lag: lag as f64,
        tries,
        outcome,
        script,
        at: (0, line_no),
    })
}

/// Unix seconds a log line may carry (year 2100): its microseconds then fit an i64.
pub(super) const MAX_UNIX_S: i64 = 4_102_444_800;

/// How far a transaction may lie from the middle of the run's lines beyond twice the
/// run's length: the initial connections, a slow last transaction, clocks.
const SLACK_US: i64 = 60 * 1_000_000;

/// The same reach when the report does not tell the run's length (`-t`, and nothing
/// succeeded).
const REACH_UNKNOWN_US: i64 = 86_400 * 1_000_000;

/// Reads every thread's `-l` log of one run.
pub fn tx_logs(
    files: &[(String, String)],
    cols: Columns,
    run: RunShape,
) -> Result<TxLogs, ImportError> {
    let mut txs = Vec::new();
    for (f, (name, text)) in files.iter().enumerate() {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let mut tx = tx_line(name, i + 1, line, cols, run.scripts)?;
            tx.at.0 = f;
            txs.push(tx);
        }
    }
    txs.sort_by_key(|t| t.end_us);
    within_run(files, &txs, run)?;
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

/// Refuses a transaction (the first in the files' order) that starts, ends or waited
/// for its schedule further from the middle of the run's lines than the run lasted:
/// the per-second series has an entry for every second from the first start to the
/// last end, so one line 30 days off made a 2 s run's file 1.1 GB. `txs` is sorted by
/// end.
fn within_run(files: &[(String, String)], txs: &[Tx], run: RunShape) -> Result<(), ImportError> {
    let Some(mid) = txs.get(txs.len().saturating_sub(1) / 2).map(|t| t.end_us) else {
        return Ok(());
    };
    let reach = run
        .length_s
        .map_or(REACH_UNKNOWN_US, |s| (2.0 * s * 1e6) as i64 + SLACK_US);
    let off = |t: &Tx| {
        let start = t.end_us.saturating_sub(t.latency as i64);
        let ends = (t.end_us - mid).abs();
        let starts = start.saturating_sub(mid).saturating_abs();
        ends.max(starts).max(t.lag as i64)
    };
    let Some(t) = txs.iter().filter(|t| off(t) > reach).min_by_key(|t| t.at) else {
        return Ok(());
    };
    let length = match run.length_s {
        Some(s) => format!("{s:.0} s by its report"),
        None => "of a length its report does not tell".to_string(),
    };
    Err(ImportError::Log {
        file: files[t.at.0].0.clone(),
        line: t.at.1,
        message: format!(
            "this transaction lies {} s from the middle of the run's other lines (at {} s), outside the run ({length})",
            off(t) / 1_000_000,
            mid / 1_000_000
        ),
    })
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
    // The start and the counts are whole, the latency and lag sums, minima and maxima
    // finite; none negative.
    const COUNTS: [usize; 7] = [0, 1, 10, 11, 12, 13, 14];
    let n: Vec<f64> = w
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let what = format!("column {}", i + 1);
            let v = if COUNTS.contains(&i) {
                plausible::count(s, &what, i64::MAX, "pgbench").map(|v| v as f64)
            } else {
                plausible::figure(s, &what, "pgbench")
            };
            v.map_err(bad)
        })
        .collect::<Result<_, _>>()?;
    if n[0] >= MAX_UNIX_S as f64 {
        return Err(bad(format!("not a time: {}", w[0])));
    }
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
            // pgbench's logs do not tell a transaction in doubt from another failure
            in_doubt: 0,
        },
        latency: simple(2, cnt),
        lag: simple(6, cnt),
    };
    Ok((n[0] as i64, s))
}
