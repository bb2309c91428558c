//! What SIGINT and SIGTERM do to a run: the handler its caller attaches to the
//! process's signal handling ([`crate::signals`]) for the run and for what follows it
//! (the report, the results files). Until the clients exist a signal ends the process
//! as it would; then the first one stops the run and keeps its results, the same one
//! again (a wrapper forwarding it) changes nothing, and a later one exits at once,
//! saying what of the run's output is lost. After a run that ended by itself, the
//! first signal makes its results files give up waiting for a FIFO's reader, now or
//! later ([`Writes::give_up`]); the process exits leaving no half-written file. A step
//! of a sweep ([`RunStop::for_step`]) is stopped by a signal that comes before its
//! clients exist as soon as they do, so that the sweep keeps the steps done.

use super::control::Interrupt;
use super::launch::RunShared;
use crate::signals::{OnSignal, Reaction};
use pgbench_results::destination::Writes;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A run's handler of SIGINT and SIGTERM, and what of its output is out.
#[derive(Default)]
pub struct RunStop {
    run: OnceLock<Arc<RunShared>>,
    /// A sweep's step: a signal before the clients exist waits for them in `pending`.
    deferring: bool,
    pending: Mutex<Option<i32>>,
    /// The run is over (its report and files may still be going out).
    finished: AtomicBool,
    report_printed: AtomicBool,
    files_written: Mutex<Vec<String>>,
    /// The results files the caller will write after the run.
    files_asked: Mutex<Vec<String>>,
    /// The run's results files, as they are written.
    writes: Writes,
}

impl RunStop {
    pub fn new() -> Arc<RunStop> {
        Arc::default()
    }

    /// The handler of one step of a mode that runs several (a sweep): a signal before
    /// its clients exist stops the run as soon as they do, rather than ending the
    /// process.
    pub fn for_step() -> Arc<RunStop> {
        Arc::new(RunStop {
            deferring: true,
            ..RunStop::default()
        })
    }

    /// The run's clients exist: signals stop it from now on (a step's signal that came
    /// before, now).
    pub(super) fn run_started(&self, run: Arc<RunShared>) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sig) = pending.take() {
            run.control.interrupt(sig);
        }
        let _ = self.run.set(run);
    }

    /// The run is over: a first signal from now on is for its output.
    pub(super) fn run_finished(&self) {
        self.finished.store(true, Ordering::SeqCst);
    }

    /// Where the run's results files are written (a signal may tell them to give up).
    pub fn writes(&self) -> &Writes {
        &self.writes
    }

    /// The results files the caller will write after the run (what a later signal's
    /// exit would lose).
    pub fn will_write(&self, paths: Vec<String>) {
        *self.files_asked.lock().unwrap_or_else(|e| e.into_inner()) = paths;
    }

    /// The run's report is out: a signal that exits at once no longer loses it.
    pub fn report_printed(&self) {
        self.report_printed.store(true, Ordering::SeqCst);
    }

    /// The results file `path` is written whole.
    pub fn file_written(&self, path: &str) {
        self.files_written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(path.to_string());
    }

    /// Whether a signal reached the run, during it or after it (while its report and
    /// results files are written).
    pub fn signalled(&self) -> bool {
        let cause = self.run.get().and_then(|r| r.control.cause());
        matches!(cause, Some(super::control::StopCause::Signal(_)))
    }

    /// What a later signal's exit loses of the run's output now, of the results
    /// files `asked` for: the message after `SIGINT again: exiting at once; `.
    fn lost_on_exit(&self, asked: &[&str]) -> String {
        let written = self
            .files_written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        lost(self.report_printed.load(Ordering::SeqCst), asked, &written)
    }
}

impl OnSignal for RunStop {
    fn signal(&self, sig: i32) -> Reaction {
        // Under the lock `run_started` takes: a step's signal is never lost between
        // the two.
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let Some(ctx) = self.run.get() else {
            if self.deferring {
                pending.get_or_insert(sig);
                return Reaction::Handled;
            }
            return Reaction::Exit;
        };
        drop(pending);
        match ctx.control.interrupt(sig) {
            // The first signal, after a run that ended by itself: its results files
            // give up waiting for a FIFO's reader (a later one exits at once, below).
            Interrupt::Stop => {
                if self.finished.load(Ordering::SeqCst) {
                    self.writes.give_up(sig);
                }
                Reaction::Handled
            }
            Interrupt::Repeat => Reaction::Handled,
            Interrupt::ExitNow => {
                let asked = self
                    .files_asked
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
                let asked: Vec<&str> = asked.iter().map(String::as_str).collect();
                ctx.out.error(&format!(
                    "{} again: exiting at once; {}",
                    crate::signals::name(sig),
                    self.lost_on_exit(&asked)
                ));
                self.writes.remove_unfinished();
                Reaction::Exit
            }
        }
    }
}

/// `"a.json", "b.html"`.
fn quoted(paths: &[&str]) -> String {
    let q: Vec<String> = paths.iter().map(|p| format!("\"{p}\"")).collect();
    q.join(", ")
}

/// [`lost_on_exit`]'s message, from what is out: whether the report was printed and
/// which of the files `asked` for are `written`.
fn lost(printed: bool, asked: &[&str], written: &[String]) -> String {
    let (done, pending): (Vec<&str>, Vec<&str>) =
        asked.iter().partition(|a| written.iter().any(|w| w == *a));
    match (printed, asked.is_empty(), pending.as_slice()) {
        (false, true, _) => "the run's report is lost".to_string(),
        (false, false, _) => "the run's report and results files are lost".to_string(),
        (true, true, _) => "nothing is lost: the report was printed".to_string(),
        (true, false, []) => {
            "nothing is lost: the report was printed and the results files written".to_string()
        }
        (true, false, [one]) if done.is_empty() => {
            format!("results file \"{one}\" is lost; the report was printed")
        }
        (true, false, _) if done.is_empty() => format!(
            "results files {} are lost; the report was printed",
            quoted(&pending)
        ),
        (true, false, _) => format!(
            "results file{} {} {} lost; the report was printed and {} written",
            if pending.len() == 1 { "" } else { "s" },
            quoted(&pending),
            if pending.len() == 1 { "is" } else { "are" },
            quoted(&done)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// #38: a second signal said the report and the results files were lost when
    /// both were out already. It says now what is lost at that moment.
    #[test]
    fn a_later_signal_says_only_what_it_loses() {
        let written = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let both = ["a.json", "b.html"];
        assert_eq!(
            lost(false, &both, &[]),
            "the run's report and results files are lost"
        );
        assert_eq!(lost(false, &[], &[]), "the run's report is lost");
        assert_eq!(
            lost(true, &both, &[]),
            "results files \"a.json\", \"b.html\" are lost; the report was printed"
        );
        assert_eq!(
            lost(true, &both, &written(&["a.json"])),
            "results file \"b.html\" is lost; the report was printed and \"a.json\" written"
        );
        assert_eq!(
            lost(true, &["a.json"], &[]),
            "results file \"a.json\" is lost; the report was printed"
        );
        assert_eq!(
            lost(true, &both, &written(&["a.json", "b.html"])),
            "nothing is lost: the report was printed and the results files written"
        );
        assert_eq!(
            lost(true, &[], &[]),
            "nothing is lost: the report was printed"
        );
    }
}
