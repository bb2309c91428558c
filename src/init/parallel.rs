//! `-j N` in init mode (not in pgbench, which rejects `-j` with `-i`): the rows of
//! `pgbench_accounts` are split into pieces of consecutive `aid`s (within one range
//! partition each) and loaded over N connections; vacuum and primary keys run their
//! per-table statements concurrently. All of them take their items from the one work
//! queue of `queue.rs`.
//!
//! What differs from the one-connection path and why: the truncate and the small tables
//! commit first, because other sessions cannot write to a table truncated in an open
//! transaction; so the accounts rows cannot use `COPY ... FREEZE` (`v` leaves them
//! all-visible but not frozen), and a failure mid-load leaves the rows loaded so far
//! (`d` or a rerun of `g` cleans up). The rows, schema and progress lines are the same.

use pgbench_wire::Connection;

use super::error::InitError;
use super::exec::execute;
use super::load::{small_tables, COPY_CHUNK};
use super::options::{InitOptions, PartitionMethod};
use super::queue::{run_queue, Queue, RowCount};
use super::rows::AccountRows;
use super::sql::{self, ACCOUNTS};

/// Consecutive `aid`s loaded by one statement. Always through `pgbench_accounts`, so
/// the server routes rows to whatever partitions the table really has (`-I g` may run
/// on tables another invocation made).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) first: i64,
    pub(crate) last: i64,
}

/// Without FREEZE: the table was truncated by another, committed transaction.
const COPY_ACCOUNTS: &str = "copy pgbench_accounts from stdin";

/// Rows sent between two progress reports of a loading connection.
const REPORT_ROWS: i64 = 4_096;

/// Splits the accounts rows into pieces: about four per connection, so a connection
/// that gets less CPU does not hold up the end, and never more than one partition each.
pub(crate) fn plan(opts: &InitOptions, jobs: usize) -> Vec<Piece> {
    let total = sql::account_rows(opts.scale);
    let wanted = (jobs.max(1) * 4) as i64;
    let piece_rows = ((total + wanted - 1) / wanted).max(ACCOUNTS);
    pieces(opts, piece_rows)
}

/// The accounts rows in pieces of at most `piece_rows`, in `aid` order, never more
/// than one range partition each: one piece filling one range partition keeps each
/// COPY's rows together; hash partitions spread any range over all of them.
pub(crate) fn pieces(opts: &InitOptions, piece_rows: i64) -> Vec<Piece> {
    let ranges: Vec<(i64, i64)> = if opts.partition_method == PartitionMethod::Range {
        (1..=opts.partitions)
            .map(|p| sql::range_partition_rows(opts, p))
            .collect()
    } else {
        vec![(1, sql::account_rows(opts.scale))]
    };
    let mut pieces = Vec::new();
    for (lo, hi) in ranges {
        let mut first = lo;
        while first <= hi {
            let last = (first + piece_rows - 1).min(hi);
            pieces.push(Piece { first, last });
            first = last + 1;
        }
    }
    pieces
}

/// Truncates every table and fills branches and tellers in one transaction that
/// commits before the accounts load starts: the loading sessions could not write to a
/// table truncated in a transaction still open.
fn truncate_and_fill_small_tables(
    main: &mut Connection,
    fill: impl FnOnce(&mut Connection) -> Result<(), InitError>,
) -> Result<(), InitError> {
    execute(main, "begin")?;
    execute(main, sql::TRUNCATE_TABLES)?;
    fill(main)?;
    execute(main, "commit")
}

/// `g` over the main connection and the helpers.
pub(crate) fn client_side(
    main: &mut Connection,
    helpers: &mut [Connection],
    opts: &InitOptions,
) -> Result<(), InitError> {
    truncate_and_fill_small_tables(main, |main| small_tables(main, opts.scale))?;
    let pieces = plan(opts, helpers.len() + 1);
    let rows = RowCount {
        total: sql::account_rows(opts.scale),
        quiet: opts.quiet,
    };
    run_queue(
        std::iter::once(main).chain(helpers),
        &pieces,
        Some(rows),
        flush_commits,
        |conn, piece, queue| {
            copy_accounts(conn, piece, queue, true)?;
            super::interrupt::check()
        },
    )
}

