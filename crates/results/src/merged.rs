//! What a merged results file (`pgbench-report merge`) records about the workers it
//! was made from: the run they shared, which of them arrived, and one row per worker
//! (the per-worker table, as data). Data only: the merge is [`crate::merge`]'s.

use serde::{Deserialize, Serialize};

/// The `merge` field of a merged results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeRecord {
    /// The workers' shared `worker.run_id`.
    pub run_id: String,
    /// N: how many workers the run had (`worker.count`).
    pub count: u32,
    /// The instant all workers started, unix µs on the server's clock.
    pub start_unix_us: i64,
    /// Worker indexes of which no file was given.
    pub missing: Vec<u32>,
    /// A worker is missing or was cut short: the figures cover less than the run.
    pub incomplete: bool,
    /// The workers merged, by index.
    pub workers: Vec<WorkerRow>,
}

/// One worker's own figures, and what stands out in them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerRow {
    pub index: u32,
    /// The file it was read from, as named on the command line.
    pub file: String,
    pub hostname: Option<String>,
    pub clients: usize,
    pub first_client: u32,
    /// Successful transactions.
    pub transactions: i64,
    pub failures: i64,
    /// Its clients' run time, s.
    pub duration_s: f64,
    pub tps: f64,
    pub tps_per_client: f64,
    /// As its own report printed it.
    pub latency_avg_ms: Option<f64>,
    /// `-R`: average schedule lag.
    pub lag_avg_ms: Option<f64>,
    pub aborted_clients: usize,
    /// Why its run covers less than it should have, when it does.
    pub cut_short: Option<String>,
    /// What stands out against the other workers (a saturated client machine).
    pub flags: Vec<String>,
}

impl MergeRecord {
    /// Every line worth a warning: missing workers, runs cut short, outliers.
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .missing
            .iter()
            .map(|i| format!("worker {i} of {} is missing", self.count))
            .collect();
        for w in &self.workers {
            if let Some(why) = &w.cut_short {
                out.push(format!(
                    "worker {} ({}) was cut short: {why}",
                    w.index, w.file
                ));
            }
            for flag in &w.flags {
                out.push(format!("worker {} ({}): {flag}", w.index, w.file));
            }
        }
        if self.incomplete {
            out.push(format!(
                "the merged result is incomplete: it covers {} of {} workers{}",
                self.workers.len(),
                self.count,
                if self.workers.iter().any(|w| w.cut_short.is_some()) {
                    ", not all of them for the whole run"
                } else {
                    ""
                }
            ));
        }
        out
    }
}
