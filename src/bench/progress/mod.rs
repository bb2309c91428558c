//! The `progress:` line of `-P` (pgbench.c `printProgressReport`): figures of the
//! interval between two cumulative snapshots of all clients' counters, and the
//! schedule the lines are due on. Pure: the time is passed in. Which thread prints
//! the line, and from which counters, is [`board`]'s business.

use pgbench_results::StatsData;
use pgbench_script::cnum::fmt_f;

pub mod board;
pub use board::ProgressBoard;

/// What the progress line shows besides the counters.
#[derive(Debug, Clone, Copy)]
pub struct ProgressFormat {
    /// `--progress-timestamp`: Unix epoch seconds instead of seconds since start.
    pub timestamp: bool,
    pub throttled: bool,
    pub latency_limit: bool,
    /// `--max-tries` is not 1: the line counts retries.
    pub show_retries: bool,
}

/// The line (with newline) for the interval from `last` (taken `interval_us` earlier)
/// to `cur`. `since_start_s` is the time since the run started; `epoch_s` the Unix time.
pub fn progress_line(
    fmt: ProgressFormat,
    cur: &StatsData,
    last: &StatsData,
    interval_us: f64,
    since_start_s: f64,
    epoch_s: f64,
) -> String {
    let cnt = cur.counts.cnt - last.counts.cnt;
    let tps = 1_000_000.0 * cnt as f64 / interval_us;
    let (latency, stddev, lag) = if cnt > 0 {
        let n = cnt as f64;
        let latency = 0.001 * (cur.latency.sum - last.latency.sum) / n;
        let sqlat = (cur.latency.sum2 - last.latency.sum2) / n;
        let stddev = 0.001 * (sqlat - 1_000_000.0 * latency * latency).sqrt();
        let lag = 0.001 * (cur.lag.sum - last.lag.sum) / n;
        (latency, stddev, lag)
    } else {
        (0.0, 0.0, 0.0)
    };
    let failures = cur.failures() - last.failures();
    let when = if fmt.timestamp {
        format!("{} s", fmt_f(epoch_s, 3))
    } else {
        format!("{} s", fmt_f(since_start_s, 1))
    };
    let mut line = format!(
        "progress: {when}, {} tps, lat {} ms stddev {}, {failures} failed",
        fmt_f(tps, 1),
        fmt_f(latency, 3),
        fmt_f(stddev, 3)
    );
    if fmt.throttled {
        line.push_str(&format!(", lag {} ms", fmt_f(lag, 3)));
        if fmt.latency_limit {
            line.push_str(&format!(
                ", {} skipped",
                cur.counts.skipped - last.counts.skipped
            ));
        }
    }
    if fmt.show_retries {
        line.push_str(&format!(
            ", {} retried, {} retries",
            cur.counts.retried - last.counts.retried,
            cur.counts.retries - last.counts.retries
        ));
    }
    line.push('\n');
    line
}

/// The `-P` schedule: as in pgbench's `threadRun`, reports are due every period from
/// the start of the client threads (so the first interval includes the connections).
#[derive(Debug)]
pub struct ProgressClock {
    period_us: i64,
    format: ProgressFormat,
    start: i64,
    next: i64,
    last_at: i64,
    last: StatsData,
}

impl ProgressClock {
    /// Lines every `period_us` from `start`.
    pub fn new(period_us: i64, format: ProgressFormat, start: i64) -> ProgressClock {
        ProgressClock {
            period_us,
            format,
            start,
            next: start + period_us,
            last_at: start,
            last: StatsData::default(),
        }
    }

    /// When the next line is due, µs on the run clock.
    pub fn next_at(&self) -> i64 {
        self.next
    }

    /// The line due at `now`, if one is.
    pub fn tick(&mut self, now: i64, total: &StatsData, epoch_shift_us: i64) -> Option<String> {
        if now < self.next {
            return None;
        }
        let line = progress_line(
            self.format,
            total,
            &self.last,
            (now - self.last_at) as f64,
            (now - self.start) as f64 / 1e6,
            (now + epoch_shift_us) as f64 / 1e6,
        );
        self.last = *total;
        self.last_at = now;
        while now >= self.next {
            self.next += self.period_us;
        }
        Some(line)
    }

    /// The measured part begins at `at`: its lines count from there.
    pub fn restart(&mut self, at: i64) {
        self.start = at;
        self.next = at + self.period_us;
        self.last_at = at;
        self.last = StatsData::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgbench_results::TxOutcome;

    fn fmt() -> ProgressFormat {
        ProgressFormat {
            timestamp: false,
            throttled: false,
            latency_limit: false,
            show_retries: false,
        }
    }

    #[test]
    fn an_idle_interval_prints_zeros() {
        let s = StatsData::default();
        assert_eq!(
            progress_line(fmt(), &s, &s, 1e6, 1.0, 0.0),
            "progress: 1.0 s, 0.0 tps, lat 0.000 ms stddev 0.000, 0 failed\n"
        );
    }

    #[test]
    fn interval_figures_and_optional_fields() {
        let last = StatsData::default();
        let mut cur = StatsData::default();
        cur.accum(TxOutcome::Success, 1000.0, 100.0, 1, true);
        cur.accum(TxOutcome::Success, 3000.0, 300.0, 2, true);
        cur.accum(TxOutcome::Skipped, 0.0, 0.0, 1, true);
        cur.accum(TxOutcome::SerializationFailure, 0.0, 0.0, 3, true);
        let f = ProgressFormat {
            timestamp: true,
            throttled: true,
            latency_limit: true,
            show_retries: true,
        };
        assert_eq!(
            progress_line(f, &cur, &last, 500_000.0, 2.0, 1796028487.2374),
            "progress: 1796028487.237 s, 4.0 tps, lat 2.000 ms stddev 1.000, 1 failed, \
             lag 0.200 ms, 1 skipped, 2 retried, 3 retries\n"
        );
    }
}
