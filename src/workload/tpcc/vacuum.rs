//! `-D vacuum=1`, HammerDB's `pg_vacuum` ("Checkpoint when complete"): after the run's
//! last count, a CHECKPOINT and a VACUUM, so the next run starts from a database
//! without the dead rows this one left. HammerDB's monitor says what it does on its
//! output; this says it on stderr, so the report stays pgbench's. HammerDB 4.12 and
//! 5.0 run the VACUUM on the connection they make to `pg_defaultdbase` (postgres),
//! which vacuums that database; 6.0 and this vacuum the run's.

use crate::bench::observer::Notice;
use crate::logging::Level;
use pgbench_wire::{ConnectOptions, Connection};
use std::time::Instant;

/// The statements, in HammerDB's order.
pub const STATEMENTS: [&str; 2] = ["checkpoint", "vacuum"];

/// Runs them on a connection of its own; what it says (a failure is a warning: the
/// run's figures were taken before it).
pub fn after_run(opts: &ConnectOptions) -> Notice {
    let start = Instant::now();
    let done = Connection::connect(opts)
        .map_err(|e| e.to_string())
        .and_then(|mut conn| {
            STATEMENTS.iter().try_for_each(|sql| {
                conn.execute(sql)
                    .map(|_| ())
                    .map_err(|e| format!("{sql}: {e}"))
            })
        });
    match done {
        Ok(()) => Notice {
            level: Level::Info,
            text: format!(
                "checkpoint and vacuum done in {:.2} s (-D vacuum=1)",
                start.elapsed().as_secs_f64()
            ),
        },
        Err(e) => Notice::warning(format!("checkpoint and vacuum failed: {e}")),
    }
}
