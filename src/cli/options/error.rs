//! Why a command line is refused: one variant per pgbench 15 message, whose `Display`
//! is pgbench's text, with its `detail:`/`hint:` lines. Its [`Diagnostic::render`]
//! gives the whole stderr text; the exit status is always 1.

use crate::diagnostic::Diagnostic;
use crate::logging::{line, Level};
use pgbench_script::error::ScriptError;

/// pgbench's `MAX_SCRIPTS`.
pub const MAX_SCRIPTS: usize = 128;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// getopt's own complaint, printed as it is, then pgbench's `--help` hint.
    #[error("{0}")]
    Getopt(String),
    /// A script that does not parse: printed with its caret block.
    #[error("{0}")]
    Script(#[from] ScriptError),
    /// pgbench-rs's `--workload`: an unknown name or option, a bad value.
    #[error("{0}")]
    Workload(#[from] crate::workload::WorkloadError),
    /// pgbench-rs's `--sweep`, `--find-max-rate` and their companions.
    #[error("{0}")]
    Capacity(#[from] crate::capacity::options::CapacityError),
    /// `--scenarios=FILE`: the file's own errors (file, line and key named).
    #[error("{0}")]
    Scenario(#[from] crate::scenario::ScenarioError),
    #[error("--scenarios cannot be combined with {0}")]
    ScenariosWith(&'static str),
    #[error("--workload cannot be combined with -b, -f, -S or -N")]
    WorkloadWithScripts,
    /// `--shard`: not `K/N`.
    #[error("{0}")]
    Shard(String),
    /// `--tag`: not `KEY=VALUE`.
    #[error("{0}")]
    Tag(String),
    #[error("--tag needs --history (or PGBENCH_RS_HISTORY set): the tags label a recorded run")]
    TagWithoutHistory,
    #[error("--check cannot be combined with --temp-instance")]
    CheckWithTempInstance,
    /// A workload's tool's `--tables=N`, which getopt reads as a prefix of
    /// `--tablespace`; the hint says what it is here.
    #[error("--tables={value} is read as --tablespace={value}, which does not apply to --workload={workload}")]
    TablesAsTablespace {
        value: String,
        workload: &'static str,
        hint: String,
    },
    #[error("{option} does not apply to -i --workload={workload}, which creates its own tables")]
    TableOptionWithWorkload {
        option: &'static str,
        workload: &'static str,
    },
    #[error("invalid value \"{value}\" for option {option}")]
    InvalidValue { option: &'static str, value: String },
    #[error("{option} must be in range {min}..{max}")]
    OutOfRange {
        option: &'static str,
        min: i64,
        max: i64,
    },
    /// `--rate-stages`, `--client-stages`: a list that does not parse (the detail
    /// names the stage).
    #[error("invalid value \"{value}\" for option {option}")]
    Stages {
        option: &'static str,
        value: String,
        detail: String,
    },
    #[error("{option} cannot be combined with {other}")]
    StagesWith {
        option: &'static str,
        other: &'static str,
    },
    #[error("-T {duration} is not the length of {option} ({total} s): its stages make the run's length, so give -T of that length or none")]
    StagesDuration {
        option: &'static str,
        duration: i64,
        total: i64,
    },
    #[error("{option} gives no load: every target is 0")]
    StagesNoLoad { option: &'static str },
    #[error("invalid weight specification: {0}")]
    WeightSpec(String),
    #[error("weight specification out of range (0 .. {max}): {weight}", max = i32::MAX)]
    WeightRange { weight: i64 },
    #[error("need at least {need} open files, but system limit is {limit}")]
    OpenFilesLimit { need: i64, limit: u64 },
    #[error("need at least {need} open files, but couldn't raise the limit: {reason}")]
    OpenFilesRaise { need: i64, reason: String },
    #[error("invalid variable definition: \"{0}\"")]
    Define(String),
    #[error("option: invalid variable name: \"{0}\"")]
    DefineName(String),
    #[error("could not open file \"{path}\": {reason}")]
    OpenFile { path: String, reason: String },
    #[error("invalid latency limit: \"{0}\"")]
    LatencyLimit(String),
    #[error("invalid query mode (-M): \"{0}\"")]
    QueryMode(String),
    #[error("invalid rate limit: \"{0}\"")]
    Rate(String),
    #[error("invalid sampling rate: \"{0}\"")]
    SamplingRate(String),
    #[error("invalid partition method, expecting \"range\" or \"hash\", got: \"{0}\"")]
    PartitionMethod(String),
    #[error("invalid number of maximum tries: \"{0}\"")]
    MaxTries(String),
    #[error("invalid latency percentile \"{0}\": expecting numbers in (0, 100], as in 50,99,99.9")]
    Percentile(String),
    #[error("no initialization steps specified")]
    NoInitSteps,
    #[error("unrecognized initialization step \"{0}\"")]
    InitStep(char),
    /// `--random-seed` or `PGBENCH_RANDOM_SEED` is not a seed.
    #[error("{message}")]
    Seed {
        message: String,
        detail: Option<String>,
        /// `--random-seed option` or `PGBENCH_RANDOM_SEED environment variable`.
        source_name: &'static str,
    },
    #[error("at most {MAX_SCRIPTS} SQL scripts are allowed")]
    TooManyScripts,
    #[error("total script weight must not be zero")]
    ZeroTotalWeight,
    #[error("could not get current user name")]
    NoUserName,
    #[error("too many command-line arguments (first is \"{0}\")")]
    TooManyArguments(String),
    #[error("some of the specified options cannot be used in initialization (-i) mode")]
    BenchOptionInInit,
    #[error("--partition-method requires greater than zero --partitions")]
    PartitionMethodWithoutPartitions,
    #[error("some of the specified options cannot be used in benchmarking mode")]
    InitOptionInBench,
    #[error("specify either a number of transactions (-t) or a duration (-T), not both")]
    BothLimits,
    #[error("log sampling (--sampling-rate) is allowed only when logging transactions (-l)")]
    SamplingWithoutLog,
    #[error("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time")]
    SamplingWithAggregation,
    #[error("log aggregation is allowed only when actually logging transactions")]
    AggregationWithoutLog,
    #[error("log file prefix (--log-prefix) is allowed only when logging transactions (-l)")]
    PrefixWithoutLog,
    #[error("number of seconds for aggregation ({interval}) must not be higher than test duration ({duration})")]
    AggregationOverDuration { interval: i64, duration: i64 },
    #[error("duration ({duration}) must be a multiple of aggregation interval ({interval})")]
    DurationNotMultiple { interval: i64, duration: i64 },
    #[error("--progress-timestamp is allowed only under --progress")]
    TimestampWithoutProgress,
    #[error("an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)")]
    UnlimitedTriesWithoutBound,
    /// pgbench-rs's `--worker=I/N` is not one worker of a run.
    #[error("invalid value \"{value}\" for option --worker: {why}")]
    Worker { value: String, why: &'static str },
    #[error("--worker-timeout is allowed only under --worker")]
    WorkerTimeoutWithoutWorker,
    #[error("--metrics-linger is allowed only under --metrics-listen")]
    LingerWithoutMetrics,
    #[error("--reconnect-timeout is allowed only under --reconnect")]
    ReconnectTimeoutWithoutReconnect,
    #[error("--worker cannot be used with --temp-instance: the workers of a run share one server")]
    WorkerWithTempInstance,
    #[error("--check cannot be used with -i (it checks the tables a load made)")]
    CheckWithoutWorkload,
    #[error("--worker={index}/{count} with -c {clients} makes more than {max} clients in all", max = i32::MAX)]
    WorkerClients {
        index: u32,
        count: u32,
        clients: i64,
    },
}

const HELP_HINT: &str = "Try \"{} --help\" for more information.";
const OPEN_FILES_HINT: &str =
    "Reduce number of clients, or use limit/ulimit to increase the system limit.";

impl ConfigError {
    /// pgbench's `detail:` line, if it prints one.
    pub fn detail(&self) -> Option<String> {
        match self {
            ConfigError::InitStep(_) => {
                Some("Allowed step characters are: \"dtgGvpf\".".to_string())
            }
            ConfigError::Seed { detail, .. } => detail.clone(),
            ConfigError::Stages { detail, .. } => Some(detail.clone()),
            _ => None,
        }
    }

    /// pgbench's `hint:` line, if it prints one (`progname` is the program the
    /// `--help` hint names).
    pub fn hint(&self, progname: &str) -> Option<String> {
        match self {
            ConfigError::Getopt(_) | ConfigError::TooManyArguments(_) => {
                Some(HELP_HINT.replace("{}", progname))
            }
            ConfigError::OpenFilesLimit { .. } | ConfigError::OpenFilesRaise { .. } => {
                Some(OPEN_FILES_HINT.to_string())
            }
            ConfigError::TablesAsTablespace { hint, .. } => Some(hint.clone()),
            _ => None,
        }
    }
}

impl Diagnostic for ConfigError {
    /// Everything pgbench prints on stderr for this error.
    fn render(&self, progname: &str) -> String {
        let mut out = match self {
            ConfigError::Getopt(text) => format!("{text}\n"),
            ConfigError::Script(e) => return e.render(progname),
            _ => line(progname, Level::Error, &self.to_string()),
        };
        if let Some(d) = self.detail() {
            out.push_str(&line(progname, Level::Detail, &d));
        }
        if let ConfigError::Seed { source_name, .. } = self {
            out.push_str(&line(
                progname,
                Level::Error,
                &format!("error while setting random seed from {source_name}"),
            ));
        }
        if let Some(h) = self.hint(progname) {
            out.push_str(&line(progname, Level::Hint, &h));
        }
        out
    }
}
