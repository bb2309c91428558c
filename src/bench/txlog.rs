//! The transaction log of `-l` (pgbench.c `doLog` and `logAgg`): one file per thread
//! (`<prefix>.<pid>` for thread 0, `<prefix>.<pid>.<thread>` for the others), one line
//! per transaction, or with `--aggregate-interval` one line per interval.
//!
//! Clients of one thread share its log (behind the thread's lock), so lines are
//! written in completion order as pgbench writes them.

use super::error::RunError;
use super::plan::{BenchPlan, LogPlan};
use pgbench_results::{StatsData, TxOutcome};
use pgbench_script::prng::Prng;
use std::fmt::Write as _;
use std::io::Write;

/// How much a log buffers before writing, bytes.
const LOG_BUFFER: usize = 64 * 1024;

/// Lines to a file, buffered and written whole buffers at a time. A failed write (a
/// full disk) is not retried line by line: the lines of that buffer are counted lost,
/// the first error is kept to be said once, and later buffers are tried again.
pub struct LineSink<W: Write> {
    out: W,
    buf: Vec<u8>,
    buffered: u64,
    lost: u64,
    error: Option<String>,
}

impl<W: Write> LineSink<W> {
    pub fn new(out: W) -> LineSink<W> {
        LineSink {
            out,
            buf: Vec::with_capacity(LOG_BUFFER),
            buffered: 0,
            lost: 0,
            error: None,
        }
    }

    /// Adds one line (with its newline). Returns the reason of a write failure the
    /// first time one happens.
    pub fn push(&mut self, line: &str) -> Option<String> {
        self.buf.extend_from_slice(line.as_bytes());
        self.buffered += 1;
        if self.buf.len() >= LOG_BUFFER {
            return self.flush();
        }
        None
    }

