//! The sampler's reads: what it finds it may read when it connects, the window's
//! start, each second's snapshot and tenth of a second's activity samples, a lost
//! connection made again, and the end.

use super::series::Series;
use super::shape::Shape;
use super::views::{self, View};
use super::{io, replication, statements};
use crate::bench::window::watched::{run_application_name, short, Rows};
use crate::bench::window::{self, Watched};
use crate::bench::RunError;
use crate::clock::now_us;
use pgbench_results::server::io::IoRow;
use pgbench_results::server::replication::{self as lag, StandbySample};
use pgbench_results::server::statements::{self as top, Read};
use pgbench_results::server::{self, ActivityCount, Counters, Derived, ServerStats, WindowEnd};
use pgbench_wire::{ConnectOptions, QueryError};

/// Activity samples a second.
pub const SAMPLES_PER_SECOND: i64 = 10;

/// The last read of the counters that succeeded.
struct Latest {
    counters: Counters,
    /// µs into the window.
    at_us: i64,
    /// The sampler's transactions by then, that read's own included.
    transactions: i64,
}

/// The sampler's state over the window.
pub struct Sampler {
    conn: Watched,
    version: i64,
    views: Vec<View>,
    notes: Vec<String>,
    /// The query of the run's backends in `pg_stat_activity` (`None`: not readable).
    activity_sql: Option<String>,
    /// When the window began (run clock).
    began_us: i64,
    /// The counters when the window began (`None`: not read).
    start: Option<Counters>,
    latest: Option<Latest>,
    /// Whether the last read succeeded (the next second's change counts from it).
    fresh: bool,
    /// Why the last read of the counters failed.
    failure: Option<String>,
    series: Series,
    /// Samples of the second under way.
    second: Vec<ActivityCount>,
    activity: Vec<ActivityCount>,
    rounds: i64,
    /// `pg_stat_io`'s rows when the window began (16 on).
    io_start: Option<Vec<IoRow>>,
    /// Whether `pg_stat_replication` can be read.
    replication: bool,
    lag: lag::Summary,
    /// `pg_stat_statements`, and the run's statements when the window began.
    statements: Option<(statements::Statements, Vec<Read>)>,
    /// When the connection was lost (µs into the window) and why, until made again.
    lost: Option<(i64, String)>,
    /// How often it was lost.
    losses: i64,
}

