//! The client state machine and its drivers, run against the fake server
//! (`pgbench_wire::testing`) on a test clock: no PostgreSQL. Each test gives a pgbench
//! command line and script, the server's replies, and a way of waiting (a client
//! alone blocking on its socket, or clients sharing a thread under epoll or
//! io_uring), and looks only at what the clients tell the collector: transactions
//! (outcome, tries, latency on the test clock), aborts with pgbench's words, and
//! last words. What a client does inside is free to change.
//!
//! - `meta`: `\set`, `\sleep`, `\setshell`, `\shell`, `\if` chains, `\gset`, `\aset`.
//! - `pipeline`: `\startpipeline` .. `\endpipeline` and their rules and messages.
//! - `retry`: 40001/40P01 under `--max-tries`, the random state rewound, `-L`.
//! - `timing`: `-R` skips under `-L`, `-T` and its end, `-C` reconnects.
//! - `aborts`: the connection dropped, errors, the server that never answers.
//! - `reconnect`: `--reconnect` riding through a dropped connection, a shutdown, a
//!   read-only server, and giving up after `--reconnect-timeout`.
//! - `drivers`: several clients on one driver, advanced in order, split packets, a
//!   socket epoll cannot watch.
//! - `ring`: io_uring refused (epoll instead), and a ring failing during the run.
//! - `seccomp`: the kernel made to refuse a call to one thread, for the last two.

mod aborts;
mod drivers;
mod meta;
mod pipeline;
mod reconnect;
mod retry;
mod ring;
mod seccomp;
mod timing;

use super::control::RunControl;
use super::events::{ClientDone, Event, Outbox, TxRecord};
use super::launch::{self, RunShared, Start};
use super::multiplex::Driver;
use super::threads::{self, Drivers, Launch};
use super::{begin, worker, RunEnv, RunStop};
use crate::cli::options::{interpret, Action, Env};
use crate::clock::{RunClock, TestClock};
use pgbench_results::TxOutcome;
use pgbench_wire::testing::{FakeServer, Reply, Request};
use pgbench_wire::{ConnectArgs, ConnectOptions};
use std::sync::Arc;

/// Where the test clock starts, µs (0 means "not set" to the run's records).
pub const START_US: i64 = 1_000_000_000;

/// How the clients of a thread wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drive {
    /// Each client alone on its thread, blocking on its socket.
    Alone,
    /// The clients of each thread on one epoll driver.
    Epoll,
    /// The clients of each thread on one io_uring driver.
    Uring,
}

/// What the clients told the collector.
#[derive(Debug, Default)]
pub struct Ran {
    /// Transactions in the order sent (batches flattened).
    pub records: Vec<TxRecord>,
    /// Abort messages, pgbench's lines joined.
    pub aborts: Vec<String>,
    pub done: Vec<ClientDone>,
    /// What the clients said of their connections (`--reconnect`).
    pub links: Vec<super::events::LinkEvent>,
}

impl Ran {
    pub fn outcomes(&self) -> Vec<TxOutcome> {
        self.records.iter().map(|r| r.outcome).collect()
    }

    pub fn tries(&self) -> Vec<u32> {
        self.records.iter().map(|r| r.tries).collect()
    }

    pub fn count(&self, outcome: TxOutcome) -> usize {
        self.records.iter().filter(|r| r.outcome == outcome).count()
    }

    /// Asserts that the run counted `n` successful transactions and nothing else.
    #[track_caller]
    pub fn assert_succeeded(&self, n: usize) {
        assert_eq!(
            self.outcomes(),
            vec![TxOutcome::Success; n],
            "aborts: {:?}",
            self.aborts
        );
    }

    /// The one abort, which must be there.
    pub fn abort(&self) -> &str {
        assert_eq!(self.aborts.len(), 1, "aborts: {:?}", self.aborts);
        &self.aborts[0]
    }
}