    /// Writes what is buffered. Returns the reason of a write failure the first time
    /// one happens.
    pub fn flush(&mut self) -> Option<String> {
        let mut written = 0;
        let result = loop {
            if written == self.buf.len() {
                break self.out.flush();
            }
            match self.out.write(&self.buf[written..]) {
                Ok(0) => break Err(std::io::Error::from(std::io::ErrorKind::WriteZero)),
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        // Lines not wholly written are lost (one may be cut short on the disk).
        let whole = self.buf[..written].iter().filter(|&&b| b == b'\n').count() as u64;
        let lines = std::mem::take(&mut self.buffered);
        self.buf.clear();
        match result {
            Ok(()) => None,
            Err(e) => {
                self.lost += lines - whole;
                let first = self.error.is_none();
                let reason = crate::sys::strerror(&e);
                self.error.get_or_insert_with(|| reason.clone());
                first.then_some(reason)
            }
        }
    }

    /// Lines that could not be written, and the first reason.
    pub fn losses(&self) -> Option<(u64, &str)> {
        self.error.as_deref().map(|e| (self.lost, e))
    }
}

/// A log file that lost lines: said after the report, and the run's exit status is 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLoss {
    pub path: String,
    pub lines: u64,
    pub reason: String,
}

/// What the log lines carry besides the fixed columns.
#[derive(Debug, Clone, Copy)]
pub struct LogFormat {
    pub throttled: bool,
    pub latency_limit: bool,
    /// `--max-tries` is not 1: lines carry the retries.
    pub show_retries: bool,
    pub failures_detailed: bool,
    /// pgbench 19's `--continue-on-error`: aggregate lines get its 16th column, the
    /// other failures.
    pub continue_on_error: bool,
    /// `--aggregate-interval` in seconds, 0 = a line per transaction.
    pub agg_interval: i64,
    /// `--sampling-rate`, 0 = every transaction.
    pub sample_rate: f64,
}

/// One finished transaction, as the log sees it.
#[derive(Debug, Clone, Copy)]
pub struct LoggedTx {
    pub client_id: usize,
    /// The client's transaction counter after this one (1-based).
    pub tx_no: i64,
    pub script: usize,
    pub outcome: TxOutcome,
    /// µs (0 unless successful).
    pub latency: f64,
    /// µs (0 unless successful and throttled).
    pub lag: f64,
    pub tries: u32,
    /// Unix time of the log entry, µs.
    pub now_epoch_us: i64,
}

/// The name of a thread's log file.
pub fn log_file_name(prefix: &str, pid: u32, thread: usize) -> String {
    if thread == 0 {
        format!("{prefix}.{pid}")
    } else {
        format!("{prefix}.{pid}.{thread}")
    }
}

/// A raw log line (with newline).
pub fn tx_line(fmt: &LogFormat, tx: &LoggedTx) -> String {
    let mut line = String::with_capacity(64);
    let secs = tx.now_epoch_us / 1_000_000;
    let usecs = tx.now_epoch_us % 1_000_000;
    let status = match tx.outcome {
        TxOutcome::Success => None,
        TxOutcome::Skipped => Some("skipped"),
        TxOutcome::SerializationFailure if fmt.failures_detailed => Some("serialization"),
        TxOutcome::DeadlockFailure if fmt.failures_detailed => Some("deadlock"),
        TxOutcome::OtherFailure | TxOutcome::InDoubt if fmt.failures_detailed => Some("other"),
        TxOutcome::SerializationFailure
        | TxOutcome::DeadlockFailure
        | TxOutcome::OtherFailure
        | TxOutcome::InDoubt => Some("failed"),
    };
    let _ = match status {
        None => write!(
            line,
            "{} {} {:.0} {} {} {}",
            tx.client_id, tx.tx_no, tx.latency, tx.script, secs, usecs
        ),
        Some(s) => write!(
            line,
            "{} {} {s} {} {} {}",
            tx.client_id, tx.tx_no, tx.script, secs, usecs
        ),
    };
    if fmt.throttled {
        let _ = write!(line, " {:.0}", tx.lag);
    }
    if fmt.show_retries {
        let _ = write!(line, " {}", tx.tries.saturating_sub(1));
    }
    line.push('\n');
    line
}

/// One aggregate line (with newline): 15 columns, as pgbench 15 writes them, or
/// pgbench 19's 16 (the other failures last) under `--continue-on-error`.
pub fn agg_line(fmt: &LogFormat, start_epoch_s: i64, agg: &StatsData) -> String {
    let mut line = agg_columns(fmt, start_epoch_s, agg);
    if fmt.continue_on_error {
        let other = if fmt.failures_detailed {
            agg.counts.other_sql_failures
        } else {
            0
        };
        let _ = write!(line, " {other}");
    }
    line.push('\n');
    line
}

/// pgbench 15's 15 columns of an aggregate line.
fn agg_columns(fmt: &LogFormat, start_epoch_s: i64, agg: &StatsData) -> String {
    format!(
        "{} {} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {} {} {} {} {}",
        start_epoch_s,
        agg.counts.cnt,
        agg.latency.sum,
        agg.latency.sum2,
        agg.latency.min,
        agg.latency.max,
        agg.lag.sum,
        agg.lag.sum2,
        agg.lag.min,
        agg.lag.max,
        if fmt.latency_limit {
            agg.counts.skipped
        } else {
            0
        },
        if fmt.show_retries {
            agg.counts.retried
        } else {
            0
        },
        if fmt.show_retries {
            agg.counts.retries
        } else {
            0
        },
        if fmt.failures_detailed {
            agg.counts.serialization_failures
        } else {
            0
        },
        if fmt.failures_detailed {
            agg.counts.deadlock_failures
        } else {
            0
        },
    )
}

/// A thread's log file with its aggregation interval and sampling generator.
pub struct ThreadLog {
    fmt: LogFormat,
    path: String,
    out: LineSink<std::fs::File>,
    /// Start of the current aggregation interval, Unix µs (whole seconds).
    agg_start_us: i64,
    agg: StatsData,
    /// The thread's `ts_sample_rs`.
    sample_rng: Prng,
}

impl LogFormat {
    /// The format the plan's options ask for.
    pub fn of(log: &LogPlan, plan: &BenchPlan) -> LogFormat {
        let s = &plan.settings;
        LogFormat {
            throttled: s.throttled(),
            latency_limit: s.latency_limit_us.is_some(),
            show_retries: !s.max_tries.is_single(),
            failures_detailed: s.failures_detailed,
            continue_on_error: s.continue_on_error,
            agg_interval: log.aggregate_interval_s.unwrap_or(0),
            sample_rate: log.sample_rate.unwrap_or(0.0),
        }
    }
}

impl ThreadLog {
    /// Opens thread `thread`'s log file as `-l` names it, with pgbench's message when
    /// it cannot. The first interval starts when the run does ([`Self::restart_intervals`]).
    pub fn open(
        log: &LogPlan,
        plan: &BenchPlan,
        pid: u32,
        thread: usize,
        sample_rng: Prng,
    ) -> Result<ThreadLog, RunError> {
        let path = log_file_name(&log.prefix, pid, thread);
        let now = crate::clock::epoch_now_us();
        ThreadLog::create(&path, LogFormat::of(log, plan), now, sample_rng).map_err(|e| {
            RunError::LogFile {
                path,
                reason: crate::sys::strerror(&e),
            }
        })
    }

