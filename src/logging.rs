//! pgbench's log lines: `<progname>: [error: |warning: |detail: |hint: ]<message>` on
//! stderr, as `pg_log_*` prints them. stdout is flushed first so the two streams
//! interleave as they do for pgbench; one trailing newline of a message is dropped, so
//! server errors print on one line.

use std::io::Write;
use std::sync::OnceLock;

static PROGNAME: OnceLock<String> = OnceLock::new();

/// Sets the program name used in every message: the basename of `argv[0]`, as pgbench's
/// `get_progname` gives it (a copy or symlink named `pgbench` prints `pgbench: ...`).
pub fn init_progname(argv0: &str) {
    let base = argv0.rsplit('/').next().unwrap_or(argv0);
    let _ = PROGNAME.set(base.to_string());
}

/// The program name for messages.
pub fn progname() -> &'static str {
    PROGNAME.get().map(String::as_str).unwrap_or("pgbench")
}

/// The level word of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Detail,
    Hint,
    /// `pg_log_info` and `pg_log_debug`: no level word.
    Info,
}

/// The text of one log line (with its newline), without printing it.
pub fn format_line(level: Level, msg: &str) -> String {
    line(progname(), level, msg)
}

/// [`format_line`] with the program name given.
pub fn line(progname: &str, level: Level, msg: &str) -> String {
    let word = match level {
        Level::Error => "error: ",
        Level::Warning => "warning: ",
        Level::Detail => "detail: ",
        Level::Hint => "hint: ",
        Level::Info => "",
    };
    let msg = msg.strip_suffix('\n').unwrap_or(msg);
    format!("{progname}: {word}{msg}\n")
}

/// Prints one log line to stderr in a single write (lines of several clients never mix).
pub fn log(level: Level, msg: &str) {
    let _ = std::io::stdout().flush();
    let line = format_line(level, msg);
    let _ = std::io::stderr().write_all(line.as_bytes());
}

pub fn error(msg: &str) {
    log(Level::Error, msg)
}

pub fn warning(msg: &str) {
    log(Level::Warning, msg)
}

pub fn detail(msg: &str) {
    log(Level::Detail, msg)
}

pub fn hint(msg: &str) {
    log(Level::Hint, msg)
}

pub fn info(msg: &str) {
    log(Level::Info, msg)
}

/// Writes already formatted text to stderr as it is (script error carets, `-b list`).
pub fn raw(text: &str) {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Where a run's lines go. The runner writes through one (the banner and the vacuum
/// lines, its clients' messages, the barrier's and the observers' notices, progress
/// lines), so that whoever runs it decides: the process's streams for a run of the
/// command line ([`ProcessOutput`]), something else for a test or a step of a sweep.
pub trait Output: Send + Sync {
    /// Text for stdout, as it is.
    fn stdout(&self, text: &str);
    /// Text for stderr, as it is (already formatted lines).
    fn stderr(&self, text: &str);

    /// One log line, `<progname>: [level: ]message`.
    fn log(&self, level: Level, msg: &str) {
        self.stderr(&format_line(level, msg));
    }
    fn error(&self, msg: &str) {
        self.log(Level::Error, msg)
    }
    fn warning(&self, msg: &str) {
        self.log(Level::Warning, msg)
    }
    fn detail(&self, msg: &str) {
        self.log(Level::Detail, msg)
    }
    fn info(&self, msg: &str) {
        self.log(Level::Info, msg)
    }
}

/// The process's stdout and stderr, each text in one write (stdout flushed before
/// stderr is written, so the two interleave as they do for pgbench).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessOutput;

impl Output for ProcessOutput {
    fn stdout(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    fn stderr(&self, text: &str) {
        raw(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_pgbench_prefixes() {
        init_progname("/usr/lib/postgresql/15/bin/pgbench");
        assert_eq!(format_line(Level::Error, "x\n"), "pgbench: error: x\n");
        assert_eq!(format_line(Level::Hint, "y"), "pgbench: hint: y\n");
        assert_eq!(format_line(Level::Info, "z"), "pgbench: z\n");
    }
}
