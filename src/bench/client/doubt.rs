//! Transactions in doubt: when a connection is lost, could the server have committed
//! the transaction in flight? It could once a statement that commits was sent: a
//! `COMMIT`/`END` inside a transaction block, or any statement outside one (it
//! commits by itself, as do the statements of a pipeline or a multi-statement query
//! up to their sync). A loss after that leaves the transaction's work possibly
//! committed, so it is counted apart as **in doubt**: with these, a user can check
//! that successful ≤ rows ≤ successful + in doubt.
//!
//! What each SQL command does to a transaction block is read once per script
//! ([`BlockEffect::of`]); whether its sending may commit is decided at each send
//! from the connection's transaction status then ([`may_commit`]), and what the
//! transaction has sent so far is kept as a [`Doubt`]. A server that answers the
//! statement in flight with an error did not commit it; one that went away without
//! a word may have.

use pgbench_wire::TransactionStatus;

/// What a transaction has sent so far that may commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Doubt {
    /// Nothing: a loss now leaves nothing of it committed.
    #[default]
    None,
    /// The statement in flight may commit (a pipeline's statements not yet synced
    /// count as in flight).
    InFlight,
    /// A statement that may commit was sent and another after it: the first
    /// completed, so something of the transaction may be committed whatever happens
    /// to the rest.
    Sent,
}

impl Doubt {
    /// The state after sending a statement; `may_commit` says whether it may commit
    /// (asked only while nothing is known to be sent).
    #[inline]
    pub fn after_send(self, may_commit: impl FnOnce() -> bool) -> Doubt {
        match self {
            Doubt::Sent | Doubt::InFlight => Doubt::Sent,
            Doubt::None if may_commit() => Doubt::InFlight,
            Doubt::None => Doubt::None,
        }
    }

    /// Whether a transaction lost now is in doubt: `refused` when the server
    /// answered the statement in flight with an error (it did not commit it).
    pub fn in_doubt(self, refused: bool) -> bool {
        match self {
            Doubt::None => false,
            Doubt::InFlight => !refused,
            Doubt::Sent => true,
        }
    }
}

/// What an SQL command does to a transaction block, by its first keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockEffect {
    /// `BEGIN` or `START TRANSACTION`: opens a block, commits nothing.
    Opens,
    /// `COMMIT` or `END`: commits the open block.
    Closes,
    /// Any other single statement: commits by itself outside a block.
    Other,
    /// Several statements in one query (`\;`): an implicit transaction that commits
    /// at its end whatever its first statement is.
    Compound,
}

impl BlockEffect {
    /// The effect of an SQL command's text (as the script keeps it: leading
    /// whitespace and comment lines removed, its `;` kept).
    pub fn of(text: &str) -> BlockEffect {
        let body = text.trim().trim_end_matches(';').trim_end();
        // A `;` inside is read as a second statement: a literal holding one errs on
        // the side of "may commit", which is the safe side for a count of doubts.
        if body.contains(';') {
            return BlockEffect::Compound;
        }
        let first = body
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or("");
        let is = |word: &str| first.eq_ignore_ascii_case(word);
        if is("begin") || is("start") {
            BlockEffect::Opens
        } else if is("commit") || is("end") {
            BlockEffect::Closes
        } else {
            BlockEffect::Other
        }
    }
}

/// Whether sending a command with `effect`, on a connection whose transaction status
/// before the send is `status`, may commit something. A status the client cannot
/// read exactly (a pipeline under way, a broken connection) counts as "may".
pub fn may_commit(effect: BlockEffect, status: TransactionStatus) -> bool {
    match effect {
        BlockEffect::Opens => false,
        BlockEffect::Closes => status != TransactionStatus::Idle,
        BlockEffect::Other => !matches!(
            status,
            TransactionStatus::InTransaction | TransactionStatus::InError
        ),
        BlockEffect::Compound => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TransactionStatus::{Active, Idle, InError, InTransaction};

    #[test]
    fn commands_are_read_by_their_first_keyword() {
        for (text, effect) in [
            ("BEGIN;", BlockEffect::Opens),
            (
                "begin transaction isolation level serializable;",
                BlockEffect::Opens,
            ),
            ("START TRANSACTION;", BlockEffect::Opens),
            ("END;", BlockEffect::Closes),
            ("commit", BlockEffect::Closes),
            ("COMMIT AND CHAIN;", BlockEffect::Closes),
            ("INSERT INTO t VALUES (1);", BlockEffect::Other),
            ("SELECT 1", BlockEffect::Other),
            ("ending_soon();", BlockEffect::Other),
            (
                "BEGIN; INSERT INTO t VALUES (1); COMMIT;",
                BlockEffect::Compound,
            ),
            ("  UPDATE t SET a = 1;  ", BlockEffect::Other),
        ] {
            assert_eq!(BlockEffect::of(text), effect, "{text}");
        }
    }

    #[test]
    fn a_transaction_is_in_doubt_once_what_may_commit_was_sent_unless_refused() {
        let begin = Doubt::None.after_send(|| false);
        assert_eq!(begin, Doubt::None);
        assert!(!begin.in_doubt(false));
        let commit = begin.after_send(|| true);
        assert_eq!(commit, Doubt::InFlight);
        // gone without a word: may have committed; refused: did not
        assert!(commit.in_doubt(false) && !commit.in_doubt(true));
        // autocommit statements: the first completed before the second was sent
        let second = commit.after_send(|| panic!("not asked once something was sent"));
        assert_eq!(second, Doubt::Sent);
        assert!(second.in_doubt(true));
    }

    #[test]
    fn what_may_commit_depends_on_the_block_it_is_sent_in() {
        // outside a block, every statement but BEGIN commits by itself
        assert!(may_commit(BlockEffect::Other, Idle));
        assert!(!may_commit(BlockEffect::Opens, Idle));
        assert!(!may_commit(BlockEffect::Closes, Idle));
        // inside one, only its COMMIT
        assert!(!may_commit(BlockEffect::Other, InTransaction));
        assert!(may_commit(BlockEffect::Closes, InTransaction));
        assert!(!may_commit(BlockEffect::Other, InError));
        // a failed block's COMMIT rolls back, but the client cannot tell it from the
        // reply it never got: counted
        assert!(may_commit(BlockEffect::Closes, InError));
        // a pipeline under way: not known exactly, counted
        assert!(may_commit(BlockEffect::Other, Active));
        assert!(may_commit(BlockEffect::Compound, InTransaction));
    }
}
