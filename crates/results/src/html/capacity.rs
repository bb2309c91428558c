//! The page's part for sweeps and capacity searches: a chart of each figure a sweep
//! draws ([`crate::capacity::sweep_figures`] with a chart: throughput, p99, a
//! workload's headline figure) against the swept value, one line a file, with the 95 % interval shaded
//! where a value repeats, and vertical marks: a sweep's peak and knee, a search's rate
//! found (its knee and peak are the curve's, [`crate::capacity::curve`]); under the
//! charts, every step's line as the run printed it. The charts over time further down
//! show each file's top level: its representative step.

use super::esc;
use crate::capacity::curve::{curve, Stat};
use crate::capacity::{sweep_figures, table, Kind};
use crate::compare::spec::{FigureSpec, Shown, SweepSpec};
use crate::document::ResultsFile;
use serde::ser::SerializeMap;
use serde::Serialize;
use std::fmt::Write;

/// A figure's means and interval bounds, one entry a point.
#[derive(Serialize, Default)]
struct Line {
    mean: Vec<Option<f64>>,
    low: Vec<Option<f64>>,
    high: Vec<Option<f64>>,
}

impl Line {
    fn of(stats: impl Iterator<Item = Option<Stat>>) -> Line {
        let mut l = Line::default();
        for s in stats {
            l.mean.push(s.map(|s| s.mean));
            // tps, latencies and workloads' rates are never below 0, but a symmetric interval
            // about a small mean of few repeats reaches there: the band stops at 0.
            l.low.push(s.and_then(|s| s.low).map(|v| v.max(0.0)));
            l.high.push(s.and_then(|s| s.high));
        }
        l
    }

    fn present(&self) -> bool {
        self.mean.iter().any(Option::is_some)
    }
}

/// One file's curve for the charts.
#[derive(Serialize)]
pub struct CurveChart {
    label: String,
    /// The file's place among the page's files (its colour).
    run: usize,
    search: bool,
    /// The x axis's name: `clients`, `-R`, `:name`.
    axis: String,
    x: Vec<f64>,
    /// The values as given (the tick labels when some value is not a number).
    values: Vec<String>,
    numeric: bool,
    /// Each drawn figure's line under its name (`tps`, `p99`, ...), in the charts'
    /// order: always those shown always, a figure shown when measured where the
    /// file has it.
    #[serde(flatten)]
    lines: Lines,
    /// Where the marks go, on the x axis.
    peak: Option<f64>,
    knee: Option<f64>,
    knee_scaling: bool,
    found: Option<f64>,
}

/// A file's lines by figure name, as a map in the charts' order.
struct Lines(Vec<(&'static str, Line)>);

impl Serialize for Lines {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, line) in &self.0 {
            map.serialize_entry(name, line)?;
        }
        map.end()
    }
}

/// The figures drawn against the swept value, in the charts' order.
fn charted() -> impl Iterator<Item = (&'static FigureSpec, &'static SweepSpec, &'static str)> {
    sweep_figures().filter_map(|(f, s)| Some((f, s, s.chart?)))
}

/// Why files' curves cannot be drawn on one page.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CurveError {
    #[error(
        "{a} is {what_a}, {b} {what_b}: their curves have no axis in common; draw each on a page of its own"
    )]
    Different {
        a: String,
        what_a: String,
        b: String,
        what_b: String,
    },
}

/// `a sweep of clients`, `a search for the highest -R`.
fn what(c: &crate::capacity::Capacity) -> String {
    match c.kind {
        Kind::Sweep => format!("a sweep of {}", c.parameter),
        Kind::Search => "a search for the highest -R".to_string(),
    }
}

