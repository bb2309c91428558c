//! `--workload=oltp_* --check`: whether the test's tables are prepared, a line for
//! each thing a run needs of them: every table `sbtest1..N` exists, has its primary
//! key and (with `create_secondary`) its `k_N` index, both valid (not left by an
//! index build cut short), and holds rows (unless the test prepares them empty) up
//! to `table_size`, the ids the run draws from ([`short_tables`], which a run checks
//! too).

use pgbench_wire::{ConnectArgs, Connection};

use super::prepare::prepare_command;
use super::Config;

/// What one table has.
struct Table {
    n: u32,
    exists: bool,
    primary_key: bool,
    secondary: bool,
}

/// Runs the checks; the report (a line each) and whether all hold.
pub fn check(
    config: &Config,
    conn: &mut Connection,
    target: &ConnectArgs,
) -> Result<(String, bool), String> {
    let tables = tables(config, conn)?;
    let existing: Vec<u32> = tables.iter().filter(|t| t.exists).map(|t| t.n).collect();
    let mut out = String::new();
    let mut all = true;
    // A resumable prepare that did not finish (its tables may all look fine).
    if let Some(unfinished) = crate::init::resume::unfinished(conn, crate::init::resume::SYSBENCH) {
        all = false;
        out.push_str(&format!("prepare FAIL: {unfinished}\n"));
    }
    // Of the tables there: a line about missing keys says nothing of missing tables.
    let mut line = |what: &str, failing: Vec<u32>, why: &str, total: usize| {
        if failing.is_empty() {
            out.push_str(&format!("{what}: all {total}\n"));
        } else {
            all = false;
            out.push_str(&format!(
                "{what} FAIL: {} of {total} {why}: {}\n",
                failing.len(),
                names(&failing)
            ));
        }
    };
    let without = |has: fn(&Table) -> bool| -> Vec<u32> {
        tables
            .iter()
            .filter(|t| t.exists && !has(t))
            .map(|t| t.n)
            .collect()
    };
    let missing: Vec<u32> = tables.iter().filter(|t| !t.exists).map(|t| t.n).collect();
    line("tables", missing, "missing", tables.len());
    let there = existing.len();
    if there > 0 {
        line(
            "primary keys",
            without(|t| t.primary_key),
            "without one",
            there,
        );
        if config.create_secondary {
            let no_index = without(|t| t.secondary);
            line("secondary indexes k_N", no_index, "without one", there);
        }
        if config.prepared_rows() > 0 {
            line("rows", empty(conn, &existing)?, "empty", there);
        }
        if config.draws_prepared_rows() {
            let short: Vec<u32> = short_tables(config, conn, &existing)?
                .into_iter()
                .map(|(n, _)| n)
                .collect();
            let why = format!(
                "with fewer than table_size={} rows (their largest id is below it)",
                config.table_size
            );
            line("table size", short, &why, there);
        }
    }
    if !all {
        out.push_str(&format!(
            "prepare the tables with \"{}\"\n",
            prepare_command(config, target)
        ));
    }
    Ok((out, all))
}

/// Runs `sql`: its rows, or the server's message alone (its caret block would split
/// the line).
fn query(conn: &mut Connection, sql: &str) -> Result<Vec<Vec<String>>, String> {
    let rows = conn.query_rows(sql).map_err(|e| {
        let why = e
            .db_error()
            .map_or_else(|| e.to_string(), |d| d.message.clone());
        format!("the tables could not be checked: {why}")
    })?;
    Ok(rows
        .into_iter()
        .map(|r| r.into_iter().map(Option::unwrap_or_default).collect())
        .collect())
}

