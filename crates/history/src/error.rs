//! The history's one error type: every way opening, writing or reading a store can
//! fail, each naming the store (its password masked) so that the run that recorded
//! into it can print it as a warning and carry on.

use crate::RunId;

/// Why a history operation failed.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Another process held the store longer than we wait (SQLite's busy timeout).
    #[error("history store {store}: locked by another process (gave up after {waited_s} s)")]
    Locked { store: String, waited_s: u64 },
    /// The store's schema is newer than this build knows: left as it is.
    #[error(
        "history store {store}: written by a newer pgbench-rs (schema {found}, this one knows {known}); left as it is"
    )]
    Newer {
        store: String,
        found: i64,
        known: i64,
    },
    /// The file or schema holds something else: never written over.
    #[error("history store {store}: is not a pgbench-rs history store ({why}); left as it is")]
    NotAStore { store: String, why: String },
    /// The PostgreSQL store could not be reached.
    #[error("history store {store}: cannot connect: {message}")]
    Connect { store: String, message: String },
    /// A statement failed.
    #[error("history store {store}: {message}")]
    Store { store: String, message: String },
    /// No run by that id.
    #[error("history store {store}: no run {id}")]
    NoRun { store: String, id: RunId },
    /// A stored document that no longer reads as a results file.
    #[error("history store {store}: run {id}: its results document cannot be read: {message}")]
    Document {
        store: String,
        id: RunId,
        message: String,
    },
    /// Neither `$PGBENCH_RS_HISTORY`, `$XDG_DATA_HOME` nor `$HOME` says where the
    /// default store is.
    #[error(
        "no history store: set $PGBENCH_RS_HISTORY (a file or a PostgreSQL conninfo), $XDG_DATA_HOME or $HOME"
    )]
    NoDefault,
    /// A metric, time or tag the caller gave that means nothing.
    #[error("{0}")]
    Invalid(String),
}
