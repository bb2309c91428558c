//! The coordinated start of a `--worker=I/N` run, through the database under test: each
//! worker opens one more session (the barrier session), says there who it is and how
//! far it got, and waits until all N have connected their clients; worker 0 then names
//! one instant on the server's clock, a little in the future, and every worker sleeps
//! until its own reading of it.
//!
//! Why sessions, advisory locks and `application_name`, and not a table: nothing of the
//! barrier outlives the sessions that hold it, so nothing is left to remove after a
//! failure. A worker that dies, is killed (even `kill -9`) or is interrupted while it
//! waits takes its part with it when the server ends its backend; there is no row to
//! clean up, no DDL right to ask for, no table two runs could race to create or drop.
//! - **Claiming an index**: `pg_try_advisory_lock(run key, I)` on the barrier session,
//!   atomic, so a second worker with the same index (of the same run) is refused at once
//!   while the first keeps its place.
//! - **Being seen**: the barrier session's `application_name` is
//!   `pgbr <run id> <I> <state>` ([`Entry`]); every worker polls `pg_stat_activity`,
//!   which shows the application name of every session to every role (pgstatfuncs.c
//!   `pg_stat_get_activity` counts it among the "values available to all callers").
//!   LISTEN/NOTIFY would need asynchronous notifications, which our connection does not
//!   read, and a notification sent before a worker listens is lost; a state that stays
//!   until it is replaced is not.
//! - **Deciding**: worker 0 alone decides. When it sees all N `ready` it announces
//!   `go <instant>`; when its timeout passes first, `fail`. The others follow it, and
//!   give up on their own only when worker 0 is not even there at their deadline (they
//!   first announce `quit`, so worker 0 can no longer count them as ready).
//! - **Clocks**: every worker estimates the offset between its monotonic clock and the
//!   server's `clock_timestamp()` from the round trip of least delay among a few, so
//!   the agreed instant (Unix µs on the server) becomes an instant of its own run clock.
//! - **Seed**: unless the seed was given as a number, worker 0 shows its own seed in its
//!   entry and the others take it before they derive their random states.
//!
//! - **Saying what happens**: a worker says when it starts waiting and when each other
//!   worker arrives. Every barrier statement carries the worker's option digests in a
//!   comment (`/* pgbr-options ... */`, [`WorkerPlan::option_digests`]), which
//!   `pg_stat_activity.query` shows to sessions of the same role: a worker that sees
//!   the entry of a worker of another run (another run id) says so, naming the options
//!   that differ, instead of both waiting for each other in silence.
//!
//! A connection pooler in transaction mode would break the barrier session's locks and
//! settings: the barrier needs a session of its own, as the clients' connections do.

mod entry;

use crate::clock::now_us;
use crate::logging::Output;
use entry::{all_ready, leader, missing, TAG};
pub use entry::{Entry, State};
use pgbench_wire::{ConnError, ConnectOptions, Connection, QueryError};
use std::sync::Arc;
use std::time::Duration;

/// How often a waiting worker looks at the others: every 10 ms, slower for many
/// workers (2 ms per worker, at most 200 ms), since each look reads every backend's
/// entry on the server: 100 workers make 500 looks a second, not 10,000.
pub fn poll_interval(count: u32) -> Duration {
    Duration::from_millis((2 * u64::from(count)).clamp(10, 200))
}

/// How far after worker 0's decision the run starts, µs: every worker must see the
/// decision (within a poll), read its clock offset and sleep until the instant.
pub fn start_margin_us(count: u32) -> i64 {
    (4 * poll_interval(count).as_micros() as i64).max(500_000)
}

