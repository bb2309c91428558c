//! One client: its own OS thread and blocking connection, running transactions until
//! `-t` or `-T` says stop. Mirrors pgbench.c `advanceConnectionState` (choose a script,
//! throttle, run its commands, retry serialization and deadlock failures, end the
//! transaction), with the same messages for every way a client can fail.
//!
//! A client sends what it measures to the stats thread in batches, writes its `-l`
//! lines through its thread's log, and keeps its `-r` counters to hand over at the end.

use super::conditional::{CondStack, Effect};
use super::stats::{CommandStats, TxOutcome};
use super::txlog::LoggedTx;
use super::{now_us, Shared, StatsMsg, ThreadShared, TxRecord};
use crate::cli::options::QueryMode;
use crate::logging;
use pgbench_script::ast::{CommandKind, MetaCommand, ResultTarget, ShellArg, SleepArg, SqlPiece};
use pgbench_script::eval::{evaluate, EvalContext};
use pgbench_script::prng::{choose_script, Prng};
use pgbench_script::variables::Variables;
use pgbench_wire::{Connection, ResultStatus, TransactionStatus};
use std::time::Duration;

/// How many records a client keeps before sending them to the stats thread, and how
/// long at most (µs), so that progress reports see fresh figures.
const BATCH_RECORDS: usize = 256;
const BATCH_MAX_AGE_US: i64 = 10_000;

