//! Stopping a run on purpose, and on time: the `-T` deadline, Ctrl-C (SIGINT) and
//! SIGTERM, and a server that stops answering. pgbench loses the results on Ctrl-C and
//! waits forever on a stuck backend; pgbench-rs ends the run as if its time were up,
//! cancels what is still running, and reports what was measured.
//!
//! Each client registers its connection's cancel key and socket here, and says when a
//! transaction starts and ends. After `-T`, a transaction in flight is waited for as
//! pgbench waits, while it stays within what the run has shown to be normal
//! ([`grace_us`]); beyond that, or at a signal, the run is stopped: the deadline set to
//! now (clients start no more transactions), a cancel request sent to each backend
//! still in a transaction (concurrently, each bounded, on threads nobody waits for),
//! and shortly after the sockets of clients still waiting are shut, so their reads
//! return. Should a client still not end (stuck in a connect), the collector stops
//! waiting for it. Transactions cut short are not counted; the clients say how many.

use crate::clock::{now_us, RunClock};
use pgbench_wire::CancelToken;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// After the `-T` deadline, transactions still running get at least this long
/// (pgbench-rs 0.1's whole grace)...
pub const DEADLINE_GRACE_US: i64 = 5_000_000;
/// ... and this many times the longest transaction the run has counted: a run of
/// 8-second transactions waits for its last ones, as pgbench does.
pub const GRACE_LONGEST_FACTOR: f64 = 3.0;
/// After the cancel requests of an overdue run, how long a client may wait for its
/// server before its connection is shut under it.
pub const CLOSE_GRACE_US: i64 = 2_000_000;
/// The same after a signal: a person who pressed Ctrl-C waits no longer than this.
pub const SIGNAL_CLOSE_GRACE_US: i64 = 300_000;
/// After the sockets are shut, how long the collector still waits for clients.
pub const GIVE_UP_US: i64 = 2_000_000;
/// Signals closer than this are one request (Ctrl-C on a terminal reaches a wrapper
/// such as `timeout`, which forwards it, and pgbench-rs alike).
pub const REPEAT_WINDOW_US: i64 = 1_000_000;
/// Each step of a cancel request (connect, send, wait for the close) gives up after this.
pub const CANCEL_TIMEOUT: Duration = Duration::from_secs(2);
/// Threads sending cancel requests at once.
const CANCEL_SENDERS: usize = 16;
/// How long the end of a run waits for cancel requests still under way: a healthy
/// server takes them in milliseconds (its backends then stop their statements rather
/// than run them to the end after pgbench-rs exited); a frozen one is not waited for.
pub const CANCELS_WAIT: Duration = Duration::from_millis(500);

/// The grace after `-T` when the longest transaction counted took `longest_us`.
pub fn grace_us(longest_us: f64) -> i64 {
    DEADLINE_GRACE_US.max((longest_us * GRACE_LONGEST_FACTOR) as i64)
}

/// Why a run was stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// SIGINT or SIGTERM (the number).
    Signal(i32),
    /// The `-T` deadline passed and transactions were still running past this grace.
    Overdue { grace_us: i64 },
}

/// What the signal thread does with a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// The first: the run is being stopped.
    Stop,
    /// The same request again (within [`REPEAT_WINDOW_US`]): nothing more to do.
    Repeat,
    /// A later one: exit at once.
    ExitNow,
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
    /// When each client's transaction in flight began (run clock), 0 = none.
    tx_since: Vec<AtomicI64>,
    /// Each client has sent its last word to the collector.
    reported: Vec<AtomicBool>,
    /// The signal that stopped the run, 0 if none, and when it came.
    signal: AtomicI32,
    signal_at: AtomicI64,
    /// Set once the run is being stopped (cancels sent).
    stopping: AtomicBool,
    /// When the sockets of clients still waiting are shut (run clock).
    close_at: AtomicI64,
    closed: AtomicBool,
    /// The grace an overdue run exceeded, 0 = not overdue.
    overdue_grace: AtomicI64,
    /// Cancel requests not yet sent and answered.
    cancels_left: Arc<AtomicUsize>,
    /// When the clients were let go (run clock), 0 = not yet: a deadline that passed
    /// while they connected gets its grace from then.
    started_at: AtomicI64,
    /// When the first watcher of the window was told the clients were done, 0 = not
    /// yet: every watcher's end is bounded from then.
    watchers_told_at: AtomicI64,
}

