//! The plan of one step: the command line's plan with the swept value (or a
//! search's rate) put in, its own `-l` files and, unless the seed was given as a
//! number, a seed of its own, as a separate run would take.

use super::plan::{CapacityPlan, Parameter, What};
use crate::bench::plan::BenchPlan;
use pgbench_script::cnum::atof;

/// The plan of step `number` at `value` (a search's rate; `None`: its closed-loop
/// step, without `-R`).
pub fn step_plan(
    capacity: &CapacityPlan,
    base: &BenchPlan,
    value: Option<&str>,
    number: u32,
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
    if plan.worker.is_some() {
        let digests =
            crate::cli::option_table::worker_digests(&crate::cli::option_table::Planned {
                plan: &plan,
                capacity: Some(capacity),
            });
        if let Some(w) = plan.worker.as_mut() {
            w.option_digests = digests;
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::options::{interpret, Action, Env};

    struct NoEnv;

    impl Env for NoEnv {
        fn var(&self, _: &str) -> Option<String> {
            None
        }
        fn read_file(&self, _: &str) -> std::io::Result<String> {
            Ok("SELECT 1;\n".into())
        }
        fn os_user(&self) -> Option<String> {
            Some("u".into())
        }
        fn ensure_open_files(&self, _: u64) -> Result<(), crate::sys::LimitError> {
            Ok(())
        }
    }

    fn plan(args: &[&str]) -> (BenchPlan, CapacityPlan) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match interpret("pgbench", &args, &NoEnv).outcome.unwrap() {
            Action::Sweep { base, capacity, .. } => (*base, capacity),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_clients_step_takes_j_as_given_or_its_clients_and_a_step_its_own_log_and_seed() {
        let (base, c) = plan(&[
            "-j",
            "4",
            "-l",
            "--sweep=clients=2,8",
            "-T",
            "5",
            "-f",
            "a.sql",
        ]);
        assert_eq!(base.settings.threads, 1, "pgbench caps -j at -c 1");
        let two = step_plan(&c, &base, Some("2"), 1);
        assert_eq!((two.settings.clients, two.settings.threads), (2, 2));
        let eight = step_plan(&c, &base, Some("8"), 2);
        assert_eq!((eight.settings.clients, eight.settings.threads), (8, 4));
        assert_eq!(eight.log.unwrap().prefix, "pgbench_log.step2");
        let (seeded, c) = plan(&[
            "--random-seed=5",
            "--sweep=rate=10,20",
            "-T",
            "5",
            "-f",
            "a.sql",
        ]);
        let step = step_plan(&c, &seeded, Some("20"), 2);
        assert_eq!((step.random_seed, step.settings.rate), (5, Some(20.0)));
    }

    #[test]
    fn a_variable_step_replaces_its_definition_and_a_search_sets_or_clears_the_rate() {
        let (base, c) = plan(&["-D", "x=1", "-D", "y=2", "--sweep=x=5,6", "-f", "a.sql"]);
        let step = step_plan(&c, &base, Some("6"), 2);
        assert_eq!(
            step.defines,
            vec![("x".into(), "6".into()), ("y".into(), "2".into())]
        );
        let (base, c) = plan(&[
            "-R",
            "50",
            "--find-max-rate=p99<=5ms",
            "-T",
            "5",
            "-f",
            "a.sql",
        ]);
        assert_eq!(step_plan(&c, &base, None, 1).settings.rate, None);
        assert_eq!(
            step_plan(&c, &base, Some("948.7"), 2).settings.rate,
            Some(948.7)
        );
        assert_eq!(c.option_value(), "p99<=5ms");
    }
}
