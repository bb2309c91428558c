//! The progress record of a resumable load (`--resume`, `--shard=K/N`), shared by
//! pgbench's `-i`, TPC-C's and sysbench's loads: table `pgbench_rs_load` in the target
//! database, a row per unit of rows loaded (pgbench: a range of accounts; TPC-C: a
//! warehouse; sysbench: a table), inserted **in the transaction that loads the unit**,
//! so a load killed at any instant (SIGKILL, a lost connection, a server restart) has
//! recorded exactly the units that are in the tables. Beside the units, rows whose
//! unit name starts with `=` say what the load is (`=params`: the parameters it was
//! started with), which shards joined and finished, and which final steps ran.
//!
//! Deciding whether to start, continue or refuse happens under an advisory lock (one
//! per loader), so N shard processes started at once see one of them create the
//! tables and the others join. When a load ends whole its rows are deleted (and the
//! table dropped when no other loader has rows in it): a complete database holds no
//! trace of the record, as after stock's `pgbench -i`.

use std::collections::BTreeSet;

use pgbench_wire::Connection;

/// The table of the record.
pub const TABLE: &str = "pgbench_rs_load";

const CREATE: &str = "create table if not exists pgbench_rs_load \
    (loader text not null, unit text not null, info text not null, primary key (loader, unit))";

/// Whose load a record is: its name in the record and its advisory lock's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loader {
    pub name: &'static str,
    lock_key: i64,
}

/// pgbench's tables (`-i`).
pub const PGBENCH: Loader = Loader {
    name: "pgbench",
    lock_key: 0x7067_6273_0001,
};
/// TPC-C's (`-i --workload=tpcc`).
pub const TPCC: Loader = Loader {
    name: "tpcc",
    lock_key: 0x7067_6273_0002,
};
/// sysbench's (`-i --workload=oltp_*`).
pub const SYSBENCH: Loader = Loader {
    name: "sysbench",
    lock_key: 0x7067_6273_0003,
};

/// `--shard=K/N`: this process loads the K-th (1-based) of N shares of the units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Reads `K/N` with 1 <= K <= N.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("invalid --shard \"{text}\": expected K/N with 1 <= K <= N");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The contiguous share of `0..units` this shard loads: shares differ by at most
    /// one unit, and together they cover every unit once.
    pub fn share(&self, units: usize) -> std::ops::Range<usize> {
        let (k, n) = (self.index as usize - 1, self.count as usize);
        units * k / n..units * (k + 1) / n
    }

    /// `K/N` as the record and messages name it.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// How a load was asked to treat an earlier one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resumable {
    /// `--resume`: continue an unfinished load of the same parameters.
    pub resume: bool,
    /// `--shard=K/N`.
    pub shard: Option<Shard>,
}

impl Resumable {
    /// Whether the load records its progress (with either option).
    pub fn active(&self) -> bool {
        self.resume || self.shard.is_some()
    }

    /// The units `0..units` this process loads: its shard's, or all of them.
    pub fn share(&self, units: usize) -> std::ops::Range<usize> {
        self.shard.map_or(0..units, |s| s.share(units))
    }

    /// Whether this process loads the units every load needs once (pgbench's small
    /// tables, TPC-C's items): the first shard, or an unsharded load.
    pub fn loads_common_units(&self) -> bool {
        self.shard.is_none_or(|s| s.index == 1)
    }
}

/// Why a resumable load cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    #[error("query failed: {message}")]
    Query { message: String, sql: String },
    #[error(
        "the unfinished {loader} load in the database was started with {found}, not {asked}: \
         resume it with its parameters, or start over without --resume"
    )]
    OtherParameters {
        loader: &'static str,
        found: String,
        asked: String,
    },
    #[error(
        "an unfinished {loader} load ({found}, {done} units loaded) is in the database: \
         continue it with --resume, or start over without --shard"
    )]
    Unfinished {
        loader: &'static str,
        found: String,
        done: usize,
    },
    #[error(
        "shard {shard} of the unfinished {loader} load ({found}) was started before: \
         continue it with --resume"
    )]
    ShardAgain {
        loader: &'static str,
        shard: String,
        found: String,
    },
}

/// What the database holds of a loader's unfinished load.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    /// The parameters it was started with.
    pub params: String,
    /// The units loaded (committed with their rows).
    pub units: BTreeSet<String>,
    /// The `=` rows: shards started and loaded, steps run.
    pub marks: BTreeSet<String>,
}

impl Record {
    /// Whether the mark `name` (without its `=`) is set.
    pub fn marked(&self, name: &str) -> bool {
        self.marks.contains(name)
    }
}

