//! Initialisation mode (`pgbench -i`): runs the steps `dtgGvpf` in the order given, on one
//! connection, with pgbench 15's SQL, messages and final `done in ...` line
//! (`runInitSteps`). With `jobs` > 1 the data load, vacuum and primary keys are spread
//! over several connections (`parallel`). The command line (option parsing and
//! validation, `-n`/`--foreign-keys` folding into the steps) is not here.

pub mod check;
mod error;
mod exec;
pub mod interrupt;
mod load;
mod options;
mod parallel;
pub(crate) mod progress;
pub(crate) mod queue;
pub mod resume;
#[doc(hidden)] // public for benches/init/copy_rows.rs (the ceiling benchmark's files) only
pub mod rows;
mod sql;
mod steps;
mod units;

use pgbench_wire::{ConnectOptions, Connection};

pub use error::InitError;
use exec::{connect, say};
pub use options::{InitOptions, PartitionMethod};
use steps::Init;

/// Runs the initialisation steps against the database `conn` names. Messages, NOTICEs
/// and progress go to stderr as with pgbench; on failure nothing more is printed, the
/// caller prints [`InitError::render`] (which takes the program name) and exits with
/// status 1. Every line printed here is unprefixed, so `_progname` is not needed yet.
pub fn run(conn: &ConnectOptions, opts: &InitOptions, progname: &str) -> Result<(), InitError> {
    let main = connect(conn)?;
    run_on(main, conn, opts, progname)
}

/// [`run`] on a connection already made (the one pgbench's prompt made), so `-i`
/// connects once where pgbench does.
pub fn run_on(
    main: Connection,
    conn: &ConnectOptions,
    opts: &InitOptions,
    _progname: &str,
) -> Result<(), InitError> {
    interrupt::register(&main);
    let mut opts = opts.normalized();
    if let Some(jobs) = opts.parallel_jobs() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if !parallel_pays(conn, jobs, cores) {
            say(&format!(
                "loading over one connection, not {jobs}: the server shares this machine's {cores} cores, where one session (with COPY FREEZE) is faster\n"
            ));
            opts.jobs = None;
        }
    }
    let mut init = Init {
        opts,
        connect: conn,
        main,
        helpers: Vec::new(),
    };
    init.run_steps()
}

/// Whether loading over `jobs` connections can beat one session. Measured on a
/// server sharing this machine's 2 cores (docs/init.md): the server alone needs 0.69
/// of stock's time with two sessions against 0.64 with one (COPY FREEZE, no vacuum of
/// the rows), so a parallel load only pays when every session and its backend get a
/// core. A remote server is assumed to have them. `PGBENCH_RS_PARALLEL_INIT=always`
/// loads in parallel anyway (tests, measurements).
fn parallel_pays(conn: &ConnectOptions, jobs: usize, cores: usize) -> bool {
    if std::env::var("PGBENCH_RS_PARALLEL_INIT").as_deref() == Ok("always") {
        return true;
    }
    let local = conn.hosts().iter().all(|(host, _)| {
        host.is_empty()
            || host.starts_with('/')
            || host.starts_with('@')
            || host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|a| a.is_loopback())
    });
    !local || cores >= 2 * jobs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_loading_needs_a_core_per_session_and_backend_or_a_remote_server() {
        let on = |host: &str| {
            let args = pgbench_wire::ConnectArgs {
                host: Some(host.to_string()),
                dbname: Some("x".to_string()),
                ..Default::default()
            };
            ConnectOptions::from_env_and_args(&|_| None, &args).unwrap()
        };
        assert!(!parallel_pays(&on("/tmp"), 2, 2));
        assert!(!parallel_pays(&on("127.0.0.1"), 4, 4));
        assert!(parallel_pays(&on("localhost"), 2, 4));
        assert!(parallel_pays(&on("db.example.com"), 8, 2));
    }
}