/// The scripts `-f` names, served from memory.
struct Scripts(Vec<(String, String)>);

impl Env for Scripts {
    fn var(&self, name: &str) -> Option<String> {
        (name == "PGUSER").then(|| "tester".to_string())
    }
    fn read_file(&self, path: &str) -> std::io::Result<String> {
        self.0
            .iter()
            .find(|(name, _)| name == path)
            .map(|(_, text)| text.clone())
            .ok_or_else(|| std::io::Error::from_raw_os_error(libc::ENOENT))
    }
    fn os_user(&self) -> Option<String> {
        Some("tester".into())
    }
    fn ensure_open_files(&self, _: u64) -> Result<(), crate::sys::LimitError> {
        Ok(())
    }
}

/// A run to make: a pgbench command line and its scripts, against a server.
pub struct Bench {
    args: Vec<String>,
    scripts: Vec<(String, String)>,
    pub clock: Arc<TestClock>,
    /// The `-T` deadline, µs after [`START_US`], when the test sets one.
    end_after_us: Option<i64>,
    /// Called with each client's number and socket once it is connected, before the
    /// clients run (to break a socket as the kernel might).
    connected: fn(usize, std::os::fd::RawFd),
    /// The scripts' `\sleep`s are pauses (as a workload's keying and thinking).
    untimed_sleeps: bool,
}

impl Bench {
    /// `pgbench ARGS -f script.sql` with `script` as the file, `--random-seed=1`.
    pub fn new(args: &[&str], script: &str) -> Bench {
        Bench::scripts(args, &[("script.sql", script)])
    }

    /// Several `-f` scripts (each named in `args` as the test likes, e.g. `a.sql@2`).
    pub fn scripts(args: &[&str], scripts: &[(&str, &str)]) -> Bench {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        if scripts.len() == 1 && !args.contains(&"-f") {
            all.extend(["-f".to_string(), scripts[0].0.to_string()]);
        }
        if !args.iter().any(|a| a.starts_with("--random-seed")) {
            all.push("--random-seed=1".into());
        }
        Bench {
            args: all,
            scripts: scripts
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
            clock: TestClock::at(START_US),
            end_after_us: None,
            connected: |_, _| {},
            untimed_sleeps: false,
        }
    }

    /// The scripts' `\sleep`s are pauses between transactions, as a workload makes
    /// them: outside the latency, cut short at the `-T` deadline.
    pub fn untimed_sleeps(mut self) -> Bench {
        self.untimed_sleeps = true;
        self
    }

    /// A `-T` run's deadline on the test clock, `us` after the start (what the main
    /// thread sets when the clients start).
    pub fn ends_after(mut self, us: i64) -> Bench {
        self.end_after_us = Some(us);
        self
    }

    /// `connected` gets each client's number and socket after its first connection.
    pub fn on_connected(mut self, connected: fn(usize, std::os::fd::RawFd)) -> Bench {
        self.connected = connected;
        self
    }

    /// The run's plan, as the command line makes it.
    pub fn plan(&self) -> super::plan::BenchPlan {
        crate::logging::init_progname("pgbench");
        let interpreted = interpret("pgbench", &self.args, &Scripts(self.scripts.clone()));
        match interpreted.outcome {
            Ok(Action::Bench { plan, .. }) => *plan,
            other => panic!("{:?} is not a run: {other:?}", self.args),
        }
    }

    /// Runs the clients against `server` until all are done.
    pub fn run(&self, server: &FakeServer, drive: Drive) -> Ran {
        self.run_with(server, drive, |_| {})
    }