    /// Opens (truncates) the file. `bench_start_epoch_us` starts the first interval,
    /// rounded down to a whole second as pgbench does.
    pub fn create(
        path: &str,
        fmt: LogFormat,
        bench_start_epoch_us: i64,
        sample_rng: Prng,
    ) -> std::io::Result<ThreadLog> {
        Ok(ThreadLog {
            fmt,
            path: path.to_string(),
            out: LineSink::new(std::fs::File::create(path)?),
            agg_start_us: bench_start_epoch_us / 1_000_000 * 1_000_000,
            agg: StatsData::default(),
            sample_rng,
        })
    }

    /// Starts the first aggregation interval at the run's start (Unix µs), rounded
    /// down to a whole second as pgbench does.
    pub fn restart_intervals(&mut self, bench_start_epoch_us: i64) {
        self.agg_start_us = bench_start_epoch_us / 1_000_000 * 1_000_000;
    }

    /// Logs one transaction (`doLog`). Returns the message to print when the file
    /// first fails to take a write.
    pub fn log(&mut self, tx: &LoggedTx) -> Option<String> {
        if self.fmt.sample_rate != 0.0 && self.sample_rng.double() > self.fmt.sample_rate {
            return None;
        }
        let failed = if self.fmt.agg_interval > 0 {
            let failed = self.flush_intervals_before(tx.now_epoch_us);
            self.agg
                .accum(tx.outcome, tx.latency, tx.lag, tx.tries, self.fmt.throttled);
            failed
        } else {
            self.out.push(&tx_line(&self.fmt, tx))
        };
        failed.map(|reason| self.write_error(&reason))
    }

    fn write_error(&self, reason: &str) -> String {
        format!("could not write to log file \"{}\": {reason}", self.path)
    }

    /// Writes every interval that ended at or before `now` (empty ones as zero lines).
    fn flush_intervals_before(&mut self, now_epoch_us: i64) -> Option<String> {
        let step = self.fmt.agg_interval * 1_000_000;
        let mut failed = None;
        while self.agg_start_us + step <= now_epoch_us {
            let line = agg_line(&self.fmt, self.agg_start_us / 1_000_000, &self.agg);
            failed = failed.or(self.out.push(&line));
            self.agg = StatsData::default();
            self.agg_start_us += step;
        }
        failed
    }

