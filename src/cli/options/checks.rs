//! After the option loop: pgbench 15's checks, in its order, each a named function,
//! and the typed [`BenchPlan`] (or init options) they let through.

use super::draft::Draft;
use super::error::ConfigError;
use super::{Action, Env};
use crate::bench::barrier::{WorkerPlan, DEFAULT_WORKER_TIMEOUT_S};
use crate::bench::phases::PhasePlan;
use crate::bench::plan::{
    AvailabilityPlan, BenchPlan, Keep, LogPlan, Scale, Vacuum, DEFAULT_RECONNECT_TIMEOUT_US,
};
use crate::bench::stages::{ClientProfile, RateProfile, StagePlan};
use crate::cli::option_table::Planned;
use crate::init::PartitionMethod;
use crate::session::history::{HistoryPlan, HISTORY_ENV};
use pgbench_results::{Limit, MaxTries, QueryMode, RunSettings};
use std::sync::Arc;

/// `-t` default when neither `-t` nor `-T` is given.
const DEFAULT_NXACTS: i64 = 10;

/// The checks after the loop and the action they allow.
pub(super) fn finish(
    mut d: Draft,
    positionals: Vec<String>,
    env: &dyn Env,
) -> Result<Action, ConfigError> {
    if let Some(shown) = d.show_workload {
        let shown = shown.configure(&d.defines)?;
        if !d.query_mode_given {
            d.query_mode = shown.policy().query_mode.unwrap_or(d.query_mode);
        }
        let text = shown.script_text(d.script_context());
        return Ok(Action::PrintAndExit(text));
    }
    if let Some(path) = d.scenarios_file.take() {
        d.scenario_plans = super::scenarios::apply(&mut d, &path, env)?;
    }
    let workload = match d.workload {
        Some(w) => Some(w.configure(&d.defines)?),
        None => None,
    };
    if let (Some(w), Some(value), true) = (&workload, &d.init.tablespace, d.tables_typed) {
        return Err(ConfigError::TablesAsTablespace {
            value: value.clone(),
            workload: w.name(),
            hint: crate::workload::option_hint("tables", value).unwrap_or_default(),
        });
    }
    if d.check {
        return check_action(d, workload, positionals, env);
    }
    if let (Some(w), false) = (&workload, d.is_init_mode) {
        if !d.query_mode_given {
            d.query_mode = w.policy().query_mode.unwrap_or(d.query_mode);
        }
        add_workload_script(&mut d, w.as_ref())?;
    }
    if d.scripts.is_empty() && !d.is_init_mode {
        d.add_builtin("tpcb-like", 1)?;
        d.benchmarking_option_set = true;
    }
    if d.query_mode != QueryMode::Simple {
        check_parameter_counts(&d)?;
    }
    if d.scripts.iter().map(|s| s.weight).sum::<i64>() == 0 && !d.is_init_mode {
        return Err(ConfigError::ZeroTotalWeight);
    }
    check_stages(&mut d, env)?;
    // A clients sweep's steps take -j as given (or -c when fewer).
    let jobs_given = d.nthreads;
    d.nthreads = d.nthreads.min(d.nclients);
    database_name(&mut d, positionals, env)?;
    if d.is_init_mode {
        return match workload {
            Some(w) => prepare_action(d, w),
            None => init_action(d),
        };
    }
    if d.initialization_option_set {
        return Err(ConfigError::InitOptionInBench);
    }
    check_limits(&mut d)?;
    check_logging(&d)?;
    if d.progress_timestamp && d.progress == 0 {
        return Err(ConfigError::TimestampWithoutProgress);
    }
    if d.max_tries == 0 && d.latency_limit == 0 && d.duration <= 0 {
        return Err(ConfigError::UnlimitedTriesWithoutBound);
    }
    check_worker(&d)?;
    check_linger(&d)?;
    if d.reconnect_timeout.is_some() && !d.reconnect_on_loss {
        return Err(ConfigError::ReconnectTimeoutWithoutReconnect);
    }
    if !d.tags.is_empty()
        && d.history.is_none()
        && env.var(HISTORY_ENV).is_none_or(|s| s.is_empty())
    {
        return Err(ConfigError::TagWithoutHistory);
    }
    let history = HistoryPlan::of(
        d.history.take(),
        std::mem::take(&mut d.tags),
        env.var(HISTORY_ENV),
        d.worker.is_some(),
    );
    // A sweep or search is a mode of its own around the same plan.
    Ok(
        match capacity_plan(&mut d, jobs_given, workload.is_some(), env)? {
            None => bench_action(d, workload, history),
            Some(capacity) => match bench_action(d, workload, history) {
                Action::Bench {
                    conn,
                    plan,
                    temp_instance,
                    workload,
                    history,
                    export,
                } => Action::Sweep {
                    conn,
                    workload,
                    base: plan,
                    capacity,
                    temp_instance,
                    history,
                    export,
                },
                other => other,
            },
        },
    )
}

