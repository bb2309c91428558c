//! Initialisation mode (`pgbench -i`): runs the steps `dtgGvpf` in the order given, on one
//! connection, with pgbench 15's SQL, messages and final `done in ...` line
//! (`runInitSteps`). With `jobs` > 1 the data load, vacuum and primary keys are spread
//! over several connections (`parallel`). The command line (option parsing and
//! validation, `-n`/`--foreign-keys` folding into the steps) is not here.

mod error;
pub mod interrupt;
mod load;
mod parallel;
pub(crate) mod progress;
mod rows;
mod sql;

use std::io::{IsTerminal, Write};
use std::time::Instant;

use pgbench_wire::{ConnectOptions, Connection};

pub use error::InitError;

/// How `pgbench_accounts` is partitioned (`--partition-method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PartitionMethod {
    /// Not partitioned.
    #[default]
    None,
    /// `partition by range (aid)`.
    Range,
    /// `partition by hash (aid)`.
    Hash,
}

/// Everything `-i` needs besides the connection, already validated by the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitOptions {
    /// Step letters from `dtgGvpf ` (`-I`, with `-n` and `--foreign-keys` applied).
    pub steps: String,
    /// `-s`: 1 branch, 10 tellers and 100,000 accounts per unit.
    pub scale: i32,
    /// `-F`: fillfactor of tellers, accounts (and its partitions) and branches.
    pub fillfactor: i32,
    /// `-q`: a progress line every 5 seconds instead of every 100,000 rows.
    pub quiet: bool,
    /// `--unlogged-tables`.
    pub unlogged_tables: bool,
    /// `--partitions`: 0 means not partitioned.
    pub partitions: i32,
    /// `--partition-method`; with `partitions` > 0, `None` means range as in pgbench.
    pub partition_method: PartitionMethod,
    /// `--tablespace` for the four tables.
    pub tablespace: Option<String>,
    /// `--index-tablespace` for the primary keys.
    pub index_tablespace: Option<String>,
    /// `-j` in init mode: connections for loading, vacuum and primary keys. `None` or 1
    /// is pgbench's one-connection behaviour (pgbench rejects `-j` with `-i`).
    pub jobs: Option<u32>,
}

impl Default for InitOptions {
    /// pgbench's defaults: steps `dtgvp`, scale 1, fillfactor 100, nothing else.
    fn default() -> InitOptions {
        InitOptions {
            steps: "dtgvp".into(),
            scale: 1,
            fillfactor: 100,
            quiet: false,
            unlogged_tables: false,
            partitions: 0,
            partition_method: PartitionMethod::None,
            tablespace: None,
            index_tablespace: None,
            jobs: None,
        }
    }
}

impl InitOptions {
    /// The options as the steps use them: a partition method exactly when partitioned.
    fn normalized(&self) -> InitOptions {
        let mut opts = self.clone();
        opts.partitions = opts.partitions.max(0);
        if opts.partitions == 0 {
            opts.partition_method = PartitionMethod::None;
        } else if opts.partition_method == PartitionMethod::None {
            opts.partition_method = PartitionMethod::Range;
        }
        opts
    }

    /// Connections to use for the parallel parts, if more than one.
    fn parallel_jobs(&self) -> Option<usize> {
        match self.jobs {
            Some(n) if n > 1 => Some(n as usize),
            _ => None,
        }
    }
}

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

/// Opens one connection for initialisation.
fn connect(options: &ConnectOptions) -> Result<Connection, InitError> {
    let conn = Connection::connect(options).map_err(|e| InitError::Connect {
        message: e.to_string(),
    })?;
    interrupt::register(&conn);
    Ok(conn)
}

/// Writes a whole message to stderr at once; like pgbench's `fprintf(stderr, ...)`,
/// failures to write are ignored.
fn say(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// True when progress lines should overwrite each other (`isatty(stderr)`).
fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Runs one statement; a failure is pgbench's `query failed` (`executeStatement`).
fn execute(conn: &mut Connection, sql: &str) -> Result<(), InitError> {
    conn.execute(sql).map_err(|e| InitError::Query {
        message: e.to_string(),
        sql: sql.to_string(),
    })
}

/// The state of one `-i` run.
struct Init<'a> {
    opts: InitOptions,
    connect: &'a ConnectOptions,
    /// The connection every step uses (pgbench's only one).
    main: Connection,
    /// Extra connections for `jobs` > 1, opened by the first parallel step.
    helpers: Vec<Connection>,
}

