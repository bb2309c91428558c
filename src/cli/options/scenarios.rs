//! `--scenarios=FILE` on the command line: the file read ([`crate::scenario`]), the
//! options it replaces refused, and each scenario's scripts resolved (a builtin, a
//! `--workload` name, a file) into the draft's scripts, with the engine's
//! [`ScenarioPlan`]s over them. The clients and threads of the run are the sums of the
//! scenarios'; `-T`/`-t`, `--warmup`, `--random-seed`, `-M`, `-D` and the connection
//! options are the whole run's (a scenario's `conninfo` goes over the last).

use super::draft::Draft;
use super::error::ConfigError;
use super::Env;
use crate::bench::scenario::ScenarioPlan;
use crate::scenario::{ScenarioError, ScenarioSpec};
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
    let mut plans = Vec::with_capacity(specs.len());
    for spec in &specs {
        if let Some((_, line)) = spec.rate_stages.as_ref().or(spec.client_stages.as_ref()) {
            let key = if spec.rate_stages.is_some() {
                "rate_stages"
            } else {
                "client_stages"
            };
            return Err(ScenarioError::BadValue {
                path: path.to_string(),
                line: *line,
                key: key.to_string(),
                problem: "stages in a scenario are not supported by this build".to_string(),
            }
            .into());
        }
        let first = d.scripts.len();
        for script in &spec.scripts {
            add_script(d, (path, spec), &script.source, script.weight, env)?;
        }
        let threads = spec.threads.unwrap_or(1);
        plans.push(ScenarioPlan {
            name: spec.name.clone(),
            scripts: first..d.scripts.len(),
            clients: spec.clients,
            threads,
            rate: spec.rate,
            conninfo: spec.conninfo.clone(),
        });
    }
    let clients: usize = plans.iter().map(|p| p.clients).sum();
    d.nclients = i64::try_from(clients).unwrap_or(i64::MAX);
    d.nthreads = plans.iter().map(|p| p.threads as i64).sum();
    d.benchmarking_option_set = true;
    Ok(plans)
}

/// One script of a scenario: a builtin's name, a `--workload`'s, or a file's path.
fn add_script(
    d: &mut Draft,
    (path, spec): (&str, &ScenarioSpec),
    source: &str,
    weight: i64,
    env: &dyn Env,
) -> Result<(), ConfigError> {
    let bad = |problem: String| ScenarioError::BadValue {
        path: path.to_string(),
        line: spec.line_of("script"),
        key: "script".to_string(),
        problem,
    };
    if let Ok(found) = builtin::find(source) {
        d.builtin_used = true;
        return push(d, found.script(), weight);
    }
    if let Ok(chosen) = crate::workload::find(source) {
        let w = chosen.configure(&d.defines)?;
        let context = super::checks::script_context(d);
        for s in w.scripts(context) {
            let script = parser::parse_script(&s.name, &s.description, &s.text)?;
            // The workload's own mix, scaled by the scenario's weight for it.
            push(d, script, s.weight.saturating_mul(weight))?;
            d.scripts.last_mut().expect("just pushed").untimed_sleeps = s.untimed_sleeps;
        }
        d.defines.extend(w.variables());
        return Ok(());
    }
    let text = env.read_file(source).map_err(|e| {
        bad(format!(
            "\"{source}\" is not a builtin script or a workload, and could not be read: {}",
            crate::sys::strerror(&e)
        ))
    })?;
    push(d, parser::parse_script(source, source, &text)?, weight)
}

fn push(
    d: &mut Draft,
    script: pgbench_script::ast::Script,
    weight: i64,
) -> Result<(), ConfigError> {
    d.add_script(script, weight)
}
