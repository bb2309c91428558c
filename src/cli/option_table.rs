//! Every option pgbench-rs takes, in one table: how getopt spells it, what a run's
//! results file records of it, and whether the workers of one `--worker` run must agree
//! on it. The tokenizer ([`super::args`]), the results file's `options`
//! ([`super::export::effective_options`]) and the workers' option digests
//! ([`worker_digests`]) all read [`OPTIONS`]; nothing else lists every option, so a new
//! option is one row here (and its handling in `options/draft.rs` and `checks.rs`).
//! The `--help` text is pgbench's own, word for word, in `help.rs`.

use crate::bench::plan::{BenchPlan, Vacuum};
use crate::capacity::plan::{CapacityPlan, What};
use pgbench_results::stages::StageShape as Shape;
use pgbench_results::{Limit, MaxTries};
use serde_json::{json, Value};

/// Every option pgbench 15 knows, plus ours. The variant names are pgbench's long names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opt {
    Builtin,
    Client,
    Connect,
    Debug,
    Define,
    File,
    Fillfactor,
    Host,
    Initialize,
    InitSteps,
    Jobs,
    Log,
    LatencyLimit,
    Protocol,
    NoVacuum,
    SkipSomeUpdates,
    Port,
    Progress,
    Quiet,
    ReportPerCommand,
    Rate,
    Scale,
    SelectOnly,
    Transactions,
    Time,
    Username,
    VacuumAll,
    UnloggedTables,
    Tablespace,
    IndexTablespace,
    SamplingRate,
    AggregateInterval,
    ProgressTimestamp,
    LogPrefix,
    ForeignKeys,
    RandomSeed,
    ShowScript,
    Partitions,
    PartitionMethod,
    FailuresDetailed,
    MaxTries,
    VerboseErrors,
    ExitOnAbort,
    LatencyPercentiles,
    TempInstance,
    TempInstanceDurable,
    ExportJson,
    ExportHtml,
    Worker,
    WorkerTimeout,
    Warmup,
    Workload,
    MetricsListen,
    MetricsLinger,
    Check,
    ContinueOnError,
    ServerStats,
    PrintServerStats,
    PrintWarnings,
    Reconnect,
    ReconnectTimeout,
    OsThreads,
    Sweep,
    Repeat,
    FindMaxRate,
    SearchTolerance,
    SearchSteps,
    FailIfBelow,
    History,
    Tag,
    Resume,
    Shard,
    Scenarios,
    RateStages,
    ClientStages,
}

/// What the command line asked for, as the rows read it: the run's plan (a sweep's
/// step's, when one runs) and the sweep or search around it, if any. Its fields are
/// the plan's ([`std::ops::Deref`]), so a row reads `p.settings`.
#[derive(Clone, Copy)]
pub struct Planned<'a> {
    pub plan: &'a BenchPlan,
    pub capacity: Option<&'a CapacityPlan>,
}

impl std::ops::Deref for Planned<'_> {
    type Target = BenchPlan;

    fn deref(&self) -> &BenchPlan {
        self.plan
    }
}

