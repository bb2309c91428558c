//! How the program ends: its [`ExitStatus`] (the one place a status is made), and
//! for an error, each mode's top-level error (its layer's error enum) implements
//! [`Diagnostic`], saying what pgbench prints for it on stderr and with which exit
//! status; [`report`] is the one place that prints one. `main` reports
//! the error [`crate::cli::run`] returns; a benchmark reports its own before the
//! metrics endpoint lingers and before a throwaway cluster is removed, as pgbench
//! would have printed it by then.

use crate::logging;

/// How the program ends, as its exit status says. It lives on the ground floor (not
/// in [`crate::session`], whose modes return it) because the engine's outcomes, the
/// errors of every layer and the signal handling all say how they end the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0.
    Ok,
    /// 1: pgbench's status for an error.
    Error,
    /// 2: a client aborted (or the run lost part of its figures: `-l` lines, a
    /// workload's counts), as pgbench exits after an abort.
    Aborted,
    /// 3: a capacity search whose target nothing met, or whose rate is below
    /// `--fail-if-below`.
    BelowTarget,
    /// The signal's status (130 for SIGINT, 143 for SIGTERM): it ended the program,
    /// as a shell reports a process the signal ended.
    Signal(i32),
}

impl ExitStatus {
    /// The process's exit status: the only place one is made.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Ok => 0,
            ExitStatus::Error => 1,
            ExitStatus::Aborted => 2,
            ExitStatus::BelowTarget => 3,
            ExitStatus::Signal(sig) => 128 + sig,
        }
    }
}

/// Compared with a status as a number (a test's `assert_eq!(e.exit_status(), 1)`).
impl PartialEq<i32> for ExitStatus {
    fn eq(&self, code: &i32) -> bool {
        self.code() == *code
    }
}

/// What a mode ends with: its exit status, or the error that ended it (not yet
/// printed).
pub type Exit = Result<ExitStatus, Box<dyn Diagnostic>>;

/// An error that ends the program.
pub trait Diagnostic: std::fmt::Debug {
    /// Everything printed on stderr for it, each line ending in a newline, with
    /// `progname`'s prefix where pgbench prints one (`pgbench: error: ...`).
    fn render(&self, progname: &str) -> String;

    /// The program's exit status: 1, pgbench's for an error, unless the error says
    /// otherwise.
    fn exit_status(&self) -> ExitStatus {
        ExitStatus::Error
    }
}

impl<E: Diagnostic + 'static> From<E> for Box<dyn Diagnostic> {
    fn from(e: E) -> Self {
        Box::new(e)
    }
}

/// Prints `d` on stderr (stdout flushed first, so the streams interleave as
/// pgbench's) and returns its exit status.
pub fn report(d: &dyn Diagnostic) -> ExitStatus {
    logging::raw(&d.render(logging::progname()));
    d.exit_status()
}
