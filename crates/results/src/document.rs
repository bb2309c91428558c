//! The results file: one JSON document per run (`"schema": 4`, described by
//! `docs/results.schema.json`). It holds where the run came from (a pgbench-rs run, or
//! stock pgbench's output imported), how it was set up, the machine and server it ran
//! on, the report's figures as a [`Summary`], the run over time as a [`Timeline`] and
//! its latency histogram, and for pgbench-rs runs the exact [`RunResult`], from which
//! `pgbench-report show` prints the report byte for byte. Floats are written in
//! serde_json's shortest round-trip form and read back bit-exact (`float_roundtrip`).
//!
//! A file that holds what no run measures (a negative count, tps or latency; a
//! representative step it does not have) is refused as it is read, naming the
//! field (`document/impossible.rs`).
//!
//! Each figure is stored once: a pgbench-rs run's histogram and timeline are its
//! `run`'s (`run.histogram`, `run.series`), given by [`ResultsFile::histogram`] and
//! [`ResultsFile::timeline`]; the top-level `histogram` and `timeline` hold an
//! import's, which has no `run`. Versions 1 and 2 also stored a run's copies there;
//! they are dropped as such a file is read. A run of one script has one histogram,
//! `run.histogram`, which its script shares (see [`RunResult`]); versions 1 to 3 wrote
//! it twice.

use crate::histogram::LatencyHistogram;
use crate::merged::MergeRecord;
use crate::run::RunResult;
use crate::server::ServerStats;
use crate::summary::Summary;
use crate::timeline::{Timeline, TimelineSource};
use crate::warnings::{NotChecked, Warning};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

mod impossible;
pub mod steps;

pub use impossible::Impossible;
use steps::{Capacity, Step};

/// The version of the document format this library writes. Version 2 added
/// `warnings`, `not_checked`, `run.server` and `run.client_cpu`; a version 1 file
/// reads as one without them. Version 3 stores a pgbench-rs run's histogram and
/// timeline once (in `run`), and names a second's counters as the run's are (`cnt`,
/// `other_sql_failures`; no `failures`). Version 4 leaves out a lone script's
/// histogram (`run.scripts[0].histogram`, the same as `run.histogram`), which a
/// reader of version 3 would take for none. Version 5 adds `capacity` and `steps`: a
/// sweep's or a capacity search's every step (see [`crate::capacity`]), which a reader
/// of version 4 would miss, reading the file as its top level's one run. Older files
/// read as they were.
pub const SCHEMA_VERSION: u32 = 5;
/// The oldest version this library reads.
pub const OLDEST_SCHEMA_VERSION: u32 = 1;

/// The server settings a run records, read at start (`SHOW name` or `pg_settings`):
/// those that move pgbench's figures most.
pub const SERVER_SETTINGS: &[&str] = &[
    "shared_buffers",
    "max_connections",
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "wal_level",
    "wal_buffers",
    "wal_compression",
    "commit_delay",
    "max_wal_size",
    "min_wal_size",
    "checkpoint_timeout",
    "checkpoint_completion_target",
    "work_mem",
    "maintenance_work_mem",
    "effective_cache_size",
    "effective_io_concurrency",
    "random_page_cost",
    "huge_pages",
    "jit",
    "autovacuum",
    "default_transaction_isolation",
    "max_worker_processes",
    "max_parallel_workers_per_gather",
    "data_checksums",
    "block_size",
    "server_encoding",
];

/// Why a results file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error("not a pgbench-rs results file (no \"schema\" version number)")]
    NotResults,
    #[error(
        "results file schema version {found} is not supported (this program reads versions {OLDEST_SCHEMA_VERSION} to {SCHEMA_VERSION})"
    )]
    SchemaVersion { found: u64 },
    #[error("invalid results file: {0}")]
    Invalid(#[source] serde_json::Error),
    #[error("invalid results file: {0}")]
    Impossible(#[from] Impossible),
}

/// The program that wrote the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    fn this(name: &str) -> Tool {
        Tool {
            name: name.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// Where the figures come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Origin {
    /// Measured by pgbench-rs; `run` holds the exact counters.
    PgbenchRs,
    /// Read from stock pgbench's output files (named here); `run` is null.
    StockImport { files: Vec<String> },
}

/// The machine the client ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientHost {
    pub hostname: Option<String>,
    /// CPUs this process may use.
    pub cores: Option<usize>,
    /// Kernel name and release, e.g. `Linux 6.1.0-18-amd64`.
    pub os: Option<String>,
    /// The distribution's `PRETTY_NAME` from /etc/os-release.
    pub distribution: Option<String>,
}

