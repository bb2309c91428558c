//! `--scenarios`: each scenario's figures ([`ScenarioResult`]: pgbench's counters
//! for its clients alone, its tps and latency percentiles) and their block in the
//! report, after pgbench's lines for the whole run ([`render`]). Pure.

use crate::histogram::LatencyHistogram;
use crate::stats::StatsData;
use pgbench_script::cnum::fmt_f;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// The percentiles a scenario's block and the results file give.
pub const PERCENTILES: [f64; 3] = [50.0, 90.0, 99.0];

/// One scenario of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    pub name: String,
    /// Where its clients connected: hosts and ports, and the server kind asked for.
    pub target: String,
    pub clients: usize,
    /// Its `-R`, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Successful transactions.
    pub transactions: i64,
    /// Failed transactions (serialization, deadlock, other errors, lost connections).
    pub failed: i64,
    /// Transactions skipped under `-L`.
    pub skipped: i64,
    /// Successful transactions per second of the measured part.
    pub tps: f64,
    /// The average latency of its successful transactions, ms (`None` without any).
    pub latency_average_ms: Option<f64>,
    /// `[percentile, ms]` for each of [`PERCENTILES`]; empty without a success.
    pub percentiles: Vec<(f64, f64)>,
}

impl ScenarioResult {
    /// From the scenario's (`name`, `target`), (`clients`, `rate`), the sum of its
    /// scripts' counters and histograms, over the measured part's µs.
    pub fn new(
        (name, target): (String, String),
        (clients, rate): (usize, Option<f64>),
        stats: StatsData,
        histogram: Option<LatencyHistogram>,
        measured_us: f64,
    ) -> ScenarioResult {
        let transactions = stats.counts.cnt;
        ScenarioResult {
            name,
            target,
            clients,
            rate,
            transactions,
            failed: stats.failures(),
            skipped: stats.counts.skipped,
            tps: if measured_us > 0.0 {
                transactions as f64 / (measured_us / 1e6)
            } else {
                0.0
            },
            latency_average_ms: (stats.latency.count > 0).then(|| 0.001 * stats.latency.mean()),
            percentiles: histogram
                .filter(|h| !h.is_empty())
                .map(|h| h.percentiles(&PERCENTILES).values)
                .unwrap_or_default(),
        }
    }

    /// The percentile `p`'s latency, ms, if the run kept it.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (*q - p).abs() < 1e-9)
            .map(|(_, v)| *v)
    }
}

/// One block per scenario, then the total of them, after pgbench's lines.
pub fn render(scenarios: &[ScenarioResult], out: &mut String) {
    if scenarios.is_empty() {
        return;
    }
    for s in scenarios {
        let _ = writeln!(out, "scenario \"{}\": {}", s.name, s.target);
        let _ = writeln!(out, " - number of clients: {}", s.clients);
        if let Some(rate) = s.rate {
            let _ = writeln!(out, " - rate limit: {} tps", fmt_f(rate, 1));
        }
        figures(
            out,
            (s.transactions, s.failed, s.skipped),
            s.latency_average_ms,
            s.tps,
        );
        if !s.percentiles.is_empty() {
            let shown: Vec<String> = s
                .percentiles
                .iter()
                .map(|(p, v)| format!("p{p} = {}", fmt_f(*v, 3)))
                .collect();
            let _ = writeln!(out, " - latency {} ms", shown.join(", "));
        }
    }
    let sum = |f: fn(&ScenarioResult) -> i64| scenarios.iter().map(f).sum::<i64>();
    let _ = writeln!(
        out,
        "scenarios total: {} scenarios, {} clients",
        scenarios.len(),
        scenarios.iter().map(|s| s.clients).sum::<usize>()
    );
    let (done, latency_sum) = scenarios
        .iter()
        .filter_map(|s| {
            Some((
                s.transactions,
                s.latency_average_ms? * s.transactions as f64,
            ))
        })
        .fold((0, 0.0), |(n, l), (m, k)| (n + m, l + k));
    figures(
        out,
        (
            sum(|s| s.transactions),
            sum(|s| s.failed),
            sum(|s| s.skipped),
        ),
        (done > 0).then(|| latency_sum / done as f64),
        scenarios.iter().map(|s| s.tps).sum(),
    );
}

/// pgbench's counters for part of a run.
fn figures(out: &mut String, (done, failed, skipped): (i64, i64, i64), avg: Option<f64>, tps: f64) {
    let _ = writeln!(out, " - number of transactions actually processed: {done}");
    let _ = writeln!(
        out,
        " - number of failed transactions: {failed} ({}%)",
        fmt_f(
            100.0 * failed as f64 / (done + failed + skipped).max(1) as f64,
            3
        )
    );
    if skipped > 0 {
        let _ = writeln!(out, " - number of transactions skipped: {skipped}");
    }
    if let Some(avg) = avg {
        let _ = writeln!(out, " - latency average = {} ms", fmt_f(avg, 3));
    }
    let _ = writeln!(out, " - tps = {}", fmt_f(tps, 6));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::TxOutcome;

    #[test]
    fn a_block_per_scenario_then_their_total() {
        let mut reads = StatsData::default();
        let mut h = LatencyHistogram::new();
        for us in [1000.0, 2000.0, 3000.0] {
            reads.accum(TxOutcome::Success, us, 0.0, 1, false);
            h.record(us);
        }
        let mut writes = StatsData::default();
        writes.accum(TxOutcome::Success, 4000.0, 0.0, 1, true);
        writes.accum(TxOutcome::SerializationFailure, 0.0, 0.0, 1, true);
        let all = [
            ScenarioResult::new(
                ("reads".into(), "/tmp:5651 (standby)".into()),
                (2, None),
                reads,
                Some(h),
                2e6,
            ),
            ScenarioResult::new(
                ("writes".into(), "/tmp:5650".into()),
                (1, Some(50.0)),
                writes,
                None,
                2e6,
            ),
        ];
        assert_eq!(all[0].percentile(50.0).map(|v| v.round()), Some(2.0));
        let mut out = String::new();
        render(&all, &mut out);
        let p50 = fmt_f(all[0].percentiles[0].1, 3);
        let p90 = fmt_f(all[0].percentiles[1].1, 3);
        let p99 = fmt_f(all[0].percentiles[2].1, 3);
        assert_eq!(
            out,
            format!(
                "scenario \"reads\": /tmp:5651 (standby)\n \
                 - number of clients: 2\n \
                 - number of transactions actually processed: 3\n \
                 - number of failed transactions: 0 (0.000%)\n \
                 - latency average = 2.000 ms\n \
                 - tps = 1.500000\n \
                 - latency p50 = {p50}, p90 = {p90}, p99 = {p99} ms\n\
                 scenario \"writes\": /tmp:5650\n \
                 - number of clients: 1\n \
                 - rate limit: 50.0 tps\n \
                 - number of transactions actually processed: 1\n \
                 - number of failed transactions: 1 (50.000%)\n \
                 - latency average = 4.000 ms\n \
                 - tps = 0.500000\n\
                 scenarios total: 2 scenarios, 3 clients\n \
                 - number of transactions actually processed: 4\n \
                 - number of failed transactions: 1 (20.000%)\n \
                 - latency average = 2.500 ms\n \
                 - tps = 2.000000\n"
            )
        );
    }
}
