//! `compare`'s rows for the `--server-stats` figures of each transaction: WAL bytes,
//! the full-page-image share, blocks read, the buffer hit ratio, checkpoints in the
//! window and the wait events' shares of the backends' samples. A run's figure is
//! its window's (`run.server.derived`); its per-second counterpart, for single-run
//! intervals, divides each second's server counters by the same second's client
//! transactions (or samples, records, blocks), weighted by them, so a batch's mean is
//! the batch's own ratio, as the window's figure is the window's.

use super::interval::Series;
use super::{Better, Format};
use crate::document::ResultsFile;
use crate::server::{self, counter, ServerSecond, ServerStats};
use std::collections::BTreeMap;

/// A figure of `--server-stats`, per transaction of the run or as a share.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerFigure {
    WalBytesPerTransaction,
    /// `wal_fpi / wal_records`, %.
    FpiShare,
    BlksReadPerTransaction,
    /// `blks_hit / (blks_hit + blks_read)`, %.
    HitRatio,
    Checkpoints,
    /// A wait event's (or a state's) share of the backends' samples, %, by
    /// [`server::ActivityCount::label`].
    WaitShare(String),
}

/// The figures every run with server stats has, in the table's order (the wait
/// events' shares follow, by what the runs sampled).
const FIXED: [ServerFigure; 5] = [
    ServerFigure::WalBytesPerTransaction,
    ServerFigure::FpiShare,
    ServerFigure::BlksReadPerTransaction,
    ServerFigure::HitRatio,
    ServerFigure::Checkpoints,
];

/// Gate names of the fixed figures (`wait:LABEL` names a wait event's share).
pub fn gate_names() -> Vec<String> {
    FIXED.iter().map(ServerFigure::gate_name).collect()
}

/// The figures whose gate names [`gate_names`] lists.
#[cfg(test)]
pub(super) fn figures_with_fixed_names() -> [ServerFigure; 5] {
    FIXED
}

/// The prefix of a wait event's gate name: `wait:LWLock:WALWrite`.
pub const WAIT_GATE: &str = "wait:";

/// Wait event types whose share is time lost to contention or I/O (lower is better);
/// the others (`Client`, `Activity`, `IPC`, `Timeout`, the states) say where the
/// backends were, not whether that is good.
const CONTENTION: &[&str] = &["Lock", "LWLock", "IO", "BufferPin"];

/// Wait rows at most, and the share (in some file) a wait needs for a row.
const MAX_WAIT_ROWS: usize = 8;
const MIN_WAIT_SHARE: f64 = 0.01;

/// The server figures of files that all have server stats, wait events by the
/// first file's share, largest first.
pub fn figures(docs: &[&ResultsFile]) -> Vec<ServerFigure> {
    let Some(stats) = docs
        .iter()
        .map(|d| ServerStats::of(d))
        .collect::<Option<Vec<_>>>()
    else {
        return Vec::new();
    };
    let mut v = FIXED.to_vec();
    let mut waits: Vec<&str> = Vec::new();
    for s in &stats {
        for (label, share) in &s.derived.wait_event_shares {
            if *share >= MIN_WAIT_SHARE && !waits.contains(&label.as_str()) {
                waits.push(label);
            }
        }
    }
    v.extend(
        waits
            .into_iter()
            .take(MAX_WAIT_ROWS)
            .map(|l| ServerFigure::WaitShare(l.to_string())),
    );
    v
}

impl ServerFigure {
    pub fn label(&self) -> String {
        match self {
            ServerFigure::WalBytesPerTransaction => "WAL bytes per transaction".into(),
            ServerFigure::FpiShare => "full-page images (% of WAL records)".into(),
            ServerFigure::BlksReadPerTransaction => "blocks read per transaction".into(),
            ServerFigure::HitRatio => "buffer hit ratio (%)".into(),
            ServerFigure::Checkpoints => "checkpoints in window".into(),
            ServerFigure::WaitShare(l) => format!("wait {l} (% of samples)"),
        }
    }

    pub fn gate_name(&self) -> String {
        match self {
            ServerFigure::WalBytesPerTransaction => "wal_bytes_per_transaction".into(),
            ServerFigure::FpiShare => "fpi_share".into(),
            ServerFigure::BlksReadPerTransaction => "blks_read_per_transaction".into(),
            ServerFigure::HitRatio => "hit_ratio".into(),
            ServerFigure::Checkpoints => "checkpoints".into(),
            ServerFigure::WaitShare(l) => format!("{WAIT_GATE}{l}"),
        }
    }

