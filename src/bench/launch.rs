//! What the clients of a run share, and their start: the scripts as clients run them,
//! [`RunShared`] (what every client reads), pgbench's deal of clients to `-j` threads
//! and what each thread's clients share ([`ThreadShared`]: its random states, `-R`
//! schedule and log file), and the [`StartGate`]: each thread connects its clients,
//! then all wait there until the main thread says go (or says stop, when a connection
//! or a thread could not be made). Every client's variables are made here too
//! ([`client_variables`]).

use super::control::RunControl;
use super::doubt::{BlockEffect, ScriptDoubt};
use super::error::RunError;
use super::events::{Event, Outbox};
use super::plan::BenchPlan;
use super::retry::RetryPlan;
use super::throttle::Schedule;
use super::txlog::ThreadLog;
use crate::clock::RunClock;
use crossbeam_channel::Receiver;
use pgbench_script::ast::{CommandKind, MetaCommand, Script};
use pgbench_script::eval::Compiled;
use pgbench_script::prng::{Prng, SeedPlan};
use pgbench_script::variables::Variables;
use pgbench_wire::{ConnError, ConnectOptions};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// A script ready to run: the parsed script plus what the query modes need.
pub struct RunScript {
    pub script: Script,
    pub weight: i64,
    /// `$n` text of each SQL command (empty for meta-commands).
    pub parameterized: Vec<String>,
    /// Prepared statement names (`P_0`, `P_1`, ... over all scripts).
    pub prepared_names: Vec<String>,
    /// Where a branch that stops running goes ([`super::conditional::branch_jumps`]).
    pub branch_jumps: Vec<usize>,
    /// The expression of each `\set`, `\if` and `\elif`, compiled once for every
    /// evaluation (`None` for other commands).
    pub compiled: Vec<Option<Compiled>>,
    /// Each command's part in `\if` blocks ([`super::conditional::Role`]).
    pub roles: Vec<super::conditional::Role>,
    /// Its `\sleep`s are pauses outside the transaction (see `WeightedScript`).
    pub untimed_sleeps: bool,
    /// Prepared when a client connects (see `WeightedScript`).
    pub prepare_on_connect: bool,
    /// Which commands may commit, for the count of transactions in doubt.
    pub doubt: ScriptDoubt,
}

/// The scripts of the plan, with their statement texts and prepared names.
pub fn run_scripts(plan: &BenchPlan) -> Vec<RunScript> {
    let mut next_prepared = 0;
    plan.scripts
        .iter()
        .map(|ws| {
            let mut parameterized = Vec::new();
            let mut prepared_names = Vec::new();
            for cmd in &ws.script.commands {
                match &cmd.kind {
                    CommandKind::Sql(sql) => {
                        parameterized.push(sql.parameterized_text());
                        prepared_names.push(format!("P_{next_prepared}"));
                        next_prepared += 1;
                    }
                    CommandKind::Meta(_) => {
                        parameterized.push(String::new());
                        prepared_names.push(String::new());
                    }
                }
            }
            let doubt = ScriptDoubt::new(ws.script.commands.iter().map(|cmd| match &cmd.kind {
                CommandKind::Sql(sql) => Some(BlockEffect::of(&sql.text)),
                CommandKind::Meta(_) => None,
            }));
            let compiled = ws
                .script
                .commands
                .iter()
                .map(|cmd| match &cmd.kind {
                    CommandKind::Meta(
                        MetaCommand::Set { expr, .. }
                        | MetaCommand::If(expr)
                        | MetaCommand::Elif(expr),
                    ) => Some(Compiled::new(expr)),
                    _ => None,
                })
                .collect();
            RunScript {
                branch_jumps: super::conditional::branch_jumps(&ws.script.commands),
                roles: super::conditional::Role::of_each(&ws.script.commands),
                compiled,
                script: ws.script.clone(),
                weight: ws.weight,
                parameterized,
                prepared_names,
                untimed_sleeps: ws.untimed_sleeps,
                prepare_on_connect: ws.prepare_on_connect,
                doubt,
            }
        })
        .collect()
}

