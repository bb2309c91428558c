//! What can go wrong in benchmarking mode, in pgbench's words: [`RunError`] when the run
//! cannot start (exit status 1), [`ClientAbort`] when one client stops for good (the
//! run goes on; the report is printed and the exit status is 2). Nothing here prints:
//! the collector prints aborts as they arrive, `cli` reports run errors (their
//! [`Diagnostic`]).

use crate::diagnostic::{Diagnostic, ExitStatus};
use crate::logging::{format_line, line, Level};
use pgbench_wire::ConnError;

/// The run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The setup connection failed.
    #[error("{source}")]
    SetupConnect { source: ConnError },
    /// A failure of the setup phase, already in pgbench's words (with its hint).
    #[error("{message}")]
    Setup {
        message: String,
        hint: Option<String>,
    },
    /// A `-D` value pgbench refuses.
    #[error("{0}")]
    Define(String),
    #[error("could not open logfile \"{path}\": {reason}")]
    LogFile { path: String, reason: String },
    #[error("could not create thread: {0}")]
    SpawnThread(String),
    /// A client's initial connection failed (pgbench: fatal, nothing runs).
    #[error("{source}")]
    ClientConnect { client: usize, source: ConnError },
    /// `--scenarios`: a scenario's `conninfo` that does not parse.
    #[error("scenario \"{scenario}\": {source}")]
    ScenarioConnect { scenario: String, source: ConnError },
    /// `--worker`: the workers did not start together.
    #[error("{0}")]
    Barrier(#[from] super::barrier::BarrierError),
}

impl RunError {
    /// [`Diagnostic::render`] with the process's program name: what `main` prints.
    pub fn render(&self) -> String {
        Diagnostic::render(self, crate::logging::progname())
    }
}

impl Diagnostic for RunError {
    /// 1, as pgbench exits when a run cannot start; the signal's status when SIGINT or
    /// SIGTERM ended the wait for the other workers, as a shell reports a process the
    /// signal ended.
    fn exit_status(&self) -> ExitStatus {
        match self {
            RunError::Barrier(super::barrier::BarrierError::Interrupted(sig)) => {
                ExitStatus::Signal(*sig)
            }
            _ => ExitStatus::Error,
        }
    }

    /// Everything pgbench prints on stderr for it.
    fn render(&self, progname: &str) -> String {
        let error = |msg: &str| line(progname, Level::Error, msg);
        let mut out = error(&self.to_string());
        match self {
            RunError::SetupConnect { .. } => {
                out.push_str(&error("could not create connection for setup"));
            }
            RunError::Setup {
                hint: Some(hint), ..
            } => out.push_str(&line(progname, Level::Hint, hint)),
            RunError::ClientConnect { client, .. } => {
                out.push_str(&error(&format!(
                    "could not create connection for client {client}"
                )));
            }
            _ => {}
        }
        out
    }
}

/// A client that stopped for good, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientAbort {
    pub client: usize,
    /// An error line pgbench prints just before the abort line (the evaluation error,
    /// the server's message, the undefined variable...).
    pub cause: Option<String>,
    pub reason: AbortReason,
}

/// Where and why a client aborted: each variant is one of pgbench's abort lines.
#[derive(Debug, Clone, PartialEq)]
pub enum AbortReason {
    /// `-C`: a reconnection failed.
    Connect,
    /// `client N aborted in command C (KIND) of script S; MESSAGE`.
    Command {
        script: usize,
        command: usize,
        kind: &'static str,
        message: &'static str,
    },
    /// `client N script S aborted in command C query Q: MESSAGE`.
    Query {
        script: usize,
        command: usize,
        query: usize,
        message: String,
    },
    /// `\gset`/`\aset` could not store a value.
    Storing {
        script: usize,
        command: usize,
        query: usize,
        variable: String,
    },
    /// `\gset` on a result without exactly one row.
    ExpectedOneRow {
        script: usize,
        command: usize,
        query: usize,
        rows: usize,
    },
    /// A command that returned no result at all.
    NoResults { command: usize },
    /// A `COPY` in a script (pgbench does not support it).
    Copy,
    /// `client N aborted: MESSAGE` (pipelines, open transactions at the end).
    Other(&'static str),
    /// `client N aborted while rolling back the transaction after an error; ...`.
    Rollback(String),
    /// The transaction status could not be read (the backend is gone).
    LostTransactionStatus,
}

/// pgbench's message when a connection breaks under a command.
pub const BACKEND_DIED: &str = "perhaps the backend died while processing";

impl ClientAbort {
    pub fn new(client: usize, reason: AbortReason) -> ClientAbort {
        ClientAbort {
            client,
            cause: None,
            reason,
        }
    }

