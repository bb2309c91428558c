//! Latency percentiles, pgbench-rs's first step past pgbench: every successful
//! transaction's latency goes into an HDR histogram (3 significant digits, bounded
//! memory whatever the run length), and `--latency-percentiles` prints the asked-for
//! percentiles and the maximum after pgbench's report.
//!
//! In a results file a histogram is kept in HdrHistogram's own interchange form (V2
//! with deflate, base64: the `HISTFAAA...` strings of HdrHistogram logs), which every
//! HdrHistogram library reads and which merges without loss.

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// A latency histogram in microseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
}

/// Why a serialised histogram could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    #[error("histogram is not valid base64: {0}")]
    Base64(String),
    #[error("histogram could not be decoded: {0}")]
    Decode(String),
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

    /// Adds every value of `other` (exact: both use the same buckets).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Same bounds and precision on both sides, so this cannot fail.
        let _ = self.hist.add(&other.hist);
    }

    /// Removes every value.
    pub fn reset(&mut self) {
        self.hist.reset();
    }

    /// The latency (µs) at quantile `q` in [0, 1].
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q)
    }

    /// The largest latency recorded (µs), 0 when empty.
    pub fn max_us(&self) -> u64 {
        self.hist.max()
    }

    /// `(latency µs, count)` of every non-empty bucket, in ascending order.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// HdrHistogram's V2 + deflate encoding, in base64.
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        // Writing into a Vec fails only on a histogram the library cannot encode,
        // which a histogram it built itself is not.
        let _ = V2DeflateSerializer::new().serialize(&self.hist, &mut bytes);
        base64_encode(&bytes)
    }

    /// Reads what [`LatencyHistogram::to_base64`] wrote (or any HdrHistogram V2 encoding).
    pub fn from_base64(text: &str) -> Result<LatencyHistogram, HistogramError> {
        let bytes = base64_decode(text.trim()).map_err(HistogramError::Base64)?;
        let read: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| HistogramError::Decode(format!("{e:?}")))?;
        let mut h = LatencyHistogram::new();
        h.hist
            .add(&read)
            .map_err(|e| HistogramError::Decode(format!("{e:?}")))?;
        Ok(h)
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

impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_base64())
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        LatencyHistogram::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| e.to_string())
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
    fn the_serialised_form_reads_back_equal_and_merges_exactly() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for us in 1..=5_000u64 {
            a.record((us * 7) as f64);
            b.record((us * 13) as f64);
        }
        let text = a.to_base64();
        assert!(text.starts_with("HISTFAAA"), "{text}");
        let back = LatencyHistogram::from_base64(&text).expect("reads back");
        assert_eq!(back, a);
        let mut merged = back;
        merged.merge(&b);
        let mut both = LatencyHistogram::new();
        for us in 1..=5_000u64 {
            both.record((us * 7) as f64);
            both.record((us * 13) as f64);
        }
        assert_eq!(merged, both);
        assert!(LatencyHistogram::from_base64("not base64!").is_err());
        assert!(LatencyHistogram::from_base64("AAAA").is_err());
    }

    #[test]
    fn an_empty_histogram_says_so() {
        let p = LatencyHistogram::new().percentiles(&[50.0]);
        let mut text = String::new();
        p.render(&mut text, "");
        assert_eq!(text, "no successful transaction\n");
    }
}