/// What every client of the run reads while it runs (one per run, behind an `Arc`).
pub struct RunShared {
    pub plan: BenchPlan,
    pub scripts: Vec<RunScript>,
    pub weights: Vec<i64>,
    pub conn_opts: ConnectOptions,
    /// Each group's scripts' weights, `-R` schedule and target: the plan's one, or
    /// one per scenario ([`super::scenario`]); a thread's is `groups[thread.group]`.
    pub groups: Vec<super::scenario::Group>,
    pub control: RunControl,
    pub retry: RetryPlan,
    pub events: crossbeam_channel::Sender<Event>,
    /// The clients' finished transactions, a slot per client (by local index).
    pub outbox: Outbox,
    /// `-P`: the figures its line reads, a slot per client (by local index), and
    /// who prints it.
    pub progress: Option<super::progress::ProgressBoard>,
    pub threads: Vec<ThreadShared>,
    /// `--metrics-listen`: what the endpoint shows.
    pub metrics: Option<std::sync::Arc<crate::metrics::Live>>,
    /// Where the clients' messages go.
    pub out: Arc<dyn crate::logging::Output>,
    /// The run's phases, fixed when the clients are let go (before any records).
    pub phases: std::sync::OnceLock<super::phases::Phases>,
    /// The `-j` threads' run-queue wait while they ran, ns ([`super::cpu_share`]).
    pub threads_waited_ns: AtomicU64,
    /// `--rate-stages`, `--client-stages`: the stages on the run clock, fixed with
    /// the `-T` deadline they end at.
    pub stage_clock: OnceLock<super::stages::StageClock>,
}

impl RunShared {
    /// What every client of a run reads, from the plan, the connection options (the
    /// command line's, and the options they were made of, which a scenario's conninfo
    /// goes over) and the random states, on `clock`; and the channel the clients'
    /// events arrive on.
    pub fn new(
        plan: &BenchPlan,
        (conn_args, conn_opts): (&pgbench_wire::ConnectArgs, ConnectOptions),
        seeds: &SeedPlan,
        clock: RunClock,
        env: &super::RunEnv,
    ) -> Result<(RunShared, Receiver<Event>), RunError> {
        let (events, received) = crossbeam_channel::unbounded();
        let scripts = run_scripts(plan);
        let mut control = RunControl::new(plan.settings.clients);
        control.clock = clock;
        let shared = RunShared {
            weights: scripts.iter().map(|s| s.weight).collect(),
            scripts,
            groups: super::scenario::groups(plan, conn_args, &conn_opts)?,
            conn_opts,
            control,
            retry: RetryPlan {
                max_tries: plan.settings.max_tries,
                latency_limit_us: plan.settings.latency_limit_us,
            },
            events,
            outbox: Outbox::new(plan.settings.clients),
            progress: progress_board(plan),
            threads: thread_states(plan, seeds)?,
            plan: plan.clone(),
            metrics: env.metrics.clone(),
            out: Arc::clone(&env.out),
            phases: OnceLock::new(),
            threads_waited_ns: AtomicU64::new(0),
            stage_clock: OnceLock::new(),
        };
        Ok((shared, received))
    }

    /// The `-R` schedule of a thread of `group` (one of [`RunShared::groups`]), once
    /// the `-T` deadline is known.
    pub fn throttle_schedule<'s>(
        &'s self,
        group: &'s super::scenario::Group,
    ) -> Option<Schedule<'s>> {
        let delay_us = group.throttle_delay_us?;
        Some(Schedule {
            // --rate-stages (or a scenario's): the rate over time, where the stages
            // begin.
            staged: match (&self.plan.stages, self.stage_clock.get()) {
                (Some(super::stages::StagePlan::Rate(profile)), Some(clock)) => {
                    Some((profile, clock.origin_us))
                }
                _ => group.rate_stages(),
            },
            delay_us,
            latency_limit_us: self.plan.latency_limit_us(),
            end_us: self
                .plan
                .settings
                .limit
                .duration()
                .and(self.control.clock.end_us()),
        })
    }
}

/// `-P`'s board: lines every period, showing what the run's options add to them.
fn progress_board(plan: &BenchPlan) -> Option<super::progress::ProgressBoard> {
    let s = &plan.settings;
    let format = super::progress::ProgressFormat {
        timestamp: plan.progress_timestamp,
        throttled: s.throttled(),
        latency_limit: s.latency_limit_us.is_some(),
        show_retries: !s.max_tries.is_single(),
    };
    let period_us = s.progress_s? * 1_000_000;
    Some(super::progress::ProgressBoard::new(
        s.clients, period_us, format,
    ))
}