/// pgbench's `SHELL_COMMAND_SIZE`.
const SHELL_COMMAND_SIZE: usize = 256;

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
                    logging::error("perhaps the backend died while processing");
                    logging::error(&format!(
                        "client {} aborted while receiving the transaction status",
                        self.id
                    ));
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
                logging::error("perhaps the backend died while processing");
                logging::error(&format!(
                    "client {id} aborted while receiving the transaction status"
                ));
                Err(())
            }
        }
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
                                meta_argv(meta, &command.first_line)
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

    fn run_meta(&mut self, meta: &MetaCommand, script: usize, index: usize) -> Result<(), TxError> {
        match meta {
            MetaCommand::Set { var, expr } => {
                let v = self.eval(expr, script, index, "set")?;
                if let Err(e) = self.vars.set_value("set", var, v) {
                    logging::error(&e.to_string());
                    return Err(self.command_failed(
                        script,
                        index,
                        "set",
                        "assignment of meta-command failed",
                    ));
                }
            }
            MetaCommand::Sleep { duration, unit_us } => {
                let amount = match duration {
                    SleepArg::Const(n) => *n,
                    SleepArg::Var(name) => {
                        let Some(var) = self.vars.get(name) else {
                            logging::error(&format!("sleep: undefined variable \"{name}\""));
                            return Err(self.command_failed(
                                script,
                                index,
                                "sleep",
                                "execution of meta-command failed",
                            ));
                        };
                        let mut text = String::new();
                        var.write_text(&mut text);
                        let n = i64::from(crate::c_numbers::atoi(&text));
                        if n == 0 && !text.starts_with(|c: char| c.is_ascii_digit()) {
                            logging::error(&format!(
                                "sleep: invalid sleep time \"{text}\" for variable \"{name}\""
                            ));
                            return Err(self.command_failed(
                                script,
                                index,
                                "sleep",
                                "execution of meta-command failed",
                            ));
                        }
                        n
                    }
                };
                let usec = amount.saturating_mul(*unit_us);
                if usec > 0 {
                    let until = now_us() + usec;
                    self.flush_batch_if_waiting(until);
                    sleep_until(until);
                }
            }
            MetaCommand::SetShell { var, command, args } => {
                self.run_shell(Some(var), command, args).map_err(|_| {
                    self.command_failed(
                        script,
                        index,
                        "setshell",
                        "execution of meta-command failed",
                    )
                })?;
            }
            MetaCommand::Shell { command, args } => {
                self.run_shell(None, command, args).map_err(|_| {
                    self.command_failed(script, index, "shell", "execution of meta-command failed")
                })?;
            }
            MetaCommand::If(_) | MetaCommand::Elif(_) | MetaCommand::Else | MetaCommand::Endif => {
                unreachable!("conditionals are handled by run_script")
            }
            MetaCommand::StartPipeline => {
                if self.shared.query_mode == QueryMode::Simple {
                    return Err(self.command_failed(
                        script,
                        index,
                        "startpipeline",
                        "cannot use pipeline mode with the simple query protocol",
                    ));
                }
                let in_pipeline = self
                    .conn
                    .as_ref()
                    .is_some_and(|c| c.pipeline_status() != pgbench_wire::PipelineStatus::Off);
                if in_pipeline {
                    return Err(self.command_failed(
                        script,
                        index,
                        "startpipeline",
                        "already in pipeline mode",
                    ));
                }
                if self.shared.query_mode == QueryMode::Prepared {
                    // prepareCommandsInPipeline: everything up to \endpipeline, now.
                    let commands = &self.shared.scripts[script].script.commands;
                    let end = commands[index..]
                        .iter()
                        .position(|c| matches!(c.kind, CommandKind::Meta(MetaCommand::EndPipeline)))
                        .map_or(commands.len(), |p| index + p);
                    self.prepare_commands(script, index + 1, end)?;
                }
                let conn = self.conn.as_mut().expect("connected");
                if conn.enter_pipeline_mode().is_err() {
                    return Err(self.command_failed(
                        script,
                        index,
                        "startpipeline",
                        "failed to enter pipeline mode",
                    ));
                }
                self.pending_syncs = 0;
            }
            MetaCommand::SyncPipeline | MetaCommand::EndPipeline => {
                let word = meta.name();
                let conn = self.conn.as_mut().expect("connected");
                if conn.pipeline_status() == pgbench_wire::PipelineStatus::Off {
                    return Err(self.command_failed(script, index, word, "not in pipeline mode"));
                }
                // \syncpipeline only queues a sync; \endpipeline sends one and reads.
                let sent = if matches!(meta, MetaCommand::SyncPipeline) {
                    conn.send_pipeline_sync()
                } else {
                    conn.pipeline_sync()
                };
                if sent.is_err() {
                    return Err(self.command_failed(
                        script,
                        index,
                        word,
                        "failed to send a pipeline sync",
                    ));
                }
                if matches!(meta, MetaCommand::SyncPipeline) {
                    self.pending_syncs += 1;
                    return Ok(());
                }
                let syncs = self.pending_syncs + 1;
                self.pending_syncs = 0;
                self.read_pipeline_results(script, index, syncs)?;
            }
        }
        Ok(())
    }

    /// `\endpipeline`: reads every pending result up to the last sync, then leaves
    /// pipeline mode.
    fn read_pipeline_results(
        &mut self,
        script: usize,
        index: usize,
        mut syncs: usize,
    ) -> Result<(), TxError> {
        let id = self.id;
        let mut qrynum = 0;
        while syncs > 0 {
            let conn = self.conn.as_mut().expect("connected");
            match conn.get_result() {
                Ok(Some(ResultStatus::PipelineSync)) => {
                    syncs -= 1;
                    if syncs == 0 {
                        self.debug(|| format!("client {id} pipeline ending"));
                    }
                }
                Ok(Some(
                    ResultStatus::CommandOk | ResultStatus::TuplesOk | ResultStatus::EmptyQuery,
                )) => qrynum += 1,
                Ok(None) => {}
                Ok(Some(ResultStatus::Error(e))) => {
                    self.pending_syncs = syncs - 1;
                    return Err(self.sql_error(&e, script, index, qrynum));
                }
                Ok(Some(other)) => {
                    let msg = unexpected_result_message(&other);
                    self.pending_syncs = syncs - 1;
                    logging::error(&format!(
                        "client {id} script {script} aborted in command {index} query {qrynum}: {msg}"
                    ));
                    return Err(TxError::Abort);
                }
                Err(_) => {
                    return Err(self.command_failed(
                        script,
                        index,
                        "SQL",
                        "perhaps the backend died while processing",
                    ))
                }
            }
        }
        let conn = self.conn.as_mut().expect("connected");
        if let Err(e) = conn.exit_pipeline_mode() {
            logging::error(&format!("client {id} failed to exit pipeline mode: {e}"));
        }
        Ok(())
    }

    /// Classifies a server error: retryable failures go back to the transaction loop,
    /// anything else aborts the client with pgbench's message.
    fn sql_error(
        &self,
        e: &pgbench_wire::DbError,
        script: usize,
        index: usize,
        qrynum: usize,
    ) -> TxError {
        let kind = match e.code() {
            "40001" => Some(Retryable::Serialization),
            "40P01" => Some(Retryable::Deadlock),
            _ => None,
        };
        match kind {
            Some(kind) => {
                if self.shared.verbose_errors {
                    logging::info(&format!(
                        "client {} got an error in command {index} (SQL) of script {script}; {e}",
                        self.id
                    ));
                }
                TxError::Retry(kind, index)
            }
            _ => {
                logging::error(&format!(
                    "client {} script {script} aborted in command {index} query {qrynum}: {e}",
                    self.id
                ));
                TxError::Abort
            }
        }
    }

    /// Prepares the SQL commands `from..to` of a script that are not prepared yet on
    /// this connection (`-M prepared`): one command at its first execution, or all of
    /// a pipeline at `\startpipeline`, as pgbench does. A failure is printed; the
    /// statement then fails when executed.
    fn prepare_commands(&mut self, script: usize, from: usize, to: usize) -> Result<(), TxError> {
        let sh = self.shared;
        let commands = &sh.scripts[script].script.commands;
        let to = to.min(commands.len());
        for (index, command) in commands.iter().enumerate().take(to).skip(from) {
            let CommandKind::Sql(sql) = &command.kind else {
                continue;
            };
            if self.prepared[script][index] {
                continue;
            }
            let name = &sh.scripts[script].prepared_names[index];
            if sh.debug {
                logging::info(&format!("client {} preparing {name}", self.id));
            }
            let text = &sh.scripts[script].parameterized[index];
            let nparams = sql.parameters().count();
            let conn = self.conn.as_mut().expect("connected");
            if conn.send_prepare(name, text, nparams).is_err() {
                return Err(self.command_failed(script, index, "SQL", "SQL command send failed"));
            }
            let conn = self.conn.as_mut().expect("connected");
            loop {
                match conn.get_result() {
                    Ok(None) => break,
                    Ok(Some(ResultStatus::Error(e))) => logging::error(&e.to_string()),
                    Ok(Some(_)) => {}
                    Err(_) => {
                        return Err(self.command_failed(
                            script,
                            index,
                            "SQL",
                            "perhaps the backend died while processing",
                        ))
                    }
                }
            }
            self.prepared[script][index] = true;
        }
        Ok(())
    }

    /// Sends an SQL command in the run's query mode and, outside a pipeline, reads its
    /// results (`sendCommand` + `readCommandResponse`).
    fn run_sql(
        &mut self,
        sql: &pgbench_script::ast::SqlCommand,
        script: usize,
        index: usize,
    ) -> Result<(), TxError> {
        let sh = self.shared;
        let id = self.id;
        let in_pipeline = self
            .conn
            .as_ref()
            .is_some_and(|c| c.pipeline_status() != pgbench_wire::PipelineStatus::Off);
        if in_pipeline {
            match sql.target {
                ResultTarget::Gset { .. } => {
                    return Err(self.command_failed(
                        script,
                        index,
                        "gset",
                        "\\gset is not allowed in pipeline mode",
                    ))
                }
                ResultTarget::Aset { .. } => {
                    return Err(self.command_failed(
                        script,
                        index,
                        "aset",
                        "\\aset is not allowed in pipeline mode",
                    ))
                }
                ResultTarget::Discard => {}
            }
        }
        if sh.query_mode == QueryMode::Prepared && !in_pipeline {
            self.prepare_commands(script, index, index + 1)?;
        }
        let sent = match sh.query_mode {
            QueryMode::Simple => {
                self.sql_buf.clear();
                for piece in &sql.pieces {
                    match piece {
                        SqlPiece::Text(t) => self.sql_buf.push_str(t),
                        SqlPiece::Var(name) => {
                            if !self.vars.write_text(name, &mut self.sql_buf) {
                                self.sql_buf.push(':');
                                self.sql_buf.push_str(name);
                            }
                        }
                    }
                }
                if sh.debug {
                    logging::info(&format!("client {id} sending {}", self.sql_buf));
                }
                let conn = self.conn.as_mut().expect("connected");
                conn.send_query(&self.sql_buf)
            }
            QueryMode::Extended | QueryMode::Prepared => {
                self.param_buf.clear();
                self.param_ends.clear();
                for name in sql.parameters() {
                    if self.vars.write_text(name, &mut self.param_buf) {
                        self.param_ends.push(Some(self.param_buf.len()));
                    } else {
                        // pgbench: an undefined variable is sent as NULL.
                        self.param_ends.push(None);
                    }
                }
                let mut params: Vec<Option<&[u8]>> = Vec::with_capacity(self.param_ends.len());
                let mut from = 0;
                for end in &self.param_ends {
                    match end {
                        Some(end) => {
                            params.push(Some(&self.param_buf.as_bytes()[from..*end]));
                            from = *end;
                        }
                        None => params.push(None),
                    }
                }
                let conn = self.conn.as_mut().expect("connected");
                if sh.query_mode == QueryMode::Extended {
                    let text = &sh.scripts[script].parameterized[index];
                    if sh.debug {
                        logging::info(&format!("client {id} sending {text}"));
                    }
                    conn.send_query_params(text, &params)
                } else {
                    let name = &sh.scripts[script].prepared_names[index];
                    if sh.debug {
                        logging::info(&format!("client {id} sending {name}"));
                    }
                    conn.send_query_prepared(name, &params)
                }
            }
        };
        if sent.is_err() {
            if sh.debug {
                logging::info(&format!("client {id} could not send {}", sql.text));
            }
            return Err(self.command_failed(script, index, "SQL", "SQL command send failed"));
        }
        if in_pipeline {
            return Ok(());
        }
        self.read_results(sql, script, index)
    }

    /// `readCommandResponse` outside pipeline mode.
    fn read_results(
        &mut self,
        sql: &pgbench_script::ast::SqlCommand,
        script: usize,
        index: usize,
    ) -> Result<(), TxError> {
        let id = self.id;
        if self.shared.debug {
            logging::info(&format!("client {id} receiving"));
        }
        let mut qrynum = 0;
        // For \gset: the row count and row of the latest result.
        let mut last_rows: Option<usize> = None;
        let mut gset_row: Vec<(String, String)> = Vec::new();
        let mut failure: Option<TxError> = None;
        loop {
            let conn = self.conn.as_mut().expect("connected");
            let res = match conn.get_result() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                // A FATAL error result, then the server closes: one abort message.
                Err(_) if failure.is_some() => break,
                Err(_) => {
                    return Err(self.command_failed(
                        script,
                        index,
                        "SQL",
                        "perhaps the backend died while processing",
                    ))
                }
            };
            if failure.is_some() {
                // Drain what follows the error.
                continue;
            }
            match res {
                ResultStatus::CommandOk | ResultStatus::EmptyQuery => {
                    last_rows = Some(0);
                }
                ResultStatus::TuplesOk => {
                    let ntuples = conn.ntuples();
                    last_rows = Some(ntuples);
                    match &sql.target {
                        ResultTarget::Gset { prefix } => {
                            gset_row.clear();
                            if ntuples == 1 {
                                for f in 0..conn.nfields() {
                                    let value = conn
                                        .last_row_value(f)
                                        .map(|v| String::from_utf8_lossy(v).into_owned())
                                        .unwrap_or_default();
                                    gset_row
                                        .push((format!("{prefix}{}", conn.field_name(f)), value));
                                }
                            }
                        }
                        ResultTarget::Aset { prefix } if ntuples > 0 => {
                            let mut row = Vec::with_capacity(conn.nfields());
                            for f in 0..conn.nfields() {
                                let value = conn
                                    .last_row_value(f)
                                    .map(|v| String::from_utf8_lossy(v).into_owned())
                                    .unwrap_or_default();
                                row.push((format!("{prefix}{}", conn.field_name(f)), value));
                            }
                            for (name, value) in row {
                                if let Err(e) = self.vars.set_text("aset", &name, &value) {
                                    logging::error(&e.to_string());
                                    logging::error(&format!(
                                        "client {id} script {script} command {index} query {qrynum}: error storing into variable {name}"
                                    ));
                                    failure = Some(TxError::Abort);
                                    break;
                                }
                            }
                        }
                        _ => {}
                    }
                }
                ResultStatus::Error(e) => {
                    failure = Some(self.sql_error(&e, script, index, qrynum));
                }
                ResultStatus::CopyIn | ResultStatus::CopyOut => {
                    logging::error("COPY is not supported in pgbench, aborting");
                    let conn = self.conn.as_mut().expect("connected");
                    let _ = conn.end_copy();
                    failure = Some(TxError::Abort);
                }
                other => {
                    logging::error(&format!(
                        "client {id} script {script} aborted in command {index} query {qrynum}: {}",
                        unexpected_result_message(&other)
                    ));
                    failure = Some(TxError::Abort);
                }
            }
            qrynum += 1;
        }
        if let Some(f) = failure {
            return Err(f);
        }
        if let ResultTarget::Gset { .. } = sql.target {
            let rows = last_rows.unwrap_or(0);
            if rows != 1 {
                logging::error(&format!(
                    "client {id} script {script} command {index} query {}: expected one row, got {rows}",
                    qrynum.saturating_sub(1)
                ));
                return Err(TxError::Abort);
            }
            for (name, value) in gset_row.drain(..) {
                if let Err(e) = self.vars.set_text("gset", &name, &value) {
                    logging::error(&e.to_string());
                    logging::error(&format!(
                        "client {id} script {script} command {index} query {}: error storing into variable {name}",
                        qrynum.saturating_sub(1)
                    ));
                    return Err(TxError::Abort);
                }
            }
        }
        if qrynum == 0 {
            logging::error(&format!("client {id} command {index}: no results"));
            return Err(TxError::Abort);
        }
        Ok(())
    }

    /// `runShellCommand`: `\shell` (no variable) or `\setshell` (store the integer).
    fn run_shell(&mut self, var: Option<&str>, command: &str, args: &[ShellArg]) -> Result<(), ()> {
        let word = command;
        let mut line = String::new();
        let mut parts: Vec<String> = Vec::with_capacity(args.len() + 1);
        // The command word follows the argument rules too.
        let first = if let Some(rest) = command.strip_prefix("::") {
            format!(":{rest}")
        } else if let Some(name) = command.strip_prefix(':') {
            match self.vars.get(name) {
                Some(v) => {
                    let mut s = String::new();
                    v.write_text(&mut s);
                    s
                }
                None => {
                    // pgbench quotes the argument as written, colon included.
                    logging::error(&format!("{word}: undefined variable \":{name}\""));
                    return Err(());
                }
            }
        } else {
            command.to_string()
        };
        parts.push(first);
        for arg in args {
            match arg {
                ShellArg::Literal(s) => parts.push(s.clone()),
                ShellArg::Var(name) => match self.vars.get(name) {
                    Some(v) => {
                        let mut s = String::new();
                        v.write_text(&mut s);
                        parts.push(s);
                    }
                    None => {
                        logging::error(&format!("{word}: undefined variable \":{name}\""));
                        return Err(());
                    }
                },
            }
        }
        for (i, p) in parts.iter().enumerate() {
            if line.len() + p.len() + usize::from(i > 0) >= SHELL_COMMAND_SIZE - 1 {
                logging::error(&format!("{word}: shell command is too long"));
                return Err(());
            }
            if i > 0 {
                line.push(' ');
            }
            line.push_str(p);
        }
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let Some(var) = var else {
            let status = shell_command(&line).status();
            return match status {
                Ok(s) if s.success() => Ok(()),
                _ => {
                    if !self.shared.timer_exceeded() {
                        logging::error(&format!("{word}: could not launch shell command"));
                    }
                    Err(())
                }
            };
        };
        let output = match shell_command(&line)
            .stderr(std::process::Stdio::inherit())
            .output()
        {
            Ok(o) => o,
            Err(_) => {
                logging::error(&format!("{word}: could not launch shell command"));
                return Err(());
            }
        };
        let out = String::from_utf8_lossy(&output.stdout);
        // fgets: the first line, at most 63 bytes.
        let mut res: String = match out.find('\n') {
            Some(i) => out[..=i].to_string(),
            None => out.to_string(),
        };
        if res.len() > 63 {
            let mut cut = 63;
            while !res.is_char_boundary(cut) {
                cut -= 1;
            }
            res.truncate(cut);
        }
        if res.is_empty() {
            if !self.shared.timer_exceeded() {
                logging::error(&format!("{word}: could not read result of shell command"));
            }
            return Err(());
        }
        let trimmed_start = res.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let (num, rest) = crate::c_numbers::strtol_prefix(trimmed_start);
        // Without digits strtol leaves its end at the start: a blank line passes as 0.
        let rest = if num.is_some() { rest } else { res.as_str() };
        let valid = rest
            .trim_matches(|c: char| c.is_ascii_whitespace())
            .is_empty();
        if !valid {
            logging::error(&format!(
                "{word}: shell command must return an integer (not \"{res}\")"
            ));
            return Err(());
        }
        // pgbench keeps the value as a C int.
        let value = num.unwrap_or(0) as i32;
        if let Err(e) = self.vars.set_int("setshell", var, i64::from(value)) {
            logging::error(&e.to_string());
            return Err(());
        }
        if self.shared.debug {
            // pgbench names its argv[1] here: the command's first argument as written
            // (printf's "(null)" without one), not the variable.
            let name = match args.first() {
                Some(ShellArg::Var(n)) => format!(":{n}"),
                Some(ShellArg::Literal(l)) if l.starts_with(':') => format!(":{l}"),
                Some(ShellArg::Literal(l)) => l.clone(),
                None => "(null)".to_string(),
            };
            logging::info(&format!(
                "{word}: shell parameter name: \"{name}\", value: \"{res}\""
            ));
        }
        Ok(())
    }
}