/// `--worker=I/N`: this process is worker I (0-based) of N, running the clients
/// `I*C .. I*C+C-1` and the threads `I*J .. I*J+J-1` of one run with `N*C` clients
/// and `N*J` threads (`C`, `J`: this process's `-c`, `-j`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerPlan {
    pub index: u32,
    pub count: u32,
    /// `--worker-timeout`: how long, in seconds, this worker waits for the others.
    pub timeout_s: i64,
    /// The seed was given as a number (`--random-seed=N`, `PGBENCH_RANDOM_SEED=N`), the
    /// same for every worker; otherwise (the clock, `time`, `rand`) each worker's own
    /// would differ, and all take worker 0's.
    pub seed_given: bool,
    /// The options the workers of one run must share, as `name=digest` words (made from
    /// the option table, `cli::option_table::worker_digests`): a worker that meets one
    /// of another run names the options that differ ([`differing_options`]).
    pub option_digests: String,
}

/// `--worker-timeout` when not given, seconds: long enough for pods that start a
/// little apart, short enough that a worker that will never come is noticed.
pub const DEFAULT_WORKER_TIMEOUT_S: i64 = 60;

/// How long worker 0 keeps announcing `fail` for the others to read it.
const FAIL_LINGER: Duration = Duration::from_secs(1);
/// Round trips the clock offset is estimated from.
const CLOCK_SAMPLES: usize = 5;
/// What starts the comment of option digests on every barrier statement.
const OPTIONS_TAG: &str = "pgbr-options";

/// The options whose digests differ between two [`WorkerPlan::option_digests`] texts.
pub fn differing_options(ours: &str, theirs: &str) -> Vec<String> {
    let theirs: Vec<&str> = theirs.split(' ').collect();
    ours.split(' ')
        .filter(|word| !theirs.contains(word))
        .filter_map(|word| word.split_once('=').map(|(name, _)| name.replace('_', " ")))
        .collect()
}

/// Why the workers did not start together (the run then does not start).
#[derive(Debug, thiserror::Error)]
pub enum BarrierError {
    #[error("could not connect for the start of the workers: {0}")]
    Connect(#[source] ConnError),
    #[error("the start of the workers failed: {0}")]
    Query(#[source] QueryError),
    #[error(
        "worker {index} of {count} of this run is already waiting: each worker needs an index of its own (--worker=I/N, I from 0 to N-1)"
    )]
    Duplicate { index: u32, count: u32 },
    #[error(
        "{} of {count} did not arrive within {timeout_s} s (--worker-timeout); the run did not start",
        workers(missing)
    )]
    Timeout {
        missing: Vec<u32>,
        count: u32,
        timeout_s: i64,
    },
    /// SIGINT or SIGTERM (the number) while waiting.
    #[error("interrupted while waiting for the other workers; the run did not start")]
    Interrupted(i32),
}

/// `worker 2`, `workers 1, 3`, or the first ten and how many more.
fn workers(list: &[u32]) -> String {
    let names: Vec<String> = list.iter().take(10).map(u32::to_string).collect();
    match list.len() {
        1 => format!("worker {}", names[0]),
        n if n > names.len() => {
            format!("workers {} and {} more", names.join(", "), n - names.len())
        }
        _ => format!("workers {}", names.join(", ")),
    }
}

/// Server clock minus run clock, µs, from round trips `(sent, server, received)`: the
/// sample of least delay, its server reading taken to be at the middle of the trip.
pub fn clock_offset(samples: &[(i64, i64, i64)]) -> i64 {
    samples
        .iter()
        .min_by_key(|(sent, _, received)| received - sent)
        .map_or(0, |(sent, server, received)| server - (sent + received) / 2)
}

/// The instant the workers agreed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgreedStart {
    /// Unix µs on the server's clock (the results file's `start_unix_us`).
    pub server_unix_us: i64,
    /// The same instant on this worker's run clock.
    pub local_us: i64,
}

/// A worker's barrier session, from joining to the start.
pub struct Barrier {
    conn: Connection,
    run_id: String,
    /// `/* pgbr-options DIGESTS */`, before every statement of the barrier session.
    comment: String,
    /// The workers seen arrived so far (said once each).
    arrived: Vec<bool>,
    /// The other runs whose workers were seen here (said once each).
    other_runs: Vec<String>,
    index: u32,
    count: u32,
    timeout_s: i64,
    /// Run clock µs after which this worker stops waiting.
    deadline_us: i64,
    poll: Duration,
    /// The run's seed: this worker's, or worker 0's.
    pub seed: u64,
    /// Where its messages go (the run's).
    out: Arc<dyn Output>,
}

