//! The mark of a complete TPC-C load. A load over several connections cannot be one
//! transaction (and vacuum runs outside any), so it says how far it got instead: the
//! comment on table `warehouse`, which the load's first step drops with the table,
//! reads "incomplete" as soon as the tables exist and "complete" only after the last
//! step. A run and `--check` refuse tables without the complete mark, so a load cut
//! short (by Ctrl-C, an error, a lost connection) is never taken for a whole one.

use pgbench_wire::{ConnectArgs, Connection};

use super::schema::TABLES;
use crate::workload::hint;

/// What the comment on `warehouse` starts with.
const PREFIX: &str = "pgbench-rs tpcc load of ";

/// The comment a load of `warehouses` leaves, `complete` or not yet.
pub fn mark_sql(warehouses: i32, complete: bool) -> String {
    let state = if complete { "complete" } else { "incomplete" };
    format!("comment on table warehouse is '{PREFIX}{warehouses} warehouses: {state}'")
}

/// What the database holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Load {
    /// A table of the workload does not exist (the first one missing).
    Missing(&'static str),
    /// A load of this many warehouses (if known) that did not complete, or tables
    /// without a mark (loaded by something else, or by a pgbench-rs before the mark).
    Incomplete(Option<i32>),
    /// A complete load of this many warehouses.
    Complete(i32),
}

/// Reads the tables and the mark.
pub fn read(conn: &mut Connection) -> Result<Load, String> {
    let names: Vec<String> = TABLES.iter().map(|t| format!("'{t}'")).collect();
    let sql = format!(
        "select (select n from unnest(array[{}]) with ordinality u(t, n) \
                  where pg_catalog.to_regclass(t) is null order by n limit 1), \
                pg_catalog.obj_description(pg_catalog.to_regclass('warehouse'), 'pg_class')",
        names.join(", ")
    );
    let rows = conn.query_rows(&sql).map_err(|e| {
        // The server's message alone: its caret block would split the line.
        e.db_error()
            .map_or_else(|| e.to_string(), |d| d.message.clone())
    })?;
    let row = rows.first().cloned().unwrap_or_default();
    let cell = |i: usize| row.get(i).cloned().flatten();
    if let Some(n) = cell(0).and_then(|n| n.parse::<usize>().ok()) {
        return Ok(Load::Missing(
            TABLES[n.saturating_sub(1).min(TABLES.len() - 1)],
        ));
    }
    Ok(parse(cell(1).as_deref()))
}

/// The state a comment on `warehouse` says.
fn parse(comment: Option<&str>) -> Load {
    let Some(rest) = comment.and_then(|c| c.strip_prefix(PREFIX)) else {
        return Load::Incomplete(None);
    };
    let Some((count, state)) = rest.split_once(" warehouses: ") else {
        return Load::Incomplete(None);
    };
    match (count.parse::<i32>().ok(), state) {
        (Some(w), "complete") => Load::Complete(w),
        (w, _) => Load::Incomplete(w),
    }
}

/// Before a run: the warehouses of a complete load, else what to do, with the
/// command to run (`target`: the connection options the user gave).
pub fn require_complete(conn: &mut Connection, target: &ConnectArgs) -> Result<i32, String> {
    match read(conn)? {
        Load::Complete(w) => Ok(w),
        other => Err(unfinished(conn).unwrap_or_else(|| refusal(&other, target))),
    }
}

/// An unfinished resumable load (`--resume`, `--shard`): what it is and how to
/// finish it.
pub fn unfinished(conn: &mut Connection) -> Option<String> {
    crate::init::resume::unfinished(conn, crate::init::resume::TPCC)
}

/// Why tables that are not a complete load are refused, and what to run.
pub fn refusal(load: &Load, target: &ConnectArgs) -> String {
    let scale = |w: &Option<i32>| w.map_or("WAREHOUSES".to_string(), |w| w.to_string());
    let command =
        |w: &Option<i32>| hint::prepare_command(super::NAME, &format!("-s {}", scale(w)), target);
    match load {
        Load::Missing(table) => format!(
            "table \"{table}\" of workload tpcc does not exist; run \"{}\" first",
            command(&None)
        ),
        Load::Incomplete(Some(w)) => format!(
            "the tpcc load did not complete: run \"{}\" again",
            command(&Some(*w))
        ),
        Load::Incomplete(None) => format!(
            "the tpcc tables bear no mark of a complete load by -i --workload=tpcc: run \"{}\"",
            command(&None)
        ),
        Load::Complete(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_reads_back_as_written() {
        let comment = |sql: String| {
            let quoted = sql.split_once(" is '").unwrap().1;
            quoted.strip_suffix('\'').unwrap().to_string()
        };
        assert_eq!(
            parse(Some(&comment(mark_sql(12, true)))),
            Load::Complete(12)
        );
        assert_eq!(
            parse(Some(&comment(mark_sql(3, false)))),
            Load::Incomplete(Some(3))
        );
        assert_eq!(parse(None), Load::Incomplete(None));
        assert_eq!(parse(Some("my warehouses")), Load::Incomplete(None));
    }

    #[test]
    fn a_refusal_says_what_to_run() {
        let p = crate::logging::progname();
        let target = ConnectArgs {
            port: Some("5433".into()),
            dbname: Some("tpcc".into()),
            ..ConnectArgs::default()
        };
        assert_eq!(
            refusal(&Load::Incomplete(Some(4)), &target),
            format!(
                "the tpcc load did not complete: run \"{p} -i --workload=tpcc -s 4 -p 5433 tpcc\" again"
            )
        );
        assert_eq!(
            refusal(&Load::Missing("warehouse"), &target),
            format!(
                "table \"warehouse\" of workload tpcc does not exist; run \
                 \"{p} -i --workload=tpcc -s WAREHOUSES -p 5433 tpcc\" first"
            )
        );
    }
}
