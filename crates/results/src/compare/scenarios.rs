//! What `compare` sets beside its table for `--scenarios` runs: each scenario's tps,
//! latency percentiles and failures, side by side (the mean over a side's runs), and
//! a later side's change against the first. A scenario has one figure a run (no
//! per-second series of its own), so no interval: the change only.

use super::table::signed;
use super::Side;
use crate::report::fmt_f;
use crate::scenarios::ScenarioResult;
use std::fmt::Write;

/// A scenario's figures the lines show: name, decimals, value.
type Shown = (&'static str, usize, fn(&ScenarioResult) -> Option<f64>);

const FIGURES: [Shown; 5] = [
    ("tps", 1, |s| Some(s.tps)),
    ("latency p50 (ms)", 3, |s| s.percentile(50.0)),
    ("latency p99 (ms)", 3, |s| s.percentile(99.0)),
    ("latency average (ms)", 3, |s| s.latency_average_ms),
    ("failed", 0, |s| Some(s.failed as f64)),
];

/// The scenarios of a side's runs named `name`.
fn of_side<'a>(side: &'a Side, name: &str) -> Vec<&'a ScenarioResult> {
    side.runs
        .iter()
        .filter_map(|d| d.run.as_ref())
        .flat_map(|r| r.scenarios.iter().filter(|s| s.name == name))
        .collect()
}

/// The lines, a heading first; none when no side ran with `--scenarios`.
pub fn lines(sides: &[Side]) -> Vec<String> {
    let mut names: Vec<&str> = Vec::new();
    for s in sides
        .iter()
        .flat_map(|s| &s.runs)
        .filter_map(|d| d.run.as_ref())
    {
        for sc in &s.scenarios {
            if !names.contains(&sc.name.as_str()) {
                names.push(&sc.name);
            }
        }
    }
    if names.is_empty() {
        return Vec::new();
    }
    let mut out = vec!["scenarios (--scenarios; one figure a run, no interval):".to_string()];
    for name in names {
        out.push(format!("  {name}:"));
        for (figure, prec, value) in FIGURES {
            let means: Vec<Option<f64>> = sides
                .iter()
                .map(|side| {
                    let v: Vec<f64> = of_side(side, name).into_iter().filter_map(value).collect();
                    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
                })
                .collect();
            let mut line = format!("    {figure}:");
            for (i, m) in means.iter().enumerate() {
                let letter = char::from(b'A' + (i % 26) as u8);
                let shown = m.map_or("-".to_string(), |v| fmt_f(v, prec));
                let _ = write!(line, " {letter} {shown}");
                if let (Some(a), Some(b), true) = (means[0], m, i > 0) {
                    if a != 0.0 && fmt_f(a, prec) != fmt_f(*b, prec) {
                        let _ = write!(line, " ({}%)", signed(100.0 * (b / a - 1.0), 1));
                    }
                }
            }
            out.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{ResultsFile, RunMeta};
    use crate::synthetic::{run, Spec};

    fn scenario(name: &str, tps: f64, p99: f64) -> ScenarioResult {
        ScenarioResult {
            name: name.into(),
            target: "/tmp:5432".into(),
            clients: 2,
            rate: None,
            transactions: (tps * 10.0) as i64,
            failed: 0,
            skipped: 0,
            tps,
            latency_average_ms: Some(1.0),
            percentiles: vec![(50.0, 0.5), (90.0, 0.9), (99.0, p99)],
        }
    }

    fn side(label: &str, scenarios: Vec<ScenarioResult>) -> Side {
        let mut r = run(&Spec::tpcb(1, 10, 100.0, 1000.0));
        r.scenarios = scenarios;
        Side {
            label: label.into(),
            runs: vec![ResultsFile::from_run(r, RunMeta::default())],
        }
    }

    #[test]
    fn each_scenario_side_by_side_with_its_change() {
        let a = side(
            "a",
            vec![
                scenario("reads", 1000.0, 2.0),
                scenario("writes", 50.0, 4.0),
            ],
        );
        let b = side("b", vec![scenario("reads", 900.0, 2.5)]);
        assert_eq!(
            lines(&[a, b]),
            [
                "scenarios (--scenarios; one figure a run, no interval):",
                "  reads:",
                "    tps: A 1000.0 B 900.0 (-10.0%)",
                "    latency p50 (ms): A 0.500 B 0.500",
                "    latency p99 (ms): A 2.000 B 2.500 (+25.0%)",
                "    latency average (ms): A 1.000 B 1.000",
                "    failed: A 0 B 0",
                "  writes:",
                "    tps: A 50.0 B -",
                "    latency p50 (ms): A 0.500 B -",
                "    latency p99 (ms): A 4.000 B -",
                "    latency average (ms): A 1.000 B -",
                "    failed: A 0 B -",
            ]
        );
        assert!(lines(&[side("a", vec![]), side("b", vec![])]).is_empty());
    }
}