impl Barrier {
    /// Joins the run `run_id` as `worker` (after this process's setup, before its
    /// clients connect); unless the seed was given as a number, a worker other than 0
    /// waits here for worker 0's seed. Its statements carry `digests`
    /// ([`WorkerPlan::option_digests`]) for workers of other runs to read.
    pub fn join(
        opts: &ConnectOptions,
        (run_id, digests): (&str, &str),
        worker: &WorkerPlan,
        own_seed: u64,
        out: Arc<dyn Output>,
    ) -> Result<Barrier, BarrierError> {
        let conn = Connection::connect(opts).map_err(BarrierError::Connect)?;
        let mut b = Barrier {
            conn,
            run_id: run_id.to_string(),
            comment: format!("/* {OPTIONS_TAG} {} */ ", digests.replace("*/", "")),
            arrived: vec![false; worker.count as usize],
            other_runs: Vec::new(),
            index: worker.index,
            count: worker.count,
            timeout_s: worker.timeout_s,
            deadline_us: now_us() + worker.timeout_s * 1_000_000,
            poll: poll_interval(worker.count),
            seed: own_seed,
            out,
        };
        // The run id is hexadecimal: its first 8 digits are a 32-bit key.
        let key = u32::from_str_radix(&run_id[..8], 16).unwrap_or(0) as i32;
        let claimed = b.query(&format!("select pg_try_advisory_lock({key}, {})", b.index))?;
        if claimed.first().and_then(|r| r.first()).cloned().flatten() != Some("t".into()) {
            return Err(BarrierError::Duplicate {
                index: b.index,
                count: b.count,
            });
        }
        let shown = (b.index == 0).then_some(own_seed);
        b.announce(State::Waiting { seed: shown })?;
        b.out.info(&format!(
            "worker {} of {}: waiting up to {} s for the other workers of run {run_id}",
            b.index, b.count, b.timeout_s
        ));
        if b.index != 0 && !worker.seed_given {
            b.seed = b.leaders_seed()?;
        }
        Ok(b)
    }

    /// This worker's clients are connected: waits for the others and worker 0's
    /// instant, and sleeps until it. `interrupted` names the signal that stopped the
    /// run, if one did.
    pub fn start(
        mut self,
        interrupted: &dyn Fn() -> Option<i32>,
    ) -> Result<AgreedStart, BarrierError> {
        let seed = (self.index == 0).then_some(self.seed);
        self.announce(State::Ready { seed })?;
        let start = if self.index == 0 {
            self.lead(interrupted)?
        } else {
            self.follow(interrupted)?
        };
        // The session goes (and its lock and entry with it) before the run starts.
        drop(self);
        while now_us() < start.local_us {
            if let Some(sig) = interrupted() {
                return Err(BarrierError::Interrupted(sig));
            }
            let left = (start.local_us - now_us()).clamp(0, 20_000);
            std::thread::sleep(Duration::from_micros(left as u64));
        }
        Ok(start)
    }

    /// A follower before its clients connect: worker 0's seed.
    fn leaders_seed(&mut self) -> Result<u64, BarrierError> {
        loop {
            let entries = self.entries()?;
            match leader(&entries) {
                Some(State::Waiting { seed: Some(s) } | State::Ready { seed: Some(s) }) => {
                    return Ok(s)
                }
                Some(State::Failed) => return Err(self.timeout(&entries)),
                _ if now_us() >= self.deadline_us => return Err(self.give_up()),
                _ => std::thread::sleep(self.poll),
            }
        }
    }

