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
        let hist = Histogram::new_with_bounds(1, HIGHEST_US, 3).expect("valid histogram bounds");
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

    /// The latency (µs) at quantile `q` in [0, 1].
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q)
    }

    /// The largest latency recorded (µs), 0 when empty.
    pub fn max_us(&self) -> u64 {
        self.hist.max()
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
        check_header(&bytes)?;
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

/// The latency bounds every histogram here uses: 1 µs to 1 hour, 3 significant digits.
const HIGHEST_US: u64 = 3_600_000_000;

/// HdrHistogram's V2 cookies (its serialization module's constants).
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9304 | 0x10;
/// The most significant digits a histogram read may keep: ours. With 3 the counts
/// array stays under 140,000 entries whatever the bounds; with 5 it may take 128 MiB.
const MAX_SIGNIFICANT_DIGITS: u32 = 3;
/// Bytes one count takes at most in the V2 payload (LEB128 of a zig-zagged i64).
const MAX_BYTES_PER_COUNT: u64 = 9;
/// deflate expands at most about 1032 times.
const MAX_DEFLATE_RATIO: u64 = 1032;

/// Refuses a serialised histogram whose header asks for more than its bytes can hold:
/// the library would allocate what the header says (a 56-character string asked for
/// 4 GiB) before finding out.
fn check_header(bytes: &[u8]) -> Result<(), HistogramError> {
    use std::io::Read;
    let (Some(cookie), Some(compressed)) = (be32(bytes, 0), be32(bytes, 4)) else {
        return Err(HistogramError::Decode("too short".into()));
    };
    if cookie != V2_DEFLATE_COOKIE {
        // The library reads plain V2 too: its payload is what follows the header.
        return check_v2_header(bytes, bytes.len() as u64);
    }
    let compressed = u64::from(compressed).min(bytes.len() as u64 - 8);
    let mut header = Vec::with_capacity(40);
    let mut inflate = flate2::read::ZlibDecoder::new(&bytes[8..]).take(40);
    if inflate.read_to_end(&mut header).is_err() {
        return Err(HistogramError::Decode("not deflate data".into()));
    }
    check_v2_header(&header, compressed * MAX_DEFLATE_RATIO)
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// The V2 header (cookie, payload length, offset, digits, bounds): the payload must
/// fit in `room` bytes and in the counts array the digits allow.
fn check_v2_header(header: &[u8], room: u64) -> Result<(), HistogramError> {
    let (Some(V2_COOKIE), Some(payload), Some(digits)) =
        (be32(header, 0), be32(header, 4), be32(header, 12))
    else {
        return Err(HistogramError::Decode(
            "not an HdrHistogram V2 header".into(),
        ));
    };
    if digits > MAX_SIGNIFICANT_DIGITS {
        return Err(HistogramError::Decode(format!(
            "{digits} significant digits (at most {MAX_SIGNIFICANT_DIGITS})"
        )));
    }
    // 2048 sub-buckets (3 digits) times at most 64 buckets.
    let counts_room = 2048 * 64 * MAX_BYTES_PER_COUNT;
    if u64::from(payload) > room.min(counts_room) {
        return Err(HistogramError::Decode(format!(
            "a payload of {payload} bytes, more than the histogram can hold"
        )));
    }
    Ok(())
}
/// HdrHistogram's layout for those bounds: 2 × 10³ values need 2¹¹ sub-buckets, half
/// of which each bucket after the first uses.
const SUB_BUCKET_HALF_MAGNITUDE: u32 = 10;
const SUB_BUCKET_HALF_COUNT: usize = 1 << SUB_BUCKET_HALF_MAGNITUDE;
const SUB_BUCKET_MASK: u64 = (2 * SUB_BUCKET_HALF_COUNT as u64) - 1;
const LEADING_ZERO_COUNT_BASE: u32 = 64 - SUB_BUCKET_HALF_MAGNITUDE - 1;

/// Latencies counted the way HdrHistogram counts them, but only counted: an index
/// from HdrHistogram's own arithmetic and one add, where `Histogram::saturating_record`
/// also keeps its minimum, maximum and total (~60 instructions, measured: three of
/// those per transaction were 10% of a `SELECT 1` transaction). Turned into the
/// [`LatencyHistogram`] with the very same buckets when it is read.
#[derive(Debug, Clone)]
pub struct LatencyCounts {
    /// Indexed through [`COUNTS_MASK`]: a power-of-two array needs no bounds check.
    counts: Box<[u64; COUNTS_LEN]>,
    /// One past the highest index counted since the last reset (0: nothing counted).
    /// Reads scan `0..end`: the first bucket holds 0-2,047 µs one by one, so a low
    /// bound would save little and cost every record a comparison.
    end: usize,
}

/// The counts array: a power of two above `index_of(HIGHEST_US)` (23,552).
const COUNTS_LEN: usize = 1 << 15;
const COUNTS_MASK: usize = COUNTS_LEN - 1;

impl Default for LatencyCounts {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyCounts {
    pub fn new() -> LatencyCounts {
        let counts: Box<[u64]> = vec![0; COUNTS_LEN].into_boxed_slice();
        LatencyCounts {
            counts: counts
                .try_into()
                .unwrap_or_else(|_| unreachable!("COUNTS_LEN entries")),
            end: 0,
        }
    }

    /// Counts one latency (µs), clamped to [1 µs, 1 h] as [`LatencyHistogram::record`].
    #[inline]
    pub fn record(&mut self, latency_us: f64) {
        let i = index_of_latency(latency_us);
        self.counts[i] += 1;
        self.end = self.end.max(i + 1);
    }

    /// Counts the successful transactions' latencies of a batch (one bound update).
    #[inline]
    pub fn record_successes(&mut self, batch: &[crate::stats::TxRecord]) {
        let mut end = self.end;
        for r in batch {
            if r.outcome == crate::stats::TxOutcome::Success {
                let i = index_of_latency(r.latency);
                self.counts[i] += 1;
                end = end.max(i + 1);
            }
        }
        self.end = end;
    }

    /// Whether nothing was counted since the last reset.
    pub fn is_empty(&self) -> bool {
        self.end == 0
    }

    fn used(&self) -> &[u64] {
        &self.counts[..self.end]
    }

    /// The latencies at these quantiles (ascending, each in (0, 1]), as
    /// `Histogram::value_at_quantile` reports them: the highest value of the first
    /// bucket whose running count reaches ⌈q · total⌉. `None` when nothing was counted.
    pub fn value_at_quantiles<const N: usize>(&self, quantiles: [f64; N]) -> Option<[u64; N]> {
        if self.is_empty() {
            return None;
        }
        let range = self.used();
        let total: u64 = range.iter().sum();
        let mut out = [0; N];
        let (mut running, mut i) = (0u64, 0usize);
        for (k, q) in quantiles.iter().enumerate() {
            let wanted = ((q.min(1.0) * total as f64).ceil() as u64).max(1);
            while running + range[i] < wanted {
                running += range[i];
                i += 1;
            }
            out[k] = value_at(i) + bucket_width(i) - 1;
        }
        Some(out)
    }

    /// The lowest and highest latency counted, to the buckets' precision (as
    /// `Histogram::min`/`max` report them).
    pub fn bounds(&self) -> Option<(u64, u64)> {
        let lo = self.used().iter().position(|&n| n > 0)?;
        let hi = self.end - 1;
        Some((value_at(lo), value_at(hi) + bucket_width(hi) - 1))
    }

    /// How many latencies fall between consecutive bounds (µs, ascending): entry `i`
    /// counts those below `bounds_us[i]` and not below the bound before it, the last
    /// entry those not below the last bound (`bounds_us.len() + 1` entries, the
    /// per-bucket counts of a Prometheus histogram). To the buckets' precision: a
    /// bucket counts as below a bound when its lowest value is.
    pub fn counts_between(&self, bounds_us: &[u64]) -> Vec<u64> {
        let mut out = vec![0; bounds_us.len() + 1];
        let mut range = 0;
        for (i, &n) in self.used().iter().enumerate() {
            if n == 0 {
                continue;
            }
            let lowest = value_at(i);
            while range < bounds_us.len() && lowest >= bounds_us[range] {
                range += 1;
            }
            out[range] += n;
        }
        out
    }

    /// Adds what `other` counted.
    pub fn add_counts(&mut self, other: &LatencyCounts) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.used()) {
            *mine += theirs;
        }
        self.end = self.end.max(other.end);
    }

    /// Adds what was counted to `into`.
    pub fn add_to(&self, into: &mut LatencyHistogram) {
        for (i, &n) in self.used().iter().enumerate() {
            if n > 0 {
                let _ = into.hist.record_n(value_at(i), n);
            }
        }
    }

    /// The histogram of what was counted.
    pub fn to_histogram(&self) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        self.add_to(&mut h);
        h
    }

    /// Forgets everything counted (only the range that was used is cleared).
    pub fn reset(&mut self) {
        let end = self.end;
        self.counts[..end].fill(0);
        self.end = 0;
    }
}

