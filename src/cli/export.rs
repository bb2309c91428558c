//! What a results file records of the command line: every effective option, by its
//! long name, read from the option table. The shell around a run
//! ([`crate::session::finish`]) builds and writes the file; passwords in a connection
//! string are masked there.

use super::option_table::Planned;
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
