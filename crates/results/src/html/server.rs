//! The page's server panels (`--server-stats`) and the warm-up's seconds: what
//! `page.js` draws under the client's charts, on the same seconds (each point at its
//! second's end, as the client's are): the WAL rate, the buffer hit ratio, the wait
//! events' shares of the sampled backends stacked, and the seconds in which a
//! checkpoint began; and the `--warmup` seconds before the measured window (at
//! negative seconds: the client's series counts from the window's start), their tps
//! and latencies.

use crate::document::ResultsFile;
use crate::server::{self, counter, ServerStats};
use crate::timeline::{Timeline, TimelineSource};
use serde::Serialize;
use std::collections::BTreeMap;

/// Wait events (or states) drawn apart at most; the rest add up to `other`.
const MAX_WAITS: usize = 8;

/// One wait event's share of each second's samples, %.
#[derive(Serialize)]
pub(super) struct WaitSeries {
    label: String,
    share: Vec<Option<f64>>,
}

/// One file's server series.
#[derive(Serialize)]
pub(super) struct ServerChart {
    /// Each second's end, seconds since the clients started (the client's `t`).
    t: Vec<f64>,
    /// `wal_bytes` a second, in MB (10^6 bytes).
    wal_mb_s: Vec<Option<f64>>,
    /// `blks_hit / (blks_hit + blks_read)`, %.
    hit_ratio: Vec<Option<f64>>,
    /// Largest overall first, then `other` if any.
    waits: Vec<WaitSeries>,
    /// Ends of the seconds in which a checkpoint began.
    checkpoints: Vec<f64>,
}

/// The warm-up's seconds.
#[derive(Serialize)]
pub(super) struct WarmupChart {
    /// How long it ran: `--warmup`, and the moment the clients' transactions took
    /// to cross into the window (its last second's series entry is that short).
    length_s: f64,
    /// Each second's end, from the measured window's start (where the client's `t`
    /// counts from): 0 is the warm-up's end.
    t: Vec<f64>,
    tps: Vec<f64>,
    /// Its latencies as the measured window's are: each second's average, and its
    /// p50, p90, p99, p99.9 (the warm-up's series records them as the run's does).
    latency_avg: Vec<Option<f64>>,
    percentiles: [Vec<Option<f64>>; 4],
}

/// The `--warmup` seconds of a pgbench-rs run that recorded them.
pub(super) fn warmup(doc: &ResultsFile) -> Option<WarmupChart> {
    let w = doc.run.as_ref()?.warmup.as_ref()?;
    let points = Timeline::from_seconds(TimelineSource::Series, &w.series).points;
    let length_s = points
        .last()
        .map_or(w.seconds as f64, |p| p.t_s + p.length_s);
    Some(WarmupChart {
        length_s,
        t: points
            .iter()
            .map(|p| p.t_s + p.length_s - length_s)
            .collect(),
        tps: points.iter().map(|p| p.tps).collect(),
        latency_avg: points.iter().map(|p| p.latency_avg_ms).collect(),
        percentiles: super::percentiles(&points),
    })
}

/// The labels drawn apart: the [`MAX_WAITS`] with most samples over the window.
fn top_waits(s: &ServerStats) -> Vec<String> {
    let mut by_label: BTreeMap<String, i64> = BTreeMap::new();
    for a in &s.activity {
        *by_label.entry(a.label()).or_default() += a.samples;
    }
    let mut labels: Vec<(String, i64)> = by_label.into_iter().collect();
    labels.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    labels.into_iter().take(MAX_WAITS).map(|l| l.0).collect()
}

