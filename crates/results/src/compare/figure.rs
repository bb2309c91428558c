//! What a compared figure is: one of the summary's ([`FigureSpec`], a row of
//! [`super::figures::FIGURES`] or of a workload's table), or one that a run names
//! itself (a percentile, a script, a `-r` statement, a server figure). Everything
//! `compare`, its table and its gates ask of a figure is asked here.

use super::interval::Series;
use super::server::ServerFigure;
use super::spec::{second_weight, Better, FigureSpec, Format};
use crate::document::ResultsFile;
use crate::timeline::Point;

/// A compared figure.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// A figure of the summary, by its row of a table of figures.
    Summary(&'static FigureSpec),
    /// A latency percentile, from the summary or the run's histogram.
    Percentile(f64),
    /// By script name.
    ScriptTps(String),
    ScriptLatency(String),
    /// `-r` line, keyed `N: script: command`.
    Statement(String),
    /// `--server-stats`: per transaction of the window, or a share.
    Server(ServerFigure),
}

/// [`PerSecond`], or one that captures which percentile it picks.
type PickSecond = dyn Fn(&Point) -> Option<(f64, f64)>;

/// The per-second percentiles a timeline point holds.
const POINT_PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

impl Figure {
    /// The row's name in the table.
    pub fn label(&self) -> String {
        match self {
            Figure::Summary(f) => f.label.into(),
            Figure::Percentile(p) => format!("latency p{p} (ms)"),
            Figure::ScriptTps(s) => format!("{s}: tps"),
            Figure::ScriptLatency(s) => format!("{s}: latency average (ms)"),
            Figure::Statement(k) => {
                // Long statements would make every row as wide.
                let short: String = k.chars().take(60).collect();
                let more = if short.len() < k.len() { "..." } else { "" };
                format!("  {short}{more} (ms)")
            }
            Figure::Server(f) => f.label(),
        }
    }

    /// The name `--fail-if` uses.
    pub(crate) fn gate_name(&self) -> Option<String> {
        Some(match self {
            Figure::Summary(f) => f.name.into(),
            Figure::Percentile(p) => percentile_gate(*p),
            Figure::Server(f) => f.gate_name(),
            Figure::ScriptTps(_) | Figure::ScriptLatency(_) | Figure::Statement(_) => return None,
        })
    }

    /// How its values print: counts, and what is kept whole, without decimals.
    pub fn format(&self) -> Format {
        match self {
            Figure::Summary(f) => f.format,
            Figure::Server(f) => f.format(),
            _ => Format::Real,
        }
    }

    pub fn better(&self) -> Better {
        match self {
            Figure::Summary(f) => f.better,
            Figure::ScriptTps(_) => Better::Higher,
            Figure::Server(f) => f.better(),
            _ => Better::Lower,
        }
    }

    /// The figure of one run, if it has it.
    pub fn value(&self, doc: &ResultsFile) -> Option<f64> {
        let s = &doc.summary;
        let script = |name: &str| s.scripts.iter().find(|sc| sc.name == name);
        match self {
            Figure::Summary(f) => (f.value)(s),
            // A percentile the summary does not list (an imported tool's 95th, set
            // beside a pgbench-rs run) from the run's histogram, where it has one.
            Figure::Percentile(p) => {
                s.percentiles.as_ref().and_then(|ps| ps.at(*p)).or_else(|| {
                    let h = doc.histogram().filter(|h| !h.is_empty())?;
                    Some(h.value_at_quantile(p / 100.0) as f64 / 1000.0)
                })
            }
            Figure::ScriptTps(n) => script(n)?.tps,
            Figure::ScriptLatency(n) => script(n)?.latency_avg_ms,
            Figure::Statement(k) => s
                .statements()
                .into_iter()
                .find(|(name, st)| &format!("{name}: {}", st.command) == k)
                .map(|(_, st)| st.latency_ms),
            Figure::Server(f) => f.value(doc),
        }
    }

    /// The figure second by second, with weights, for single-run intervals; the last
    /// interval (usually partial) is left out.
    pub(super) fn per_second(&self, doc: &ResultsFile) -> Option<Series> {
        let timeline = doc.timeline()?;
        let points = &timeline.points;
        let points = &points[..points.len().saturating_sub(1)];
        let pick: Box<PickSecond> = match self {
            Figure::Summary(f) => Box::new(f.per_second?),
            Figure::Percentile(q) => {
                let i = POINT_PERCENTILES.iter().position(|x| x == q)?;
                Box::new(move |p| Some((p.percentiles_ms?[i], second_weight(p))))
            }
            Figure::Server(f) => return f.per_second(doc),
            Figure::ScriptTps(_) | Figure::ScriptLatency(_) | Figure::Statement(_) => return None,
        };
        Some(
            points
                .iter()
                .filter_map(pick)
                .filter(|(_, w)| *w > 0.0)
                .collect(),
        )
    }
}

/// A percentile's gate name: `p99`, `p99.9`.
pub(super) fn percentile_gate(p: f64) -> String {
    format!("p{p}")
}