/// `--sweep` or `--find-max-rate`, checked with the run's other options; the most
/// clients a step runs must fit the open files as `-c` must.
fn capacity_plan(
    d: &mut Draft,
    jobs_given: i64,
    workload: bool,
    env: &dyn Env,
) -> Result<Option<crate::capacity::plan::CapacityPlan>, ConfigError> {
    use pgbench_script::ast::{CommandKind, MetaCommand};
    let assigned = d.scripts.iter().flat_map(|s| &s.script.commands);
    let assigned = assigned.filter_map(|c| match &c.kind {
        CommandKind::Meta(
            MetaCommand::Set { var, .. }
            | MetaCommand::SetShell { var, .. }
            | MetaCommand::SetRandStr { var, .. },
        ) => Some(var.clone()),
        _ => None,
    });
    let read = d.scripts.iter().flat_map(|s| s.script.variables_read());
    let run = crate::capacity::options::RunOptions {
        read: read.collect(),
        clients_given: d.clients_given,
        rate_given: d.rate.is_some(),
        jobs: jobs_given.max(1) as usize,
        duration: (d.duration > 0).then_some(d.duration),
        worker: d.worker.is_some(),
        latency_limit: d.latency_limit > 0,
        seed_given: d.seed_given,
        workload,
        assigned: assigned.collect(),
    };
    let plan = std::mem::take(&mut d.capacity).finish(run)?;
    if let Some(p) = &plan {
        let most = p.max_clients(d.nclients as usize) as i64;
        if most > d.nclients {
            super::draft::check_open_files(most, env)?;
        }
    }
    Ok(plan)
}

/// `--workload` in benchmarking mode: its script is the run's only script.
fn add_workload_script(
    d: &mut Draft,
    w: &dyn crate::workload::Workload,
) -> Result<(), ConfigError> {
    if !d.scripts.is_empty() {
        return Err(ConfigError::WorkloadWithScripts);
    }
    for s in w.scripts(d.script_context()) {
        let script = pgbench_script::parser::parse_script(&s.name, &s.description, &s.text)?;
        d.scripts.push(crate::bench::plan::WeightedScript {
            script,
            weight: s.weight,
            untimed_sleeps: s.untimed_sleeps,
            prepare_on_connect: s.prepare_on_connect,
        });
    }
    d.defines.extend(w.variables());
    if w.policy().continue_on_error {
        d.continue_on_error = true;
    }
    d.benchmarking_option_set = true;
    Ok(())
}

/// `-i --workload=NAME`: `-D` options and `-j` apply, pgbench's init options do not.
fn prepare_action(
    d: Draft,
    workload: Arc<dyn crate::workload::Workload>,
) -> Result<Action, ConfigError> {
    if d.benchmarking_option_set {
        return Err(ConfigError::BenchOptionInInit);
    }
    if let Some(option) = d.table_option {
        return Err(ConfigError::TableOptionWithWorkload {
            option,
            workload: workload.name(),
        });
    }
    check_linger(&d)?;
    Ok(Action::Prepare {
        metrics: metrics_plan(d.metrics_listen, d.metrics_linger),
        conn: d.conn,
        workload,
        how: crate::workload::PrepareOptions {
            jobs: d.init.jobs.unwrap_or(1) as usize,
            seed: d.random_seed,
            scale: d.scale,
            quiet: d.init.quiet,
            resumable: d.init.resumable,
        },
        temp_instance: d.temp_instance,
    })
}

