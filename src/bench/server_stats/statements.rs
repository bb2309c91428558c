//! `pg_stat_statements`, when the extension is installed in the run's database: its
//! statements of the database read when the window begins and ends, the sampler's own
//! (marked with [`super::views::MARK`]) left out. The columns are the extension
//! version's: `total_exec_time` (1.8 on; `total_time` before), `wal_bytes` (1.8 on),
//! `toplevel` (1.9 on) in the key.

use super::views::MARK;
use super::Rows;
use pgbench_results::server::statements::{Read, Statement};
use pgbench_wire::Connection;

/// The counters read besides the time, under the extension's names.
const COUNTS: &[&str] = &["calls", "rows", "shared_blks_hit", "shared_blks_read"];

/// How the statements are read on this server.
pub struct Statements {
    pub query: String,
    counts: Vec<&'static str>,
}

fn quoted(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// Whether the extension is installed and readable here: `Ok(None)` when it is not
/// installed, `Err` with a note when it cannot be read.
pub fn probe(conn: &mut Connection) -> Result<Option<Statements>, String> {
    let short = |e: pgbench_wire::QueryError| super::short(&e);
    let schema = conn
        .query_rows(&super::views::marked(
            "select n.nspname from pg_catalog.pg_extension e \
             join pg_catalog.pg_namespace n on n.oid = e.extnamespace \
             where e.extname = 'pg_stat_statements'",
        ))
        .map_err(short)?;
    let Some(schema) = schema.first().and_then(|r| r.first().cloned().flatten()) else {
        return Ok(None);
    };
    let view = format!("{}.pg_stat_statements", quoted(&schema));
    let columns: Vec<String> = conn
        .query_rows(&super::views::marked(&format!(
            "select attname from pg_catalog.pg_attribute where attrelid = '{}'::regclass \
             and attnum > 0 and not attisdropped",
            view.replace('\'', "''")
        )))
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
    let query = super::views::marked(&format!(
        "select userid::text || ':' || coalesce(queryid, 0)::text || ':' || {toplevel}, \
         coalesce(queryid, 0), query, {time}, {} from {view} \
         where dbid = (select oid from pg_catalog.pg_database where datname = current_database()) \
         and query not like '{}%'",
        list.join(", "),
        MARK.replace('\'', "''")
    ));
    // Read once now, so that a library not preloaded is a note before the run.
    conn.query_rows(&query).map_err(short)?;
    Ok(Some(Statements { query, counts }))
}

impl Statements {
    /// The statements of [`Statements::query`]'s answer.
    pub fn parse(&self, rows: &Rows) -> Vec<Read> {
        rows.iter()
            .map(|r| {
                let text = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                Read {
                    key: text(0),
                    statement: Statement {
                        queryid: text(1).parse().unwrap_or(0),
                        query: text(2),
                        total_exec_time: text(3).parse().unwrap_or(0.0),
                        counts: self
                            .counts
                            .iter()
                            .enumerate()
                            .map(|(i, c)| (c.to_string(), text(4 + i).parse().unwrap_or(0)))
                            .collect(),
                    },
                }
            })
            .collect()
    }
}
