//! What SIGINT and SIGTERM do to a sweep or search, attached for all of it: the first
//! stops the step under way (through its own `RunStop`, which keeps that step's
//! results, and stops it as soon as its clients exist if they do not yet) and no
//! further step starts; the steps done are kept, printed and written. Before the
//! first step a signal ends the process, as it would a run. The same signal again at
//! once (a wrapper forwarding it) changes nothing; a later one exits at once. While
//! the results file is written, the first signal makes a FIFO's write give up.

use crate::bench::control::REPEAT_WINDOW_US;
use crate::bench::RunStop;
use crate::session::finish::GuardedWrites;
use crate::signals::{OnSignal, Reaction};
use pgbench_results::destination::Writes;
use std::sync::{Arc, Mutex, MutexGuard};

/// Where the sweep is, as its signals see it.
#[derive(Default)]
struct State {
    /// The step under way, if one is.
    step: Option<Arc<RunStop>>,
    /// Steps begun so far.
    begun: usize,
    /// The results file is being written.
    writing: bool,
    /// The first signal, and when.
    signal: Option<(i32, i64)>,
    /// The results file asked for, and whether it is written.
    file: Option<(String, bool)>,
}

/// The sweep's handler of SIGINT and SIGTERM.
#[derive(Default)]
pub struct SweepStop {
    state: Mutex<State>,
    writes: Writes,
}

impl SweepStop {
    pub fn new(file: Option<String>) -> Arc<SweepStop> {
        let stop = SweepStop::default();
        stop.lock().file = file.map(|f| (f, false));
        Arc::new(stop)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A step begins, stopped by `stop` (`None`: it ended). `false` when a signal
    /// came first: it does not begin.
    pub fn step(&self, stop: Option<Arc<RunStop>>) -> bool {
        let mut st = self.lock();
        if stop.is_some() {
            if st.signal.is_some() {
                return false;
            }
            st.begun += 1;
        }
        st.step = stop;
        true
    }

    /// The signal that stopped the sweep, if one did.
    pub fn signalled(&self) -> Option<i32> {
        self.lock().signal.map(|(s, _)| s)
    }
}

/// The results files go through the sweep's handler: a first signal while they are
/// written makes a FIFO's write give up.
impl GuardedWrites for SweepStop {
    fn writes(&self) -> &Writes {
        &self.writes
    }

    fn writing(&self) {
        self.lock().writing = true;
    }

    /// The results file (`--export-json`) is written whole: a later signal's exit
    /// loses nothing.
    fn written(&self, path: &str) {
        if let Some(f) = self.lock().file.as_mut().filter(|f| f.0 == path) {
            f.1 = true;
        }
    }
}

impl OnSignal for SweepStop {
    fn signal(&self, sig: i32) -> Reaction {
        let now = crate::clock::now_us();
        let mut st = self.lock();
        match st.signal {
            None if st.begun == 0 => Reaction::Exit,
            None => {
                st.signal = Some((sig, now));
                if let Some(step) = &st.step {
                    step.signal(sig);
                }
                if st.writing {
                    self.writes.give_up(sig);
                }
                Reaction::Handled
            }
            Some((_, at)) if now - at < REPEAT_WINDOW_US => Reaction::Handled,
            Some(_) => {
                let lost = match &st.file {
                    Some((f, false)) => format!("results file \"{f}\" is lost"),
                    _ => "nothing is lost".to_string(),
                };
                crate::logging::error(&format!(
                    "{} again: exiting at once; the steps done were printed, {lost}",
                    crate::signals::name(sig)
                ));
                self.writes.remove_unfinished();
                Reaction::Exit
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_before_the_first_step_ends_the_process_then_it_stops_the_sweep() {
        let stop = SweepStop::new(None);
        assert_eq!(stop.signal(libc::SIGINT), Reaction::Exit);
        assert!(stop.step(Some(RunStop::for_step())));
        assert_eq!(stop.signal(libc::SIGINT), Reaction::Handled);
        assert_eq!(stop.signalled(), Some(libc::SIGINT));
        // The same signal forwarded at once: nothing more.
        assert_eq!(stop.signal(libc::SIGINT), Reaction::Handled);
        assert!(stop.step(None));
        assert!(
            !stop.step(Some(RunStop::for_step())),
            "no step after a signal"
        );
        stop.lock().signal = Some((libc::SIGINT, 0));
        assert_eq!(stop.signal(libc::SIGTERM), Reaction::Exit);
    }
}
