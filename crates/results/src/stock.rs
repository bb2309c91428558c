//! The stock pgbench release whose output pgbench-rs reproduces: its `PG_VERSION`
//! in the banner of a run and of `pgbench-report show`, its `PG_VERSION_NUM` beside
//! the server's, and the release results files were written against before they
//! recorded it.

/// The PostgreSQL version pgbench-rs reproduces, as pgbench's `PG_VERSION` and
/// `PG_VERSION_NUM`: the banner of a run and of a results file's `show`.
pub const PG_VERSION: &str = "15.20";
pub const PG_VERSION_NUM: i32 = 150020;

/// What files written before they recorded
/// [`crate::document::ResultsFile::pgbench_version`]
/// reproduced.
pub const PG_VERSION_BEFORE_RECORDED: &str = "15.18";
