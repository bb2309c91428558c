//! `pgbench-report html` and `--export-html`: one self-contained page for one or more
//! results files, overlaid and labelled. Charts are drawn by uPlot (vendored under
//! `assets/uplot/`, MIT, inlined with its stylesheet, so the page needs no network):
//! tps over time, latency percentiles over time, the latency distribution as a
//! percentile spectrum on a log scale, failures and retries over time when there are
//! any; the `--warmup` seconds shaded before the measured ones, with their tps and
//! latencies drawn lighter; with `--server-stats`,
//! server panels under the client's charts (`server.rs`). The summary and
//! per-statement tables (and `--scenarios`' table, `scenarios.rs`) are plain HTML, and
//! so is the list of the files' validity
//! warnings (a run interrupted, a cold start, ...). A sweep's or capacity search's
//! file adds its curves over the swept value first (`capacity.rs`; files whose curves
//! would share no axis are refused, [`check_files`]). The data goes into
//! the page as JSON; `page.js` turns it into charts.

use crate::compare::spec::{FigureSpec, Format};
use crate::document::{Origin, ResultsFile};
use crate::histogram::LatencyHistogram;
use crate::report::fmt_f;
use crate::timeline::Point;
use serde::Serialize;
use std::fmt::Write;

mod capacity;
mod scenarios;
mod server;

pub use capacity::CurveError;

/// Refuses files whose pages would mislead: sweeps of different parameters (or a
/// sweep and a search), whose curves would share one axis.
pub fn check_files(files: &[(String, ResultsFile)]) -> Result<(), CurveError> {
    capacity::check(files)
}

/// uPlot's script, vendored: other pages of charts (the run history's trend) inline
/// the same copy.
pub const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
/// uPlot's stylesheet.
pub const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
const PAGE_JS: &str = include_str!("page.js");
/// The pages' own stylesheet (fonts, tables, notes), shared with those other pages.
pub const PAGE_CSS: &str = include_str!("page.css");

