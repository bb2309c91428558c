//! HammerDB's monitor for the result line: on a connection of its own, the server's
//! transactions (`sum(xact_commit + xact_rollback)` of `pg_stat_database`) and new
//! orders (`sum(d_next_o_id)` of `district`) when the measured part begins and when
//! the run ends; their differences per minute are TPM and NOPM. The end is read after
//! the run's connections have closed (waited for up to 2 s), so that a transaction a
//! client was cut from has committed or not by then; those still open are counted.
//! A lost connection is made again for the end's read. It also finds the number of
//! warehouses before the run (the scripts' `:scale`).

use crate::bench::error::RunError;
use crate::bench::window::watched::short;
use crate::bench::window::{self, Watched, Watcher};
use pgbench_results::workload::tpcc::ServerCounts;
use pgbench_wire::{ConnectOptions, Connection};

/// The two sums, read together.
const COUNTS: &str = "select (select sum(xact_commit + xact_rollback) from pg_stat_database), \
     (select sum(d_next_o_id) from district)";

/// The monitor's connection and the counts at the start of the measured part.
pub struct Monitor {
    conn: Watched,
    start: (i64, i64),
}

fn setup_error(message: String) -> RunError {
    RunError::Setup {
        message,
        hint: None,
    }
}

impl Monitor {
    /// Connects (before the clients start, so a failure stops nothing running).
    pub fn connect(opts: &ConnectOptions) -> Result<Monitor, RunError> {
        let conn = Watched::connect(opts, "TPC-C monitor")
            .map_err(|e| setup_error(format!("could not connect the TPC-C monitor: {e}")))?;
        Ok(Monitor {
            conn,
            start: (0, 0),
        })
    }

    /// The two counts now (on a connection made again if it was lost).
    fn counts(&mut self) -> Result<(i64, i64), RunError> {
        let mut rows = self.conn.query(COUNTS);
        if let Err(e) = &rows {
            if self.conn.lost(Some(e)) && self.conn.reconnect().is_ok() {
                rows = self.conn.query(COUNTS);
            }
        }
        let rows = rows.map_err(|e| {
            let why = if self.conn.cut_off() {
                "the server did not answer in time at the end of the run".to_string()
            } else {
                short(&e)
            };
            setup_error(format!("could not read the TPC-C counts: {why}"))
        })?;
        let value = |i: usize| -> i64 {
            rows.first()
                .and_then(|r| r.get(i).cloned().flatten())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        Ok((value(0), value(1)))
    }
}

impl Watcher for Monitor {
    type Output = ServerCounts;

    fn link(&self) -> window::Link {
        self.conn.link()
    }

    /// Reads the counts at the start of the measured part.
    fn start(&mut self) -> Result<(), RunError> {
        self.start = self.counts()?;
        Ok(())
    }

    /// Reads them again at the end, once the run's connections have closed: what the
    /// server did in between.
    fn finish(&mut self) -> Result<ServerCounts, RunError> {
        let mut backends_left = self.conn.await_run_backends(window::EXIT_WAIT_US);
        if backends_left
            .as_ref()
            .is_err_and(|e| self.conn.lost(Some(e)))
            && self.conn.reconnect().is_ok()
        {
            backends_left = self.conn.await_run_backends(window::EXIT_WAIT_US);
        }
        let end = self.counts()?;
        Ok(ServerCounts {
            transactions: end.0 - self.start.0,
            new_orders: end.1 - self.start.1,
            // Not known (pg_stat_activity not readable): none waited for.
            backends_left: backends_left.unwrap_or(0),
        })
    }
}

/// The number of warehouses, or what to do when the tables are missing.
pub fn warehouses(conn: &mut Connection) -> Result<i32, String> {
    let hint = format!(
        "run \"{} -i --workload=tpcc -s WAREHOUSES\" first",
        crate::logging::progname()
    );
    match conn.query_rows("select count(*) from warehouse") {
        Ok(rows) => {
            let n: i64 = rows
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if n < 1 {
                return Err(format!("no warehouses in table \"warehouse\"; {hint}"));
            }
            Ok(n as i32)
        }
        Err(e) => {
            // The server's message alone: its caret block would split the line.
            let why = e
                .db_error()
                .map_or_else(|| e.to_string(), |d| d.message.clone());
            Err(format!("could not count warehouses: {why}; {hint}"))
        }
    }
}
