//! Why an import failed: a file that cannot be read, is not a report, or holds a
//! figure its tool could not have printed (with its line).

/// Why stock output could not be imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    #[error("{file}: {message}")]
    Read { file: String, message: String },
    #[error("{file}: not a pgbench report (no \"transaction type:\" line)")]
    NotAReport { file: String },
    #[error("{file}:{line}: {message}")]
    Report {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}:{line}: {message}")]
    Progress {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}:{line}: {message}")]
    Log {
        file: String,
        line: usize,
        message: String,
    },
    #[error(
        "the -l logs hold {logged} successful transactions but the report counts {reported}: not the logs of this run, or sampled (--sampling-rate)"
    )]
    LogMismatch { logged: i64, reported: i64 },
    /// `--test` for the output of a tool that names its test (or of stock
    /// pgbench): only `tool`'s does not.
    #[error("--test {test}: {file} is not {tool}'s output (only {tool}'s does not name its test)")]
    TestNotTaken {
        file: String,
        test: String,
        tool: &'static str,
    },
}
