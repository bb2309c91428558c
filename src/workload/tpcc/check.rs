//! `--workload=tpcc --check`: what HammerDB's `checkschema` looks at, for this
//! workload's schema, then TPC-C's consistency conditions 1-4 (clause 3.3.2). A line
//! each: the load's mark ([`super::marker`]: the tables of a load that completed),
//! the rows of every table against what the load wrote, the keys and indexes (present
//! and valid), the functions the transactions call, and each condition, which names
//! the warehouses and districts that break it.

use pgbench_wire::{ConnectArgs, Connection};

use super::marker::{self, Load};
use super::rows::{line_counts, CUSTOMERS, DISTRICTS, ITEMS, ORDERS};
use super::schema::{KEY_NAMES, TABLES};
use super::Config;

/// (condition, what it says, the key columns' names, a query returning the keys
/// that break it).
pub const CONDITIONS: [(u32, &str, &[&str], &str); 4] = [
    (
        1,
        "W_YTD = sum(D_YTD) for each warehouse",
        &["warehouse"],
        "select w_id from warehouse join (select d_w_id, sum(d_ytd) s from district group by d_w_id) d \
         on d_w_id = w_id where w_ytd <> s order by 1",
    ),
    (
        2,
        "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each district",
        &["warehouse", "district"],
        "select d_w_id, d_id from district \
         left join (select o_w_id, o_d_id, max(o_id) m from orders group by 1, 2) o \
           on o_w_id = d_w_id and o_d_id = d_id \
         left join (select no_w_id, no_d_id, max(no_o_id) m from new_order group by 1, 2) n \
           on no_w_id = d_w_id and no_d_id = d_id \
         where d_next_o_id - 1 is distinct from o.m \
            or (n.m is not null and d_next_o_id - 1 <> n.m) order by 1, 2",
    ),
    (
        3,
        "max(NO_O_ID) - min(NO_O_ID) + 1 = the rows of NEW_ORDER for each district",
        &["warehouse", "district"],
        "select no_w_id, no_d_id from new_order group by 1, 2 \
         having max(no_o_id) - min(no_o_id) + 1 <> count(*) order by 1, 2",
    ),
    (
        4,
        "sum(O_OL_CNT) = the rows of ORDER_LINE for each district",
        &["warehouse", "district"],
        "select coalesce(o_w_id, ol_w_id), coalesce(o_d_id, ol_d_id) \
         from (select o_w_id, o_d_id, sum(o_ol_cnt) s from orders group by 1, 2) o \
         full join (select ol_w_id, ol_d_id, count(*) n from order_line group by 1, 2) l \
           on ol_w_id = o_w_id and ol_d_id = o_d_id \
         where s is distinct from n order by 1, 2",
    ),
];

/// Runs every check (the routines of `config`'s mode); the report (a line each) and
/// whether all hold. `target` (the connection options the user gave) goes into the
/// command a failure suggests. An error: the tables are not there, or a query failed.
pub fn check(
    config: &Config,
    conn: &mut Connection,
    target: &ConnectArgs,
) -> Result<(String, bool), String> {
    let load = marker::read(conn)?;
    let mut out = String::new();
    let mut all = true;
    let warehouses = match load {
        Load::Missing(_) => return Err(marker::refusal(&load, target)),
        Load::Complete(w) => {
            let plural = if w == 1 { "" } else { "s" };
            out.push_str(&format!("load complete: {w} warehouse{plural}\n"));
            Some(w)
        }
        Load::Incomplete(w) => {
            all = false;
            let why = marker::unfinished(conn).unwrap_or_else(|| marker::refusal(&load, target));
            out.push_str(&format!("load FAILS: {why}\n"));
            w
        }
    };
    let mut line = |(text, holds): (String, bool)| {
        all &= holds;
        out.push_str(&text);
    };
    line(rows(conn, warehouses)?);
    let keys = ("keys and indexes", "missing or invalid");
    line(missing(conn, keys, &KEY_NAMES, KEYS_MISSING)?);
    line(missing(
        conn,
        ("functions", "missing"),
        config.routine_names(),
        FUNCTIONS_MISSING,
    )?);
    for condition in CONDITIONS {
        line(consistency(conn, condition)?);
    }
    Ok((out, all))
}

/// Runs `sql`; the server's message alone on failure (its caret block would split
/// the line), after `what`.
fn query(conn: &mut Connection, sql: &str, what: &str) -> Result<Vec<Vec<String>>, String> {
    let rows = conn.query_rows(sql).map_err(|e| {
        let why = e
            .db_error()
            .map_or_else(|| e.to_string(), |d| d.message.clone());
        format!("{what} could not be checked: {why}")
    })?;
    Ok(rows
        .into_iter()
        .map(|r| r.into_iter().map(Option::unwrap_or_default).collect())
        .collect())
}

/// How many rows a table must have after a load of `w` warehouses and any runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// No transaction adds or removes rows.
    Exactly(i64),
    /// Transactions add rows, none removes them.
    AtLeast(i64),
    /// Deliveries remove new orders as new orders add them.
    Any,
}

