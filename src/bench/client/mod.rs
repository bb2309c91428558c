//! One client: its own OS thread and blocking connection, running transactions until
//! `-t` or `-T` says stop. Mirrors pgbench.c `advanceConnectionState` (choose a script,
//! throttle, run its commands, retry serialization and deadlock failures, end the
//! transaction), with the same messages for every way a client can fail.
//!
//! A client sends what it measures to the stats thread in batches, writes its `-l`
//! lines through its thread's log, and keeps its `-r` counters to hand over at the end.

mod meta;
mod sql;

use super::conditional::{CondStack, Effect};
use super::stats::{CommandStats, TxOutcome};
use super::txlog::LoggedTx;
use super::{now_us, Shared, StatsMsg, ThreadShared, TxRecord};
use crate::logging;
use pgbench_script::ast::{CommandKind, MetaCommand};
use pgbench_script::eval::{evaluate, EvalContext};
use pgbench_script::prng::{choose_script, Prng};
use pgbench_script::variables::Variables;
use pgbench_wire::{Connection, ResultStatus, TransactionStatus};
use std::time::Duration;

/// How many records a client keeps before sending them to the stats thread, and how
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

/// Why a transaction stopped before its end.
enum TxError {
    /// A serialization or deadlock failure at this command index.
    Retry(Retryable, usize),
    /// The client is aborted; the message was printed.
    Abort,
}

/// What the client's last transaction did.
enum TxEnd {
    Outcome(TxOutcome),
    /// `-T` expired while handling an error: stop without counting it.
    Finished,
}

/// How a client's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientExit {
    Finished,
    Aborted,
}

