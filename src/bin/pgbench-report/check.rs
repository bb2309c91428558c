//! `pgbench-report check FILE... [--fail-if-warnings] [--expect-outages]`: prints each
//! results file's validity warnings (and the checks its run could not have); for CI,
//! exits with [`EXIT_WARNINGS`] under `--fail-if-warnings` when any file has a
//! warning. `--expect-outages` leaves out the outages a `--reconnect` run was made to
//! measure, and judges its steadiness without them. A sweep's or search's file is
//! checked as a whole (steps it never ran), then step by step.

use super::cli::CheckArgs;
use super::error::{usage, VerbError, EXIT_OK};
use super::io::{print, read_doc};
use pgbench_results::{warnings, ResultsFile};

/// `--fail-if-warnings` and a file has warnings.
pub const EXIT_WARNINGS: u8 = 2;

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
pub fn verb(args: CheckArgs) -> Result<u8, VerbError> {
    let (files, fail) = (args.files, args.fail_if_warnings);
    if files.is_empty() {
        return Err(usage("check needs at least one results file"));
    }
    let mut text = String::new();
    let mut warned = false;
    for f in &files {
        let doc = read_doc(f)?;
        // A sweep's or search's steps, each checked as a run of its own, after the
        // steps as a whole (steps it never ran).
        let mut each: Vec<(String, warnings::Checks, Option<&ResultsFile>)> = match &doc.capacity {
            Some(c) => {
                let whole = warnings::Checks {
                    warnings: warnings::steps::check(c, &doc.steps).into_iter().collect(),
                    not_checked: Vec::new(),
                };
                std::iter::once((String::new(), whole, None))
                    .chain(doc.steps.iter().map(|s| {
                        let at = pgbench_results::capacity::table::at(c, &s.value);
                        (
                            format!("step {} ({at}): ", s.step),
                            checks(&s.file),
                            Some(&s.file),
                        )
                    }))
                    .collect()
            }
            None => vec![(String::new(), checks(&doc), Some(&doc))],
        };
        if args.expect_outages {
            for (_, c, file) in each.iter_mut() {
                let run = file.and_then(|f| f.run.as_ref());
                warnings::outages::expected(run, &mut c.warnings);
            }
        }
        let count: usize = each.iter().map(|(_, c, _)| c.warnings.len()).sum();
        warned |= count > 0;
        let steps = match &doc.capacity {
            Some(_) => format!(" in {} steps", doc.steps.len()),
            None => String::new(),
        };
        text.push_str(&match count {
            0 => format!("{f}: no warnings{steps}\n"),
            1 => format!("{f}: 1 warning{steps}\n"),
            n => format!("{f}: {n} warnings{steps}\n"),
        });
        for (step, c, _) in &each {
            for line in warnings::render(&c.warnings).lines() {
                text.push_str(&format!("  {step}{line}\n"));
            }
            for n in &c.not_checked {
                text.push_str(&format!("  {step}not checked: {}: {}\n", n.code, n.reason));
            }
        }
    }
    print(&text)?;
    Ok(if fail && warned {
        EXIT_WARNINGS
    } else {
        EXIT_OK
    })
}
