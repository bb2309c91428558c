//! How one connection attempt fails, and what libpq tries next: the next address or
//! host, the other TLS choice, or nothing. Shared by the connection steps (`connect`)
//! and authentication (`auth`), which both end an attempt this way, and the
//! `connect_timeout` deadline every step of an attempt is armed with.

use crate::error::{strerror, ConnError};
use crate::stream::Stream;
use std::time::Instant;

/// How a failed attempt continues.
pub(crate) enum Next {
    /// Try the next address or host.
    OtherHost,
    /// Try the next host, not this host's other addresses.
    SkipHost,
    /// Try the same address again with the other TLS choice (`allow`/`prefer`).
    RetrySsl,
    /// Give up (authentication and startup failures end the whole connection).
    Stop,
}

pub(crate) struct Failure {
    pub(crate) text: String,
    pub(crate) next: Next,
    pub(crate) needs_password: bool,
    /// The server sent an ErrorResponse before authentication completed (which
    /// `allow`/`prefer` answer with a retry).
    pub(crate) rejected_before_auth: bool,
}

impl Failure {
    pub(crate) fn new(text: impl Into<String>, next: Next) -> Failure {
        Failure {
            text: text.into(),
            next,
            needs_password: false,
            rejected_before_auth: false,
        }
    }
}

pub(crate) fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    )
}

pub(crate) fn timed_out() -> Failure {
    Failure::new("timeout expired", Next::OtherHost)
}

/// Gives the next blocking step what is left of `connect_timeout` (libpq's limit is for
/// the whole attempt on one address).
pub(crate) fn arm(stream: &Stream, deadline: Option<Instant>) -> Result<(), Failure> {
    let Some(deadline) = deadline else {
        return Ok(());
    };
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(timed_out());
    }
    stream
        .set_timeouts(Some(left))
        .map_err(|e| Failure::new(strerror(&e), Next::OtherHost))
}

/// A read failure during start-up: a timeout moves on to the next host.
pub(crate) fn read_failure(e: ConnError) -> Failure {
    match &e {
        ConnError::Receive(io) if is_timeout(io) => timed_out(),
        _ => Failure::new(e.to_string(), Next::Stop),
    }
}