/// Makes this connection's commits wait for the local WAL flush. With
/// `synchronous_commit = off` the commit records of the pieces may still be unflushed
/// when `v` runs, and vacuum cannot set hint bits (so not the all-visible bits) on
/// rows whose commit is not yet durable, unlike after pgbench's `COPY ... FREEZE`.
pub(super) fn flush_commits(conn: &mut Connection) -> Result<(), InitError> {
    let current = conn
        .query_rows("show synchronous_commit")
        .map_err(|e| InitError::Query {
            message: e.to_string(),
            sql: "show synchronous_commit".into(),
        })?;
    if current
        .first()
        .and_then(|row| row.first())
        .and_then(|v| v.as_deref())
        == Some("off")
    {
        execute(conn, "set synchronous_commit = local")?;
    }
    Ok(())
}

/// The accounts of `piece` through COPY: a piece of the parallel load (committed on
/// its own) or a resumable load's unit (in the caller's transaction). With
/// `stop_when_failed` (the parallel load) it stops mid-piece when another connection
/// failed: a piece is a good part of the load, and the rows sent so far are thrown
/// away anyway. Either way it stops at a Ctrl-C, which the caller reports.
pub(super) fn copy_accounts(
    conn: &mut Connection,
    piece: &Piece,
    queue: &Queue,
    stop_when_failed: bool,
) -> Result<(), InitError> {
    let mut copy = conn
        .copy_in(COPY_ACCOUNTS)
        .map_err(|e| InitError::CopyStart {
            message: e.to_string(),
        })?;
    let mut rows = AccountRows::new(piece.first, piece.last);
    let mut buf = Vec::with_capacity(COPY_CHUNK + 4096);
    while rows.remaining() > 0 && !super::interrupt::requested() {
        if stop_when_failed && queue.failed() {
            return Err(InitError::Aborted);
        }
        buf.clear();
        let n = rows.write(&mut buf, REPORT_ROWS);
        copy.write(&buf).map_err(|e| InitError::CopyData {
            message: e.to_string(),
        })?;
        queue.rows(n);
        crate::metrics::load::rows(sql::ACCOUNTS_TABLE, n);
    }
    copy.finish().map_err(|e| InitError::CopyEnd {
        message: e.to_string(),
    })?;
    Ok(())
}

/// `G` over the main connection and the helpers: branches and tellers as pgbench does,
/// then one `insert ... select` per piece of accounts.
pub(crate) fn server_side(
    main: &mut Connection,
    helpers: &mut [Connection],
    opts: &InitOptions,
) -> Result<(), InitError> {
    truncate_and_fill_small_tables(main, |main| {
        let [branches, tellers, _] = sql::server_side_inserts(opts.scale);
        let [branch_rows, teller_rows, _] = sql::table_rows(opts.scale);
        execute(main, &branches)?;
        crate::metrics::load::rows(sql::BRANCHES_TABLE, branch_rows);
        execute(main, &tellers)?;
        crate::metrics::load::rows(sql::TELLERS_TABLE, teller_rows);
        Ok(())
    })?;
    let pieces = plan(opts, helpers.len() + 1);
    flush_commits(main)?;
    for conn in helpers.iter_mut() {
        flush_commits(conn)?;
    }
    let no_setup = |_: &mut Connection| Ok(());
    let conns = std::iter::once(main).chain(helpers);
    run_queue(conns, &pieces, None, no_setup, |conn, piece, _| {
        execute(conn, &sql::server_side_accounts(piece.first, piece.last))?;
        crate::metrics::load::rows(sql::ACCOUNTS_TABLE, piece.last - piece.first + 1);
        Ok(())
    })
}

