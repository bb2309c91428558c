//! `--check` without `--workload`: whether pgbench's tables are a whole load, a line
//! each: no unfinished resumable load ([`super::resume`]), the rows of branches,
//! tellers and accounts against the scale `pgbench_branches` says (history grows with
//! runs: counted, not judged), and the three primary keys.

use pgbench_wire::Connection;

use super::resume::{self, PGBENCH};
use super::sql;

/// The primary keys `p` makes.
const KEYS: [&str; 3] = [
    "pgbench_branches_pkey",
    "pgbench_tellers_pkey",
    "pgbench_accounts_pkey",
];

/// Runs the checks: the report and whether all hold, or why they could not run.
pub fn check(conn: &mut Connection) -> Result<(String, bool), String> {
    let mut out = String::new();
    let mut all = true;
    if let Some(unfinished) = resume::unfinished(conn, PGBENCH) {
        all = false;
        out.push_str(&format!("load FAILS: {unfinished}\n"));
    }
    let counts = query(
        conn,
        "select (select count(*) from pgbench_branches), (select count(*) from pgbench_tellers), \
         (select count(*) from pgbench_accounts), (select count(*) from pgbench_history)",
    )
    .map_err(|why| {
        format!("the pgbench tables could not be counted: {why}; run \"pgbench-rs -i\" first")
    })?;
    let n = |i: usize| {
        counts
            .get(i)
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(-1)
    };
    let scale = n(0);
    let expected = [
        ("pgbench_tellers", n(1), sql::TELLERS * scale),
        ("pgbench_accounts", n(2), sql::ACCOUNTS * scale),
    ];
    let wrong = resume::count_lines(
        &expected
            .iter()
            .map(|(t, got, want)| (t.to_string(), *got, *want))
            .collect::<Vec<_>>(),
    );
    if wrong.is_empty() && scale > 0 {
        out.push_str(&format!(
            "rows: scale {scale}: pgbench_branches {}, pgbench_tellers {}, pgbench_accounts {}, pgbench_history {}\n",
            n(0),
            n(1),
            n(2),
            n(3)
        ));
    } else {
        all = false;
        let why = if scale > 0 {
            wrong.join("; ")
        } else {
            "pgbench_branches is empty".to_string()
        };
        out.push_str(&format!("rows FAIL at scale {scale}: {why}\n"));
    }
    let names: Vec<String> = KEYS.iter().map(|k| format!("'{k}'")).collect();
    let missing = query(
        conn,
        &format!(
            "select string_agg(k, ', ' order by n) from unnest(array[{}]) with ordinality u(k, n) \
             where not exists (select from pg_catalog.pg_index i \
               where i.indexrelid = pg_catalog.to_regclass(k) and i.indisvalid)",
            names.join(", ")
        ),
    )?;
    match missing.first().filter(|m| !m.is_empty()) {
        None => out.push_str("primary keys: all 3\n"),
        Some(m) => {
            all = false;
            out.push_str(&format!("primary keys FAIL: missing or invalid: {m}\n"));
        }
    }
    Ok((out, all))
}

/// The first row of `sql`; the server's message alone on failure.
fn query(conn: &mut Connection, sql: &str) -> Result<Vec<String>, String> {
    let rows = conn.query_rows(sql).map_err(|e| {
        e.db_error()
            .map_or_else(|| e.to_string(), |d| d.message.clone())
    })?;
    Ok(rows
        .into_iter()
        .next()
        .unwrap_or_default()
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect())
}
