//! How a transaction's command fails, and pgbench's words for it: server errors
//! classified into failures that end a try (serialization, deadlock, and under
//! `--continue-on-error` any other) and client aborts, each abort with the message
//! stock prints.

use super::Client;
use crate::bench::error::{AbortReason, ClientAbort, BACKEND_DIED};
use pgbench_wire::ResultStatus;

/// The SQL error classes that end a try without aborting the client (pgbench's
/// `EStatus`): serialization and deadlock failures may be retried; other errors only
/// get here under pgbench 19's `--continue-on-error`, and are never retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Retryable {
    Serialization,
    Deadlock,
    Other,
}

/// Why a transaction stopped before its end. Kept small (the abort is boxed): every
/// command of every transaction returns one of these through the hot path.
pub(super) enum TxError {
    /// A failed try (serialization, deadlock, or another error under
    /// `--continue-on-error`) at this command index.
    Retry(Retryable, usize),
    /// `--reconnect`: the connection was lost, or the server refuses work on it (this
    /// SQLSTATE), at this command index: the transaction fails, the client connects
    /// again. `true`: the command did not run (the server refused it with an
    /// `ERROR`, or it was never sent); `false`: the connection ended under it, or
    /// with a `FATAL` that may have come after its commit.
    Lost([u8; 5], usize, bool),
    /// The client stops for good.
    Abort(Box<ClientAbort>),
}

impl From<ClientAbort> for TxError {
    fn from(a: ClientAbort) -> TxError {
        TxError::Abort(Box::new(a))
    }
}

impl Client<'_> {
    pub(super) fn abort(&self, reason: AbortReason) -> ClientAbort {
        ClientAbort::new(self.id, reason)
    }

    /// `client N aborted in command C (KIND) of script S; MESSAGE`.
    pub(super) fn command_failed(
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

    /// The connection broke while a command waited for its result (under
    /// `--reconnect`, a loss).
    pub(super) fn backend_died(&self, script: usize, index: usize) -> TxError {
        let abort = self.command_failed(script, index, "SQL", BACKEND_DIED);
        self.lost_or(index, abort)
    }

    /// The connection broke while the client waited for a Prepare's reply: the
    /// command itself was not sent (under `--reconnect`, a loss that committed
    /// nothing of it).
    pub(super) fn lost_before_sending(&self, script: usize, index: usize) -> TxError {
        match self.backend_died(script, index) {
            TxError::Lost(state, index, _) => TxError::Lost(state, index, true),
            other => other,
        }
    }

    /// The command could not be sent (under `--reconnect`, a loss).
    pub(super) fn send_failed(&self, script: usize, index: usize) -> TxError {
        let abort = self.command_failed(script, index, "SQL", "SQL command send failed");
        self.lost_or(index, abort)
    }

    /// Classifies a server error: retryable failures (and, under
    /// `--continue-on-error`, every other one) go back to the transaction loop;
    /// anything else aborts the client with pgbench's message.
    pub(super) fn sql_error(
        &self,
        e: &pgbench_wire::DbError,
        script: usize,
        index: usize,
        qrynum: usize,
    ) -> TxError {
        if self.rides_through() && crate::bench::availability::is_loss(e.code()) {
            if let Ok(state) = <[u8; 5]>::try_from(e.code().as_bytes()) {
                // An ERROR refused the statement before it ran (a read-only
                // server); a FATAL (an immediate shutdown) may come after a commit.
                let refused = e.severity == "ERROR";
                return TxError::Lost(state, index, refused);
            }
        }
        let kind = match e.code() {
            "40001" => Some(Retryable::Serialization),
            "40P01" => Some(Retryable::Deadlock),
            _ if self.ctx.plan.settings.continue_on_error => Some(Retryable::Other),
            _ => None,
        };
        match kind {
            Some(kind) => {
                if self.ctx.plan.verbose_errors {
                    self.ctx.out.info(&format!(
                        "client {} got an error in command {index} (SQL) of script {script}; {e}",
                        self.id
                    ));
                }
                TxError::Retry(kind, index)
            }
            _ => self
                .query_failed(script, index, qrynum, e.to_string())
                .into(),
        }
    }

    /// `--verbose-errors`: `client N repeats the transaction after the error` or `ends
    /// the failed transaction`, with its tries and the share of `-L` used.
    pub(super) fn verbose_try_message(&self, is_retry: bool, tries: u32, txn_scheduled: i64) {
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
            let used = 100.0 * (self.now() - txn_scheduled) as f64 / limit as f64;
            msg.push_str(&format!(
                ", {}% of the maximum time of tries was used",
                pgbench_script::cnum::fmt_f(used, 3)
            ));
        }
        msg.push_str(")\n");
        self.ctx.out.info(&msg);
    }

    /// `client N script S aborted in command C query Q: MESSAGE`.
    pub(super) fn query_failed(
        &self,
        script: usize,
        command: usize,
        query: usize,
        message: String,
    ) -> ClientAbort {
        self.abort(AbortReason::Query {
            script,
            command,
            query,
            message,
        })
    }
}

pub(super) fn unexpected_result_message(r: &ResultStatus) -> String {
    match r {
        ResultStatus::PipelineAborted => "pipeline aborted".to_string(),
        other => format!("unexpected result status {other:?}"),
    }
}
