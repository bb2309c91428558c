//! The text of a sweep or a search: the opening line (what varies and how), a header,
//! one line per step as it ends (step, value, a column per figure a sweep shows,
//! [`super::sweep_figures`]: tps, p50, p99, failed share, ...; then warnings or the
//! verdict), and the closing lines (the peak and the knee, or the rate found and
//! the first that missed). pgbench-rs prints them as the steps run and
//! `pgbench-report show` prints them again from the file. Pure.

use super::curve::curve;
use super::{sweep_figures, Capacity, Figures, Kind, Role, Step, CLOSED_LOOP};
use crate::compare::spec::{Cell, FigureSpec, Shown};
use crate::report::fmt_f;
use crate::run::Limit;

/// What every step runs: the warm-up, then `-T` or `-t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepLength {
    pub warmup_s: Option<i64>,
    pub limit: Limit,
}

impl StepLength {
    /// The length of a step's run as the first step's file gives it.
    pub fn of(step: &Step) -> Option<StepLength> {
        let run = step.file.run.as_ref()?;
        Some(StepLength {
            warmup_s: run.warmup.as_ref().map(|w| w.seconds),
            limit: run.settings.limit,
        })
    }

    fn text(self) -> String {
        let measured = match self.limit {
            Limit::Duration(s) => format!("{s} s"),
            Limit::Transactions(n) => format!("{n} transactions a client"),
        };
        match self.warmup_s {
            Some(w) => format!("each a {w} s warm-up, then {measured}"),
            None => format!("each {measured}"),
        }
    }
}

/// The columns of the step lines, decided by the first step: every figure a sweep
/// shows always, and those shown when measured that the first step has (`-L`'s late
/// share, a workload's headline figure).
#[derive(Debug, Clone, PartialEq)]
pub struct Columns {
    step: usize,
    value: usize,
    figures: Vec<&'static FigureSpec>,
}

impl Columns {
    pub fn new(capacity: &Capacity, first: &Figures) -> Columns {
        let label = capacity.value_label();
        let values = capacity.values.iter().map(String::len).max().unwrap_or(0);
        let step = match capacity.kind {
            // `12/12`
            Kind::Sweep => 2 * total_steps(capacity).to_string().len() + 1,
            Kind::Search => capacity
                .search
                .as_ref()
                .map_or(2, |s| s.max_steps.to_string().len()),
        };
        let value = match capacity.kind {
            Kind::Sweep => label.len().max(values),
            Kind::Search => CLOSED_LOOP.len(),
        };
        Columns {
            step: step.max(4),
            value,
            figures: sweep_figures()
                .filter(|(f, s)| s.shown == Shown::Always || first.get(f.name).is_some())
                .map(|(f, _)| f)
                .collect(),
        }
    }
}

/// The steps a sweep plans: each value `--repeat` times.
pub fn total_steps(capacity: &Capacity) -> usize {
    capacity.values.len() * capacity.repeat.max(1) as usize
}

/// `clients=8`, `rate=900`, `scale=10`; a search's `-R 926.5`.
pub fn at(capacity: &Capacity, value: &str) -> String {
    match capacity.kind {
        Kind::Search => format!("-R {value}"),
        Kind::Sweep => format!("{}={value}", capacity.parameter),
    }
}

/// The line before the table.
pub fn opening(capacity: &Capacity, length: StepLength) -> String {
    match (capacity.kind, &capacity.search) {
        (Kind::Search, Some(s)) => format!(
            "search for the highest -R meeting {}: at most {} steps ({}), to within {}%\n",
            s.target,
            s.max_steps,
            length.text(),
            fmt_f(100.0 * s.tolerance, 1).trim_end_matches(".0")
        ),
        _ => {
            let repeat = match capacity.repeat {
                0 | 1 => String::new(),
                n => format!(", each value {n} times in rounds"),
            };
            format!(
                "sweep of {} over {}{repeat}: {} steps ({})\n",
                capacity.parameter,
                capacity.values.join(", "),
                total_steps(capacity),
                length.text()
            )
        }
    }
}

fn number(v: Option<f64>, prec: usize) -> String {
    Cell::Number(prec).show(v)
}

/// The header over the step lines.
pub fn header(capacity: &Capacity, c: &Columns) -> String {
    let mut line = format!(
        "{:>w$}  {:>v$}",
        "step",
        capacity.value_label(),
        w = c.step,
        v = c.value
    );
    for sweep in c.figures.iter().filter_map(|f| f.sweep.as_ref()) {
        line.push_str(&format!("  {:>w$}", sweep.header, w = sweep.width));
    }
    line.push_str(match capacity.kind {
        Kind::Sweep => "  warnings",
        Kind::Search => "  target",
    });
    line.push('\n');
    line
}

/// A step's line.
pub fn step_line(capacity: &Capacity, c: &Columns, step: &Step) -> String {
    let f = step.figures();
    let number_of = match capacity.kind {
        Kind::Sweep => format!("{}/{}", step.step, total_steps(capacity)),
        Kind::Search => step.step.to_string(),
    };
    let mut line = format!(
        "{:>w$}  {:>v$}",
        number_of,
        step.value,
        w = c.step,
        v = c.value
    );
    for (figure, sweep) in c
        .figures
        .iter()
        .filter_map(|f| Some((f, f.sweep.as_ref()?)))
    {
        let cell = sweep.cell.show(f.get(figure.name));
        line.push_str(&format!("  {:>w$}", cell, w = sweep.width));
    }
    let warnings = f.warnings.join(", ");
    let again = match step.role == Some(Role::Confirmation) {
        true => " again",
        false => "",
    };
    let notes = match (&step.verdict, step.value == CLOSED_LOOP) {
        (_, true) => join("the clients' most, without -R", &warnings),
        (Some(v), _) if v.met => join(&format!("met{again}"), &warnings),
        (Some(v), _) => join(&format!("missed{again}: {}", v.why.join("; ")), &warnings),
        (None, _) => warnings,
    };
    if !notes.is_empty() {
        line.push_str("  ");
        line.push_str(&notes);
    }
    line.push('\n');
    line
}

