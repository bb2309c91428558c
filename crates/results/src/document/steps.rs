//! A sweep's or a capacity search's steps as a results file holds them: every step's
//! run whole, as a results file of its own ([`Step::file`]), and what was varied, how,
//! and what came of it ([`Capacity`]). Plain data; what is made of it is
//! [`crate::capacity`]'s.

use super::ResultsFile;
use serde::{Deserialize, Serialize};

/// A sweep, or a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `--sweep`: the same run at each value given.
    Sweep,
    /// `--find-max-rate`: the highest `-R` whose measured part meets a target.
    Search,
}

/// What a file of steps varied, how, and what it found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub kind: Kind,
    /// What varies: `clients` (`-c`), `rate` (`-R`) or a script variable's name (`-D`).
    pub parameter: String,
    /// A sweep's values as given, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// `--repeat`: how many times each value runs (in rounds: every value once, then
    /// again).
    pub repeat: u32,
    /// A search's target and bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchSpec>,
    /// A search's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<Found>,
    /// The step (its number) whose figures the file's top level holds: the sweep's
    /// peak, the rate the search found; `None` when the search found none (the top
    /// level then holds the first step's).
    pub representative: Option<u32>,
    /// Why the steps ended before the last one planned (a signal, an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// `--find-max-rate` and its companions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchSpec {
    /// The target as given, e.g. `p99<=20ms,failed<=0.1%`.
    pub target: String,
    /// `--search-tolerance`: the bracket the search narrows to, as a fraction (0.05).
    pub tolerance: f64,
    /// `--search-steps`: the most steps it runs, the closed-loop one included.
    pub max_steps: u32,
    /// `--fail-if-below`, transactions per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_if_below: Option<f64>,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// tps of the closed-loop step (no `-R`): the most the clients did.
    pub closed_loop_tps: Option<f64>,
    /// The highest rate whose step met the target, and that step.
    pub rate: Option<f64>,
    pub step: Option<u32>,
    /// The lowest rate above it whose step missed, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_miss: Option<Miss>,
    /// The rate found and the first miss are within `--search-tolerance` of each
    /// other (false when the steps ran out first, or no rate missed).
    pub within_tolerance: bool,
    /// The rate found met the target in two steps (its own and a confirmation).
    #[serde(default)]
    pub confirmed: bool,
}

/// A step that missed the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Miss {
    pub rate: f64,
    pub step: u32,
    pub why: String,
}

/// What a search's step was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Without `-R`: the most the clients do.
    ClosedLoop,
    /// A rung of the ladder of rates from the closed-loop maximum.
    Ladder,
    /// Between the highest rate that met the target and the lowest that missed.
    Bisection,
    /// The rate about to be found, run once more: it is found only if it meets again.
    Confirmation,
}

/// A search's step against the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub met: bool,
    /// Each part of the target it missed (`p99 31.2 ms > 20 ms`); empty when met.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

/// One step: the run at one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// 1, 2, ... in the order run.
    pub step: u32,
    /// The value it ran at, as given (`4`; a rate as `-R` took it; `closed loop` for a
    /// search's first step).
    pub value: String,
    /// Which round of `--repeat` (1 without it).
    pub round: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The step's run, as its own results file would hold it.
    pub file: ResultsFile,
}

/// What `value` a search's closed-loop step has.
pub const CLOSED_LOOP: &str = "closed loop";
