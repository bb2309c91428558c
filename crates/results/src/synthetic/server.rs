//! Simulated `--server-stats` for a simulated run: each second's WAL, buffer and
//! checkpoint counters in proportion to that second's transactions (with noise), and
//! activity samples by chosen shares, summed into the window and its derived figures
//! as the sampler does. For tests of what reads server stats (compare, html).

use super::SplitMix;
use crate::run::RunResult;
use crate::server::{self, ActivityCount, Counters, ServerSecond, ServerStats};

/// What the server did per transaction.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub seed: u64,
    pub wal_bytes_per_transaction: f64,
    /// WAL records per transaction and the share of them that are full-page images.
    pub wal_records_per_transaction: f64,
    pub fpi_share: f64,
    /// Blocks touched per transaction and the share found in shared buffers.
    pub blocks_per_transaction: f64,
    pub hit_ratio: f64,
    /// Seconds (the series' `t`) in which a checkpoint began.
    pub checkpoints_at: Vec<i64>,
    /// `(state, wait_event_type:wait_event or none, share)` of the backends' samples.
    pub waits: Vec<(&'static str, Option<&'static str>, f64)>,
}

impl ServerSpec {
    /// A read-mostly server: little WAL, nearly every block a hit, backends mostly
    /// waiting for their client.
    pub fn reads(seed: u64) -> ServerSpec {
        ServerSpec {
            seed,
            wal_bytes_per_transaction: 400.0,
            wal_records_per_transaction: 4.0,
            fpi_share: 0.05,
            blocks_per_transaction: 12.0,
            hit_ratio: 0.995,
            checkpoints_at: Vec::new(),
            waits: vec![
                ("idle", Some("Client:ClientRead"), 0.7),
                ("active", None, 0.25),
                ("active", Some("LWLock:WALWrite"), 0.05),
            ],
        }
    }
}

fn add(c: &mut Counters, view: &str, col: &str, v: i64) {
    *c.entry(view.into())
        .or_default()
        .entry(col.into())
        .or_default() += v;
}

/// `spec`'s server stats for `run` (its series' seconds), as `run.server` holds them.
pub fn server_stats(run: &RunResult, spec: &ServerSpec) -> ServerStats {
    let mut rng = SplitMix::new(spec.seed);
    let mut noisy = |mean: f64| (mean * (1.0 + 0.05 * rng.normal())).max(0.0).round() as i64;
    let backends = run.settings.clients as f64;
    let mut window = Counters::new();
    let mut activity: Vec<ActivityCount> = Vec::new();
    let mut series = Vec::new();
    for s in &run.series {
        let tx = s.counts.cnt as f64;
        let mut c = Counters::new();
        let records = noisy(tx * spec.wal_records_per_transaction);
        add(&mut c, "pg_stat_wal", "wal_records", records);
        add(
            &mut c,
            "pg_stat_wal",
            "wal_fpi",
            noisy(records as f64 * spec.fpi_share),
        );
        add(
            &mut c,
            "pg_stat_wal",
            "wal_bytes",
            noisy(tx * spec.wal_bytes_per_transaction),
        );
        let blocks = tx * spec.blocks_per_transaction;
        add(&mut c, "pg_stat_database", "xact_commit", s.counts.cnt);
        add(&mut c, "pg_stat_database", "xact_rollback", 0);
        add(
            &mut c,
            "pg_stat_database",
            "blks_hit",
            noisy(blocks * spec.hit_ratio),
        );
        add(
            &mut c,
            "pg_stat_database",
            "blks_read",
            noisy(blocks * (1.0 - spec.hit_ratio)),
        );
        let checkpoint = i64::from(spec.checkpoints_at.contains(&s.t));
        add(&mut c, "pg_stat_bgwriter", "checkpoints_timed", 0);
        add(&mut c, "pg_stat_bgwriter", "checkpoints_req", checkpoint);
        let mut second = Vec::new();
        for (state, wait, share) in &spec.waits {
            let (wait_event_type, wait_event) = match wait.and_then(|w| w.split_once(':')) {
                Some((t, e)) => (Some(t.to_string()), Some(e.to_string())),
                None => (None, None),
            };
            let sample = ActivityCount {
                state: Some(state.to_string()),
                wait_event_type,
                wait_event,
                samples: noisy(10.0 * backends * share),
            };
            server::add_activity(&mut second, &sample);
            server::add_activity(&mut activity, &sample);
        }
        for (view, cols) in &c {
            for (col, v) in cols {
                add(&mut window, view, col, *v);
            }
        }
        series.push(ServerSecond {
            t: s.t,
            seconds: 1,
            counters: c,
            activity: second,
            standbys: Vec::new(),
        });
    }
    let mut stats = ServerStats {
        server_version_num: 150018,
        views: vec![
            "pg_stat_database".into(),
            "pg_stat_wal".into(),
            "pg_stat_bgwriter".into(),
            "pg_stat_activity".into(),
        ],
        notes: Vec::new(),
        window,
        activity_rounds: 10 * series.len() as i64,
        series,
        activity,
        sampler_transactions: 0,
        derived: server::Derived::default(),
        io: None,
        standbys: None,
        statements: None,
        end: None,
    };
    stats.derived = stats.derive(run.total.counts.cnt);
    stats
}
