//! What a verb ends with: its exit statuses and its error ([`VerbError`]), shared by
//! the command line (`cli`), the verbs and main, which prints an error as
//! `pgbench-report: error: ...` with exit status 1.

use pgbench_results::compare::CompareError;
use pgbench_results::import::ImportError;
use pgbench_results::merge::MergeError;
use pgbench_results::DocumentError;

/// Success.
pub const EXIT_OK: u8 = 0;
/// Bad arguments or unreadable input.
pub const EXIT_ERROR: u8 = 1;
/// `compare --fail-if`: a gate tripped.
pub const EXIT_REGRESSION: u8 = 2;
/// `merge`: merged, but a worker is missing or its run was cut short, so the result
/// covers less than the run (the merged file says so in `merge.incomplete`).
pub const EXIT_INCOMPLETE: u8 = 3;
/// `compare --fail-if`: no gate tripped, but a change passing a gate's threshold could
/// not be told from noise (runs too short, too few runs).
pub const EXIT_UNDECIDED: u8 = 4;

/// Why a verb failed.
#[derive(Debug, thiserror::Error)]
pub enum VerbError {
    #[error("{0}\nTry \"pgbench-report --help\" for more information.")]
    Usage(String),
    #[error("{file}: {message}")]
    Read { file: String, message: String },
    #[error("{file}: {source}")]
    Document {
        file: String,
        #[source]
        source: DocumentError,
    },
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Compare(#[from] CompareError),
    #[error(transparent)]
    Merge(#[from] MergeError),
    #[error(transparent)]
    SweepCompare(#[from] pgbench_results::capacity::compare::SweepCompareError),
    #[error(transparent)]
    Html(#[from] pgbench_results::html::CurveError),
    #[error("{file}: cannot write: {message}")]
    Write { file: String, message: String },
    #[error(transparent)]
    Output(#[from] pgbench_results::destination::WriteError),
    #[error(transparent)]
    History(#[from] pgbench_history::HistoryError),
}

pub fn usage(msg: impl Into<String>) -> VerbError {
    VerbError::Usage(msg.into())
}
