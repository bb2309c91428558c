//! `--server-stats`: what the server did during the measured window, as read from its
//! statistics views on a connection of the run's own (not a client's). Counters keep
//! the views' and columns' own names (`pg_stat_database.xact_commit`,
//! `pg_stat_wal.wal_bytes`, ...); [`ServerStats::window`] holds their change over the
//! window, [`ServerStats::series`] their change in each second (on the same `t` as
//! the client's series), and the activity samples count the run's own backends in
//! `pg_stat_activity` by state and wait event. [`Derived`] puts them per transaction,
//! and [`render_block`] prints the `server:` block after the report. Where the server
//! has them, [`io`] breaks `pg_stat_io` down, [`replication`] follows the standbys'
//! lag and [`statements`] keeps `pg_stat_statements`' top statements.

pub mod io;
pub mod replication;
pub mod statements;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Counters by view, then by column.
pub type Counters = BTreeMap<String, BTreeMap<String, i64>>;

/// How many samples of the run's backends were in one state and wait event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityCount {
    pub state: Option<String>,
    pub wait_event_type: Option<String>,
    pub wait_event: Option<String>,
    pub samples: i64,
}

impl ActivityCount {
    /// `Type:Event`, or the state when the backend waited on nothing (`active`: on CPU).
    pub fn label(&self) -> String {
        match (&self.wait_event_type, &self.wait_event) {
            (Some(t), Some(e)) => format!("{t}:{e}"),
            _ => self.state.clone().unwrap_or_else(|| "unknown".into()),
        }
    }
}

/// Adds `samples` to the count of one state and wait event.
pub fn add_activity(counts: &mut Vec<ActivityCount>, sample: &ActivityCount) {
    match counts.iter_mut().find(|c| {
        c.state == sample.state
            && c.wait_event_type == sample.wait_event_type
            && c.wait_event == sample.wait_event
    }) {
        Some(c) => c.samples += sample.samples,
        None => counts.push(sample.clone()),
    }
}

/// One second of the window: the counters' change and the backends sampled in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSecond {
    /// The same `t` as the client's series' second.
    pub t: i64,
    pub counters: Counters,
    pub activity: Vec<ActivityCount>,
    /// The attached standbys as this second's read of `pg_stat_replication` saw them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standbys: Vec<replication::StandbySample>,
}

/// Per transaction of the run, and the shares the report prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// The client's successful transactions in the window.
    pub client_transactions: i64,
    /// `xact_commit + xact_rollback` of the run's database, less the sampler's own.
    pub server_transactions: i64,
    pub wal_bytes_per_transaction: Option<f64>,
    /// `wal_fpi / wal_records`.
    pub fpi_share: Option<f64>,
    pub blks_read_per_transaction: Option<f64>,
    /// `blks_hit / (blks_hit + blks_read)`.
    pub hit_ratio: Option<f64>,
    /// Timed and requested checkpoints that began in the window.
    pub checkpoints: Option<i64>,
    /// Autovacuum and autoanalyze runs on the run's database's tables.
    pub autovacuums: Option<i64>,
    /// Share of the backends' samples by [`ActivityCount::label`], largest first.
    pub wait_event_shares: Vec<(String, f64)>,
}

/// What `--server-stats` recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerStats {
    pub server_version_num: i64,
    /// The views read (those this server has and lets the run's user read).
    pub views: Vec<String>,
    /// Views left out and why (a missing view or permission is not a failed run).
    pub notes: Vec<String>,
    /// The change of every counter from the window's start to its end.
    pub window: Counters,
    pub series: Vec<ServerSecond>,
    /// Rounds of `pg_stat_activity` samples taken (10 a second).
    pub activity_rounds: i64,
    pub activity: Vec<ActivityCount>,
    /// The sampler's own queries that the window's `xact_commit` counts.
    pub sampler_transactions: i64,
    pub derived: Derived,
    /// `pg_stat_io`'s rows that changed in the window (16 on; `None`: not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<Vec<io::IoRow>>,
    /// The standbys seen in `pg_stat_replication` (`Some` and empty: none attached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standbys: Option<Vec<replication::Standby>>,
    /// `pg_stat_statements`' top statements by time in the window (`None`: the
    /// extension is not installed in the run's database, or could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statements: Option<Vec<statements::Statement>>,
}