impl Init<'_> {
    fn run_steps(&mut self) -> Result<(), InitError> {
        let steps: Vec<char> = self.opts.steps.chars().collect();
        let mut stats = Vec::new();
        let mut run_time = 0.0;
        for step in steps {
            let start = Instant::now();
            let op = match step {
                'd' => {
                    self.drop_tables()?;
                    "drop tables"
                }
                't' => {
                    self.create_tables()?;
                    "create tables"
                }
                'g' => {
                    self.generate_client_side()?;
                    "client-side generate"
                }
                'G' => {
                    self.generate_server_side()?;
                    "server-side generate"
                }
                'v' => {
                    self.vacuum()?;
                    "vacuum"
                }
                'p' => {
                    self.primary_keys()?;
                    "primary keys"
                }
                'f' => {
                    self.foreign_keys()?;
                    "foreign keys"
                }
                ' ' => continue,
                other => return Err(InitError::UnknownStep(other)),
            };
            let elapsed = start.elapsed().as_secs_f64();
            stats.push(format!("{op} {elapsed:.2} s"));
            run_time += elapsed;
        }
        say(&format!(
            "done in {run_time:.2} s ({}).\n",
            stats.join(", ")
        ));
        Ok(())
    }

    fn drop_tables(&mut self) -> Result<(), InitError> {
        say("dropping old tables...\n");
        execute(&mut self.main, sql::DROP_TABLES)
    }

    fn create_tables(&mut self) -> Result<(), InitError> {
        say("creating tables...\n");
        for statement in sql::create_tables(&self.opts) {
            execute(&mut self.main, &statement)?;
        }
        if self.opts.partitions > 0 {
            say(&format!(
                "creating {} partitions...\n",
                self.opts.partitions
            ));
            for statement in sql::create_partitions(&self.opts) {
                execute(&mut self.main, &statement)?;
            }
        }
        Ok(())
    }

    fn generate_client_side(&mut self) -> Result<(), InitError> {
        say("generating data (client-side)...\n");
        match self.opts.parallel_jobs() {
            None => load::client_side(&mut self.main, &self.opts),
            Some(jobs) => {
                let width = jobs.min(parallel::plan(&self.opts, jobs).len());
                let opts = self.opts.clone();
                let (main, helpers) = self.connections(width)?;
                let loaded = parallel::client_side(main, helpers, &opts);
                self.empty_after_failure(loaded)
            }
        }
    }

    /// A parallel load commits piece by piece; when it fails or is interrupted, the
    /// tables are emptied again, as a one-session load leaves them (its one
    /// transaction rolls back), rather than left half-loaded.
    fn empty_after_failure(&mut self, loaded: Result<(), InitError>) -> Result<(), InitError> {
        if loaded.is_err() && execute(&mut self.main, sql::TRUNCATE_TABLES).is_ok() {
            say("the load did not complete: the pgbench tables were emptied again\n");
        }
        loaded
    }

    fn generate_server_side(&mut self) -> Result<(), InitError> {
        say("generating data (server-side)...\n");
        match self.opts.parallel_jobs() {
            None => load::server_side(&mut self.main, &self.opts),
            Some(jobs) => {
                let width = jobs.min(parallel::plan(&self.opts, jobs).len());
                let opts = self.opts.clone();
                let (main, helpers) = self.connections(width)?;
                let loaded = parallel::server_side(main, helpers, &opts);
                self.empty_after_failure(loaded)
            }
        }
    }

    fn vacuum(&mut self) -> Result<(), InitError> {
        say("vacuuming...\n");
        // After a parallel load the accounts rows are not frozen as pgbench's COPY FREEZE
        // leaves them; `vacuum (freeze)` here would rewrite the table with full-page
        // images and cost more than the parallel load saves (docs/init.md), so this is
        // pgbench's statement in every case.
        let statements: Vec<String> = sql::VACUUM_TABLES
            .iter()
            .map(|table| format!("vacuum analyze {table}"))
            .collect();
        match self.opts.parallel_jobs() {
            Some(jobs) => {
                // Three small tables plus accounts or each of its partitions.
                let width = jobs.min(3 + self.opts.partitions.max(1) as usize);
                let (main, helpers) = self.connections(width)?;
                parallel::vacuum(main, helpers, statements)
            }
            None => self.maintenance(statements),
        }
    }

    fn primary_keys(&mut self) -> Result<(), InitError> {
        say("creating primary keys...\n");
        self.maintenance(sql::primary_keys(&self.opts))
    }

    fn foreign_keys(&mut self) -> Result<(), InitError> {
        say("creating foreign keys...\n");
        // Each constraint locks pgbench_branches or pgbench_tellers against the others,
        // so running them concurrently would only queue them: always one connection.
        for statement in sql::FOREIGN_KEYS {
            execute(&mut self.main, statement)?;
        }
        Ok(())
    }

    /// Runs independent per-table statements: in order on the main connection, or
    /// concurrently over the `jobs` connections.
    fn maintenance(&mut self, statements: Vec<String>) -> Result<(), InitError> {
        match self.opts.parallel_jobs() {
            Some(jobs) => {
                let (main, helpers) = self.connections(jobs.min(statements.len()))?;
                parallel::statements(main, helpers, statements)
            }
            None => {
                for statement in &statements {
                    execute(&mut self.main, statement)?;
                }
                Ok(())
            }
        }
    }

    /// `width` connections for a parallel step: the main one and `width - 1` helpers,
    /// opened the first time they are needed and kept for later steps.
    fn connections(
        &mut self,
        width: usize,
    ) -> Result<(&mut Connection, &mut [Connection]), InitError> {
        let helpers = width.max(1) - 1;
        while self.helpers.len() < helpers {
            self.helpers.push(connect(self.connect)?);
        }
        Ok((&mut self.main, &mut self.helpers[..helpers]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> InitOptions {
        InitOptions::default()
    }

    #[test]
    fn partitions_default_to_range() {
        let o = InitOptions {
            partitions: 4,
            ..opts()
        }
        .normalized();
        assert_eq!(o.partition_method, PartitionMethod::Range);
        let o = InitOptions {
            partition_method: PartitionMethod::Hash,
            ..opts()
        }
        .normalized();
        assert_eq!(o.partition_method, PartitionMethod::None);
    }

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

    #[test]
    fn one_job_is_stock_behaviour() {
        assert_eq!(opts().parallel_jobs(), None);
        assert_eq!(
            InitOptions {
                jobs: Some(1),
                ..opts()
            }
            .parallel_jobs(),
            None
        );
        assert_eq!(
            InitOptions {
                jobs: Some(3),
                ..opts()
            }
            .parallel_jobs(),
            Some(3)
        );
    }
}