/// Each client's variables: `-D` first, then the automatic ones unless `-D` set them.
pub fn client_variables(
    plan: &BenchPlan,
    scale: i32,
    seeds: &SeedPlan,
) -> Result<Vec<Variables>, RunError> {
    let mut base = Variables::new();
    for (name, value) in &plan.defines {
        base.set_text("option", name, value)
            .map_err(|e| RunError::Define(e.to_string()))?;
    }
    let automatic = |name: &str| !plan.defines_variable(name);
    Ok((0..plan.settings.clients)
        .map(|i| {
            let mut v = base.clone();
            // These names are valid and their values integers: setting cannot fail.
            if automatic("scale") {
                let _ = v.set_int("startup", "scale", i64::from(scale));
            }
            if automatic("client_id") {
                let _ = v.set_int("startup", "client_id", (plan.first_client() + i) as i64);
            }
            if let Some(seed) = seeds.default_seed {
                let _ = v.set_int("startup", "default_seed", seed);
            }
            if automatic("random_seed") {
                let _ = v.set_int("startup", "random_seed", seeds.random_seed);
            }
            v
        })
        .collect())
}

/// Each pgbench thread's random states and log file.
fn thread_states(plan: &BenchPlan, seeds: &SeedPlan) -> Result<Vec<ThreadShared>, RunError> {
    let pid = std::process::id();
    let groups = thread_groups(plan);
    seeds
        .threads
        .iter()
        .enumerate()
        .map(|(t, ts)| {
            let group = groups.get(t).copied().unwrap_or(0);
            // Numbered as the whole run numbers them (--worker).
            let t = plan.first_thread() + t;
            let log = match &plan.log {
                Some(lp) => Some(ThreadLog::open(lp, plan, pid, t, ts.sample.clone())?),
                None => None,
            };
            let mut shared = ThreadShared::new(
                t,
                ThreadState {
                    choose_rng: ts.choose.clone(),
                    throttle_rng: ts.throttle.clone(),
                    throttle_trigger: 0,
                    log,
                },
            );
            shared.group = group;
            Ok(shared)
        })
        .collect()
}

/// The state one pgbench thread shares among its clients.
pub struct ThreadShared {
    pub id: usize,
    /// Its clients' group in [`RunShared::groups`] (their scenario's).
    pub group: usize,
    state: Mutex<ThreadState>,
}

/// Behind the thread's lock.
pub struct ThreadState {
    pub choose_rng: Prng,
    pub throttle_rng: Prng,
    /// Next `-R` slot, µs on the run clock.
    pub throttle_trigger: i64,
    pub log: Option<ThreadLog>,
}