    /// Worker 0: `go` once all are ready, `fail` at the deadline.
    fn lead(&mut self, interrupted: &dyn Fn() -> Option<i32>) -> Result<AgreedStart, BarrierError> {
        loop {
            if let Some(sig) = interrupted() {
                return Err(BarrierError::Interrupted(sig));
            }
            let entries = self.entries()?;
            if all_ready(&entries, self.count) {
                let offset = self.clock_offset()?;
                let local_us = now_us() + start_margin_us(self.count);
                let server_unix_us = local_us + offset;
                self.announce(State::Go {
                    start_unix_us: server_unix_us,
                })?;
                // Stay until every other worker saw it (or the instant comes). The
                // decision stands whatever happens to this session now.
                while now_us() < local_us {
                    let Ok(entries) = self.entries() else { break };
                    let waiting = entries
                        .iter()
                        .any(|e| e.index != 0 && matches!(e.state, State::Ready { .. }));
                    if !waiting {
                        break;
                    }
                    std::thread::sleep(self.poll);
                }
                return Ok(AgreedStart {
                    server_unix_us,
                    local_us,
                });
            }
            if now_us() >= self.deadline_us {
                self.announce(State::Failed)?;
                let until = now_us() + FAIL_LINGER.as_micros() as i64;
                let others =
                    |b: &mut Barrier| b.entries().is_ok_and(|e| e.iter().any(|e| e.index != 0));
                while now_us() < until && others(self) {
                    std::thread::sleep(self.poll);
                }
                return Err(self.timeout(&entries));
            }
            std::thread::sleep(self.poll);
        }
    }

    /// Any other worker: follows worker 0's decision; alone at its deadline, gives up.
    fn follow(
        &mut self,
        interrupted: &dyn Fn() -> Option<i32>,
    ) -> Result<AgreedStart, BarrierError> {
        let mut quit = false;
        loop {
            if let Some(sig) = interrupted() {
                return Err(BarrierError::Interrupted(sig));
            }
            let entries = self.entries()?;
            match leader(&entries) {
                Some(State::Go { start_unix_us }) => {
                    // Only worker 0's wait for it depends on this acknowledgement.
                    let _ = self.announce(State::Started);
                    let offset = self.clock_offset()?;
                    return Ok(AgreedStart {
                        server_unix_us: start_unix_us,
                        local_us: start_unix_us - offset,
                    });
                }
                Some(State::Failed) => return Err(self.timeout(&entries)),
                // Worker 0 is deciding, and may have counted this one: its word holds.
                Some(State::Ready { .. }) => {}
                _ if quit => return Err(self.timeout(&entries)),
                _ if now_us() >= self.deadline_us => {
                    // Worker 0 cannot count this one any more; one last look, in case
                    // it decided just before.
                    self.announce(State::Quit)?;
                    quit = true;
                    continue;
                }
                _ => {}
            }
            std::thread::sleep(self.poll);
        }
    }

    /// Gives up before this worker's clients connected: worker 0 never came.
    fn give_up(&mut self) -> BarrierError {
        let _ = self.announce(State::Quit);
        BarrierError::Timeout {
            missing: vec![0],
            count: self.count,
            timeout_s: self.timeout_s,
        }
    }

    fn timeout(&self, entries: &[Entry]) -> BarrierError {
        let mut missing = missing(entries, self.count);
        missing.retain(|i| *i != self.index);
        if missing.is_empty() {
            missing.push(0);
        }
        BarrierError::Timeout {
            missing,
            count: self.count,
            timeout_s: self.timeout_s,
        }
    }

    fn announce(&mut self, state: State) -> Result<(), BarrierError> {
        let name = Entry {
            index: self.index,
            state,
        }
        .render(&self.run_id);
        let sql = format!("{}set application_name = '{name}'", self.comment);
        self.conn.execute(&sql).map_err(BarrierError::Query)
    }

    /// Every barrier session of this run, in this database; says which workers
    /// arrived since the last look, and which workers of other runs are here.
    fn entries(&mut self) -> Result<Vec<Entry>, BarrierError> {
        let rows = self.query(&format!(
            "select application_name, query from pg_catalog.pg_stat_activity \
             where datname = current_database() and application_name like '{TAG} %'"
        ))?;
        let mut entries = Vec::new();
        for row in &rows {
            let Some(name) = row.first().cloned().flatten() else {
                continue;
            };
            match Entry::parse(&name, &self.run_id) {
                Some(entry) => entries.push(entry),
                None => self.other_run(&name, row.get(1).cloned().flatten()),
            }
        }
        for e in &entries {
            let seen = self.arrived.get_mut(e.index as usize);
            if let Some(seen) = seen.filter(|s| !**s && e.index != self.index && e.state.arrived())
            {
                *seen = true;
                self.out
                    .info(&format!("worker {} of {} arrived", e.index, self.count));
            }
        }
        Ok(entries)
    }

