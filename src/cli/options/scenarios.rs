//! `--scenarios=FILE` on the command line: the file read ([`crate::scenario`]), the
//! options it replaces refused, and each scenario's scripts resolved (a builtin, a
//! `--workload` name, a file) into the draft's scripts, with the engine's
//! [`ScenarioPlan`]s over them. The clients and threads of the run are the sums of the
//! scenarios'; `-T`/`-t`, `--warmup`, `--random-seed`, `-M`, `-D` and the connection
//! options are the whole run's (a scenario's `conninfo` goes over the last).

use super::draft::Draft;
use super::error::ConfigError;
use super::Env;
use crate::bench::plan::ScenarioPlan;
use crate::bench::stages::{ClientProfile, RateProfile, StagePlan, Stages};
use crate::scenario::{ScenarioError, ScenarioSpec};
use pgbench_results::QueryMode;
use pgbench_script::{builtin, parser};

/// The options a scenarios file says for itself, as the refusal names them.
fn conflict(d: &Draft) -> Option<&'static str> {
    [
        (d.clients_given, "-c/--client (each scenario's clients)"),
        (d.nthreads != 1, "-j/--jobs (each scenario's threads)"),
        (
            !d.scripts.is_empty(),
            "-b, -f, -S or -N (each scenario's script)",
        ),
        (
            d.workload.is_some(),
            "--workload (a scenario's script may name one)",
        ),
        (d.rate.is_some(), "-R/--rate (each scenario's rate)"),
        (
            d.rate_stages.is_some() || d.client_stages.is_some(),
            "--rate-stages or --client-stages (each scenario's rate_stages, client_stages)",
        ),
        (d.worker.is_some(), "--worker"),
        (d.capacity.any(), "--sweep or --find-max-rate"),
        (d.check, "--check"),
        (d.is_init_mode, "-i/--initialize"),
    ]
    .into_iter()
    .find_map(|(given, name)| given.then_some(name))
}

