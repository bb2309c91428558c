//! `pgbench-report html` and `--export-html`: one self-contained page for one or more
//! results files, overlaid and labelled. Charts are drawn by uPlot (vendored under
//! `assets/uplot/`, MIT, inlined with its stylesheet, so the page needs no network):
//! tps over time, latency percentiles over time, the latency distribution as a
//! percentile spectrum on a log scale, failures and retries over time when there are
//! any. The summary and per-statement tables are plain HTML. The data goes into the
//! page as JSON; `page.js` turns it into charts.

use crate::document::{Origin, ResultsFile};
use crate::histogram::LatencyHistogram;
use crate::report::fmt_f;
use serde::Serialize;
use std::fmt::Write;

const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
const PAGE_JS: &str = include_str!("page.js");
const PAGE_CSS: &str = include_str!("page.css");

/// One file's series for the charts.
#[derive(Serialize)]
struct ChartData {
    label: String,
    /// Interval ends, seconds since the start.
    t: Vec<f64>,
    tps: Vec<f64>,
    latency_avg: Vec<Option<f64>>,
    /// p50, p90, p99, p99.9 per interval (null where the source has none).
    percentiles: [Vec<Option<f64>>; 4],
    failures: Vec<Option<i64>>,
    retries: Vec<Option<i64>>,
    lag: Vec<Option<f64>>,
    /// Percentile spectrum: `1 / (1 - q)` and the latency (ms) at `q`.
    spectrum_x: Vec<f64>,
    spectrum_ms: Vec<f64>,
}

/// The spectrum in steps of a tenth of a decade of `1 - q`, as far as the count of
/// transactions resolves it (`1 - q >= 1/n`), then the maximum at `1 - q = 1/n`.
fn spectrum(h: &LatencyHistogram) -> (Vec<f64>, Vec<f64>) {
    let n = h.len() as f64;
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    if h.is_empty() {
        return (xs, ys);
    }
    for k in 0..=70 {
        let x = 10f64.powf(k as f64 / 10.0);
        if x >= n {
            break;
        }
        xs.push(x);
        ys.push(h.value_at_quantile(1.0 - 1.0 / x) as f64 / 1000.0);
    }
    xs.push(n.max(1.0 + xs.last().copied().unwrap_or(1.0)));
    ys.push(h.max_us() as f64 / 1000.0);
    (xs, ys)
}

fn chart_data(label: &str, doc: &ResultsFile) -> ChartData {
    let points = doc.timeline.as_ref().map_or(&[][..], |t| &t.points[..]);
    let pct = |i: usize| -> Vec<Option<f64>> {
        points
            .iter()
            .map(|p| p.percentiles_ms.map(|q| q[i]))
            .collect()
    };
    let (spectrum_x, spectrum_ms) = doc.histogram.as_ref().map(spectrum).unwrap_or_default();
    ChartData {
        label: label.to_string(),
        t: points.iter().map(|p| p.t_s + p.length_s).collect(),
        tps: points.iter().map(|p| p.tps).collect(),
        latency_avg: points.iter().map(|p| p.latency_avg_ms).collect(),
        percentiles: [pct(0), pct(1), pct(2), pct(3)],
        failures: points.iter().map(|p| p.failures).collect(),
        retries: points.iter().map(|p| p.retries).collect(),
        lag: points.iter().map(|p| p.lag_avg_ms).collect(),
        spectrum_x,
        spectrum_ms,
    }
}

/// `<`, `>`, `&` and quotes escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn num(v: Option<f64>, prec: usize) -> String {
    v.map_or("&ndash;".to_string(), |v| fmt_f(v, prec))
}

