//! Error types of the connection layer: `ConnError` (libpq's `PQerrorMessage` texts for
//! connection set-up and transport failures) and `DbError` (a server ErrorResponse or
//! NoticeResponse, displayed the way libpq's default-verbosity formatter prints it).
//!
//! Neither type ever carries a password: connection errors are built from host, port,
//! socket and server texts only.

use std::fmt;
use std::io;

/// Failure to connect, or failure of the transport once connected.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    /// A connection option could not be parsed or is invalid (libpq's wording, e.g.
    /// `invalid connection option "foo"`).
    #[error("{0}")]
    Options(String),
    /// Every host was tried and none accepted; `message` is what libpq accumulates
    /// (one or more `connection to server ... failed: ...` lines).
    #[error("{message}")]
    Connect {
        /// The accumulated message, without trailing newline.
        message: String,
        /// The server asked for a password and none was available
        /// (libpq's `PQconnectionNeedsPassword`).
        needs_password: bool,
    },
    /// The server closed the connection (EOF or ECONNRESET).
    #[error("server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n\tbefore or while processing the request.")]
    Closed,
    /// Reading from the socket failed.
    #[error("could not receive data from server: {}", strerror(.0))]
    Receive(io::Error),
    /// Writing to the socket failed.
    #[error("could not send data to server: {}", strerror(.0))]
    Send(io::Error),
    /// The server sent something the protocol does not allow here.
    #[error("{0}")]
    Protocol(String),
    /// The call is not allowed in the connection's current state
    /// (e.g. `another command is already in progress`).
    #[error("{0}")]
    Usage(String),
}

impl ConnError {
    /// True when the server wanted a password and none was supplied; pgbench then
    /// prompts `Password: ` and tries again.
    pub fn needs_password(&self) -> bool {
        matches!(
            self,
            ConnError::Connect {
                needs_password: true,
                ..
            }
        )
    }

    pub(crate) fn from_read(e: io::Error) -> ConnError {
        match e.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => ConnError::Closed,
            _ => ConnError::Receive(e),
        }
    }

    pub(crate) fn from_write(e: io::Error) -> ConnError {
        match e.kind() {
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => ConnError::Closed,
            _ => ConnError::Send(e),
        }
    }
}

/// The C library's text for an I/O error, without Rust's ` (os error N)` suffix, as
/// libpq prints it with `strerror` (and pgbench with `%m`).
pub fn strerror(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

/// A server error or notice (ErrorResponse / NoticeResponse fields).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbError {
    /// Localized severity (`S`), e.g. `ERROR`, `FATAL`, `NOTICE`.
    pub severity: String,
    /// SQLSTATE code (`C`), e.g. `40001`.
    pub code: String,
    /// Primary message (`M`).
    pub message: String,
    /// `D` field.
    pub detail: Option<String>,
    /// `H` field.
    pub hint: Option<String>,
    /// `P` field: 1-based character position in the query text.
    pub position: Option<u32>,
    /// `p` field: position in `internal_query`.
    pub internal_position: Option<u32>,
    /// `q` field.
    pub internal_query: Option<String>,
    /// `W` field (`CONTEXT:` line).
    pub context: Option<String>,
    /// `s` field.
    pub schema: Option<String>,
    /// `t` field.
    pub table: Option<String>,
    /// `c` field.
    pub column: Option<String>,
    /// `d` field.
    pub datatype: Option<String>,
    /// `n` field.
    pub constraint: Option<String>,
    /// The query text the error refers to, when libpq would know it (simple query,
    /// unnamed extended query, prepare); used for the `LINE n:` cursor display.
    pub query: Option<String>,
    /// True for an ErrorResponse, false for a NoticeResponse (libpq shows `CONTEXT:`
    /// only for errors).
    pub is_error: bool,
}

impl DbError {
    /// Parses the fields of an ErrorResponse or NoticeResponse body.
    pub(crate) fn parse(body: &[u8], is_error: bool) -> DbError {
        let mut err = DbError {
            is_error,
            ..DbError::default()
        };
        let mut rest = body;
        while let Some((&kind, after)) = rest.split_first() {
            if kind == 0 {
                break;
            }
            let end = after.iter().position(|&b| b == 0).unwrap_or(after.len());
            let value = String::from_utf8_lossy(&after[..end]).into_owned();
            rest = after.get(end + 1..).unwrap_or(&[]);
            match kind {
                b'S' => err.severity = value,
                b'V' if err.severity.is_empty() => err.severity = value,
                b'C' => err.code = value,
                b'M' => err.message = value,
                b'D' => err.detail = Some(value),
                b'H' => err.hint = Some(value),
                b'P' => err.position = value.parse().ok(),
                b'p' => err.internal_position = value.parse().ok(),
                b'q' => err.internal_query = Some(value),
                b'W' => err.context = Some(value),
                b's' => err.schema = Some(value),
                b't' => err.table = Some(value),
                b'c' => err.column = Some(value),
                b'd' => err.datatype = Some(value),
                b'n' => err.constraint = Some(value),
                _ => {}
            }
        }
        err
    }

    /// The SQLSTATE code.
    pub fn code(&self) -> &str {
        &self.code
    }
}

/// Like libpq's `pqBuildErrorMessage3` at default verbosity, without the final newline.
impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::with_capacity(64 + self.message.len());
        if !self.severity.is_empty() {
            out.push_str(&self.severity);
            out.push_str(":  ");
        }
        out.push_str(&self.message);
        let mut cursor: Option<(&str, u32)> = None;
        if let Some(pos) = self.position {
            match &self.query {
                Some(q) => cursor = Some((q, pos)),
                None => out.push_str(&format!(" at character {pos}")),
            }
        } else if let Some(pos) = self.internal_position {
            match &self.internal_query {
                Some(q) => cursor = Some((q, pos)),
                None => out.push_str(&format!(" at character {pos}")),
            }
        }
        out.push('\n');
        if let Some((query, pos)) = cursor {
            if pos > 0 {
                crate::position::report_error_position(&mut out, query, pos as usize);
            }
        }
        if let Some(d) = &self.detail {
            out.push_str(&format!("DETAIL:  {d}\n"));
        }
        if let Some(h) = &self.hint {
            out.push_str(&format!("HINT:  {h}\n"));
        }
        if let Some(q) = &self.internal_query {
            out.push_str(&format!("QUERY:  {q}\n"));
        }
        if self.is_error {
            if let Some(c) = &self.context {
                out.push_str(&format!("CONTEXT:  {c}\n"));
            }
        }
        f.write_str(out.strip_suffix('\n').unwrap_or(&out))
    }
}

impl std::error::Error for DbError {}
