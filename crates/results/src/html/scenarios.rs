//! The page's table of `--scenarios` runs: a row per file and scenario, with its
//! target and pgbench's figures for its clients alone. Plain HTML, as the summary.

use super::{esc, num};
use crate::document::ResultsFile;
use crate::report::fmt_f;
use std::fmt::Write;

/// The table, when some file ran scenarios.
pub(super) fn table(files: &[(String, ResultsFile)], out: &mut String) {
    let rows: Vec<(&str, &crate::scenarios::ScenarioResult)> = files
        .iter()
        .filter_map(|(l, d)| Some((l.as_str(), d.run.as_ref()?)))
        .flat_map(|(l, r)| r.scenarios.iter().map(move |s| (l, s)))
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str(
        "<h2>Scenarios</h2><p class=\"note\">--scenarios: each scenario's clients alone, \
         against its target (hosts, and the server kind asked for).</p>\n\
         <table id=\"scenarios\"><thead><tr><th>run</th><th>scenario</th><th>target</th>\
         <th>clients</th><th>rate</th><th>transactions</th><th>failed</th><th>tps</th>\
         <th>latency avg (ms)</th><th>p50 (ms)</th><th>p90 (ms)</th><th>p99 (ms)</th>\
         </tr></thead><tbody>\n",
    );
    for (label, s) in rows {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(label),
            esc(&s.name),
            esc(&s.target),
            s.clients,
            num(s.rate, 1),
            s.transactions,
            s.failed,
            fmt_f(s.tps, 1),
            num(s.latency_average_ms, 3),
            num(s.percentile(50.0), 3),
            num(s.percentile(90.0), 3),
            num(s.percentile(99.0), 3),
        );
    }
    out.push_str("</tbody></table>\n");
}
