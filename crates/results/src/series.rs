//! The per-second time series of a run: what each second of the run did, kept as exact
//! counters (so seconds of several runs add up) plus that second's latency percentiles.
//! About 200 bytes a second: a 10-hour run keeps 7 MB.

use crate::histogram::LatencyHistogram;
use crate::stats::TxOutcome;
use crate::stats::{SimpleStats, StatsData};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

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

/// Builds the series from transactions as they arrive, filing each in the second it
/// ended in. Records come in batches from many clients, so a few seconds stay open
/// for latecomers; one later than that counts in the oldest open second.
#[derive(Debug, Clone)]
pub struct SeriesRecorder {
    /// The run clock µs at which second 0 starts.
    origin_us: i64,
    /// The second of `open[0]`.
    first_open: i64,
    open: VecDeque<(StatsData, LatencyHistogram)>,
    seconds: Vec<Second>,
}

/// How many seconds stay open for late records (batches are at most 10 ms old, and
/// the collector looks every 20 ms).
const OPEN_SECONDS: usize = 3;

impl SeriesRecorder {
    pub fn new(origin_us: i64) -> SeriesRecorder {
        SeriesRecorder {
            origin_us,
            first_open: 0,
            open: VecDeque::with_capacity(OPEN_SECONDS + 1),
            seconds: Vec::new(),
        }
    }

    /// Counts one transaction that ended at `end_us` on the run clock.
    #[inline]
    pub fn record(
        &mut self,
        end_us: i64,
        outcome: TxOutcome,
        latency_us: f64,
        lag_us: f64,
        tries: u32,
        throttled: bool,
    ) {
        let t = ((end_us - self.origin_us).max(0)) / 1_000_000;
        while self.first_open + (self.open.len() as i64) <= t {
            if self.open.len() == OPEN_SECONDS {
                self.close_oldest();
            }
            self.open
                .push_back((StatsData::default(), LatencyHistogram::new()));
        }
        let index = (t - self.first_open).max(0) as usize;
        let (stats, latencies) = &mut self.open[index];
        stats.accum(outcome, latency_us, lag_us, tries, throttled);
        if outcome == TxOutcome::Success {
            latencies.record(latency_us);
        }
    }

    fn close_oldest(&mut self) {
        if let Some((stats, latencies)) = self.open.pop_front() {
            self.seconds
                .push(Second::new(self.first_open, &stats, &latencies));
            self.first_open += 1;
        }
    }

    /// The whole series up to the second holding `end_us` (empty seconds are zeros,
    /// so a stall shows, not a gap).
    pub fn finish(mut self, end_us: i64) -> Vec<Second> {
        let last = ((end_us - self.origin_us).max(0)) / 1_000_000;
        while self.first_open + (self.open.len() as i64) <= last {
            self.open
                .push_back((StatsData::default(), LatencyHistogram::new()));
        }
        while !self.open.is_empty() {
            self.close_oldest();
        }
        self.seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_second_holds_what_ended_in_it_and_empty_seconds_are_zeros() {
        let ok = TxOutcome::Success;
        let mut r = SeriesRecorder::new(1_000);
        r.record(1_000 + 200_000, ok, 100.0, 0.0, 1, false);
        r.record(1_000 + 2_500_000, ok, 70.0, 0.0, 1, false);
        // A latecomer of second 0, after second 2 opened.
        r.record(1_000 + 900_000, ok, 300.0, 0.0, 1, false);
        r.record(1_000 + 3_500_000, ok, 50.0, 0.0, 1, false);
        r.record(
            1_000 + 3_600_000,
            TxOutcome::DeadlockFailure,
            0.0,
            0.0,
            2,
            false,
        );
        let s = r.finish(1_000 + 4_100_000);
        assert_eq!(s.len(), 5);
        assert_eq!((s[0].t, s[0].transactions), (0, 2));
        assert_eq!(s[0].latency.mean(), 200.0);
        assert_eq!(s[0].quantiles_us.unwrap()[0], 100);
        assert_eq!((s[1].transactions, s[1].quantiles_us), (0, None));
        assert_eq!((s[2].transactions, s[3].transactions), (1, 1));
        assert_eq!((s[3].deadlock_failures, s[3].retries), (1, 1));
        assert_eq!((s[4].t, s[4].transactions), (4, 0));
    }
}
