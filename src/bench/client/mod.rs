//! One client: its own OS thread and blocking connection, running transactions until
//! `-t` or `-T` says stop. Mirrors pgbench.c `advanceConnectionState` (choose a script,
//! throttle, run its commands, retry serialization and deadlock failures, end the
//! transaction). The decisions are pure ([`super::throttle`], [`super::retry`],
//! [`super::conditional`]); what is left here is the order of the steps and the I/O.
//!
//! A client sends what it measures to the collector in batches, writes its `-l` lines
//! through its thread's log, keeps its `-r` counters to hand over at the end, and
//! returns a [`ClientAbort`] when it stops for good.

mod meta;
mod sql;

use super::clock::now_us;
use super::conditional::{CondStack, Effect};
use super::error::{AbortReason, ClientAbort};
use super::events::{ClientDone, Event, TxRecord};
use super::launch::{Context, ThreadShared};
use super::throttle::Slot;
use super::txlog::LoggedTx;
use crate::logging;
use pgbench_results::{CommandStats, Limit, TxOutcome};
use pgbench_script::ast::{CommandKind, MetaCommand};
use pgbench_script::eval::{evaluate, EvalContext};
use pgbench_script::prng::{choose_script, Prng};
use pgbench_script::variables::Variables;
use pgbench_wire::{Connection, TransactionStatus};
use std::time::Duration;

/// How many records a client keeps before sending them to the collector, and how
/// long at most (µs), so that progress reports see fresh figures. Batches are small
/// because up to two poll periods of them wait in the channel: 256-record batches
/// (8 KiB each) put a 256-client run's peak RSS at 40-46 MiB, 64-record ones at 20-29.
const BATCH_RECORDS: usize = 64;
const BATCH_MAX_AGE_US: i64 = 10_000;

/// The retryable error classes (pgbench's `EStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retryable {
    Serialization,
    Deadlock,
}

/// Why a transaction stopped before its end. Kept small (the abort is boxed): every
/// command of every transaction returns one of these through the hot path.
enum TxError {
    /// A serialization or deadlock failure at this command index.
    Retry(Retryable, usize),
    /// The client stops for good.
    Abort(Box<ClientAbort>),
}

impl From<ClientAbort> for TxError {
    fn from(a: ClientAbort) -> TxError {
        TxError::Abort(Box::new(a))
    }
}

/// What the client does after choosing a script and waiting for its slot.
enum Next {
    Run {
        script: usize,
        scheduled: Option<i64>,
    },
    /// The run is over for this client.
    Finish,
}

/// The one way to reach the connection while a transaction runs: clients run
/// commands only after connecting, so a missing connection is a bug here.
#[inline]
fn connected(conn: &mut Option<Connection>) -> &mut Connection {
    conn.as_mut()
        .expect("a client runs commands only while connected")
}

/// One client.
pub struct Client<'a> {
    /// pgbench's client number: `client_id`, messages, log lines.
    pub id: usize,
    /// This process's index of the client (its slot in [`super::control::RunControl`]);
    /// equal to `id` unless `--worker` offsets the numbers.
    slot: usize,
    ctx: &'a Context,
    thread: &'a ThreadShared,
    vars: Variables,
    rng: Prng,
    conn: Option<Connection>,
    /// Commands prepared on this connection, per script (`-M prepared`).
    prepared: Vec<Vec<bool>>,
    /// Transactions counted so far (successful, failed, skipped): pgbench's `st->cnt`.
    counted: i64,
    /// `-r` counters per script and command.
    commands: Vec<Vec<CommandStats>>,
    batch: Vec<TxRecord>,
    batch_since: i64,
    /// Time spent in `-C` connects and disconnects, µs.
    conn_duration_us: f64,
    /// Reused buffers for SQL text and parameters.
    sql_buf: String,
    param_buf: String,
    param_ends: Vec<Option<usize>>,
    /// Syncs sent with `\syncpipeline` not yet read.
    pending_syncs: usize,
}