/// `--check` (of a workload's tables with `--workload=NAME`, else of pgbench's): no
/// run, no -i.
fn check_action(
    mut d: Draft,
    workload: Option<Arc<dyn crate::workload::Workload>>,
    positionals: Vec<String>,
    env: &dyn Env,
) -> Result<Action, ConfigError> {
    if d.is_init_mode {
        return Err(ConfigError::CheckWithoutWorkload);
    }
    if d.temp_instance.is_some() {
        return Err(ConfigError::CheckWithTempInstance);
    }
    database_name(&mut d, positionals, env)?;
    Ok(match workload {
        Some(workload) => Action::CheckWorkload {
            conn: d.conn,
            workload,
        },
        None => Action::CheckTables { conn: d.conn },
    })
}

/// `MAX_ARGS`: what one SQL command may carry in extended and prepared mode.
fn check_parameter_counts(d: &Draft) -> Result<(), ConfigError> {
    for ws in &d.scripts {
        for cmd in &ws.script.commands {
            if let pgbench_script::ast::CommandKind::Sql(sql) = &cmd.kind {
                pgbench_script::parser::check_parameter_count(sql)?;
            }
        }
    }
    Ok(())
}

/// DBNAME, else `PGDATABASE`, `PGUSER` or the login name; at most one positional.
fn database_name(
    d: &mut Draft,
    positionals: Vec<String>,
    env: &dyn Env,
) -> Result<(), ConfigError> {
    let mut positionals = positionals.into_iter();
    d.conn.dbname = match positionals.next() {
        Some(db) => {
            d.conn.dbname_given = true;
            db
        }
        None => env
            .var("PGDATABASE")
            .filter(|s| !s.is_empty())
            .or_else(|| env.var("PGUSER").filter(|s| !s.is_empty()))
            .or_else(|| env.os_user())
            .ok_or(ConfigError::NoUserName)?,
    };
    match positionals.next() {
        Some(extra) => Err(ConfigError::TooManyArguments(extra)),
        None => Ok(()),
    }
}

/// `--metrics-listen` and `--metrics-linger`, in either mode.
fn metrics_plan(
    listen: Option<(String, u16)>,
    linger: Option<i64>,
) -> Option<crate::metrics::MetricsPlan> {
    listen.map(|(host, port)| crate::metrics::MetricsPlan {
        host,
        port,
        linger_s: linger.map_or(crate::metrics::DEFAULT_LINGER_S, |s| s as u64),
    })
}

/// `--metrics-linger` asks for an endpoint, in `-i` mode as in a run.
fn check_linger(d: &Draft) -> Result<(), ConfigError> {
    match d.metrics_linger.is_some() && d.metrics_listen.is_none() {
        true => Err(ConfigError::LingerWithoutMetrics),
        false => Ok(()),
    }
}

/// `-i`: the steps with `-n` and `--foreign-keys` applied.
fn init_action(mut d: Draft) -> Result<Action, ConfigError> {
    if d.benchmarking_option_set || d.defines_given {
        return Err(ConfigError::BenchOptionInInit);
    }
    if d.init.partitions == 0 && d.partition_method_given {
        return Err(ConfigError::PartitionMethodWithoutPartitions);
    }
    if d.init.partitions > 0 && !d.partition_method_given {
        d.init.partition_method = PartitionMethod::Range;
    }
    let mut steps = d.init_steps.take().unwrap_or_else(|| "dtgvp".to_string());
    if d.no_vacuum {
        steps = steps.replace('v', " ");
    }
    if d.foreign_keys && !steps.contains('f') {
        steps.push('f');
    }
    d.init.steps = steps;
    check_linger(&d)?;
    Ok(Action::Init {
        metrics: metrics_plan(d.metrics_listen, d.metrics_linger),
        conn: d.conn,
        init: d.init,
        temp_instance: d.temp_instance,
    })
}

