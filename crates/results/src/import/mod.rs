//! `pgbench-report import`: stock pgbench's output (or sysbench's or HammerDB's, told
//! apart by their content) as a results file, so that stock
//! runs and pgbench-rs runs compare like any two results. The report (stdout) gives
//! the summary, stderr its `progress:` lines and seed, `-l` logs exact percentiles and
//! a per-second series, `--aggregate-interval` logs per-interval counters. What the
//! files do not tell stays null; `run` is always null (the exact counters are not in
//! the text).

mod hammerdb_text;
mod logs;
mod progress;
mod report_text;
mod sysbench_text;

use crate::document::ResultsFile;
use crate::summary::PercentileSummary;
use crate::timeline::{Timeline, TimelineSource};
pub use logs::Columns;
use std::path::PathBuf;

/// Why stock output could not be imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    #[error("{file}: {message}")]
    Read { file: String, message: String },
    #[error("{file}: not a pgbench report (no \"transaction type:\" line)")]
    NotAReport { file: String },
    #[error("{file}:{line}: {message}")]
    Report {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}:{line}: cannot read this progress: line")]
    Progress { file: String, line: usize },
    #[error("{file}:{line}: {message}")]
    Log {
        file: String,
        line: usize,
        message: String,
    },
    #[error(
        "the -l logs hold {logged} successful transactions but the report counts {reported}: not the logs of this run, or sampled (--sampling-rate)"
    )]
    LogMismatch { logged: i64, reported: i64 },
}

/// The text of each file, with the name errors cite.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub report: (String, String),
    pub progress: Option<(String, String)>,
    pub logs: Vec<(String, String)>,
    pub aggregate_logs: Vec<(String, String)>,
}

/// The files to read.
#[derive(Debug, Clone, Default)]
pub struct Paths {
    pub report: PathBuf,
    pub progress: Option<PathBuf>,
    pub logs: Vec<PathBuf>,
    pub aggregate_logs: Vec<PathBuf>,
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

/// Reads the files and imports them.
pub fn import_files(paths: &Paths) -> Result<ResultsFile, ImportError> {
    let all = |v: &[PathBuf]| v.iter().map(read).collect::<Result<Vec<_>, _>>();
    let inputs = Inputs {
        report: read(&paths.report)?,
        progress: paths.progress.as_ref().map(read).transpose()?,
        logs: all(&paths.logs)?,
        aggregate_logs: all(&paths.aggregate_logs)?,
    };
    import(&inputs)
}

/// Imports stock output given as text.
pub fn import(inputs: &Inputs) -> Result<ResultsFile, ImportError> {
    let (name, text) = &inputs.report;
    // The report's kind, told by its content.
    let mut options = std::collections::BTreeMap::new();
    let (mut summary, banner) = if sysbench_text::is_sysbench(text) {
        sysbench_text::parse(name, text)?
    } else if hammerdb_text::is_hammerdb(text) {
        let h = hammerdb_text::parse(name, text)?;
        options = h.options;
        (h.summary, h.banner)
    } else {
        report_text::parse(name, text)?
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
        let tx = logs::tx_logs(&inputs.logs, cols)?;
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
