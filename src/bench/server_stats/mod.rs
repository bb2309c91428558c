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
//! A second whose counters could not be read is missing from the [`series`], not
//! zero; a lost connection is made again (the window's totals are then whole, the
//! seconds in between missing), and when the end cannot be read the window stops at
//! the last read and says so ([`WindowEnd`]), without the figures per transaction.
//!
//! Besides the views' counters: `pg_stat_io` row by row ([`io`], 16 on) and the
//! run's own top statements of `pg_stat_statements` ([`statements`], where it is
//! installed) at the window's edges, and the standbys' lag ([`replication`]) every
//! second.

pub mod io;
pub mod replication;
mod sampler;
pub mod series;
pub mod shape;
pub mod statements;
pub mod views;

use super::observer::{Notice, RunObserver, WindowObserver};
use super::plan::BenchPlan;
use super::window;
use super::RunError;
use pgbench_results::server::{ServerStats, WindowEnd};
use pgbench_results::RunResult;
use pgbench_script::ast::CommandKind;
pub use sampler::Sampler;

use window::Watcher;

/// The statements of the run's scripts, as `pg_stat_statements` is matched to them.
fn script_statements(plan: &BenchPlan) -> Vec<shape::Shape> {
    plan.scripts
        .iter()
        .flat_map(|s| &s.script.commands)
        .filter_map(|c| match &c.kind {
            CommandKind::Sql(sql) => Some(shape::shapes(&sql.parameterized_text())),
            CommandKind::Meta(_) => None,
        })
        .flatten()
        .collect()
}

/// `--server-stats`' observer: the sampler, connected before the clients start; its
/// figures on the client's seconds and per its transactions in the result (a failure
/// is said and the figures left out; a window whose end could not be read is said
/// too).
pub fn observer(plan: &BenchPlan) -> Option<Box<dyn RunObserver>> {
    plan.server_stats?;
    let statements = script_statements(plan);
    Some(Box::new(WindowObserver::new(
        move |opts| Sampler::connect(opts, &statements),
        finish,
    )))
}

fn finish(read: Result<Option<ServerStats>, RunError>, result: &mut RunResult) -> Vec<Notice> {
    let mut stats = match read {
        Ok(Some(stats)) => stats,
        Ok(None) => return Vec::new(),
        Err(e) => return vec![Notice::warning(format!("--server-stats: {e}"))],
    };
    let first_t = result.series.first().map_or(0, |s| s.t);
    for s in &mut stats.series {
        s.t += first_t;
    }
    stats.derived = stats.derive(result.total.counts.cnt);
    let mut notices = Vec::new();
    if let Some(WindowEnd {
        lost: Some(why),
        read_at_s,
        ..
    }) = &stats.end
    {
        notices.push(Notice::warning(format!(
            "--server-stats: the window's end could not be read ({why}); the server's figures stop {read_at_s:.1} s into it"
        )));
    }
    result.server = Some(stats);
    notices
}

/// The sampler is a watcher of the window (its reads are in `sampler`).
impl Watcher for Sampler {
    type Output = ServerStats;

    fn link(&self) -> window::Link {
        self.link()
    }

    fn start(&mut self) -> Result<(), RunError> {
        self.read_start();
        Ok(())
    }

    fn period_us(&self) -> Option<i64> {
        Some(1_000_000 / sampler::SAMPLES_PER_SECOND)
    }

    fn tick(&mut self, elapsed_us: i64) {
        self.tick_at(elapsed_us);
    }

    fn finish(&mut self) -> Result<ServerStats, RunError> {
        Ok(self.read_end())
    }
}
