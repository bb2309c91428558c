//! Sweeps and capacity searches: many runs of one plan in one process, each a step
//! that changes one thing.
//!
//! - `--sweep=NAME=V1,V2,...` runs the plan at each value of `-c` (`clients`; `-j` as
//!   given, or `-c` when fewer), `-R` (`rate`) or a script variable (`-D NAME`),
//!   `--repeat` times in rounds;
//! - `--find-max-rate=TARGET` runs it without `-R`, then at rates from a ladder and a
//!   bisection ([`search`]) to the highest rate whose measured part meets the target
//!   ([`target`]).
//!
//! ```text
//! cli ─ run: metrics endpoint, signals (SweepStop), a throwaway server if asked
//!     ─ runner: for each step: its plan (CapacityPlan::step_plan), bench::run with an
//!       Output of its own and a RunStop of its own, its line (pgbench_results::capacity
//!       ::table) on stdout, what comes next on stderr (progress)
//!     ─ report: the closing lines, the representative step's report, the results
//!       file with every step (export)
//! ```
//!
//! Every step is a whole run: its own connections, `--warmup`, `-T` or `-t`, vacuum,
//! results. Nothing here changes what a run does; a plan without these options never
//! comes here.

mod export;
pub mod options;
pub mod progress;
mod runner;
pub mod search;
mod stop;
pub mod target;

pub use options::{CapacityDraft, CapacityError, RunOptions};
pub use runner::run;

use crate::bench::plan::BenchPlan;
use pgbench_results::capacity::{Capacity, Kind, SearchSpec};
use pgbench_script::cnum::atof;

/// The exit status of a search whose target nothing met, or whose rate found is below
/// `--fail-if-below`.
pub const EXIT_BELOW_TARGET: i32 = 3;

/// What a sweep varies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parameter {
    /// `-c` (and `-j`, as given or `-c` when fewer).
    Clients,
    /// `-R`.
    Rate,
    /// A script variable (`-D NAME=VALUE`).
    Variable(String),
}

impl Parameter {
    /// As `--sweep` names it.
    pub fn name(&self) -> &str {
        match self {
            Parameter::Clients => "clients",
            Parameter::Rate => "rate",
            Parameter::Variable(name) => name,
        }
    }
}

/// A sweep or a search, as asked.
#[derive(Debug, Clone, PartialEq)]
pub enum What {
    Sweep {
        parameter: Parameter,
        values: Vec<String>,
        repeat: u32,
    },
    Search {
        target: target::Target,
        /// As given.
        text: String,
        /// A fraction.
        tolerance: f64,
        max_steps: u32,
        fail_if_below: Option<f64>,
    },
}

/// `--sweep` or `--find-max-rate`, with what the steps' plans need of the command
/// line beyond the plan itself.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityPlan {
    pub what: What,
    /// `-j` as given (1 when not): a clients sweep's step runs `min(-j, -c)` threads.
    pub jobs: usize,
    /// `--random-seed` (or `PGBENCH_RANDOM_SEED`) was a number: every step takes it;
    /// otherwise each step takes a seed of its own, as separate runs would.
    pub seed_given: bool,
}

impl CapacityPlan {
    /// The steps a sweep plans (a search's most).
    pub fn planned_steps(&self) -> usize {
        match &self.what {
            What::Sweep { values, repeat, .. } => values.len() * *repeat as usize,
            What::Search { max_steps, .. } => *max_steps as usize,
        }
    }

    /// The most clients any step runs.
    pub fn max_clients(&self, base: usize) -> usize {
        match &self.what {
            What::Sweep {
                parameter: Parameter::Clients,
                values,
                ..
            } => values
                .iter()
                .filter_map(|v| v.parse().ok())
                .max()
                .unwrap_or(base),
            _ => base,
        }
    }

    /// The `--sweep` or `--find-max-rate` value a results file's `options` records.
    pub fn option_value(&self) -> String {
        match &self.what {
            What::Sweep {
                parameter, values, ..
            } => format!("{}={}", parameter.name(), values.join(",")),
            What::Search { text, .. } => text.clone(),
        }
    }

