//! What `compare` sets beside its table for staged runs (`--rate-stages`,
//! `--client-stages`): each side's tps and p99 per stage, and a later side's change
//! on the first. Stages are paired by position.

use super::Side;
use crate::stages::{StageResult, Stages};

/// The lines: a line per stage with each side's tps and p99
/// (means over the side's runs) and a later side's change on the first; empty when
/// no side has stages. Stages are paired by position.
pub fn lines(sides: &[Side]) -> Vec<String> {
    let of_side: Vec<Vec<&Stages>> = sides
        .iter()
        .map(|side| {
            side.runs
                .iter()
                .filter_map(|d| d.run.as_ref()?.stages.as_ref())
                .collect()
        })
        .collect();
    let Some(shape) = of_side.iter().flatten().next().map(|s| s.shape) else {
        return Vec::new();
    };
    let count = of_side
        .iter()
        .flatten()
        .map(|s| s.stages.len())
        .max()
        .unwrap_or(0);
    // A side's mean of a figure in stage `i`, over its runs that have it.
    let mean = |runs: &[&Stages], i: usize, figure: fn(&StageResult) -> Option<f64>| {
        let values: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.stages.get(i).and_then(figure))
            .collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    let change = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => format!(" ({:+.1}% on A)", (b / a - 1.0) * 100.0),
        _ => String::new(),
    };
    let mut out = vec![format!("stages ({}):", shape.name())];
    for i in 0..count {
        out.push(format!("  stage {}:", i + 1));
        let first = &of_side[0];
        for (k, (side, runs)) in sides.iter().zip(&of_side).enumerate() {
            let letter = char::from(b'A' + (k % 26) as u8);
            let tps = mean(runs, i, |s| Some(s.tps));
            let p99 = mean(runs, i, |s| s.latency_p99_ms);
            let Some(tps_value) = tps else {
                out.push(format!("    {letter}: {}: no such stage", side.label));
                continue;
            };
            let (tps_change, p99_change) = match k {
                0 => (String::new(), String::new()),
                _ => (
                    change(mean(first, i, |s| Some(s.tps)), tps),
                    change(mean(first, i, |s| s.latency_p99_ms), p99),
                ),
            };
            let p99_text = p99.map_or("-".to_string(), |v| format!("{v:.3} ms"));
            out.push(format!(
                "    {letter}: {}: tps {tps_value:.1}{tps_change}, p99 {p99_text}{p99_change}",
                side.label
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::{StageCounts, StageShape, StageWindow};
    use crate::stats::TxOutcome;

    fn stage(n: i64, latency_us: f64, from: f64, target: f64) -> StageResult {
        let mut c = StageCounts::default();
        for _ in 0..n {
            c.total.accum(TxOutcome::Success, latency_us, 0.0, 1, false);
            c.latencies.record(latency_us);
        }
        let window = StageWindow {
            from,
            target,
            start_s: 0.0,
            end_s: 6.0,
        };
        StageResult::of(window, &c, false)
    }

    #[test]
    fn two_sides_compare_stage_by_stage() {
        let a = Stages {
            shape: StageShape::Clients,
            stages: vec![
                stage(600, 10_000.0, 1.0, 1.0),
                stage(1_200, 10_000.0, 1.0, 4.0),
            ],
        };
        let mut b = a.clone();
        b.stages[0].tps = 110.0;
        b.stages.pop();
        let side = |label: &str, stages: Option<Stages>| {
            let mut run = crate::synthetic::run(&crate::synthetic::Spec::tpcb(1, 5, 100.0, 500.0));
            run.stages = stages;
            let doc = crate::ResultsFile::from_run(run, crate::RunMeta::default());
            Side {
                label: label.to_string(),
                runs: vec![doc],
            }
        };
        let out = lines(&[side("base", Some(a)), side("new", Some(b))]);
        assert_eq!(out[0], "stages (clients):");
        assert_eq!(out[1], "  stage 1:");
        assert_eq!(out[2], "    A: base: tps 100.0, p99 10.007 ms");
        assert_eq!(
            out[3],
            "    B: new: tps 110.0 (+10.0% on A), p99 10.007 ms (+0.0% on A)"
        );
        assert_eq!(out[6], "    B: new: no such stage");
        assert!(lines(&[side("base", None), side("new", None)]).is_empty());
    }
}
