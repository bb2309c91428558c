//! The run's clocks: CLOCK_MONOTONIC µs for everything measured (pgbench's
//! `pg_time_now()`), the Unix time only where output shows it, and the `-T` deadline
//! that every client checks.

use std::sync::atomic::{AtomicI64, Ordering};

/// The run clock, µs. Read a few times per transaction, so it goes straight to the vDSO.
#[inline]
pub fn now_us() -> i64 {
    crate::sys::monotonic_us()
}

/// Unix time in µs.
pub fn epoch_now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// When a `-T` run ends, and how to turn run-clock instants into Unix time.
#[derive(Debug)]
pub struct RunClock {
    /// Unix µs minus run-clock µs.
    pub epoch_shift_us: i64,
    /// The `-T` deadline on the run clock; 0 until the clients start (or without `-T`).
    end_us: AtomicI64,
    /// `--warmup`: when the measured part begins on the run clock; 0 until the clients
    /// start (or without a warm-up).
    measure_from_us: AtomicI64,
}

impl RunClock {
    pub fn new() -> RunClock {
        RunClock {
            epoch_shift_us: epoch_now_us() - now_us(),
            end_us: AtomicI64::new(0),
            measure_from_us: AtomicI64::new(0),
        }
    }

    /// Sets the `-T` deadline.
    pub fn set_end(&self, end_us: i64) {
        self.end_us.store(end_us, Ordering::SeqCst);
    }

    /// The `-T` deadline, if set.
    pub fn end_us(&self) -> Option<i64> {
        match self.end_us.load(Ordering::Relaxed) {
            0 => None,
            end => Some(end),
        }
    }

    /// Sets when the warm-up ends and the measured part begins.
    pub fn set_measure_from(&self, at_us: i64) {
        self.measure_from_us.store(at_us, Ordering::SeqCst);
    }

    /// When the warm-up ends, if the run has one.
    pub fn measure_from_us(&self) -> Option<i64> {
        match self.measure_from_us.load(Ordering::Relaxed) {
            0 => None,
            at => Some(at),
        }
    }

    /// pgbench's `timer_exceeded`: the `-T` duration is over.
    #[inline]
    pub fn timer_exceeded(&self) -> bool {
        self.end_us().is_some_and(|end| now_us() >= end)
    }
}

impl Default for RunClock {
    fn default() -> Self {
        Self::new()
    }
}
