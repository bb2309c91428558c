//! How a run ended, as its `RunResult` keeps it (`run.ended` in a results file): to
//! its end, or stopped early by a signal or by transactions that ran on past `-T`.
//! pgbench-rs prints a line after the report of a run that did not end as planned;
//! [`RunResult::ending_note`] is that line, so that `pgbench-report show` prints what
//! the run printed, and the validity checks ([`crate::warnings`]) read the same data.

use super::RunResult;
use serde::{Deserialize, Serialize};

/// How the run ended. Files written before it was recorded have none (`None` in
/// [`RunResult::ended`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum Ended {
    /// Its `-T` time was up, or every client did its `-t` transactions.
    Completed,
    /// Every client ended, some by aborting ([`RunResult::aborted_clients`]): the
    /// figures count what ran before.
    Aborted,
    /// A signal stopped it before its end.
    Interrupted {
        /// `SIGINT` or `SIGTERM`.
        signal: String,
        /// When the signal came, seconds from the clients' start (a warm-up included).
        at_s: f64,
        /// It ended the run in its `--warmup`, before the measured part began:
        /// nothing was measured.
        during_warmup: bool,
        /// Transactions cut short by the stop, which no figure counts.
        unfinished: usize,
    },
    /// After `-T`, transactions still running past the grace the run allowed them
    /// were cancelled.
    Overdue {
        grace_s: f64,
        /// The transactions cancelled (or otherwise cut short), not counted.
        unfinished: usize,
    },
}

impl Ended {
    /// How bad an ending is, for merging several workers' (the worst is the run's).
    pub fn severity(&self) -> u8 {
        match self {
            Ended::Completed => 0,
            Ended::Aborted => 1,
            Ended::Overdue { .. } => 2,
            Ended::Interrupted { .. } => 3,
        }
    }
}

/// `interrupted by SIGINT`, `terminated by SIGTERM`, as the stop line says it.
pub fn stopped_by(signal: &str) -> String {
    match signal {
        "SIGINT" => "interrupted by SIGINT".to_string(),
        "SIGTERM" => "terminated by SIGTERM".to_string(),
        other => format!("stopped by {other}"),
    }
}

/// `3 unfinished transactions were not counted`.
fn unfinished_text(n: usize) -> String {
    format!(
        "{n} unfinished transaction{} not counted",
        if n == 1 { " was" } else { "s were" }
    )
}

impl RunResult {
    /// The line pgbench-rs prints after the report of a run that did not end as
    /// planned (a warning on stderr; `show` prints it after the report): why it
    /// stopped and how long the results above cover. `None` for a run that ran to
    /// its end, and for files that do not say how their run ended.
    pub fn ending_note(&self) -> Option<String> {
        let ran = self.bench_duration_us / 1e6;
        match self.ended.as_ref()? {
            Ended::Completed | Ended::Aborted => None,
            Ended::Interrupted {
                signal,
                at_s,
                during_warmup: true,
                unfinished,
            } => Some(format!(
                "run {} {at_s:.1} s into its {} s warm-up, before anything was measured; {}",
                stopped_by(signal),
                self.warmup.as_ref().map_or(0, |w| w.seconds),
                unfinished_text(*unfinished)
            )),
            Ended::Interrupted {
                signal, unfinished, ..
            } => Some(format!(
                "run {}; the results above cover the {ran:.1} s it ran; {}",
                stopped_by(signal),
                unfinished_text(*unfinished)
            )),
            Ended::Overdue {
                grace_s,
                unfinished,
            } => Some(format!(
                "transactions still running {} s after the end of the run were cancelled; the results above cover the {ran:.1} s it ran; {}",
                grace_s.ceil(),
                unfinished_text(*unfinished)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{run, Spec};

    fn ended(how: Ended) -> RunResult {
        let mut r = run(&Spec::tpcb(3, 12, 100.0, 1000.0));
        r.bench_duration_us = 12_041_000.0;
        r.ended = Some(how);
        r
    }

    #[test]
    fn the_note_after_the_report_says_why_the_run_stopped_and_what_it_covers() {
        let sigint = Ended::Interrupted {
            signal: "SIGINT".into(),
            at_s: 12.01,
            during_warmup: false,
            unfinished: 3,
        };
        assert_eq!(
            ended(sigint).ending_note().unwrap(),
            "run interrupted by SIGINT; the results above cover the 12.0 s it ran; 3 unfinished transactions were not counted"
        );
        let sigterm = Ended::Interrupted {
            signal: "SIGTERM".into(),
            at_s: 12.01,
            during_warmup: false,
            unfinished: 1,
        };
        assert_eq!(
            ended(sigterm).ending_note().unwrap(),
            "run terminated by SIGTERM; the results above cover the 12.0 s it ran; 1 unfinished transaction was not counted"
        );
        let overdue = Ended::Overdue {
            grace_s: 4.2,
            unfinished: 1,
        };
        assert_eq!(
            ended(overdue).ending_note().unwrap(),
            "transactions still running 5 s after the end of the run were cancelled; the results above cover the 12.0 s it ran; 1 unfinished transaction was not counted"
        );
        let mut warm = ended(Ended::Interrupted {
            signal: "SIGINT".into(),
            at_s: 3.24,
            during_warmup: true,
            unfinished: 2,
        });
        warm.warmup = Some(crate::run::Warmup {
            seconds: 10,
            total: Default::default(),
            series: Vec::new(),
        });
        assert_eq!(
            warm.ending_note().unwrap(),
            "run interrupted by SIGINT 3.2 s into its 10 s warm-up, before anything was measured; 2 unfinished transactions were not counted"
        );
        assert_eq!(ended(Ended::Completed).ending_note(), None);
        assert_eq!(ended(Ended::Aborted).ending_note(), None);
        let mut old = ended(Ended::Completed);
        old.ended = None;
        assert_eq!(old.ending_note(), None);
    }

    #[test]
    fn an_ending_is_written_with_its_kind_and_read_back() {
        let e = Ended::Interrupted {
            signal: "SIGINT".into(),
            at_s: 12.5,
            during_warmup: false,
            unfinished: 3,
        };
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"how":"interrupted","signal":"SIGINT","at_s":12.5,"during_warmup":false,"unfinished":3}"#
        );
        assert_eq!(serde_json::from_str::<Ended>(&json).unwrap(), e);
        assert_eq!(
            serde_json::to_string(&Ended::Completed).unwrap(),
            r#"{"how":"completed"}"#
        );
    }
}
