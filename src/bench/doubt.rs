//! Transactions in doubt: when a connection is lost, could the server have committed
//! the transaction in flight? It could once a statement that commits was sent: a
//! `COMMIT`/`END` inside a transaction block, or any statement outside one (it
//! commits by itself, as do the statements of a pipeline or a multi-statement query
//! up to their sync). A loss after that leaves the transaction's work possibly
//! committed, so it is counted apart as **in doubt**: with these, a user can check
//! that successful ≤ rows ≤ successful + in doubt.
//!
//! Nothing of it is on the hot path: what each command of a script does to a
//! transaction block is read once ([`BlockEffect::of`]), and the script is walked
//! once in order, from outside any block, to mark which commands commit when sent
//! and which have a committing command before them ([`ScriptDoubt`]). A loss then
//! looks up the command it happened at. Commands of a `\if` branch not taken are
//! walked like the others: they can only make a loss count as in doubt, the safe
//! side for a count of what may have been committed.

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
        // the side of "may commit".
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

/// For each command of a script: whether sending it may commit, and whether a
/// command before it in the script may have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptDoubt {
    commits_here: Vec<bool>,
    committed_before: Vec<bool>,
}

impl ScriptDoubt {
    /// From each command's effect (`None`: a meta-command, which sends nothing that
    /// commits), walked in order from outside any block.
    pub fn new(effects: impl IntoIterator<Item = Option<BlockEffect>>) -> ScriptDoubt {
        let mut d = ScriptDoubt::default();
        let (mut in_block, mut before) = (false, false);
        for effect in effects {
            let here = match effect {
                None => false,
                Some(BlockEffect::Opens) => {
                    in_block = true;
                    false
                }
                Some(BlockEffect::Closes) => std::mem::replace(&mut in_block, false),
                Some(BlockEffect::Other) => !in_block,
                Some(BlockEffect::Compound) => true,
            };
            d.commits_here.push(here);
            d.committed_before.push(before);
            before |= here;
        }
        d
    }

    /// Whether a transaction lost (or cut short) at command `index` may have
    /// committed something: a command before it did, or this one did and was sent
    /// (`in_flight`) and not refused by the server.
    pub fn in_doubt(&self, index: usize, in_flight: bool, refused: bool) -> bool {
        let get = |v: &[bool]| v.get(index).copied().unwrap_or(false);
        get(&self.committed_before) || (in_flight && !refused && get(&self.commits_here))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BlockEffect::{Closes, Compound, Opens, Other};

    #[test]
    fn commands_are_read_by_their_first_keyword() {
        for (text, effect) in [
            ("BEGIN;", Opens),
            ("begin transaction isolation level serializable;", Opens),
            ("START TRANSACTION;", Opens),
            ("END;", Closes),
            ("commit", Closes),
            ("COMMIT AND CHAIN;", Closes),
            ("INSERT INTO t VALUES (1);", Other),
            ("SELECT 1", Other),
            ("ending_soon();", Other),
            ("BEGIN; INSERT INTO t VALUES (1); COMMIT;", Compound),
            ("  UPDATE t SET a = 1;  ", Other),
        ] {
            assert_eq!(BlockEffect::of(text), effect, "{text}");
        }
    }

    #[test]
    fn in_a_block_only_its_commit_commits() {
        // \set, BEGIN, UPDATE, SELECT, END
        let d = ScriptDoubt::new([None, Some(Opens), Some(Other), Some(Other), Some(Closes)]);
        for index in 0..4 {
            assert!(!d.in_doubt(index, true, false), "{index}");
        }
        assert!(d.in_doubt(4, true, false));
        // refused, or never sent: nothing committed
        assert!(!d.in_doubt(4, true, true));
        assert!(!d.in_doubt(4, false, false));
    }

    #[test]
    fn outside_a_block_each_statement_commits_and_stays_committed() {
        let d = ScriptDoubt::new([Some(Other), Some(Other)]);
        assert!(d.in_doubt(0, true, false));
        assert!(!d.in_doubt(0, true, true));
        // the first one completed before the second was sent
        assert!(d.in_doubt(1, true, true));
        assert!(d.in_doubt(1, false, false));
    }

    #[test]
    fn a_compound_query_commits_wherever_it_stands() {
        let d = ScriptDoubt::new([Some(Opens), Some(Compound), Some(Closes)]);
        assert!(d.in_doubt(1, true, false));
        assert!(d.in_doubt(2, false, false));
        // a COMMIT with no block open commits nothing
        let d = ScriptDoubt::new([Some(Closes)]);
        assert!(!d.in_doubt(0, true, false));
    }
}