/// Each table of [`TABLES`] (in its order) after a load of `w` warehouses.
fn expected(w: i32) -> [Expect; 9] {
    let w64 = i64::from(w);
    let customers = w64 * i64::from(DISTRICTS * CUSTOMERS);
    let lines: i64 = (1..=w)
        .flat_map(|w| (1..=DISTRICTS).map(move |d| line_counts(w, d).iter().sum::<i64>()))
        .sum();
    [
        Expect::Exactly(w64),
        Expect::Exactly(w64 * i64::from(DISTRICTS)),
        Expect::Exactly(customers),
        Expect::AtLeast(customers),
        Expect::Any,
        Expect::AtLeast(w64 * i64::from(DISTRICTS * ORDERS)),
        Expect::AtLeast(lines),
        Expect::Exactly(i64::from(ITEMS)),
        Expect::Exactly(w64 * i64::from(ITEMS)),
    ]
}

/// The rows of every table against the load's (of `warehouses`, or as many as the
/// `warehouse` table holds when the mark does not say).
fn rows(conn: &mut Connection, warehouses: Option<i32>) -> Result<(String, bool), String> {
    let counts: Vec<String> = TABLES
        .iter()
        .map(|t| format!("(select count(*) from {t})"))
        .collect();
    let found = query(conn, &format!("select {}", counts.join(", ")), "the rows")?;
    let found: Vec<i64> = found
        .first()
        .map(|r| r.iter().map(|v| v.parse().unwrap_or(0)).collect())
        .unwrap_or_default();
    let w = warehouses.unwrap_or_else(|| found.first().map_or(0, |&n| n as i32));
    let mut wrong = Vec::new();
    for ((table, &n), want) in TABLES.iter().zip(&found).zip(expected(w)) {
        match want {
            Expect::Exactly(m) if n != m => wrong.push(format!("{table} {n}, loaded {m}")),
            Expect::AtLeast(m) if n < m => wrong.push(format!("{table} {n}, loaded {m}")),
            _ => {}
        }
    }
    let all: Vec<String> = TABLES
        .iter()
        .zip(&found)
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    Ok(if wrong.is_empty() {
        (format!("rows: {}\n", all.join(", ")), true)
    } else {
        (format!("rows FAIL: {}\n", wrong.join("; ")), false)
    })
}

/// The indexes of the names given that are missing or invalid (a build cut short).
const KEYS_MISSING: &str = "select k from unnest(array[{}]) with ordinality u(k, n) \
     where not exists (select from pg_catalog.pg_index i \
       where i.indexrelid = pg_catalog.to_regclass(k) and i.indisvalid) order by n";

/// The functions of the names given that the search path does not find.
const FUNCTIONS_MISSING: &str = "select f from unnest(array[{}]) with ordinality u(f, n) \
     where not exists (select from pg_catalog.pg_proc p \
       where p.proname = f and pg_catalog.pg_function_is_visible(p.oid)) order by n";

/// A line saying whether all of `names` exist, by `sql` (`{}`: the names); `what`
/// they are, and `why` those `sql` returns fail.
fn missing(
    conn: &mut Connection,
    (what, why): (&str, &str),
    names: &[&str],
    sql: &str,
) -> Result<(String, bool), String> {
    let list: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    let absent = query(conn, &sql.replace("{}", &list.join(", ")), what)?;
    if absent.is_empty() {
        return Ok((format!("{what}: all {}\n", names.len()), true));
    }
    let absent: Vec<&str> = absent
        .iter()
        .filter_map(|r| r.first())
        .map(|s| s.as_str())
        .collect();
    Ok((
        format!(
            "{what} FAIL: {} of {} {why}: {}\n",
            absent.len(),
            names.len(),
            absent.join(", ")
        ),
        false,
    ))
}

/// One consistency condition, naming up to five places that break it.
fn consistency(
    conn: &mut Connection,
    (n, what, keys, sql): (u32, &str, &[&str], &str),
) -> Result<(String, bool), String> {
    let label = format!("consistency condition {n}");
    let rows = query(conn, &format!("{sql} limit 5"), &label)?;
    if rows.is_empty() {
        return Ok((format!("{label} holds: {what}\n"), true));
    }
    Ok((
        format!(
            "{label} FAILS: {what}; broken for {}\n",
            places(keys, &rows)
        ),
        false,
    ))
}

/// `warehouse 3 district 4, warehouse 5 district 1`.
fn places(keys: &[&str], rows: &[Vec<String>]) -> String {
    rows.iter()
        .map(|r| {
            keys.iter()
                .zip(r)
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_condition_names_the_warehouse_and_district() {
        let rows = vec![
            vec!["3".to_string(), "4".to_string()],
            vec!["5".to_string(), "1".to_string()],
        ];
        assert_eq!(
            places(&["warehouse", "district"], &rows),
            "warehouse 3 district 4, warehouse 5 district 1"
        );
        assert_eq!(places(&["warehouse"], &rows[..1]), "warehouse 3");
    }

    #[test]
    fn the_expected_rows_are_the_loads() {
        let want = expected(2);
        assert_eq!(want[0], Expect::Exactly(2));
        assert_eq!(want[7], Expect::Exactly(100_000));
        assert_eq!(want[8], Expect::Exactly(200_000));
        assert_eq!(want[4], Expect::Any);
        let Expect::AtLeast(lines) = want[6] else {
            panic!("{:?}", want[6]);
        };
        // 30,000 orders per warehouse of 5-15 lines
        assert!((500_000..700_000).contains(&lines), "{lines}");
        let total: i64 = want
            .iter()
            .map(|e| match e {
                Expect::Exactly(n) | Expect::AtLeast(n) => *n,
                Expect::Any => 18_000,
            })
            .sum();
        assert_eq!(total, super::super::init::total_rows(2));
    }
}
