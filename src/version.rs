//! Which pgbench pgbench-rs is: the PostgreSQL version it reproduces, as the banner,
//! `--version` and the server-version comparison use it.

/// What pgbench prints as `PG_VERSION` (banner and `--version`); the version it
/// reproduces lives in the results crate, as `pgbench-report show` prints the banner too.
pub fn pg_version() -> String {
    format!(
        "{} (pgbench-rs {})",
        pgbench_results::show::PG_VERSION,
        env!("CARGO_PKG_VERSION")
    )
}
