//! `SessionError`: what fails in the shell around a mode's runs, outside the runs'
//! own errors ([`crate::bench::RunError`]): the metrics endpoint before anything
//! connects, the results files after the report.

use crate::diagnostic::{Diagnostic, ExitStatus};
use crate::logging::{line, Level};
use pgbench_results::destination::WriteError;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// `--metrics-listen`'s endpoint could not start; nothing has connected yet.
    #[error("{0}")]
    Metrics(String),
    /// After the report: the results files that could not be written (each one's
    /// failure costs only itself).
    #[error("{}", lines(.0))]
    Exports(Vec<WriteError>),
}

fn lines(errors: &[WriteError]) -> String {
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    text.join("\n")
}

impl Diagnostic for SessionError {
    fn render(&self, progname: &str) -> String {
        let error = |msg: &str| line(progname, Level::Error, msg);
        match self {
            SessionError::Exports(errors) => errors.iter().map(|e| error(&e.to_string())).collect(),
            SessionError::Metrics(_) => error(&self.to_string()),
        }
    }

    /// 1; when a signal ended a FIFO's wait for its reader, the signal's, as the
    /// signal would have ended the program.
    fn exit_status(&self) -> ExitStatus {
        let SessionError::Exports(errors) = self else {
            return ExitStatus::Error;
        };
        errors
            .iter()
            .find_map(|e| match e {
                WriteError::Abandoned { signal, .. } => Some(ExitStatus::Signal(*signal)),
                _ => None,
            })
            .unwrap_or(ExitStatus::Error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_files_not_written_print_a_line_each_and_a_signal_s_status() {
        let open = WriteError::Open {
            path: "a.json".into(),
            reason: "Permission denied".into(),
        };
        let abandoned = WriteError::Abandoned {
            path: "fifo".into(),
            signal: libc::SIGTERM,
            reason: "before a reader opened it",
        };
        let e = SessionError::Exports(vec![open.clone(), abandoned]);
        assert_eq!(
            e.render("pgbench"),
            "pgbench: error: could not open results file \"a.json\": Permission denied\n\
             pgbench: error: results file \"fifo\" not written: SIGTERM before a reader opened it\n"
        );
        assert_eq!(e.exit_status(), ExitStatus::Signal(libc::SIGTERM));
        assert_eq!(e.exit_status(), 143);
        assert_eq!(SessionError::Exports(vec![open]).exit_status(), 1);
        let e = SessionError::Metrics("could not listen on 127.0.0.1:1: in use".into());
        assert_eq!(
            e.render("pgbench"),
            "pgbench: error: could not listen on 127.0.0.1:1: in use\n"
        );
        assert_eq!(e.exit_status(), 1);
    }
}