/// What the results file records of an option: its value under the long name, `None`
/// to leave the key out (an option that does not apply, such as `-t` in a `-T` run).
pub type Recorded = fn(&Planned<'_>) -> Option<Value>;

/// What the workers of one run must agree on: the name a mismatch is reported under
/// (the option's spelling, or what several options make together) and the value.
#[derive(Clone, Copy)]
pub struct Shared {
    pub name: &'static str,
    pub value: fn(&Planned<'_>) -> String,
}

/// One option.
#[derive(Clone, Copy)]
pub struct OptionSpec {
    pub opt: Opt,
    pub short: Option<char>,
    pub long: &'static str,
    pub takes_value: bool,
    /// The results file's `options` entry (a benchmark's option), if any.
    pub recorded: Option<Recorded>,
    /// A value the workers of one `--worker` run must share, if any.
    pub shared: Option<Shared>,
}

const fn opt(opt: Opt, short: Option<char>, long: &'static str, takes_value: bool) -> OptionSpec {
    OptionSpec {
        opt,
        short,
        long,
        takes_value,
        recorded: None,
        shared: None,
    }
}

impl OptionSpec {
    const fn recorded(self, recorded: Recorded) -> OptionSpec {
        OptionSpec {
            recorded: Some(recorded),
            ..self
        }
    }

    const fn shared(self, name: &'static str, value: fn(&Planned<'_>) -> String) -> OptionSpec {
        OptionSpec {
            shared: Some(Shared { name, value }),
            ..self
        }
    }
}

/// The table. Its order is pgbench.c's `long_options` (getopt lists ambiguous prefixes
/// in this order), then pgbench 17's, 19's and ours.
pub const OPTIONS: &[OptionSpec] = &[
    // Every script of the run, builtins and files alike, is recorded (and shared) once:
    // under `file`.
    opt(Opt::Builtin, Some('b'), "builtin", true),
    opt(Opt::Client, Some('c'), "client", true)
        .recorded(|p| Some(json!(p.settings.clients)))
        .shared("-c", |p| format!("{:?}", p.settings.clients)),
    opt(Opt::Connect, Some('C'), "connect", false)
        .recorded(|p| Some(json!(p.settings.reconnect)))
        .shared("-C", |p| format!("{:?}", p.settings.reconnect)),
    opt(Opt::Debug, Some('d'), "debug", false).recorded(|p| Some(json!(p.debug))),
    opt(Opt::Define, Some('D'), "define", true)
        .recorded(|p| {
            let defines: Vec<String> = p.defines.iter().map(|(n, v)| format!("{n}={v}")).collect();
            Some(json!(defines))
        })
        .shared("-D", |p| format!("{:?}", p.defines)),
    opt(Opt::File, Some('f'), "file", true)
        .recorded(|p| {
            let scripts: Vec<Value> = p
                .scripts
                .iter()
                .map(|w| json!({ "script": w.script.desc, "weight": w.weight }))
                .collect();
            Some(json!(scripts))
        })
        .shared("the scripts", |p| format!("{:?}", p.scripts)),
    opt(Opt::Fillfactor, Some('F'), "fillfactor", true),
    opt(Opt::Host, Some('h'), "host", true),
    opt(Opt::Initialize, Some('i'), "initialize", false),
    opt(Opt::InitSteps, Some('I'), "init-steps", true),
    opt(Opt::Jobs, Some('j'), "jobs", true)
        .recorded(|p| Some(json!(p.settings.threads)))
        .shared("-j", |p| format!("{:?}", p.settings.threads)),
    opt(Opt::Log, Some('l'), "log", false).recorded(|p| Some(json!(p.log.is_some()))),
    opt(Opt::LatencyLimit, Some('L'), "latency-limit", true)
        .recorded(|p| {
            let ms = p.settings.latency_limit_us.map(|us| us as f64 / 1000.0);
            Some(json!(ms))
        })
        .shared("-L", |p| format!("{:?}", p.settings.latency_limit_us)),
    opt(Opt::NoVacuum, Some('n'), "no-vacuum", false)
        .recorded(|p| Some(json!(p.vacuum == Vacuum::Skip))),
    opt(Opt::Port, Some('p'), "port", true),
    opt(Opt::Progress, Some('P'), "progress", true)
        .recorded(|p| Some(json!(p.settings.progress_s)))
        .shared("-P", |p| {
            format!("{:?} {:?}", p.settings.progress_s, p.progress_timestamp)
        }),
    opt(Opt::Protocol, Some('M'), "protocol", true)
        .recorded(|p| Some(json!(p.settings.query_mode.name())))
        .shared("-M", |p| format!("{:?}", p.settings.query_mode)),
    opt(Opt::Quiet, Some('q'), "quiet", false),
    opt(
        Opt::ReportPerCommand,
        Some('r'),
        "report-per-command",
        false,
    )
    .recorded(|p| Some(json!(p.settings.report_per_command))),
    opt(Opt::Rate, Some('R'), "rate", true)
        .recorded(|p| Some(json!(p.settings.rate)))
        .shared("-R", |p| format!("{:?}", p.settings.rate)),
    opt(Opt::Scale, Some('s'), "scale", true)
        .recorded(|p| Some(json!(p.scale.given.then_some(p.scale.value))))
        .shared("-s", |p| format!("{:?}", p.scale)),
    opt(Opt::SelectOnly, Some('S'), "select-only", false),
    opt(Opt::SkipSomeUpdates, Some('N'), "skip-some-updates", false),
    opt(Opt::Time, Some('T'), "time", true).recorded(|p| match p.settings.limit {
        Limit::Duration(secs) => Some(json!(secs)),
        Limit::Transactions(_) => None,
    }),
    opt(Opt::Transactions, Some('t'), "transactions", true)
        .recorded(|p| match p.settings.limit {
            Limit::Transactions(n) => Some(json!(n)),
            Limit::Duration(_) => None,
        })
        .shared("-t/-T", |p| format!("{:?}", p.settings.limit)),
    opt(Opt::Username, Some('U'), "username", true),
    opt(Opt::VacuumAll, Some('v'), "vacuum-all", false)
        .recorded(|p| Some(json!(p.vacuum == Vacuum::All))),
    opt(Opt::UnloggedTables, None, "unlogged-tables", false),
    opt(Opt::Tablespace, None, "tablespace", true),
    opt(Opt::IndexTablespace, None, "index-tablespace", true),
    opt(Opt::SamplingRate, None, "sampling-rate", true)
        .recorded(|p| p.log.as_ref().map(|l| json!(l.sample_rate))),
    opt(Opt::AggregateInterval, None, "aggregate-interval", true)
        .recorded(|p| p.log.as_ref().map(|l| json!(l.aggregate_interval_s))),
    opt(Opt::ProgressTimestamp, None, "progress-timestamp", false)
        .recorded(|p| Some(json!(p.progress_timestamp))),
    opt(Opt::LogPrefix, None, "log-prefix", true)
        .recorded(|p| p.log.as_ref().map(|l| json!(l.prefix))),
    opt(Opt::ForeignKeys, None, "foreign-keys", false),
    opt(Opt::RandomSeed, None, "random-seed", true).shared("--random-seed", |p| {
        // A seed each worker takes from worker 0 is not the run's to agree on.
        let given = p.worker.as_ref().is_some_and(|w| w.seed_given);
        format!("{:?}", given.then_some(p.random_seed))
    }),
    opt(Opt::ShowScript, None, "show-script", true),
    opt(Opt::Partitions, None, "partitions", true),
    opt(Opt::PartitionMethod, None, "partition-method", true),
    opt(Opt::FailuresDetailed, None, "failures-detailed", false)
        .recorded(|p| Some(json!(p.settings.failures_detailed))),
    opt(Opt::MaxTries, None, "max-tries", true)
        .recorded(|p| {
            let tries = match p.settings.max_tries {
                MaxTries::Unlimited => 0,
                MaxTries::Limited(n) => n,
            };
            Some(json!(tries))
        })
        .shared("--max-tries", |p| format!("{:?}", p.settings.max_tries)),
    opt(Opt::VerboseErrors, None, "verbose-errors", false)
        .recorded(|p| Some(json!(p.verbose_errors))),
    // pgbench 17 (PGBENCH_15_OPTIONS counts the rows above)
    opt(Opt::ExitOnAbort, None, "exit-on-abort", false).recorded(|p| Some(json!(p.exit_on_abort))),
    // pgbench 19
    opt(Opt::ContinueOnError, None, "continue-on-error", false)
        .recorded(|p| Some(json!(p.settings.continue_on_error))),
    // pgbench-rs
    opt(Opt::LatencyPercentiles, None, "latency-percentiles", true)
        .recorded(|p| Some(json!(p.settings.percentiles))),
    opt(Opt::TempInstance, None, "temp-instance", false),
    opt(
        Opt::TempInstanceDurable,
        None,
        "temp-instance-durable",
        false,
    ),
    opt(Opt::ExportJson, None, "export-json", true),
    opt(Opt::ExportHtml, None, "export-html", true),
    opt(Opt::Worker, None, "worker", true)
        .recorded(|p| {
            let w = p.worker.as_ref()?;
            Some(json!(format!("{}/{}", w.index, w.count)))
        })
        .shared("--worker (N)", |p| {
            format!("{:?}", p.worker.as_ref().map(|w| w.count))
        }),
    opt(Opt::WorkerTimeout, None, "worker-timeout", true),
    opt(Opt::Warmup, None, "warmup", true)
        .recorded(|p| Some(json!(p.phases.warmup_s)))
        .shared("--warmup", |p| format!("{:?}", p.phases.warmup_s)),
    opt(Opt::Workload, None, "workload", true)
        .recorded(|p| Some(json!(p.workload.as_ref().map(|w| w.name()))))
        .shared("--workload", |p| format!("{:?}", p.workload)),
    opt(Opt::MetricsListen, None, "metrics-listen", true),
    opt(Opt::MetricsLinger, None, "metrics-linger", true),
    opt(Opt::Check, None, "check", false),
    opt(Opt::ServerStats, None, "server-stats", false)
        .recorded(|p| Some(json!(p.server_stats.is_some()))),
    opt(Opt::PrintServerStats, None, "print-server-stats", false),
    opt(Opt::PrintWarnings, None, "print-warnings", false),
    opt(Opt::Reconnect, None, "reconnect", false)
        .recorded(|p| Some(json!(p.availability.is_some())))
        .shared("--reconnect", |p| format!("{:?}", p.availability)),
    opt(Opt::ReconnectTimeout, None, "reconnect-timeout", true)
        .recorded(|p| p.availability.map(|a| json!(a.timeout_us as f64 / 1e6))),
    opt(Opt::OsThreads, None, "os-threads", true).recorded(|p| p.os_threads.map(|n| json!(n))),
    opt(Opt::Sweep, None, "sweep", true)
        .recorded(|p| {
            capacity(p, |c| {
                matches!(c.what, What::Sweep { .. }).then(|| json!(c.option_value()))
            })
        })
        .shared("--sweep", |p| format!("{:?}", p.capacity)),
    opt(Opt::Repeat, None, "repeat", true).recorded(|p| {
        capacity(p, |c| match &c.what {
            What::Sweep { repeat, .. } => Some(json!(repeat)),
            What::Search { .. } => None,
        })
    }),
    opt(Opt::FindMaxRate, None, "find-max-rate", true).recorded(|p| {
        capacity(p, |c| {
            matches!(c.what, What::Search { .. }).then(|| json!(c.option_value()))
        })
    }),
    opt(Opt::SearchTolerance, None, "search-tolerance", true).recorded(|p| {
        capacity(p, |c| match &c.what {
            What::Search { tolerance, .. } => Some(json!(tolerance * 100.0)),
            What::Sweep { .. } => None,
        })
    }),
    opt(Opt::SearchSteps, None, "search-steps", true).recorded(|p| {
        capacity(p, |c| match &c.what {
            What::Search { max_steps, .. } => Some(json!(max_steps)),
            What::Sweep { .. } => None,
        })
    }),
    opt(Opt::FailIfBelow, None, "fail-if-below", true).recorded(|p| {
        capacity(p, |c| match &c.what {
            What::Search { fail_if_below, .. } => fail_if_below.map(|r| json!(r)),
            What::Sweep { .. } => None,
        })
    }),
    // Where the results go after the run, not what the run is: neither recorded nor
    // shared.
    opt(Opt::History, None, "history", true),
    opt(Opt::Tag, None, "tag", true),
    opt(Opt::Resume, None, "resume", false),
    opt(Opt::Shard, None, "shard", true),
    opt(Opt::Scenarios, None, "scenarios", true).recorded(|p| {
        (!p.scenarios.is_empty())
            .then(|| json!(p.scenarios.iter().map(|s| &s.name).collect::<Vec<_>>()))
    }),
    opt(Opt::RateStages, None, "rate-stages", true)
        .recorded(|p| stages(p, Shape::Rate))
        .shared("--rate-stages", |p| format!("{:?}", p.stages)),
    opt(Opt::ClientStages, None, "client-stages", true)
        .recorded(|p| stages(p, Shape::Clients))
        .shared("--client-stages", |p| format!("{:?}", p.stages)),
];

/// `--rate-stages` or `--client-stages` as the results file records it.
fn stages(p: &Planned<'_>, shape: Shape) -> Option<Value> {
    p.stages
        .as_ref()
        .filter(|s| s.shape() == shape)
        .map(|s| json!(s.stages().spec()))
}

/// What the results file records of a sweep's or search's option, if the run has one.
fn capacity(p: &Planned<'_>, value: impl Fn(&CapacityPlan) -> Option<Value>) -> Option<Value> {
    value(p.capacity?)
}

/// How many rows of [`OPTIONS`], from the top, are pgbench 15's own options. A prefix
/// that names one of them unambiguously means that option, as it does for stock pgbench,
/// even where a later option (pgbench 17's, 19's or ours) starts the same way: `--se`
/// stays `--select-only` beside `--server-stats`, `--m` stays `--max-tries` beside
/// `--metrics-*`.
pub const PGBENCH_15_OPTIONS: usize = 42;

/// The options workers of one run must share, each with a short digest of its value,
/// as `name=digest` words: a worker that meets a worker of another run names the
/// options whose digests differ (`bench::barrier::differing_options`).
pub fn worker_digests(planned: &Planned<'_>) -> String {
    OPTIONS
        .iter()
        .filter_map(|o| o.shared)
        .map(|shared| {
            let digest = openssl::sha::sha256((shared.value)(planned).as_bytes());
            format!(
                "{}={:02x}{:02x}",
                shared.name.replace(' ', "_"),
                digest[0],
                digest[1]
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_option_and_spelling_is_in_the_table_once() {
        for (i, a) in OPTIONS.iter().enumerate() {
            for b in &OPTIONS[i + 1..] {
                assert_ne!(a.opt, b.opt);
                assert_ne!(a.long, b.long);
                assert!(a.short.is_none() || a.short != b.short, "{}", a.long);
            }
        }
    }
}