/// Each table of the test, with its keys.
fn tables(config: &Config, conn: &mut Connection) -> Result<Vec<Table>, String> {
    let index = |which: &str| {
        format!(
            "exists (select from pg_catalog.pg_index i \
              where i.indrelid = pg_catalog.to_regclass('sbtest' || n) and i.indisvalid and {which})"
        )
    };
    let sql = format!(
        "select n, pg_catalog.to_regclass('sbtest' || n) is not null, {}, {} \
         from generate_series(1, {}) n order by n",
        index("i.indisprimary"),
        index("i.indexrelid = pg_catalog.to_regclass('k_' || n)"),
        config.tables
    );
    Ok(query(conn, &sql)?
        .iter()
        .map(|r| {
            let yes = |i: usize| r.get(i).is_some_and(|v| v == "t");
            Table {
                n: r.first().and_then(|v| v.parse().ok()).unwrap_or(0),
                exists: yes(1),
                primary_key: yes(2),
                secondary: yes(3),
            }
        })
        .collect())
}

/// Those of the `tables` that hold no row.
fn empty(conn: &mut Connection, tables: &[u32]) -> Result<Vec<u32>, String> {
    if tables.is_empty() {
        return Ok(Vec::new());
    }
    let probes: Vec<String> = tables
        .iter()
        .map(|n| format!("(select exists (select from sbtest{n}))"))
        .collect();
    let row = query(conn, &format!("select {}", probes.join(", ")))?;
    let found = row.first().cloned().unwrap_or_default();
    Ok(tables
        .iter()
        .zip(
            found
                .iter()
                .map(|v| v == "t")
                .chain(std::iter::repeat(false)),
        )
        .filter(|(_, has_rows)| !has_rows)
        .map(|(n, _)| *n)
        .collect())
}

/// Those of the `tables` whose largest id is below `table_size`, with it (`None`:
/// empty): prepared with fewer rows than the run is told, so that it would draw ids
/// of rows that are not there. A test that draws no prepared row (`oltp_insert`)
/// has none.
pub fn short_tables(
    config: &Config,
    conn: &mut Connection,
    tables: &[u32],
) -> Result<Vec<(u32, Option<i64>)>, String> {
    if tables.is_empty() || !config.draws_prepared_rows() {
        return Ok(Vec::new());
    }
    // One index probe a table (`max(id)` reads the primary key's last entry).
    let probes: Vec<String> = tables
        .iter()
        .map(|n| format!("(select max(id) from sbtest{n})"))
        .collect();
    let row = query(conn, &format!("select {}", probes.join(", ")))?;
    let found = row.first().cloned().unwrap_or_default();
    let size = i64::from(config.table_size);
    Ok(tables
        .iter()
        .zip(found.iter().map(|v| v.parse::<i64>().ok()))
        .filter(|(_, max)| max.is_none_or(|m| m < size))
        .map(|(n, max)| (*n, max))
        .collect())
}

/// Before a run: the tables hold `table_size` rows, the ids the run draws from. A
/// table prepared with fewer (another `-D table_size`) would have the run select,
/// update and delete rows that are not there, at a speed that means nothing.
pub fn table_sizes(
    config: &Config,
    conn: &mut Connection,
    target: &ConnectArgs,
) -> Result<(), String> {
    let all: Vec<u32> = (1..=config.tables).collect();
    let short = short_tables(config, conn, &all)?;
    let Some((table, max)) = short.first() else {
        return Ok(());
    };
    let holds = match max {
        Some(m) => format!("holds rows up to id {m}"),
        None => "holds no row".to_string(),
    };
    Err(format!(
        "table \"sbtest{table}\" of workload {} {holds}, but the run is told -D table_size={} \
         ({} of {} tables are short); prepare the tables with \"{}\", or give the table_size \
         they were prepared with",
        config.test.name(),
        config.table_size,
        short.len(),
        config.tables,
        prepare_command(config, target)
    ))
}

