//! Watching the measured window from a connection of the run's own (not a client's):
//! TPC-C's monitor and `--server-stats` read the server when the window begins, the
//! latter also every [`Watcher::period_us`] while it lasts, and again when the clients
//! are done. The watcher connects before the clients start (so a failure stops
//! nothing running) and, without a warm-up, reads the start at once (no client has
//! connected yet, so the counts are exact); after a warm-up its thread waits for the
//! window. Under `--worker`, only worker 0 watches (the server's figures are the whole
//! run's).
//!
//! The end's reads run on the watcher's thread too, so that the run's end is bounded
//! as the clients' is ([`end_bounds`], with [`control`]'s bounds): a frozen server or
//! a lost network costs the watcher its figures, never the run its report.

pub mod watched;

use super::control::{self, RunControl, StopCause};
use super::RunError;
use crate::clock::now_us;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;
pub use watched::{Link, Watched};

/// How long the end waits for the run's backends to exit before its read (each
/// publishes its counters as it exits, and ends its transaction).
pub const EXIT_WAIT_US: i64 = 2_000_000;
/// How often the main thread looks at a watcher it waits for (the collector's pace).
const POLL: Duration = Duration::from_millis(20);

/// What reads the server at the window's edges (and in between).
pub trait Watcher: Send + 'static {
    type Output: Send + 'static;
    /// The hold on its connection that the window's end keeps.
    fn link(&self) -> Link;
    /// The window begins.
    fn start(&mut self) -> Result<(), RunError>;
    /// How often [`Watcher::tick`] wants to be called; `None`: never.
    fn period_us(&self) -> Option<i64> {
        None
    }
    /// `elapsed_us` into the window (a multiple of the period, or a little past it).
    fn tick(&mut self, _elapsed_us: i64) {}
    /// The clients are done: the end's reads (on the watcher's thread).
    fn finish(&mut self) -> Result<Self::Output, RunError>;
}

/// Before the clients start.
pub struct Before<W> {
    watcher: W,
    started: bool,
}

type Outcome<W> = Result<Option<<W as Watcher>::Output>, RunError>;

/// While they run.
pub struct During<W: Watcher> {
    stop: Arc<AtomicBool>,
    link: Link,
    result: Receiver<Outcome<W>>,
}

/// Without a warm-up, the window's start is read now.
pub fn before<W: Watcher>(mut watcher: W, warmup: bool) -> Result<Before<W>, RunError> {
    if !warmup {
        watcher.start()?;
    }
    Ok(Before {
        watcher,
        started: !warmup,
    })
}

/// Sleeps until `at_us` on the run clock in steps of at most 50 ms; false when
/// told to stop first.
fn sleep_until(at_us: i64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let left = at_us - now_us();
        if left <= 0 {
            return true;
        }
        std::thread::sleep(Duration::from_micros(left.min(50_000) as u64));
    }
}

/// The watcher's thread: the start (after a warm-up), the ticks, the end.
fn watch<W: Watcher>(mut watcher: W, started: bool, at_us: i64, stop: &AtomicBool) -> Outcome<W> {
    if !started {
        if !sleep_until(at_us, stop) {
            return Ok(None);
        }
        watcher.start()?;
    }
    match watcher.period_us() {
        Some(period) => {
            let mut next = at_us + period;
            while sleep_until(next, stop) {
                watcher.tick(next - at_us);
                // A slow read skips the instants it missed rather than bunching up.
                next += period * ((now_us() - next) / period + 1).max(1);
            }
        }
        // Until the clients are done.
        None => while sleep_until(i64::MAX, stop) {},
    }
    watcher.finish().map(Some)
}

impl<W: Watcher> Before<W> {
    /// The window starts at `at_us` (run clock): the watcher's thread starts.
    pub fn measure_from(self, at_us: i64) -> During<W> {
        let stop = Arc::new(AtomicBool::new(false));
        let Before { watcher, started } = self;
        let link = watcher.link();
        let flag = Arc::clone(&stop);
        let (tx, result) = mpsc::sync_channel(1);
        // No thread to be had: the end finds the channel closed and says so.
        let _ = std::thread::Builder::new()
            .name("watcher".into())
            .spawn(move || {
                let _ = tx.send(watch(watcher, started, at_us, &flag));
            });
        During { stop, link, result }
    }
}

/// When the window's end acts on a watcher that is not done, in µs after the clients
/// were: it cancels the watcher's query, shuts its connection (its reads then fail at
/// once, and the watcher ends with what it has), and at last gives up on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndBounds {
    pub cancel_at: i64,
    pub cut_at: i64,
    pub give_up_at: i64,
}