impl ClientHost {
    /// This machine, from /proc and /etc (fields it cannot read stay `None`).
    pub fn current() -> ClientHost {
        let read = |path: &str| {
            std::fs::read_to_string(path)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let os = match (
            read("/proc/sys/kernel/ostype"),
            read("/proc/sys/kernel/osrelease"),
        ) {
            (Some(t), Some(r)) => Some(format!("{t} {r}")),
            (t, _) => t.or_else(|| Some(std::env::consts::OS.to_string())),
        };
        let distribution = read("/etc/os-release").and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        });
        ClientHost {
            hostname: read("/proc/sys/kernel/hostname").or_else(|| read("/etc/hostname")),
            cores: std::thread::available_parallelism().ok().map(|n| n.get()),
            os,
            distribution,
        }
    }
}

/// What the results file records of a run besides its counters. The runner fills it
/// as the run ends; the command line and the options are its caller's to add.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunMeta {
    /// argv as given, program name first.
    pub command_line: Vec<String>,
    /// Every effective option after defaults, by long option name without dashes
    /// (`client`, `jobs`, `time`, `file`, ...); see docs/results.schema.json.
    pub options: BTreeMap<String, serde_json::Value>,
    pub random_seed: u64,
    /// `server_version` as the server reports it.
    pub server_version: Option<String>,
    /// [`SERVER_SETTINGS`] as the server showed them.
    pub server_settings: BTreeMap<String, String>,
    pub started_unix_us: i64,
    pub ended_unix_us: i64,
    /// Set when this process was one worker of a `--worker=I/N` run.
    pub worker: Option<WorkerInfo>,
}

/// One worker's place in a run split over several processes (`--worker=I/N`):
/// `pgbench-report merge` checks that the files it merges agree on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerInfo {
    /// I, 0-based.
    pub index: u32,
    /// N.
    pub count: u32,
    /// The same in every worker's file of one run (the coordinated start's key).
    pub run_id: String,
    /// The instant all workers started, unix µs on the server's clock.
    pub start_unix_us: i64,
    /// The pgbench number of this worker's first client (`index * clients`).
    pub first_client: u32,
}

/// The results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsFile {
    /// Always [`SCHEMA_VERSION`].
    pub schema: u32,
    /// The program that wrote this file.
    pub tool: Tool,
    pub origin: Origin,
    /// The benchmark client that ran: `pgbench-rs 0.1.0`, or stock's version banner.
    pub client_version: Option<String>,
    /// For a pgbench-rs run, the stock pgbench release whose output it reproduced
    /// (`15.20`): the banner `show` prints. Absent in files written before it was
    /// recorded, which reproduced 15.18 ([`crate::show::pgbench_version`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgbench_version: Option<String>,
    pub server_version: Option<String>,
    pub command_line: Vec<String>,
    pub options: BTreeMap<String, serde_json::Value>,
    pub random_seed: Option<u64>,
    pub client_host: Option<ClientHost>,
    pub server_settings: BTreeMap<String, String>,
    /// RFC 3339, UTC, µs.
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub summary: Summary,
    /// An import's latencies of every successful transaction (built from stock's `-l`
    /// logs); see [`ResultsFile::histogram`].
    /// (Named apart from its JSON key so that no reader takes it for the run's.)
    #[serde(rename = "histogram", default, skip_serializing_if = "Option::is_none")]
    pub(crate) imported_histogram: Option<LatencyHistogram>,
    /// An import's run over time; see [`ResultsFile::timeline`].
    #[serde(rename = "timeline", default, skip_serializing_if = "Option::is_none")]
    pub(crate) imported_timeline: Option<Timeline>,
    /// The exact result of a pgbench-rs run; null for imports.
    pub run: Option<RunResult>,
    /// This run's place in a multi-worker run; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<WorkerInfo>,
    /// Set in a file `pgbench-report merge` wrote: the workers it was merged from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeRecord>,
    /// The validity checks' findings (see [`crate::warnings`]).
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// The checks this run's data could not answer.
    #[serde(default)]
    pub not_checked: Vec<NotChecked>,
    /// `--sweep` or `--find-max-rate`: what varied and what came of it; the top level
    /// then holds its representative step's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Capacity>,
    /// Every step of a sweep or search, in the order run, each its own run's file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
}