/// Before a run, after [`table_sizes`]: what was prepared beyond what the run is
/// told, as sysbench's `run` leaves it unused without a word: more tables than
/// `-D tables`, or rows beyond `-D table_size` in `sbtest1`. A run given the prepare's
/// `--tables`/`--table-size` as `-D` uses them all; one given none runs on one table of
/// 10,000 rows, a hotter and smaller load than the one prepared.
pub fn unused_tables(config: &Config, conn: &mut Connection) -> Vec<String> {
    let sql = format!(
        "select count(*), (select max(id) from sbtest1) from pg_catalog.pg_class c \
         where c.relkind in ('r', 'p') and c.relname ~ '^sbtest[1-9][0-9]*$' \
         and pg_catalog.pg_table_is_visible(c.oid) \
         and substr(c.relname, 7)::numeric > {}",
        config.tables
    );
    // A failed look is no reason to refuse a run whose tables passed their check.
    let Ok(rows) = query(conn, &sql) else {
        return Vec::new();
    };
    let row = rows.first().cloned().unwrap_or_default();
    let more: i64 = row.first().and_then(|v| v.parse().ok()).unwrap_or(0);
    let largest_id: Option<i64> = row.get(1).and_then(|v| v.parse().ok());
    unused_warnings(config, more, largest_id)
}

/// The warnings of [`unused_tables`], from what the server said: `more` tables past
/// `-D tables`, and `sbtest1`'s largest id.
fn unused_warnings(config: &Config, more: i64, largest_id: Option<i64>) -> Vec<String> {
    let mut warnings = Vec::new();
    if more > 0 {
        let tables = if more == 1 { "table is" } else { "tables are" };
        warnings.push(format!(
            "{more} more sbtest {tables} prepared than the run uses: it uses {} \
             (-D tables={}, sysbench's --tables); give -D tables as prepared to use them",
            config.tables, config.tables
        ));
    }
    if let Some(id) = largest_id.filter(|&id| id > i64::from(config.table_size)) {
        if config.draws_prepared_rows() {
            warnings.push(format!(
                "table \"sbtest1\" holds rows up to id {id}, but the run draws ids up to {} \
                 (-D table_size={}, sysbench's --table-size); give -D table_size as prepared \
                 to use them",
                config.table_size, config.table_size
            ));
        }
    }
    warnings
}

/// `sbtest3, sbtest4`, the first ten of them.
fn names(tables: &[u32]) -> String {
    let mut shown: Vec<String> = tables
        .iter()
        .take(10)
        .map(|n| format!("sbtest{n}"))
        .collect();
    if tables.len() > 10 {
        shown.push("...".to_string());
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_of_tables_are_cut() {
        assert_eq!(names(&[3, 4]), "sbtest3, sbtest4");
        let many: Vec<u32> = (1..=12).collect();
        assert!(names(&many).ends_with("sbtest10, ..."), "{}", names(&many));
    }

    /// Tables or rows beyond what the run is told are named, with the `-D` that
    /// would use them; `oltp_insert` draws no prepared row, so its ids are not.
    #[test]
    fn what_the_run_leaves_unused_is_a_warning() {
        let told = |test, pairs: &[(&str, &str)]| {
            let defines: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Config::new(test, &defines).unwrap()
        };
        let one = told(super::super::Test::WriteOnly, &[]);
        assert_eq!(unused_warnings(&one, 0, Some(10_000)), Vec::<String>::new());
        let w = unused_warnings(&one, 24, Some(40_000));
        assert_eq!(
            w,
            [
                "24 more sbtest tables are prepared than the run uses: it uses 1 (-D tables=1, \
                 sysbench's --tables); give -D tables as prepared to use them",
                "table \"sbtest1\" holds rows up to id 40000, but the run draws ids up to 10000 \
                 (-D table_size=10000, sysbench's --table-size); give -D table_size as prepared \
                 to use them"
            ]
        );
        let as_prepared = told(
            super::super::Test::WriteOnly,
            &[("tables", "25"), ("table_size", "40000")],
        );
        assert!(unused_warnings(&as_prepared, 0, Some(40_000)).is_empty());
        let insert = told(super::super::Test::Insert, &[]);
        assert_eq!(unused_warnings(&insert, 0, Some(40_000)).len(), 0);
    }
}
