//! `pg_stat_io` (PostgreSQL 16 on) by `backend_type`, `object` and `context`: each
//! row's change over the window, under the view's own column names. The window's and
//! each second's totals are in the counters (`pg_stat_io.reads`, ...), summed over the
//! relation objects (`relation`, `temp relation`), whose counts are all 8 kB blocks.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The columns read, as 16 to 19 name them.
pub const COLUMNS: &[&str] = &["reads", "writes", "extends", "hits", "evictions", "fsyncs"];

/// One row of `pg_stat_io`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoRow {
    pub backend_type: String,
    pub object: String,
    pub context: String,
    /// The [`COLUMNS`]' figures (their change, in [`super::ServerStats::io`]).
    #[serde(flatten)]
    pub counts: BTreeMap<String, i64>,
}

impl IoRow {
    fn key(&self) -> (&str, &str, &str) {
        (&self.backend_type, &self.object, &self.context)
    }
}

/// The change of each row from `start` to `end`, leaving out rows that did not
/// change; in `end`'s order (a row new at the end counts from zero).
pub fn delta(start: &[IoRow], end: &[IoRow]) -> Vec<IoRow> {
    end.iter()
        .filter_map(|e| {
            let was = start.iter().find(|s| s.key() == e.key());
            let counts = super::change(was.map(|s| &s.counts), &e.counts);
            counts.values().any(|v| *v != 0).then(|| IoRow {
                backend_type: e.backend_type.clone(),
                object: e.object.clone(),
                context: e.context.clone(),
                counts,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(backend: &str, context: &str, reads: i64, hits: i64) -> IoRow {
        IoRow {
            backend_type: backend.into(),
            object: "relation".into(),
            context: context.into(),
            counts: [("reads".to_string(), reads), ("hits".to_string(), hits)].into(),
        }
    }

    #[test]
    fn rows_change_by_their_key_and_unchanged_rows_are_left_out() {
        let start = [
            row("client backend", "normal", 10, 100),
            row("checkpointer", "normal", 5, 0),
        ];
        let end = [
            row("client backend", "normal", 12, 180),
            row("checkpointer", "normal", 5, 0),
            row("autovacuum worker", "vacuum", 3, 1),
        ];
        let d = delta(&start, &end);
        assert_eq!(
            d,
            [
                row("client backend", "normal", 2, 80),
                row("autovacuum worker", "vacuum", 3, 1)
            ]
        );
    }
}
