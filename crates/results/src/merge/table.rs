//! The per-worker table: each worker's own figures, and a flag on a worker whose
//! throughput per client or schedule lag stands out from the others' (what a client
//! machine that ran out of CPU or network looks like: its clients wait on
//! themselves, not on the server, so each does less and, under `-R`, falls behind
//! its schedule).

use super::check::{cut_short, WorkerFile};
use crate::merged::{MergeRecord, WorkerRow};
use crate::report::fmt_f;
use crate::summary::Summary;
use std::fmt::Write;

/// A worker is flagged when its throughput per client is this much below the median
/// of the other workers'. Workers of one run run the same script against the same
/// server, so a fifth less per client is beyond what chance spreads.
pub const LOW_TPS_PER_CLIENT: f64 = 0.20;
/// Under `-R`, a worker is flagged when its average schedule lag is over this many
/// times the other workers' median, and ...
pub const HIGH_LAG_RATIO: f64 = 2.0;
/// ... at least this much above it (ms): sub-millisecond lags are noise.
pub const HIGH_LAG_MIN_MS: f64 = 1.0;

/// One row per worker, flags included.
pub fn rows(workers: &[WorkerFile]) -> Vec<WorkerRow> {
    let mut rows: Vec<WorkerRow> = workers.iter().map(row).collect();
    flag_outliers(&mut rows);
    rows
}

fn row(w: &WorkerFile) -> WorkerRow {
    let run = w.run;
    let summary = Summary::from_run(run);
    let tps = run.tps();
    WorkerRow {
        index: w.worker.index,
        file: w.file.to_string(),
        hostname: w.doc.client_host.as_ref().and_then(|h| h.hostname.clone()),
        clients: run.settings.clients,
        first_client: w.worker.first_client,
        transactions: run.total.counts.cnt,
        failures: run.total.failures(),
        duration_s: run.bench_duration_us / 1e6,
        tps,
        tps_per_client: tps / run.settings.clients.max(1) as f64,
        latency_avg_ms: summary.latency_avg_ms,
        lag_avg_ms: summary.lag_avg_ms,
        aborted_clients: run.aborted_clients,
        cut_short: cut_short(run),
        flags: Vec::new(),
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Compares each whole worker with the median of the other whole workers (a worker
/// cut short is reported as such, and left out of the comparison).
fn flag_outliers(rows: &mut [WorkerRow]) {
    let whole: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].cut_short.is_none())
        .collect();
    let mut flags = vec![Vec::new(); rows.len()];
    for &i in &whole {
        let others = || whole.iter().filter(move |&&j| j != i).map(|&j| &rows[j]);
        let me = &rows[i];
        if let Some(m) = median(others().map(|r| r.tps_per_client).collect()) {
            if m > 0.0 && me.tps_per_client < (1.0 - LOW_TPS_PER_CLIENT) * m {
                flags[i].push(format!(
                    "throughput per client {} tps is {}% below the other workers' median ({} tps): is its client machine saturated?",
                    fmt_f(me.tps_per_client, 1),
                    fmt_f(100.0 * (1.0 - me.tps_per_client / m), 0),
                    fmt_f(m, 1)
                ));
            }
        }
        let lag = me.lag_avg_ms;
        if let (Some(lag), Some(m)) = (lag, median(others().filter_map(|r| r.lag_avg_ms).collect()))
        {
            if lag > HIGH_LAG_RATIO * m && lag > m + HIGH_LAG_MIN_MS {
                flags[i].push(format!(
                    "schedule lag {} ms against the other workers' median {} ms: is its client machine saturated?",
                    fmt_f(lag, 3),
                    fmt_f(m, 3)
                ));
            }
        }
    }
    for (r, f) in rows.iter_mut().zip(flags) {
        r.flags = f;
    }
}

/// The table as text, printed after the report.
pub fn render(record: &MergeRecord) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "per worker ({} of {} workers of run {}):",
        record.workers.len(),
        record.count,
        record.run_id
    );
    let _ = writeln!(
        out,
        "  {:>6}  {:>7}  {:>12}  {:>6}  {:>12}  {:>10}  {:>10}  {:>9}  {:<16}  note",
        "worker",
        "clients",
        "transactions",
        "failed",
        "tps",
        "tps/client",
        "latency ms",
        "lag ms",
        "host"
    );
    let mut rows: Vec<(u32, String)> = record
        .workers
        .iter()
        .map(|w| (w.index, row_line(w)))
        .collect();
    rows.extend(
        record
            .missing
            .iter()
            .map(|&i| (i, format!("  {i:>6}  missing: no file\n"))),
    );
    rows.sort_by_key(|(i, _)| *i);
    for (_, line) in rows {
        out.push_str(&line);
    }
    out
}

fn row_line(w: &WorkerRow) -> String {
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| fmt_f(v, 3));
    let mut notes: Vec<&str> = Vec::new();
    if w.cut_short.is_some() {
        notes.push("cut short");
    }
    if w.flags.iter().any(|f| f.starts_with("throughput")) {
        notes.push("low tps/client");
    }
    if w.flags.iter().any(|f| f.starts_with("schedule lag")) {
        notes.push("high lag");
    }
    format!(
        "  {:>6}  {:>7}  {:>12}  {:>6}  {:>12}  {:>10}  {:>10}  {:>9}  {:<16}  {}\n",
        w.index,
        w.clients,
        w.transactions,
        w.failures,
        fmt_f(w.tps, 3),
        fmt_f(w.tps_per_client, 3),
        opt(w.latency_avg_ms),
        opt(w.lag_avg_ms),
        w.hostname.as_deref().unwrap_or("-"),
        notes.join(", ")
    )
    .trim_end()
    .to_string()
        + "\n"
}
