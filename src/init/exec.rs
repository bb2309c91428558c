//! What every step does the same way: open a connection, run one statement with
//! pgbench's `query failed` error, write a message to stderr whole.

use std::io::Write;

use pgbench_wire::{ConnectOptions, Connection};

use super::error::InitError;
use super::interrupt;

/// Opens one connection for initialisation.
pub(super) fn connect(options: &ConnectOptions) -> Result<Connection, InitError> {
    let conn = Connection::connect(options).map_err(|e| InitError::Connect {
        message: e.to_string(),
    })?;
    interrupt::register(&conn);
    Ok(conn)
}

/// Writes a whole message to stderr at once; like pgbench's `fprintf(stderr, ...)`,
/// failures to write are ignored.
pub(super) fn say(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Runs one statement; a failure is pgbench's `query failed` (`executeStatement`).
pub(super) fn execute(conn: &mut Connection, sql: &str) -> Result<(), InitError> {
    conn.execute(sql).map_err(|e| InitError::Query {
        message: e.to_string(),
        sql: sql.to_string(),
    })
}
