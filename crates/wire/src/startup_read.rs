//! Reading the server's messages during start-up, before the session is trusted to be
//! PostgreSQL: libpq's checks on message types and lengths (`PQconnectPoll`'s
//! CONNECTION_AWAITING_RESPONSE and CONNECTION_AUTH_OK), and `connect_timeout` as one
//! deadline over every read. Nothing is allocated from a length the peer sent: the read
//! buffer only grows as bytes actually arrive.

use std::time::Instant;

use crate::attempt::{arm, read_failure, Failure, Next};
use crate::conn::Connection;
use crate::message_caps::{may_be_long, sync_lost, MAX_SHORT_LEN};

/// Where start-up is, which decides what the server may send.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Before AuthenticationOk: only an authentication request or an error.
    Authenticating,
    /// After AuthenticationOk: parameters, key data, notices, an error, ReadyForQuery.
    Authenticated,
}

/// libpq's bound on an authentication request (GSS ones may not be that small).
const MAX_AUTH_LEN: usize = 2000;
fn refuse(text: String) -> Failure {
    Failure::new(text, Next::Stop)
}

impl Connection {
    /// The next start-up message, (type, body start, body end) in the read buffer, checked as
    /// libpq checks it; every wait for bytes ends at `deadline`.
    pub(crate) fn startup_message(
        &mut self,
        phase: Phase,
        deadline: Option<Instant>,
    ) -> Result<(u8, usize, usize), Failure> {
        loop {
            let unread = self.read.unread();
            if let Some(&tag) = unread.first() {
                // Anything else probably means it is not PostgreSQL at the other end.
                if phase == Phase::Authenticating && tag != b'R' && tag != b'E' {
                    return Err(not_an_auth_request(tag));
                }
            }
            if let Some((tag, len)) = self.read.header() {
                match phase {
                    Phase::Authenticating if tag == b'R' && !(8..=MAX_AUTH_LEN).contains(&len) => {
                        return Err(not_an_auth_request(tag));
                    }
                    // A huge "length" in an error is a pre-3.0 server's plain text.
                    Phase::Authenticating if tag == b'E' && !(8..=MAX_SHORT_LEN).contains(&len) => {
                        return Err(self.old_protocol_error(deadline));
                    }
                    Phase::Authenticated
                        if len < 4 || (len > MAX_SHORT_LEN && !may_be_long(tag)) =>
                    {
                        return Err(refuse(sync_lost(tag, len)));
                    }
                    _ => {}
                }
                if self.read.unread().len() > len {
                    let (start, end) = self.read.take(len);
                    return Ok((tag, start, end));
                }
            }
            arm(&self.stream, deadline)?;
            self.fill().map_err(read_failure)?;
        }
    }

    /// A pre-3.0 server's error: text up to a NUL (or the end of what it sends, at most
    /// `MAX_SHORT_LEN` bytes) after the `E`.
    fn old_protocol_error(&mut self, deadline: Option<Instant>) -> Failure {
        loop {
            let text = &self.read.unread()[1..];
            let end = text.iter().position(|&b| b == 0);
            if end.is_some() || text.len() >= MAX_SHORT_LEN {
                let text = &text[..end.unwrap_or(text.len()).min(MAX_SHORT_LEN)];
                let text = String::from_utf8_lossy(text);
                return refuse(text.trim_end_matches('\n').to_string());
            }
            if let Err(f) = arm(&self.stream, deadline) {
                return f;
            }
            if let Err(e) = self.fill() {
                return read_failure(e);
            }
        }
    }
}

fn not_an_auth_request(tag: u8) -> Failure {
    refuse(format!(
        "expected authentication request from server, but received {}",
        char::from(tag)
    ))
}
