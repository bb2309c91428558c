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

/// One second of the window (or, in a run longer than [`MAX_SERIES`] seconds, several:
/// [`ServerSecond::seconds`]): the counters' change and the backends sampled in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSecond {
    /// The same `t` as the client's series' second (the first, of several).
    pub t: i64,
    /// How many seconds it covers: 1, or a power of two in a long run.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub seconds: i64,
    /// Empty when the counters could not be read for it (a lost connection, or the
    /// second after one): missing, not zero.
    pub counters: Counters,
    pub activity: Vec<ActivityCount>,
    /// The attached standbys as this second's read of `pg_stat_replication` saw them
    /// (the last second's read, of several).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standbys: Vec<replication::StandbySample>,
}

/// The entries a server series keeps at most: an hour of seconds. A longer run's
/// entries cover 2, 4, 8, ... seconds each, as few as keep them within this many.
pub const MAX_SERIES: usize = 3600;

fn one() -> i64 {
    1
}

fn is_one(n: &i64) -> bool {
    *n == 1
}

/// How the window's end was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowEnd {
    /// Seconds from the window's start to the last read of the counters: the end's,
    /// or the last that succeeded when the end could not be read (the window's
    /// counters then stop there).
    pub read_at_s: f64,
    /// Why the end could not be read; absent when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
    /// The run's backends still connected when the end was read (waited for up to
    /// 2 s: what they still do is not in the window).
    #[serde(default)]
    pub backends_left: i64,
}

/// Per transaction of the run, and the shares the report prints. The figures per
/// transaction need the whole window: when its end could not be read they are `None`,
/// as is what needs a view that was not read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// The client's successful transactions in the window.
    pub client_transactions: i64,
    /// `xact_commit + xact_rollback` of the run's database, less the sampler's own.
    pub server_transactions: Option<i64>,
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
    /// How the window's end was read (absent in files written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<WindowEnd>,
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

impl ServerStats {
    /// Whether the window's end was read (files without [`ServerStats::end`] did).
    pub fn end_read(&self) -> bool {
        self.end.as_ref().is_none_or(|e| e.lost.is_none())
    }

    /// The derived figures of the window, for `client_transactions` of the client's.
    pub fn derive(&self, client_transactions: i64) -> Derived {
        derive(
            &self.window,
            &self.activity,
            self.sampler_transactions,
            client_transactions,
        )
        .whole_window(self.end_read())
    }
}

impl Derived {
    /// Without the figures per transaction unless the window is `whole`: part of the
    /// server's window over all of the client's would say less than it did.
    fn whole_window(self, whole: bool) -> Derived {
        if whole {
            return self;
        }
        Derived {
            server_transactions: None,
            wal_bytes_per_transaction: None,
            blks_read_per_transaction: None,
            ..self
        }
    }
}

/// The derived figures of a window's counters and samples.
pub fn derive(
    window: &Counters,
    activity: &[ActivityCount],
    sampler_transactions: i64,
    client_transactions: i64,
) -> Derived {
    let db = |col| counter(window, "pg_stat_database", col);
    let server =
        db("xact_commit").map(|c| c + db("xact_rollback").unwrap_or(0) - sampler_transactions);
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
        server_transactions: server,
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
    if let Some(WindowEnd {
        lost: Some(why),
        read_at_s,
        ..
    }) = &s.end
    {
        let _ = writeln!(
            out,
            "  window: its end could not be read ({why}); the counters stop {read_at_s:.1} s into it"
        );
    }
    let count = |v: Option<i64>| v.map_or_else(|| "n/a".to_string(), |v| v.to_string());
    let _ = writeln!(
        out,
        "  server transactions: {} (client {}, sampler {})",
        count(d.server_transactions),
        d.client_transactions,
        s.sampler_transactions
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
    if s.activity_rounds == 0 {
        out.push_str("  wait events: n/a (not sampled)\n");
    } else {
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
    }
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
        assert_eq!(d.server_transactions, Some(1000));
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

    /// #38: what was not read prints as n/a, never as a number made of it (the
    /// sampler's own queries taken from a count of nothing made `-33`).
    #[test]
    fn what_was_not_read_prints_as_n_a_and_a_lost_end_is_said() {
        let mut s = ServerStats {
            server_version_num: 150020,
            views: Vec::new(),
            notes: vec!["pg_stat_database left out: permission denied".into()],
            window: counters(&[("pg_stat_wal", "wal_bytes", 5000)]),
            series: Vec::new(),
            activity_rounds: 0,
            activity: Vec::new(),
            sampler_transactions: 33,
            derived: Derived::default(),
            io: None,
            standbys: None,
            statements: None,
            end: None,
        };
        s.derived = s.derive(100);
        assert_eq!(s.derived.server_transactions, None);
        assert_eq!(s.derived.wal_bytes_per_transaction, Some(50.0));
        let block = render_block(&s);
        assert!(
            block.contains("\n  server transactions: n/a (client 100, sampler 33)\n"),
            "{block}"
        );
        assert!(
            block.contains("\n  wait events: n/a (not sampled)\n"),
            "{block}"
        );
        s.end = Some(WindowEnd {
            read_at_s: 2.0,
            lost: Some("the connection was lost".into()),
            backends_left: 0,
        });
        s.derived = s.derive(100);
        assert_eq!(s.derived.wal_bytes_per_transaction, None);
        let block = render_block(&s);
        assert!(
            block.contains("\n  window: its end could not be read (the connection was lost); the counters stop 2.0 s into it\n"),
            "{block}"
        );
        let json = serde_json::to_string(&s).unwrap();
        let back: ServerStats = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
    }
}
