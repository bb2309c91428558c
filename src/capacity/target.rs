//! `--find-max-rate=TARGET`: what a step's measured part must meet, as a list of
//! conditions (`p99<=20ms,failed<=0.1%`), and whether a step's result meets it. The
//! latencies are pgbench's under `-R`: from each transaction's scheduled start, so a
//! schedule the server cannot keep shows as latency. Pure.

use pgbench_results::RunResult;
use std::fmt;

/// What a condition bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    /// A latency percentile (`p99`, `p99.9`, `p50`), µs.
    Percentile(f64),
    /// The latency average, µs.
    Average,
    /// Failed transactions, % of all (failed, successful and skipped).
    Failed,
    /// `-L`: successful transactions above it and those skipped, % of all.
    Late,
}

/// One condition: `MEASURE<=LIMIT` (or `<`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Condition {
    pub measure: Measure,
    /// µs for latencies, percent for shares.
    pub limit: f64,
    pub strict: bool,
}

/// The whole target.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub conditions: Vec<Condition>,
}

/// Why a target cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("invalid --find-max-rate target \"{0}\": expected conditions like p99<=20ms,failed<=0.1% (pNN, avg, failed, late; <= or <)")]
    Syntax(String),
    #[error("invalid --find-max-rate target \"{text}\": {why}")]
    Value { text: String, why: &'static str },
}

impl Target {
    /// Reads `p99<=20ms,failed<=0.1%`: latencies take a unit (`us`, `ms`, `s`), shares
    /// a `%`.
    pub fn parse(text: &str) -> Result<Target, TargetError> {
        let conditions = text
            .split(',')
            .map(|part| condition(part.trim(), text))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Target { conditions })
    }

    /// Whether a condition needs `-L` (a late share).
    pub fn needs_latency_limit(&self) -> bool {
        self.conditions.iter().any(|c| c.measure == Measure::Late)
    }

    /// Each condition a run's measured part misses, as `p99 31.204 ms > 20 ms`.
    pub fn misses(&self, run: &RunResult) -> Vec<String> {
        self.conditions
            .iter()
            .filter_map(|c| {
                let Some(value) = measure(c.measure, run) else {
                    return Some(format!("{}: nothing measured", c.measure));
                };
                let met = if c.strict {
                    value < c.limit
                } else {
                    value <= c.limit
                };
                (!met).then(|| {
                    let op = if c.strict { ">=" } else { ">" };
                    format!(
                        "{} {} {op} {}",
                        c.measure,
                        c.measure.show(value),
                        c.measure.show(c.limit)
                    )
                })
            })
            .collect()
    }
}

fn condition(part: &str, whole: &str) -> Result<Condition, TargetError> {
    let syntax = || TargetError::Syntax(whole.to_string());
    let value = |why| TargetError::Value {
        text: whole.to_string(),
        why,
    };
    let (name, strict, limit) = match (part.split_once("<="), part.split_once('<')) {
        (Some((n, l)), _) => (n, false, l),
        (None, Some((n, l))) => (n, true, l),
        _ => return Err(syntax()),
    };
    let measure = match name.trim() {
        "avg" => Measure::Average,
        "failed" => Measure::Failed,
        "late" => Measure::Late,
        p => {
            let q: f64 = p
                .strip_prefix('p')
                .ok_or_else(syntax)?
                .parse()
                .map_err(|_| syntax())?;
            if !(q > 0.0 && q < 100.0) {
                return Err(value("a percentile is above 0 and below 100"));
            }
            Measure::Percentile(q)
        }
    };
    let limit = limit.trim();
    if limit.is_empty() {
        return Err(value(
            "the limit is missing after the comparison (p99<=20ms, failed<=0.1%)",
        ));
    }
    let limit = match measure {
        Measure::Failed | Measure::Late => {
            let n = limit
                .strip_suffix('%')
                .ok_or_else(|| value("a share takes a % (failed<=0.1%)"))?;
            let n: f64 = n.trim().parse().map_err(|_| syntax())?;
            if !(0.0..=100.0).contains(&n) {
                return Err(value("a share is from 0% to 100%"));
            }
            n
        }
        _ => {
            let (n, unit) = split_unit(limit)
                .ok_or_else(|| value("a latency takes a unit: us, ms or s (p99<=20ms)"))?;
            let n: f64 = n
                .parse()
                .map_err(|_| value("the latency limit is not a number (p99<=20ms)"))?;
            let us = n * unit;
            if us > MAX_LIMIT_US {
                return Err(value(
                    "the latency limit is too large: at most 3600s (1 hour), the longest latency a run's histogram tells apart",
                ));
            }
            if us.is_nan() || us <= 0.0 {
                return Err(value("a latency limit is above 0"));
            }
            us
        }
    };
    Ok(Condition {
        measure,
        limit,
        strict,
    })
}

/// The largest latency limit, µs: an hour, the most the latency histograms tell
/// apart (a longer latency counts as an hour), so any limit above is met by every
/// run. `1e308ms` was refused as "not above 0" (#43).
const MAX_LIMIT_US: f64 = 3_600e6;

/// `20ms` as ("20", 1000): the number's text and its unit in µs.
fn split_unit(text: &str) -> Option<(&str, f64)> {
    for (suffix, us) in [("us", 1.0), ("ms", 1e3), ("s", 1e6)] {
        if let Some(n) = text.strip_suffix(suffix) {
            return Some((n.trim(), us));
        }
    }
    None
}