/// What to do about an earlier load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// No load to continue: drop, create and [`begin`] a new one.
    Fresh,
    /// Continue this one: its tables are there, skip the units it has.
    Continue(Record),
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn run(conn: &mut Connection, sql: &str) -> Result<(), ResumeError> {
    conn.execute(sql).map_err(|e| ResumeError::Query {
        message: e.to_string(),
        sql: sql.to_string(),
    })
}

fn rows(conn: &mut Connection, sql: &str) -> Result<Vec<Vec<String>>, ResumeError> {
    let rows = conn.query_rows(sql).map_err(|e| ResumeError::Query {
        message: e.to_string(),
        sql: sql.to_string(),
    })?;
    Ok(rows
        .into_iter()
        .map(|r| r.into_iter().map(Option::unwrap_or_default).collect())
        .collect())
}

/// Takes the loader's advisory lock (waiting for another process holding it).
pub fn lock(conn: &mut Connection, loader: Loader) -> Result<(), ResumeError> {
    run(
        conn,
        &format!("select pg_catalog.pg_advisory_lock({})", loader.lock_key),
    )
}

/// Releases it.
pub fn unlock(conn: &mut Connection, loader: Loader) -> Result<(), ResumeError> {
    run(
        conn,
        &format!("select pg_catalog.pg_advisory_unlock({})", loader.lock_key),
    )
}

/// The loader's unfinished load, if the database holds one.
pub fn read(conn: &mut Connection, loader: Loader) -> Result<Option<Record>, ResumeError> {
    let exists = rows(
        conn,
        &format!(
            "select pg_catalog.to_regclass({}) is not null",
            quote(TABLE)
        ),
    )?;
    if exists.first().and_then(|r| r.first()).map(String::as_str) != Some("t") {
        return Ok(None);
    }
    let found = rows(
        conn,
        &format!(
            "select unit, info from {TABLE} where loader = {}",
            quote(loader.name)
        ),
    )?;
    let mut record = Record::default();
    let mut any = false;
    for row in found {
        let (unit, info) = (row[0].clone(), row[1].clone());
        any = true;
        match unit.strip_prefix('=') {
            Some("params") => record.params = info,
            Some(mark) => {
                record.marks.insert(mark.to_string());
            }
            None => {
                record.units.insert(unit);
            }
        }
    }
    Ok(any.then_some(record))
}

/// Before a run or a check: why the tables of `loader` cannot be used, when an
/// unfinished load of it is in the database (a failure to look is not a refusal: the
/// run's own queries say what is wrong).
pub fn unfinished(conn: &mut Connection, loader: Loader) -> Option<String> {
    let record = read(conn, loader).ok()??;
    Some(format!(
        "the {} load in this database did not finish ({}; {} units loaded): \
         finish it with -i --resume and the same options",
        loader.name,
        record.params,
        record.units.len()
    ))
}

/// Decides, from what the database holds, whether this process starts a new load or
/// continues one (call under [`lock`]). `params` names the load's parameters. An
/// unsharded load without `--resume` never gets here (it starts over as stock does).
pub fn decide(
    conn: &mut Connection,
    loader: Loader,
    params: &str,
    how: Resumable,
) -> Result<Start, ResumeError> {
    let Some(record) = read(conn, loader)? else {
        return Ok(Start::Fresh);
    };
    if record.params != params {
        if how.resume {
            return Err(ResumeError::OtherParameters {
                loader: loader.name,
                found: record.params,
                asked: params.to_string(),
            });
        }
        return Err(ResumeError::Unfinished {
            loader: loader.name,
            found: record.params,
            done: record.units.len(),
        });
    }
    if let (Some(shard), false) = (how.shard, how.resume) {
        if record.marked(&format!("shard {} started", shard.label())) {
            return Err(ResumeError::ShardAgain {
                loader: loader.name,
                shard: shard.label(),
                found: record.params,
            });
        }
    }
    Ok(Start::Continue(record))
}

/// Starts the record of a new load of `params` (after its tables were made).
pub fn begin(conn: &mut Connection, loader: Loader, params: &str) -> Result<(), ResumeError> {
    run(conn, CREATE)?;
    run(
        conn,
        &format!("delete from {TABLE} where loader = {}", quote(loader.name)),
    )?;
    run(conn, &unit_sql(loader, "=params", params))
}

/// The statement that records `unit` (with `info`, e.g. its rows): run it in the
/// transaction that loads the unit, before its COMMIT.
pub fn unit_sql(loader: Loader, unit: &str, info: &str) -> String {
    format!(
        "insert into {TABLE} (loader, unit, info) values ({}, {}, {}) \
         on conflict (loader, unit) do update set info = excluded.info",
        quote(loader.name),
        quote(unit),
        quote(info)
    )
}

/// Sets the mark `name` (a shard started or loaded, a final step run).
pub fn mark(conn: &mut Connection, loader: Loader, name: &str) -> Result<(), ResumeError> {
    run(conn, &unit_sql(loader, &format!("={name}"), ""))
}

