//! The run's clocks: CLOCK_MONOTONIC µs for everything measured (pgbench's
//! `pg_time_now()`), the Unix time only where output shows it, and the `-T` deadline
//! that every client checks.
//!
//! The clients and their drivers read the time, sleep and time their waits through
//! the [`RunClock`] they share, so that their unit tests run them on a
//! `TestClock` (a test build only: production reads the vDSO directly, at no
//! cost).

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
    /// A test's clock, in place of the monotonic one.
    #[cfg(test)]
    test: Option<std::sync::Arc<TestClock>>,
}

impl RunClock {
    pub fn new() -> RunClock {
        RunClock {
            epoch_shift_us: epoch_now_us() - now_us(),
            end_us: AtomicI64::new(0),
            #[cfg(test)]
            test: None,
        }
    }

    /// A run clock that reads `test` instead of the monotonic clock.
    #[cfg(test)]
    pub fn on(test: std::sync::Arc<TestClock>) -> RunClock {
        RunClock {
            epoch_shift_us: 0,
            test: Some(test),
            ..RunClock::new()
        }
    }

    /// The run clock now, µs.
    #[inline]
    pub fn now_us(&self) -> i64 {
        #[cfg(test)]
        if let Some(t) = &self.test {
            return t.now_us();
        }
        now_us()
    }

    /// How long a wait for `until_us` may block. A test clock does not wait: it
    /// moves to `until_us` at once.
    pub fn wait_until(&self, until_us: i64) -> std::time::Duration {
        #[cfg(test)]
        if let Some(t) = &self.test {
            t.reach(until_us);
            return std::time::Duration::ZERO;
        }
        std::time::Duration::from_micros((until_us - now_us()).max(0) as u64)
    }

    /// Sleeps until the run clock reaches `until_us`.
    pub fn sleep_until(&self, until_us: i64) {
        loop {
            let now = self.now_us();
            if now >= until_us {
                return;
            }
            std::thread::sleep(self.wait_until(until_us));
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

    /// pgbench's `timer_exceeded`: the `-T` duration is over.
    #[inline]
    pub fn timer_exceeded(&self) -> bool {
        self.end_us().is_some_and(|end| self.now_us() >= end)
    }
}

/// A clock that moves only when told to (or when a client waits on it).
#[cfg(test)]
#[derive(Debug)]
pub struct TestClock(AtomicI64);

#[cfg(test)]
impl TestClock {
    /// A clock at `start_us` (not 0, which the run's records read as "not set").
    pub fn at(start_us: i64) -> std::sync::Arc<TestClock> {
        std::sync::Arc::new(TestClock(AtomicI64::new(start_us)))
    }

    pub fn now_us(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }

    /// Moves the clock on by `us`.
    pub fn advance(&self, us: i64) {
        self.0.fetch_add(us, Ordering::SeqCst);
    }

    /// Moves the clock to `at_us` unless it is there already.
    pub fn reach(&self, at_us: i64) {
        self.0.fetch_max(at_us, Ordering::SeqCst);
    }
}

impl Default for RunClock {
    fn default() -> Self {
        Self::new()
    }
}
