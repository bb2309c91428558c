//! `pgbench-report merge`: the results files of the workers of one run
//! (`pgbench-rs --worker=I/N --export-json=...`) made into the one result a single
//! process with all their clients would have printed. [`check`] refuses files of
//! different runs, [`combine`] adds the exact results (its header gives the rule
//! for every figure), [`table`] makes the per-worker table and flags outliers. A
//! missing worker or one whose run was cut short does not stop the merge: what
//! arrived is merged and the file's `merge` record says it is incomplete.
//!
//! Every section of a results file merges by one of three rules ([`Merged`]):
//! combined (the whole run's, as one process would have it), the first worker's, or
//! dropped; the last two with their reason, which [`merge_noting`] returns and
//! `pgbench-report merge` prints as warnings ([`Note`]).

pub mod check;
pub mod combine;
pub mod table;

use crate::document::{rfc3339_utc, Origin, ResultsFile, Tool, SCHEMA_VERSION};
use crate::merged::MergeRecord;
use crate::run::RunResult;
use crate::summary::Summary;
use std::collections::BTreeSet;

/// Why files cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("merge needs at least one results file")]
    NoFiles,
    #[error("{file}: not a worker's results file: it has no \"worker\" field (it was not written by pgbench-rs --worker=I/N)")]
    NotWorker { file: String },
    #[error(
        "{file}: has no exact counters (\"run\" is null: an imported stock run cannot be merged)"
    )]
    NoRun { file: String },
    #[error("{file}: \"{field}\" is {value}: {why}")]
    Implausible {
        file: String,
        field: String,
        value: String,
        why: &'static str,
    },
    #[error("{file}: \"worker.index\" is {index}, not below \"worker.count\" {count}")]
    IndexOutOfRange {
        file: String,
        index: u32,
        count: u32,
    },
    #[error(
        "{first} and {file} are not of the same run: \"{field}\" differs ({ours} against {theirs})"
    )]
    Differs {
        first: String,
        file: String,
        field: String,
        ours: String,
        theirs: String,
    },
    #[error("{first} and {second} are both worker {index} (\"worker.index\")")]
    Duplicate {
        index: u32,
        first: String,
        second: String,
    },
    #[error("{first} and {second} ran some of the same clients (\"worker.first_client\" and \"options.client\")")]
    ClientsOverlap { first: String, second: String },
}

/// How one section of the workers' files comes into the merged file.
#[derive(Debug, Clone, PartialEq)]
pub enum Merged<T> {
    /// The whole run's, from every worker's.
    Combined(T),
    /// The first worker's, for the reason given.
    FirstWorker(T, &'static str),
    /// None, for the reason given.
    Dropped(&'static str),
}

impl<T> Merged<T> {
    /// The section as the merged file holds it; a note of why to `notes` unless it
    /// is combined.
    pub fn note(self, section: &'static str, notes: &mut Vec<Note>) -> Option<T> {
        match self {
            Merged::Combined(t) => Some(t),
            Merged::FirstWorker(t, why) => {
                notes.push(Note {
                    section,
                    kept: Kept::FirstWorker,
                    why,
                });
                Some(t)
            }
            Merged::Dropped(why) => {
                notes.push(Note {
                    section,
                    kept: Kept::Dropped,
                    why,
                });
                None
            }
        }
    }
}

/// A section the merged file does not hold combined, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The section: `histogram`, `workload`, `server`, ...
    pub section: &'static str,
    pub kept: Kept,
    pub why: &'static str,
}

/// What of a section not combined the merged file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    FirstWorker,
    Dropped,
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = match self.kept {
            Kept::FirstWorker => "the first worker's only",
            Kept::Dropped => "dropped",
        };
        write!(f, "merged {}: {kept}: {}", self.section, self.why)
    }
}

/// Merges the workers' files (named as given): the merged document, with its
/// `merge` record. Files of different runs are refused; missing workers are not.
/// What could not be combined is left out of the answer: [`merge_noting`] gives it.
pub fn merge(files: &[(String, ResultsFile)]) -> Result<ResultsFile, MergeError> {
    merge_noting(files).map(|(doc, _)| doc)
}

/// [`merge()`], and a note of each section not combined.
pub fn merge_noting(
    files: &[(String, ResultsFile)],
) -> Result<(ResultsFile, Vec<Note>), MergeError> {
    let workers = check::workers(files)?;
    let runs: Vec<&RunResult> = workers.iter().map(|w| w.run).collect();
    let (run, notes) = combine::combine(&runs).ok_or(MergeError::NoFiles)?;
    let first = &workers[0];
    let present: BTreeSet<u32> = workers.iter().map(|w| w.worker.index).collect();
    let missing: Vec<u32> = (0..first.worker.count)
        .filter(|i| !present.contains(i))
        .collect();
    let rows = table::rows(&workers);
    let record = MergeRecord {
        run_id: first.worker.run_id.clone(),
        count: first.worker.count,
        start_unix_us: first.worker.start_unix_us,
        incomplete: !missing.is_empty() || rows.iter().any(|r| r.cut_short.is_some()),
        missing,
        workers: rows,
    };
    let ended_at = workers.iter().filter_map(|w| w.doc.ended_at.clone()).max();
    let names = files.iter().map(|(f, _)| f.clone());
    let doc = document(first.doc, run, record, ended_at, names.collect());
    Ok((doc, notes))
}

/// The merged file: the first worker's description of the run (versions, server
/// settings, seed), its options with the whole run's client, thread and rate figures,
/// and the merged result.
fn document(
    first: &ResultsFile,
    run: RunResult,
    record: MergeRecord,
    ended_at: Option<String>,
    files: Vec<String>,
) -> ResultsFile {
    let mut options = first.options.clone();
    options.remove("worker");
    options.insert("client".into(), run.settings.clients.into());
    options.insert("jobs".into(), run.settings.threads.into());
    if let Some(rate) = run.settings.rate {
        options.insert("rate".into(), rate.into());
    }
    let checks = crate::warnings::check(&run);
    let mut command_line = vec!["pgbench-report".to_string(), "merge".to_string()];
    command_line.extend(files);
    ResultsFile {
        schema: SCHEMA_VERSION,
        tool: Tool {
            name: "pgbench-report".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        },
        origin: Origin::PgbenchRs,
        client_version: first.client_version.clone(),
        pgbench_version: first.pgbench_version.clone(),
        server_version: first.server_version.clone(),
        command_line,
        options,
        random_seed: first.random_seed,
        client_host: None,
        server_settings: first.server_settings.clone(),
        started_at: Some(rfc3339_utc(record.start_unix_us)),
        ended_at,
        summary: Summary::from_run(&run),
        imported_histogram: None,
        imported_timeline: None,
        run: Some(run),
        worker: None,
        merge: Some(record),
        warnings: checks.warnings,
        not_checked: checks.not_checked,
        capacity: None,
        steps: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
