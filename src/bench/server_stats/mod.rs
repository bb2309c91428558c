//! `--server-stats`: the [`Sampler`], a [`Watcher`] of the measured window on a
//! connection of its own. It reads the [`views`] the server's version has when the
//! window begins, every second, and when the clients are done, and samples the run's
//! own backends in `pg_stat_activity` 10 times a second (11 queries a second in all; the
//! standbys' lag is a column of the second's snapshot). A view the server lacks or
//! the user may not read is left out with a note, never a failed run. Worker 0 of a
//! `--worker` run samples for all (the server's figures are the whole run's).
//!
//! PostgreSQL's backends publish their counters at most once a second (and when they
//! exit), so a second's figures can lean into the next; the window's totals are
//! exact within that, and the end is read after the run's backends have gone.
//!
//! Besides the views' counters: `pg_stat_io` row by row ([`io`], 16 on) and the
//! top statements of `pg_stat_statements` ([`statements`], where it is installed) at
//! the window's edges, and the standbys' lag ([`replication`]) every second.

pub mod io;
pub mod replication;
pub mod statements;
pub mod views;

use super::clock::now_us;
use super::plan::BenchPlan;
use super::window::{self, Watcher};
use super::RunError;
use pgbench_results::server::io::IoRow;
use pgbench_results::server::statements::{self as top, Read};
use pgbench_results::server::{
    self, replication as lag, ActivityCount, Counters, ServerSecond, ServerStats,
};
use pgbench_results::RunResult;
use pgbench_wire::{ConnectOptions, Connection};
use views::View;

/// Activity samples a second.
const SAMPLES_PER_SECOND: i64 = 10;
/// How long the end waits for the run's backends to exit (and publish their counters).
const EXIT_WAIT_US: i64 = 2_000_000;

/// The sampler's state over the window.
pub struct Sampler {
    conn: Connection,
    version: i64,
    views: Vec<View>,
    notes: Vec<String>,
    activity_sql: String,
    start: Counters,
    last: Counters,
    series: Vec<ServerSecond>,
    /// Samples of the second under way.
    second: Vec<ActivityCount>,
    activity: Vec<ActivityCount>,
    rounds: i64,
    /// Queries run since the window's start was read (each a transaction).
    queries: i64,
    /// `pg_stat_io`'s rows when the window began (16 on).
    io_start: Option<Vec<IoRow>>,
    /// Whether `pg_stat_replication` can be read.
    replication: bool,
    /// `pg_stat_statements`, and its statements when the window began.
    statements: Option<(statements::Statements, Vec<Read>)>,
}

/// A query's rows as text.
pub type Rows = Vec<Vec<Option<String>>>;

