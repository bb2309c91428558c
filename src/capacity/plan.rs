//! A sweep or a search as the command line asks for it ([`CapacityPlan`]): what
//! varies over which values, or the target a rate must meet; what the results file
//! records of it before any step runs. Pure data: [`super::step`] makes each step's
//! plan from it.

use super::target::Target;
use pgbench_results::capacity::{Capacity, Kind, SearchSpec};

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
        target: Target,
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
}
