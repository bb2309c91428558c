//! `pg_stat_statements`' top statements by `total_exec_time` over the window: each
//! statement's change from the window's start to its end, under the extension's own
//! column names. The run's own only (the sampler keeps no other session's, nor its
//! own), each with its script's text.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many statements a run keeps.
pub const TOP: usize = 10;

/// One statement (by `userid`, `queryid` and, from 14, `toplevel`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    pub queryid: i64,
    /// The run's script's text of it (variables as `$1`, ...): never the server's.
    pub query: String,
    /// Milliseconds.
    pub total_exec_time: f64,
    /// `calls`, `rows`, `shared_blks_hit`, `shared_blks_read` and (extension 1.8 on)
    /// `wal_bytes`: the change over the window.
    #[serde(flatten)]
    pub counts: BTreeMap<String, i64>,
}

/// A statement as read, with the key that tells it from the others.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    pub key: String,
    pub statement: Statement,
}

/// The `top` statements by their change of `total_exec_time` from `start` to `end`
/// (one new at the end counts from zero; one whose figures fell was reset or evicted
/// meanwhile and is left out), largest first.
pub fn top(start: &[Read], end: &[Read], top: usize) -> Vec<Statement> {
    let before: BTreeMap<&str, &Statement> = start
        .iter()
        .map(|r| (r.key.as_str(), &r.statement))
        .collect();
    let mut out: Vec<Statement> = end
        .iter()
        .filter_map(|r| {
            let e = &r.statement;
            let was = before.get(r.key.as_str());
            let counts = super::change(was.map(|s| &s.counts), &e.counts);
            let time = e.total_exec_time - was.map_or(0.0, |s| s.total_exec_time);
            let calls = counts.get("calls").copied().unwrap_or(0);
            (calls > 0 && counts.values().all(|v| *v >= 0)).then(|| Statement {
                queryid: e.queryid,
                query: e.query.clone(),
                total_exec_time: time,
                counts,
            })
        })
        .collect();
    out.sort_by(|a, b| b.total_exec_time.total_cmp(&a.total_exec_time));
    out.truncate(top);
    out
}

/// How many of the top statements the `server:` block prints.
const PRINTED: usize = 5;
/// How much of a statement's text it prints.
const TEXT: usize = 60;

/// The `server:` block's lines of the top statements.
pub fn render(statements: &[Statement]) -> String {
    if statements.is_empty() {
        return "  top statements: none ran in the window\n".into();
    }
    let mut out = String::from("  top statements by total_exec_time:\n");
    for s in statements.iter().take(PRINTED) {
        let text: String = s.query.split_whitespace().collect::<Vec<_>>().join(" ");
        let short: String = text.chars().take(TEXT).collect();
        let more = if short.len() < text.len() { "..." } else { "" };
        let get = |c: &str| s.counts.get(c).copied().unwrap_or(0);
        out.push_str(&format!(
            "    {:.3} ms, calls {}, rows {}: {short}{more}\n",
            s.total_exec_time,
            get("calls"),
            get("rows")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(key: &str, time: f64, calls: i64) -> Read {
        Read {
            key: key.into(),
            statement: Statement {
                queryid: key.len() as i64,
                query: format!("select {key}"),
                total_exec_time: time,
                counts: [("calls".to_string(), calls)].into(),
            },
        }
    }

    #[test]
    fn the_top_are_by_time_spent_in_the_window_without_idle_or_reset_ones() {
        let start = [
            read("a", 100.0, 10),
            read("b", 5.0, 1),
            read("c", 50.0, 50),
            read("d", 1.0, 1),
        ];
        let end = [
            read("a", 101.0, 11),
            read("b", 25.0, 3),
            read("c", 2.0, 2),
            read("d", 1.0, 1),
            read("e", 3.0, 4),
        ];
        let t = top(&start, &end, 2);
        let keys: Vec<(&str, i64)> = t
            .iter()
            .map(|s| (s.query.as_str(), s.counts["calls"]))
            .collect();
        assert_eq!(keys, [("select b", 2), ("select e", 4)]);
        assert_eq!(t[0].total_exec_time, 20.0);
        assert_eq!(top(&start, &end, 10).len(), 3);
    }
}
