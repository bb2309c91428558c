//! Watching the measured window from a connection of the run's own (not a client's):
//! TPC-C's monitor and `--server-stats` read the server when the window begins, the
//! latter also every [`Watcher::period_us`] while it lasts, and again when the clients
//! are done. The watcher connects before the clients start (so a failure stops
//! nothing running) and, without a warm-up, reads the start at once (no client has
//! connected yet, so the counts are exact); after a warm-up a thread of its own
//! waits for the window. Under `--worker`, only worker 0 watches (the server's
//! figures are the whole run's).

use super::clock::now_us;
use super::RunError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// What reads the server at the window's edges (and in between).
pub trait Watcher: Send + 'static {
    type Output: Send + 'static;
    /// The window begins.
    fn start(&mut self) -> Result<(), RunError>;
    /// How often [`Watcher::tick`] wants to be called; `None`: never.
    fn period_us(&self) -> Option<i64> {
        None
    }
    /// `elapsed_us` into the window (a multiple of the period, or a little past it).
    fn tick(&mut self, _elapsed_us: i64) {}
    /// The clients are done.
    fn finish(self) -> Result<Self::Output, RunError>;
}

/// Before the clients start.
pub struct Before<W> {
    watcher: W,
    started: bool,
}

/// While they run.
pub struct During<W: Watcher> {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<Option<W>, RunError>>,
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

impl<W: Watcher> Before<W> {
    /// The window starts at `at_us` (run clock): the watcher's thread starts.
    pub fn measure_from(self, at_us: i64) -> During<W> {
        let stop = Arc::new(AtomicBool::new(false));
        let Before {
            mut watcher,
            started,
        } = self;
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            if !started {
                if !sleep_until(at_us, &flag) {
                    return Ok(None);
                }
                watcher.start()?;
            }
            if let Some(period) = watcher.period_us() {
                let mut next = at_us + period;
                while sleep_until(next, &flag) {
                    watcher.tick(next - at_us);
                    // A slow read skips the instants it missed rather than bunching up.
                    next += period * ((now_us() - next) / period + 1).max(1);
                }
            }
            Ok(Some(watcher))
        });
        During { stop, thread }
    }
}

impl<W: Watcher> During<W> {
    /// After the clients: the watcher's figures (`None` when the window never began).
    pub fn finish(self) -> Result<Option<W::Output>, RunError> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .unwrap_or_else(|_| {
                Err(RunError::Setup {
                    message: "a server watcher's thread failed".into(),
                    hint: None,
                })
            })?
            .map(Watcher::finish)
            .transpose()
    }
}