impl RunControl {
    pub fn new(clients: usize) -> RunControl {
        RunControl {
            clock: RunClock::new(),
            clients: (0..clients).map(|_| Mutex::new(None)).collect(),
            tx_since: (0..clients).map(|_| AtomicI64::new(0)).collect(),
            reported: (0..clients).map(|_| AtomicBool::new(false)).collect(),
            signal: AtomicI32::new(0),
            signal_at: AtomicI64::new(0),
            stopping: AtomicBool::new(false),
            close_at: AtomicI64::new(i64::MAX),
            closed: AtomicBool::new(false),
            overdue_grace: AtomicI64::new(0),
            cancels_left: Arc::default(),
            started_at: AtomicI64::new(0),
            watchers_told_at: AtomicI64::new(0),
        }
    }

    fn registered(&self, client: usize) -> MutexGuard<'_, Option<Registered>> {
        self.clients[client]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// A client connected.
    pub fn register(&self, client: usize, cancel: CancelToken, socket: RawFd) {
        *self.registered(client) = Some(Registered { cancel, socket });
    }

    /// A client is about to drop its connection. The stopper touches a socket only
    /// under this lock, so it never shuts a descriptor that was closed and reused.
    pub fn unregister(&self, client: usize) {
        *self.registered(client) = None;
    }

    /// A client began a transaction at `now` (before any `-C` connect).
    #[inline]
    pub fn transaction_started(&self, client: usize, now: i64) {
        self.tx_since[client].store(now.max(1), Ordering::Relaxed);
    }

    /// A client's transaction ended (counted, or the client finished).
    #[inline]
    pub fn transaction_ended(&self, client: usize) {
        self.tx_since[client].store(0, Ordering::Relaxed);
    }

    /// A client sent its last word to the collector.
    pub fn reported(&self, client: usize) {
        self.reported[client].store(true, Ordering::SeqCst);
    }

    /// Whether a client sent its last word (a thread that panicked did not, for some).
    pub fn has_reported(&self, client: usize) -> bool {
        self.reported[client].load(Ordering::SeqCst)
    }

    fn in_transaction(&self, client: usize) -> bool {
        self.tx_since[client].load(Ordering::Relaxed) != 0
    }

