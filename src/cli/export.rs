//! `--export-json` and `--export-html`: the run's results file, with what the command
//! line asked for (every effective option, by its long name). Passwords in a connection
//! string are masked in what the file records of the command line.
//! `pgbench_results::destination` writes it.

use crate::bench::plan::{BenchPlan, Vacuum};
use pgbench_results::{Limit, MaxTries, ResultsFile, RunMeta, RunResult};
use pgbench_wire::redact_secrets;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Every effective option after defaults, keyed by its long name.
pub fn effective_options(plan: &BenchPlan, dbname: &str) -> BTreeMap<String, Value> {
    let s = &plan.settings;
    let mut o = BTreeMap::new();
    let mut put = |k: &str, v: Value| {
        o.insert(k.to_string(), v);
    };
    put("client", json!(s.clients));
    put("jobs", json!(s.threads));
    match s.limit {
        Limit::Transactions(n) => put("transactions", json!(n)),
        Limit::Duration(secs) => put("time", json!(secs)),
    }
    put("protocol", json!(s.query_mode.name()));
    put(
        "max-tries",
        json!(match s.max_tries {
            MaxTries::Unlimited => 0,
            MaxTries::Limited(n) => n,
        }),
    );
    put("rate", json!(s.rate));
    put(
        "latency-limit",
        json!(s.latency_limit_us.map(|us| us as f64 / 1000.0)),
    );
    put("progress", json!(s.progress_s));
    put("progress-timestamp", json!(plan.progress_timestamp));
    put("connect", json!(s.reconnect));
    put("report-per-command", json!(s.report_per_command));
    put("failures-detailed", json!(s.failures_detailed));
    put("verbose-errors", json!(plan.verbose_errors));
    put("exit-on-abort", json!(plan.exit_on_abort));
    put("continue-on-error", json!(s.continue_on_error));
    put("workload", json!(plan.workload.as_ref().map(|w| w.name())));
    put("warmup", json!(plan.warmup_s));
    put("server-stats", json!(plan.server_stats.is_some()));
    put("latency-percentiles", json!(s.percentiles));
    put(
        "file",
        json!(plan
            .scripts
            .iter()
            .map(|w| json!({ "script": w.script.desc, "weight": w.weight }))
            .collect::<Vec<_>>()),
    );
    put(
        "define",
        json!(plan
            .defines
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()),
    );
    put("scale", json!(plan.scale.given.then_some(plan.scale.value)));
    put("no-vacuum", json!(plan.vacuum == Vacuum::Skip));
    put("vacuum-all", json!(plan.vacuum == Vacuum::All));
    put("log", json!(plan.log.is_some()));
    if let Some(log) = &plan.log {
        put("log-prefix", json!(log.prefix));
        put("sampling-rate", json!(log.sample_rate));
        put("aggregate-interval", json!(log.aggregate_interval_s));
    }
    put("debug", json!(plan.debug));
    if let Some(w) = &plan.worker {
        put("worker", json!(format!("{}/{}", w.index, w.count)));
    }
    put("dbname", json!(redact_secrets(dbname)));
    o
}

/// The results file of a finished run: the runner's `meta` with the command line and
/// the options added.
pub fn results_file(
    result: &RunResult,
    meta: &RunMeta,
    plan: &BenchPlan,
    argv: &[String],
    dbname: &str,
) -> ResultsFile {
    let meta = RunMeta {
        // A connection string's password must not reach a file made to be shared.
        command_line: argv.iter().map(|a| redact_secrets(a)).collect(),
        options: effective_options(plan, dbname),
        ..meta.clone()
    };
    ResultsFile::from_run(result.clone(), meta)
}
