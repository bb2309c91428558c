//! The counters behind every report line: pgbench's `SimpleStats` and `StatsData`,
//! what one transaction adds to them (`accumStats`), and how two of them merge.
//! Pure: no clocks, no I/O.

use serde::{Deserialize, Serialize};

/// Count, min, max, sum and sum of squares of a series (pgbench's `SimpleStats`),
/// in the unit the caller uses (µs for latencies and lags, s for `-r` commands).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SimpleStats {
    pub count: i64,
    pub min: f64,
    pub max: f64,
    pub sum: f64,
    pub sum2: f64,
}

impl SimpleStats {
    /// `addToSimpleStats`.
    #[inline]
    pub fn add(&mut self, v: f64) {
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        if self.count == 0 || v > self.max {
            self.max = v;
        }
        self.count += 1;
        self.sum += v;
        self.sum2 += v * v;
    }

    /// `mergeSimpleStats`.
    pub fn merge(&mut self, other: &SimpleStats) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 || other.min < self.min {
            self.min = other.min;
        }
        if self.count == 0 || other.max > self.max {
            self.max = other.max;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.sum2 += other.sum2;
    }

    /// The mean, 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// `sqrt(sum2/n - mean^2)`, as pgbench computes the standard deviation.
    pub fn stddev(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.sum / n;
        (self.sum2 / n - mean * mean).sqrt()
    }
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxOutcome {
    /// Committed (possibly after retries).
    Success,
    /// `-R` with `-L`: its slot was already late, so it never ran.
    Skipped,
    /// Failed for good with a serialization failure (SQLSTATE 40001).
    SerializationFailure,
    /// Failed for good with a deadlock (SQLSTATE 40P01).
    DeadlockFailure,
    /// Failed with another SQL error, under pgbench 19's `--continue-on-error`.
    OtherFailure,
    /// `--reconnect`: failed because its connection was lost while a statement that
    /// may commit was in flight (its `COMMIT`, or a statement outside a transaction
    /// block), or after one had committed: the server may have committed its work.
    /// Counted with the other failures, as before, and apart as in doubt.
    InDoubt,
}

/// One finished (or skipped, or failed) transaction.
#[derive(Debug, Clone, Copy)]
pub struct TxRecord {
    pub script: u32,
    pub outcome: TxOutcome,
    /// µs
    pub latency: f64,
    /// µs
    pub lag: f64,
    pub tries: u32,
    /// When it ended, µs on the run clock (the per-second series files it by this).
    pub end_us: i64,
}

/// How many transactions ended which way, and their retries: the counters every set
/// of transactions keeps (the run's, a script's, a second's). What one transaction adds
/// ([`Counts::add`]) and how two sets add up ([`Counts::merge`]) are written here once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counts {
    /// Successful transactions (retried ones included). Schema 1 and 2 called it
    /// `transactions` in a second of the series.
    #[serde(alias = "transactions")]
    pub cnt: i64,
    pub skipped: i64,
    /// Sum of (tries - 1).
    pub retries: i64,
    /// Transactions with at least one retry, successful or not.
    pub retried: i64,
    pub serialization_failures: i64,
    pub deadlock_failures: i64,
    /// pgbench 19's `other_sql_failures` (`--continue-on-error`); absent from older
    /// results files, and called `other_failures` in a second of schema 2.
    #[serde(default, alias = "other_failures")]
    pub other_sql_failures: i64,
    /// Of the failures, those in doubt ([`TxOutcome::InDoubt`], counted in
    /// `other_sql_failures` too): the server may have committed them. Written only
    /// where some were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub in_doubt: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl Counts {
    /// The counting half of `accumStats`: one transaction that ended as `outcome`
    /// after `tries` tries.
    /// Inlined always: the collector adds every transaction twice (the run's and
    /// its script's), and out of line the calls cost more than the counting.
    #[inline(always)]
    pub fn add(&mut self, outcome: TxOutcome, tries: u32) {
        if tries > 1 {
            self.retries += i64::from(tries - 1);
            self.retried += 1;
        }
        match outcome {
            TxOutcome::Success => self.cnt += 1,
            TxOutcome::Skipped => self.skipped += 1,
            TxOutcome::SerializationFailure => self.serialization_failures += 1,
            TxOutcome::DeadlockFailure => self.deadlock_failures += 1,
            TxOutcome::OtherFailure => self.other_sql_failures += 1,
            TxOutcome::InDoubt => {
                self.other_sql_failures += 1;
                self.in_doubt += 1;
            }
        }
    }

