//! Stopping a run on purpose, and on time: the `-T` deadline, Ctrl-C (SIGINT) and
//! SIGTERM, and a server that stops answering. pgbench loses the results on Ctrl-C and
//! waits forever on a stuck backend; pgbench-rs ends the run as if its time were up,
//! cancels what is still running, and reports what was measured.
//!
//! Each client registers its connection's cancel key and socket here. Stopping sets
//! the deadline to now (clients start no more transactions), sends every backend a
//! cancel request, and after [`CLOSE_GRACE_US`] shuts the sockets of clients still
//! waiting, so their blocking reads return. Transactions cut short that way are not
//! counted; the clients say how many there were.

use super::clock::{now_us, RunClock};
use pgbench_wire::CancelToken;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// After the `-T` deadline, how long transactions still running may take before they
/// are cancelled. A healthy server finishes its last transactions well inside it, so
/// output stays pgbench's; a stuck one (a lock wait, a stopped backend, a partition)
/// no longer holds the run.
pub const DEADLINE_GRACE_US: i64 = 5_000_000;
/// After the cancel requests, how long a client may wait for its server before its
/// connection is closed under it.
pub const CLOSE_GRACE_US: i64 = 2_000_000;

/// Why a run was stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// SIGINT or SIGTERM (the number).
    Signal(i32),
    /// The `-T` deadline passed and transactions were still running past the grace.
    Overdue,
}

/// One client's connection as the stopper sees it.
struct Registered {
    cancel: CancelToken,
    socket: RawFd,
}

/// Shared by the clients, the collector and the signal thread.
pub struct RunControl {
    pub clock: RunClock,
    clients: Vec<Mutex<Option<Registered>>>,
    /// The signal that stopped the run, 0 if none.
    signal: AtomicI32,
    /// Set once the run is being stopped (cancels sent).
    stopping: AtomicBool,
    /// When the cancels were sent (run clock), 0 = not yet.
    stopped_at: AtomicI64,
    closed: AtomicBool,
    overdue: AtomicBool,
    /// When the clients were let go (run clock), 0 = not yet: a deadline that passed
    /// while they connected gets its grace from then.
    started_at: AtomicI64,
}

impl RunControl {
    pub fn new(clients: usize) -> RunControl {
        RunControl {
            clock: RunClock::new(),
            clients: (0..clients).map(|_| Mutex::new(None)).collect(),
            signal: AtomicI32::new(0),
            stopping: AtomicBool::new(false),
            stopped_at: AtomicI64::new(0),
            closed: AtomicBool::new(false),
            overdue: AtomicBool::new(false),
            started_at: AtomicI64::new(0),
        }
    }

    fn slot(&self, client: usize) -> MutexGuard<'_, Option<Registered>> {
        self.clients[client]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// A client connected.
    pub fn register(&self, client: usize, cancel: CancelToken, socket: RawFd) {
        *self.slot(client) = Some(Registered { cancel, socket });
    }

    /// A client is about to drop its connection. The stopper touches a socket only
    /// under this lock, so it never shuts a descriptor that was closed and reused.
    pub fn unregister(&self, client: usize) {
        *self.slot(client) = None;
    }

    /// Whether the run is being stopped: errors from here on are the stop's doing.
    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// The signal thread: the first SIGINT/SIGTERM stops the run; returns whether
    /// this was a second one (the caller then exits at once).
    pub fn interrupt(&self, signal: i32) -> bool {
        if self.signal.swap(signal, Ordering::SeqCst) != 0 {
            return true;
        }
        self.stop();
        false
    }

    /// Ends the run now: no new transaction starts, every backend gets a cancel.
    fn stop(&self) {
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        let now = now_us();
        // Earlier than any deadline already set; a -t run gets one too.
        if self.clock.end_us().is_none_or(|end| end > now) {
            self.clock.set_end(now);
        }
        self.stopped_at.store(now, Ordering::SeqCst);
        for c in 0..self.clients.len() {
            if let Some(r) = self.slot(c).as_ref() {
                let _ = r.cancel.cancel();
            }
        }
    }

    /// The clients were let go at `now`.
    pub fn started(&self, now: i64) {
        self.started_at.store(now, Ordering::SeqCst);
    }

    /// The collector, at every look: past the `-T` deadline and its grace, stop the
    /// run; past the cancels and their grace, close what still waits.
    pub fn watch(&self, now: i64) {
        let Some(end) = self.clock.end_us() else {
            return;
        };
        // -T counts from before the connections; when they took longer, the clients
        // end at once and their grace starts with them.
        let end = end.max(self.started_at.load(Ordering::SeqCst));
        if !self.stopping() && now > end + DEADLINE_GRACE_US {
            self.overdue.store(true, Ordering::SeqCst);
            self.stop();
        }
        let stopped_at = self.stopped_at.load(Ordering::SeqCst);
        if stopped_at > 0
            && now > stopped_at + CLOSE_GRACE_US
            && !self.closed.swap(true, Ordering::SeqCst)
        {
            for c in 0..self.clients.len() {
                if let Some(r) = self.slot(c).as_ref() {
                    crate::sys::shutdown_socket(r.socket);
                }
            }
        }
    }

    /// Why the run was stopped early, if it was.
    pub fn cause(&self) -> Option<StopCause> {
        match self.signal.load(Ordering::SeqCst) {
            0 if self.overdue.load(Ordering::SeqCst) => Some(StopCause::Overdue),
            0 => None,
            sig => Some(StopCause::Signal(sig)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_ends_the_run_now_and_a_second_one_says_exit() {
        let c = RunControl::new(2);
        assert!(!c.stopping());
        assert_eq!(c.cause(), None);
        assert!(!c.interrupt(libc::SIGINT));
        assert!(c.stopping());
        assert!(c.clock.timer_exceeded());
        assert_eq!(c.cause(), Some(StopCause::Signal(libc::SIGINT)));
        assert!(c.interrupt(libc::SIGINT));
    }

    #[test]
    fn the_deadline_is_enforced_only_after_its_grace() {
        let c = RunControl::new(1);
        c.clock.set_end(1_000);
        c.watch(1_000 + DEADLINE_GRACE_US);
        assert!(!c.stopping());
        c.watch(1_001 + DEADLINE_GRACE_US);
        assert!(c.stopping());
        assert_eq!(c.cause(), Some(StopCause::Overdue));
    }

    #[test]
    fn a_deadline_passed_while_connecting_gets_its_grace_from_the_start() {
        let c = RunControl::new(1);
        c.clock.set_end(1_000);
        c.started(9_000_000);
        c.watch(9_000_000 + DEADLINE_GRACE_US);
        assert!(!c.stopping());
        c.watch(9_000_001 + DEADLINE_GRACE_US);
        assert!(c.stopping());
    }
}