/// Reads the scenarios file into the draft: its scripts, its clients and threads,
/// and the plan of each scenario.
pub(super) fn apply(
    d: &mut Draft,
    path: &str,
    env: &dyn Env,
) -> Result<Vec<ScenarioPlan>, ConfigError> {
    if let Some(option) = conflict(d) {
        return Err(ConfigError::ScenariosWith(option));
    }
    let text = env.read_file(path).map_err(|e| ScenarioError::Read {
        path: path.to_string(),
        reason: crate::sys::strerror(&e),
    })?;
    let specs = crate::scenario::parse(path, &text)?;
    let sources = specs
        .iter()
        .map(|spec| {
            spec.scripts
                .iter()
                .map(|s| Ok((resolve(d, (path, spec), &s.source, env)?, s.weight)))
                .collect::<Result<Vec<_>, ConfigError>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    apply_policies(d, path, &specs, &sources)?;
    let mut sources = sources.into_iter();
    let mut plans = Vec::with_capacity(specs.len());
    for spec in &specs {
        let stages = stage_plan(d, path, spec)?;
        let clients = match &stages {
            Some(StagePlan::Clients(p)) => p.clients(),
            _ => spec.clients.unwrap_or(1),
        };
        let threads = spec.threads.unwrap_or(1);
        if threads > clients {
            return Err(ScenarioError::BadValue {
                path: path.to_string(),
                line: spec.line_of("threads"),
                key: "threads".to_string(),
                problem: format!("{threads} threads for {clients} clients: at most one per client"),
            }
            .into());
        }
        let first = d.scripts.len();
        for (source, weight) in sources.next().expect("a source list per scenario") {
            add_script(d, source, weight)?;
        }
        plans.push(ScenarioPlan {
            name: spec.name.clone(),
            scripts: first..d.scripts.len(),
            clients,
            threads,
            rate: spec.rate,
            conninfo: spec.conninfo.clone(),
            stages,
        });
    }
    let clients: usize = plans.iter().map(|p| p.clients).sum();
    d.nclients = i64::try_from(clients).unwrap_or(i64::MAX);
    d.nthreads = plans.iter().map(|p| p.threads as i64).sum();
    d.benchmarking_option_set = true;
    Ok(plans)
}

/// A scenario's `rate_stages` or `client_stages` (`--rate-stages`' syntax and rules):
/// not both; they last as long as `-T` (which they set when it is not given, for every
/// scenario alike); the rate moves from its `rate` (or 0), the clients from its
/// `clients` (or 1), and it connects as many clients as the largest count.
fn stage_plan(
    d: &mut Draft,
    path: &str,
    spec: &ScenarioSpec,
) -> Result<Option<StagePlan>, ConfigError> {
    let bad = |key: &str, line: usize, problem: String| ScenarioError::BadValue {
        path: path.to_string(),
        line,
        key: key.to_string(),
        problem,
    };
    let (key, (text, line)) = match (&spec.rate_stages, &spec.client_stages) {
        (None, None) => return Ok(None),
        (Some(_), Some((_, line))) => {
            return Err(bad(
                "client_stages",
                *line,
                "a scenario has rate_stages or client_stages, not both".into(),
            )
            .into())
        }
        (Some(r), None) => ("rate_stages", r),
        (None, Some(c)) => ("client_stages", c),
    };
    let rate = key == "rate_stages";
    let parsed = if rate {
        Stages::parse(text)
    } else {
        Stages::parse_clients(text)
    };
    let stages = parsed.map_err(|e| bad(key, *line, e.to_string()))?;
    if d.nxacts > 0 {
        return Err(bad(key, *line, "stages last a time: give -T, not -t".into()).into());
    }
    let total = stages.total_s();
    if d.duration > 0 && d.duration != total {
        return Err(bad(
            key,
            *line,
            format!(
                "the stages last {total} s, the run (-T or another scenario's stages) {} s",
                d.duration
            ),
        )
        .into());
    }
    d.duration = total;
    let plan = if rate {
        StagePlan::Rate(RateProfile {
            start: spec.rate.unwrap_or(0.0),
            stages,
            threads: spec.threads.unwrap_or(1),
        })
    } else {
        StagePlan::Clients(ClientProfile {
            start: spec.clients.map_or(1.0, |c| c as f64),
            stages,
        })
    };
    let most = plan.stages().max_target().max(plan.start());
    if (rate && most <= 0.0) || (!rate && most < 1.0) {
        return Err(bad(key, *line, "no stage has any load".into()).into());
    }
    Ok(Some(plan))
}

/// A scenario's script as found: its text is made later, once the scenarios agreed on
/// the run's query mode (a workload's scripts depend on it).
enum Source {
    Script(pgbench_script::ast::Script),
    Workload(std::sync::Arc<dyn crate::workload::Workload>),
}

/// One script of a scenario: a builtin's name, a `--workload`'s, or a file's path.
fn resolve(
    d: &mut Draft,
    (path, spec): (&str, &ScenarioSpec),
    source: &str,
    env: &dyn Env,
) -> Result<Source, ConfigError> {
    if let Ok(found) = builtin::find(source) {
        d.builtin_used = true;
        return Ok(Source::Script(found.script()));
    }
    if let Ok(chosen) = crate::workload::find(source) {
        return Ok(Source::Workload(chosen.configure(&d.defines)?));
    }
    let text = env.read_file(source).map_err(|e| ScenarioError::BadValue {
        path: path.to_string(),
        line: spec.line_of("script"),
        key: "script".to_string(),
        problem: format!(
            "\"{source}\" is not a builtin script or a workload, and could not be read: {}",
            crate::sys::strerror(&e)
        ),
    })?;
    Ok(Source::Script(parser::parse_script(source, source, &text)?))
}

/// A workload in a scenario runs as its tool runs it, as under `--workload`: in its
/// query mode unless `-M` is given (sysbench's statements prepared), going on after an
/// error where its tool does, with no vacuum of pgbench's tables when no scenario runs
/// pgbench's scripts. The query mode is the whole run's, so scenarios that want
/// different ones are refused unless `-M` says which.
fn apply_policies(
    d: &mut Draft,
    path: &str,
    specs: &[ScenarioSpec],
    sources: &[Vec<(Source, i64)>],
) -> Result<(), ConfigError> {
    let wanted = |source: &Source| match source {
        Source::Workload(w) => w.policy().query_mode.unwrap_or(QueryMode::Simple),
        Source::Script(_) => QueryMode::Simple,
    };
    let mut modes = specs
        .iter()
        .zip(sources)
        .flat_map(|(spec, list)| list.iter().map(move |(source, _)| (spec, wanted(source))));
    if let (false, Some((first, mode))) = (d.query_mode_given, modes.next()) {
        if let Some((other, its)) = modes.find(|(_, m)| *m != mode) {
            return Err(ScenarioError::BadValue {
                path: path.to_string(),
                line: other.line_of("script"),
                key: "script".to_string(),
                problem: format!(
                    "scenario \"{}\" runs in {} mode and scenario \"{}\" in {} mode \
                     (a workload's, as its tool runs it): give -M to run them all in one",
                    first.name,
                    mode.name(),
                    other.name,
                    its.name()
                ),
            }
            .into());
        }
        d.query_mode = mode;
    }
    let workloads = || {
        sources.iter().flatten().filter_map(|(s, _)| match s {
            Source::Workload(w) => Some(w),
            Source::Script(_) => None,
        })
    };
    if workloads().any(|w| w.policy().continue_on_error) {
        d.continue_on_error = true;
    }
    let all_workloads = sources
        .iter()
        .flatten()
        .all(|(s, _)| matches!(s, Source::Workload(w) if w.policy().skip_vacuum));
    if all_workloads {
        d.no_vacuum = true;
    }
    Ok(())
}

/// Adds a scenario's script to the draft's scripts (a workload's, its scripts in its
/// mix, scaled by the scenario's weight for it).
fn add_script(d: &mut Draft, source: Source, weight: i64) -> Result<(), ConfigError> {
    match source {
        Source::Script(script) => push(d, script, weight),
        Source::Workload(w) => {
            let context = d.script_context();
            for s in w.scripts(context) {
                let script = parser::parse_script(&s.name, &s.description, &s.text)?;
                push(d, script, s.weight.saturating_mul(weight))?;
                let pushed = d.scripts.last_mut().expect("just pushed");
                pushed.untimed_sleeps = s.untimed_sleeps;
                pushed.prepare_on_connect = s.prepare_on_connect;
            }
            d.defines.extend(w.variables());
            Ok(())
        }
    }
}

fn push(
    d: &mut Draft,
    script: pgbench_script::ast::Script,
    weight: i64,
) -> Result<(), ConfigError> {
    d.add_script(script, weight)
}