    /// The barrier session of a worker of another run: said once per run, with the
    /// options that differ when its statement shows them.
    fn other_run(&mut self, name: &str, query: Option<String>) {
        let mut words = name.split(' ').skip(1);
        let (Some(run), Some(index)) = (words.next(), words.next()) else {
            return;
        };
        if run == self.run_id || self.other_runs.iter().any(|r| r == run) {
            return;
        }
        self.other_runs.push(run.to_string());
        let digests = |text: &str| {
            let start = text.find(OPTIONS_TAG)? + OPTIONS_TAG.len();
            let end = start + text[start..].find("*/")?;
            Some(text[start..end].trim().to_string())
        };
        let differ = query
            .as_deref()
            .and_then(digests)
            .zip(digests(&self.comment))
            .map(|(theirs, ours)| differing_options(&ours, &theirs))
            .filter(|d| !d.is_empty());
        let what = match differ {
            Some(names) => format!(
                "its {} {} from this run's",
                names.join(", "),
                if names.len() == 1 {
                    "differs"
                } else {
                    "differ"
                }
            ),
            None => "its options differ from this run's".to_string(),
        };
        self.out.warning(&format!(
            "a worker of another run is waiting here: worker {index} of run {run}; {what} \
             (the workers of one run need the same options)"
        ));
    }

    /// Server clock minus run clock, µs.
    fn clock_offset(&mut self) -> Result<i64, BarrierError> {
        let sql = "select (extract(epoch from clock_timestamp()) * 1000000)::int8";
        let mut samples = Vec::with_capacity(CLOCK_SAMPLES);
        for _ in 0..CLOCK_SAMPLES {
            let sent = now_us();
            let rows = self.query(sql)?;
            let received = now_us();
            let server = rows
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .and_then(|v| v.parse().ok());
            if let Some(server) = server {
                samples.push((sent, server, received));
            }
        }
        Ok(clock_offset(&samples))
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, BarrierError> {
        let sql = format!("{}{sql}", self.comment);
        self.conn.query_rows(&sql).map_err(BarrierError::Query)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differing_options_are_named_by_their_spelling() {
        let ours = "-c=0a0b -j=1111 --worker_(N)=2222";
        assert_eq!(differing_options(ours, ours), Vec::<String>::new());
        assert_eq!(
            differing_options(ours, "-c=0a0c -j=1111 --worker_(N)=3333"),
            ["-c", "--worker (N)"]
        );
    }
    #[test]
    fn missing_workers_are_named_ten_at_most() {
        assert_eq!(workers(&[2]), "worker 2");
        assert_eq!(workers(&[1, 3]), "workers 1, 3");
        let many: Vec<u32> = (0..25).collect();
        assert_eq!(
            workers(&many),
            "workers 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 15 more"
        );
    }

    #[test]
    fn many_workers_look_less_often_and_start_later() {
        assert_eq!(poll_interval(2), Duration::from_millis(10));
        assert_eq!(poll_interval(50), Duration::from_millis(100));
        assert_eq!(poll_interval(5000), Duration::from_millis(200));
        assert_eq!(start_margin_us(3), 500_000);
        assert_eq!(start_margin_us(5000), 800_000);
    }

    #[test]
    fn the_clock_offset_comes_from_the_quickest_round_trip() {
        // Server 1000 µs ahead; the slow trip (600 µs) would put it 250 µs off.
        let samples = [
            (0, 1_550, 600),
            (1_000, 2_050, 1_100),
            (2_000, 3_100, 2_200),
        ];
        assert_eq!(clock_offset(&samples), 1_000);
        assert_eq!(clock_offset(&[]), 0);
    }
}