/// `v` over several connections. A partitioned `pgbench_accounts` is vacuumed one
/// partition per connection, then analysed as a whole: the same work as pgbench's
/// `vacuum analyze pgbench_accounts`, which vacuums and analyses every partition and
/// then gathers the parent's statistics, and the same statistics afterwards.
pub(crate) fn vacuum(
    main: &mut Connection,
    helpers: &mut [Connection],
    stock: Vec<String>,
) -> Result<(), InitError> {
    // The partitions the server has, not what --partitions says: `-I v` may run on
    // tables made by another invocation.
    let find =
        "select i.inhrelid::pg_catalog.regclass::pg_catalog.text from pg_catalog.pg_inherits i \
                where i.inhparent = pg_catalog.to_regclass('pgbench_accounts') order by i.inhrelid";
    let partitions: Vec<String> = main
        .query_rows(find)
        .map_err(|e| InitError::Query {
            message: e.to_string(),
            sql: find.to_string(),
        })?
        .into_iter()
        .filter_map(|row| row.into_iter().next().flatten())
        .collect();
    if partitions.is_empty() {
        return statements(main, helpers, stock);
    }
    let split: Vec<String> = partitions
        .iter()
        .map(|p| format!("vacuum {p}"))
        .chain(
            stock
                .into_iter()
                .filter(|s| !s.ends_with(" pgbench_accounts")),
        )
        .collect();
    run_statements(main, helpers, &split)?;
    execute(main, "analyze pgbench_accounts")
}

/// Runs independent statements (one per table) concurrently; the ones on
/// `pgbench_accounts`, by far the longest, start first.
pub(crate) fn statements(
    main: &mut Connection,
    helpers: &mut [Connection],
    mut statements: Vec<String>,
) -> Result<(), InitError> {
    statements.sort_by_key(|s| !s.contains("pgbench_accounts"));
    run_statements(main, helpers, &statements)
}

/// Each connection runs the next statement, in the order given.
fn run_statements(
    main: &mut Connection,
    helpers: &mut [Connection],
    statements: &[String],
) -> Result<(), InitError> {
    let no_setup = |_: &mut Connection| Ok(());
    let conns = std::iter::once(main).chain(helpers);
    run_queue(conns, statements, None, no_setup, |conn, sql, _| {
        execute(conn, sql)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(scale: i32, partitions: i32, method: PartitionMethod) -> InitOptions {
        InitOptions {
            steps: "g".into(),
            scale,
            fillfactor: 100,
            quiet: false,
            unlogged_tables: false,
            partitions,
            partition_method: method,
            tablespace: None,
            index_tablespace: None,
            jobs: Some(2),
            resumable: Default::default(),
        }
    }

    fn covers_all(pieces: &[Piece], total: i64) {
        let mut next = 1;
        for p in pieces {
            assert_eq!(p.first, next, "{pieces:?}");
            assert!(p.last >= p.first);
            next = p.last + 1;
        }
        assert_eq!(next, total + 1);
    }

    #[test]
    fn unpartitioned_pieces() {
        let pieces = plan(&opts(50, 0, PartitionMethod::None), 2);
        assert_eq!(pieces.len(), 8);
        covers_all(&pieces, 5_000_000);
        let pieces = plan(&opts(1, 0, PartitionMethod::None), 4);
        assert_eq!(pieces.len(), 1);
        covers_all(&pieces, 100_000);
    }

    #[test]
    fn range_pieces_stay_in_their_partition() {
        let o = opts(3, 4, PartitionMethod::Range);
        let pieces = plan(&o, 2);
        covers_all(&pieces, 300_000);
        for piece in &pieces {
            assert!(
                (1..=4).any(|p| {
                    let (lo, hi) = sql::range_partition_rows(&o, p);
                    lo <= piece.first && piece.last <= hi
                }),
                "{piece:?}"
            );
        }
        assert_eq!(pieces.len(), 4);
    }

    #[test]
    fn empty_range_partitions_get_no_piece() {
        let pieces = plan(&opts(1, 300_000, PartitionMethod::Range), 2);
        assert_eq!(pieces.len(), 100_000);
        covers_all(&pieces, 100_000);
    }

    #[test]
    fn hash_pieces_ignore_partitions() {
        let pieces = plan(&opts(10, 3, PartitionMethod::Hash), 3);
        assert_eq!(pieces, plan(&opts(10, 0, PartitionMethod::None), 3));
        covers_all(&pieces, 1_000_000);
    }
}