/// The counts index of a latency (µs), clamped to [1 µs, 1 h] as
/// [`LatencyHistogram::record`] clamps it. Through i64, which x86 converts in one
/// instruction (u64 takes a dozen); the mask lets the index need no bounds check.
#[inline]
fn index_of_latency(latency_us: f64) -> usize {
    let v = (latency_us as i64).clamp(1, HIGHEST_US as i64) as u64;
    index_of(v) & COUNTS_MASK
}

/// HdrHistogram's `index_for` with the bounds above (unit magnitude 0).
#[inline]
fn index_of(v: u64) -> usize {
    let bucket = LEADING_ZERO_COUNT_BASE - (v | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (v >> bucket) as usize;
    ((bucket as usize + 1) << SUB_BUCKET_HALF_MAGNITUDE) + sub_bucket - SUB_BUCKET_HALF_COUNT
}

/// How many values the bucket at `index` holds (HdrHistogram's `equivalent_range`).
fn bucket_width(index: usize) -> u64 {
    let bucket = (index >> SUB_BUCKET_HALF_MAGNITUDE).saturating_sub(1);
    1 << bucket
}

/// The lowest value of the bucket at `index` (HdrHistogram's `value_for`).
fn value_at(index: usize) -> u64 {
    let mut bucket = (index >> SUB_BUCKET_HALF_MAGNITUDE) as i32 - 1;
    let mut sub_bucket = (index & (SUB_BUCKET_HALF_COUNT - 1)) + SUB_BUCKET_HALF_COUNT;
    if bucket < 0 {
        sub_bucket -= SUB_BUCKET_HALF_COUNT;
        bucket = 0;
    }
    (sub_bucket as u64) << bucket
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
    fn a_header_asking_for_more_than_its_bytes_hold_is_refused_before_allocating() {
        use std::io::Write;
        // A V2 header claiming a 4 GiB payload, deflated: 56 base64 characters.
        let mut v2 = Vec::new();
        v2.extend(V2_COOKIE.to_be_bytes());
        v2.extend(u32::MAX.to_be_bytes());
        v2.extend(0u32.to_be_bytes());
        v2.extend(3u32.to_be_bytes());
        v2.extend(1u64.to_be_bytes());
        v2.extend(HIGHEST_US.to_be_bytes());
        v2.extend(1f64.to_be_bytes());
        let deflate = |v2: &[u8]| {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
            z.write_all(v2).unwrap();
            let body = z.finish().unwrap();
            let mut bytes = V2_DEFLATE_COOKIE.to_be_bytes().to_vec();
            bytes.extend((body.len() as u32).to_be_bytes());
            bytes.extend(body);
            base64_encode(&bytes)
        };
        let text = deflate(&v2);
        assert!(text.len() < 80, "{text}");
        let err = LatencyHistogram::from_base64(&text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than the histogram can hold"), "{err}");
        // 5 significant digits: a counts array of 128 MiB.
        v2[12..16].copy_from_slice(&5u32.to_be_bytes());
        v2[4..8].copy_from_slice(&16u32.to_be_bytes());
        let err = LatencyHistogram::from_base64(&deflate(&v2))
            .unwrap_err()
            .to_string();
        assert!(err.contains("5 significant digits"), "{err}");
        // Undeflated V2 is held to its own length.
        v2[12..16].copy_from_slice(&3u32.to_be_bytes());
        v2[4..8].copy_from_slice(&1000u32.to_be_bytes());
        assert!(LatencyHistogram::from_base64(&base64_encode(&v2)).is_err());
    }

    #[test]
    fn counts_between_bounds_split_at_bucket_starts() {
        let mut counts = LatencyCounts::new();
        for us in [0.5, 99.0, 100.0, 100.9, 1_999.0, 5_000.0, 5_003.0, 9e9] {
            counts.record(us);
        }
        // 0.5 is clamped to 1 µs and 9e9 to an hour; 5,000-5,003 µs share a bucket.
        assert_eq!(counts.counts_between(&[100, 5_000, 5_004]), [2, 3, 2, 1]);
        assert_eq!(counts.counts_between(&[]), [8]);
        assert_eq!(LatencyCounts::new().counts_between(&[10]), [0, 0]);
    }

    #[test]
    fn counts_become_the_histogram_hdrhistogram_itself_records() {
        let mut counts = LatencyCounts::new();
        let mut direct = LatencyHistogram::new();
        let mut v = 0.3;
        while v < 5e9 {
            for x in [v, v * 1.0007, v * 3.3] {
                counts.record(x);
                direct.record(x);
            }
            v *= 1.37;
        }
        assert_eq!(counts.to_histogram(), direct);
        // Every bucket boundary of the first buckets maps back to itself.
        for i in 0..5 * SUB_BUCKET_HALF_COUNT {
            let value = value_at(i);
            assert_eq!(index_of(value), i, "index {i}, value {value}");
        }
        let qs = [0.5, 0.9, 0.99, 0.999];
        let direct_q = qs.map(|q| direct.value_at_quantile(q));
        assert_eq!(counts.value_at_quantiles(qs), Some(direct_q));
        let mut few = LatencyCounts::new();
        for v in [7.0, 7.0, 90_000.0, 1e7] {
            few.record(v);
        }
        let h = few.to_histogram();
        assert_eq!(
            few.value_at_quantiles(qs),
            Some(qs.map(|q| h.value_at_quantile(q)))
        );
        counts.reset();
        assert!(counts.is_empty());
        assert_eq!(counts.value_at_quantiles(qs), None);
        assert_eq!(counts.to_histogram(), LatencyHistogram::new());
    }

    #[test]
    fn an_empty_histogram_says_so() {
        let p = LatencyHistogram::new().percentiles(&[50.0]);
        let mut text = String::new();
        p.render(&mut text, "");
        assert_eq!(text, "no successful transaction\n");
    }
}
