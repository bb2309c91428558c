//! The per-second time series of a run: what each second of the run did, kept as exact
//! counters (so seconds of several runs add up) plus that second's latency percentiles.
//! About 200 bytes a second: a 10-hour run keeps 7 MB.

use crate::histogram::LatencyHistogram;
use crate::stats::{SimpleStats, StatsData};
use serde::{Deserialize, Serialize};

/// The percentiles every second records, as fractions.
pub const SECOND_QUANTILES: [f64; 4] = [0.50, 0.90, 0.99, 0.999];

/// One second of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// Seconds since the clients started: this entry covers `[t, t + 1)`.
    pub t: i64,
    /// Successful transactions.
    pub transactions: i64,
    pub failures: i64,
    pub serialization_failures: i64,
    pub deadlock_failures: i64,
    /// Transactions that needed more than one try, and the tries beyond the first.
    pub retried: i64,
    pub retries: i64,
    /// `-R -L` transactions skipped.
    pub skipped: i64,
    /// Latency of the successful transactions, µs.
    pub latency: SimpleStats,
    /// Schedule lag under `-R`, µs.
    pub lag: SimpleStats,
    /// Latency µs at [`SECOND_QUANTILES`]; `None` in a second with no success.
    pub quantiles_us: Option<[u64; 4]>,
}

impl Second {
    /// The second `t` from the counters that moved in it and its latencies.
    pub fn new(t: i64, delta: &StatsData, latencies: &LatencyHistogram) -> Second {
        let quantiles_us = (!latencies.is_empty())
            .then(|| SECOND_QUANTILES.map(|q| latencies.value_at_quantile(q)));
        Second {
            t,
            transactions: delta.cnt,
            failures: delta.failures(),
            serialization_failures: delta.serialization_failures,
            deadlock_failures: delta.deadlock_failures,
            retried: delta.retried,
            retries: delta.retries,
            skipped: delta.skipped,
            latency: delta.latency,
            lag: delta.lag,
            quantiles_us,
        }
    }
}

/// Builds the series from a stream of transactions, one [`Second`] as each ends.
#[derive(Debug, Clone)]
pub struct SeriesRecorder {
    /// The run clock µs at which second 0 starts.
    origin_us: i64,
    current: i64,
    delta: StatsData,
    latencies: LatencyHistogram,
    seconds: Vec<Second>,
}

impl SeriesRecorder {
    pub fn new(origin_us: i64) -> SeriesRecorder {
        SeriesRecorder {
            origin_us,
            current: 0,
            delta: StatsData::default(),
            latencies: LatencyHistogram::new(),
            seconds: Vec::new(),
        }
    }

    /// Moves to the second holding `now_us`, closing the seconds before it (empty
    /// seconds too: a stall shows as zeros, not as a gap).
    pub fn advance(&mut self, now_us: i64) {
        let t = ((now_us - self.origin_us).max(0)) / 1_000_000;
        while self.current < t {
            self.close();
        }
    }

    /// Counts one transaction in the current second.
    #[inline]
    pub fn record(&mut self, one: &StatsData, latency_us: Option<f64>) {
        self.delta.merge(one);
        if let Some(l) = latency_us {
            self.latencies.record(l);
        }
    }

    fn close(&mut self) {
        self.seconds
            .push(Second::new(self.current, &self.delta, &self.latencies));
        self.delta = StatsData::default();
        self.latencies.reset();
        self.current += 1;
    }

    /// The whole series; a last partial second is kept when anything happened in it.
    pub fn finish(mut self) -> Vec<Second> {
        if self.delta.total() > 0 || self.delta.retries > 0 {
            self.close();
        }
        self.seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::TxOutcome;

    fn success(latency: f64) -> StatsData {
        let mut s = StatsData::default();
        s.accum(TxOutcome::Success, latency, 0.0, 1, false);
        s
    }

    #[test]
    fn each_second_holds_what_ended_in_it_and_empty_seconds_are_zeros() {
        let mut r = SeriesRecorder::new(1_000);
        r.advance(1_000 + 200_000);
        r.record(&success(100.0), Some(100.0));
        r.record(&success(300.0), Some(300.0));
        r.advance(1_000 + 3_500_000);
        r.record(&success(50.0), Some(50.0));
        let s = r.finish();
        assert_eq!(s.len(), 4);
        assert_eq!((s[0].t, s[0].transactions), (0, 2));
        assert_eq!(s[0].latency.mean(), 200.0);
        assert_eq!(s[0].quantiles_us.unwrap()[0], 100);
        assert_eq!((s[1].transactions, s[1].quantiles_us), (0, None));
        assert_eq!((s[2].transactions, s[3].transactions), (0, 1));
    }
}
