//! The standbys attached to the server, from `pg_stat_replication` once a second.

use super::Rows;
use pgbench_results::server::replication::StandbySample;

/// One row a WAL sender: its lags in seconds and the WAL bytes its standby has yet to
/// replay (none on a server in recovery, which has no current WAL position of its own).
pub const QUERY: &str = "select pid, coalesce(application_name, ''), state, \
     extract(epoch from write_lag)::float8, extract(epoch from flush_lag)::float8, \
     extract(epoch from replay_lag)::float8, \
     case when pg_catalog.pg_is_in_recovery() then null \
     else pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), replay_lsn)::bigint end \
     from pg_catalog.pg_stat_replication order by pid";

/// The rows of [`QUERY`]'s answer.
pub fn parse(rows: &Rows) -> Vec<StandbySample> {
    rows.iter()
        .map(|r| {
            let text = |i: usize| r.get(i).cloned().flatten();
            StandbySample {
                pid: text(0).and_then(|v| v.parse().ok()).unwrap_or(0),
                application_name: text(1).unwrap_or_default(),
                state: text(2),
                write_lag_s: text(3).and_then(|v| v.parse().ok()),
                flush_lag_s: text(4).and_then(|v| v.parse().ok()),
                replay_lag_s: text(5).and_then(|v| v.parse().ok()),
                replay_lag_bytes: text(6).and_then(|v| v.parse().ok()),
            }
        })
        .collect()
}