    /// The same abort, after `cause` was printed.
    pub fn because(mut self, cause: impl Into<String>) -> ClientAbort {
        self.cause = Some(cause.into());
        self
    }

    /// The `error:` lines pgbench prints, in order.
    pub fn lines(&self) -> Vec<String> {
        let id = self.client;
        let main = match &self.reason {
            AbortReason::Connect => format!("client {id} aborted while establishing connection"),
            AbortReason::Command {
                script,
                command,
                kind,
                message,
            } => format!("client {id} aborted in command {command} ({kind}) of script {script}; {message}"),
            AbortReason::Query {
                script,
                command,
                query,
                message,
            } => format!("client {id} script {script} aborted in command {command} query {query}: {message}"),
            AbortReason::Storing {
                script,
                command,
                query,
                variable,
            } => format!("client {id} script {script} command {command} query {query}: error storing into variable {variable}"),
            AbortReason::ExpectedOneRow {
                script,
                command,
                query,
                rows,
            } => format!("client {id} script {script} command {command} query {query}: expected one row, got {rows}"),
            AbortReason::NoResults { command } => format!("client {id} command {command}: no results"),
            AbortReason::Copy => "COPY is not supported in pgbench, aborting".to_string(),
            AbortReason::Other(message) => format!("client {id} aborted: {message}"),
            AbortReason::Rollback(why) => format!(
                "client {id} aborted while rolling back the transaction after an error; {why}"
            ),
            AbortReason::LostTransactionStatus => {
                format!("client {id} aborted while receiving the transaction status")
            }
        };
        let cause = match (&self.cause, &self.reason) {
            (Some(c), _) => Some(c.clone()),
            (None, AbortReason::LostTransactionStatus) => Some(BACKEND_DIED.to_string()),
            (None, _) => None,
        };
        cause.into_iter().chain([main]).collect()
    }

    /// The stderr text of [`ClientAbort::lines`].
    pub fn render(&self) -> String {
        self.lines()
            .iter()
            .map(|l| format_line(Level::Error, l))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aborts_read_as_pgbench_prints_them() {
        crate::logging::init_progname("pgbench");
        let a = ClientAbort::new(
            3,
            AbortReason::Command {
                script: 0,
                command: 1,
                kind: "set",
                message: "evaluation of meta-command failed",
            },
        )
        .because("division by zero");
        assert_eq!(
            a.render(),
            "pgbench: error: division by zero\n\
             pgbench: error: client 3 aborted in command 1 (set) of script 0; evaluation of meta-command failed\n"
        );
        let lost = ClientAbort::new(0, AbortReason::LostTransactionStatus);
        assert_eq!(
            lost.lines(),
            [
                "perhaps the backend died while processing",
                "client 0 aborted while receiving the transaction status"
            ]
        );
        let q = ClientAbort::new(
            1,
            AbortReason::ExpectedOneRow {
                script: 0,
                command: 2,
                query: 0,
                rows: 0,
            },
        );
        assert_eq!(
            q.lines(),
            ["client 1 script 0 command 2 query 0: expected one row, got 0"]
        );
    }

    #[test]
    fn run_errors_carry_pgbench_follow_up_lines() {
        crate::logging::init_progname("pgbench");
        let e = RunError::Setup {
            message: "could not count number of branches: ERROR:  relation \"pgbench_branches\" does not exist".into(),
            hint: Some("Perhaps you need to do initialization (\"pgbench -i\") in database \"x\".".into()),
        };
        assert!(Diagnostic::render(&e, "pgbench").ends_with(
            "pgbench: hint: Perhaps you need to do initialization (\"pgbench -i\") in database \"x\".\n"
        ));
    }
}
