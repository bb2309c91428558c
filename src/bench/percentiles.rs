//! Latency percentiles, pgbench-rs's first step past pgbench: every successful
//! transaction's latency goes into an HDR histogram (3 significant digits, bounded
//! memory whatever the run length), and `--latency-percentiles` prints the asked-for
//! percentiles and the maximum after pgbench's report.

use hdrhistogram::Histogram;
use std::fmt::Write;

/// A latency histogram in microseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> LatencyHistogram {
        // 1 µs to 1 hour at 3 significant digits; longer latencies are clamped.
        let hist = Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds");
        LatencyHistogram { hist }
    }

    /// Records one latency (µs).
    #[inline]
    pub fn record(&mut self, latency_us: f64) {
        let v = (latency_us.max(1.0) as u64).min(self.hist.high());
        self.hist.saturating_record(v);
    }

    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// The given percentiles (0-100] and the maximum, in milliseconds.
    pub fn percentiles(&self, wanted: &[f64]) -> Percentiles {
        Percentiles {
            values: wanted
                .iter()
                .map(|&p| (p, self.hist.value_at_quantile(p / 100.0) as f64 / 1000.0))
                .collect(),
            max: self.hist.max() as f64 / 1000.0,
            count: self.hist.len(),
        }
    }
}

/// Computed percentiles, ready to print.
#[derive(Debug, Clone, PartialEq)]
pub struct Percentiles {
    /// (percentile, latency in ms)
    pub values: Vec<(f64, f64)>,
    pub max: f64,
    pub count: u64,
}

impl Percentiles {
    /// `<indent>p50 = 1.234 ms`-style lines, then `max`.
    pub fn render(&self, out: &mut String, indent: &str) {
        if self.count == 0 {
            let _ = writeln!(out, "{indent}no successful transaction");
            return;
        }
        for (p, v) in &self.values {
            let _ = writeln!(out, "{indent}p{} = {v:.3}", trim_pct(*p));
        }
        let _ = writeln!(out, "{indent}max = {:.3}", self.max);
    }
}

/// `50` for 50.0, `99.9` for 99.9.
fn trim_pct(p: f64) -> String {
    let s = format!("{p}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_uniform_series() {
        let mut h = LatencyHistogram::new();
        for us in 1..=10_000 {
            h.record(us as f64 * 10.0);
        }
        let p = h.percentiles(&[50.0, 99.0, 99.9]);
        let close = |got: f64, want: f64| (got - want).abs() / want < 0.002;
        assert!(close(p.values[0].1, 50.0), "{p:?}");
        assert!(close(p.values[1].1, 99.0), "{p:?}");
        assert!(close(p.values[2].1, 99.9), "{p:?}");
        assert!(close(p.max, 100.0), "{p:?}");
        let mut text = String::new();
        p.render(&mut text, "  ");
        assert!(text.starts_with("  p50 = 50.0"), "{text}");
        assert!(text.contains("  p99.9 = "), "{text}");
        assert!(text.ends_with(" ms\n") || text.contains("max = "), "{text}");
    }

    #[test]
    fn an_empty_histogram_says_so() {
        let p = LatencyHistogram::new().percentiles(&[50.0]);
        let mut text = String::new();
        p.render(&mut text, "");
        assert_eq!(text, "no successful transaction\n");
    }
}