/// Under [`lock`], after this process loaded its units: records its shard as loaded
/// and says whether it runs the steps after the load, with the record as it is now.
/// It does when every unit is in (`units`: how many the load has; `None` when this
/// invocation loads nothing) and no other process claimed them: another shard's claim
/// stands (it may still be building), while a process without `--shard` (finishing
/// what was lost) or the claiming shard itself again with `--resume` (a retried pod)
/// takes them over.
pub fn claim_build(
    conn: &mut Connection,
    loader: Loader,
    how: Resumable,
    units: Option<usize>,
) -> Result<Option<Record>, ResumeError> {
    let claimant = how.shard.map_or("all".to_string(), |s| s.label());
    if let Some(shard) = how.shard {
        mark(conn, loader, &format!("shard {} loaded", shard.label()))?;
    }
    let record = read(conn, loader)?.unwrap_or_default();
    if units.is_some_and(|n| record.units.len() < n) {
        return Ok(None);
    }
    let mine = format!("build by {claimant}");
    let taken = record
        .marks
        .iter()
        .any(|m| m.starts_with("build by ") && *m != mine);
    if how.shard.is_some() && taken {
        return Ok(None);
    }
    mark(conn, loader, &mine)?;
    Ok(Some(record))
}

/// The load is whole: its record goes, and the table with it when no other loader
/// has a record there.
pub fn finish(conn: &mut Connection, loader: Loader) -> Result<(), ResumeError> {
    if read(conn, loader)?.is_none() {
        return Ok(());
    }
    run(
        conn,
        &format!("delete from {TABLE} where loader = {}", quote(loader.name)),
    )?;
    run(
        conn,
        &format!(
            "do $$ begin if not exists (select from {TABLE}) then drop table {TABLE}; end if; end $$"
        ),
    )
}

/// Counts of rows per table against what the parameters say: a line per table
/// that differs (empty when all add up).
pub fn count_lines(counted: &[(String, i64, i64)]) -> Vec<String> {
    counted
        .iter()
        .filter(|(_, got, want)| got != want)
        .map(|(table, got, want)| format!("table {table}: {got} rows, {want} expected"))
        .collect()
}

/// `select count(*)` of each table, beside the rows expected.
pub fn count_tables(
    conn: &mut Connection,
    expected: &[(String, i64)],
) -> Result<Vec<(String, i64, i64)>, ResumeError> {
    if expected.is_empty() {
        return Ok(Vec::new());
    }
    // One row, a column per table, so the counts come back in the tables' order.
    let sql = format!(
        "select {}",
        expected
            .iter()
            .map(|(t, _)| format!("(select count(*) from {t})"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let got = rows(conn, &sql)?.into_iter().next().unwrap_or_default();
    Ok(expected
        .iter()
        .zip(
            got.iter()
                .map(|v| v.parse().unwrap_or(-1))
                .chain(std::iter::repeat(-1)),
        )
        .map(|((t, want), n)| (t.clone(), n, *want))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_unit_once() {
        for units in [0, 1, 4, 7, 20] {
            for n in 1..=5 {
                let mut next = 0;
                for k in 1..=n {
                    let r = Shard { index: k, count: n }.share(units);
                    assert_eq!(r.start, next);
                    assert!(r.len() <= units / n as usize + 1);
                    next = r.end;
                }
                assert_eq!(next, units);
            }
        }
        assert_eq!(Shard { index: 2, count: 2 }.share(4), 2..4);
    }

    #[test]
    fn shard_option() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/2", "3/2", "1", "a/b", "1/0", ""] {
            assert!(
                Shard::parse(bad).unwrap_err().contains("expected K/N"),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_unit_is_recorded_by_one_quoted_statement() {
        assert_eq!(
            unit_sql(PGBENCH, "it's", "5"),
            "insert into pgbench_rs_load (loader, unit, info) values ('pgbench', 'it''s', '5') \
             on conflict (loader, unit) do update set info = excluded.info"
        );
    }

    #[test]
    fn only_tables_that_differ_are_named() {
        let lines = count_lines(&[("a".into(), 3, 3), ("b".into(), 2, 4)]);
        assert_eq!(lines, ["table b: 2 rows, 4 expected"]);
    }

    #[test]
    fn the_common_units_go_to_the_first_shard() {
        let first = Resumable {
            resume: false,
            shard: Some(Shard { index: 1, count: 2 }),
        };
        let second = Resumable {
            shard: Some(Shard { index: 2, count: 2 }),
            ..first
        };
        assert!(first.loads_common_units() && !second.loads_common_units());
        assert!(Resumable::default().loads_common_units());
        assert!(!Resumable::default().active());
    }
}
