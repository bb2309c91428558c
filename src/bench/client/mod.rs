//! One client: pgbench.c `advanceConnectionState` as a state machine (choose a script,
//! throttle, run its commands, retry serialization and deadlock failures, end the
//! transaction). [`Client::advance`] runs it until it must wait, and says for what:
//! replies, a time, or nothing more. The decisions are pure ([`super::throttle`],
//! [`super::retry`], [`super::conditional`]); what is left here is the order of the
//! steps, the run of a transaction's commands and the end of each try.
//!
//! The state machine never asks which driver runs it: after a send it returns
//! [`Wait::Replies`], and the next `advance` reads them. A client alone on its thread
//! is driven by [`Client::run`], whose blocking reads wait on its socket (the
//! cheapest for one client); clients sharing a thread are driven by
//! [`super::multiplex`], which waits on all their sockets at once.
//!
//! Beside this file: `choose` (the next script and its `-R` slot), `sql` and `meta`
//! (running each kind of command), `failure` (how a command fails, in pgbench's
//! words), `link` (the connection's life and what drivers ask of it), `outage`
//! (`--reconnect`: riding through a lost connection) and `record`
//! (what the client measures: batches to the collector, `-l` lines, `-r` counters,
//! handed over at the end with a [`ClientAbort`] if it stopped for good).

mod choose;
mod failure;
mod link;
mod meta;
mod outage;
pub use link::{QueuedIo, SocketIo};
mod record;
mod sql;

use super::conditional::{CondStack, Effect, Role};
use super::error::{AbortReason, ClientAbort};
use super::events::Event;
use super::launch::{RunShared, ThreadShared};
use failure::{Retryable, TxError};
use pgbench_results::TxOutcome;
use pgbench_script::ast::CommandKind;
use pgbench_script::eval::{EvalContext, EvalError};
use pgbench_script::prng::Prng;
use pgbench_script::variables::Variables;
use pgbench_wire::{Connection, TransactionStatus};
use record::Recorder;

/// What a client waits for when [`Client::advance`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The replies up to the `syncs`-th ReadyForQuery (a driver that waits on many
    /// sockets asks [`Client::replies_arrived`]; a blocking one just advances).
    Replies { syncs: usize },
    /// The run clock reaching this time, µs: a `\sleep` or a `-R` slot.
    Until(i64),
    /// Nothing more: the client finished and told the collector.
    Done,
}

/// Where a client stands between two calls of [`Client::advance`] (pgbench's
/// `CState.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// CSTATE_CHOOSE_SCRIPT.
    Choose,
    /// CSTATE_THROTTLE: waiting for the `-R` slot of `script`.
    Throttled { script: usize, at: i64 },
    /// CSTATE_START_COMMAND at the transaction's command.
    Command,
    /// CSTATE_WAIT_RESULT: the transaction's SQL command was sent.
    AwaitResults,
    /// The Prepare of `command` was sent (`-M prepared`); the transaction's command (that SQL command, or the `\startpipeline` before it)
    /// goes on once the reply is read.
    AwaitPrepare { command: usize },
    /// `\endpipeline` was sent; its results end at the `syncs`-th sync.
    AwaitPipeline { syncs: usize },
    /// CSTATE_SLEEP in the transaction's `\sleep`.
    Sleeping,
    /// `--reconnect`: the connection was lost; connecting again.
    Reconnecting(outage::Reconnecting),
    /// CSTATE_FINISHED.
    Finished,
}

/// What running one command asks of the loop.
enum Flow {
    /// Go on with the next command.
    Next,
    /// Wait, then resume the command in this phase.
    Wait(Phase, Wait),
}

/// The transaction in flight: what pgbench keeps of it in its `CState`.
struct Tx {
    script: usize,
    /// When it was due: its `-R` slot, else when it began.
    scheduled: i64,
    /// When it began (its slot waited for, its connection made).
    begin: i64,
    /// The random state at the start, restored for each retry.
    random_state: Prng,
    tries: u32,
    cond: CondStack,
    /// The command being run.
    index: usize,
    /// When the command started, when `-r` times it.
    command_start: Option<i64>,
    /// When the `\sleep` under way began, if it is a pause (untimed sleeps).
    paused_from: Option<i64>,
}