    /// Checkpoints are a count; the rest are ratios and shares.
    pub fn format(&self) -> Format {
        match self {
            ServerFigure::Checkpoints => Format::Whole,
            _ => Format::Real,
        }
    }

    pub fn better(&self) -> Better {
        match self {
            ServerFigure::HitRatio => Better::Higher,
            ServerFigure::WaitShare(l) => {
                let kind = l.split(':').next().unwrap_or_default();
                if l.contains(':') && CONTENTION.contains(&kind) {
                    Better::Lower
                } else {
                    Better::Neither
                }
            }
            _ => Better::Lower,
        }
    }

    /// The window's figure.
    pub fn value(&self, doc: &ResultsFile) -> Option<f64> {
        let s = ServerStats::of(doc)?;
        let d = &s.derived;
        match self {
            ServerFigure::WalBytesPerTransaction => d.wal_bytes_per_transaction,
            ServerFigure::FpiShare => d.fpi_share.map(|v| 100.0 * v),
            ServerFigure::BlksReadPerTransaction => d.blks_read_per_transaction,
            ServerFigure::HitRatio => d.hit_ratio.map(|v| 100.0 * v),
            ServerFigure::Checkpoints => d.checkpoints.map(|v| v as f64),
            ServerFigure::WaitShare(l) => {
                // A run that sampled its backends and never saw this one: 0 %.
                let sampled = s.activity.iter().any(|a| a.samples > 0);
                sampled.then(|| {
                    d.wait_event_shares
                        .iter()
                        .find(|(label, _)| label == l)
                        .map_or(0.0, |(_, share)| 100.0 * share)
                })
            }
        }
    }

    /// Each second's (value, weight), for the seconds the client's series has, less
    /// its last (usually partial) one, as tps's; a second whose counters were not read
    /// has none.
    pub fn per_second(&self, doc: &ResultsFile) -> Option<Series> {
        let stats = ServerStats::of(doc)?;
        let timeline = doc.timeline()?;
        let points = &timeline.points;
        let client: BTreeMap<i64, f64> = points[..points.len().saturating_sub(1)]
            .iter()
            .map(|p| {
                let tx = p.transactions.map_or(p.tps * p.length_s, |t| t as f64);
                (p.t_s.round() as i64, tx)
            })
            .collect();
        // An entry of several seconds (a long run's) against the client's same seconds.
        let series = stats
            .series
            .iter()
            .filter_map(|s| {
                let tx: Option<f64> = (s.t..s.t + s.seconds.max(1))
                    .map(|t| client.get(&t).copied())
                    .sum();
                Some((s, tx?))
            })
            .filter_map(|(s, tx)| self.second(s, tx))
            .filter(|(_, w)| *w > 0.0)
            .collect();
        Some(series)
    }

    /// One second's figure and weight, given the client's transactions in it.
    fn second(&self, s: &ServerSecond, tx: f64) -> Option<(f64, f64)> {
        let c = |view, col| counter(&s.counters, view, col).map(|v| v as f64);
        let per = |n: f64, d: f64| (d > 0.0).then(|| (n / d, d));
        match self {
            ServerFigure::WalBytesPerTransaction => per(c("pg_stat_wal", "wal_bytes")?, tx),
            ServerFigure::FpiShare => {
                let (f, r) = (
                    c("pg_stat_wal", "wal_fpi")?,
                    c("pg_stat_wal", "wal_records")?,
                );
                per(100.0 * f, r)
            }
            ServerFigure::BlksReadPerTransaction => per(c("pg_stat_database", "blks_read")?, tx),
            ServerFigure::HitRatio => {
                let hit = c("pg_stat_database", "blks_hit")?;
                let read = c("pg_stat_database", "blks_read")?;
                per(100.0 * hit, hit + read)
            }
            ServerFigure::Checkpoints => Some((server::checkpoints(&s.counters)? as f64, 1.0)),
            ServerFigure::WaitShare(l) => {
                let total: i64 = s.activity.iter().map(|a| a.samples).sum();
                let mine: i64 = s
                    .activity
                    .iter()
                    .filter(|a| &a.label() == l)
                    .map(|a| a.samples)
                    .sum();
                per(100.0 * mine as f64, total as f64)
            }
        }
    }
}

#[cfg(test)]
mod tests;