/// One client.
pub struct Client<'a> {
    pub id: usize,
    shared: &'a Shared,
    thread: &'a ThreadShared,
    vars: Variables,
    rng: Prng,
    conn: Option<Connection>,
    /// Commands prepared on this connection, per script (`-M prepared`).
    prepared: Vec<Vec<bool>>,
    /// Transactions counted so far (successful, failed, skipped): `st->cnt`.
    cnt: i64,
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
        id: usize,
        shared: &'a Shared,
        thread: &'a ThreadShared,
        vars: Variables,
        rng: Prng,
    ) -> Client<'a> {
        let commands = shared
            .scripts
            .iter()
            .map(|s| vec![CommandStats::default(); s.script.commands.len()])
            .collect();
        Client {
            id,
            shared,
            thread,
            vars,
            rng,
            conn: None,
            prepared: shared
                .scripts
                .iter()
                .map(|s| vec![false; s.script.commands.len()])
                .collect(),
            cnt: 0,
            commands,
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
    pub fn connect_initial(&mut self) -> Result<(), String> {
        match Connection::connect(&self.shared.conn_opts) {
            Ok(c) => {
                self.conn = Some(c);
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// Counters for the final report.
    pub fn into_results(self) -> (Vec<Vec<CommandStats>>, f64) {
        (self.commands, self.conn_duration_us)
    }

    fn debug(&self, msg: impl FnOnce() -> String) {
        if self.shared.debug {
            logging::info(&msg());
        }
    }

    /// Runs transactions until done; the stats thread gets everything measured.
    pub fn run(&mut self) -> ClientExit {
        let exit = self.run_transactions();
        self.flush_batch();
        if let Some(conn) = self.conn.take() {
            drop(conn);
        }
        exit
    }

    fn run_transactions(&mut self) -> ClientExit {
        let sh = self.shared;
        loop {
            if sh.nxacts <= 0 && sh.timer_exceeded() {
                return ClientExit::Finished;
            }
            // CSTATE_CHOOSE_SCRIPT
            let script = if sh.scripts.len() == 1 {
                0
            } else {
                let mut t = self.thread.lock();
                choose_script(&mut t.choose_rng, &sh.weights)
            };
            self.debug(|| {
                format!(
                    "client {} executing script \"{}\"",
                    self.id, sh.scripts[script].script.desc
                )
            });
            // CSTATE_PREPARE_THROTTLE / CSTATE_THROTTLE
            let mut scheduled = None;
            if sh.throttle_delay > 0.0 {
                loop {
                    let trigger = {
                        let mut t = self.thread.lock();
                        let wait = t.throttle_rng.poisson(sh.throttle_delay);
                        t.throttle_trigger += wait;
                        t.throttle_trigger
                    };
                    if sh.latency_limit > 0 {
                        let now = now_us();
                        if trigger < now - sh.latency_limit
                            && (sh.nxacts <= 0 || self.cnt < sh.nxacts)
                        {
                            self.end_transaction(script, TxOutcome::Skipped, 0.0, 0.0, 1, now);
                            if sh.nxacts > 0 && self.cnt >= sh.nxacts {
                                return ClientExit::Finished;
                            }
                            continue;
                        }
                    }
                    if sh.duration > 0 && trigger > sh.end_time_us() {
                        return ClientExit::Finished;
                    }
                    scheduled = Some(trigger);
                    break;
                }
                let target = scheduled.unwrap_or(0);
                self.flush_batch_if_waiting(target);
                sleep_until(target);
                if sh.timer_exceeded() {
                    return ClientExit::Finished;
                }
            }
            // CSTATE_START_TX
            if self.conn.is_none() {
                let start = now_us();
                match Connection::connect(&sh.conn_opts) {
                    Ok(c) => self.conn = Some(c),
                    Err(e) => {
                        logging::error(&e.to_string());
                        logging::error(&format!(
                            "client {} aborted while establishing connection",
                            self.id
                        ));
                        return ClientExit::Aborted;
                    }
                }
                self.conn_duration_us += (now_us() - start) as f64;
                self.prepared.iter_mut().flatten().for_each(|p| *p = false);
            }
            let txn_begin = now_us();
            let txn_scheduled = scheduled.unwrap_or(txn_begin);
            let random_state = self.rng.clone();
            let mut tries: u32 = 1;
            let end = loop {
                match self.run_script(script) {
                    Ok(()) => break TxEnd::Outcome(TxOutcome::Success),
                    Err(TxError::Abort) => return ClientExit::Aborted,
                    Err(TxError::Retry(kind, command)) => {
                        // CSTATE_ERROR
                        match self.recover_after_error() {
                            Ok(()) => {}
                            Err(()) => return ClientExit::Aborted,
                        }
                        if sh.timer_exceeded() {
                            break TxEnd::Finished;
                        }
                        if self.can_retry(tries, txn_scheduled) {
                            if sh.verbose_errors {
                                self.verbose_try_message(true, tries, txn_scheduled);
                            }
                            tries += 1;
                            self.commands[script][command].retries += 1;
                            self.rng = random_state.clone();
                            continue;
                        }
                        self.commands[script][command].failures += 1;
                        if sh.verbose_errors {
                            self.verbose_try_message(false, tries, txn_scheduled);
                        }
                        break TxEnd::Outcome(match kind {
                            Retryable::Serialization => TxOutcome::SerializationFailure,
                            Retryable::Deadlock => TxOutcome::DeadlockFailure,
                        });
                    }
                }
            };
            let outcome = match end {
                TxEnd::Finished => return ClientExit::Finished,
                TxEnd::Outcome(o) => o,
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
            self.end_transaction(script, outcome, latency, lag, tries, now);
            match self.conn.as_ref().map(Connection::transaction_status) {
                Some(TransactionStatus::Idle) => {}
                Some(TransactionStatus::InTransaction) => {
                    logging::error(&format!(
                        "client {} aborted: end of script reached without completing the last transaction",
                        self.id
                    ));
                    return ClientExit::Aborted;
                }
                _ => {
                    self.lost_transaction_status();
                    return ClientExit::Aborted;
                }
            }
            if sh.is_connect {
                let start = now_us();
                self.conn = None;
                self.conn_duration_us += (now_us() - start) as f64;
            }
            if (sh.duration <= 0 && self.cnt >= sh.nxacts) || sh.timer_exceeded() {
                return ClientExit::Finished;
            }
        }
    }

    /// `doRetry`.
    fn can_retry(&self, tries: u32, txn_scheduled: i64) -> bool {
        let sh = self.shared;
        if sh.max_tries != 0 && tries >= sh.max_tries {
            return false;
        }
        if sh.latency_limit > 0 && now_us() - txn_scheduled > sh.latency_limit {
            return false;
        }
        !sh.timer_exceeded()
    }

    fn verbose_try_message(&self, is_retry: bool, tries: u32, txn_scheduled: i64) {
        let sh = self.shared;
        let mut msg = format!(
            "client {} {} (try {tries}",
            self.id,
            if is_retry {
                "repeats the transaction after the error"
            } else {
                "ends the failed transaction"
            }
        );
        if sh.max_tries != 0 {
            msg.push_str(&format!("/{}", sh.max_tries));
        }
        if sh.latency_limit > 0 {
            let used = 100.0 * (now_us() - txn_scheduled) as f64 / sh.latency_limit as f64;
            msg.push_str(&format!(
                ", {}% of the maximum time of tries was used",
                super::report::fmt_f(used, 3)
            ));
        }
        msg.push_str(")\n");
        logging::info(&msg);
    }

    /// CSTATE_ERROR: leave pipeline mode, roll back an open transaction block.
    fn recover_after_error(&mut self) -> Result<(), ()> {
        let id = self.id;
        let conn = self.conn.as_mut().ok_or(())?;
        if conn.pipeline_status() != pgbench_wire::PipelineStatus::Off {
            // discardUntilSync: one more sync, then read up to the last one.
            if conn.pipeline_sync().is_err() {
                logging::error(&format!(
                    "client {id} aborted: failed to send a pipeline sync"
                ));
                return Err(());
            }
            let mut syncs_left = self.pending_syncs + 1;
            self.pending_syncs = 0;
            while syncs_left > 0 {
                match conn.get_result() {
                    Ok(Some(ResultStatus::PipelineSync)) => syncs_left -= 1,
                    Ok(_) => {}
                    Err(_) => {
                        logging::error(&format!(
                            "client {id} aborted while rolling back the transaction after an error; perhaps the backend died while processing"
                        ));
                        return Err(());
                    }
                }
            }
            while let Ok(Some(_)) = conn.get_result() {}
            if conn.exit_pipeline_mode().is_err() {
                logging::error(&format!(
                    "client {id} aborted: failed to exit pipeline mode for rolling back the failed transaction"
                ));
                return Err(());
            }
        }
        match conn.transaction_status() {
            TransactionStatus::InTransaction | TransactionStatus::InError => {
                if conn.send_query("ROLLBACK").is_err() {
                    logging::error(&format!(
                        "client {id} aborted: failed to send sql command for rolling back the failed transaction"
                    ));
                    return Err(());
                }
                loop {
                    match conn.get_result() {
                        Ok(None) => break,
                        Ok(Some(ResultStatus::CommandOk)) => {}
                        Ok(Some(ResultStatus::Error(e))) => {
                            logging::error(&format!(
                                "client {id} aborted while rolling back the transaction after an error; {e}"
                            ));
                            return Err(());
                        }
                        Ok(Some(_)) => {}
                        Err(_) => {
                            logging::error(&format!(
                                "client {id} aborted while rolling back the transaction after an error; perhaps the backend died while processing"
                            ));
                            return Err(());
                        }
                    }
                }
                Ok(())
            }
            TransactionStatus::Idle => Ok(()),
            _ => {
                self.lost_transaction_status();
                Err(())
            }
        }
    }

    /// pgbench's messages when the connection cannot say its transaction status.
    fn lost_transaction_status(&self) {
        logging::error("perhaps the backend died while processing");
        logging::error(&format!(
            "client {} aborted while receiving the transaction status",
            self.id
        ));
    }

    /// Counts a finished transaction (`processXactStats`) and logs it.
    fn end_transaction(
        &mut self,
        script: usize,
        outcome: TxOutcome,
        latency: f64,
        lag: f64,
        tries: u32,
        now: i64,
    ) {
        self.cnt += 1;
        if self.batch.is_empty() {
            self.batch_since = now;
        }
        self.batch.push(TxRecord {
            script: script as u32,
            outcome,
            latency,
            lag,
            tries,
        });
        if self.shared.use_log {
            let tx = LoggedTx {
                client_id: self.id,
                tx_no: self.cnt,
                script,
                outcome,
                latency,
                lag,
                tries,
                now_epoch_us: now + self.shared.epoch_shift_us,
            };
            let mut t = self.thread.lock();
            if let Some(log) = t.log.as_mut() {
                if let Err(e) = log.log(&tx) {
                    logging::error(&format!("could not write to log file: {e}"));
                }
            }
        }
        if self.batch.len() >= BATCH_RECORDS || now - self.batch_since >= BATCH_MAX_AGE_US {
            self.flush_batch();
        }
    }

    fn flush_batch(&mut self) {
        if !self.batch.is_empty() {
            let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_RECORDS));
            let _ = self.shared.stats_tx.send(StatsMsg::Batch(batch));
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
        let sh = self.shared;
        let mut cond = CondStack::default();
        let commands = &sh.scripts[script].script.commands;
        for (index, command) in commands.iter().enumerate() {
            // pgbench times a command only when it is reached in a running branch.
            let timed = sh.report_per_command && cond.active();
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
        if let Some(conn) = self.conn.as_ref() {
            if conn.pipeline_status() != pgbench_wire::PipelineStatus::Off {
                logging::error(&format!(
                    "client {} aborted: end of script reached with pipeline open",
                    self.id
                ));
                return Err(TxError::Abort);
            }
        }
        Ok(())
    }

    /// The connection broke while a command waited for its result.
    fn backend_died(&self, script: usize, index: usize) -> TxError {
        self.command_failed(
            script,
            index,
            "SQL",
            "perhaps the backend died while processing",
        )
    }

    fn command_failed(&self, script: usize, index: usize, what: &str, msg: &str) -> TxError {
        logging::error(&format!(
            "client {} aborted in command {index} ({what}) of script {script}; {msg}",
            self.id
        ));
        TxError::Abort
    }

    fn eval(
        &mut self,
        expr: &pgbench_script::ast::Expr,
        script: usize,
        index: usize,
        what: &str,
    ) -> Result<pgbench_script::ast::Value, TxError> {
        let mut stderr = std::io::stderr();
        let mut ctx = EvalContext {
            vars: &mut self.vars,
            rng: &mut self.rng,
            script_index: script,
            command_index: index + 1,
            debug_out: &mut stderr,
        };
        match evaluate(expr, &mut ctx) {
            Ok(v) => Ok(v),
            Err(e) => {
                if !e.is_silent() {
                    logging::error(&e.to_string());
                }
                Err(self.command_failed(script, index, what, "evaluation of meta-command failed"))
            }
        }
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