/// A file's server series, when it has server stats.
pub(super) fn server(doc: &ResultsFile) -> Option<ServerChart> {
    let s = ServerStats::of(doc)?;
    // A second's length from the client's point of the same `t` (a `-t` run's last
    // second is partial); a second the client's series lacks is taken as whole.
    let lengths: BTreeMap<i64, f64> = doc.timeline().map_or_else(BTreeMap::new, |t| {
        t.points
            .iter()
            .map(|p| (p.t_s.round() as i64, p.length_s))
            .collect()
    });
    let top = top_waits(s);
    let mut waits: Vec<WaitSeries> = top
        .iter()
        .map(|l| WaitSeries {
            label: l.clone(),
            share: Vec::new(),
        })
        .collect();
    let mut other = WaitSeries {
        label: "other".into(),
        share: Vec::new(),
    };
    let mut chart = ServerChart {
        t: Vec::new(),
        wal_mb_s: Vec::new(),
        hit_ratio: Vec::new(),
        waits: Vec::new(),
        checkpoints: Vec::new(),
    };
    for second in &s.series {
        // Several seconds, in a long run's series.
        let length: f64 = (second.t..second.t + second.seconds.max(1))
            .map(|t| lengths.get(&t).copied().unwrap_or(1.0))
            .sum();
        let end = second.t as f64 + length;
        if server::checkpoints(&second.counters).is_some_and(|n| n > 0) {
            chart.checkpoints.push(end);
        }
        // The seconds the client's series has (the server's last entry, from the
        // deadline to the end's read after the clients left, is drawn only as a
        // checkpoint's mark).
        if !lengths.is_empty() && !lengths.contains_key(&second.t) {
            continue;
        }
        let c = |view, col| counter(&second.counters, view, col);
        chart.t.push(end);
        chart.wal_mb_s.push(
            c("pg_stat_wal", "wal_bytes")
                .filter(|_| length > 0.0)
                .map(|b| b as f64 / 1e6 / length),
        );
        let (hit, read) = (
            c("pg_stat_database", "blks_hit"),
            c("pg_stat_database", "blks_read"),
        );
        chart.hit_ratio.push(
            hit.zip(read)
                .filter(|(h, r)| h + r > 0)
                .map(|(h, r)| 100.0 * h as f64 / (h + r) as f64),
        );
        let total: i64 = second.activity.iter().map(|a| a.samples).sum();
        let share = |n: i64| (total > 0).then(|| 100.0 * n as f64 / total as f64);
        let mut rest = total;
        for w in &mut waits {
            let n: i64 = second
                .activity
                .iter()
                .filter(|a| a.label() == w.label)
                .map(|a| a.samples)
                .sum();
            rest -= n;
            w.share.push(share(n));
        }
        other.share.push(share(rest));
    }
    if other.share.iter().any(|v| v.is_some_and(|v| v > 0.0)) {
        waits.push(other);
    }
    chart.waits = waits;
    Some(chart)
}

/// The panels' headings and places, under the client's charts: one wait chart a
/// file with server stats (`chart-server-waits-I`, I its place among the files).
pub(super) fn panels(files: &[(String, ResultsFile)], out: &mut String) {
    let with: Vec<(usize, &String)> = files
        .iter()
        .enumerate()
        .filter(|(_, (_, d))| ServerStats::of(d).is_some())
        .map(|(i, (l, _))| (i, l))
        .collect();
    if with.is_empty() {
        return;
    }
    out.push_str(
        "<h2>Server: WAL rate</h2><p class=\"note\">WAL written each second (pg_stat_wal.wal_bytes, \
         the cluster's); dashed lines: a checkpoint began in that second.</p>\
         <div class=\"chart\" id=\"chart-server-wal\"></div>\n\
         <h2>Server: buffer hit ratio</h2><p class=\"note\">Blocks found in shared buffers of \
         those the run's database asked for each second (blks_hit / (blks_hit + blks_read)).</p>\
         <div class=\"chart\" id=\"chart-server-hits\"></div>\n\
         <h2>Server: wait events</h2><p class=\"note\">The run's backends as sampled 10 times a \
         second in pg_stat_activity, by wait_event_type:wait_event (or state when waiting on \
         nothing: active is on CPU), stacked to 100% of each second's samples.</p>\n",
    );
    for (i, label) in with {
        out.push_str(&format!(
            "<h3>{}</h3><div class=\"chart\" id=\"chart-server-waits-{i}\"></div>\n",
            super::esc(label)
        ));
    }
}