/// One client.
pub struct Client<'a> {
    /// pgbench's client number: `client_id`, messages, log lines.
    pub id: usize,
    /// This process's index of the client (in [`super::control::RunControl`]);
    /// equal to `id` unless `--worker` offsets the numbers.
    local_index: usize,
    ctx: &'a RunShared,
    thread: &'a ThreadShared,
    /// Its thread's group (its scenario's): scripts' weights, schedule, target.
    group: &'a crate::bench::scenario::Group,
    vars: Variables,
    rng: Prng,
    conn: Option<Connection>,
    /// Commands prepared on this connection, per script (`-M prepared`).
    prepared: Vec<Vec<bool>>,
    /// What it measured, on its way to the collector.
    record: Recorder<'a>,
    /// Reused buffers for SQL text and parameters.
    sql_buf: String,
    param_buf: String,
    param_ends: Vec<Option<usize>>,
    /// Syncs sent with `\syncpipeline` not yet read.
    pending_syncs: usize,
    phase: Phase,
    tx: Tx,
    /// How its connections do their socket I/O (its thread's driver's choice).
    socket_io: SocketIo,
    /// Counts the connections made, so a driver sees when `-C` replaced the socket.
    connections: u64,
    /// `--reconnect`: what it keeps to ride through a loss.
    riding: Option<outage::Riding>,
}

