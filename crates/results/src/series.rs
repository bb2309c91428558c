//! The per-second time series of a run: what each second of the run did, kept as exact
//! counters (so seconds of several runs add up) plus that second's latency percentiles.
//! About 200 bytes a second: a 10-hour run keeps 7 MB.

use crate::histogram::{LatencyCounts, LatencyHistogram};
use crate::stats::{Counts, SimpleStats, StatsData};
use crate::stats::{TxOutcome, TxRecord};
use serde::{Deserialize, Serialize};

/// The percentiles every second records, as fractions.
pub const SECOND_QUANTILES: [f64; 4] = [0.50, 0.90, 0.99, 0.999];

/// One second of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// Seconds since the clients started: this entry covers `[t, t + 1)`.
    pub t: i64,
    /// Its transactions by outcome, and their retries (named as the run's totals are;
    /// schema 2's `transactions` and `other_failures` still read).
    #[serde(flatten)]
    pub counts: Counts,
    /// Latency of the successful transactions, µs.
    pub latency: SimpleStats,
    /// Schedule lag under `-R`, µs.
    pub lag: SimpleStats,
    /// Latency µs at [`SECOND_QUANTILES`]; `None` in a second with no success.
    pub quantiles_us: Option<[u64; 4]>,
    /// How long the second really was, when the run ended inside it (the last second
    /// of a `-t` run; a `-T` run's seconds are whole); absent for a whole one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_s: Option<f64>,
}

impl Second {
    /// The second `t` from the counters that moved in it and its latencies.
    pub fn new(t: i64, delta: &StatsData, latencies: &LatencyHistogram) -> Second {
        let quantiles_us = (!latencies.is_empty())
            .then(|| SECOND_QUANTILES.map(|q| latencies.value_at_quantile(q)));
        Second::with_quantiles(t, delta, quantiles_us)
    }

    /// The second `t` from its counters and its latencies at [`SECOND_QUANTILES`].
    pub fn with_quantiles(t: i64, delta: &StatsData, quantiles_us: Option<[u64; 4]>) -> Second {
        Second {
            t,
            counts: delta.counts,
            latency: delta.latency,
            lag: delta.lag,
            quantiles_us,
            length_s: None,
        }
    }

    /// Failures of every kind.
    pub fn failures(&self) -> i64 {
        self.counts.failures()
    }

    /// Adds the same second of another worker of the run: counters and latency stats
    /// exactly; a second keeps four percentiles and no histogram, so the sum's are the
    /// highest of the two (an upper bound, exact when one side had all of them).
    pub fn merge(&mut self, other: &Second) {
        self.counts.merge(&other.counts);
        self.latency.merge(&other.latency);
        self.lag.merge(&other.lag);
        self.quantiles_us = match (self.quantiles_us, other.quantiles_us) {
            (Some(a), Some(b)) => Some(std::array::from_fn(|k| a[k].max(b[k]))),
            (a, b) => a.or(b),
        };
        // The workers' last seconds: as long as the longest (a whole one is whole).
        self.length_s = self.length_s.zip(other.length_s).map(|(a, b)| a.max(b));
    }
}

/// What one open second adds up per transaction: pgbench's counters without the
/// latency minimum and maximum, which the second's latency buckets give when it
/// closes (to the histogram's 3 significant digits). Cheaper than a `StatsData` (the
/// collector already keeps two of those per transaction).
#[derive(Debug, Clone, Copy, Default)]
struct SecondSums {
    counts: Counts,
    latency_sum: f64,
    latency_sum2: f64,
    lag: SimpleStats,
}

impl SecondSums {
    #[inline]
    fn add(&mut self, outcome: TxOutcome, latency: f64, lag: f64, tries: u32, throttled: bool) {
        self.counts.add(outcome, tries);
        if outcome == TxOutcome::Success {
            self.latency_sum += latency;
            self.latency_sum2 += latency * latency;
            if throttled {
                self.lag.add(lag);
            }
        }
    }

    /// Adds what the run's totals gained over a batch (`before` to `after`) that lies
    /// wholly in this second. Not under `-R`: a difference has no lag bounds.
    #[inline]
    fn add_change(&mut self, before: &StatsData, after: &StatsData) {
        self.counts.merge(&after.counts.since(&before.counts));
        self.latency_sum += after.latency.sum - before.latency.sum;
        self.latency_sum2 += after.latency.sum2 - before.latency.sum2;
    }

    /// The second's `StatsData`, its latency bounds from its buckets.
    fn to_stats(self, latencies: &LatencyCounts) -> StatsData {
        let (min, max) = latencies.bounds().unwrap_or((0, 0));
        StatsData {
            counts: self.counts,
            latency: SimpleStats {
                count: self.counts.cnt,
                min: min as f64,
                max: max as f64,
                sum: self.latency_sum,
                sum2: self.latency_sum2,
            },
            lag: self.lag,
        }
    }
}

