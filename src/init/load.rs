//! Data generation on one connection, as pgbench 15 does it: one transaction
//! (`begin`, truncate, load, `commit`) so the server can use its bulk-load shortcuts;
//! `COPY ... FREEZE` for accounts (`initGenerateDataClientSide`) or three
//! `insert ... select` (`initGenerateDataServerSide`). Branches and tellers go through
//! COPY with pgbench's column lists instead of one INSERT per row: same rows, one
//! round trip.

use std::time::Instant;

use pgbench_wire::Connection;

use super::error::InitError;
use super::exec::execute;
use super::options::InitOptions;
use super::progress::{Progress, QUIET_CHECK_ROWS};
use super::rows::{branch_rows, teller_rows, AccountRows};
use super::sql::{self, BRANCHES, TELLERS};

/// COPY data is sent in writes of about this many bytes.
pub(crate) const COPY_CHUNK: usize = 64 * 1024;

/// `g` on one connection.
pub(crate) fn client_side(conn: &mut Connection, opts: &InitOptions) -> Result<(), InitError> {
    execute(conn, "begin")?;
    execute(conn, sql::TRUNCATE_TABLES)?;
    small_tables(conn, opts.scale)?;

    let copy_sql = sql::copy_accounts(opts.partitions, crate::version::server_version_num(conn));
    let total = sql::account_rows(opts.scale);
    let mut copy = conn.copy_in(copy_sql).map_err(|e| InitError::CopyStart {
        message: e.to_string(),
    })?;
    let start = Instant::now();
    let mut progress = Progress::new(
        std::io::stderr(),
        total,
        opts.quiet,
        crate::sys::stderr_is_tty(),
    );
    let mut rows = AccountRows::new(1, total);
    let mut buf = Vec::with_capacity(COPY_CHUNK + 4096);
    let mut done = 0;
    // What the metrics have of `done`: fed where the progress lines are.
    let mut counted = 0;
    while rows.remaining() > 0 && !super::interrupt::requested() {
        // pgbench looks at progress after every row but prints at most every 100 (-q)
        // or 100,000 rows; blocks of 100 rows hit the same row counts.
        done += rows.write(&mut buf, QUIET_CHECK_ROWS);
        if buf.len() >= COPY_CHUNK {
            copy.write(&buf).map_err(|e| InitError::CopyData {
                message: e.to_string(),
            })?;
            buf.clear();
        }
        if progress.due(done) {
            progress.advance(done, start.elapsed().as_secs_f64());
            crate::metrics::load::rows(sql::ACCOUNTS_TABLE, done - counted);
            counted = done;
        }
    }
    if !buf.is_empty() {
        copy.write(&buf).map_err(|e| InitError::CopyData {
            message: e.to_string(),
        })?;
    }
    progress.finish();
    crate::metrics::load::rows(sql::ACCOUNTS_TABLE, done - counted);
    copy.finish().map_err(|e| InitError::CopyEnd {
        message: e.to_string(),
    })?;
    // Ctrl-C between statements cancels nothing on the server, but the rows stopped:
    // never commit a partial load.
    super::interrupt::check()?;
    execute(conn, "commit")
}

/// Loads `pgbench_branches` and `pgbench_tellers` (inside the caller's transaction).
pub(crate) fn small_tables(conn: &mut Connection, scale: i32) -> Result<(), InitError> {
    let scale = i64::from(scale);
    copy_rows(conn, sql::COPY_BRANCHES, BRANCHES * scale, branch_rows)?;
    crate::metrics::load::rows(sql::BRANCHES_TABLE, BRANCHES * scale);
    copy_rows(conn, sql::COPY_TELLERS, TELLERS * scale, teller_rows)?;
    crate::metrics::load::rows(sql::TELLERS_TABLE, TELLERS * scale);
    Ok(())
}

/// COPYs rows `1..=count` produced by `rows(buf, first, last)`; any failure reads as
/// the statement's failure.
fn copy_rows(
    conn: &mut Connection,
    copy_sql: &str,
    count: i64,
    rows: fn(&mut Vec<u8>, i64, i64),
) -> Result<(), InitError> {
    let failed = |e: &dyn std::fmt::Display| InitError::Query {
        message: e.to_string(),
        sql: copy_sql.to_string(),
    };
    let mut copy = conn.copy_in(copy_sql).map_err(|e| failed(&e))?;
    let mut buf = Vec::with_capacity(COPY_CHUNK + 4096);
    let mut first = 1;
    while first <= count {
        let last = (first + 4095).min(count);
        rows(&mut buf, first, last);
        first = last + 1;
        if buf.len() >= COPY_CHUNK || first > count {
            copy.write(&buf).map_err(|e| failed(&e))?;
            buf.clear();
        }
    }
    copy.finish().map_err(|e| failed(&e))?;
    Ok(())
}

/// `G` on one connection.
pub(crate) fn server_side(conn: &mut Connection, opts: &InitOptions) -> Result<(), InitError> {
    execute(conn, "begin")?;
    execute(conn, sql::TRUNCATE_TABLES)?;
    let tables = [sql::BRANCHES_TABLE, sql::TELLERS_TABLE, sql::ACCOUNTS_TABLE];
    let rows = sql::table_rows(opts.scale);
    for ((statement, table), n) in sql::server_side_inserts(opts.scale)
        .iter()
        .zip(tables)
        .zip(rows)
    {
        execute(conn, statement)?;
        crate::metrics::load::rows(table, n);
    }
    execute(conn, "commit")
}
