//! `trend --html`: a metric of the history over time as one self-contained page,
//! drawn by the same vendored uPlot as the results pages (inlined: no network), one
//! line per group (each series of comparable runs, or each value of a tag), the
//! change points marked, and a table of the runs. The data goes in as JSON; the
//! page's small script draws it.

use crate::figures::Metric;
use crate::regressions::Finding;
use crate::store::Point;
use pgbench_results::html::{PAGE_CSS, UPLOT_CSS, UPLOT_JS};
use pgbench_results::report::fmt_f;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// How the runs are split into lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupBy {
    /// Each series of comparable runs its own line.
    Series,
    /// A line per value of a tag (`--group-by tag:K`); runs without it in `(none)`.
    Tag(String),
}

impl GroupBy {
    /// `tag:K`.
    pub fn parse(s: &str) -> Result<GroupBy, crate::HistoryError> {
        match s.strip_prefix("tag:") {
            Some(k) if !k.is_empty() => Ok(GroupBy::Tag(k.to_string())),
            _ => Err(crate::HistoryError::Invalid(format!(
                "--group-by \"{s}\": give tag:KEY (a tag's name)"
            ))),
        }
    }

    /// The group of a point.
    pub fn of(&self, p: &Point) -> String {
        match self {
            GroupBy::Series => p.series_key.clone(),
            GroupBy::Tag(k) => p.tags.get(k).cloned().unwrap_or_else(|| "(none)".into()),
        }
    }
}

/// The chart's data: x (Unix seconds) and a column per group, aligned (null where a
/// group has no run at that instant), then the change points' column.
#[derive(Serialize)]
struct Chart {
    metric: &'static str,
    x: Vec<f64>,
    groups: Vec<String>,
    columns: Vec<Vec<Option<f64>>>,
    changes: Vec<Option<f64>>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const SCRIPT: &str = r#"
const d = JSON.parse(document.getElementById('data').textContent);
const colors = ['#1f77b4','#d62728','#2ca02c','#ff7f0e','#9467bd','#8c564b','#e377c2','#17becf','#7f7f7f','#bcbd22'];
const series = [{}].concat(d.groups.map((g, i) => ({
  label: g, stroke: colors[i % colors.length], width: 1.5, spanGaps: true,
  points: { show: true, size: 5 },
})));
series.push({ label: 'change point', stroke: '#000', width: 0, paths: () => null,
  points: { show: true, size: 11, width: 2, fill: 'transparent', stroke: '#000' } });
const plot = new uPlot({
  width: Math.min(1100, window.innerWidth - 40), height: 420,
  scales: { x: { time: true } },
  axes: [{}, { label: d.metric, size: 70 }],
  series,
}, [d.x].concat(d.columns, [d.changes]), document.getElementById('chart'));
// What the results pages offer their browser test (crates/results/tests/browser).
window.pgbenchCharts = [{ id: 'chart', plot: plot, marks: [] }];
window.pgbenchChartRects = function () {
  return window.pgbenchCharts.map(function (c) {
    const r = c.plot.over.getBoundingClientRect();
    return { id: c.id, plot: { left: r.left + window.scrollX, top: r.top + window.scrollY,
      width: r.width, height: r.height }, marks: [] };
  });
};
document.body.setAttribute('data-charts-drawn', '1');
"#;

/// The page of `points` (oldest first) for `metric`, split by `group`, with the
/// change points `findings` found marked.
pub fn page(all: &[Point], metric: Metric, group: &GroupBy, findings: &[Finding]) -> String {
    // A run whose start is unknown (an import of a report alone) has no place on a
    // time axis: it is in the table, not on the chart.
    let points: Vec<&Point> = all.iter().filter(|p| p.started_us.is_some()).collect();
    let untimed = all.len() - points.len();
    let groups: Vec<String> = points
        .iter()
        .map(|p| group.of(p))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let index: BTreeMap<&str, usize> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| (g.as_str(), i))
        .collect();
    let at = |p: &Point| p.started_us.unwrap_or(0) as f64 / 1e6;
    let mut xs: Vec<f64> = points.iter().map(|p| at(p)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let slot = |x: f64| xs.partition_point(|v| *v < x);
    let mut columns = vec![vec![None; xs.len()]; groups.len()];
    let mut changes = vec![None; xs.len()];
    let firsts: BTreeSet<_> = findings.iter().map(|f| f.first_run).collect();
    for p in &points {
        let i = slot(at(p));
        columns[index[group.of(p).as_str()]][i] = Some(p.value);
        if firsts.contains(&p.id) {
            changes[i] = Some(p.value);
        }
    }
    let chart = Chart {
        metric: metric.label(),
        x: xs,
        groups: groups.clone(),
        columns,
        changes,
    };
    // `</` inside a script element would end it early.
    let data = serde_json::to_string(&chart)
        .unwrap_or_default()
        .replace("</", "<\\/");
    let mut out = String::with_capacity(UPLOT_JS.len() + 64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <title>pgbench-rs history: {label}</title>\n<style>{UPLOT_CSS}\n{PAGE_CSS}</style>\n\
         </head><body>\n<h1>pgbench-rs history: {label}</h1>\n\
         <p class=\"note\">{n} runs in {g} {what}, by start time (UTC); circled: the first run \
         after a change point.{untimed}</p>\n<div class=\"chart\" id=\"chart\"></div>\n",
        label = esc(metric.label()),
        n = points.len(),
        untimed = match untimed {
            0 => String::new(),
            n => format!(" {n} more without a start time (imported reports) only in the table."),
        },
        g = groups.len(),
        what = match group {
            GroupBy::Series => "series of comparable runs".to_string(),
            GroupBy::Tag(k) => format!("groups by tag {}", esc(k)),
        }
    );
    if !findings.is_empty() {
        out.push_str("<h2>Change points</h2><ul>\n");
        for f in findings {
            let _ = writeln!(out, "<li>{}</li>", esc(&f.line()));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<h2>Runs</h2><table><thead><tr><th>run</th><th>started</th><th>group</th>");
    let _ = writeln!(out, "<th>{}</th></tr></thead><tbody>", esc(metric.label()));
    for p in all.iter().rev() {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            p.id,
            esc(p.started_at.as_deref().unwrap_or("-")),
            esc(&group.of(p)),
            fmt_f(p.value, 3)
        );
    }
    let _ = write!(
        out,
        "</tbody></table>\n<p class=\"foot\">Written by pgbench-report {}. Charts: uPlot (MIT).</p>\n\
         <script type=\"application/json\" id=\"data\">{data}</script>\n\
         <script>{UPLOT_JS}</script>\n<script>{SCRIPT}</script>\n</body></html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out
}
