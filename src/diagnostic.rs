//! How an error ends the program: each mode's top-level error (its layer's error
//! enum) implements [`Diagnostic`], saying what pgbench prints for it on stderr and
//! with which exit status; [`report`] is the one place that prints one. `main` reports
//! the error [`crate::cli::run`] returns; a benchmark reports its own before the
//! metrics endpoint lingers and before a throwaway cluster is removed, as pgbench
//! would have printed it by then.

use crate::logging;

/// An error that ends the program.
pub trait Diagnostic: std::fmt::Debug {
    /// Everything printed on stderr for it, each line ending in a newline, with
    /// `progname`'s prefix where pgbench prints one (`pgbench: error: ...`).
    fn render(&self, progname: &str) -> String;

    /// The program's exit status: 1, pgbench's for an error, unless the error says
    /// otherwise.
    fn exit_status(&self) -> i32 {
        1
    }
}

impl<E: Diagnostic + 'static> From<E> for Box<dyn Diagnostic> {
    fn from(e: E) -> Self {
        Box::new(e)
    }
}

/// Prints `d` on stderr (stdout flushed first, so the streams interleave as
/// pgbench's) and returns its exit status.
pub fn report(d: &dyn Diagnostic) -> i32 {
    logging::raw(&d.render(logging::progname()));
    d.exit_status()
}
