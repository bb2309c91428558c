//! Turning the tokenised command line into what to do, with pgbench 15's validation:
//! the same checks in the same order, the same messages, exit status 1.
//!
//! Mirrors the option loop of pgbench.c's `main()` (`draft`) and the checks after it
//! (`checks`). Options are acted on in command-line order, so a script's syntax error
//! is reported before a bad option that follows it, as pgbench does. Nothing here
//! prints: what pgbench says while parsing comes back as notices.

mod checks;
mod draft;
pub mod error;
mod scenarios;
mod values;

use super::args::{Occurrence, Tokens};
use crate::bench::plan::BenchPlan;
use crate::init::InitOptions;
pub use error::ConfigError;

/// What the command line asks for.
#[derive(Debug, Clone)]
pub enum Action {
    Help,
    Version,
    /// `-b list` or `--show-script`: text for stderr, exit 0.
    PrintAndExit(String),
    Init {
        conn: ConnArgs,
        init: InitOptions,
        temp_instance: Option<crate::temp_instance::TempInstance>,
        /// `--metrics-listen`: the load's progress served while it runs.
        metrics: Option<crate::metrics::MetricsPlan>,
    },
    /// `-i --workload=NAME`: the workload's prepare step (`how`: over `-j`
    /// connections, `-s`, the seed, `-q`).
    Prepare {
        conn: ConnArgs,
        workload: std::sync::Arc<dyn crate::workload::Workload>,
        how: crate::workload::PrepareOptions,
        /// `--temp-instance`: prepare on a throwaway cluster (to time a load).
        temp_instance: Option<crate::temp_instance::TempInstance>,
        /// `--metrics-listen`: the load's progress served while it runs.
        metrics: Option<crate::metrics::MetricsPlan>,
    },
    /// `--check` without `--workload`: pgbench's tables against their scale, no run.
    CheckTables {
        conn: ConnArgs,
    },
    /// `--workload=NAME --check`: the workload's consistency checks, no run.
    CheckWorkload {
        conn: ConnArgs,
        workload: std::sync::Arc<dyn crate::workload::Workload>,
    },
    Bench {
        conn: ConnArgs,
        plan: Box<BenchPlan>,
        /// `--temp-instance` or `--temp-instance-durable`: run on a throwaway cluster.
        temp_instance: Option<crate::temp_instance::TempInstance>,
        /// `--workload=NAME` in full (the plan holds what a run asks of it): what a
        /// throwaway cluster is prepared with.
        workload: Option<std::sync::Arc<dyn crate::workload::Workload>>,
        /// `--history`, `PGBENCH_RS_HISTORY`: where the run is recorded.
        history: Option<crate::session::history::HistoryPlan>,
        /// `--export-json`, `--export-html`: the results files written after it.
        export: crate::session::Export,
    },
    /// `--sweep` or `--find-max-rate`: `base` run once a step, changed as `capacity`
    /// says (`crate::capacity`).
    Sweep {
        conn: ConnArgs,
        base: Box<BenchPlan>,
        capacity: crate::capacity::plan::CapacityPlan,
        temp_instance: Option<crate::temp_instance::TempInstance>,
        workload: Option<std::sync::Arc<dyn crate::workload::Workload>>,
        history: Option<crate::session::history::HistoryPlan>,
        export: crate::session::Export,
    },
}

/// What reading the command line gave: the notices pgbench prints while parsing
/// (`setting random seed to N`, info lines, printed first), then the action or why
/// there is none.
#[derive(Debug)]
pub struct Interpretation {
    pub notices: Vec<String>,
    pub outcome: Result<Action, ConfigError>,
}

/// Where to connect: pgbench's `-h`, `-p`, `-U` and database name (which may be a
/// conninfo string or a URI).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnArgs {
    pub host: Option<String>,
    pub port: Option<String>,
    pub user: Option<String>,
    pub dbname: String,
    /// DBNAME was on the command line (not from `PGDATABASE`, `PGUSER` or the login).
    pub dbname_given: bool,
}

impl ConnArgs {
    /// What pgbench passes to `PQconnectdbParams`: `-h -p -U`, DBNAME (expanded when
    /// it is a conninfo string or URI) and the program's name as the fallback
    /// application name.
    pub fn connect_args(&self) -> pgbench_wire::ConnectArgs {
        pgbench_wire::ConnectArgs {
            host: self.host.clone(),
            port: self.port.clone(),
            user: self.user.clone(),
            password: None,
            dbname: Some(self.dbname.clone()),
            // pgbench's doConnect passes its progname: invoked as pgbench-rs, the
            // server sees `pgbench-rs`; through a symlink named pgbench, `pgbench`.
            fallback_application_name: Some(crate::logging::progname().to_string()),
        }
    }
}

/// The environment pgbench consults while parsing (tests pass their own).
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
    fn read_file(&self, path: &str) -> std::io::Result<String>;
    fn os_user(&self) -> Option<String>;
    /// Makes sure this many files can be open (pgbench 18 raises the soft limit).
    fn ensure_open_files(&self, need: u64) -> Result<(), crate::sys::LimitError>;
}

/// The real process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn read_file(&self, path: &str) -> std::io::Result<String> {
        if path == "-" {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
            Ok(s)
        } else {
            let bytes = std::fs::read(path)?;
            // pgbench reads bytes; scripts in other encodings still parse as SQL_ASCII.
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        }
    }

    fn os_user(&self) -> Option<String> {
        crate::sys::os_user_name()
    }

    fn ensure_open_files(&self, need: u64) -> Result<(), crate::sys::LimitError> {
        crate::sys::ensure_open_files(need)
    }
}

/// Reads the whole command line (without `argv[0]`) as pgbench 15 does.
pub fn interpret(argv0: &str, args: &[String], env: &dyn Env) -> Interpretation {
    let mut notices = Vec::new();
    let outcome = interpret_into(argv0, args, env, &mut notices);
    Interpretation { notices, outcome }
}

fn interpret_into(
    argv0: &str,
    args: &[String],
    env: &dyn Env,
    notices: &mut Vec<String>,
) -> Result<Action, ConfigError> {
    // --help and --version count only as the first argument.
    match args.first().map(String::as_str) {
        Some("--help" | "-?") => return Ok(Action::Help),
        Some("--version" | "-V") => return Ok(Action::Version),
        _ => {}
    }
    // The seed is set from the environment first, then by each --random-seed.
    let (seed, seed_given) = match env.var("PGBENCH_RANDOM_SEED") {
        None => (crate::sys::time_seed(), false),
        Some(s) => {
            let seed = values::parse_seed(&s, "PGBENCH_RANDOM_SEED environment variable")?;
            notices.push(format!("setting random seed to {seed}"));
            (seed, values::seed_is_number(&s))
        }
    };
    let Tokens {
        options,
        positionals,
    } = super::args::tokenize(argv0, args).map_err(|e| ConfigError::Getopt(e.0))?;
    let mut draft = draft::Draft::new(seed, seed_given);
    draft.tables_typed = args
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--tables" || a.starts_with("--tables="));
    for Occurrence { opt, value } in options {
        if let Some(exit) = draft.apply(opt, value.as_deref().unwrap_or(""), env, notices)? {
            return Ok(exit);
        }
    }
    checks::finish(draft, positionals, env)
}

#[cfg(test)]
mod sweep_tests;
#[cfg(test)]
mod tests;