fn summary_table(files: &[(String, ResultsFile)], out: &mut String) {
    let _ = writeln!(
        out,
        "<table id=\"summary\"><thead><tr><th>run</th><th>source</th><th>tps</th>\
         <th>latency avg (ms)</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th>\
         <th>max</th><th>failed</th><th>retries</th><th>lag avg (ms)</th><th>clients</th>\
         <th>started</th></tr></thead><tbody>"
    );
    for (label, doc) in files {
        let s = &doc.summary;
        let p = |q: f64| num(s.percentiles.as_ref().and_then(|p| p.at(q)), 3);
        let source = match &doc.origin {
            Origin::PgbenchRs => "pgbench-rs run".to_string(),
            Origin::StockImport { .. } => "stock pgbench, imported".to_string(),
        };
        let client = doc.client_version.as_deref().unwrap_or("");
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(label),
            esc(client),
            source,
            num(s.tps, 1),
            num(s.latency_avg_ms, 3),
            p(50.0),
            p(90.0),
            p(99.0),
            p(99.9),
            num(s.percentiles.as_ref().map(|p| p.max_ms), 3),
            s.failures.map_or("&ndash;".into(), |f| f.total.to_string()),
            s.retries.map_or("&ndash;".into(), |r| r.to_string()),
            num(s.lag_avg_ms, 3),
            s.clients.map_or("&ndash;".into(), |c| c.to_string()),
            esc(doc.started_at.as_deref().unwrap_or("")),
        );
    }
    let _ = writeln!(out, "</tbody></table>");
}

/// Statement latencies of every file, one row per statement of the first file that
/// has `-r` figures (others matched by script and text).
fn statement_table(files: &[(String, ResultsFile)], out: &mut String) {
    let Some(first) = files
        .iter()
        .find(|(_, d)| !d.summary.statements().is_empty())
    else {
        return;
    };
    let _ = write!(
        out,
        "<h2>Statement latencies</h2>\n<table id=\"statements\"><thead><tr><th>script</th><th>statement</th>"
    );
    for (label, _) in files {
        let l = esc(label);
        let _ = write!(
            out,
            "<th>{l}<br>ms</th><th>{l}<br>failures</th><th>{l}<br>retries</th>"
        );
    }
    let _ = writeln!(out, "</tr></thead><tbody>");
    for (script, st) in first.1.summary.statements() {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"sql\">{}</td>",
            esc(&script),
            esc(&st.command)
        );
        for (_, doc) in files {
            let all = doc.summary.statements();
            let hit = all
                .iter()
                .find(|(s, o)| *s == script && o.command == st.command);
            match hit {
                Some((_, o)) => {
                    let _ = write!(
                        out,
                        "<td>{}</td><td>{}</td><td>{}</td>",
                        fmt_f(o.latency_ms, 3),
                        o.failures,
                        o.retries.map_or("&ndash;".into(), |r| r.to_string())
                    );
                }
                None => out.push_str("<td>&ndash;</td><td>&ndash;</td><td>&ndash;</td>"),
            }
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</tbody></table>");
}

/// The page for `files` (label, document), in the order given.
pub fn render_page(files: &[(String, ResultsFile)]) -> String {
    let charts: Vec<ChartData> = files.iter().map(|(l, d)| chart_data(l, d)).collect();
    let any_failures = files.iter().any(|(_, d)| {
        d.timeline
            .as_ref()
            .is_some_and(|t| t.has_failures_or_retries())
    });
    let data = serde_json::json!({ "runs": charts, "failures": any_failures });
    // `</` inside a script element would end it early.
    let data = data.to_string().replace("</", "<\\/");
    let labels: Vec<String> = files.iter().map(|(l, _)| esc(l)).collect();
    let mut out = String::with_capacity(UPLOT_JS.len() + 64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <title>pgbench results: {}</title>\n<style>{UPLOT_CSS}\n{PAGE_CSS}</style>\n</head><body>\n\
         <h1>pgbench results: {}</h1>\n",
        labels.join(", "),
        labels.join(" &middot; ")
    );
    summary_table(files, &mut out);
    out.push_str(
        "<h2>Throughput</h2><div class=\"chart\" id=\"chart-tps\"></div>\n\
         <h2>Latency over time</h2><div class=\"chart\" id=\"chart-latency\"></div>\n\
         <h2>Latency distribution</h2><div class=\"chart\" id=\"chart-spectrum\"></div>\n",
    );
    if any_failures {
        out.push_str(
            "<h2>Failures and retries</h2><div class=\"chart\" id=\"chart-failures\"></div>\n",
        );
    }
    statement_table(files, &mut out);
    let _ = write!(
        out,
        "<p class=\"foot\">Written by pgbench-report {}. Charts: uPlot (MIT).</p>\n\
         <script type=\"application/json\" id=\"data\">{data}</script>\n\
         <script>{UPLOT_JS}</script>\n<script>{PAGE_JS}</script>\n</body></html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out
}

#[cfg(test)]
mod tests;