    /// Whether the run is being stopped: errors from here on are the stop's doing.
    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// The signal thread, for each SIGINT/SIGTERM: the first stops the run, one close
    /// after it is the same request, a later one asks to exit at once.
    pub fn interrupt(&self, signal: i32) -> Interrupt {
        let now = now_us();
        if self
            .signal
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.signal_at.store(now, Ordering::SeqCst);
            self.stop(now, SIGNAL_CLOSE_GRACE_US);
            return Interrupt::Stop;
        }
        if now - self.signal_at.load(Ordering::SeqCst) < REPEAT_WINDOW_US {
            Interrupt::Repeat
        } else {
            Interrupt::ExitNow
        }
    }

    /// Ends the run now: no new transaction starts, every backend in a transaction
    /// gets a cancel, and the sockets are shut `close_grace` from now (or sooner, if
    /// an earlier stop said so).
    fn stop(&self, now: i64, close_grace: i64) {
        self.close_at.fetch_min(now + close_grace, Ordering::SeqCst);
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        // Earlier than any deadline already set; a -t run gets one too.
        if self.clock.end_us().is_none_or(|end| end > now) {
            self.clock.set_end(now);
        }
        let tokens: Vec<CancelToken> = (0..self.clients.len())
            .filter(|&c| self.in_transaction(c))
            .filter_map(|c| self.registered(c).as_ref().map(|r| r.cancel.clone()))
            .collect();
        self.cancels_left.store(tokens.len(), Ordering::SeqCst);
        send_cancels(tokens, Arc::clone(&self.cancels_left));
    }

    /// Waits up to `within` for the cancel requests under way.
    pub fn wait_for_cancels(&self, within: Duration) {
        let until = std::time::Instant::now() + within;
        while self.cancels_left.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// When the clients' end was first told to a watcher of the window (now, at the
    /// first call): the watchers' ends are bounded together, not one after another.
    pub fn watchers_told_at(&self) -> i64 {
        let now = now_us();
        match self
            .watchers_told_at
            .compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) => now,
            Err(then) => then,
        }
    }

    /// The clients were let go at `now`.
    pub fn started(&self, now: i64) {
        self.started_at.store(now, Ordering::SeqCst);
    }

    /// The collector, at every look, with the longest transaction counted so far:
    /// stops a run whose transactions run past the `-T` deadline and its grace, shuts
    /// the sockets once the cancels had their time. Returns whether to stop waiting
    /// for the clients that are left.
    pub fn watch(&self, now: i64, longest_us: f64) -> bool {
        let Some(end) = self.clock.end_us() else {
            return false;
        };
        // -T counts from before the connections; when they took longer, the clients
        // end at once and their grace starts with them.
        let end = end.max(self.started_at.load(Ordering::SeqCst));
        let grace = grace_us(longest_us);
        // Clients between transactions are only slow to wind down: nothing to cut.
        if !self.stopping()
            && now > end + grace
            && (0..self.clients.len()).any(|c| self.in_transaction(c))
        {
            self.overdue_grace.store(grace, Ordering::SeqCst);
            self.stop(now, CLOSE_GRACE_US);
        }
        let close_at = self.close_at.load(Ordering::SeqCst);
        if now > close_at && !self.closed.swap(true, Ordering::SeqCst) {
            for c in 0..self.clients.len() {
                if let Some(r) = self.registered(c).as_ref() {
                    crate::sys::shutdown_socket(r.socket);
                }
            }
        }
        self.closed.load(Ordering::SeqCst) && now > close_at.saturating_add(GIVE_UP_US)
    }

    /// When the signal that stopped the run came (run clock), if one did.
    pub fn signalled_at(&self) -> Option<i64> {
        (self.signal.load(Ordering::SeqCst) != 0).then(|| self.signal_at.load(Ordering::SeqCst))
    }

    /// Why the run was stopped early, if it was.
    pub fn cause(&self) -> Option<StopCause> {
        match self.signal.load(Ordering::SeqCst) {
            0 => match self.overdue_grace.load(Ordering::SeqCst) {
                0 => None,
                grace_us => Some(StopCause::Overdue { grace_us }),
            },
            sig => Some(StopCause::Signal(sig)),
        }
    }
}

