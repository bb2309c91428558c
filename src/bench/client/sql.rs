//! Sending SQL commands and reading their results (pgbench.c `sendCommand`,
//! `readCommandResponse`, `prepareCommand`): the three query modes, `\gset` and
//! `\aset`, pipelines, and the classification of server errors into retryable
//! failures (serialization, deadlock) and client aborts.

use super::failure::{unexpected_result_message, TxError};
use super::link::connected;
use super::{Client, Flow, Phase, Wait};
use crate::bench::error::{AbortReason, ClientAbort, BACKEND_DIED};
use pgbench_results::QueryMode;
use pgbench_script::ast::{CommandKind, ResultTarget, SqlPiece};
use pgbench_wire::{ResultStatus, TransactionStatus};

/// How many statements a client prepares in one round trip when it connects: the
/// buffers of a pipeline of all of a 250-table script's 1,002 statements stayed with
/// each of 1,000 connections (537 MB of client memory against 94 at 25 tables), and
/// 16 round trips instead of one cost little beside sysbench's 1,002.
const PREPARE_CHUNK: usize = 64;

impl Client<'_> {
    /// `\endpipeline`: reads every pending result up to the last sync, then leaves
    /// pipeline mode.
    pub(super) fn read_pipeline_results(
        &mut self,
        script: usize,
        index: usize,
        mut syncs: usize,
    ) -> Result<(), TxError> {
        let id = self.id;
        let mut qrynum = 0;
        // pgbench reads one query's results (or one sync) per look at the socket.
        let mut next_group = true;
        while syncs > 0 {
            if next_group && self.ctx.plan.debug {
                self.look_for_result(script, index)?;
            }
            next_group = false;
            match connected(&mut self.conn).get_result() {
                Ok(Some(ResultStatus::PipelineSync)) => {
                    syncs -= 1;
                    next_group = true;
                    if syncs == 0 {
                        self.debug(|| format!("client {id} pipeline ending"));
                    }
                }
                Ok(Some(
                    ResultStatus::CommandOk | ResultStatus::TuplesOk | ResultStatus::EmptyQuery,
                )) => qrynum += 1,
                Ok(None) => next_group = true,
                Ok(Some(ResultStatus::Error(e))) => {
                    self.pending_syncs = syncs;
                    return Err(self.sql_error(&e, script, index, qrynum));
                }
                Ok(Some(other)) => {
                    self.pending_syncs = syncs;
                    return Err(self
                        .query_failed(script, index, qrynum, unexpected_result_message(&other))
                        .into());
                }
                Err(_) => return Err(self.backend_died(script, index)),
            }
        }
        if let Err(e) = connected(&mut self.conn).exit_pipeline_mode() {
            self.ctx
                .out
                .error(&format!("client {id} failed to exit pipeline mode: {e}"));
        }
        Ok(())
    }

    /// `-d`: waits for the next result as pgbench's loop does, which prints `client N
    /// receiving` each time it looks at the socket for it.
    fn look_for_result(&mut self, script: usize, index: usize) -> Result<(), TxError> {
        let (id, out) = (self.id, &*self.ctx.out);
        connected(&mut self.conn)
            .wait_result_looking(|| out.info(&format!("client {id} receiving")))
            .map_err(|_| self.backend_died(script, index))
    }

    /// Prepares the SQL commands `from..to` of a script that are not prepared yet on
    /// this connection (`-M prepared`): one command at its first execution, or all of
    /// a pipeline at `\startpipeline`, as pgbench does. A failure is printed; the
    /// statement then fails when executed. It does not wait here for the reply: it
    /// returns the command whose Prepare was sent, and comes back (through
    /// [`Phase::AwaitPrepare`]) once the reply is there.
    pub(super) fn prepare_commands(
        &mut self,
        script: usize,
        from: usize,
        to: usize,
    ) -> Result<Option<usize>, TxError> {
        let ctx = self.ctx;
        let commands = &ctx.scripts[script].script.commands;
        let to = to.min(commands.len());
        for (index, command) in commands.iter().enumerate().take(to).skip(from) {
            let CommandKind::Sql(sql) = &command.kind else {
                continue;
            };
            if self.prepared[script][index] {
                continue;
            }
            let name = &ctx.scripts[script].prepared_names[index];
            if ctx.plan.debug {
                self.ctx
                    .out
                    .info(&format!("client {} preparing {name}", self.id));
            }
            let text = &ctx.scripts[script].parameterized[index];
            let nparams = sql.parameters().count();
            let conn = connected(&mut self.conn);
            if conn.send_prepare(name, text, nparams).is_err() {
                return Err(self.send_failed(script, index));
            }
            return Ok(Some(index));
        }
        Ok(None)
    }

    /// A workload's tool prepares its statements when it connects (sysbench's thread
    /// init): under `-M prepared`, every SQL command of the scripts the client may run
    /// that ask for it ([`RunScript::prepare_on_connect`]) is prepared on `conn`, a new
    /// connection not yet the client's, in pipelined round trips of
    /// [`PREPARE_CHUNK`] statements (a sync after each Prepare, so that one that fails
    /// leaves the others prepared). A failure is printed and the command counts as
    /// prepared, as at a first execution: the statement then fails when executed.
    ///
    /// [`RunScript::prepare_on_connect`]: crate::bench::launch::RunScript::prepare_on_connect
    pub(super) fn prepare_on_connect(
        &mut self,
        conn: &mut pgbench_wire::Connection,
    ) -> Result<(), pgbench_wire::ConnError> {
        let ctx = self.ctx;
        if ctx.plan.settings.query_mode != QueryMode::Prepared {
            return Ok(());
        }
        let runs = |script: &usize| self.group.weights.get(*script).is_some_and(|&w| w > 0);
        // Each SQL command as (script, command index, its parameter count).
        let statements: Vec<(usize, usize, usize)> = (0..ctx.scripts.len())
            .filter(|s| ctx.scripts[*s].prepare_on_connect && runs(s))
            .flat_map(|s| {
                let commands = ctx.scripts[s].script.commands.iter().enumerate();
                commands.filter_map(move |(i, c)| match &c.kind {
                    CommandKind::Sql(sql) => Some((s, i, sql.parameters().count())),
                    CommandKind::Meta(_) => None,
                })
            })
            .collect();
        if statements.is_empty() {
            return Ok(());
        }
        conn.enter_pipeline_mode()?;
        for chunk in statements.chunks(PREPARE_CHUNK) {
            for &(script, index, nparams) in chunk {
                let s = &ctx.scripts[script];
                let name = &s.prepared_names[index];
                if ctx.plan.debug {
                    ctx.out
                        .info(&format!("client {} preparing {name}", self.id));
                }
                conn.send_prepare(name, &s.parameterized[index], nparams)?;
                conn.send_pipeline_sync()?;
                self.prepared[script][index] = true;
            }
            conn.flush()?;
            let mut syncs = chunk.len();
            while syncs > 0 {
                match conn.get_result()? {
                    Some(ResultStatus::PipelineSync) => syncs -= 1,
                    Some(ResultStatus::Error(e)) => ctx.out.error(&e.to_string()),
                    Some(_) | None => {}
                }
            }
            // A thousand clients preparing a thousand statements each take seconds:
            // a -P line due meanwhile comes from here as from a transaction's end.
            if let Some(board) = &ctx.progress {
                let now = ctx.control.clock.now_us();
                board.print_due(now, &mut |line| ctx.out.stderr(line));
            }
        }
        conn.exit_pipeline_mode()
    }

    /// Reads the reply to the Prepare of command `index` (printing an error) and marks
    /// the command prepared.
    pub(super) fn read_prepared(&mut self, script: usize, index: usize) -> Result<(), TxError> {
        loop {
            match connected(&mut self.conn).get_result() {
                Ok(None) => break,
                Ok(Some(ResultStatus::Error(e))) => self.ctx.out.error(&e.to_string()),
                Ok(Some(_)) => {}
                // Lost before the statement itself was sent.
                Err(_) => return Err(self.lost_before_sending(script, index)),
            }
        }
        self.prepared[script][index] = true;
        Ok(())
    }

    /// The reply to the Prepare of `command` arrived: reads it, then runs the
    /// transaction's command on from where the Prepare stopped it.
    pub(super) fn resume_prepared(&mut self, command: usize) -> Result<Flow, TxError> {
        let (script, index) = (self.tx.script, self.tx.index);
        self.read_prepared(script, command)?;
        match &self.ctx.scripts[script].script.commands[index].kind {
            CommandKind::Sql(sql) => self.run_sql(sql, script, index),
            CommandKind::Meta(meta) => self.run_meta(meta, script, index),
        }
    }

    /// Sends an SQL command in the run's query mode (`sendCommand`); outside a
    /// pipeline the client then waits for its results, read in
    /// [`Phase::AwaitResults`] (`readCommandResponse`). Inlined into both callers: called from two places
    /// (the run loop, and again after a Prepare's reply), it was compiled out of line,
    /// 2% more instructions per `SELECT 1` transaction.
    #[inline(always)]
    pub(super) fn run_sql(
        &mut self,
        sql: &pgbench_script::ast::SqlCommand,
        script: usize,
        index: usize,
    ) -> Result<Flow, TxError> {
        let mode = self.ctx.plan.settings.query_mode;
        let in_pipeline = self.in_pipeline();
        if in_pipeline {
            let refused = match sql.target {
                ResultTarget::Gset { .. } => {
                    Some(("gset", "\\gset is not allowed in pipeline mode"))
                }
                ResultTarget::Aset { .. } => {
                    Some(("aset", "\\aset is not allowed in pipeline mode"))
                }
                ResultTarget::Discard => None,
            };
            if let Some((kind, message)) = refused {
                return Err(self.command_failed(script, index, kind, message).into());
            }
        }
        // Only a command's first execution on a connection prepares it.
        if mode == QueryMode::Prepared && !in_pipeline && !self.prepared[script][index] {
            if let Some(command) = self.prepare_commands(script, index, index + 1)? {
                return Ok(awaiting_prepare(command));
            }
        }
        let sent = if mode == QueryMode::Simple {
            self.substitute(sql);
            if self.ctx.plan.debug {
                self.ctx
                    .out
                    .info(&format!("client {} sending {}", self.id, self.sql_buf));
            }
            connected(&mut self.conn).send_query(&self.sql_buf)
        } else {
            self.send_with_parameters(sql, script, index)
        };
        if sent.is_err() {
            if self.ctx.plan.debug {
                self.ctx
                    .out
                    .info(&format!("client {} could not send {}", self.id, sql.text));
            }
            return Err(self.send_failed(script, index));
        }
        if in_pipeline {
            return Ok(Flow::Next);
        }
        Ok(Flow::Wait(Phase::AwaitResults, Wait::Replies { syncs: 1 }))
    }

    /// Simple mode: the command's text with `:name` replaced by the variables' values
    /// (an undefined one stays as written), in `sql_buf`.
    #[inline]
    fn substitute(&mut self, sql: &pgbench_script::ast::SqlCommand) {
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
    }

    /// `sendCommand` in extended and prepared mode: the variables go as parameters,
    /// undefined ones as NULL.
    fn send_with_parameters(
        &mut self,
        sql: &pgbench_script::ast::SqlCommand,
        script: usize,
        index: usize,
    ) -> Result<(), pgbench_wire::ConnError> {
        let ctx = self.ctx;
        let debug = ctx.plan.debug;
        let id = self.id;
        self.param_buf.clear();
        self.param_ends.clear();
        for name in sql.parameters() {
            if self.vars.write_text(name, &mut self.param_buf) {
                self.param_ends.push(Some(self.param_buf.len()));
            } else {
                self.param_ends.push(None);
            }
        }
        // On the stack up to 16 parameters: a transaction allocates nothing.
        let mut inline: [Option<&[u8]>; 16] = [None; 16];
        let mut spilled: Vec<Option<&[u8]>>;
        let n = self.param_ends.len();
        let params: &mut [Option<&[u8]>] = if n <= inline.len() {
            &mut inline[..n]
        } else {
            spilled = vec![None; n];
            &mut spilled
        };
        let mut from = 0;
        for (param, end) in params.iter_mut().zip(&self.param_ends) {
            if let Some(end) = *end {
                *param = Some(&self.param_buf.as_bytes()[from..end]);
                from = end;
            }
        }
        let params = &*params;
        let conn = connected(&mut self.conn);
        if ctx.plan.settings.query_mode == QueryMode::Extended {
            let text = &ctx.scripts[script].parameterized[index];
            if debug {
                ctx.out.info(&format!("client {id} sending {text}"));
            }
            conn.send_query_params(text, params)
        } else {
            let name = &ctx.scripts[script].prepared_names[index];
            if debug {
                ctx.out.info(&format!("client {id} sending {name}"));
            }
            conn.send_query_prepared(name, params)
        }
    }

    /// `readCommandResponse` outside pipeline mode.
    pub(super) fn read_results(
        &mut self,
        sql: &pgbench_script::ast::SqlCommand,
        script: usize,
        index: usize,
    ) -> Result<(), TxError> {
        if self.ctx.plan.debug {
            self.look_for_result(script, index)?;
        }
        let mut qrynum = 0;
        // For \gset: the row count and row of the latest result.
        let mut last_rows: Option<usize> = None;
        let mut gset_row: Vec<(String, String)> = Vec::new();
        let mut failure: Option<TxError> = None;
        loop {
            let conn = connected(&mut self.conn);
            let res = match conn.get_result() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                // A FATAL error result, then the server closes: one abort message.
                Err(_) if failure.is_some() => break,
                Err(_) => return Err(self.backend_died(script, index)),
            };
            if failure.is_some() {
                // Drain what follows the error.
                continue;
            }
            match res {
                ResultStatus::CommandOk | ResultStatus::EmptyQuery => {
                    last_rows = Some(0);
                    if changed_rows(conn.command_tag()) {
                        self.record.queries.write += 1;
                    } else {
                        self.record.queries.other += 1;
                    }
                }
                ResultStatus::TuplesOk => {
                    self.record.queries.read += 1;
                    let ntuples = conn.ntuples();
                    last_rows = Some(ntuples);
                    match &sql.target {
                        ResultTarget::Gset { prefix } => {
                            gset_row = if ntuples == 1 {
                                last_row(conn, prefix)
                            } else {
                                Vec::new()
                            };
                        }
                        ResultTarget::Aset { prefix } if ntuples > 0 => {
                            let row = last_row(conn, prefix);
                            let at = (script, index, qrynum);
                            failure = self.store(row, "aset", at).err().map(TxError::from);
                        }
                        _ => {}
                    }
                }
                ResultStatus::Error(e) => {
                    failure = Some(self.sql_error(&e, script, index, qrynum));
                }
                ResultStatus::CopyIn | ResultStatus::CopyOut => {
                    let _ = connected(&mut self.conn).end_copy();
                    failure = Some(self.abort(AbortReason::Copy).into());
                }
                other => {
                    let message = unexpected_result_message(&other);
                    failure = Some(self.query_failed(script, index, qrynum, message).into());
                }
            }
            qrynum += 1;
        }
        if let Some(f) = failure {
            return Err(f);
        }
        if let ResultTarget::Gset { .. } = sql.target {
            let rows = last_rows.unwrap_or(0);
            let query = qrynum.saturating_sub(1);
            if rows != 1 {
                return Err(self
                    .abort(AbortReason::ExpectedOneRow {
                        script,
                        command: index,
                        query,
                        rows,
                    })
                    .into());
            }
            self.store(gset_row, "gset", (script, index, query))?;
        }
        if qrynum == 0 {
            return Err(self.abort(AbortReason::NoResults { command: index }).into());
        }
        Ok(())
    }

    /// `\\gset`/`\\aset`: stores a row's values; `at` is (script, command, query).
    fn store(
        &mut self,
        row: Vec<(String, String)>,
        context: &str,
        at: (usize, usize, usize),
    ) -> Result<(), ClientAbort> {
        for (name, value) in row {
            if let Err(e) = self.vars.set_text(context, &name, &value) {
                let (script, command, query) = at;
                let abort = self.abort(AbortReason::Storing {
                    script,
                    command,
                    query,
                    variable: name,
                });
                return Err(abort.because(e.to_string()));
            }
        }
        Ok(())
    }

    /// CSTATE_ERROR: leave pipeline mode, roll back an open transaction block.
    pub(super) fn recover_after_error(&mut self) -> Result<(), ClientAbort> {
        if self.in_pipeline() {
            self.discard_until_sync()?;
        }
        let rollback_failed = |s: &Self, why: &str| s.abort(AbortReason::Rollback(why.to_string()));
        match connected(&mut self.conn).transaction_status() {
            TransactionStatus::InTransaction | TransactionStatus::InError => {
                if connected(&mut self.conn).send_query("ROLLBACK").is_err() {
                    return Err(self.abort(AbortReason::Other(
                        "failed to send sql command for rolling back the failed transaction",
                    )));
                }
                loop {
                    match connected(&mut self.conn).get_result() {
                        Ok(None) => return Ok(()),
                        Ok(Some(ResultStatus::Error(e))) => {
                            return Err(rollback_failed(self, &e.to_string()))
                        }
                        Ok(Some(_)) => {}
                        Err(_) => return Err(rollback_failed(self, BACKEND_DIED)),
                    }
                }
            }
            TransactionStatus::Idle => Ok(()),
            _ => Err(self.abort(AbortReason::LostTransactionStatus)),
        }
    }

    /// pgbench's `discardUntilSync`: one more sync, read up to the last one, leave
    /// pipeline mode.
    fn discard_until_sync(&mut self) -> Result<(), ClientAbort> {
        let conn = connected(&mut self.conn);
        if conn.pipeline_sync().is_err() {
            return Err(self.abort(AbortReason::Other("failed to send a pipeline sync")));
        }
        let mut syncs_left = self.pending_syncs + 1;
        self.pending_syncs = 0;
        while syncs_left > 0 {
            match connected(&mut self.conn).get_result() {
                Ok(Some(ResultStatus::PipelineSync)) => syncs_left -= 1,
                Ok(_) => {}
                Err(_) => return Err(self.abort(AbortReason::Rollback(BACKEND_DIED.to_string()))),
            }
        }
        let conn = connected(&mut self.conn);
        while let Ok(Some(_)) = conn.get_result() {}
        if conn.exit_pipeline_mode().is_err() {
            return Err(self.abort(AbortReason::Other(
                "failed to exit pipeline mode for rolling back the failed transaction",
            )));
        }
        Ok(())
    }
}

/// What a client waits for once command `command`'s Prepare is sent.
pub(super) fn awaiting_prepare(command: usize) -> Flow {
    Flow::Wait(Phase::AwaitPrepare { command }, Wait::Replies { syncs: 1 })
}

/// The current result's last row as `(prefix + column name, value)` pairs (NULL as "").
fn last_row(conn: &pgbench_wire::Connection, prefix: &str) -> Vec<(String, String)> {
    (0..conn.nfields())
        .map(|f| {
            let value = conn
                .last_row_value(f)
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default();
            (format!("{prefix}{}", conn.field_name(f)), value)
        })
        .collect()
}

/// A write: a command whose tag counts rows (`PQcmdTuples`) and counted some
/// (`UPDATE 1`, `INSERT 0 1`); `BEGIN` or `DELETE 0` is another statement.
fn changed_rows(tag: &str) -> bool {
    tag.rsplit(' ')
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .is_some_and(|n| n > 0)
}
