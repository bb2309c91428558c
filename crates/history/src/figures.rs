//! What the store indexes of a results file: the figures people filter, plot and
//! watch for regressions ([`Figures`], read from the document's summary and its
//! workload's part), what makes two runs comparable ([`series_key`]), and the
//! [`Metric`]s by name. Pure: a document in, numbers out.

use pgbench_results::ResultsFile;
use serde::Serialize;
use std::fmt::Write;

/// A run's indexed figures (each `None` where the document does not tell it).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Figures {
    pub started_at: Option<String>,
    pub started_us: Option<i64>,
    /// `--workload`'s name, else the transaction type (`<builtin: TPC-B (sort of)>`,
    /// a script's file name).
    pub workload: Option<String>,
    /// A digest of the scripts run (their names, weights and commands), so that runs
    /// of one script file that changed are not compared.
    pub script_digest: Option<String>,
    pub scale: Option<i64>,
    pub clients: Option<i64>,
    pub threads: Option<i64>,
    /// The measured part's length in seconds (`-T` for an import).
    pub duration_s: Option<f64>,
    pub tps: Option<f64>,
    pub latency_avg_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Failed transactions, % of all (as compare's `failed`).
    pub failed_pct: Option<f64>,
    /// TPC-C's new orders and transactions per minute.
    pub nopm: Option<f64>,
    pub tpm: Option<f64>,
    /// sysbench's queries per second.
    pub qps: Option<f64>,
    pub server_version: Option<String>,
}

/// FNV-1a, 64 bits: an identity for scripts, not a defence against anyone (a
/// collision only puts two runs in one series), so no cryptographic hash is pulled in.
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The digest of what ran: each script's name, weight and commands' first lines (a
/// pgbench-rs run), or the transaction type and scripts' names (an import).
pub fn script_digest(doc: &ResultsFile) -> String {
    let mut text = doc.summary.transaction_type.clone().unwrap_or_default();
    match &doc.run {
        Some(run) => {
            for s in &run.scripts {
                let _ = write!(text, "\n{}@{}", s.desc, s.weight);
                for c in &s.commands {
                    let _ = write!(text, "\n  {}", c.first_line);
                }
            }
        }
        None => {
            for s in &doc.summary.scripts {
                let _ = write!(text, "\n{}@{}", s.name, s.weight.unwrap_or(1));
            }
        }
    }
    format!("{:016x}", fnv1a(text.as_bytes(), 0xcbf2_9ce4_8422_2325))
}

/// The document's figures.
pub fn figures(doc: &ResultsFile) -> Figures {
    let s = &doc.summary;
    // The summary's own (an import's tool may list a 95th), else the histogram's.
    let percentile = |p: f64| {
        s.percentiles.as_ref().and_then(|ps| ps.at(p)).or_else(|| {
            let h = doc.histogram().filter(|h| !h.is_empty())?;
            Some(h.percentiles(&[p]).values[0].1)
        })
    };
    let failed_pct = (|| {
        let f = s.failures?.total as f64;
        let all = s.transactions? as f64 + f + s.skipped.unwrap_or(0) as f64;
        (all > 0.0).then(|| 100.0 * f / all)
    })();
    let measured_s = doc.run.as_ref().map(|r| r.bench_duration_us / 1e6);
    // A workload's queries per second, as its sweeps show it (sysbench's).
    let qps = pgbench_results::workload::registry::sweep_figures()
        .find(|f| f.name == "qps")
        .and_then(|f| f.sweep?.of_file?(doc));
    let workload = doc
        .options
        .get("workload")
        .and_then(|w| w.as_str())
        .map(str::to_string)
        .or_else(|| s.transaction_type.clone());
    Figures {
        started_at: doc.started_at.clone(),
        started_us: doc
            .started_at
            .as_deref()
            .and_then(crate::time::parse_instant),
        workload,
        script_digest: Some(script_digest(doc)),
        scale: s.scaling_factor,
        clients: s.clients,
        threads: s.threads,
        duration_s: measured_s.or(s.duration_s.map(|d| d as f64)),
        tps: s.tps,
        latency_avg_ms: s.latency_avg_ms,
        p50_ms: percentile(50.0),
        p95_ms: percentile(95.0),
        p99_ms: percentile(99.0),
        max_ms: s.percentiles.as_ref().map(|p| p.max_ms),
        failed_pct,
        nopm: workload_figure(s, "nopm"),
        tpm: workload_figure(s, "tpm"),
        qps,
        server_version: doc.server_version.clone(),
    }
}

/// A workload's figure by the name compare and the gates know it by (NOPM and TPM
/// are TPC-C's), read through the workloads' registry: the history names no
/// workload's fields.
fn workload_figure(s: &pgbench_results::summary::Summary, name: &str) -> Option<f64> {
    pgbench_results::workload::registry::figures()
        .flatten()
        .find(|f| f.name == name)
        .and_then(|f| (f.value)(s))
}

/// The key of a run's series: runs with the same workload, scripts, scale, clients,
/// threads and tags are comparable, and only they are searched for change points
/// together. Readable, as the regressions' lines name a series by it.
pub fn series_key(f: &Figures, tags: &[(String, String)]) -> String {
    let opt = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
    let mut key = format!(
        "{} [{}] s={} c={} j={}",
        f.workload.as_deref().unwrap_or("?"),
        f.script_digest.as_deref().unwrap_or("-"),
        opt(f.scale),
        opt(f.clients),
        opt(f.threads),
    );
    let mut tags: Vec<_> = tags.iter().collect();
    tags.sort();
    for (k, v) in tags {
        let _ = write!(key, " {k}={v}");
    }
    key
}

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// A figure the history plots and watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Tps,
    LatencyAvg,
    P50,
    P95,
    P99,
    Max,
    Failed,
    Nopm,
    Tpm,
    Qps,
}

