//! A workload's `-i` (its prepare step) as the command line asks for it, and how it
//! fails.

use crate::diagnostic::Diagnostic;

/// How `-i --workload=NAME` loads.
#[derive(Debug, Clone, Copy)]
pub struct PrepareOptions {
    /// `-j`: connections to load over.
    pub jobs: usize,
    /// `--random-seed` (generated values).
    pub seed: u64,
    /// `-s` (TPC-C's warehouses).
    pub scale: i32,
    /// `-q`: progress lines every 5 s.
    pub quiet: bool,
    /// `--resume`, `--shard=K/N` ([`crate::init::resume`]).
    pub resumable: crate::init::resume::Resumable,
}

/// A failure of a workload's prepare step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    #[error("could not create connection for initialization: {0}")]
    Connect(String),
    #[error("query failed: {message}")]
    Query { message: String, sql: String },
    #[error("COPY into {table} failed: {message}")]
    Copy { table: String, message: String },
    #[error("initialization stopped by a signal")]
    Interrupted,
    /// A loading connection stopped because another one failed (whose error is
    /// unknown: its thread panicked).
    #[error("initialization aborted after a failure on another connection")]
    Aborted,
    /// The load's tables do not add up (a line per table was printed before).
    #[error("the load does not add up: {0} table(s) differ from what the options say")]
    Miscounted(usize),
    /// A resumable load cannot go on.
    #[error("{0}")]
    Resume(String),
}

impl From<crate::init::resume::ResumeError> for PrepareError {
    fn from(e: crate::init::resume::ResumeError) -> PrepareError {
        match e {
            crate::init::resume::ResumeError::Query { message, sql } => {
                PrepareError::Query { message, sql }
            }
            other => PrepareError::Resume(other.to_string()),
        }
    }
}

impl crate::init::queue::QueueError for PrepareError {
    fn aborted() -> PrepareError {
        PrepareError::Aborted
    }

    fn is_aborted(&self) -> bool {
        matches!(self, PrepareError::Aborted)
    }

    /// A workload's load (TPC-C's units and statements) takes no item after Ctrl-C.
    fn interrupted() -> Option<PrepareError> {
        Some(PrepareError::Interrupted)
    }
}

impl Diagnostic for PrepareError {
    /// The lines to print, with `progname`'s prefix (a failed statement's text as
    /// pgbench's `detail:`).
    fn render(&self, progname: &str) -> String {
        let text = self.to_string();
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let mut out = format!("{progname}: error: {text}\n");
        if let PrepareError::Query { sql, .. } = self {
            out.push_str(&format!("{progname}: detail: Query was: {sql}\n"));
        }
        out
    }
}