/// Whether the files' curves share their axis: every file with steps a sweep of the
/// same parameter, or every one a search, as `compare` requires. A clients sweep, a
/// rate sweep and a search were drawn on one "clients (log scale)" axis (#43).
pub fn check(files: &[(String, ResultsFile)]) -> Result<(), CurveError> {
    let mut with = files
        .iter()
        .filter_map(|(label, d)| Some((label, d.capacity.as_ref()?)));
    let Some((a, first)) = with.next() else {
        return Ok(());
    };
    match with.find(|(_, c)| c.kind != first.kind || c.parameter != first.parameter) {
        Some((b, c)) => Err(CurveError::Different {
            a: a.clone(),
            what_a: what(first),
            b: b.clone(),
            what_b: what(c),
        }),
        None => Ok(()),
    }
}

/// The curves of the files that have steps.
pub fn curves(files: &[(String, ResultsFile)]) -> Vec<CurveChart> {
    files
        .iter()
        .enumerate()
        .filter_map(|(run, (label, doc))| {
            let c = doc.capacity.as_ref()?;
            let k = curve(c, &doc.steps);
            let at = |i: Option<usize>| i.map(|i| k.points[i].x);
            let lines = charted()
                .map(|(f, sweep, _)| (f, sweep, Line::of(k.points.iter().map(|p| p.stat(f.name)))))
                .filter(|(_, sweep, line)| sweep.shown == Shown::Always || line.present())
                .map(|(f, _, line)| (f.name, line))
                .collect();
            let found = c.found.as_ref().and_then(|f| f.rate);
            Some(CurveChart {
                label: label.clone(),
                run,
                search: c.kind == Kind::Search,
                axis: c.value_label(),
                x: k.points.iter().map(|p| p.x).collect(),
                values: k.points.iter().map(|p| p.label.clone()).collect(),
                numeric: k.numeric,
                lines: Lines(lines),
                peak: if c.kind == Kind::Sweep {
                    at(k.peak)
                } else {
                    None
                },
                knee: if c.kind == Kind::Sweep {
                    at(k.knee.map(|k| k.index))
                } else {
                    None
                },
                knee_scaling: k.knee.is_some_and(|k| k.still_scaling),
                found,
            })
        })
        .collect()
}

/// The section's HTML: its charts' places and the steps' lines of each file.
pub fn section(files: &[(String, ResultsFile)], out: &mut String) {
    let with: Vec<&(String, ResultsFile)> =
        files.iter().filter(|(_, d)| d.capacity.is_some()).collect();
    if with.is_empty() {
        return;
    }
    let search = with
        .iter()
        .all(|(_, d)| d.capacity.as_ref().is_some_and(|c| c.kind == Kind::Search));
    // A chart of a figure shown when measured only where some step has it.
    let measured = |name: &str| {
        with.iter()
            .any(|(_, d)| d.steps.iter().any(|s| s.figures().get(name).is_some()))
    };
    out.push_str(if search {
        "<h2>Capacity search</h2><p class=\"note\">Each step's throughput and 99th percentile \
         latency (from the schedule) against its -R; the marked line is the rate found, the \
         highest whose step met the target.</p>"
    } else {
        "<h2>Scaling</h2><p class=\"note\">Each value's throughput and 99th percentile latency; \
         where a value was repeated, its mean, with the 95% interval shaded. Marked: the peak \
         (highest mean tps) and the knee, the last value whose tps per unit is still at \
         least 80% of the first value's (at the last value when the curve is still scaling \
         there).</p>"
    });
    // page.js draws a chart in each such place: the id names the figure (its key in
    // the curves' data), `data-y` its axis.
    for (f, sweep, axis) in charted() {
        if sweep.shown == Shown::Always || measured(f.name) {
            let _ = writeln!(
                out,
                "<div class=\"chart\" id=\"chart-sweep-{}\" data-y=\"{}\"></div>",
                f.name,
                esc(axis)
            );
        }
    }
    for (label, doc) in with {
        let Some(c) = &doc.capacity else { continue };
        let _ = writeln!(
            out,
            "<p class=\"note\"><b>{}</b>: the charts over time below show its step {}.</p>\
             <pre class=\"steps\">{}</pre>",
            esc(label),
            doc.representative_step()
                .map_or("1".to_string(), |s| s.step.to_string()),
            esc(&table::render(c, &doc.steps))
        );
    }
}