/// One file's series for the charts.
#[derive(Serialize)]
struct ChartData {
    label: String,
    /// Interval ends, seconds since the start.
    t: Vec<f64>,
    /// Where the first interval began (the charts draw each interval across itself).
    t_start: f64,
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
    /// `--warmup`'s seconds, before `t`'s.
    warmup: Option<server::WarmupChart>,
    /// `--server-stats`' seconds.
    server: Option<server::ServerChart>,
    /// `--reconnect`'s outages: from the first failure to the first success after it
    /// (`None`: the run's end), seconds on `t`'s axis. The series' points are at their
    /// intervals' ends, and are drawn as steps back over their interval, so that an
    /// interval's failures fall under the outage that caused them.
    outages: Vec<(f64, Option<f64>)>,
    /// `--rate-stages`, `--client-stages`: where each stage begins on `t`'s axis,
    /// and its name (`stage 2: 100→500 tps`).
    stages: Vec<(f64, String)>,
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

/// p50, p90, p99, p99.9 of each point, in ms (null where it has none).
fn percentiles(points: &[Point]) -> [Vec<Option<f64>>; 4] {
    std::array::from_fn(|i| {
        points
            .iter()
            .map(|p| p.percentiles_ms.map(|q| q[i]))
            .collect()
    })
}

fn chart_data(label: &str, doc: &ResultsFile) -> ChartData {
    let timeline = doc.timeline();
    let points = timeline.as_ref().map_or(&[][..], |t| &t.points[..]);
    let (spectrum_x, spectrum_ms) = doc.histogram().map(spectrum).unwrap_or_default();
    ChartData {
        label: label.to_string(),
        t: points.iter().map(|p| p.t_s + p.length_s).collect(),
        t_start: points.first().map_or(0.0, |p| p.t_s),
        tps: points.iter().map(|p| p.tps).collect(),
        latency_avg: points.iter().map(|p| p.latency_avg_ms).collect(),
        percentiles: percentiles(points),
        failures: points.iter().map(|p| p.failures).collect(),
        retries: points.iter().map(|p| p.retries).collect(),
        lag: points.iter().map(|p| p.lag_avg_ms).collect(),
        spectrum_x,
        spectrum_ms,
        warmup: server::warmup(doc),
        server: server::server(doc),
        outages: outages(doc),
        stages: doc
            .run
            .as_ref()
            .and_then(|r| r.stages.as_ref())
            .map(crate::stages::chart_marks)
            .unwrap_or_default(),
    }
}

/// A run's outages on the charts' axis: seconds from the measured window's start.
fn outages(doc: &ResultsFile) -> Vec<(f64, Option<f64>)> {
    let Some(a) = doc.run.as_ref().and_then(|r| r.availability.as_ref()) else {
        return Vec::new();
    };
    let s = |us: i64| (us - a.measured_from_unix_us) as f64 / 1e6;
    a.outages
        .iter()
        .map(|o| {
            (
                s(o.first_failure_unix_us),
                o.first_success_after_unix_us
                    .or(o.seen_until_unix_us)
                    .map(s),
            )
        })
        .collect()
}

/// `--reconnect` runs: each file's outages (how many, how long, the longest), its
/// reconnects, the clients that gave up and the transactions in doubt.
fn availability_table(files: &[(String, ResultsFile)], out: &mut String) {
    let runs: Vec<(&str, &crate::availability::Availability)> = files
        .iter()
        .filter_map(|(l, d)| Some((l.as_str(), d.run.as_ref()?.availability.as_ref()?)))
        .collect();
    if runs.is_empty() {
        return;
    }
    out.push_str(
        "<h2>Availability</h2><p class=\"note\">--reconnect: the outages the clients saw. \
         In doubt: transactions whose connection was lost after a statement that may commit \
         was sent; the server may have committed them (successful &le; rows &le; successful \
         + in doubt).</p>\n<table id=\"availability\"><thead><tr><th>run</th><th>outages</th>\
         <th>in all (s)</th><th>longest (s)</th><th>reconnects</th><th>clients that gave up</th>\
         <th>in doubt</th></tr></thead><tbody>\n",
    );
    for (label, a) in runs {
        let at_least = if a.all_over() { "" } else { "&ge; " };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{at_least}{}</td><td>{at_least}{}</td><td>{}</td>\
             <td>{}</td><td class=\"in-doubt\">{}</td></tr>",
            esc(label),
            a.outages.len(),
            fmt_f(a.total_outage_s(), 3),
            num(a.longest_outage_s(), 3),
            a.reconnects,
            a.gave_up,
            a.in_doubt
        );
    }
    out.push_str("</tbody></table>\n");
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

/// The main figures of each file; the lag and start columns only when some file
/// has them.
fn summary_table(files: &[(String, ResultsFile)], out: &mut String) {
    let lag = files.iter().any(|(_, d)| d.summary.lag_avg_ms.is_some());
    let started = files.iter().any(|(_, d)| d.started_at.is_some());
    // A workload's figures (its own table's), when some file has the first.
    let workload: Vec<&FigureSpec> = crate::workload::registry::figures()
        .filter(|w| {
            w.first()
                .is_some_and(|f| files.iter().any(|(_, d)| (f.value)(&d.summary).is_some()))
        })
        .flatten()
        .collect();
    out.push_str(
        "<table id=\"summary\"><thead><tr><th>run</th><th>source</th><th>tps</th>\
         <th>latency avg (ms)</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th>\
         <th>max</th><th>failed</th><th>retries</th><th>clients</th>",
    );
    if lag {
        out.push_str("<th>lag avg (ms)</th>");
    }
    for f in &workload {
        let _ = write!(out, "<th>{}</th>", esc(f.label));
    }
    if started {
        out.push_str("<th>started</th>");
    }
    out.push_str("</tr></thead><tbody>\n");
    for (label, doc) in files {
        let s = &doc.summary;
        let p = |q: f64| num(s.percentiles.as_ref().and_then(|p| p.at(q)), 3);
        let source = match &doc.origin {
            Origin::PgbenchRs => "pgbench-rs run",
            Origin::StockImport { .. } => "stock pgbench, imported",
        };
        let count = |v: Option<i64>| v.map_or("&ndash;".into(), |v| v.to_string());
        let _ = write!(
            out,
            "<tr><td title=\"{}\">{}</td><td title=\"{}\">{source}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(&doc.command_line.join(" ")),
            esc(label),
            esc(doc.client_version.as_deref().unwrap_or("")),
            num(s.tps, 1),
            num(s.latency_avg_ms, 3),
            p(50.0),
            p(90.0),
            p(99.0),
            p(99.9),
            num(s.percentiles.as_ref().map(|p| p.max_ms), 3),
            count(s.failures.map(|f| f.total)),
            count(s.retries),
            count(s.clients),
        );
        if lag {
            let _ = write!(out, "<td>{}</td>", num(s.lag_avg_ms, 3));
        }
        for f in &workload {
            let cell = match f.format {
                Format::Whole => count((f.value)(s).map(|v| v as i64)),
                Format::Real => num((f.value)(s), 3),
            };
            let _ = write!(out, "<td>{cell}</td>");
        }
        if started {
            let _ = write!(
                out,
                "<td>{}</td>",
                esc(doc.started_at.as_deref().unwrap_or(""))
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// Each file's validity warnings, under the summary they qualify (nothing when no
/// file has any).
fn warning_list(files: &[(String, ResultsFile)], out: &mut String) {
    // A sweep or search stopped early (or lacking steps) says so first: its top
    // level, one step, has nothing to say of the steps that never ran.
    let each: Vec<Vec<crate::warnings::Warning>> = files
        .iter()
        .map(|(_, d)| {
            let whole = d
                .capacity
                .as_ref()
                .and_then(|c| crate::warnings::steps::check(c, &d.steps));
            whole
                .into_iter()
                .chain(d.warnings.iter().cloned())
                .collect()
        })
        .collect();
    if each.iter().all(Vec::is_empty) {
        return;
    }
    out.push_str("<ul id=\"warnings\" class=\"note\">\n");
    for ((label, _), warnings) in files.iter().zip(&each) {
        for w in warnings {
            let _ = writeln!(
                out,
                "<li><b>{}</b>: {}: {}</li>",
                esc(label),
                esc(&w.code),
                esc(&w.message)
            );
        }
    }
    out.push_str("</ul>\n");
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
    let any_failures = files
        .iter()
        .any(|(_, d)| d.timeline().is_some_and(|t| t.has_failures_or_retries()));
    let data = serde_json::json!({
        "runs": charts,
        "failures": any_failures,
        "curves": capacity::curves(files),
    });
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
    availability_table(files, &mut out);
    scenarios::table(files, &mut out);
    warning_list(files, &mut out);
    capacity::section(files, &mut out);
    let warmed = files
        .iter()
        .any(|(_, d)| d.run.as_ref().is_some_and(|r| r.warmup.is_some()));
    out.push_str(if warmed {
        "<h2>Throughput</h2><p class=\"note\">Successful transactions per second of each \
         interval; shaded: the --warmup seconds before the measured window (their tps \
         dashed, lighter), which no figure counts."
    } else {
        "<h2>Throughput</h2><p class=\"note\">Successful transactions per second of each \
         interval."
    });
    let outages = files.iter().any(|(_, d)| {
        d.run
            .as_ref()
            .and_then(|r| r.availability.as_ref())
            .is_some_and(|a| !a.outages.is_empty())
    });
    if outages {
        out.push_str(
            " Shaded red on every chart over time: the outages of a --reconnect run, \
             from the first failure to the first success after it (to the run's end for \
             one not over). Each interval's figures are drawn across the interval.",
        );
    }
    if files
        .iter()
        .any(|(_, d)| d.run.as_ref().is_some_and(|r| r.stages.is_some()))
    {
        out.push_str(
            " Dashed lines named for their stage on every chart over time: where each \
             stage of a --rate-stages or --client-stages run begins, with its target.",
        );
    }
    out.push_str("</p>");
    out.push_str(
        "<div class=\"chart\" id=\"chart-tps\"></div>\n\
         <h2>Latency over time</h2><p class=\"note\">Each interval's median (solid) and 99th \
         percentile (dashed), or its average where the file has no percentiles.",
    );
    if warmed {
        out.push_str(" Shaded: the --warmup seconds (their latencies lighter).");
    }
    out.push_str(
        "</p><div class=\"chart\" id=\"chart-latency\"></div>\n\
         <h2>Latency distribution</h2><p class=\"note\">The latency under which each share \
         of the run's transactions completed; each line ends at the run's maximum.</p>\
         <div class=\"chart\" id=\"chart-spectrum\"></div>\n",
    );
    if any_failures {
        out.push_str(
            "<h2>Failures and retries</h2><div class=\"chart\" id=\"chart-failures\"></div>\n",
        );
    }
    server::panels(files, &mut out);
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
