//! `pgbench-report compare` of sweeps: point by point. At each value every file ran,
//! the files' steps at that value are compared as `compare` compares runs (one step a
//! side: batch means over its seconds; repeats of 3 or more a side: Welch's t over
//! them), for the figures a sweep compares (tps, p99, the failed share, a workload's
//! headline figure: [`super::sweep_figures`]); `--fail-if` gates are
//! checked at every point. Values some file did not run are named, not compared, and
//! leave a gate undecided there.

use super::{Capacity, Step};
use crate::compare::{self, CompareError, Comparison, Gate, GateFinding, Side};
use crate::document::ResultsFile;
use crate::report::fmt_f;
use std::fmt::Write;

/// Why sweeps cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweepCompareError {
    #[error("{file} has no steps: compare a sweep or search only with another")]
    NotASweep { file: String },
    #[error("{a} varies {pa}, {b} varies {pb}: they have no point in common")]
    Different {
        a: String,
        pa: String,
        b: String,
        pb: String,
    },
    #[error(
        "compare takes sweeps as single files (their steps are the groups), not --a ... --b ..."
    )]
    Groups,
    #[error(transparent)]
    Compare(#[from] CompareError),
}

/// One value's comparison.
#[derive(Debug, Clone)]
pub struct PointComparison {
    /// The value as the first file gives it.
    pub value: String,
    pub comparison: Comparison,
}

/// Every file's sweep, point by point against the first.
#[derive(Debug, Clone)]
pub struct SweepComparison {
    pub labels: Vec<String>,
    pub capacity: Capacity,
    pub points: Vec<PointComparison>,
    /// Values some file did not run: the value and the labels of the files that did.
    pub unmatched: Vec<(String, Vec<String>)>,
    /// How many steps each file has, in the files' order.
    pub steps: Vec<usize>,
}

/// Whether any of the files has steps (then all must).
pub fn any_steps(files: &[(String, ResultsFile)]) -> bool {
    files.iter().any(|(_, d)| d.capacity.is_some())
}

/// Whether two values are the same point: equal numbers (`900` and `900.0`), else
/// equal text.
fn same(a: &str, b: &str) -> bool {
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The steps at the value `v` (a search's closed-loop step is a value of its own).
fn at<'a>(steps: &'a [Step], v: &str) -> Vec<&'a Step> {
    steps.iter().filter(|s| same(&s.value, v)).collect()
}

/// Compares every later file's sweep with the first's, point by point.
pub fn compare(files: &[(String, ResultsFile)]) -> Result<SweepComparison, SweepCompareError> {
    if files.len() < 2 {
        return Err(CompareError::OneSide.into());
    }
    fn capacity((f, d): &(String, ResultsFile)) -> Result<&Capacity, SweepCompareError> {
        d.capacity
            .as_ref()
            .ok_or_else(|| SweepCompareError::NotASweep { file: f.clone() })
    }
    let first = capacity(&files[0])?;
    for file in &files[1..] {
        let c = capacity(file)?;
        if c.parameter != first.parameter || c.kind != first.kind {
            return Err(SweepCompareError::Different {
                a: files[0].0.clone(),
                pa: first.parameter.clone(),
                b: file.0.clone(),
                pb: c.parameter.clone(),
            });
        }
    }
    let mut values: Vec<String> = Vec::new();
    for s in files.iter().flat_map(|(_, d)| &d.steps) {
        if !values.iter().any(|v| same(v, &s.value)) {
            values.push(s.value.clone());
        }
    }
    let number = |v: &String| v.trim().parse::<f64>().ok();
    if values.iter().all(|v| number(v).is_some()) {
        values.sort_by(|a, b| {
            number(a)
                .unwrap_or(0.0)
                .total_cmp(&number(b).unwrap_or(0.0))
        });
    }
    let (mut points, mut unmatched) = (Vec::new(), Vec::new());
    for v in values {
        let sides: Vec<Side> = files
            .iter()
            .filter_map(|(label, d)| {
                let runs: Vec<ResultsFile> =
                    at(&d.steps, &v).iter().map(|s| s.file.clone()).collect();
                (!runs.is_empty()).then(|| Side {
                    label: label.clone(),
                    runs,
                })
            })
            .collect();
        if sides.len() < files.len() {
            unmatched.push((v, sides.into_iter().map(|s| s.label).collect()));
            continue;
        }
        let comparison = compare::compare(&sides)?;
        points.push(PointComparison {
            value: v,
            comparison,
        });
    }
    Ok(SweepComparison {
        labels: files.iter().map(|(l, _)| l.clone()).collect(),
        capacity: first.clone(),
        points,
        unmatched,
        steps: files.iter().map(|(_, d)| d.steps.len()).collect(),
    })
}

/// `+5.9`, `-0.3`.
fn signed(v: f64) -> String {
    let s = fmt_f(v, 1);
    if v >= 0.0 {
        format!("+{s}")
    } else {
        s
    }
}

