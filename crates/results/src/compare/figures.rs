//! Which figures `compare` sets side by side, in the table's order: tps, latency,
//! the percentiles, failures, retries and lag, NOPM and TPM for TPC-C, each script's
//! and statement's, and the server's.

use super::{server, Figure, Side};
use crate::document::ResultsFile;

/// The percentiles compared: pgbench-rs's, and any other a side's summary lists
/// (sysbench prints its 95th), in order.
fn percentiles(sides: &[Side]) -> Vec<f64> {
    let listed = sides
        .iter()
        .flat_map(|s| &s.runs)
        .filter_map(|d| d.summary.percentiles.as_ref())
        .flat_map(|p| p.values.iter().map(|(q, _)| *q));
    let mut all: Vec<f64> = crate::summary::SUMMARY_PERCENTILES
        .into_iter()
        .chain(listed)
        .filter(|q| q.is_finite())
        .collect();
    all.sort_by(f64::total_cmp);
    all.dedup();
    all
}

pub(super) fn figures(sides: &[Side]) -> Vec<Figure> {
    let mut v = vec![Figure::Tps, Figure::LatencyAvg, Figure::LatencyStddev];
    v.extend(percentiles(sides).into_iter().map(Figure::Percentile));
    v.extend([
        Figure::LatencyMax,
        Figure::FailedPct,
        Figure::Retries,
        Figure::LagAvg,
    ]);
    let first = &sides[0].runs[0].summary;
    if first.nopm.is_some() {
        v.splice(0..0, [Figure::Nopm, Figure::Tpm]);
    }
    if first.scripts.len() > 1 {
        for sc in &first.scripts {
            v.push(Figure::ScriptTps(sc.name.clone()));
            v.push(Figure::ScriptLatency(sc.name.clone()));
        }
    }
    for (name, st) in first.statements() {
        v.push(Figure::Statement(format!("{name}: {}", st.command)));
    }
    let all: Vec<&ResultsFile> = sides.iter().flat_map(|s| &s.runs).collect();
    v.extend(server::figures(&all).into_iter().map(Figure::Server));
    v
}
