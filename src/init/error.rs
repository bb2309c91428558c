//! `InitError`: every way initialisation mode fails, with pgbench 15's message text
//! (`executeStatement`, `runInitSteps`, `initGenerateDataClientSide`). `Display` is the
//! message of the `error:` line; [`InitError::render`] gives all the lines pgbench
//! prints for it. Every variant means exit status 1.

/// A failure of `-i`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InitError {
    /// The connection could not be made; `message` is libpq's text, printed first.
    #[error("could not create connection for initialization")]
    Connect {
        /// What libpq said (`connection to server ... failed: ...`).
        message: String,
    },
    /// A statement failed (`executeStatement`).
    #[error("query failed: {message}")]
    Query {
        /// The server's error as libpq formats it (`ERROR:  ...`, `DETAIL:  ...`).
        message: String,
        /// The statement, for the `Query was:` detail.
        sql: String,
    },
    /// The COPY statement did not start a copy.
    #[error("unexpected copy in result: {message}")]
    CopyStart {
        /// The server's error.
        message: String,
    },
    /// Sending COPY data failed (pgbench prints no reason; we add it as a detail).
    #[error("PQputline failed")]
    CopyData {
        /// Why sending failed (connection closed, ...).
        message: String,
    },
    /// The server rejected the COPY data at its end; pgbench shows the server's error
    /// (through libpq's notice hook) before this line.
    #[error("PQendcopy failed")]
    CopyEnd {
        /// The server's error.
        message: String,
    },
    /// A loading connection of `-j` stopped because another one failed; only reported
    /// when the other failure is unknown (e.g. a loading thread panicked).
    #[error("initialization aborted after a failure on another connection")]
    Aborted,
    /// The load's tables do not add up to what the scale says (the lines naming
    /// each table were printed before).
    #[error("the load does not add up: {0} table(s) differ from what the scale says")]
    Miscounted(usize),
    /// A resumable load cannot go on (`--resume`, `--shard`).
    #[error("{0}")]
    Resume(String),
    /// A step letter outside `dtgGvpf ` (the command line normally rejects it first).
    #[error("unrecognized initialization step \"{0}\"")]
    UnknownStep(char),
}

impl From<super::resume::ResumeError> for InitError {
    fn from(e: super::resume::ResumeError) -> InitError {
        match e {
            super::resume::ResumeError::Query { message, sql } => InitError::Query { message, sql },
            other => InitError::Resume(other.to_string()),
        }
    }
}

impl InitError {
    /// Every line pgbench prints for this error, each ending in a newline, with
    /// `progname` as the prefix (`pgbench: error: ...`).
    pub fn render(&self, progname: &str) -> String {
        match self {
            InitError::Connect { message } => {
                format!("{progname}: error: {message}\n{progname}: error: {self}\n")
            }
            InitError::Query { sql, .. } => {
                format!("{progname}: error: {self}\n{progname}: detail: Query was: {sql}\n")
            }
            InitError::CopyData { message } if !message.is_empty() => {
                format!("{progname}: error: {self}\n{progname}: detail: {message}\n")
            }
            InitError::CopyEnd { message } if !message.is_empty() => {
                format!("{message}\n{progname}: error: {self}\n")
            }
            _ => format!("{progname}: error: {self}\n"),
        }
    }

    /// The exit status pgbench uses for it.
    pub fn exit_code(&self) -> i32 {
        crate::diagnostic::ExitStatus::Error.code()
    }
}

impl crate::diagnostic::Diagnostic for InitError {
    fn render(&self, progname: &str) -> String {
        InitError::render(self, progname)
    }

    fn exit_status(&self) -> crate::diagnostic::ExitStatus {
        crate::diagnostic::ExitStatus::Error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_failure_lines() {
        let e = InitError::Query {
            message: "ERROR:  tablespace \"nosuch\" does not exist".into(),
            sql: "create table t(a int) tablespace \"nosuch\"".into(),
        };
        assert_eq!(
            e.render("pgbench"),
            "pgbench: error: query failed: ERROR:  tablespace \"nosuch\" does not exist\n\
             pgbench: detail: Query was: create table t(a int) tablespace \"nosuch\"\n"
        );
    }

    #[test]
    fn connection_failure_lines() {
        let e = InitError::Connect {
            message: "connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: No such file or directory".into(),
        };
        assert_eq!(
            e.render("pgbench"),
            "pgbench: error: connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: No such file or directory\n\
             pgbench: error: could not create connection for initialization\n"
        );
    }

    #[test]
    fn copy_failures() {
        let end = InitError::CopyEnd {
            message: "ERROR:  new row violates check constraint \"c\"".into(),
        };
        assert_eq!(
            end.render("pgbench-rs"),
            "ERROR:  new row violates check constraint \"c\"\npgbench-rs: error: PQendcopy failed\n"
        );
        let data = InitError::CopyData {
            message: "server closed the connection unexpectedly".into(),
        };
        assert_eq!(
            data.render("pgbench"),
            "pgbench: error: PQputline failed\npgbench: detail: server closed the connection unexpectedly\n"
        );
        assert_eq!(
            InitError::CopyStart {
                message: "ERROR:  x".into()
            }
            .render("p"),
            "p: error: unexpected copy in result: ERROR:  x\n"
        );
        assert_eq!(end.exit_code(), 1);
        assert_eq!(
            InitError::UnknownStep('x').render("pgbench"),
            "pgbench: error: unrecognized initialization step \"x\"\n"
        );
    }
}
