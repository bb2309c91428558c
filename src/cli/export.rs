//! `--export-json` and `--export-html`: the run's results file, with what the command
//! line asked for (every effective option, by its long name). Passwords in a connection
//! string are masked in what the file records of the command line.
//! `pgbench_results::destination` writes it.

use super::option_table::Planned;
use pgbench_results::{ResultsFile, RunMeta, RunResult};
use pgbench_wire::redact_secrets;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Every effective option after defaults, keyed by its long name: what the option
/// table records of the plan ([`super::option_table::OPTIONS`]), and the database.
pub fn effective_options(planned: &Planned<'_>, dbname: &str) -> BTreeMap<String, Value> {
    let mut options: BTreeMap<String, Value> = super::option_table::OPTIONS
        .iter()
        .filter_map(|o| Some((o.long.to_string(), (o.recorded?)(planned)?)))
        .collect();
    options.insert("dbname".into(), json!(redact_secrets(dbname)));
    options
}

/// The results file of a finished run: the runner's `meta` with the command line and
/// the options added.
pub fn results_file(
    result: &RunResult,
    meta: &RunMeta,
    planned: &Planned<'_>,
    argv: &[String],
    dbname: &str,
) -> ResultsFile {
    let meta = RunMeta {
        // A connection string's password must not reach a file made to be shared.
        command_line: argv.iter().map(|a| redact_secrets(a)).collect(),
        options: effective_options(planned, dbname),
        ..meta.clone()
    };
    ResultsFile::from_run(result.clone(), meta)
}
