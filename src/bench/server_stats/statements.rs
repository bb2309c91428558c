//! `pg_stat_statements`, when the extension is installed in the run's database: the
//! run's own statements read when the window begins and ends. Only the run's own: of
//! its role, and of the shape of a statement of its scripts ([`super::shape`]); what
//! other sessions ran is never read into the results, and a statement's text is the
//! script's, never the server's (which keeps a utility statement's verbatim, an
//! `ALTER ROLE ... PASSWORD '...'` included). The columns are the extension version's:
//! `total_exec_time` (1.8 on; `total_time` before), `wal_bytes` (1.8 on), `toplevel`
//! (1.9 on) in the key.

use super::shape::Shape;
use crate::bench::window::watched::{short, Rows, Watched};
use pgbench_results::server::statements::{Read, Statement};
use std::collections::HashMap;

/// The counters read besides the time, under the extension's names.
const COUNTS: &[&str] = &["calls", "rows", "shared_blks_hit", "shared_blks_read"];

/// How the statements are read on this server, and the run's own.
pub struct Statements {
    pub query: String,
    counts: Vec<&'static str>,
    /// The text of each statement of the run's scripts, by its shape.
    shapes: HashMap<Vec<String>, String>,
}

fn quoted(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// Whether the extension is installed and readable here: `Ok(None)` when it is not
/// installed, `Err` with a note when it cannot be read. `scripts`: the statements of
/// the run's scripts.
pub fn probe(conn: &mut Watched, scripts: &[Shape]) -> Result<Option<Statements>, String> {
    let short = |e: pgbench_wire::QueryError| short(&e);
    let schema = conn
        .query(
            "select n.nspname from pg_catalog.pg_extension e \
             join pg_catalog.pg_namespace n on n.oid = e.extnamespace \
             where e.extname = 'pg_stat_statements'",
        )
        .map_err(short)?;
    let Some(schema) = schema.first().and_then(|r| r.first().cloned().flatten()) else {
        return Ok(None);
    };
    let view = format!("{}.pg_stat_statements", quoted(&schema));
    let columns: Vec<String> = conn
        .query(&format!(
            "select attname from pg_catalog.pg_attribute where attrelid = '{}'::regclass \
             and attnum > 0 and not attisdropped",
            view.replace('\'', "''")
        ))
        .map_err(short)?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    let has = |c: &str| columns.iter().any(|x| x == c);
    let time = if has("total_exec_time") {
        "total_exec_time"
    } else {
        "total_time"
    };
    let toplevel = if has("toplevel") {
        "toplevel::text"
    } else {
        "''"
    };
    let mut counts = COUNTS.to_vec();
    if has("wal_bytes") {
        counts.push("wal_bytes");
    }
    let list: Vec<String> = counts
        .iter()
        .map(|c| format!("coalesce({c}, 0)::bigint"))
        .collect();
    // The run's role's statements of the run's database, not the watchers' own (by
    // their mark, see `Watched`).
    let query = format!(
        "select userid::text || ':' || coalesce(queryid, 0)::text || ':' || {toplevel}, \
         coalesce(queryid, 0), query, {time}, {} from {view} \
         where dbid = (select oid from pg_catalog.pg_database where datname = current_database()) \
         and userid = (select oid from pg_catalog.pg_roles where rolname = current_user) \
         and query not like '/* pgbench-rs %'",
        list.join(", "),
    );
    // Read once now, so that a library not preloaded is a note before the run.
    conn.query(&query).map_err(short)?;
    let shapes = scripts
        .iter()
        .map(|s| (s.tokens.clone(), s.text.clone()))
        .collect();
    Ok(Some(Statements {
        query,
        counts,
        shapes,
    }))
}

impl Statements {
    /// The run's statements of [`Statements::query`]'s answer, with the scripts' text.
    pub fn parse(&self, rows: &Rows) -> Vec<Read> {
        rows.iter()
            .filter_map(|r| {
                let text = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                let shapes = super::shape::shapes(&text(2));
                let [shape] = shapes.as_slice() else {
                    return None;
                };
                let query = self.shapes.get(&shape.tokens)?.clone();
                Some(Read {
                    key: text(0),
                    statement: Statement {
                        queryid: text(1).parse().unwrap_or(0),
                        query,
                        total_exec_time: text(3).parse().unwrap_or(0.0),
                        counts: self
                            .counts
                            .iter()
                            .enumerate()
                            .map(|(i, c)| (c.to_string(), text(4 + i).parse().unwrap_or(0)))
                            .collect(),
                    },
                })
            })
            .collect()
    }
}
