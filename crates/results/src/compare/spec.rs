//! A figure of a run's summary as a row of a table ([`FigureSpec`]): its name, label,
//! number format, better direction and how it is read. The summary's own tables are
//! in [`super::figures`]; a workload's results own theirs (`crate::workload`). A
//! figure a sweep shows says how ([`SweepSpec`]): the sweep's table, curves, charts
//! and point-by-point comparison iterate the same rows (`crate::capacity::Figures`).
//! Data only, so that a workload's table needs nothing else of `compare`.

use crate::document::ResultsFile;
use crate::summary::Summary;
use crate::timeline::Point;
use pgbench_script::cnum::fmt_f;
use std::fmt;

/// One figure of a run's summary, and all that `compare` needs of it: a row of a
/// table ([`super::figures::FIGURES`], or a workload's), not a case of a `match`.
pub struct FigureSpec {
    /// The name `--fail-if` uses (unique among the tables: figures compare by it).
    pub name: &'static str,
    /// The row's name in the table.
    pub label: &'static str,
    /// How its values print.
    pub format: Format,
    pub better: Better,
    /// A run's figure, from its summary.
    pub value: fn(&Summary) -> Option<f64>,
    /// One second's figure and weight, from a timeline point, where the timeline has
    /// the figure (single-run intervals); `None`: no interval for single runs.
    pub per_second: Option<PerSecond>,
    /// How a sweep or a search shows it, if it does (`crate::capacity`).
    pub sweep: Option<SweepSpec>,
}

/// A figure as a sweep or a search shows it: a column of its step lines, and maybe
/// a chart against the swept value, a row of its point-by-point comparison and a
/// word in a search's `found:` line.
#[derive(Clone, Copy)]
pub struct SweepSpec {
    /// The column's header in the step lines.
    pub header: &'static str,
    /// The column's width, so that the lines stay aligned as they print one by one.
    pub width: usize,
    pub cell: Cell,
    pub shown: Shown,
    /// A step's figure from its whole file, where its summary alone may lack it (a
    /// latency percentile is read from the histogram then); `None`: [`FigureSpec::value`]
    /// of its summary.
    pub of_file: Option<fn(&ResultsFile) -> Option<f64>>,
    /// The y axis's title of its chart over the swept value (the chart's id and its
    /// data's key are the figure's name); `None`: not drawn.
    pub chart: Option<&'static str>,
    /// Its name in the `figure` column of a sweep comparison; `None`: not compared
    /// point by point.
    pub compared: Option<&'static str>,
    /// Named after the target's figures in a search's `found:` line (a workload's
    /// own headline figure).
    pub headline: bool,
}

/// How a sweep's column prints a value, `-` for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// With this many decimals.
    Number(usize),
    /// A share, with 3 decimals and `%`.
    Percent,
}

impl Cell {
    pub fn show(self, v: Option<f64>) -> String {
        match (self, v) {
            (_, None) => "-".to_string(),
            (Cell::Number(prec), Some(v)) => fmt_f(v, prec),
            (Cell::Percent, Some(v)) => format!("{}%", fmt_f(v, 3)),
        }
    }
}

/// When a sweep shows a figure's column and its chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Always (`-` where a step lacks it).
    Always,
    /// When the first step has it (its column; its chart when any step has it): a
    /// workload's figure, or one an option gives (`-L`'s late share).
    WhenMeasured,
}

/// A second's figure and its weight (the second's transactions, or 1), from its
/// timeline point.
pub type PerSecond = fn(&Point) -> Option<(f64, f64)>;

impl PartialEq for FigureSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl fmt::Debug for FigureSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Which way a figure's change is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
    /// Neither (where the backends waited, say): a change is only higher or lower.
    Neither,
}

/// How a figure's values print, in the table and in the gates' messages; each
/// figure names its own ([`super::Figure::format`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Real-valued (a rate, a latency, a share): 3 decimals, 1 from 1000 up.
    Real,
    /// A count (checkpoints, retries) or a figure a workload's tool keeps whole (a
    /// rate per minute, say): no decimals. A group's mean of counts need not be whole (1 checkpoint in
    /// 3 runs): that one prints as [`Format::Real`], so it does not read as a count.
    Whole,
}

impl Format {
    /// A value as the table shows it, `-` for none.
    pub fn show(self, v: Option<f64>) -> String {
        match (self, v) {
            (_, None) => "-".to_string(),
            (Format::Whole, Some(v)) if v.fract() == 0.0 => fmt_f(v, 0),
            (_, Some(v)) if v.abs() >= 1000.0 => fmt_f(v, 1),
            (_, Some(v)) => fmt_f(v, 3),
        }
    }
}

/// A second's weight: its transactions.
pub fn second_weight(p: &Point) -> f64 {
    p.transactions.map_or(p.tps * p.length_s, |t| t as f64)
}