impl ResultsFile {
    /// The document of a pgbench-rs run.
    pub fn from_run(result: RunResult, meta: RunMeta) -> ResultsFile {
        let checks = crate::warnings::check(&result);
        ResultsFile {
            schema: SCHEMA_VERSION,
            tool: Tool::this("pgbench-rs"),
            origin: Origin::PgbenchRs,
            client_version: Some(format!("pgbench-rs {}", env!("CARGO_PKG_VERSION"))),
            pgbench_version: Some(crate::stock::PG_VERSION.to_string()),
            server_version: meta.server_version,
            command_line: meta.command_line,
            options: meta.options,
            random_seed: Some(meta.random_seed),
            client_host: Some(ClientHost::current()),
            server_settings: meta.server_settings,
            started_at: Some(rfc3339_utc(meta.started_unix_us)),
            ended_at: Some(rfc3339_utc(meta.ended_unix_us)),
            summary: Summary::from_run(&result),
            imported_histogram: None,
            imported_timeline: None,
            run: Some(result),
            worker: meta.worker,
            merge: None,
            warnings: checks.warnings,
            not_checked: checks.not_checked,
            capacity: None,
            steps: Vec::new(),
        }
    }

    /// An imported stock run's document (see [`crate::import`]).
    pub fn imported(files: Vec<String>, summary: Summary) -> ResultsFile {
        ResultsFile {
            schema: SCHEMA_VERSION,
            tool: Tool::this("pgbench-report"),
            origin: Origin::StockImport { files },
            client_version: None,
            pgbench_version: None,
            server_version: None,
            command_line: Vec::new(),
            options: BTreeMap::new(),
            random_seed: None,
            client_host: None,
            server_settings: BTreeMap::new(),
            started_at: None,
            ended_at: None,
            summary,
            imported_histogram: None,
            imported_timeline: None,
            run: None,
            worker: None,
            merge: None,
            warnings: Vec::new(),
            not_checked: Vec::new(),
            capacity: None,
            steps: Vec::new(),
        }
    }

    /// Latencies of every successful transaction, when known: the run's, or an
    /// import's from stock's `-l` logs.
    pub fn histogram(&self) -> Option<&LatencyHistogram> {
        match &self.run {
            Some(run) => run.histogram.as_ref(),
            None => self.imported_histogram.as_ref(),
        }
    }

    /// The run over time, when known: from the run's per-second series, or as an
    /// import read it (progress lines, `-l` or aggregate logs).
    pub fn timeline(&self) -> Option<Cow<'_, Timeline>> {
        match &self.run {
            Some(run) => (!run.series.is_empty())
                .then(|| Cow::Owned(Timeline::from_seconds(TimelineSource::Series, &run.series))),
            None => self.imported_timeline.as_ref().map(Cow::Borrowed),
        }
    }

    /// Pretty-printed JSON, with a final newline.
    pub fn to_json(&self) -> String {
        // Every field is a string, number, bool, null, array or string-keyed map, so
        // serialising cannot fail.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a document, checking its schema version before its shape.
    /// The text is read twice, never as a tree of `serde_json::Value`s: that tree
    /// took about 9 times the file's size.
    pub fn from_json(text: &str) -> Result<ResultsFile, DocumentError> {
        /// Only the version; every other field is skipped without being kept.
        #[derive(Deserialize)]
        struct Version {
            schema: Option<serde_json::Value>,
        }
        // Valid JSON of another shape (not an object) is not a results file.
        let version: Version = serde_json::from_str(text).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => DocumentError::NotResults,
            _ => DocumentError::Json(e),
        })?;
        let found = version
            .schema
            .and_then(|n| n.as_u64())
            .ok_or(DocumentError::NotResults)?;
        if !(u64::from(OLDEST_SCHEMA_VERSION)..=u64::from(SCHEMA_VERSION)).contains(&found) {
            return Err(DocumentError::SchemaVersion { found });
        }
        let mut doc: ResultsFile = serde_json::from_str(text).map_err(DocumentError::Invalid)?;
        if doc.run.is_some() {
            // Versions 1 and 2's copies of what `run` holds.
            doc.imported_histogram = None;
            doc.imported_timeline = None;
        }
        impossible::check(&doc)?;
        Ok(doc)
    }
}

// Here rather than in `server.rs`: the server section is part of a run, which the
// document holds; `server.rs` stays below both.
impl ServerStats {
    /// What `--server-stats` recorded in a results file's run, if it was on.
    pub fn of(doc: &ResultsFile) -> Option<&ServerStats> {
        doc.run.as_ref()?.server.as_ref()
    }
}

/// `2026-12-01T08:43:47.123456Z` from Unix µs (proleptic Gregorian, UTC).
pub fn rfc3339_utc(unix_us: i64) -> String {
    let secs = unix_us.div_euclid(1_000_000);
    let micros = unix_us.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = crate::date::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

#[cfg(test)]
pub(crate) mod tests;