/// Builds the series from transactions as they arrive, filing each in the second it
/// ended in. Records come in batches from many clients, so a few seconds stay open
/// for latecomers; one later than that counts in the oldest open second. Almost every
/// record goes to the newest second, which is checked first.
#[derive(Debug, Clone)]
pub struct SeriesRecorder {
    /// The run clock µs at which second 0 starts.
    origin_us: i64,
    /// The second of `open[0]`.
    first_open: i64,
    /// The open seconds, oldest first.
    open: Vec<(SecondSums, LatencyCounts)>,
    /// The run clock span of the newest open second (empty before the first).
    newest: (i64, i64),
    seconds: Vec<Second>,
    /// The closed seconds' latencies added up (the run's), when kept.
    run_latencies: Option<LatencyCounts>,
    /// Counts of closed seconds, cleared, for the next ones.
    spare: Vec<LatencyCounts>,
    /// The last second there is (`-T`): what ends later, the transactions still
    /// running at the deadline, counts in it.
    last_second: i64,
}

/// How many seconds stay open for late records (batches are at most 10 ms old, and
/// the collector looks every 20 ms).
const OPEN_SECONDS: usize = 3;

impl SeriesRecorder {
    pub fn new(origin_us: i64) -> SeriesRecorder {
        SeriesRecorder {
            origin_us,
            first_open: 0,
            open: Vec::with_capacity(OPEN_SECONDS + 1),
            newest: (origin_us, origin_us),
            seconds: Vec::new(),
            run_latencies: None,
            spare: Vec::new(),
            last_second: i64::MAX,
        }
    }

    /// A run of `seconds` (`-T`, counted from the origin) has that many seconds: the
    /// transactions that end after its deadline count in its last second, instead of
    /// a few milliseconds' second of their own, drawn as tps falling to about 0.
    pub fn lasting(mut self, seconds: Option<i64>) -> SeriesRecorder {
        if let Some(s) = seconds.filter(|&s| s > 0) {
            self.last_second = s - 1;
        }
        self
    }

