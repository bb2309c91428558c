//! A pgbench run's result as data, and what is rendered from it. No database, no
//! clocks, and no I/O beyond what a caller hands in, except [`destination`]: the one
//! writer of results files, so that both programs write them with the same care.
//!
//! - [`stats`]: pgbench's counters (`SimpleStats`, `StatsData`) and what one
//!   transaction adds to them;
//! - [`histogram`]: latency histograms (HdrHistogram) and percentiles;
//! - [`series`]: the per-second time series;
//! - [`run`]: [`RunResult`], everything one run measured, with the settings that shape
//!   its report;
//! - [`report`]: pgbench's report text (and the percentiles section) from a
//!   [`RunResult`];
//! - [`summary`], [`timeline`], [`document`]: the results file (`--export-json`):
//!   the report's figures by name, the run over time, and the versioned document;
//! - [`import`]: stock pgbench's output (report, progress lines, logs) as a results
//!   file;
//! - [`merge`], [`merged`]: the workers of a `--worker=I/N` run merged into one
//!   result, and what the merged file records of them;
//! - [`availability`]: `--reconnect`'s outages as the clients saw them, and their
//!   block after the report;
//! - [`capacity`]: a sweep's or a capacity search's steps in one results file, the
//!   curve they make (peak, knee), their lines, compare and merge;
//! - [`compare`]: runs side by side with confidence intervals and regression gates;
//! - [`html`]: one self-contained page of charts (uPlot, inlined) for several files;
//! - [`stages`]: a staged run's stages (`--rate-stages`, `--client-stages`): their
//!   figures, their block after the report, and their comparison;
//! - [`show`]: a results file as text (the run's report, byte for byte);
//! - [`stock`]: the stock pgbench release whose output is reproduced;
//! - [`workload`]: what a workload beyond pgbench's builtins adds to a result, its
//!   report, compare and import, each workload in a folder of its own;
//! - [`destination`]: writing a results file whole, to a file, device or pipe;
//! - `synthetic` (tests, and the `synthetic` feature): simulated runs with known
//!   properties.

pub mod availability;
pub mod capacity;
pub mod compare;
mod date;
pub mod destination;
pub mod document;
pub mod histogram;
pub mod html;
pub mod import;
pub mod merge;
pub mod merged;
pub mod report;
pub mod run;
pub mod scenarios;
pub mod series;
pub mod server;
pub mod show;
pub mod stages;
pub mod stats;
pub mod stock;
pub mod summary;
#[cfg(any(test, feature = "synthetic"))]
pub mod synthetic;
pub mod timeline;
pub mod warnings;
pub mod workload;

pub use document::{DocumentError, ResultsFile, RunMeta, SERVER_SETTINGS};
pub use histogram::{LatencyCounts, LatencyHistogram, Percentiles};
pub use run::ended::Ended;
pub use run::phases::PhaseSpan;
pub use run::{
    CommandResult, Limit, MaxTries, Partitions, QueryMode, RunResult, RunSettings, ScriptResult,
    Warmup,
};
pub use stats::{CommandStats, Counts, SimpleStats, StatsData, TxOutcome, TxRecord};
