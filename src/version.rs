//! Which pgbench pgbench-rs is: the PostgreSQL version it reproduces, as the banner,
//! `--version` and the server-version comparison use it.

/// The PostgreSQL version pgbench-rs reproduces, as `PG_VERSION_NUM`.
pub const PG_VERSION_NUM: i32 = 150018;

/// What pgbench prints as `PG_VERSION` (banner and `--version`).
pub fn pg_version() -> String {
    format!("15.18 (pgbench-rs {})", env!("CARGO_PKG_VERSION"))
}