    /// At the end of the run: writes the completed intervals (never the partial last
    /// one) and flushes the file. Says what was lost, if anything.
    pub fn finish(
        &mut self,
        now_epoch_us: i64,
        out: &dyn crate::logging::Output,
    ) -> Option<LogLoss> {
        if self.fmt.agg_interval > 0 {
            if let Some(reason) = self.flush_intervals_before(now_epoch_us) {
                out.error(&self.write_error(&reason));
            }
        }
        if let Some(reason) = self.out.flush() {
            out.error(&self.write_error(&reason));
        }
        self.out.losses().map(|(lines, reason)| LogLoss {
            path: self.path.clone(),
            lines,
            reason: reason.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt() -> LogFormat {
        LogFormat {
            throttled: false,
            latency_limit: false,
            show_retries: false,
            failures_detailed: false,
            continue_on_error: false,
            agg_interval: 0,
            sample_rate: 0.0,
        }
    }

    fn tx(outcome: TxOutcome) -> LoggedTx {
        LoggedTx {
            client_id: 3,
            tx_no: 1,
            script: 0,
            outcome,
            latency: 12713.4,
            lag: 62.0,
            tries: 2,
            now_epoch_us: 1_796_028_436_891_449,
        }
    }

    #[test]
    fn transaction_lines_match_pgbench() {
        assert_eq!(
            tx_line(&fmt(), &tx(TxOutcome::Success)),
            "3 1 12713 0 1796028436 891449\n"
        );
        let f = LogFormat {
            throttled: true,
            show_retries: true,
            failures_detailed: true,
            ..fmt()
        };
        assert_eq!(
            tx_line(&f, &tx(TxOutcome::Success)),
            "3 1 12713 0 1796028436 891449 62 1\n"
        );
        assert_eq!(
            tx_line(&f, &tx(TxOutcome::SerializationFailure)),
            "3 1 serialization 0 1796028436 891449 62 1\n"
        );
        assert_eq!(
            tx_line(&fmt(), &tx(TxOutcome::DeadlockFailure)),
            "3 1 failed 0 1796028436 891449\n"
        );
    }

    #[test]
    fn aggregate_lines_have_fifteen_columns() {
        let mut agg = StatsData::default();
        agg.accum(TxOutcome::Success, 485.0, 0.0, 1, false);
        agg.accum(TxOutcome::Success, 12032.0, 0.0, 1, false);
        let line = agg_line(&fmt(), 1796028427, &agg);
        assert_eq!(line.split_whitespace().count(), 15);
        assert!(line.starts_with("1796028427 2 12517 "), "{line}");
        // pgbench 19's --continue-on-error: a 16th column, the other failures
        agg.accum(TxOutcome::OtherFailure, 0.0, 0.0, 1, false);
        let f = LogFormat {
            continue_on_error: true,
            failures_detailed: true,
            ..fmt()
        };
        let line = agg_line(&f, 1796028427, &agg);
        assert!(line.ends_with(" 0 0 0 0 0 0 1\n"), "{line}");
        assert_eq!(
            tx_line(&f, &tx(TxOutcome::OtherFailure)),
            "3 1 other 0 1796028436 891449\n"
        );
    }

    /// Takes `room` bytes, then fails as a full disk does.
    struct SmallDisk {
        room: usize,
        written: Vec<u8>,
    }

    impl Write for SmallDisk {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            let n = b.len().min(self.room);
            self.room -= n;
            self.written.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_full_disk_is_said_once_and_its_lost_lines_counted() {
        let mut sink = LineSink::new(SmallDisk {
            room: LOG_BUFFER + 10,
            written: Vec::new(),
        });
        let line = format!("{}\n", "x".repeat(99));
        let mut said = Vec::new();
        for _ in 0..2_000 {
            said.extend(sink.push(&line));
        }
        said.extend(sink.flush());
        assert_eq!(said, ["No space left on device"]);
        let (lost, reason) = sink.losses().unwrap();
        assert_eq!(reason, "No space left on device");
        // What fit is written; every line after it, the one cut short included, is lost.
        let fit = ((LOG_BUFFER + 10) / 100) as u64;
        assert_eq!(lost, 2_000 - fit);
    }

    #[test]
    fn file_names_follow_pgbench() {
        assert_eq!(log_file_name("pgbench_log", 42, 0), "pgbench_log.42");
        assert_eq!(log_file_name("x", 42, 3), "x.42.3");
    }
}