    /// The counting half of `mergeStats`.
    #[inline]
    pub fn merge(&mut self, other: &Counts) {
        self.cnt += other.cnt;
        self.skipped += other.skipped;
        self.retries += other.retries;
        self.retried += other.retried;
        self.serialization_failures += other.serialization_failures;
        self.deadlock_failures += other.deadlock_failures;
        self.other_sql_failures += other.other_sql_failures;
        self.in_doubt += other.in_doubt;
    }

    /// What was counted from `earlier` to `self` (counters only grow).
    #[inline]
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            cnt: self.cnt - earlier.cnt,
            skipped: self.skipped - earlier.skipped,
            retries: self.retries - earlier.retries,
            retried: self.retried - earlier.retried,
            serialization_failures: self.serialization_failures - earlier.serialization_failures,
            deadlock_failures: self.deadlock_failures - earlier.deadlock_failures,
            other_sql_failures: self.other_sql_failures - earlier.other_sql_failures,
            in_doubt: self.in_doubt - earlier.in_doubt,
        }
    }

    /// Failures of every kind (`getFailures`).
    pub fn failures(&self) -> i64 {
        self.serialization_failures + self.deadlock_failures + self.other_sql_failures
    }

    /// Every transaction counted: successful, skipped and failed.
    pub fn total(&self) -> i64 {
        self.cnt + self.skipped + self.failures()
    }
}

/// The counters of a set of transactions (pgbench's `StatsData`): its [`Counts`] (in
/// the results file, beside the latency and lag), and the latency and lag of its
/// successful transactions.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct StatsData {
    #[serde(flatten)]
    pub counts: Counts,
    /// Latency of successful transactions, µs.
    pub latency: SimpleStats,
    /// Schedule lag of successful transactions under `-R`, µs.
    pub lag: SimpleStats,
}

impl StatsData {
    /// `accumStats`: one transaction with its latency and lag (µs) and tries.
    #[inline(always)]
    pub fn accum(
        &mut self,
        outcome: TxOutcome,
        latency: f64,
        lag: f64,
        tries: u32,
        throttled: bool,
    ) {
        self.counts.add(outcome, tries);
        if outcome == TxOutcome::Success {
            self.latency.add(latency);
            if throttled {
                self.lag.add(lag);
            }
        }
    }

    /// Failures of every kind (`getFailures`).
    pub fn failures(&self) -> i64 {
        self.counts.failures()
    }

    /// Every transaction counted: successful, skipped and failed.
    pub fn total(&self) -> i64 {
        self.counts.total()
    }

    /// `mergeStats`.
    pub fn merge(&mut self, other: &StatsData) {
        self.counts.merge(&other.counts);
        self.latency.merge(&other.latency);
        self.lag.merge(&other.lag);
    }
}

/// `-r` counters of one command: time of its successful executions (s), and the
/// failures and retries it caused.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CommandStats {
    pub elapsed: SimpleStats,
    pub failures: i64,
    pub retries: i64,
}

impl CommandStats {
    pub fn merge(&mut self, other: &CommandStats) {
        self.elapsed.merge(&other.elapsed);
        self.failures += other.failures;
        self.retries += other.retries;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_stats_track_min_max_mean_and_stddev() {
        let mut s = SimpleStats::default();
        for v in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            s.add(v);
        }
        assert_eq!((s.count, s.min, s.max), (8, 2.0, 9.0));
        assert_eq!(s.mean(), 5.0);
        assert_eq!(s.stddev(), 2.0);
        let mut t = SimpleStats::default();
        t.add(1.0);
        t.merge(&s);
        assert_eq!((t.count, t.min, t.max), (9, 1.0, 9.0));
    }

    #[test]
    fn accum_counts_each_outcome_as_pgbench_does() {
        let mut s = StatsData::default();
        s.accum(TxOutcome::Success, 100.0, 5.0, 1, true);
        s.accum(TxOutcome::Success, 300.0, 7.0, 3, true);
        s.accum(TxOutcome::Skipped, 0.0, 0.0, 1, true);
        s.accum(TxOutcome::SerializationFailure, 0.0, 0.0, 2, true);
        s.accum(TxOutcome::DeadlockFailure, 0.0, 0.0, 1, true);
        assert_eq!(s.counts.cnt, 2);
        assert_eq!(s.counts.skipped, 1);
        assert_eq!(s.failures(), 2);
        assert_eq!(s.total(), 5);
        assert_eq!((s.counts.retried, s.counts.retries), (2, 3));
        assert_eq!(s.latency.mean(), 200.0);
        assert_eq!(s.lag.count, 2);
    }
}