impl ThreadShared {
    pub fn new(id: usize, state: ThreadState) -> ThreadShared {
        ThreadShared {
            id,
            group: 0,
            state: Mutex::new(state),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, ThreadState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// pgbench's deal of clients to threads: thread i gets the next
/// `(nclients - dealt + nthreads - i - 1) / (nthreads - i)` clients.
pub fn deal_clients(nclients: usize, nthreads: usize) -> Vec<usize> {
    let mut dealt = 0;
    (0..nthreads)
        .map(|i| {
            let n = (nclients - dealt + nthreads - i - 1) / (nthreads - i);
            dealt += n;
            n
        })
        .collect()
}

/// How many clients each `-j` thread runs: pgbench's deal, or each scenario's deal of
/// its clients to its threads, one scenario after another.
pub fn deal(plan: &BenchPlan) -> Vec<usize> {
    if plan.scenarios.is_empty() {
        return deal_clients(plan.settings.clients, plan.settings.threads);
    }
    plan.scenarios
        .iter()
        .flat_map(|s| deal_clients(s.clients, s.threads))
        .collect()
}

/// The group of each `-j` thread.
pub fn thread_groups(plan: &BenchPlan) -> Vec<usize> {
    if plan.scenarios.is_empty() {
        return vec![0; plan.settings.threads];
    }
    plan.scenarios
        .iter()
        .enumerate()
        .flat_map(|(i, s)| std::iter::repeat_n(i, s.threads))
        .collect()
}

/// What the main thread tells the waiting clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Go,
    /// The run will not start; return at once.
    Stop,
}

struct GateState {
    arrived: usize,
    /// How many the main thread waits for, once it waits: only the last of them
    /// wakes it.
    expected: usize,
    /// The first client whose connection failed.
    failed: Option<(usize, ConnError)>,
    /// The threads waiting for the decision.
    waiting: Vec<std::thread::Thread>,
}

impl Default for GateState {
    fn default() -> GateState {
        GateState {
            arrived: 0,
            expected: usize::MAX,
            failed: None,
            waiting: Vec::new(),
        }
    }
}

/// Where connected clients wait for the start, and where the main thread learns
/// that all are connected, or that one could not connect.
///
/// At 1,000 threads the gate is a crowd: woken at every arrival, the main thread
/// fought the arriving threads for the lock, and the decision's `notify_all` woke
/// every waiting thread at once to fight for it again (3,900 of a 5 s run's 5,700
/// futex calls at `-c 1000 -j 1000`). So the main thread is woken by the last
/// arrival (or a failure) only, and each waiting thread is unparked on its own and
/// reads the decision without the lock.
#[derive(Default)]
pub struct StartGate {
    state: Mutex<GateState>,
    /// The main thread waits on this one for the last arrival or a failure.
    arrived: Condvar,
    /// The main thread's decision: 0 while there is none, then [`GO`] or [`STOP`].
    decision: std::sync::atomic::AtomicU8,
}

const GO: u8 = 1;
const STOP: u8 = 2;

impl StartGate {
    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn decided(&self) -> Option<Start> {
        match self.decision.load(std::sync::atomic::Ordering::Acquire) {
            GO => Some(Start::Go),
            STOP => Some(Start::Stop),
            _ => None,
        }
    }

    /// `clients` clients are ready (connected, or `-C`); waits for the decision.
    pub fn arrive(&self, clients: usize) -> Start {
        {
            let mut st = self.lock();
            st.arrived += clients;
            if st.arrived >= st.expected {
                self.arrived.notify_one();
            }
            // Under the lock: [`Self::open`] stores the decision before it takes the
            // list, so a thread either is in the list or sees the decision.
            if let Some(d) = self.decided() {
                return d;
            }
            st.waiting.push(std::thread::current());
        }
        loop {
            if let Some(d) = self.decided() {
                return d;
            }
            std::thread::park();
        }
    }

    /// A client could not connect (and `clients` in all stop trying); waits for the
    /// decision, which will be to stop.
    pub fn fail(&self, client: usize, error: ConnError, clients: usize) -> Start {
        {
            let mut st = self.lock();
            st.failed.get_or_insert((client, error));
            self.arrived.notify_one();
        }
        self.arrive(clients)
    }

    /// The main thread: waits until `clients` arrived, or the first failure;
    /// meanwhile `tick` is called at least as often as it asks (what it returns is
    /// how long until it next has something to do: a `-P` line due).
    pub fn wait_ready(
        &self,
        clients: usize,
        mut tick: impl FnMut() -> Duration,
    ) -> Result<(), (usize, ConnError)> {
        let mut st = self.lock();
        st.expected = clients;
        loop {
            if let Some(failed) = st.failed.take() {
                return Err(failed);
            }
            if st.arrived >= clients {
                return Ok(());
            }
            let wait = {
                drop(st);
                let wait = tick();
                st = self.lock();
                wait
            };
            if st.failed.is_some() || st.arrived >= clients {
                continue;
            }
            st = self
                .arrived
                .wait_timeout(st, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The main thread's decision, for every client waiting and still to come.
    pub fn open(&self, decision: Start) {
        let value = match decision {
            Start::Go => GO,
            Start::Stop => STOP,
        };
        self.decision
            .store(value, std::sync::atomic::Ordering::Release);
        let waiting = std::mem::take(&mut self.lock().waiting);
        for thread in waiting {
            thread.unpark();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn clients_are_dealt_to_threads_as_pgbench_deals_them() {
        assert_eq!(deal_clients(10, 4), [3, 3, 2, 2]);
        assert_eq!(deal_clients(3, 3), [1, 1, 1]);
        assert_eq!(deal_clients(5, 2), [3, 2]);
    }

    #[test]
    fn the_gate_opens_when_all_arrived_and_reports_the_first_failure() {
        let gate = Arc::new(StartGate::default());
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let g = Arc::clone(&gate);
                std::thread::spawn(move || g.arrive(1))
            })
            .collect();
        assert!(gate.wait_ready(3, || Duration::from_secs(1)).is_ok());
        gate.open(Start::Go);
        for w in waiters {
            assert_eq!(w.join().unwrap(), Start::Go);
        }

        let gate = Arc::new(StartGate::default());
        let g = Arc::clone(&gate);
        let failing = std::thread::spawn(move || g.fail(7, ConnError::Closed, 1));
        let (client, _) = gate.wait_ready(5, || Duration::from_secs(1)).unwrap_err();
        assert_eq!(client, 7);
        gate.open(Start::Stop);
        assert_eq!(failing.join().unwrap(), Start::Stop);
    }
}