/// The measure of a run's measured part (none when it measured no transaction).
fn measure(m: Measure, run: &RunResult) -> Option<f64> {
    let c = &run.total.counts;
    let all = (c.cnt + run.total.failures() + c.skipped) as f64;
    match m {
        Measure::Percentile(q) => {
            let h = run.histogram.as_ref().filter(|h| !h.is_empty())?;
            Some(h.value_at_quantile(q / 100.0) as f64)
        }
        Measure::Average => (run.total.latency.count > 0).then(|| run.total.latency.mean()),
        Measure::Failed => (all > 0.0).then(|| 100.0 * run.total.failures() as f64 / all),
        Measure::Late => (all > 0.0).then(|| 100.0 * (run.latency_late + c.skipped) as f64 / all),
    }
}

impl Measure {
    /// A value of this measure as the lines show it.
    fn show(self, v: f64) -> String {
        match self {
            Measure::Failed | Measure::Late => format!("{}%", trim(v, 3)),
            _ => format!("{} ms", trim(v / 1000.0, 3)),
        }
    }
}

/// `20`, `0.1`, `31.204`: at most `prec` decimals, no trailing zeros.
fn trim(v: f64, prec: usize) -> String {
    let s = format!("{v:.prec$}");
    match s.contains('.') {
        true => s.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => s,
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Measure::Percentile(q) => write!(f, "p{q}"),
            Measure::Average => f.write_str("avg"),
            Measure::Failed => f.write_str("failed"),
            Measure::Late => f.write_str("late"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgbench_results::{LatencyHistogram, RunSettings, StatsData, TxOutcome};

    #[test]
    fn targets_read_percentiles_averages_and_shares_with_units() {
        let t = Target::parse("p99<=20ms, failed<0.1%,p99.9<=1s,avg<=500us,late<=5%").unwrap();
        let c = &t.conditions;
        assert_eq!(
            c[0],
            Condition {
                measure: Measure::Percentile(99.0),
                limit: 20_000.0,
                strict: false
            }
        );
        assert_eq!(
            c[1],
            Condition {
                measure: Measure::Failed,
                limit: 0.1,
                strict: true
            }
        );
        assert_eq!(c[2].limit, 1e6);
        assert_eq!((c[3].measure, c[3].limit), (Measure::Average, 500.0));
        assert!(t.needs_latency_limit());
        for bad in [
            "",
            "p99",
            "p99<=20",
            "p99=20ms",
            "q99<=1ms",
            "failed<=1",
            "p100<=1ms",
            "p99<=-1ms",
            "failed<=200%",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Target::parse("p99<=20").unwrap_err().to_string(),
            "invalid --find-max-rate target \"p99<=20\": a latency takes a unit: us, ms or s (p99<=20ms)"
        );
    }

    /// #43: `p99<=1e308ms` was "a latency limit is above 0" and `p99<=` "a latency
    /// takes a unit": each now says what is wrong.
    #[test]
    fn a_limit_too_large_or_missing_is_told_as_such() {
        let why = |t: &str| {
            let e = Target::parse(t).unwrap_err().to_string();
            let prefix = format!("invalid --find-max-rate target \"{t}\": ");
            e.strip_prefix(&prefix).unwrap_or(&e).to_string()
        };
        for t in ["p99<=1e308ms", "p99<=infs", "avg<=3600001ms", "p50<3601s"] {
            let w = why(t);
            assert!(
                w.starts_with("the latency limit is too large: at most 3600s"),
                "{t}: {w}"
            );
        }
        assert!(Target::parse("p99<=3600s").is_ok());
        for t in ["p99<=", "p99< ", "failed<=", "avg<=20ms,p99<="] {
            assert_eq!(
                why(t),
                "the limit is missing after the comparison (p99<=20ms, failed<=0.1%)",
                "{t}"
            );
        }
        assert_eq!(
            why("p99<=xms"),
            "the latency limit is not a number (p99<=20ms)"
        );
        assert_eq!(why("p99<=0ms"), "a latency limit is above 0");
    }

    #[test]
    fn a_run_misses_each_condition_it_passes_and_says_by_how_much() {
        let mut run = pgbench_results::synthetic::run(&pgbench_results::synthetic::Spec::tpcb(
            1, 5, 100.0, 1000.0,
        ));
        let mut h = LatencyHistogram::new();
        for ms in 1..=100 {
            h.record(f64::from(ms * 1000));
        }
        run.histogram = Some(h);
        run.total = StatsData::default();
        for _ in 0..999 {
            run.total.accum(TxOutcome::Success, 1000.0, 0.0, 1, true);
        }
        run.total
            .accum(TxOutcome::SerializationFailure, 0.0, 0.0, 1, true);
        run.settings = RunSettings { ..run.settings };
        let t = Target::parse("p99<=20ms,failed<=0.1%,p50<60ms").unwrap();
        // (99 ms as the histogram keeps it: to within its 3 significant digits.)
        assert_eq!(t.misses(&run), vec!["p99 99.007 ms > 20 ms".to_string()]);
        let t = Target::parse("failed<0.1%").unwrap();
        assert_eq!(t.misses(&run), vec!["failed 0.1% >= 0.1%".to_string()]);
        run.histogram = None;
        assert_eq!(
            Target::parse("p99<=1s").unwrap().misses(&run),
            vec!["p99: nothing measured".to_string()]
        );
    }
}