/// The table: one row per value and figure, each file's value, then each later
/// file's change against the first with its interval and verdict.
pub fn render(c: &SweepComparison) -> String {
    let mut out = String::new();
    for (i, label) in c.labels.iter().enumerate() {
        let _ = writeln!(out, "{}: {label}", (b'A' + i as u8) as char);
    }
    let _ = writeln!(
        out,
        "point by point over {}; 95% intervals: batch means over each step's seconds (Welch's t over the repeats where every file repeats a value 3 times or more)\n",
        c.capacity.parameter
    );
    let name = c.capacity.value_label();
    let mut rows: Vec<Vec<String>> = vec![{
        let mut h = vec![name, "figure".to_string()];
        h.extend((0..c.labels.len()).map(|i| ((b'A' + i as u8) as char).to_string()));
        for i in 1..c.labels.len() {
            let l = (b'A' + i as u8) as char;
            h.extend([format!("{l} vs A"), "95% interval".into(), String::new()]);
        }
        h
    }];
    for p in &c.points {
        // The figures a sweep compares, as the rows of `compare`'s table of the same
        // name (p99 is its percentile's row).
        let compared = super::sweep_figures().filter_map(|(f, s)| Some((f.name, s.compared?)));
        for (name, short) in compared {
            let Some(row) = p
                .comparison
                .rows
                .iter()
                .find(|r| r.figure.gate_name().as_deref() == Some(name))
            else {
                continue;
            };
            let mut cells = vec![p.value.clone(), short.to_string()];
            cells.extend(row.values.iter().map(|v| row.figure.format().show(*v)));
            for ch in &row.changes {
                cells.push(
                    ch.ratio
                        .map_or("-".into(), |x| format!("{}%", signed(100.0 * x))),
                );
                cells.push(ch.interval.map_or(String::new(), |i| {
                    format!("[{}%, {}%]", signed(100.0 * i.low), signed(100.0 * i.high))
                }));
                cells.push(ch.verdict.text().to_string());
            }
            rows.push(cells);
        }
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let pad = " ".repeat(widths[i] - cell.chars().count());
            let numeric = i >= 2
                && cell.starts_with(|ch: char| ch.is_ascii_digit() || ch == '+' || ch == '-');
            let _ = match numeric {
                true => write!(line, "{pad}{cell}  "),
                false => write!(line, "{cell}{pad}  "),
            };
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    for (label, _) in c.labels.iter().zip(&c.steps).filter(|(_, n)| **n == 0) {
        let _ = writeln!(out, "not compared: {label} has no steps");
    }
    for (v, had) in &c.unmatched {
        let _ = writeln!(
            out,
            "not compared: {}={v}: only in {}",
            c.capacity.parameter,
            had.join(", ")
        );
    }
    let caveats: Vec<String> = c
        .points
        .iter()
        .flat_map(|p| {
            p.comparison
                .caveats
                .iter()
                .map(move |w| format!("{}={}: {w}", c.capacity.parameter, p.value))
        })
        .collect();
    if !caveats.is_empty() {
        out.push('\n');
        for w in caveats {
            let _ = writeln!(out, "warning: {w}");
        }
    }
    out
}

/// What `gate` finds at every point, each finding named by its point. A point some
/// file did not run is undecided, as a figure the files lack is: the gate cannot be
/// checked there, and a CI job gated on the sweep must not pass blind (#43). So is a
/// comparison with no point at all (a file with no steps).
pub fn check(gate: &Gate, c: &SweepComparison) -> Vec<GateFinding> {
    let name = &c.capacity.parameter;
    let mut found: Vec<GateFinding> = c
        .points
        .iter()
        .flat_map(|p| {
            gate.check(&p.comparison).into_iter().map(move |f| match f {
                GateFinding::Regression(m) => {
                    GateFinding::Regression(format!("{name}={}: {m}", p.value))
                }
                GateFinding::Undecided(m) => {
                    GateFinding::Undecided(format!("{name}={}: {m}", p.value))
                }
            })
        })
        .collect();
    for (v, had) in &c.unmatched {
        let lacking: Vec<&str> = c
            .labels
            .iter()
            .filter(|l| !had.contains(l))
            .map(String::as_str)
            .collect();
        found.push(GateFinding::Undecided(format!(
            "{name}={v}: not in {} (only in {}), so --fail-if '{}' cannot be checked there",
            lacking.join(", "),
            had.join(", "),
            gate.text
        )));
    }
    if c.points.is_empty() {
        let empty: Vec<&str> = c
            .labels
            .iter()
            .zip(&c.steps)
            .filter(|(_, n)| **n == 0)
            .map(|(l, _)| l.as_str())
            .collect();
        let why = match empty.as_slice() {
            [] => "the files have no value of it in common".to_string(),
            files => format!("{} has no steps", files.join(", ")),
        };
        found.push(GateFinding::Undecided(format!(
            "no point of {name} compared: {why}, so --fail-if '{}' cannot be checked",
            gate.text
        )));
    }
    found
}
