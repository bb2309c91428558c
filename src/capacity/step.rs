//! The plan of one step: the command line's plan with the swept value (or a
//! search's rate) put in, its own `-l` files and, unless the seed was given as a
//! number, a seed of its own, as a separate run would take.

use super::plan::{CapacityPlan, Parameter, What};
use crate::bench::plan::BenchPlan;
use pgbench_script::cnum::atof;

/// The plan of step `number` at `value` (a search's rate; `None`: its closed-loop
/// step, without `-R`); `worker_digests`: the command line's option digests of a plan
/// (`--worker` compares them between workers).
pub fn step_plan(
    capacity: &CapacityPlan,
    base: &BenchPlan,
    value: Option<&str>,
    number: u32,
    worker_digests: &dyn Fn(&BenchPlan) -> String,
) -> BenchPlan {
    let mut plan = base.clone();
    match (&capacity.what, value) {
        (What::Sweep { parameter, .. }, Some(v)) => match parameter {
            Parameter::Clients => {
                let clients = v.parse().unwrap_or(1);
                plan.settings.clients = clients;
                plan.settings.threads = capacity.jobs.min(clients);
            }
            Parameter::Rate => plan.settings.rate = Some(atof(v)),
            Parameter::Variable(name) => match plan.defines.iter_mut().find(|(n, _)| n == name) {
                Some(d) => d.1 = v.to_string(),
                None => plan.defines.push((name.clone(), v.to_string())),
            },
        },
        (What::Search { .. }, rate) => plan.settings.rate = rate.map(atof),
        (What::Sweep { .. }, None) => {}
    }
    // Each step's -l files are its own.
    if let Some(log) = plan.log.as_mut() {
        log.prefix = format!("{}.step{number}", log.prefix);
    }
    if !capacity.seed_given {
        plan.random_seed = crate::sys::time_seed();
    }
    // A step's figures (its line, the curve) come from both.
    plan.keep = plan.keep.with_figures();
    plan.refresh_worker_digests(worker_digests);
    plan
}