/// The clients' bounds, for the watcher: after a run that ended on time its reads get
/// the `-T` grace ([`control::DEADLINE_GRACE_US`]) and, after the cancel, the close
/// grace; after a run cut short because its transactions were overdue (a server that
/// stopped answering) the close grace, twice; after a signal, or from one that comes
/// while waiting (`signal_us` after the clients were done), the signal's close grace,
/// twice. The collector's [`control::GIVE_UP_US`] after the cut, the watcher is given
/// up.
pub fn end_bounds(cause: Option<StopCause>, signal_us: Option<i64>) -> EndBounds {
    let (patience, close) = match cause {
        None => (control::DEADLINE_GRACE_US, control::CLOSE_GRACE_US),
        Some(StopCause::Overdue { .. }) => (control::CLOSE_GRACE_US, control::CLOSE_GRACE_US),
        Some(StopCause::Signal(_)) => (
            control::SIGNAL_CLOSE_GRACE_US,
            control::SIGNAL_CLOSE_GRACE_US,
        ),
    };
    let (mut cancel_at, mut cut_at) = (patience, patience + close);
    if let Some(at) = signal_us {
        cancel_at = cancel_at.min(at + control::SIGNAL_CLOSE_GRACE_US);
        cut_at = cut_at.min(at + 2 * control::SIGNAL_CLOSE_GRACE_US);
    }
    EndBounds {
        cancel_at,
        cut_at,
        give_up_at: cut_at + control::GIVE_UP_US,
    }
}

impl<W: Watcher> During<W> {
    /// After the clients: the watcher's figures (`None` when the window never began),
    /// within [`end_bounds`] of how the run ended (`control`), from the moment the
    /// first watcher was told the clients were done.
    pub fn finish(self, control: &RunControl) -> Outcome<W> {
        self.stop.store(true, Ordering::Relaxed);
        let done = control.watchers_told_at();
        let cause = control.cause();
        let (mut signal_us, mut cancelled, mut cut) = (None, false, false);
        loop {
            match self.result.recv_timeout(POLL) {
                Ok(outcome) => return outcome,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(setup_error("a server watcher's thread failed".into()))
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            let now = now_us() - done;
            if signal_us.is_none() && matches!(control.cause(), Some(StopCause::Signal(_))) {
                signal_us = Some(now);
            }
            let bounds = end_bounds(cause, signal_us);
            if !cancelled && now >= bounds.cancel_at {
                self.link.cancel();
                cancelled = true;
            }
            if !cut && now >= bounds.cut_at {
                self.link.cut();
                cut = true;
            }
            if now >= bounds.give_up_at {
                return Err(setup_error(format!(
                    "the server did not answer the run's own connection within {:.1} s of the clients' end: its figures are lost",
                    now as f64 / 1e6
                )));
            }
        }
    }
}

fn setup_error(message: String) -> RunError {
    RunError::Setup {
        message,
        hint: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use control::{CLOSE_GRACE_US, DEADLINE_GRACE_US, GIVE_UP_US, SIGNAL_CLOSE_GRACE_US};

    #[test]
    fn a_watcher_gets_the_grace_the_clients_got_and_a_signal_cuts_it_short() {
        let on_time = end_bounds(None, None);
        assert_eq!(on_time.cancel_at, DEADLINE_GRACE_US);
        assert_eq!(on_time.cut_at, DEADLINE_GRACE_US + CLOSE_GRACE_US);
        assert_eq!(on_time.give_up_at, on_time.cut_at + GIVE_UP_US);
        let overdue = end_bounds(Some(StopCause::Overdue { grace_us: 1 }), None);
        assert_eq!(
            (overdue.cancel_at, overdue.cut_at),
            (CLOSE_GRACE_US, 2 * CLOSE_GRACE_US)
        );
        let signalled = end_bounds(Some(StopCause::Signal(libc::SIGINT)), Some(0));
        assert_eq!(
            (signalled.cancel_at, signalled.cut_at),
            (SIGNAL_CLOSE_GRACE_US, 2 * SIGNAL_CLOSE_GRACE_US)
        );
        // Ctrl-C 1 s into the wait for a frozen server's watcher.
        let later = end_bounds(None, Some(1_000_000));
        assert_eq!(later.cancel_at, 1_000_000 + SIGNAL_CLOSE_GRACE_US);
        assert_eq!(later.cut_at, 1_000_000 + 2 * SIGNAL_CLOSE_GRACE_US);
        // One after the cancel shortens only what is left.
        let late = end_bounds(None, Some(DEADLINE_GRACE_US + 1));
        assert_eq!(late.cancel_at, DEADLINE_GRACE_US);
        assert_eq!(
            late.cut_at,
            DEADLINE_GRACE_US + 1 + 2 * SIGNAL_CLOSE_GRACE_US
        );
    }
}
