//! libpq's limits on what a server message may be, before and after start-up: which
//! types may be long, how long the others may be, and what libpq says when one is
//! out of bounds. A leaf: both the start-up reader and the connection use it.

/// libpq's bound on an error during authentication, and on every message type that
/// is not allowed to be long (`VALID_LONG_MESSAGE_TYPE`).
pub(crate) const MAX_SHORT_LEN: usize = 30000;

/// Message types that may exceed `MAX_SHORT_LEN` (libpq's `VALID_LONG_MESSAGE_TYPE`).
#[inline]
pub(crate) fn may_be_long(tag: u8) -> bool {
    matches!(tag, b'T' | b'D' | b'd' | b'V' | b'E' | b'N' | b'A')
}

/// libpq's `handleSyncLoss` text.
pub(crate) fn sync_lost(tag: u8, len: usize) -> String {
    format!(
        "lost synchronization with server: got message type \"{}\", length {len}",
        char::from(tag)
    )
}