/// Sends the cancel requests, [`CANCEL_SENDERS`] at a time, each bounded by
/// [`CANCEL_TIMEOUT`], on threads nobody waits for: a frozen server or a lost network
/// must not hold the signal thread or the collector.
fn send_cancels(tokens: Vec<CancelToken>, left: Arc<AtomicUsize>) {
    if tokens.is_empty() {
        return;
    }
    let tokens = Arc::new(tokens);
    let next = Arc::new(AtomicUsize::new(0));
    for _ in 0..CANCEL_SENDERS.min(tokens.len()) {
        let (tokens, next, left) = (Arc::clone(&tokens), Arc::clone(&next), Arc::clone(&left));
        let spawned = std::thread::Builder::new()
            .name("cancel".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                while let Some(t) = tokens.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let _ = t.cancel_within(CANCEL_TIMEOUT);
                    left.fetch_sub(1, Ordering::SeqCst);
                }
            });
        // No thread to be had: the sockets are shut after the grace anyway.
        if spawned.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_ends_the_run_now_a_repeat_is_one_request_a_later_one_says_exit() {
        let c = RunControl::new(2);
        assert!(!c.stopping());
        assert_eq!((c.cause(), c.signalled_at()), (None, None));
        assert_eq!(c.interrupt(libc::SIGINT), Interrupt::Stop);
        assert!(c.stopping());
        assert!(c.clock.timer_exceeded());
        assert_eq!(c.cause(), Some(StopCause::Signal(libc::SIGINT)));
        assert!(c.signalled_at().is_some_and(|at| at > 0 && at <= now_us()));
        // `timeout` forwarding the same Ctrl-C.
        assert_eq!(c.interrupt(libc::SIGINT), Interrupt::Repeat);
        c.signal_at
            .store(now_us() - REPEAT_WINDOW_US - 1, Ordering::SeqCst);
        assert_eq!(c.interrupt(libc::SIGTERM), Interrupt::ExitNow);
    }

    #[test]
    fn the_deadline_is_enforced_only_after_its_grace_and_on_a_transaction() {
        let c = RunControl::new(2);
        c.clock.set_end(1_000);
        c.transaction_started(1, 900);
        c.watch(1_000 + DEADLINE_GRACE_US, 0.0);
        assert!(!c.stopping());
        c.watch(1_001 + DEADLINE_GRACE_US, 0.0);
        assert!(c.stopping());
        assert_eq!(
            c.cause(),
            Some(StopCause::Overdue {
                grace_us: DEADLINE_GRACE_US
            })
        );
    }

    #[test]
    fn long_transactions_the_run_has_seen_get_a_longer_grace() {
        let c = RunControl::new(1);
        c.clock.set_end(1_000);
        c.transaction_started(0, 500);
        // 8 s transactions: waited for up to 24 s after the deadline.
        c.watch(1_000 + 20_000_000, 8e6);
        assert!(!c.stopping());
        c.watch(1_001 + 24_000_000, 8e6);
        assert!(c.stopping());
        assert_eq!(grace_us(1e3), DEADLINE_GRACE_US);
    }

    #[test]
    fn clients_between_transactions_are_never_cut() {
        let c = RunControl::new(3);
        c.clock.set_end(1_000);
        c.transaction_started(2, 500);
        c.transaction_ended(2);
        assert!(!c.watch(1_000 + 60_000_000, 0.0));
        assert!(!c.stopping());
        assert_eq!(c.cause(), None);
    }

    #[test]
    fn after_a_stop_the_sockets_are_shut_and_then_the_clients_given_up() {
        let c = RunControl::new(1);
        c.clock.set_end(1_000);
        c.transaction_started(0, 500);
        let stop = 1_001 + DEADLINE_GRACE_US;
        assert!(!c.watch(stop, 0.0));
        assert!(!c.watch(stop + CLOSE_GRACE_US + 1, 0.0));
        assert!(c.closed.load(Ordering::SeqCst));
        assert!(c.watch(stop + CLOSE_GRACE_US + GIVE_UP_US + 2, 0.0));
    }

    #[test]
    fn every_watcher_s_end_counts_from_when_the_first_was_told() {
        let c = RunControl::new(1);
        let first = c.watchers_told_at();
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(c.watchers_told_at(), first);
    }

    #[test]
    fn a_deadline_passed_while_connecting_gets_its_grace_from_the_start() {
        let c = RunControl::new(1);
        c.clock.set_end(1_000);
        c.started(9_000_000);
        c.transaction_started(0, 9_000_000);
        c.watch(9_000_000 + DEADLINE_GRACE_US, 0.0);
        assert!(!c.stopping());
        c.watch(9_000_001 + DEADLINE_GRACE_US, 0.0);
        assert!(c.stopping());
    }
}
