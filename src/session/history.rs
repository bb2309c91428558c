//! Recording a finished mode's results file in the run history (`--history[=STORE]`,
//! or `PGBENCH_RS_HISTORY` alone, with `--tag KEY=VALUE` labels): one more thing the
//! session does after any mode, a plain run's file or a sweep's or search's, with what
//! the run ran on (this machine, and the server's version and settings read over a
//! connection of its own after the run).
//!
//! Recording never costs the run: a store that cannot be opened or written is a
//! warning naming it and why, and the report, the exit status and the results files
//! are as without it. It prints nothing when it works, so that a command line run
//! with `PGBENCH_RS_HISTORY` set (a `pgbench` symlink, the guides' lines) prints what
//! stock prints. A `--worker`'s file is one worker's share: the merged file is what
//! is recorded (`pgbench-report merge` records it).

use crate::logging;
use pgbench_history::{Environment, RecordInput, Store};
use pgbench_results::ResultsFile;
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};

/// The environment variable that names the store and, set alone, records every run.
pub const HISTORY_ENV: &str = "PGBENCH_RS_HISTORY";

/// Where a mode's results are recorded, and their labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryPlan {
    /// The store: a SQLite file path or a PostgreSQL conninfo/URI; `None`: the
    /// default ([`pgbench_history::default_store`]).
    pub store: Option<String>,
    /// `--tag KEY=VALUE`, in command-line order.
    pub tags: Vec<(String, String)>,
    /// `--worker`: this process's file is one share, not recorded here.
    pub worker: bool,
}

impl HistoryPlan {
    /// What the options and the environment ask for: `--history` (with its store,
    /// or the default), else `PGBENCH_RS_HISTORY` set and not empty; `None` when
    /// neither is.
    pub fn of(
        history: Option<Option<String>>,
        tags: Vec<(String, String)>,
        env_store: Option<String>,
        worker: bool,
    ) -> Option<HistoryPlan> {
        let env_store = env_store.filter(|s| !s.is_empty());
        let store = match history {
            Some(given) => given.filter(|s| !s.is_empty()),
            None => Some(env_store?),
        };
        Some(HistoryPlan {
            store,
            tags,
            worker,
        })
    }
}

/// `--tag KEY=VALUE`: the label, or why it is not one.
pub fn parse_tag(v: &str) -> Result<(String, String), String> {
    match v.split_once('=') {
        Some((k, value)) if !k.trim().is_empty() => Ok((k.trim().to_string(), value.to_string())),
        _ => Err(format!(
            "invalid --tag \"{v}\": expected KEY=VALUE with a non-empty KEY"
        )),
    }
}

/// Records `file`, run against `target`; a failure is a warning on stderr.
pub fn record(plan: &HistoryPlan, file: &ResultsFile, target: &ConnectArgs, argv: &[String]) {
    if plan.worker {
        logging::info(
            "this --worker's results are one share of the run: the history records the merged file (pgbench-report merge, with --history or PGBENCH_RS_HISTORY)",
        );
        return;
    }
    let store = match &plan.store {
        Some(spec) => Store::open(spec),
        None => Store::open_default(),
    };
    let mut store = match store {
        Ok(s) => s,
        Err(e) => return warn(&e),
    };
    let environment = Environment {
        client: Some(Environment::client(&format!(
            "pgbench-rs {}",
            env!("CARGO_PKG_VERSION")
        ))),
        server: server_facts(target),
    };
    let input = RecordInput {
        tags: plan.tags.clone(),
        command_line: argv.to_vec(),
        environment,
    };
    if let Err(e) = store.record(file, input) {
        warn(&e);
    }
}

/// The server's facts over a connection of their own; unknown when it cannot be
/// made (the run has its own report of the server).
fn server_facts(target: &ConnectArgs) -> Option<pgbench_history::ServerFacts> {
    let opts = ConnectOptions::from_args(target).ok()?;
    let mut conn = Connection::connect(&opts).ok()?;
    Some(Environment::server(&mut conn))
}

fn warn(e: &pgbench_history::HistoryError) {
    logging::warning(&format!("the run was not recorded in the history: {e}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_names_the_store_else_the_environment_does_else_none() {
        let tags = || vec![("server".to_string(), "a".to_string())];
        let env = Some("/tmp/h.sqlite".to_string());
        // --history alone: the default store, whatever the environment says
        let p = HistoryPlan::of(Some(None), tags(), None, false).unwrap();
        assert_eq!((p.store, p.tags), (None, tags()));
        let p = HistoryPlan::of(Some(Some("x.sqlite".into())), vec![], env.clone(), false);
        assert_eq!(p.unwrap().store.as_deref(), Some("x.sqlite"));
        // the environment alone records
        let p = HistoryPlan::of(None, vec![], env, false).unwrap();
        assert_eq!(p.store.as_deref(), Some("/tmp/h.sqlite"));
        // nothing asked, or set empty: nothing recorded
        assert_eq!(HistoryPlan::of(None, vec![], None, false), None);
        assert_eq!(
            HistoryPlan::of(None, vec![], Some(String::new()), false),
            None
        );
    }

    #[test]
    fn a_tag_is_key_equals_value() {
        assert_eq!(
            parse_tag("instance=db.r6g.xlarge"),
            Ok(("instance".into(), "db.r6g.xlarge".into()))
        );
        assert_eq!(parse_tag("note=a=b"), Ok(("note".into(), "a=b".into())));
        assert_eq!(parse_tag("empty="), Ok(("empty".into(), String::new())));
        for bad in ["novalue", "=x", ""] {
            assert!(
                parse_tag(bad).unwrap_err().starts_with("invalid --tag"),
                "{bad}"
            );
        }
    }
}