    /// Runs the clients; `meanwhile` gets the run's control on the test's thread while
    /// they run (to stop the run, as a signal would). The clients are started as the
    /// runner starts them (`threads::start`, `begin`), on the test clock, with the
    /// drivers `drive` names.
    pub fn run_with(
        &self,
        server: &FakeServer,
        drive: Drive,
        meanwhile: impl FnOnce(&RunControl),
    ) -> Ran {
        let mut plan = self.plan();
        for s in &mut plan.scripts {
            s.untimed_sleeps = self.untimed_sleeps;
        }
        let args = ConnectArgs {
            host: Some(server.host().to_string()),
            port: Some(server.port().to_string()),
            user: Some("tester".into()),
            dbname: Some("bench".into()),
            ..ConnectArgs::default()
        };
        let conn_opts = ConnectOptions::from_env_and_args(&|_| None, &args).expect("options");
        let seeds = worker::seed_plan(&plan, plan.random_seed);
        let vars = launch::client_variables(&plan, 1, &seeds).expect("variables");
        let clock = RunClock::on(Arc::clone(&self.clock));
        let (ctx, events) = RunShared::new(
            &plan,
            (&args, conn_opts),
            &seeds,
            clock,
            &RunEnv::process(None, RunStop::new()),
        )
        .expect("the run's context");
        let ctx = Arc::new(ctx);
        let how = Launch {
            drivers: match drive {
                Drive::Alone => Drivers::Chosen,
                Drive::Epoll => Drivers::Epoll,
                Drive::Uring => Drivers::Uring,
            },
            // One OS thread per -j thread unless the test says otherwise: the same
            // driver on every machine.
            os_threads: plan.os_threads,
            connected: Some(self.connected),
        };
        let (clients, gate) = threads::start(&ctx, vars, seeds.clients, how)
            .unwrap_or_else(|e| panic!("clients not started: {}", e.render()));
        // The start as the runner makes it (the -R schedule, -T's deadline), then the
        // test's own deadline.
        begin(&ctx, START_US);
        if let Some(after) = self.end_after_us {
            ctx.control.clock.set_end(START_US + after);
        }
        gate.open(Start::Go);
        meanwhile(&ctx.control);
        for c in clients {
            c.join().expect("a client thread");
        }
        collect(&events, &ctx.outbox)
    }
}

/// What the clients sent, once all are done.
fn collect(events: &crossbeam_channel::Receiver<Event>, outbox: &Outbox) -> Ran {
    let mut ran = Ran::default();
    let mut records = Vec::new();
    for local in 0..outbox.clients() {
        if outbox.take(local, &mut records) {
            ran.records.append(&mut records);
        }
    }
    for event in events.try_iter() {
        match event {
            Event::Batch(batch) => ran.records.extend(batch),
            Event::Aborted { abort, .. } => ran.aborts.push(abort.lines().join("\n")),
            Event::Done(done) => ran.done.push(done),
            Event::Link(link) => ran.links.push(link),
        }
    }
    ran
}

/// Whether this kernel gives io_uring; says the test is skipped if not (failing
/// under `CI=true`, where the kernel must allow it).
pub fn uring_or_skip() -> bool {
    if Driver::uring(1).is_some() {
        return true;
    }
    use std::io::Write;
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "io_uring is refused here (CI=true: the io_uring driver must be tested)"
    );
    let _ = writeln!(std::io::stderr(), "skipped: io_uring is refused here");
    false
}

/// A server that answers every statement as a server usually does.
pub fn usual_server() -> FakeServer {
    FakeServer::answering(|r: &Request| Reply::usual(&r.sql))
}

/// `test_all_drives!(name, |drive| body)`: one test per way of waiting, in a module
/// `name` (`name::alone`, `name::epoll`, `name::uring`; io_uring skipped where the
/// kernel refuses it).
macro_rules! all_drives {
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn alone() {
                ($body)($crate::bench::tests::Drive::Alone);
            }
            #[test]
            fn epoll() {
                ($body)($crate::bench::tests::Drive::Epoll);
            }
            #[test]
            fn uring() {
                if $crate::bench::tests::uring_or_skip() {
                    ($body)($crate::bench::tests::Drive::Uring);
                }
            }
        }
    };
}
pub(crate) use all_drives;
