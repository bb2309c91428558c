//! Which pgbench pgbench-rs is: the PostgreSQL version it reproduces, as the banner,
//! `--version` and the server-version comparison use it.

/// What pgbench prints as `PG_VERSION` (banner and `--version`); the version it
/// reproduces lives in the results crate, as `pgbench-report show` prints the banner too.
pub fn pg_version() -> String {
    format!(
        "{} (pgbench-rs {})",
        pgbench_results::stock::PG_VERSION,
        env!("CARGO_PKG_VERSION")
    )
}

/// The server's version as an integer (`150018`), as libpq's `PQserverVersion` gives
/// it: `server_version_num` when the server reports it, else parsed from
/// `server_version` (by the rule `pgbench-report show` uses for a results file).
pub fn server_version_num(conn: &pgbench_wire::Connection) -> i32 {
    match conn
        .parameter("server_version_num")
        .and_then(|v| v.parse().ok())
    {
        Some(n) => n,
        None => conn
            .parameter("server_version")
            .map_or(0, pgbench_results::show::version_num),
    }
}