fn number(rows: &[Vec<Option<String>>], col: usize) -> i64 {
    rows.first()
        .and_then(|r| r.get(col).cloned().flatten())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// What the sampler found it may read, and the notes of what it may not.
struct Readable {
    views: Vec<View>,
    notes: Vec<String>,
    activity_sql: Option<String>,
    replication: bool,
    statements: Option<statements::Statements>,
}

impl Readable {
    /// Asks each view once (a failure is a note, not a failed run).
    fn probe(conn: &mut Watched, version: i64, app: &str, scripts: &[Shape]) -> Readable {
        let mut notes = views::missing(version);
        let mut left_out = |name: &str, e: QueryError| {
            notes.push(format!("{name} left out: {}", short(&e)));
        };
        let mut readable = Vec::new();
        for v in views::views(version) {
            match conn.query(&v.query) {
                Ok(_) => readable.push(v),
                Err(e) => left_out(v.name, e),
            }
        }
        let activity = views::activity_query(app);
        let activity_sql = match conn.query(&activity) {
            Ok(_) => Some(activity),
            Err(e) => {
                left_out("pg_stat_activity", e);
                None
            }
        };
        let replication = match conn.query(replication::QUERY) {
            Ok(_) => true,
            Err(e) => {
                left_out("pg_stat_replication", e);
                false
            }
        };
        let statements = match statements::probe(conn, scripts) {
            Ok(Some(s)) => Some(s),
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
        Readable {
            views: readable,
            notes,
            activity_sql,
            replication,
            statements,
        }
    }
}

impl Sampler {
    /// Connects and finds the server's version and which views it lets us read;
    /// `scripts`: the statements of the run's scripts.
    pub fn connect(opts: &ConnectOptions, scripts: &[Shape]) -> Result<Sampler, RunError> {
        let mut conn =
            Watched::connect(opts, "--server-stats").map_err(|message| RunError::Setup {
                message: format!("could not connect for --server-stats: {message}"),
                hint: None,
            })?;
        let version = conn
            .query("select current_setting('server_version_num')::int")
            .map(|rows| number(&rows, 0))
            .unwrap_or(0);
        let r = Readable::probe(&mut conn, version, &run_application_name(opts), scripts);
        let layout = r
            .views
            .iter()
            .flat_map(|v| {
                v.columns
                    .iter()
                    .map(|c| (v.name.to_string(), c.to_string()))
            })
            .collect();
        let io = r.views.iter().any(|v| v.name == "pg_stat_io");
        Ok(Sampler {
            conn,
            version,
            views: r.views,
            notes: r.notes,
            activity_sql: r.activity_sql,
            began_us: now_us(),
            start: None,
            latest: None,
            fresh: false,
            failure: None,
            series: Series::new(layout),
            second: Vec::new(),
            activity: Vec::new(),
            rounds: 0,
            io_start: io.then(Vec::new),
            replication: r.replication,
            lag: lag::Summary::default(),
            statements: r.statements.map(|s| (s, Vec::new())),
            lost: None,
            losses: 0,
        })
    }

    pub fn link(&self) -> window::Link {
        self.conn.link()
    }

    fn elapsed_us(&self) -> i64 {
        now_us() - self.began_us
    }

    /// After `what` failed with `e`: the connection lost, or a note (once).
    fn failed(&mut self, what: &str, e: &QueryError) {
        if self.conn.lost(Some(e)) {
            if self.lost.is_none() {
                self.lost = Some((self.elapsed_us(), short(e)));
                self.losses += 1;
            }
            return;
        }
        let note = format!("{what}: {}", short(e));
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// Connects again after a loss (once a second at most: at each second's close).
    fn reconnect(&mut self) {
        let Some((at, why)) = self.lost.clone() else {
            return;
        };
        if self.conn.reconnect().is_ok() {
            if self.losses == 1 {
                self.notes.push(format!(
                    "the connection was lost {:.1} s into the window ({why}) and made again {:.1} s into it: the seconds in between are missing",
                    at as f64 / 1e6,
                    self.elapsed_us() as f64 / 1e6
                ));
            }
            self.lost = None;
            self.fresh = false;
        }
    }

    /// `pg_stat_io`'s rows now (`None` when not read or when the read fails).
    fn read_io(&mut self) -> Option<Vec<IoRow>> {
        self.io_start.as_ref()?;
        if self.lost.is_some() {
            return None;
        }
        match self.conn.query(&io::query()) {
            Ok(rows) => Some(io::parse(&rows)),
            Err(e) => {
                self.failed("pg_stat_io could not be read", &e);
                None
            }
        }
    }

    /// The run's statements in `pg_stat_statements` now (`None` when not read or failed).
    fn read_statements(&mut self) -> Option<Vec<Read>> {
        let sql = self.statements.as_ref()?.0.query.clone();
        if self.lost.is_some() {
            return None;
        }
        match self.conn.query(&sql) {
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
    /// subquery; the standbys a last column); `None` when the read failed.
    fn snapshot(&mut self) -> Option<(Counters, Vec<StandbySample>)> {
        let mut from: Vec<String> = self
            .views
            .iter()
            .enumerate()
            .map(|(i, v)| format!("({}) v{i}", v.query))
            .collect();
        if self.replication {
            from.push(format!("({}) standbys", replication::as_json()));
        }
        if from.is_empty() {
            // Nothing this user may read: nothing to ask.
            return Some((Counters::new(), Vec::new()));
        }
        let sql = format!("select * from {}", from.join(" cross join "));
        match self.conn.query(&sql) {
            Ok(rows) => Some(self.counters_of(&rows)),
            Err(e) => {
                self.failure = Some(short(&e));
                self.failed("the statistics could not be read", &e);
                None
            }
        }
    }

    fn counters_of(&self, rows: &Rows) -> (Counters, Vec<StandbySample>) {
        let mut col = 0;
        let mut out = Counters::new();
        for v in &self.views {
            let cols = v
                .columns
                .iter()
                .map(|c| {
                    col += 1;
                    (c.to_string(), number(rows, col - 1))
                })
                .collect();
            out.insert(v.name.to_string(), cols);
        }
        let standbys = rows.first().and_then(|r| r.get(col).cloned().flatten());
        (out, replication::parse(standbys.as_deref()))
    }

    /// Reads the counters at `at_us` into the window: they become the latest.
    fn read(&mut self, at_us: i64) -> Option<(Counters, Vec<StandbySample>)> {
        let (now, standbys) = self.snapshot()?;
        let change = self
            .latest
            .as_ref()
            .filter(|_| self.fresh)
            .map(|l| server::delta(&l.counters, &now));
        self.latest = Some(Latest {
            counters: now,
            at_us,
            transactions: self.conn.transactions(),
        });
        self.fresh = true;
        Some((change.unwrap_or_default(), standbys))
    }

    /// The window begins: the counters, `pg_stat_io`'s rows, the statements.
    pub fn read_start(&mut self) {
        self.began_us = now_us();
        self.conn.reset_transactions();
        if self.read(0).is_some() {
            self.start = self.latest.as_ref().map(|l| l.counters.clone());
        }
        if let Some(rows) = self.read_io() {
            self.io_start = Some(rows);
        }
        if let Some(reads) = self.read_statements() {
            if let Some((_, start)) = self.statements.as_mut() {
                *start = reads;
            }
        }
    }

    /// `elapsed_us` into the window: a second closes when one has passed, then the
    /// run's backends are sampled.
    pub fn tick_at(&mut self, elapsed_us: i64) {
        if elapsed_us >= (self.series.seconds() + 1) * 1_000_000 {
            self.close_second(elapsed_us);
        }
        self.sample();
    }

    /// One round of `pg_stat_activity`.
    fn sample(&mut self) {
        let Some(sql) = self.activity_sql.clone() else {
            return;
        };
        if self.lost.is_some() {
            return;
        }
        let rows = match self.conn.query(&sql) {
            Ok(rows) => rows,
            Err(e) => {
                self.failed("pg_stat_activity could not be read", &e);
                return;
            }
        };
        self.rounds += 1;
        for r in rows {
            let text = |i: usize| r.get(i).cloned().flatten();
            let count = ActivityCount {
                state: text(0),
                wait_event_type: text(1),
                wait_event: text(2),
                samples: text(3).and_then(|v| v.parse().ok()).unwrap_or(0),
            };
            server::add_activity(&mut self.second, &count);
            server::add_activity(&mut self.activity, &count);
        }
    }

    /// Closes the second under way with the counters' change since the last read
    /// (missing when this read or the last failed).
    fn close_second(&mut self, at_us: i64) {
        self.reconnect();
        let had_last = self.fresh;
        let (change, standbys) = match self.read(at_us) {
            Some((change, standbys)) => (had_last.then_some(change), standbys),
            None => {
                self.fresh = false;
                (None, Vec::new())
            }
        };
        self.lag.add(&standbys);
        let samples = std::mem::take(&mut self.second);
        self.series.push(change.as_ref(), &samples, standbys);
    }

    /// Why the window's end could not be read, if it could not.
    fn end_lost(&self) -> Option<String> {
        if self.conn.cut_off() && !self.fresh {
            return Some("the server did not answer in time at the end of the run".into());
        }
        if let Some((_, why)) = &self.lost {
            return Some(format!("the connection was lost: {why}"));
        }
        if !self.fresh {
            return Some(self.failure.clone().unwrap_or_default());
        }
        self.start
            .is_none()
            .then(|| "the window's start could not be read".into())
    }

    /// The clients are done: the run's backends waited for (they publish their
    /// counters as they exit), then the end read and the window's figures.
    pub fn read_end(&mut self) -> ServerStats {
        self.reconnect();
        let mut backends_left = 0;
        if self.lost.is_none() && self.activity_sql.is_some() {
            match self.conn.await_run_backends(window::EXIT_WAIT_US) {
                Ok(n) => backends_left = n,
                Err(e) => self.failed("pg_stat_activity could not be read", &e),
            }
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
        self.close_second(self.elapsed_us());
        let end = WindowEnd {
            read_at_s: self.latest.as_ref().map_or(0.0, |l| l.at_us as f64 / 1e6),
            lost: self.end_lost(),
            backends_left,
        };
        if self.losses > 1 {
            self.notes.push(format!(
                "the connection was lost {} times in the window",
                self.losses
            ));
        }
        let mut stats = self.figures(end);
        stats.io = io;
        stats.statements = statements;
        stats
    }

    /// The window's figures as read, and how its end was.
    fn figures(&mut self, end: WindowEnd) -> ServerStats {
        let latest = self.latest.as_ref();
        let window = self
            .start
            .as_ref()
            .zip(latest)
            .map(|(s, l)| server::delta(s, &l.counters))
            .unwrap_or_default();
        // The latest read's own commit comes after it.
        let sampler = latest.map_or(0, |l| l.transactions - 1).max(0);
        let mut views: Vec<String> = self.views.iter().map(|v| v.name.to_string()).collect();
        if self.activity_sql.is_some() {
            views.push("pg_stat_activity".into());
        }
        let mut stats = ServerStats {
            server_version_num: self.version,
            views,
            notes: std::mem::take(&mut self.notes),
            derived: Derived::default(),
            window,
            series: std::mem::replace(&mut self.series, Series::new(Vec::new())).into_seconds(),
            activity_rounds: self.rounds,
            activity: std::mem::take(&mut self.activity),
            sampler_transactions: sampler,
            io: None,
            standbys: self
                .replication
                .then(|| std::mem::take(&mut self.lag).finish()),
            statements: None,
            end: Some(end),
        };
        stats.derived = stats.derive(0);
        stats
    }
}