impl<'a> Client<'a> {
    pub fn new(
        (local_index, id): (usize, usize),
        ctx: &'a RunShared,
        thread: &'a ThreadShared,
        vars: Variables,
        rng: Prng,
    ) -> Client<'a> {
        let per_command = |v| {
            ctx.scripts
                .iter()
                .map(|s| vec![v; s.script.commands.len()])
                .collect()
        };
        Client {
            id,
            local_index,
            ctx,
            thread,
            group: &ctx.groups[thread.group],
            vars,
            rng,
            conn: None,
            prepared: per_command(false),
            record: Recorder::new((local_index, id), ctx, thread),
            sql_buf: String::with_capacity(256),
            param_buf: String::with_capacity(128),
            param_ends: Vec::new(),
            pending_syncs: 0,
            phase: Phase::Choose,
            tx: Tx {
                script: 0,
                scheduled: 0,
                begin: 0,
                random_state: Prng::seed(0),
                tries: 0,
                cond: CondStack::default(),
                index: 0,
                command_start: None,
                paused_from: None,
            },
            socket_io: SocketIo::Blocking,
            connections: 0,
            riding: ctx.plan.availability.map(|_| outage::Riding::default()),
        }
    }

    fn debug(&self, msg: impl FnOnce() -> String) {
        if self.ctx.plan.debug {
            self.ctx.out.info(&msg());
        }
    }

    /// The blocking driver: runs the client alone on this thread until it is
    /// finished, sleeping where it waits for a time. Where it waits for replies it
    /// just advances again: on a blocking connection the read of the replies waits
    /// for them (a `poll` for readability, then the read; see
    /// [`pgbench_wire::Connection`]'s `fill`), the cheapest wait for one client.
    pub fn run(mut self) {
        loop {
            match self.advance() {
                Wait::Done => return,
                Wait::Until(at) => self.ctx.control.clock.sleep_until(at),
                Wait::Replies { .. } => {}
            }
        }
    }

    /// The run clock now, µs.
    #[inline]
    fn now(&self) -> i64 {
        self.ctx.control.clock.now_us()
    }

    /// Runs the client until it must wait, and says for what. Once it says
    /// [`Wait::Done`], it has told the collector everything it measured.
    pub fn advance(&mut self) -> Wait {
        if self.phase == Phase::Finished {
            return Wait::Done;
        }
        let outcome = match self.step() {
            Ok(Wait::Done) => Ok(()),
            Ok(wait) => return wait,
            Err(abort) => Err(abort),
        };
        self.finish(outcome);
        Wait::Done
    }

    /// Ends the client now, aborted (its thread can no longer wait on sockets).
    pub fn abort_now(&mut self, abort: ClientAbort) {
        if self.phase == Phase::Finished {
            return;
        }
        self.finish(Err(abort));
    }

    /// Whether the transaction the client stands in, which it ends without counting
    /// (an abort, a stop, the run's end in a `\sleep`), may have committed something
    /// ([`crate::bench::doubt`]). Between transactions, none.
    fn cut_short_in_doubt(&self) -> bool {
        let in_flight = match self.phase {
            // A command that failed is the one the client was at: sent, if SQL.
            Phase::Command | Phase::AwaitResults | Phase::AwaitPipeline { .. } => true,
            // The Prepare was sent, not the statement.
            Phase::Sleeping | Phase::AwaitPrepare { .. } => false,
            Phase::Choose | Phase::Throttled { .. } | Phase::Reconnecting(_) | Phase::Finished => {
                return false
            }
        };
        self.ctx.scripts[self.tx.script]
            .doubt
            .in_doubt(self.tx.index, in_flight, false)
    }

    /// Moves through the phases until one waits.
    fn step(&mut self) -> Result<Wait, ClientAbort> {
        loop {
            // How the command that waited ended; the commands go on from there. One
            // call of `run_from` for every phase: it is inlined here.
            let resumed = match self.phase {
                Phase::Choose => match self.choose()? {
                    Some(wait) => return Ok(wait),
                    None => continue,
                },
                Phase::Throttled { script, at } => {
                    if self.ctx.control.clock.timer_exceeded() {
                        return Ok(Wait::Done);
                    }
                    self.start_transaction(script, Some(at))?;
                    continue;
                }
                Phase::Command => Ok(()),
                Phase::AwaitResults => self.resume_results(),
                Phase::AwaitPrepare { command } => match self.resume_prepared(command) {
                    Ok(Flow::Wait(phase, wait)) => {
                        self.phase = phase;
                        return Ok(wait);
                    }
                    Ok(Flow::Next) => {
                        self.command_done();
                        Ok(())
                    }
                    Err(e) => Err(e),
                },
                Phase::AwaitPipeline { syncs } => {
                    let (script, index) = (self.tx.script, self.tx.index);
                    self.read_pipeline_results(script, index, syncs)
                        .map(|()| self.command_done())
                }
                Phase::Sleeping => {
                    if self.pause_outlived_run() {
                        return Ok(Wait::Done);
                    }
                    self.command_done();
                    Ok(())
                }
                Phase::Reconnecting(r) => match self.reconnect_attempt(r)? {
                    Some(wait) => return Ok(wait),
                    None => continue,
                },
                Phase::Finished => return Ok(Wait::Done),
            };
            if let Some(wait) = self.run_from(resumed)? {
                return Ok(wait);
            }
        }
    }

    /// Tells the collector everything measured (an abort first, if it aborted), and
    /// is finished.
    fn finish(&mut self, outcome: Result<(), ClientAbort>) {
        // A transaction left uncounted after sending what may commit.
        if self.cut_short_in_doubt() {
            self.record.cut_short_in_doubt();
        }
        self.phase = Phase::Finished;
        self.ctx.control.transaction_ended(self.local_index);
        self.record.flush_all();
        self.detach();
        // After a stop, a failure is the stop's doing (a cancelled statement, a closed
        // socket): the transaction it cut short is not counted, and nobody aborted.
        let (abort, unfinished) = match outcome {
            Err(_) if self.ctx.control.stopping() => (None, true),
            Err(abort) => (Some(abort), false),
            Ok(()) => (None, false),
        };
        let events = &self.ctx.events;
        if let Some(abort) = abort {
            let _ = events.send(Event::Aborted {
                thread: self.thread.id,
                abort,
            });
        }
        let _ = events.send(Event::Done(self.record.done(self.now(), unfinished)));
        self.ctx.control.reported(self.local_index);
    }

    /// CSTATE_START_TX: connects if needed (`-C`), and starts the first try.
    fn start_transaction(
        &mut self,
        script: usize,
        scheduled: Option<i64>,
    ) -> Result<(), ClientAbort> {
        let mut begin = self.now();
        self.ctx
            .control
            .transaction_started(self.local_index, begin);
        if self.conn.is_none() {
            if let Err(abort) = self.reconnect() {
                return self.connect_failed(abort, script, scheduled);
            }
            begin = self.now();
        }
        self.tx.script = script;
        self.tx.begin = begin;
        self.tx.scheduled = scheduled.unwrap_or(begin);
        self.tx.random_state = self.rng.clone();
        self.tx.tries = 1;
        self.restart_commands();
        Ok(())
    }

    /// The script from its first command, with no `\if` open.
    fn restart_commands(&mut self) {
        self.tx.cond.reset();
        self.tx.index = 0;
        self.phase = Phase::Command;
    }

    /// Runs commands from the current one (after `resumed`, the end of a command
    /// that waited); a failure or the script's end ends the try.
    #[inline]
    fn run_from(&mut self, resumed: Result<(), TxError>) -> Result<Option<Wait>, ClientAbort> {
        self.phase = Phase::Command;
        match resumed.and_then(|()| self.run_commands()) {
            Ok(Some(wait)) => Ok(Some(wait)),
            Ok(None) => self.end_try(None),
            Err(TxError::Abort(a)) => Err(*a),
            Err(TxError::Retry(kind, command)) => self.end_try(Some((kind, command))),
            Err(TxError::Lost(sqlstate, command, refused)) => self.lost(sqlstate, command, refused),
        }
    }

    /// The end of a try: retries serialization and deadlock failures as
    /// `--max-tries`, `-L` and `-T` allow, else counts the transaction and moves on
    /// (CSTATE_ERROR, CSTATE_RETRY, CSTATE_FAILURE, CSTATE_END_TX).
    fn end_try(
        &mut self,
        failure: Option<(Retryable, usize)>,
    ) -> Result<Option<Wait>, ClientAbort> {
        let ctx = self.ctx;
        let script = self.tx.script;
        let tries = self.tx.tries;
        let scheduled = self.tx.scheduled;
        let outcome = match failure {
            None => TxOutcome::Success,
            Some((kind, command)) => {
                self.recover_after_error()?;
                // -T expired while handling the error: the transaction is not counted.
                if ctx.control.clock.timer_exceeded() {
                    return Ok(Some(Wait::Done));
                }
                let elapsed = || ctx.control.clock.now_us() - scheduled;
                if kind != Retryable::Other
                    && ctx
                        .retry
                        .can_retry(tries, elapsed, || ctx.control.clock.timer_exceeded())
                {
                    if ctx.plan.verbose_errors {
                        self.verbose_try_message(true, tries, scheduled);
                    }
                    self.tx.tries += 1;
                    self.record.retried(script, command, self.now());
                    self.rng = self.tx.random_state.clone();
                    self.restart_commands();
                    return Ok(None);
                }
                self.record.failed(script, command, self.now());
                if ctx.plan.verbose_errors {
                    self.verbose_try_message(false, tries, scheduled);
                }
                match kind {
                    Retryable::Serialization => TxOutcome::SerializationFailure,
                    Retryable::Deadlock => TxOutcome::DeadlockFailure,
                    Retryable::Other => TxOutcome::OtherFailure,
                }
            }
        };
        let now = self.now();
        let (latency, lag) = if outcome == TxOutcome::Success {
            self.succeeded(now);
            ((now - scheduled) as f64, (self.tx.begin - scheduled) as f64)
        } else {
            (0.0, 0.0)
        };
        self.record
            .transaction(script, outcome, (latency, lag), tries, now);
        self.ctx.control.transaction_ended(self.local_index);
        self.end_of_transaction()?;
        // Counted: between transactions from here (an abort in -C's disconnect or
        // the run's end leaves nothing of it uncounted).
        self.phase = Phase::Choose;
        if ctx.plan.settings.reconnect {
            let start = self.now();
            self.detach();
            self.record.connection_time(start, self.now());
        }
        if self.is_done() {
            return Ok(Some(Wait::Done));
        }
        Ok(None)
    }

    /// The end-of-transaction check: no transaction block may stay open.
    fn end_of_transaction(&self) -> Result<(), ClientAbort> {
        match self.conn.as_ref().map(Connection::transaction_status) {
            Some(TransactionStatus::Idle) => Ok(()),
            Some(TransactionStatus::InTransaction) => Err(ClientAbort::new(
                self.id,
                AbortReason::Other("end of script reached without completing the last transaction"),
            )),
            _ => Err(ClientAbort::new(
                self.id,
                AbortReason::LostTransactionStatus,
            )),
        }
    }

    /// Runs the transaction's commands from the current one, following `\if`
    /// branches, until one waits (`Some`) or the script ends (`None`).
    fn run_commands(&mut self) -> Result<Option<Wait>, TxError> {
        let ctx = self.ctx;
        let script = self.tx.script;
        let commands = &ctx.scripts[script].script.commands;
        let roles = &ctx.scripts[script].roles;
        while let Some(command) = commands.get(self.tx.index) {
            let index = self.tx.index;
            let role = roles[index];
            // pgbench times a command only when it is reached in a running branch
            // (under -r: only then does the recorder keep the counters).
            let timed = self.record.times_commands() && self.tx.cond.active();
            self.tx.command_start = timed.then(|| ctx.control.clock.now_us());
            let flow = match &command.kind {
                CommandKind::Meta(meta) => {
                    let effect = self.tx.cond.effect(role);
                    // pgbench announces what reaches its START_COMMAND state: all in a
                    // running branch, and an \elif whose condition gets evaluated.
                    if self.tx.cond.active() || effect == Effect::Evaluate {
                        let id = self.id;
                        self.debug(|| {
                            format!(
                                "client {id} executing \\{}",
                                meta::meta_argv(meta, &command.first_line)
                            )
                        });
                    }
                    match effect {
                        Effect::Skip => {
                            self.tx.index += 1;
                            continue;
                        }
                        Effect::Evaluate => {
                            let v = self.eval(script, index, meta.name())?;
                            self.tx.cond.apply(role, v.truth());
                            Flow::Next
                        }
                        Effect::Apply => {
                            self.tx.cond.apply(role, false);
                            Flow::Next
                        }
                        Effect::Execute => self.run_meta(meta, script, index)?,
                    }
                }
                CommandKind::Sql(sql) => {
                    if !self.tx.cond.active() {
                        self.tx.index += 1;
                        continue;
                    }
                    self.run_sql(sql, script, index)?
                }
            };
            match flow {
                Flow::Next => {
                    self.command_done();
                    // a conditional that leaves its branch not running: on to the
                    // next branch of its \if, past the commands it would skip
                    if role != Role::Other && !self.tx.cond.active() {
                        self.tx.index = ctx.scripts[script].branch_jumps[index];
                    }
                }
                Flow::Wait(phase, wait) => {
                    self.phase = phase;
                    return Ok(Some(wait));
                }
            }
        }
        if self.in_pipeline() {
            return Err(self
                .abort(AbortReason::Other(
                    "end of script reached with pipeline open",
                ))
                .into());
        }
        Ok(None)
    }

    /// CSTATE_END_COMMAND: the `-r` time of the command, and on to the next. Inlined
    /// (it ends every command; out of line its call cost more than its work), with
    /// the `-r` timing out of line.
    #[inline(always)]
    fn command_done(&mut self) {
        if let Some(start) = self.tx.command_start {
            self.command_timed(start);
        }
        self.tx.index += 1;
    }

    /// `-r`: the command's time to the recorder.
    #[inline(never)]
    fn command_timed(&mut self, start: i64) {
        let (script, index) = (self.tx.script, self.tx.index);
        self.record.command_time(script, index, start, self.now());
    }

    /// The replies to the transaction's SQL command arrived: reads them.
    #[inline]
    fn resume_results(&mut self) -> Result<(), TxError> {
        let (script, index) = (self.tx.script, self.tx.index);
        let CommandKind::Sql(sql) = &self.ctx.scripts[script].script.commands[index].kind else {
            unreachable!("only an SQL command awaits results");
        };
        self.read_results(sql, script, index)?;
        self.command_done();
        Ok(())
    }

    /// Evaluates the expression of command `index` (a `\set`, `\if` or `\elif`),
    /// in the form compiled for it at the start.
    fn eval(
        &mut self,
        script: usize,
        index: usize,
        what: &'static str,
    ) -> Result<pgbench_script::ast::Value, TxError> {
        let Some(expr) = &self.ctx.scripts[script].compiled[index] else {
            unreachable!("only \\set, \\if and \\elif are evaluated");
        };
        let mut stderr = std::io::stderr();
        let mut ctx = EvalContext {
            vars: &mut self.vars,
            rng: &mut self.rng,
            script_index: script,
            command_index: index + 1,
            debug_out: &mut stderr,
        };
        match expr.evaluate(&mut ctx) {
            Ok(v) => Ok(v),
            Err(e) => Err(self.eval_failed(script, index, what, &e)),
        }
    }

    /// An evaluation failed: pgbench's abort, with the reason unless it is silent.
    /// Out of line, so that the evaluations that succeed carry none of it.
    #[cold]
    #[inline(never)]
    fn eval_failed(
        &self,
        script: usize,
        index: usize,
        what: &'static str,
        e: &EvalError,
    ) -> TxError {
        let abort = self.command_failed(script, index, what, "evaluation of meta-command failed");
        TxError::from(if e.is_silent() {
            abort
        } else {
            abort.because(e.to_string())
        })
    }
}
