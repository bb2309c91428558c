//! `pgbench-report check FILE... [--fail-if-warnings]`: prints each results file's
//! validity warnings (and the checks its run could not have); for CI, exits with
//! [`EXIT_WARNINGS`] under `--fail-if-warnings` when any file has a warning.

use super::verbs::{read_doc, usage, Options, VerbError, EXIT_OK};
use pgbench_results::{warnings, ResultsFile};

/// `--fail-if-warnings` and a file has warnings.
pub const EXIT_WARNINGS: u8 = 2;

pub const HELP: &str = "\
pgbench-report check FILE... [--fail-if-warnings]

Prints the validity warnings of each results file: the client was the bottleneck,
the scale is below the clients on tpcb-like/simple-update, a checkpoint or
autovacuum in the measured window (needs --server-stats), tps not steady, a run too
short for compare to give an interval, a cold start without --warmup. Each says why
it matters and what to do; checks a run could not have are listed as not checked.

Options:
  --fail-if-warnings    exit with status 2 when any file has a warning

Exit status: 0 no warnings (or no --fail-if-warnings), 1 error, 2 a file has
warnings under --fail-if-warnings.
";

/// A file's checks: those it records, or for a file written before they were
/// recorded (schema 1), those of its run.
fn checks(doc: &ResultsFile) -> warnings::Checks {
    match &doc.run {
        Some(run) if doc.schema < 2 => warnings::check(run),
        _ => warnings::Checks {
            warnings: doc.warnings.clone(),
            not_checked: doc.not_checked.clone(),
        },
    }
}

/// The verb.
pub fn verb(args: &[String]) -> Result<u8, VerbError> {
    let (mut files, mut fail) = (Vec::new(), false);
    let mut opts = Options::new(args);
    while let Some((name, value)) = opts.next() {
        match name {
            None => files.extend(value),
            Some("--fail-if-warnings") => fail = true,
            Some(other) => return Err(usage(format!("check: unknown option \"{other}\""))),
        }
    }
    if files.is_empty() {
        return Err(usage("check needs at least one results file"));
    }
    let mut text = String::new();
    let mut warned = false;
    for f in &files {
        let c = checks(&read_doc(f)?);
        warned |= !c.warnings.is_empty();
        text.push_str(&match c.warnings.len() {
            0 => format!("{f}: no warnings\n"),
            1 => format!("{f}: 1 warning\n"),
            n => format!("{f}: {n} warnings\n"),
        });
        for line in warnings::render(&c.warnings).lines() {
            text.push_str(&format!("  {line}\n"));
        }
        for n in &c.not_checked {
            text.push_str(&format!("  not checked: {}: {}\n", n.code, n.reason));
        }
    }
    super::verbs::print(&text)?;
    Ok(if fail && warned {
        EXIT_WARNINGS
    } else {
        EXIT_OK
    })
}