fn unexpected_result_message(r: &ResultStatus) -> String {
    match r {
        ResultStatus::PipelineAborted => "pipeline aborted".to_string(),
        other => format!("unexpected result status {other:?}"),
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

/// The words pgbench keeps of a meta-command (its `argv`), as its debug line shows
/// them: `\set` keeps only the variable name and `\if`/`\elif` only their word (the
/// expression is parsed apart), and `\sleep 10ms` keeps `10ms` plus the unit it split
/// off. Continuation lines join the words.
fn meta_argv(meta: &MetaCommand, first_line: &str) -> String {
    let text = first_line
        .strip_prefix('\\')
        .unwrap_or(first_line)
        .replace("\\\r\n", " ")
        .replace("\\\n", " ");
    let mut words: Vec<&str> = text
        .split([' ', '\t', '\r', '\n', '\x0b', '\x0c'])
        .filter(|w| !w.is_empty())
        .collect();
    match meta {
        MetaCommand::Set { .. } => words.truncate(2),
        MetaCommand::If(_) | MetaCommand::Elif(_) => words.truncate(1),
        _ => {}
    }
    let mut line = words.join(" ");
    if let (MetaCommand::Sleep { .. }, [_, arg]) = (meta, words.as_slice()) {
        if !arg.starts_with(':') {
            let unsigned = arg.strip_prefix(['+', '-']).unwrap_or(arg);
            let unit = unsigned.trim_start_matches(|c: char| c.is_ascii_digit());
            if !unit.is_empty() && unit.len() < unsigned.len() {
                line.push(' ');
                line.push_str(unit);
            }
        }
    }
    line
}

/// `sh -c <line>` as system() and popen() run it: the shell's own messages then begin
/// with `sh:`, not `/bin/sh:`.
fn shell_command(line: &str) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.arg0("sh").arg("-c").arg(line);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_commands_show_pgbench_argv_in_debug_lines() {
        use pgbench_script::ast::{Expr, Value};
        let expr = || Expr::Const(Value::Bool(true));
        let sleep = |unit_us| MetaCommand::Sleep {
            duration: SleepArg::Const(2),
            unit_us,
        };
        let shell = MetaCommand::Shell {
            command: "echo".into(),
            args: Vec::new(),
        };
        let cases = [
            (
                MetaCommand::Set {
                    var: "aid".into(),
                    expr: expr(),
                },
                "\\set aid random(1, 100000 * :scale)",
                "set aid",
            ),
            (MetaCommand::If(expr()), "\\if :x > 1", "if"),
            (MetaCommand::Elif(expr()), "\\ELIF 1", "ELIF"),
            (sleep(1000), "\\sleep 2ms", "sleep 2ms ms"),
            (sleep(1000), "\\sleep 2 ms", "sleep 2 ms"),
            (sleep(1_000_000), "\\sleep :x", "sleep :x"),
            (
                shell,
                "\\shell echo \\\n  ::foo\t:one",
                "shell echo ::foo :one",
            ),
        ];
        for (meta, line, want) in cases {
            assert_eq!(meta_argv(&meta, line), want, "for {line:?}");
        }
    }
}