    /// A recorder that also adds up the run's latencies (second by second, so that
    /// each transaction's latency is counted once).
    pub fn keeping_run_latencies(origin_us: i64) -> SeriesRecorder {
        SeriesRecorder {
            run_latencies: Some(LatencyCounts::new()),
            ..SeriesRecorder::new(origin_us)
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
        let index = if end_us >= self.newest.0 && end_us < self.newest.1 {
            self.open.len() - 1
        } else {
            self.open_second_of(end_us)
        };
        let (sums, latencies) = &mut self.open[index];
        sums.add(outcome, latency_us, lag_us, tries, throttled);
        if outcome == TxOutcome::Success {
            latencies.record(latency_us);
        }
    }

    /// Counts a client's batch. A batch is one client's transactions in the order they
    /// ended, so when its first and last fall in the newest second, all of it does:
    /// one look-up for the batch, and (without `-R`) its counters are what the run's
    /// totals gained over it, `before` to `after`, which the caller has just computed.
    #[inline]
    pub fn record_batch(
        &mut self,
        batch: &[TxRecord],
        throttled: bool,
        totals: (&StatsData, &StatsData),
    ) {
        let (Some(first), Some(last)) = (batch.first(), batch.last()) else {
            return;
        };
        if first.end_us < self.newest.0 || last.end_us >= self.newest.1 {
            for r in batch {
                self.record(r.end_us, r.outcome, r.latency, r.lag, r.tries, throttled);
            }
            return;
        }
        let Some((sums, latencies)) = self.open.last_mut() else {
            return;
        };
        if throttled {
            for r in batch {
                sums.add(r.outcome, r.latency, r.lag, r.tries, throttled);
            }
        } else {
            sums.add_change(totals.0, totals.1);
        }
        latencies.record_successes(batch);
    }

    /// The index in `open` of the second holding `end_us`, opening seconds (and
    /// closing the oldest) as needed.
    fn open_second_of(&mut self, end_us: i64) -> usize {
        let t = (((end_us - self.origin_us).max(0)) / 1_000_000).min(self.last_second);
        while self.first_open + (self.open.len() as i64) <= t {
            if self.open.len() == OPEN_SECONDS {
                self.close_oldest();
            }
            let counts = self.spare.pop().unwrap_or_default();
            self.open.push((SecondSums::default(), counts));
        }
        let newest = self.first_open + self.open.len() as i64 - 1;
        let start = self.origin_us + newest * 1_000_000;
        self.newest = (start, start + 1_000_000);
        (t - self.first_open).max(0) as usize
    }

    fn close_oldest(&mut self) {
        if self.open.is_empty() {
            return;
        }
        let (sums, mut latencies) = self.open.remove(0);
        let quantiles = latencies.value_at_quantiles(SECOND_QUANTILES);
        let stats = sums.to_stats(&latencies);
        self.seconds
            .push(Second::with_quantiles(self.first_open, &stats, quantiles));
        if let Some(run) = &mut self.run_latencies {
            run.add_counts(&latencies);
        }
        latencies.reset();
        self.spare.push(latencies);
        self.first_open += 1;
    }

    /// The whole series up to the second holding `end_us` (empty seconds are zeros,
    /// so a stall shows, not a gap).
    pub fn finish(self, end_us: i64) -> Vec<Second> {
        self.finish_with_run_latencies(end_us).0
    }

    /// [`SeriesRecorder::finish`], and the run's latencies when they were kept.
    pub fn finish_with_run_latencies(
        mut self,
        end_us: i64,
    ) -> (Vec<Second>, Option<LatencyCounts>) {
        let last = (((end_us - self.origin_us).max(0)) / 1_000_000).min(self.last_second);
        while self.first_open + (self.open.len() as i64) <= last {
            let counts = self.spare.pop().unwrap_or_default();
            self.open.push((SecondSums::default(), counts));
        }
        while !self.open.is_empty() {
            self.close_oldest();
        }
        // Within a millisecond of a whole second counts as whole.
        let length = (end_us - self.origin_us - last * 1_000_000) as f64 / 1e6;
        if let Some(s) = self.seconds.last_mut().filter(|_| length < 0.999) {
            // An end on the second's very start still leaves it a length.
            s.length_s = Some(length.max(1e-6));
        }
        (self.seconds, self.run_latencies)
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
        assert_eq!((s[0].t, s[0].counts.cnt), (0, 2));
        assert_eq!(s[0].latency.mean(), 200.0);
        // The bounds come from the buckets: 100 and 300 µs are exact at 3 digits.
        assert_eq!((s[0].latency.min, s[0].latency.max), (100.0, 300.0));
        assert_eq!(s[0].quantiles_us.unwrap()[0], 100);
        assert_eq!((s[1].counts.cnt, s[1].quantiles_us), (0, None));
        assert_eq!((s[2].counts.cnt, s[3].counts.cnt), (1, 1));
        assert_eq!((s[3].counts.deadlock_failures, s[3].counts.retries), (1, 1));
        assert_eq!((s[4].t, s[4].counts.cnt), (4, 0));
    }

    /// #22: the partial last second was drawn and counted as a whole one.
    #[test]
    fn a_partial_last_second_has_its_length_and_a_t_runs_drain_its_last_second() {
        let ok = TxOutcome::Success;
        // -t: the run ends 0.25 s into its second second, which says so.
        let mut r = SeriesRecorder::new(0);
        r.record(500_000, ok, 100.0, 0.0, 1, false);
        r.record(1_200_000, ok, 100.0, 0.0, 1, false);
        let s = r.finish(1_250_000);
        assert_eq!((s[0].length_s, s[1].length_s), (None, Some(0.25)));
        let points =
            crate::timeline::Timeline::from_seconds(crate::timeline::TimelineSource::Series, &s)
                .points;
        assert_eq!((points[1].length_s, points[1].tps), (0.25, 4.0));
        // -T 2: what ends after the deadline counts in the last of its 2 seconds.
        let mut r = SeriesRecorder::new(0).lasting(Some(2));
        r.record(1_500_000, ok, 100.0, 0.0, 1, false);
        r.record(2_003_000, ok, 100.0, 0.0, 1, false);
        let s = r.finish(2_004_000);
        assert_eq!(s.len(), 2);
        assert_eq!((s[1].t, s[1].counts.cnt, s[1].length_s), (1, 2, None));
    }

    #[test]
    fn a_batch_counts_as_its_transactions_one_by_one() {
        let tx = |end_us: i64, outcome, latency: f64, tries| TxRecord {
            script: 0,
            outcome,
            latency,
            lag: 5.0,
            tries,
            end_us,
        };
        // One client's batches in order: within the newest second, across a second,
        // and a failure and a retry among them.
        let batches = [
            vec![
                tx(10, TxOutcome::Success, 100.0, 1),
                tx(20, TxOutcome::Success, 90.0, 2),
            ],
            vec![
                tx(500_000, TxOutcome::DeadlockFailure, 0.0, 3),
                tx(600_000, TxOutcome::Success, 7_000.0, 1),
            ],
            vec![
                tx(900_000, TxOutcome::Success, 40.0, 1),
                tx(1_200_000, TxOutcome::Skipped, 0.0, 1),
            ],
            vec![tx(1_300_000, TxOutcome::Success, 12.5, 1)],
        ];
        for throttled in [true, false] {
            let mut one_by_one = SeriesRecorder::keeping_run_latencies(0);
            let mut batched = SeriesRecorder::keeping_run_latencies(0);
            let mut total = StatsData::default();
            for b in &batches {
                let before = total;
                for r in b {
                    one_by_one.record(r.end_us, r.outcome, r.latency, r.lag, r.tries, throttled);
                    total.accum(r.outcome, r.latency, r.lag, r.tries, throttled);
                }
                batched.record_batch(b, throttled, (&before, &total));
            }
            let (a, ra) = one_by_one.finish_with_run_latencies(1_400_000);
            let (b, rb) = batched.finish_with_run_latencies(1_400_000);
            assert_eq!(a, b, "throttled: {throttled}");
            assert_eq!(a.iter().map(|s| s.counts.cnt).sum::<i64>(), 5);
            assert_eq!(ra.unwrap().to_histogram(), rb.unwrap().to_histogram());
        }
    }
}