    /// What the results file records of it, before any step has run.
    pub fn record(&self) -> Capacity {
        let (kind, parameter, values, repeat, search) = match &self.what {
            What::Sweep {
                parameter,
                values,
                repeat,
            } => (Kind::Sweep, parameter.name(), values.clone(), *repeat, None),
            What::Search {
                text,
                tolerance,
                max_steps,
                fail_if_below,
                ..
            } => {
                let spec = SearchSpec {
                    target: text.clone(),
                    tolerance: *tolerance,
                    max_steps: *max_steps,
                    fail_if_below: *fail_if_below,
                };
                (Kind::Search, "rate", Vec::new(), 1, Some(spec))
            }
        };
        Capacity {
            kind,
            parameter: parameter.to_string(),
            values,
            repeat,
            search,
            found: None,
            representative: None,
            stopped: None,
        }
    }

    /// The plan of step `number` at `value` (a search's rate; `None`: its closed-loop
    /// step, without `-R`).
    pub fn step_plan(&self, base: &BenchPlan, value: Option<&str>, number: u32) -> BenchPlan {
        let mut plan = base.clone();
        match (&self.what, value) {
            (What::Sweep { parameter, .. }, Some(v)) => match parameter {
                Parameter::Clients => {
                    let clients = v.parse().unwrap_or(1);
                    plan.settings.clients = clients;
                    plan.settings.threads = self.jobs.min(clients);
                }
                Parameter::Rate => plan.settings.rate = Some(atof(v)),
                Parameter::Variable(name) => {
                    match plan.defines.iter_mut().find(|(n, _)| n == name) {
                        Some(d) => d.1 = v.to_string(),
                        None => plan.defines.push((name.clone(), v.to_string())),
                    }
                }
            },
            (What::Search { .. }, rate) => plan.settings.rate = rate.map(atof),
            (What::Sweep { .. }, None) => {}
        }
        // Each step's -l files are its own.
        if let Some(log) = plan.log.as_mut() {
            log.prefix = format!("{}.step{number}", log.prefix);
        }
        if !self.seed_given {
            plan.random_seed = crate::sys::time_seed();
        }
        if plan.worker.is_some() {
            let digests = crate::cli::option_table::worker_digests(&plan);
            if let Some(w) = plan.worker.as_mut() {
                w.option_digests = digests;
            }
        }
        plan
    }
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

    fn plan(args: &[&str]) -> BenchPlan {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match interpret("pgbench", &args, &NoEnv).outcome.unwrap() {
            Action::Bench { plan, .. } => *plan,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_clients_step_takes_j_as_given_or_its_clients_and_a_step_its_own_log_and_seed() {
        let base = plan(&[
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
        let c = base.capacity.clone().unwrap();
        let two = c.step_plan(&base, Some("2"), 1);
        assert_eq!((two.settings.clients, two.settings.threads), (2, 2));
        let eight = c.step_plan(&base, Some("8"), 2);
        assert_eq!((eight.settings.clients, eight.settings.threads), (8, 4));
        assert_eq!(eight.log.unwrap().prefix, "pgbench_log.step2");
        let seeded = plan(&[
            "--random-seed=5",
            "--sweep=rate=10,20",
            "-T",
            "5",
            "-f",
            "a.sql",
        ]);
        let c = seeded.capacity.clone().unwrap();
        let step = c.step_plan(&seeded, Some("20"), 2);
        assert_eq!((step.random_seed, step.settings.rate), (5, Some(20.0)));
    }

    #[test]
    fn a_variable_step_replaces_its_definition_and_a_search_sets_or_clears_the_rate() {
        let base = plan(&["-D", "x=1", "-D", "y=2", "--sweep=x=5,6", "-f", "a.sql"]);
        let c = base.capacity.clone().unwrap();
        let step = c.step_plan(&base, Some("6"), 2);
        assert_eq!(
            step.defines,
            vec![("x".into(), "6".into()), ("y".into(), "2".into())]
        );
        let base = plan(&[
            "-R",
            "50",
            "--find-max-rate=p99<=5ms",
            "-T",
            "5",
            "-f",
            "a.sql",
        ]);
        let c = base.capacity.clone().unwrap();
        assert_eq!(c.step_plan(&base, None, 1).settings.rate, None);
        assert_eq!(
            c.step_plan(&base, Some("948.7"), 2).settings.rate,
            Some(948.7)
        );
        assert_eq!(c.option_value(), "p99<=5ms");
    }
}
