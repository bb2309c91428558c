//! The per-second time series of a run: what each second of the run did, kept as exact
//! counters (so seconds of several runs add up) plus that second's latency percentiles.
//! About 200 bytes a second: a 10-hour run keeps 7 MB.

use crate::histogram::{LatencyCounts, LatencyHistogram};
use crate::stats::{SimpleStats, StatsData};
use crate::stats::{TxOutcome, TxRecord};
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
    /// `--continue-on-error`'s other SQL failures (absent from older files).
    #[serde(default)]
    pub other_failures: i64,
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
            transactions: delta.cnt,
            failures: delta.failures(),
            serialization_failures: delta.serialization_failures,
            deadlock_failures: delta.deadlock_failures,
            other_failures: delta.other_sql_failures,
            retried: delta.retried,
            retries: delta.retries,
            skipped: delta.skipped,
            latency: delta.latency,
            lag: delta.lag,
            quantiles_us,
            length_s: None,
        }
    }
}

/// What one open second adds up per transaction: pgbench's counters without the
/// latency minimum and maximum, which the second's latency buckets give when it
/// closes (to the histogram's 3 significant digits). Cheaper than a `StatsData` (the
/// collector already keeps two of those per transaction).
#[derive(Debug, Clone, Copy, Default)]
struct SecondSums {
    cnt: i64,
    skipped: i64,
    serialization_failures: i64,
    deadlock_failures: i64,
    other_failures: i64,
    retried: i64,
    retries: i64,
    latency_sum: f64,
    latency_sum2: f64,
    lag: SimpleStats,
}

impl SecondSums {
    #[inline]
    fn add(&mut self, outcome: TxOutcome, latency: f64, lag: f64, tries: u32, throttled: bool) {
        if tries > 1 {
            self.retries += i64::from(tries - 1);
            self.retried += 1;
        }
        match outcome {
            TxOutcome::Success => {
                self.cnt += 1;
                self.latency_sum += latency;
                self.latency_sum2 += latency * latency;
                if throttled {
                    self.lag.add(lag);
                }
            }
            TxOutcome::Skipped => self.skipped += 1,
            TxOutcome::SerializationFailure => self.serialization_failures += 1,
            TxOutcome::DeadlockFailure => self.deadlock_failures += 1,
            TxOutcome::OtherFailure => self.other_failures += 1,
        }
    }

    /// Adds what the run's totals gained over a batch (`before` to `after`) that lies
    /// wholly in this second. Not under `-R`: a difference has no lag bounds.
    #[inline]
    fn add_change(&mut self, before: &StatsData, after: &StatsData) {
        self.cnt += after.cnt - before.cnt;
        self.skipped += after.skipped - before.skipped;
        self.serialization_failures += after.serialization_failures - before.serialization_failures;
        self.deadlock_failures += after.deadlock_failures - before.deadlock_failures;
        self.other_failures += after.other_sql_failures - before.other_sql_failures;
        self.retried += after.retried - before.retried;
        self.retries += after.retries - before.retries;
        self.latency_sum += after.latency.sum - before.latency.sum;
        self.latency_sum2 += after.latency.sum2 - before.latency.sum2;
    }

    /// The second's `StatsData`, its latency bounds from its buckets.
    fn to_stats(self, latencies: &LatencyCounts) -> StatsData {
        let (min, max) = latencies.bounds().unwrap_or((0, 0));
        StatsData {
            cnt: self.cnt,
            skipped: self.skipped,
            retries: self.retries,
            retried: self.retried,
            serialization_failures: self.serialization_failures,
            deadlock_failures: self.deadlock_failures,
            other_sql_failures: self.other_failures,
            latency: SimpleStats {
                count: self.cnt,
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
        assert_eq!((s[0].t, s[0].transactions), (0, 2));
        assert_eq!(s[0].latency.mean(), 200.0);
        // The bounds come from the buckets: 100 and 300 µs are exact at 3 digits.
        assert_eq!((s[0].latency.min, s[0].latency.max), (100.0, 300.0));
        assert_eq!(s[0].quantiles_us.unwrap()[0], 100);
        assert_eq!((s[1].transactions, s[1].quantiles_us), (0, None));
        assert_eq!((s[2].transactions, s[3].transactions), (1, 1));
        assert_eq!((s[3].deadlock_failures, s[3].retries), (1, 1));
        assert_eq!((s[4].t, s[4].transactions), (4, 0));
    }

    /// #22: the partial last second was drawn and counted as a whole one.
    #[test]
    fn issue_22_a_partial_last_second_has_its_length_and_a_t_runs_drain_its_last_second() {
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
        assert_eq!((s[1].t, s[1].transactions, s[1].length_s), (1, 2, None));
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
            assert_eq!(a.iter().map(|s| s.transactions).sum::<i64>(), 5);
            assert_eq!(ra.unwrap().to_histogram(), rb.unwrap().to_histogram());
        }
    }
}
