//! `pgbench-report history`'s command line: the store (`--history`, for every
//! subcommand), the filters several subcommands share, and one struct per
//! subcommand, their help from these doc comments.

use clap::{Args, Subcommand};

/// Keeps runs in a history store and reads it back: lists, trends, regressions.
///
/// The store is a SQLite file, or a PostgreSQL database given as a conninfo string or
/// a postgresql:// URI (its tables in the schema pgbench_rs_history, made on first
/// use), shared by a team. Default: $PGBENCH_RS_HISTORY, else
/// $XDG_DATA_HOME/pgbench-rs/history.sqlite (~/.local/share/... without it).
/// See docs/history.md.
#[derive(Debug, Args)]
#[command(
    override_usage = "pgbench-report history [--history=STORE] SUBCOMMAND [options]",
    subcommand_required = true,
    subcommand_value_name = "SUBCOMMAND",
    subcommand_help_heading = "Subcommands",
    verbatim_doc_comment
)]
pub struct HistoryArgs {
    /// the history store: a file, or a PostgreSQL conninfo or URI
    #[arg(long, value_name = "STORE", global = true)]
    pub history: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    List(ListArgs),
    Show(ShowArgs),
    Compare(CompareRuns),
    Diff(DiffArgs),
    Trend(TrendArgs),
    Regressions(RegressionsArgs),
    Import(ImportArgs),
    Export(ExportArgs),
    Rm(RmArgs),
}

/// Which runs: every option narrows the selection.
#[derive(Debug, Args, Default)]
pub struct FilterArgs {
    /// only runs with this tag (repeatable: all must match)
    #[arg(long, value_name = "K=V")]
    pub tag: Vec<String>,
    /// only runs started since T: a date (2026-12-01), a UTC date and time
    /// (2026-12-01T08:00:00Z) or an age (12h, 7d, 2w)
    #[arg(long, value_name = "T", verbatim_doc_comment)]
    pub since: Option<String>,
    /// only runs started before T (as --since)
    #[arg(long, value_name = "T")]
    pub until: Option<String>,
    /// only runs of this workload (tpcc, oltp_read_only, <builtin: TPC-B (sort of)>, ...)
    #[arg(long, value_name = "W")]
    pub workload: Option<String>,
    /// only runs against this server: its system identifier or version (15.20, or 15)
    #[arg(long, value_name = "S")]
    pub server: Option<String>,
    /// only runs from this client host
    #[arg(long, value_name = "H")]
    pub host: Option<String>,
}

/// Lists the stored runs, newest first.
#[derive(Debug, Args)]
#[command(
    override_usage = "pgbench-report history list [--tag K=V]... [--since T] [--workload W] [--server S] [--json]"
)]
pub struct ListArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// at most N runs (the newest)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// a JSON array: each run's id, started_at, figures, tags and environment
    #[arg(long)]
    pub json: bool,
}

/// Prints a stored run's report, as pgbench-report show prints its results file.
#[derive(Debug, Args)]
#[command(override_usage = "pgbench-report history show ID")]
pub struct ShowArgs {
    /// the run's id (from list)
    #[arg(value_name = "ID")]
    pub id: Option<String>,
}

/// Removes a stored run.
#[derive(Debug, Args)]
#[command(override_usage = "pgbench-report history rm ID")]
pub struct RmArgs {
    /// the run's id (from list)
    #[arg(value_name = "ID")]
    pub id: Option<String>,
}

/// Sets stored runs side by side, as pgbench-report compare does, with intervals.
#[derive(Debug, Args)]
#[command(override_usage = "pgbench-report history compare ID ID [ID...]")]
pub struct CompareRuns {
    /// the runs' ids, the first the baseline
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
}

/// What differed between two runs: settings, server, host, build, beside the figures.
#[derive(Debug, Args)]
#[command(override_usage = "pgbench-report history diff ID ID")]
pub struct DiffArgs {
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
}

/// A metric over time: as text, or a self-contained page of charts (--html).
#[derive(Debug, Args)]
#[command(
    override_usage = "pgbench-report history trend --metric M [--group-by tag:K] [--html FILE] [filters]"
)]
pub struct TrendArgs {
    /// tps, latency_avg, p50, p95, p99, max, failed, nopm, tpm or qps
    #[arg(long, value_name = "M")]
    pub metric: Option<String>,
    /// one line per value of a tag (default: per series of comparable runs)
    #[arg(long, value_name = "tag:K")]
    pub group_by: Option<String>,
    /// write the page here ('-' for stdout)
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Change points in each series of comparable runs; exit 3 on a regression
///
/// Runs are comparable when their workload, scripts, scale, clients, threads and tags
/// are the same. Each series is split where Welch's t-test between the runs before
/// and after says its mean moved (at least --min-segment runs a side, default 5;
/// --alpha over all the splits tried, default 1%). A change is a regression when the figure got worse (tps, qps, NOPM down;
/// latencies, failed share up).
#[derive(Debug, Args)]
#[command(
    override_usage = "pgbench-report history regressions [--metric M] [--since T] [filters]",
    after_help = "\
Exit status: 0 no series' newest change point made a figure worse, 1 error,
3 one did (each named with the first run after it).",
    verbatim_doc_comment
)]
pub struct RegressionsArgs {
    /// the figure to search (default: tps, latency_avg, p99, failed, nopm, qps)
    #[arg(long, value_name = "M")]
    pub metric: Option<String>,
    /// the fewest runs on either side of a change point (default 5, at least 2)
    #[arg(long, value_name = "N")]
    pub min_segment: Option<usize>,
    /// the significance level over all the splits tried (default 0.01)
    #[arg(long, value_name = "P")]
    pub alpha: Option<f64>,
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// Records results files, or other tools' output, in the history
///
/// Each FILE is a pgbench-rs results file, or what pgbench-report import reads: stock
/// pgbench's report (with its progress lines, if in the same file), sysbench's output,
/// HammerDB's. All are recorded in one transaction, or none.
#[derive(Debug, Args)]
#[command(
    override_usage = "pgbench-report history import FILE... [--tag K=V]... [--log FILE...] [--test NAME]",
    verbatim_doc_comment
)]
pub struct ImportArgs {
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// a tag for every run imported (repeatable)
    #[arg(long, value_name = "K=V")]
    pub tag: Vec<String>,
    /// stock pgbench's -l logs of the one report imported
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub log: Vec<std::path::PathBuf>,
    /// the sysbench test the output is of (as pgbench-report import --test)
    #[arg(long, value_name = "NAME")]
    pub test: Option<String>,
}

/// Writes the selected runs out: JSON (each with its results document) or CSV.
#[derive(Debug, Args)]
#[command(override_usage = "pgbench-report history export [--csv] [filters]")]
pub struct ExportArgs {
    /// one CSV row per run (its figures and tags) rather than JSON
    #[arg(long)]
    pub csv: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
}
