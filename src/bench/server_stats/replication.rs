//! The standbys attached to the server, from `pg_stat_replication` once a second: as
//! one JSON column of the second's snapshot, so that they cost no query of their own.

use pgbench_results::server::replication::StandbySample;

/// One row a WAL sender, under [`StandbySample`]'s names: its lags in seconds and the
/// WAL bytes its standby has yet to replay (none on a server in recovery, which has no
/// current WAL position of its own).
pub const QUERY: &str = "select pid, coalesce(application_name, '') as application_name, state, \
     extract(epoch from write_lag)::float8 as write_lag_s, \
     extract(epoch from flush_lag)::float8 as flush_lag_s, \
     extract(epoch from replay_lag)::float8 as replay_lag_s, \
     case when pg_catalog.pg_is_in_recovery() then null \
     else pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), replay_lsn)::bigint end \
     as replay_lag_bytes \
     from pg_catalog.pg_stat_replication";

/// [`QUERY`]'s rows as one JSON array, a one-row subquery of the snapshot.
pub fn as_json() -> String {
    format!("select coalesce(json_agg(r), '[]'::json) from ({QUERY}) r")
}

/// The standbys of [`as_json`]'s answer (none when it does not parse).
pub fn parse(json: Option<&str>) -> Vec<StandbySample> {
    json.and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standby_s_row_reads_under_its_names() {
        let json = r#"[{"pid":7,"application_name":"standby","state":"streaming",
            "write_lag_s":0.0002,"flush_lag_s":null,"replay_lag_s":0.2,"replay_lag_bytes":32896}]"#;
        let s = parse(Some(json));
        assert_eq!((s[0].pid, s[0].replay_lag_bytes), (7, Some(32896)));
        assert_eq!((s[0].flush_lag_s, s[0].replay_lag_s), (None, Some(0.2)));
        assert!(parse(Some("[]")).is_empty());
    }
}