/// A verdict and the step's warnings in brackets.
fn join(verdict: &str, warnings: &str) -> String {
    match warnings {
        "" => verdict.to_string(),
        w => format!("{verdict} [{w}]"),
    }
}

/// The lines after the table: a sweep's peak and knee, a search's rate found and
/// first miss; then why it stopped early, if it did.
pub fn closing(capacity: &Capacity, steps: &[Step]) -> String {
    let mut out = match capacity.kind {
        Kind::Sweep => sweep_closing(capacity, steps),
        Kind::Search => search_closing(capacity, steps),
    };
    if let Some(why) = &capacity.stopped {
        out.push_str(&format!("stopped early: {why}\n"));
    }
    out
}

fn sweep_closing(capacity: &Capacity, steps: &[Step]) -> String {
    let c = curve(capacity, steps);
    let Some(peak) = c.peak.map(|i| &c.whole[i]) else {
        return match steps.iter().any(|s| s.figures().tps().is_some()) {
            true => "peak: none (no step ran whole: each was interrupted or had clients abort)\n",
            false => "peak: none (no step measured any transaction)\n",
        }
        .to_string();
    };
    let repeats = |p: &super::curve::Point| match p.tps.map_or(1, |t| t.n) {
        1 => String::new(),
        n => format!(" (mean of {n})"),
    };
    let mut out = format!(
        "peak: {} tps{} at {}",
        number(peak.tps.map(|t| t.mean), 1),
        repeats(peak),
        at(capacity, &peak.label)
    );
    if let Some(k) = c.knee {
        let knee = at(capacity, &c.points[k.index].label);
        out.push_str(&match k.still_scaling {
            true => format!("; knee: at or beyond {knee} (still scaling there)"),
            false => format!("; knee: {knee}"),
        });
    }
    out.push('\n');
    out
}

fn search_closing(capacity: &Capacity, steps: &[Step]) -> String {
    let Some(found) = &capacity.found else {
        return String::new();
    };
    let target = capacity.search.as_ref().map_or("", |s| s.target.as_str());
    let step_of = |n: Option<u32>| steps.iter().find(|s| Some(s.step) == n);
    let mut out = match (found.rate, step_of(found.step)) {
        (Some(rate), Some(step)) => {
            let f = step.figures();
            // A workload's headline figure after the target's, where the step has it.
            let headline: String = sweep_figures()
                .filter(|(_, s)| s.headline)
                .filter_map(|(fig, s)| {
                    let v = f.get(fig.name)?;
                    Some(format!(", {} {}", s.header, s.cell.show(Some(v))))
                })
                .collect();
            let times = match found.confirmed {
                true => "met twice",
                false => "met once, not confirmed",
            };
            format!(
                "found: -R {} (p99 {} ms, failed {}{headline}; {times})",
                rate_text(rate),
                number(f.get("p99"), 3),
                Cell::Percent.show(f.get("failed"))
            )
        }
        _ => format!("found: no rate met {target}"),
    };
    match &found.first_miss {
        Some(m) => out.push_str(&format!(
            "; first rate that missed: -R {} ({})",
            rate_text(m.rate),
            m.why
        )),
        None if found.rate.is_some() => out.push_str("; no rate tried missed"),
        None => {}
    }
    if found.rate.is_some() && !found.within_tolerance {
        let tolerance = capacity.search.as_ref().map_or(0.0, |s| s.tolerance);
        out.push_str(&format!(
            "; not narrowed to within {}%",
            fmt_f(100.0 * tolerance, 1).trim_end_matches(".0")
        ));
    }
    out.push('\n');
    out
}

/// A rate as `-R` ran it: every digit it was given (the search gives 4 significant
/// ones), so the line can be run again as it reads. One decimal showed `-R 9.172` as
/// `-R 9.2` (#43).
pub fn rate_text(rate: f64) -> String {
    format!("{rate}")
}

/// Everything `show` prints of the steps: the opening, the header and every step's
/// line, the closing lines.
pub fn render(capacity: &Capacity, steps: &[Step]) -> String {
    let Some(first) = steps.first() else {
        return "no step was run\n".to_string();
    };
    let length = StepLength::of(first).unwrap_or(StepLength {
        warmup_s: None,
        limit: Limit::Transactions(0),
    });
    let columns = Columns::new(capacity, &first.figures());
    let mut out = opening(capacity, length);
    out.push_str(&header(capacity, &columns));
    for s in steps {
        out.push_str(&step_line(capacity, &columns, s));
    }
    out.push_str(&closing(capacity, steps));
    out
}

/// The line before the representative step's report (the run and `show` print it).
pub fn report_heading(capacity: &Capacity, step: &Step) -> String {
    let met = step.verdict.as_ref().is_some_and(|v| v.met);
    let what = match capacity.kind {
        Kind::Sweep if step.is_whole() => "the peak",
        // No step ran whole: the first, as the file's top level holds it.
        Kind::Sweep => "no step ran whole",
        Kind::Search if capacity.found.is_some() => "the rate found",
        // The steps ended before the search did: nothing was found.
        Kind::Search if met => "the best so far; the search did not finish",
        Kind::Search => "the search did not finish",
    };
    let at = match step.value == CLOSED_LOOP {
        true => CLOSED_LOOP.to_string(),
        false => at(capacity, &step.value),
    };
    format!("\nreport of step {} ({at}, {what}):\n", step.step)
}