impl Metric {
    /// Every metric, in the order lists show them.
    pub const ALL: [Metric; 10] = [
        Metric::Tps,
        Metric::LatencyAvg,
        Metric::P50,
        Metric::P95,
        Metric::P99,
        Metric::Max,
        Metric::Failed,
        Metric::Nopm,
        Metric::Tpm,
        Metric::Qps,
    ];

    /// Its name on the command line (compare's gate names where they share one).
    pub fn name(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::LatencyAvg => "latency_avg",
            Metric::P50 => "p50",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
            Metric::Max => "max",
            Metric::Failed => "failed",
            Metric::Nopm => "nopm",
            Metric::Tpm => "tpm",
            Metric::Qps => "qps",
        }
    }

    /// Its label in tables and charts.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::LatencyAvg => "latency average (ms)",
            Metric::P50 => "latency p50 (ms)",
            Metric::P95 => "latency p95 (ms)",
            Metric::P99 => "latency p99 (ms)",
            Metric::Max => "latency max (ms)",
            Metric::Failed => "failed transactions (%)",
            Metric::Nopm => "NOPM",
            Metric::Tpm => "TPM",
            Metric::Qps => "queries per second",
        }
    }

    /// The store's column.
    pub fn column(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::LatencyAvg => "latency_avg_ms",
            Metric::P50 => "p50_ms",
            Metric::P95 => "p95_ms",
            Metric::P99 => "p99_ms",
            Metric::Max => "max_ms",
            Metric::Failed => "failed_pct",
            Metric::Nopm => "nopm",
            Metric::Tpm => "tpm",
            Metric::Qps => "qps",
        }
    }

    pub fn better(self) -> Better {
        match self {
            Metric::Tps | Metric::Nopm | Metric::Tpm | Metric::Qps => Better::Higher,
            _ => Better::Lower,
        }
    }

    /// Its value among a run's figures.
    pub fn of(self, f: &Figures) -> Option<f64> {
        match self {
            Metric::Tps => f.tps,
            Metric::LatencyAvg => f.latency_avg_ms,
            Metric::P50 => f.p50_ms,
            Metric::P95 => f.p95_ms,
            Metric::P99 => f.p99_ms,
            Metric::Max => f.max_ms,
            Metric::Failed => f.failed_pct,
            Metric::Nopm => f.nopm,
            Metric::Tpm => f.tpm,
            Metric::Qps => f.qps,
        }
    }

    /// By name.
    pub fn parse(name: &str) -> Result<Metric, crate::HistoryError> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
                crate::HistoryError::Invalid(format!(
                    "unknown metric \"{name}\": one of {}",
                    names.join(", ")
                ))
            })
    }
}