fn number(rows: &[Vec<Option<String>>], col: usize) -> i64 {
    rows.first()
        .and_then(|r| r.get(col).cloned().flatten())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl Sampler {
    /// Connects and finds the server's version and which views it lets us read.
    pub fn connect(opts: &ConnectOptions) -> Result<Sampler, RunError> {
        let mut conn = Connection::connect(opts).map_err(|e| RunError::Setup {
            message: format!("could not connect for --server-stats: {e}"),
            hint: None,
        })?;
        let version = conn
            .query_rows("select current_setting('server_version_num')::int")
            .map(|rows| number(&rows, 0))
            .unwrap_or(0);
        let mut notes = views::missing(version);
        let views: Vec<View> = views::views(version)
            .into_iter()
            .filter(|v| match conn.query_rows(&v.query) {
                Ok(_) => true,
                Err(e) => {
                    notes.push(format!("{} left out: {}", v.name, short(&e)));
                    false
                }
            })
            .collect();
        let io = views.iter().any(|v| v.name == "pg_stat_io");
        let replication = match conn.query_rows(&views::marked(replication::QUERY)) {
            Ok(_) => true,
            Err(e) => {
                notes.push(format!("pg_stat_replication left out: {}", short(&e)));
                false
            }
        };
        let statements = match statements::probe(&mut conn) {
            Ok(Some(s)) => Some((s, Vec::new())),
            Ok(None) => {
                notes.push(
                    "pg_stat_statements left out: the extension is not installed in the run's database"
                        .into(),
                );
                None
            }
            Err(e) => {
                notes.push(format!("pg_stat_statements left out: {e}"));
                None
            }
        };
        let app = opts
            .get("application_name")
            .or_else(|| opts.get("fallback_application_name"))
            .unwrap_or("")
            .to_string();
        Ok(Sampler {
            conn,
            version,
            views,
            notes,
            activity_sql: views::activity_query(&app),
            start: Counters::new(),
            last: Counters::new(),
            series: Vec::new(),
            second: Vec::new(),
            activity: Vec::new(),
            rounds: 0,
            queries: 0,
            io_start: io.then(Vec::new),
            replication,
            statements,
        })
    }

    /// Runs one of the sampler's queries (marked as its own, and counted).
    fn query(&mut self, sql: &str) -> Result<Rows, pgbench_wire::QueryError> {
        self.queries += 1;
        self.conn.query_rows(&views::marked(sql))
    }

    /// `pg_stat_io`'s rows now (`None` when not read or when the read fails).
    fn read_io(&mut self) -> Option<Vec<IoRow>> {
        self.io_start.as_ref()?;
        self.query(&io::query()).ok().map(|rows| io::parse(&rows))
    }

    /// `pg_stat_statements`' statements now (`None` when not read or failed).
    fn read_statements(&mut self) -> Option<Vec<Read>> {
        let sql = self.statements.as_ref()?.0.query.clone();
        let rows = self.conn.query_rows(&sql);
        self.queries += 1;
        match rows {
            Ok(rows) => self.statements.as_ref().map(|(s, _)| s.parse(&rows)),
            Err(e) => {
                self.notes.push(format!(
                    "pg_stat_statements could not be read: {}",
                    short(&e)
                ));
                self.statements = None;
                None
            }
        }
    }

    /// Every view's counters now, in one query (each view's own query as a one-row
    /// subquery; the standbys a last column): a view that fails is noted once, and the
    /// counters keep their last figures.
    fn snapshot(&mut self) -> (Counters, Vec<lag::StandbySample>) {
        let mut from: Vec<String> = self
            .views
            .iter()
            .enumerate()
            .map(|(i, v)| format!("({}) v{i}", v.query))
            .collect();
        if self.replication {
            from.push(format!("({}) standbys", replication::as_json()));
        }
        let sql = format!("select * from {}", from.join(" cross join "));
        match self.query(&sql) {
            Ok(rows) => {
                let mut col = 0;
                let mut out = Counters::new();
                for v in &self.views {
                    let cols = v
                        .columns
                        .iter()
                        .map(|c| {
                            col += 1;
                            (c.to_string(), number(&rows, col - 1))
                        })
                        .collect();
                    out.insert(v.name.to_string(), cols);
                }
                let standbys = rows.first().and_then(|r| r.get(col).cloned().flatten());
                (out, replication::parse(standbys.as_deref()))
            }
            Err(e) => {
                let note = format!("the statistics could not be read: {}", short(&e));
                if !self.notes.contains(&note) {
                    self.notes.push(note);
                }
                (self.last.clone(), Vec::new())
            }
        }
    }

    /// One round of `pg_stat_activity`; the number of the run's backends seen.
    fn sample(&mut self) -> i64 {
        let sql = self.activity_sql.clone();
        let Ok(rows) = self.query(&sql) else {
            return 0;
        };
        self.rounds += 1;
        let mut seen = 0;
        for r in rows {
            let text = |i: usize| r.get(i).cloned().flatten();
            let count = ActivityCount {
                state: text(0),
                wait_event_type: text(1),
                wait_event: text(2),
                samples: text(3).and_then(|v| v.parse().ok()).unwrap_or(0),
            };
            seen += count.samples;
            server::add_activity(&mut self.second, &count);
            server::add_activity(&mut self.activity, &count);
        }
        seen
    }

    /// Closes the second under way with the counters' change since the last.
    fn close_second(&mut self) {
        let (now, standbys) = self.snapshot();
        self.series.push(ServerSecond {
            t: self.series.len() as i64,
            seconds: 1,
            counters: server::delta(&self.last, &now),
            activity: std::mem::take(&mut self.second),
            standbys,
        });
        self.last = now;
    }
}

/// What a query's failure says, without the caret block.
fn short(e: &pgbench_wire::QueryError) -> String {
    e.db_error()
        .map_or_else(|| e.to_string(), |d| d.message.clone())
}

impl Watcher for Sampler {
    type Output = ServerStats;

    fn start(&mut self) -> Result<(), RunError> {
        self.queries = 0;
        self.start = self.snapshot().0;
        self.last = self.start.clone();
        if let Some(rows) = self.read_io() {
            self.io_start = Some(rows);
        }
        if let Some(reads) = self.read_statements() {
            if let Some((_, start)) = self.statements.as_mut() {
                *start = reads;
            }
        }
        Ok(())
    }

    fn period_us(&self) -> Option<i64> {
        Some(1_000_000 / SAMPLES_PER_SECOND)
    }

    fn tick(&mut self, elapsed_us: i64) {
        if elapsed_us >= (self.series.len() as i64 + 1) * 1_000_000 {
            self.close_second();
        }
        self.sample();
    }

    fn finish(mut self) -> Result<ServerStats, RunError> {
        let deadline = now_us() + EXIT_WAIT_US;
        while self.sample_gone() > 0 && now_us() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // Before the last snapshot, whose own commit the window leaves out.
        let io = self
            .read_io()
            .zip(self.io_start.as_deref())
            .map(|(end, start)| server::io::delta(start, &end));
        let statements = self.read_statements().and_then(|end| {
            let (_, start) = self.statements.as_ref()?;
            Some(top::top(start, &end, top::TOP))
        });
        // The part of a second since the last whole one.
        self.close_second();
        let window = server::delta(&self.start, &self.last);
        let standbys = self
            .replication
            .then(|| lag::summarize(self.series.iter().map(|s| s.standbys.as_slice())));
        // The end's own read commits after it.
        let sampler = self.queries - 1;
        Ok(ServerStats {
            server_version_num: self.version,
            views: self.views.iter().map(|v| v.name.to_string()).collect(),
            notes: self.notes,
            derived: server::derive(&window, &self.activity, sampler, 0),
            window,
            series: self.series,
            activity_rounds: self.rounds,
            activity: self.activity,
            sampler_transactions: sampler,
            io,
            standbys,
            statements,
            end: None,
        })
    }
}

impl Sampler {
    /// The run's backends still there (counted apart from the window's samples).
    fn sample_gone(&mut self) -> i64 {
        let sql = self.activity_sql.clone();
        self.query(&sql)
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| r.get(3).cloned().flatten()?.parse::<i64>().ok())
                    .sum()
            })
            .unwrap_or(0)
    }
}

/// Before the clients start: the sampler (worker 0 or no `--worker` only).
pub fn before(
    plan: &BenchPlan,
    opts: &ConnectOptions,
) -> Result<Option<window::Before<Sampler>>, RunError> {
    let samples = plan.worker.as_ref().is_none_or(|w| w.index == 0);
    if plan.server_stats.is_none() || !samples {
        return Ok(None);
    }
    window::before(Sampler::connect(opts)?, plan.warmup_s.is_some()).map(Some)
}

/// After the clients: the figures on the client's seconds and per its transactions
/// (a failure is said and the figures left out).
pub fn finish(during: window::During<Sampler>, result: &RunResult) -> Option<ServerStats> {
    let mut stats = match during.finish() {
        Ok(stats) => stats?,
        Err(e) => {
            crate::logging::warning(&e.to_string());
            return None;
        }
    };
    let first_t = result.series.first().map_or(0, |s| s.t);
    for s in &mut stats.series {
        s.t += first_t;
    }
    stats.derived = server::derive(
        &stats.window,
        &stats.activity,
        stats.sampler_transactions,
        result.total.counts.cnt,
    );
    Some(stats)
}
