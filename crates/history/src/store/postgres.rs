//! A team's shared store in a real PostgreSQL database, through pgbench-rs's own
//! connection (libpq's conninfo, environment, password file). Its tables live in the
//! schema [`SCHEMA`], made on first use. Parameters go in as quoted literals of a
//! simple query (the connection's simple-query helpers return rows as text, which is
//! all the store reads): `standard_conforming_strings` is set on, so a quote doubled
//! is the whole of the escaping.

use super::backend::{Backend, Dialect, Inspect, Row, Value};
use crate::HistoryError;
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};

/// The schema that holds the store's tables.
pub const SCHEMA: &str = "pgbench_rs_history";

pub struct Postgres {
    conn: Connection,
    name: String,
}

impl Postgres {
    /// Connects to the database `conninfo` names.
    pub fn open(conninfo: &str) -> Result<Postgres, HistoryError> {
        let name = pgbench_wire::redact_secrets(conninfo);
        let connect = || {
            let opts = ConnectOptions::from_args(&ConnectArgs {
                dbname: Some(conninfo.to_string()),
                fallback_application_name: Some("pgbench-rs history".into()),
                ..ConnectArgs::default()
            })?;
            Connection::connect(&opts)
        };
        let conn = connect().map_err(|e| HistoryError::Connect {
            store: name.clone(),
            message: pgbench_wire::redact_secrets(e.to_string().trim_end()),
        })?;
        let mut pg = Postgres { conn, name };
        pg.query(
            "set standard_conforming_strings = on; set client_encoding = 'UTF8'",
            &[],
        )?;
        Ok(pg)
    }
}

/// `v` as an SQL literal.
fn literal(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("NULL"),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Real(f) if f.is_finite() => {
            out.push_str(&f.to_string());
            out.push_str("::float8");
        }
        Value::Real(f) => out.push_str(if f.is_nan() {
            "'NaN'::float8"
        } else if *f > 0.0 {
            "'Infinity'::float8"
        } else {
            "'-Infinity'::float8"
        }),
        Value::Text(s) => {
            out.push('\'');
            for c in s.chars() {
                match c {
                    '\'' => out.push_str("''"),
                    // A text value cannot hold NUL: the replacement character shows
                    // where one was.
                    '\0' => out.push('\u{FFFD}'),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
    }
}

/// `sql` with each `$N` replaced by the literal of `params[N-1]`, in one pass (a
/// value holding `$2` is not read again).
pub fn bind(sql: &str, params: &[Value]) -> String {
    let mut out = String::with_capacity(sql.len() + 64);
    let mut chars = sql.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while let Some((j, d)) = chars.peek().copied() {
            if !d.is_ascii_digit() {
                break;
            }
            end = j + 1;
            chars.next();
        }
        match sql[start..end]
            .parse::<usize>()
            .ok()
            .and_then(|n| params.get(n.wrapping_sub(1)))
        {
            Some(v) => literal(v, &mut out),
            None => out.push_str(&sql[i..end]),
        }
    }
    out
}

impl Backend for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, HistoryError> {
        let sql = bind(sql, params);
        self.conn.query_rows(&sql).map_err(|e| {
            // The server's message only: a failed statement's text holds the values.
            let message = match e.db_error() {
                Some(_) => first_line(&e.to_string()).to_string(),
                None => e.to_string(),
            };
            HistoryError::Store {
                store: self.name.clone(),
                message: pgbench_wire::redact_secrets(&message),
            }
        })
    }

    fn begin(&mut self) -> Result<(), HistoryError> {
        self.query("begin", &[]).map(drop)
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

impl Inspect for Postgres {
    fn tables(&mut self) -> Result<Vec<String>, HistoryError> {
        let rows = self.query(
            // pg_tables, not information_schema: that shows only the tables this
            // role has privileges on, and a store another role made would look empty.
            "select tablename from pg_tables where schemaname = $1 order by 1",
            &[SCHEMA.into()],
        )?;
        Ok(rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect())
    }

    fn ready(&mut self) -> Result<(), HistoryError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_become_literals_once() {
        assert_eq!(
            bind(
                "insert into t values ($1, $2, $3, $10, $4, $5)",
                &[
                    Value::Text("it's $2".into()),
                    Value::Int(-3),
                    Value::Real(0.5),
                    Value::Null,
                    Value::Real(f64::NAN),
                ]
            ),
            "insert into t values ('it''s $2', -3, 0.5::float8, $10, NULL, 'NaN'::float8)"
        );
        assert_eq!(bind("select '\0'", &[]), "select '\0'");
        assert_eq!(bind("$1", &[Value::Text("a\0b".into())]), "'a\u{FFFD}b'");
    }
}
