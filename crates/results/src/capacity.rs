//! A sweep (`--sweep=NAME=V1,V2,...`) or a capacity search (`--find-max-rate=TARGET`)
//! in one results file: every step's run whole, as a results file of its own
//! ([`Step::file`]), and what was varied, how, and what came of it ([`Capacity`]). The
//! file's top level holds its representative step's figures (the sweep's peak, the
//! rate the search found; else its first step), so that a reader that knows nothing
//! of steps reads one run.
//!
//! - [`curve`]: the steps as a curve over the swept value: each value's mean and 95 %
//!   interval over its repeats, the peak and the knee;
//! - [`table`]: the line a step prints, and the lines before and after them, as the
//!   run printed them and `pgbench-report show` prints them again;
//! - [`compare`]: two sweeps point by point;
//! - [`merge`]: the workers' sweeps of one `--worker` run, step by step.

pub mod compare;
pub mod curve;
pub mod merge;
pub mod table;
#[cfg(test)]
mod tests;

use crate::compare::{figures::SWEEP_FIGURES, spec::SweepSpec, FigureSpec};
pub use crate::document::steps::{
    Capacity, Found, Kind, Miss, Role, SearchSpec, Step, Verdict, CLOSED_LOOP,
};
use crate::document::ResultsFile;

/// A step's figures as its line, the curves and the charts show them: every figure
/// a sweep shows ([`sweep_figures`]) with the step's value of it, in the columns'
/// order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Figures {
    pub values: Vec<(&'static FigureSpec, Option<f64>)>,
    /// The codes of its validity warnings.
    pub warnings: Vec<String>,
}

impl Figures {
    /// The value of the figure named `name` (`tps`, `p99`, a workload's), if the
    /// step has it.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values
            .iter()
            .find(|(f, _)| f.name == name)
            .and_then(|(_, v)| *v)
    }

    /// Throughput: what the peak, the knee and a search's closed-loop rate are read
    /// from.
    pub fn tps(&self) -> Option<f64> {
        self.get("tps")
    }
}

/// Every figure a sweep shows, in its columns' order: the summary's
/// ([`SWEEP_FIGURES`]), then each workload's
/// (`crate::workload::registry::sweep_figures`).
pub fn sweep_figures() -> impl Iterator<Item = (&'static FigureSpec, &'static SweepSpec)> {
    SWEEP_FIGURES
        .iter()
        .copied()
        .chain(crate::workload::registry::sweep_figures())
        .filter_map(|f| Some((f, f.sweep.as_ref()?)))
}

impl Step {
    /// The swept value as a number, when it is one (a variable may be text).
    pub fn x(&self) -> Option<f64> {
        self.value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
    }

    pub fn figures(&self) -> Figures {
        figures(&self.file)
    }

    /// It ran to its end with every client: not interrupted, no client aborted. A
    /// peak or a knee is read only from such steps (a step cut short or missing
    /// clients measured something else than its value asked for).
    pub fn is_whole(&self) -> bool {
        self.file.run.as_ref().is_some_and(|r| {
            r.aborted_clients == 0 && !matches!(r.ended, Some(crate::Ended::Interrupted { .. }))
        })
    }
}

/// The figures of a run's document.
pub fn figures(doc: &ResultsFile) -> Figures {
    Figures {
        values: sweep_figures()
            .map(|(f, sweep)| {
                let v = match sweep.of_file {
                    Some(of_file) => of_file(doc),
                    None => (f.value)(&doc.summary),
                };
                (f, v)
            })
            .collect(),
        warnings: doc.warnings.iter().map(|w| w.code.clone()).collect(),
    }
}

impl Capacity {
    /// How the table and the charts name the swept value.
    pub fn value_label(&self) -> String {
        match (self.kind, self.parameter.as_str()) {
            (Kind::Search, _) | (_, "rate") => "-R".to_string(),
            (_, "clients") => "clients".to_string(),
            (_, name) => format!(":{name}"),
        }
    }
}

/// The step a sweep's top level holds: the first whole step run at its peak (the
/// value of the highest mean tps of its whole steps, [`Step::is_whole`]).
pub fn peak_step(capacity: &Capacity, steps: &[Step]) -> Option<u32> {
    let c = curve::curve(capacity, steps);
    let at_peak = &c.points[c.peak?].steps;
    steps
        .iter()
        .find(|s| at_peak.contains(&s.step) && s.is_whole())
        .map(|s| s.step)
}

impl ResultsFile {
    /// The step whose figures a sweep or search's top level holds, if it has steps.
    pub fn representative_step(&self) -> Option<&Step> {
        let n = self.capacity.as_ref()?.representative?;
        self.steps.iter().find(|s| s.step == n)
    }
}
