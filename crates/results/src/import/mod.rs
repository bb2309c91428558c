//! `pgbench-report import`: stock pgbench's output (or a workload's tool's, told
//! apart by their content: the workloads' importers, `crate::workload::registry`) as
//! a results file, so that stock runs and pgbench-rs runs compare like any two
//! results. The report (stdout) gives
//! the summary, stderr its `progress:` lines and seed, `-l` logs exact percentiles and
//! a per-second series, `--aggregate-interval` logs per-interval counters. What the
//! files do not tell stays null; `run` is always null (the exact counters are not in
//! the text). A figure the tool could not have printed is refused with its line
//! (`plausible` says which), as is a `-l` line outside the run the report describes.

pub mod error;
mod logs;
pub(crate) mod plausible;
mod progress;
pub(crate) mod report_text;

use crate::document::ResultsFile;
use crate::summary::PercentileSummary;
use crate::timeline::{Timeline, TimelineSource};
use crate::workload::kind::Imported;
use crate::workload::registry;
pub use error::ImportError;
pub use logs::{Columns, RunShape};
use std::path::PathBuf;

/// The text of each file, with the name errors cite.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub report: (String, String),
    pub progress: Option<(String, String)>,
    pub logs: Vec<(String, String)>,
    pub aggregate_logs: Vec<(String, String)>,
    /// `--test`: the test the report is of, for a tool that does not print it.
    pub test: Option<String>,
}

/// The files to read.
#[derive(Debug, Clone, Default)]
pub struct Paths {
    pub report: PathBuf,
    pub progress: Option<PathBuf>,
    pub logs: Vec<PathBuf>,
    pub aggregate_logs: Vec<PathBuf>,
    /// `--test`: the test the report is of, for a tool that does not print it.
    pub test: Option<String>,
}

fn read(path: &PathBuf) -> Result<(String, String), ImportError> {
    let name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((name, text)),
        Err(e) => Err(ImportError::Read {
            file: name,
            message: crate::destination::strerror(&e),
        }),
    }
}

/// What the report tells of the run's length and scripts, which its `-l` lines must
/// fit: the run lasted its `-T`, or as long as its transactions take at its tps
/// (pgbench's tps is the successful transactions over the run's time).
fn run_shape(s: &crate::summary::Summary) -> RunShape {
    let by_rate = match (s.transactions, s.tps) {
        (Some(n), Some(tps)) if n > 0 && tps > 0.0 => Some(n as f64 / tps),
        _ => None,
    };
    let by_duration = s.duration_s.map(|d| d as f64);
    RunShape {
        length_s: match (by_rate, by_duration) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        },
        scripts: s.scripts.len().max(1),
    }
}

/// Reads the files and imports them.
pub fn import_files(paths: &Paths) -> Result<ResultsFile, ImportError> {
    let all = |v: &[PathBuf]| v.iter().map(read).collect::<Result<Vec<_>, _>>();
    let inputs = Inputs {
        report: read(&paths.report)?,
        progress: paths.progress.as_ref().map(read).transpose()?,
        logs: all(&paths.logs)?,
        aggregate_logs: all(&paths.aggregate_logs)?,
        test: paths.test.clone(),
    };
    import(&inputs)
}

/// Imports stock output given as text.
pub fn import(inputs: &Inputs) -> Result<ResultsFile, ImportError> {
    let (name, text) = &inputs.report;
    // The report's kind, told by its content.
    let importer = registry::importers().find(|i| i.recognises(text));
    if let Some(test) = &inputs.test {
        if !importer.is_some_and(|i| i.takes_test()) {
            return Err(ImportError::TestNotTaken {
                file: name.clone(),
                test: test.clone(),
                tool: registry::importers()
                    .find(|i| i.takes_test())
                    .map_or("", |i| i.tool().name),
            });
        }
    }
    let Imported {
        mut summary,
        banner,
        options,
    } = match importer {
        Some(i) => i.import(name, text, inputs.test.as_deref())?,
        None => {
            let (summary, banner) = report_text::parse(name, text)?;
            Imported {
                summary,
                banner,
                ..Imported::default()
            }
        }
    };
    let stderr = match &inputs.progress {
        Some((name, text)) => progress::parse(name, text)?,
        None => progress::Stderr::default(),
    };
    let cols = Columns {
        lag: summary.lag_avg_ms.is_some(),
        retries: summary.max_tries != Some(1),
    };
    let mut timeline: Option<Timeline> = stderr.timeline;
    let mut histogram = None;
    if !inputs.aggregate_logs.is_empty() {
        let detailed = summary.failures.is_some_and(|f| f.serialization.is_some());
        timeline = Some(logs::aggregate_logs(
            &inputs.aggregate_logs,
            cols,
            detailed,
        )?);
    }
    if !inputs.logs.is_empty() {
        let tx = logs::tx_logs(&inputs.logs, cols, run_shape(&summary))?;
        let reported = summary.transactions.unwrap_or(0);
        if tx.total.counts.cnt != reported {
            return Err(ImportError::LogMismatch {
                logged: tx.total.counts.cnt,
                reported,
            });
        }
        summary.percentiles = PercentileSummary::from_histogram(&tx.histogram);
        for (i, h) in &tx.scripts {
            if let Some(s) = summary.scripts.get_mut(*i) {
                s.percentiles = PercentileSummary::from_histogram(h);
            }
        }
        timeline = Some(Timeline::from_seconds(
            TimelineSource::TransactionLog,
            &tx.seconds,
        ));
        histogram = Some(tx.histogram);
    }
    // Stock does not count aborted clients in its report; stderr tells whether any.
    summary.aborted_clients = match &inputs.progress {
        Some(_) if !stderr.aborted => Some(0),
        _ => None,
    };
    let mut files = vec![name.clone()];
    // One file of both (a `2>&1` capture) is named once.
    files.extend(
        inputs
            .progress
            .iter()
            .map(|p| p.0.clone())
            .filter(|p| p != name),
    );
    files.extend(inputs.logs.iter().map(|p| p.0.clone()));
    files.extend(inputs.aggregate_logs.iter().map(|p| p.0.clone()));
    let mut doc = ResultsFile::imported(files, summary);
    doc.client_version = banner.client;
    doc.server_version = banner.server;
    doc.random_seed = stderr.random_seed;
    doc.options = options;
    doc.imported_timeline = timeline;
    doc.imported_histogram = histogram;
    Ok(doc)
}

#[cfg(test)]
mod tests;