/// A counter's change, when the view was read.
pub fn counter(c: &Counters, view: &str, column: &str) -> Option<i64> {
    c.get(view).and_then(|v| v.get(column)).copied()
}

/// `b - a` for every counter both have.
pub fn delta(a: &Counters, b: &Counters) -> Counters {
    b.iter()
        .map(|(view, cols)| {
            let before = a.get(view);
            let cols = cols
                .iter()
                .map(|(c, v)| {
                    let was = before.and_then(|p| p.get(c)).copied().unwrap_or(*v);
                    (c.clone(), v - was)
                })
                .collect();
            (view.clone(), cols)
        })
        .collect()
}

/// `after - before` for each of `after`'s counts (from zero, with no `before`): a
/// `pg_stat_io` row's or a statement's change.
pub fn change(
    before: Option<&BTreeMap<String, i64>>,
    after: &BTreeMap<String, i64>,
) -> BTreeMap<String, i64> {
    after
        .iter()
        .map(|(c, v)| {
            (
                c.clone(),
                v - before.and_then(|b| b.get(c)).copied().unwrap_or(0),
            )
        })
        .collect()
}

fn ratio(n: i64, d: i64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

/// Checkpoints in `c`: `pg_stat_checkpointer` (17 on) or `pg_stat_bgwriter` (before).
pub fn checkpoints(c: &Counters) -> Option<i64> {
    let new = counter(c, "pg_stat_checkpointer", "num_timed").zip(counter(
        c,
        "pg_stat_checkpointer",
        "num_requested",
    ));
    let old = counter(c, "pg_stat_bgwriter", "checkpoints_timed").zip(counter(
        c,
        "pg_stat_bgwriter",
        "checkpoints_req",
    ));
    new.or(old).map(|(t, r)| t + r)
}

/// The derived figures of a window's counters and samples.
pub fn derive(
    window: &Counters,
    activity: &[ActivityCount],
    sampler_transactions: i64,
    client_transactions: i64,
) -> Derived {
    let db = |col| counter(window, "pg_stat_database", col);
    let server = db("xact_commit").unwrap_or(0) + db("xact_rollback").unwrap_or(0);
    let per_tx = |v: Option<i64>| v.and_then(|v| ratio(v, client_transactions));
    let (read, hit) = (db("blks_read"), db("blks_hit"));
    let total: i64 = activity.iter().map(|a| a.samples).sum();
    let mut shares: Vec<(String, f64)> = Vec::new();
    for a in activity {
        let label = a.label();
        let share = a.samples as f64 / total as f64;
        match shares.iter_mut().find(|s| s.0 == label) {
            Some(s) => s.1 += share,
            None => shares.push((label, share)),
        }
    }
    shares.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let autovacuum = counter(window, "pg_stat_all_tables", "autovacuum_count").zip(counter(
        window,
        "pg_stat_all_tables",
        "autoanalyze_count",
    ));
    Derived {
        client_transactions,
        server_transactions: server - sampler_transactions,
        wal_bytes_per_transaction: per_tx(counter(window, "pg_stat_wal", "wal_bytes")),
        fpi_share: counter(window, "pg_stat_wal", "wal_fpi")
            .zip(counter(window, "pg_stat_wal", "wal_records"))
            .and_then(|(f, r)| ratio(f, r)),
        blks_read_per_transaction: per_tx(read),
        hit_ratio: hit.zip(read).and_then(|(h, r)| ratio(h, h + r)),
        checkpoints: checkpoints(window),
        autovacuums: autovacuum.map(|(v, a)| v + a),
        wait_event_shares: shares,
    }
}

/// The `server:` block printed after pgbench's report (`--print-server-stats`).
pub fn render_block(s: &ServerStats) -> String {
    let d = &s.derived;
    let mut out = String::new();
    let opt = |v: Option<f64>, digits: usize| {
        v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.digits$}"))
    };
    let pct =
        |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{:.2}%", v * 100.0));
    let _ = writeln!(out, "server: (server_version_num {})", s.server_version_num);
    let _ = writeln!(
        out,
        "  server transactions: {} (client {}, sampler {})",
        d.server_transactions, d.client_transactions, s.sampler_transactions
    );
    let _ = writeln!(
        out,
        "  WAL bytes per transaction: {} (full page images {})",
        opt(d.wal_bytes_per_transaction, 1),
        pct(d.fpi_share)
    );
    let _ = writeln!(
        out,
        "  blocks read per transaction: {}, buffer hit ratio {}",
        opt(d.blks_read_per_transaction, 3),
        pct(d.hit_ratio)
    );
    let count = |v: Option<i64>| v.map_or_else(|| "n/a".to_string(), |v| v.to_string());
    let _ = writeln!(
        out,
        "  checkpoints in window: {}, autovacuum/autoanalyze runs: {}",
        count(d.checkpoints),
        count(d.autovacuums)
    );
    let waits: Vec<String> = d
        .wait_event_shares
        .iter()
        .take(5)
        .map(|(l, s)| format!("{l} {:.1}%", s * 100.0))
        .collect();
    let _ = writeln!(
        out,
        "  wait events ({} samples): {}",
        s.activity.iter().map(|a| a.samples).sum::<i64>(),
        if waits.is_empty() {
            "none".into()
        } else {
            waits.join(", ")
        }
    );
    if let Some(io) = s.window.get("pg_stat_io") {
        let figures: Vec<String> = io::COLUMNS
            .iter()
            .filter_map(|c| Some(format!("{c} {}", io.get(*c)?)))
            .collect();
        let _ = writeln!(
            out,
            "  pg_stat_io (relation blocks): {}",
            figures.join(", ")
        );
    }
    if let Some(standbys) = &s.standbys {
        out.push_str(&replication::render(standbys));
    }
    if let Some(statements) = &s.statements {
        out.push_str(&statements::render(statements));
    }
    for n in &s.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(pairs: &[(&str, &str, i64)]) -> Counters {
        let mut c = Counters::new();
        for (v, col, n) in pairs {
            c.entry(v.to_string())
                .or_default()
                .insert(col.to_string(), *n);
        }
        c
    }

    #[test]
    fn derived_figures_are_per_client_transaction_and_leave_out_the_sampler() {
        let a = counters(&[
            ("pg_stat_database", "xact_commit", 100),
            ("pg_stat_database", "blks_hit", 10),
            ("pg_stat_database", "blks_read", 0),
            ("pg_stat_wal", "wal_bytes", 1000),
            ("pg_stat_wal", "wal_records", 10),
            ("pg_stat_wal", "wal_fpi", 0),
            ("pg_stat_bgwriter", "checkpoints_timed", 3),
            ("pg_stat_bgwriter", "checkpoints_req", 4),
        ]);
        let b = counters(&[
            ("pg_stat_database", "xact_commit", 1110),
            ("pg_stat_database", "blks_hit", 910),
            ("pg_stat_database", "blks_read", 100),
            ("pg_stat_wal", "wal_bytes", 41000),
            ("pg_stat_wal", "wal_records", 110),
            ("pg_stat_wal", "wal_fpi", 25),
            ("pg_stat_bgwriter", "checkpoints_timed", 3),
            ("pg_stat_bgwriter", "checkpoints_req", 5),
        ]);
        let w = delta(&a, &b);
        let act = |s: &str, t: Option<&str>, e: Option<&str>, n| ActivityCount {
            state: Some(s.into()),
            wait_event_type: t.map(Into::into),
            wait_event: e.map(Into::into),
            samples: n,
        };
        let mut activity = Vec::new();
        add_activity(&mut activity, &act("active", None, None, 1));
        add_activity(
            &mut activity,
            &act("idle", Some("Client"), Some("ClientRead"), 3),
        );
        add_activity(&mut activity, &act("active", None, None, 4));
        let d = derive(&w, &activity, 10, 1000);
        assert_eq!(d.server_transactions, 1000);
        assert_eq!(d.wal_bytes_per_transaction, Some(40.0));
        assert_eq!(d.fpi_share, Some(0.25));
        assert_eq!(d.blks_read_per_transaction, Some(0.1));
        assert_eq!(d.hit_ratio, Some(0.9));
        assert_eq!(d.checkpoints, Some(1));
        assert_eq!(d.autovacuums, None);
        assert_eq!(
            d.wait_event_shares,
            [
                ("active".to_string(), 0.625),
                ("Client:ClientRead".to_string(), 0.375)
            ]
        );
    }
}