impl<'a> Client<'a> {
    pub fn new(
        (slot, id): (usize, usize),
        ctx: &'a Context,
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
            slot,
            ctx,
            thread,
            vars,
            rng,
            conn: None,
            prepared: per_command(false),
            counted: 0,
            commands: ctx
                .scripts
                .iter()
                .map(|s| vec![CommandStats::default(); s.script.commands.len()])
                .collect(),
            batch: Vec::with_capacity(BATCH_RECORDS),
            batch_since: 0,
            conn_duration_us: 0.0,
            sql_buf: String::with_capacity(256),
            param_buf: String::with_capacity(128),
            param_ends: Vec::new(),
            pending_syncs: 0,
        }
    }

    /// Makes the initial connection (not under `-C`).
    pub fn connect_initial(&mut self) -> Result<(), pgbench_wire::ConnError> {
        let conn = Connection::connect(&self.ctx.conn_opts)?;
        self.attach(conn);
        Ok(())
    }

    /// Takes a new connection, cancellable by the run's stop.
    fn attach(&mut self, conn: Connection) {
        use std::os::fd::AsRawFd;
        self.ctx
            .control
            .register(self.slot, conn.cancel_token(), conn.as_raw_fd());
        self.conn = Some(conn);
    }

    /// Drops the connection (saying goodbye), after the stopper let go of it.
    fn detach(&mut self) {
        self.ctx.control.unregister(self.slot);
        self.conn = None;
    }

    fn debug(&self, msg: impl FnOnce() -> String) {
        if self.ctx.plan.debug {
            logging::info(&msg());
        }
    }

    /// Runs transactions until done, then tells the collector everything it measured
    /// (an abort first, if it aborted).
    pub fn run(mut self) {
        let outcome = self.run_transactions();
        self.flush_batch();
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
        let _ = events.send(Event::Done(ClientDone {
            commands: self.commands,
            conn_duration_us: self.conn_duration_us,
            end_us: now_us(),
            unfinished,
        }));
    }

    fn run_transactions(&mut self) -> Result<(), ClientAbort> {
        let ctx = self.ctx;
        loop {
            if ctx.plan.settings.limit.duration().is_some() && ctx.control.clock.timer_exceeded() {
                return Ok(());
            }
            let (script, scheduled) = match self.next_transaction() {
                Next::Run { script, scheduled } => (script, scheduled),
                Next::Finish => return Ok(()),
            };
            // CSTATE_START_TX
            if self.conn.is_none() {
                self.reconnect()?;
            }
            if self.run_with_retries(script, scheduled)?.is_none() {
                return Ok(());
            }
            self.end_of_transaction()?;
            if ctx.plan.settings.reconnect {
                let start = now_us();
                self.detach();
                self.conn_duration_us += (now_us() - start) as f64;
            }
            if self.is_done() {
                return Ok(());
            }
        }
    }

    /// `-t` counted or `-T` over.
    fn is_done(&self) -> bool {
        match self.ctx.plan.settings.limit {
            Limit::Transactions(n) => {
                self.counted >= i64::from(n) || self.ctx.control.clock.timer_exceeded()
            }
            Limit::Duration(_) => self.ctx.control.clock.timer_exceeded(),
        }
    }

    /// CSTATE_CHOOSE_SCRIPT, then under `-R` CSTATE_PREPARE_THROTTLE / CSTATE_THROTTLE.
    fn next_transaction(&mut self) -> Next {
        let ctx = self.ctx;
        let script = if ctx.scripts.len() == 1 {
            0
        } else {
            let mut t = self.thread.lock();
            choose_script(&mut t.choose_rng, &ctx.weights)
        };
        self.debug(|| {
            format!(
                "client {} executing script \"{}\"",
                self.id, ctx.scripts[script].script.desc
            )
        });
        let Some(schedule) = ctx.throttle_schedule() else {
            return Next::Run {
                script,
                scheduled: None,
            };
        };
        let limit = ctx.plan.settings.limit.transactions();
        loop {
            let may_skip = limit.is_none_or(|n| self.counted < i64::from(n));
            let slot = {
                let mut t = self.thread.lock();
                let st = &mut *t;
                schedule.next(
                    &mut st.throttle_trigger,
                    &mut st.throttle_rng,
                    now_us,
                    may_skip,
                )
            };
            match slot {
                Slot::Skip => {
                    self.count_transaction(script, TxOutcome::Skipped, 0.0, 0.0, 1, now_us());
                    if limit.is_some_and(|n| self.counted >= i64::from(n)) {
                        return Next::Finish;
                    }
                }
                Slot::End => return Next::Finish,
                Slot::Run(at) => {
                    self.flush_batch_if_waiting(at);
                    sleep_until(at);
                    if ctx.control.clock.timer_exceeded() {
                        return Next::Finish;
                    }
                    return Next::Run {
                        script,
                        scheduled: Some(at),
                    };
                }
            }
        }
    }

    /// `-C` (or after a lost connection): a new connection, timed.
    fn reconnect(&mut self) -> Result<(), ClientAbort> {
        let start = now_us();
        match Connection::connect(&self.ctx.conn_opts) {
            Ok(c) => self.attach(c),
            Err(e) => {
                return Err(ClientAbort::new(self.id, AbortReason::Connect).because(e.to_string()))
            }
        }
        self.conn_duration_us += (now_us() - start) as f64;
        self.prepared.iter_mut().flatten().for_each(|p| *p = false);
        Ok(())
    }

    /// Runs the script, retrying serialization and deadlock failures as `--max-tries`,
    /// `-L` and `-T` allow; counts the transaction. `None`: `-T` expired while
    /// handling an error, so it is not counted.
    fn run_with_retries(
        &mut self,
        script: usize,
        scheduled: Option<i64>,
    ) -> Result<Option<TxOutcome>, ClientAbort> {
        let ctx = self.ctx;
        let txn_begin = now_us();
        let txn_scheduled = scheduled.unwrap_or(txn_begin);
        let random_state = self.rng.clone();
        let mut tries: u32 = 1;
        let outcome = loop {
            let (kind, command) = match self.run_script(script) {
                Ok(()) => break TxOutcome::Success,
                Err(TxError::Abort(a)) => return Err(*a),
                Err(TxError::Retry(kind, command)) => (kind, command),
            };
            // CSTATE_ERROR
            self.recover_after_error()?;
            if ctx.control.clock.timer_exceeded() {
                return Ok(None);
            }
            let elapsed = || now_us() - txn_scheduled;
            if ctx
                .retry
                .can_retry(tries, elapsed, || ctx.control.clock.timer_exceeded())
            {
                if ctx.plan.verbose_errors {
                    self.verbose_try_message(true, tries, txn_scheduled);
                }
                tries += 1;
                self.commands[script][command].retries += 1;
                self.rng = random_state.clone();
                continue;
            }
            self.commands[script][command].failures += 1;
            if ctx.plan.verbose_errors {
                self.verbose_try_message(false, tries, txn_scheduled);
            }
            break match kind {
                Retryable::Serialization => TxOutcome::SerializationFailure,
                Retryable::Deadlock => TxOutcome::DeadlockFailure,
            };
        };
        // CSTATE_END_TX
        let now = now_us();
        let (latency, lag) = if outcome == TxOutcome::Success {
            (
                (now - txn_scheduled) as f64,
                (txn_begin - txn_scheduled) as f64,
            )
        } else {
            (0.0, 0.0)
        };
        self.count_transaction(script, outcome, latency, lag, tries, now);
        Ok(Some(outcome))
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

    fn verbose_try_message(&self, is_retry: bool, tries: u32, txn_scheduled: i64) {
        let settings = &self.ctx.plan.settings;
        let mut msg = format!(
            "client {} {} (try {tries}",
            self.id,
            if is_retry {
                "repeats the transaction after the error"
            } else {
                "ends the failed transaction"
            }
        );
        if let pgbench_results::MaxTries::Limited(n) = settings.max_tries {
            msg.push_str(&format!("/{n}"));
        }
        if let Some(limit) = settings.latency_limit_us {
            let used = 100.0 * (now_us() - txn_scheduled) as f64 / limit as f64;
            msg.push_str(&format!(
                ", {}% of the maximum time of tries was used",
                pgbench_script::cnum::fmt_f(used, 3)
            ));
        }
        msg.push_str(")\n");
        logging::info(&msg);
    }

    /// Counts a finished transaction (`processXactStats`) and logs it.
    fn count_transaction(
        &mut self,
        script: usize,
        outcome: TxOutcome,
        latency: f64,
        lag: f64,
        tries: u32,
        now: i64,
    ) {
        self.counted += 1;
        if self.batch.is_empty() {
            self.batch_since = now;
        }
        self.batch.push(TxRecord {
            script: script as u32,
            outcome,
            latency,
            lag,
            tries,
            end_us: now,
        });
        if self.ctx.plan.log.is_some() {
            let tx = LoggedTx {
                client_id: self.id,
                tx_no: self.counted,
                script,
                outcome,
                latency,
                lag,
                tries,
                now_epoch_us: now + self.ctx.control.clock.epoch_shift_us,
            };
            let mut t = self.thread.lock();
            if let Some(message) = t.log.as_mut().and_then(|log| log.log(&tx)) {
                logging::error(&message);
            }
        }
        if self.batch.len() >= BATCH_RECORDS || now - self.batch_since >= BATCH_MAX_AGE_US {
            self.flush_batch();
        }
    }

    fn flush_batch(&mut self) {
        if !self.batch.is_empty() {
            let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_RECORDS));
            let _ = self.ctx.events.send(Event::Batch(batch));
        }
    }

    /// Before a wait longer than the batch age, hands over what is measured so far.
    fn flush_batch_if_waiting(&mut self, until: i64) {
        if until - now_us() > BATCH_MAX_AGE_US {
            self.flush_batch();
        }
    }

    /// Runs every command of a script once, following `\if` branches.
    fn run_script(&mut self, script: usize) -> Result<(), TxError> {
        let ctx = self.ctx;
        let mut cond = CondStack::default();
        let commands = &ctx.scripts[script].script.commands;
        for (index, command) in commands.iter().enumerate() {
            // pgbench times a command only when it is reached in a running branch.
            let timed = ctx.plan.settings.report_per_command && cond.active();
            let start = if timed { now_us() } else { 0 };
            match &command.kind {
                CommandKind::Meta(meta) => {
                    let effect = cond.effect(meta);
                    // pgbench announces what reaches its START_COMMAND state: all in a
                    // running branch, and an \elif whose condition gets evaluated.
                    if cond.active() || effect == Effect::Evaluate {
                        let id = self.id;
                        self.debug(|| {
                            format!(
                                "client {id} executing \\{}",
                                meta::meta_argv(meta, &command.first_line)
                            )
                        });
                    }
                    match effect {
                        Effect::Skip => continue,
                        Effect::Evaluate => {
                            let expr = match meta {
                                MetaCommand::If(e) | MetaCommand::Elif(e) => e,
                                _ => unreachable!("only \\if and \\elif are evaluated"),
                            };
                            let v = self.eval(expr, script, index, meta.name())?;
                            cond.apply(meta, v.truth());
                        }
                        Effect::Apply => cond.apply(meta, false),
                        Effect::Execute => self.run_meta(meta, script, index)?,
                    }
                }
                CommandKind::Sql(sql) => {
                    if !cond.active() {
                        continue;
                    }
                    self.run_sql(sql, script, index)?;
                }
            }
            if timed {
                let elapsed = (now_us() - start) as f64 / 1e6;
                self.commands[script][index].elapsed.add(elapsed);
            }
        }
        if self.in_pipeline() {
            return Err(self
                .abort(AbortReason::Other(
                    "end of script reached with pipeline open",
                ))
                .into());
        }
        Ok(())
    }

    /// Whether the connection is in pipeline mode.
    #[inline]
    fn in_pipeline(&self) -> bool {
        self.conn
            .as_ref()
            .is_some_and(|c| c.pipeline_status() != pgbench_wire::PipelineStatus::Off)
    }

    fn abort(&self, reason: AbortReason) -> ClientAbort {
        ClientAbort::new(self.id, reason)
    }

    /// `client N aborted in command C (KIND) of script S; MESSAGE`.
    fn command_failed(
        &self,
        script: usize,
        command: usize,
        kind: &'static str,
        message: &'static str,
    ) -> ClientAbort {
        self.abort(AbortReason::Command {
            script,
            command,
            kind,
            message,
        })
    }

    /// The connection broke while a command waited for its result.
    fn backend_died(&self, script: usize, index: usize) -> ClientAbort {
        self.command_failed(script, index, "SQL", super::error::BACKEND_DIED)
    }

    fn eval(
        &mut self,
        expr: &pgbench_script::ast::Expr,
        script: usize,
        index: usize,
        what: &'static str,
    ) -> Result<pgbench_script::ast::Value, TxError> {
        let mut stderr = std::io::stderr();
        let mut ctx = EvalContext {
            vars: &mut self.vars,
            rng: &mut self.rng,
            script_index: script,
            command_index: index + 1,
            debug_out: &mut stderr,
        };
        evaluate(expr, &mut ctx).map_err(|e| {
            let abort =
                self.command_failed(script, index, what, "evaluation of meta-command failed");
            TxError::from(if e.is_silent() {
                abort
            } else {
                abort.because(e.to_string())
            })
        })
    }
}

/// Sleeps until the run clock reaches `until_us`.
pub fn sleep_until(until_us: i64) {
    loop {
        let now = now_us();
        if now >= until_us {
            return;
        }
        std::thread::sleep(Duration::from_micros((until_us - now) as u64));
    }
}
