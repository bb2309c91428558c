//! `CliError`: what fails in the steps the command line takes itself, between the
//! modes' own layers (whose errors, [`crate::init::InitError`],
//! [`crate::bench::RunError`] and the others, say their own lines): `-i`'s first
//! connection and metrics endpoint, the results files' destinations before the run, a
//! workload's prepare with the note of what it left (the shell around a run has its own:
//! [`crate::session::SessionError`]).

use crate::diagnostic::Diagnostic;
use crate::logging::{line, Level};
use crate::workload::PrepareError;
use pgbench_results::destination::WriteError;
use pgbench_wire::ConnError;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// `-i`'s first connection (pgbench's `doConnect` for initialization).
    #[error("{0}")]
    InitConnect(ConnError),
    /// `-i` under `--metrics-listen`: the endpoint could not start; nothing has
    /// connected yet.
    #[error("{0}")]
    Metrics(String),
    /// An `--export-json` or `--export-html` destination refused before the run.
    #[error("{0}")]
    Export(#[from] WriteError),
    /// `-i --workload=NAME` failed; `incomplete` says what it left.
    #[error("{error}")]
    Prepare {
        error: PrepareError,
        incomplete: String,
    },
}

impl Diagnostic for CliError {
    fn render(&self, progname: &str) -> String {
        let error = |msg: &str| line(progname, Level::Error, msg);
        match self {
            CliError::InitConnect(e) => {
                error(&e.to_string()) + &error("could not create connection for initialization")
            }
            CliError::Prepare { error, incomplete } => {
                error.render(progname) + &line(progname, Level::Info, incomplete)
            }
            CliError::Export(_) | CliError::Metrics(_) => error(&self.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_failure_prints_pgbench_lines_and_its_status() {
        let e = CliError::InitConnect(ConnError::Options("invalid port number: \"x\"".into()));
        assert_eq!(
            e.render("pgbench"),
            "pgbench: error: invalid port number: \"x\"\n\
             pgbench: error: could not create connection for initialization\n"
        );
        assert_eq!(e.exit_status(), 1);
        let e = CliError::Prepare {
            error: PrepareError::Interrupted,
            incomplete: "the tpcc load did not complete".into(),
        };
        assert_eq!(
            e.render("p"),
            "p: error: initialization stopped by a signal\np: the tpcc load did not complete\n"
        );
        // The results files after the report: crate::session::SessionError's test.
    }

    /// `--check`: the report is printed either way; a check that failed is an error
    /// after it.
    #[test]
    fn a_failed_check_is_an_error_after_its_report() {
        use crate::workload::CheckReport;
        let report = |all_hold| CheckReport {
            workload: "tpcc",
            text: "ok\n".into(),
            all_hold,
        };
        assert!(report(true).verdict().is_ok());
        let e = report(false).verdict().unwrap_err();
        assert_eq!(
            e.render("pgbench"),
            "pgbench: error: the tpcc check failed\n"
        );
        assert_eq!(e.exit_status(), 1);
    }

    /// `cli::run` returns what ends it, for `main` to print: a refused command line
    /// is its `ConfigError`, with pgbench's lines and status 1.
    #[test]
    fn a_refused_command_line_is_returned_not_printed() {
        crate::logging::init_progname("pgbench");
        let argv: Vec<String> = ["pgbench", "-c", "0"].map(String::from).to_vec();
        let e = crate::cli::run(&argv).unwrap_err();
        assert_eq!(
            e.render("pgbench"),
            "pgbench: error: -c/--client must be in range 1..2147483647\n"
        );
        assert_eq!(e.exit_status(), 1);
    }
}