/// `--rate-stages`, `--client-stages`: one of them, with no other shape of run (a
/// sweep, a search, `-t`, `--worker`); the stages' total is `-T` (a `-T` of another
/// length is refused); under `--client-stages`, `-c` is the count the first stage
/// starts from (1 when not given) and the run connects as many clients as the
/// largest of it and the targets.
fn check_stages(d: &mut Draft, env: &dyn Env) -> Result<(), ConfigError> {
    let (option, stages) = match (&d.rate_stages, &d.client_stages) {
        (None, None) => return Ok(()),
        (Some(_), Some(_)) => {
            return Err(ConfigError::StagesWith {
                option: "--rate-stages",
                other: "--client-stages",
            })
        }
        (Some(s), None) => ("--rate-stages", s),
        (None, Some(s)) => ("--client-stages", s),
    };
    let with = |other| Err(ConfigError::StagesWith { option, other });
    if d.nxacts > 0 {
        return with("-t");
    }
    if d.worker.is_some() {
        return with("--worker");
    }
    if d.capacity.any() {
        return with("--sweep or --find-max-rate");
    }
    let total = stages.total_s();
    if d.duration > 0 && d.duration != total {
        return Err(ConfigError::StagesDuration {
            option,
            duration: d.duration,
            total,
        });
    }
    d.duration = total;
    let start = match option {
        "--rate-stages" => d.rate.unwrap_or(0.0),
        _ if d.clients_given => d.nclients as f64,
        _ => 1.0,
    };
    if stages.max_target().max(start) <= 0.0
        || (option == "--client-stages" && stages.max_target() < 1.0 && start < 1.0)
    {
        return Err(ConfigError::StagesNoLoad { option });
    }
    if option == "--client-stages" {
        // The run connects the most the stages ask for; they start from -c.
        d.client_stages_start = start;
        d.nclients = stages.max_target().max(start) as i64;
        // What -c checks, for the clients the stages ask for.
        super::draft::check_open_files(d.nclients, env)?;
    }
    Ok(())
}

/// `-t` or `-T`, not both; `-t 10` when neither.
fn check_limits(d: &mut Draft) -> Result<(), ConfigError> {
    if d.nxacts > 0 && d.duration > 0 {
        return Err(ConfigError::BothLimits);
    }
    if d.nxacts <= 0 && d.duration <= 0 {
        d.nxacts = DEFAULT_NXACTS;
    }
    Ok(())
}

/// `--sampling-rate`, `--aggregate-interval` and `--log-prefix` need `-l`, and fit `-T`.
fn check_logging(d: &Draft) -> Result<(), ConfigError> {
    if d.sample_rate > 0.0 && !d.use_log {
        return Err(ConfigError::SamplingWithoutLog);
    }
    if d.sample_rate > 0.0 && d.agg_interval > 0 {
        return Err(ConfigError::SamplingWithAggregation);
    }
    if d.agg_interval > 0 && !d.use_log {
        return Err(ConfigError::AggregationWithoutLog);
    }
    if !d.use_log && d.log_prefix.is_some() {
        return Err(ConfigError::PrefixWithoutLog);
    }
    let (interval, duration) = (d.agg_interval, d.duration);
    if duration > 0 && interval > duration {
        return Err(ConfigError::AggregationOverDuration { interval, duration });
    }
    if duration > 0 && interval > 0 && duration % interval != 0 {
        return Err(ConfigError::DurationNotMultiple { interval, duration });
    }
    Ok(())
}

/// pgbench-rs's `--worker`: its timeout needs it, its clients must fit pgbench's
/// `int` client numbers, and every worker must reach the same server.
fn check_worker(d: &Draft) -> Result<(), ConfigError> {
    let Some((index, count)) = d.worker else {
        return match d.worker_timeout {
            Some(_) => Err(ConfigError::WorkerTimeoutWithoutWorker),
            None => Ok(()),
        };
    };
    if d.temp_instance.is_some() {
        return Err(ConfigError::WorkerWithTempInstance);
    }
    if i64::from(count).saturating_mul(d.nclients) > i64::from(i32::MAX) {
        return Err(ConfigError::WorkerClients {
            index,
            count,
            clients: d.nclients,
        });
    }
    Ok(())
}

/// What a run keeps for what is read of it afterwards: `--latency-percentiles`, the
/// results files, `--print-warnings`, a workload's report, `-r`.
fn keep(d: &Draft, workload: Option<&dyn crate::workload::Workload>) -> Keep {
    Keep {
        // A workload's report may need them (per-transaction percentiles, its tool's
        // percentile).
        histograms: d.percentiles.is_some()
            || d.export.any()
            // Each scenario's percentiles.
            || !d.scenario_plans.is_empty()
            || workload.is_some_and(|w| w.policy().keep_histograms),
        series: d.export.any() || d.print_warnings,
        server_settings: d.export.any(),
        // Only -r's lines and the statements it puts in the results file read them.
        commands: d.report_per_command,
    }
}

