//! What a compared figure is: one of the summary's ([`FigureSpec`], a row of
//! [`super::figures::FIGURES`] or of a workload's table), or one that a run names
//! itself (a percentile, a script, a `-r` statement, a server figure). Everything
//! `compare`, its table and its gates ask of a figure is asked here.

use super::interval::Series;
use super::server::ServerFigure;
use super::Format;
use crate::document::ResultsFile;
use crate::summary::Summary;
use crate::timeline::Point;
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

/// The summary's figures by name, as `compare` (derived latency, from tps) and the
/// tests name them.
#[allow(non_upper_case_globals)]
impl Figure {
    pub const Tps: Figure = Figure::Summary(&super::figures::TPS);
    pub const LatencyAvg: Figure = Figure::Summary(&super::figures::LATENCY_AVG);
    pub const LatencyStddev: Figure = Figure::Summary(&super::figures::LATENCY_STDDEV);
    pub const LatencyMax: Figure = Figure::Summary(&super::figures::LATENCY_MAX);
    /// Failed transactions, % of all.
    pub const FailedPct: Figure = Figure::Summary(&super::figures::FAILED_PCT);
    pub const Retries: Figure = Figure::Summary(&super::figures::RETRIES);
    pub const LagAvg: Figure = Figure::Summary(&super::figures::LAG_AVG);
    /// `--workload=tpcc`: HammerDB's new orders and server transactions per minute.
    pub const Nopm: Figure = Figure::Summary(&super::figures::NOPM);
    pub const Tpm: Figure = Figure::Summary(&super::figures::TPM);
}

/// Which way a figure's change is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
    /// Neither (where the backends waited, say): a change is only higher or lower.
    Neither,
}

/// [`PerSecond`], or one that captures which percentile it picks.
type PickSecond = dyn Fn(&Point) -> Option<(f64, f64)>;

/// The per-second percentiles a timeline point holds.
const POINT_PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// A second's weight: its transactions.
pub fn second_weight(p: &Point) -> f64 {
    p.transactions.map_or(p.tps * p.length_s, |t| t as f64)
}

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
    pub(super) fn gate_name(&self) -> Option<String> {
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
            // A percentile the summary does not list (sysbench's 95th, set beside a
            // pgbench-rs run) from the run's histogram, where it has one.
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