/// The stages of the plan, from the checked draft ([`check_stages`]).
fn stage_plan(d: &Draft) -> Option<StagePlan> {
    if let Some(stages) = &d.rate_stages {
        return Some(StagePlan::Rate(RateProfile {
            start: d.rate.unwrap_or(0.0),
            stages: stages.clone(),
            threads: d.nthreads as usize,
        }));
    }
    d.client_stages.as_ref().map(|stages| {
        StagePlan::Clients(ClientProfile {
            start: d.client_stages_start,
            stages: stages.clone(),
        })
    })
}

/// The validated draft as a typed plan.
fn bench_action(
    d: Draft,
    workload: Option<Arc<dyn crate::workload::Workload>>,
    history: Option<HistoryPlan>,
) -> Action {
    let positive = |v: i64| (v > 0).then_some(v);
    let keep = keep(&d, workload.as_deref());
    let stages = stage_plan(&d);
    let settings = RunSettings {
        query_mode: d.query_mode,
        clients: d.nclients as usize,
        threads: d.nthreads as usize,
        limit: if d.duration > 0 {
            Limit::Duration(d.duration)
        } else {
            Limit::Transactions(d.nxacts as i32)
        },
        max_tries: match d.max_tries {
            0 => MaxTries::Unlimited,
            n => MaxTries::Limited(n),
        },
        failures_detailed: d.failures_detailed,
        continue_on_error: d.continue_on_error,
        // A staged rate is a -R schedule: its lag is measured and reported, from 0
        // when the first stage starts from none.
        rate: match &stages {
            Some(StagePlan::Rate(p)) => Some(p.start),
            _ => d.rate,
        },
        latency_limit_us: positive(d.latency_limit),
        progress_s: positive(d.progress),
        reconnect: d.is_connect,
        report_per_command: d.report_per_command,
        percentiles: d.percentiles,
    };
    let log = d.use_log.then(|| LogPlan {
        prefix: d.log_prefix.unwrap_or_else(|| "pgbench_log".to_string()),
        sample_rate: (d.sample_rate > 0.0).then_some(d.sample_rate),
        aggregate_interval_s: positive(d.agg_interval),
    });
    let worker = d.worker.map(|(index, count)| WorkerPlan {
        index,
        count,
        timeout_s: d.worker_timeout.unwrap_or(DEFAULT_WORKER_TIMEOUT_S),
        seed_given: d.seed_given,
        option_digests: String::new(),
    });
    let metrics = metrics_plan(d.metrics_listen, d.metrics_linger);
    let vacuum = match (d.no_vacuum, d.vacuum_all) {
        // A workload's tool vacuums nothing before a run, and pgbench's tables are
        // not there.
        _ if workload.as_ref().is_some_and(|w| w.policy().skip_vacuum) => Vacuum::Skip,
        (true, _) => Vacuum::Skip,
        (false, true) => Vacuum::All,
        (false, false) => Vacuum::Default,
    };
    let mut plan = BenchPlan {
        scripts: d.scripts,
        builtin_used: d.builtin_used,
        settings,
        progress_timestamp: d.progress_timestamp,
        log,
        verbose_errors: d.verbose_errors,
        exit_on_abort: d.exit_on_abort,
        defines: d.defines,
        scale: Scale {
            value: d.scale,
            given: d.scale_given,
        },
        vacuum,
        debug: d.debug,
        random_seed: d.random_seed,
        worker,
        phases: PhasePlan {
            warmup_s: positive(d.warmup),
        },
        // What a run asks of it; the rest stays with the action (a throwaway
        // instance's prepare).
        workload: workload
            .clone()
            .map(|w| w as Arc<dyn crate::bench::RunWorkload>),
        metrics,
        server_stats: d.server_stats,
        print_warnings: d.print_warnings,
        availability: d.reconnect_on_loss.then(|| AvailabilityPlan {
            timeout_us: d
                .reconnect_timeout
                .map_or(DEFAULT_RECONNECT_TIMEOUT_US, |s| s * 1_000_000),
        }),
        os_threads: d.os_threads.map(|n| n as usize),
        keep,
        scenarios: d.scenario_plans,
        stages,
    };
    plan.refresh_worker_digests(|plan| {
        crate::cli::option_table::worker_digests(&Planned {
            plan,
            capacity: None,
        })
    });
    Action::Bench {
        conn: d.conn,
        plan: Box::new(plan),
        temp_instance: d.temp_instance,
        workload,
        history,
        export: d.export,
    }
}
