//! The run's phases: the warm-up (`--warmup`), whose transactions run but are not
//! counted, then the measured part. The plan holds them as durations ([`PhasePlan`]);
//! when the clients are let go they are fixed on the run clock once ([`Phases`]), and
//! that one value is what the collector, the clients' recorders, the observers of the
//! run and the metrics read, and what the results file keeps
//! (`pgbench_results::RunResult::phases`). A transaction belongs to the phase in which
//! it ends.

use pgbench_results::PhaseSpan;

/// What a part of the run is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    /// Run, not counted.
    WarmUp,
    /// Counted: the report's figures.
    Measured,
}

impl PhaseKind {
    /// Its name in the results file.
    pub fn name(self) -> &'static str {
        match self {
            PhaseKind::WarmUp => "warm-up",
            PhaseKind::Measured => "measured",
        }
    }
}

/// The phases as asked for, before the run: how long each lasts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PhasePlan {
    /// `--warmup`, seconds.
    pub warmup_s: Option<i64>,
}

impl PhasePlan {
    /// Whether the run starts with a warm-up.
    pub fn has_warmup(&self) -> bool {
        self.warmup_s.is_some()
    }

    /// The phases of a run whose clients were let go at `start_us` (run clock).
    pub fn anchored(&self, start_us: i64) -> Phases {
        Phases {
            start_us,
            measure_from_us: start_us + self.warmup_s.unwrap_or(0) * 1_000_000,
        }
    }
}

/// The phases on the run clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phases {
    /// When the clients were let go.
    pub start_us: i64,
    /// When the measured part begins: `start_us`, or the end of the warm-up.
    pub measure_from_us: i64,
}

impl Phases {
    /// Whether the run starts with a warm-up.
    pub fn has_warmup(&self) -> bool {
        self.measure_from_us > self.start_us
    }

    /// The phase a transaction ending at `at_us` belongs to.
    #[inline]
    pub fn kind_at(&self, at_us: i64) -> PhaseKind {
        if at_us < self.measure_from_us {
            PhaseKind::WarmUp
        } else {
            PhaseKind::Measured
        }
    }

    /// The phases of a run that ended at `end_us`, as the results file keeps them:
    /// seconds from the clients' start, each cut at the end (a warm-up a signal cut
    /// short has no measured part).
    pub fn spans(&self, end_us: i64) -> Vec<PhaseSpan> {
        let at = |us: i64| (us.min(end_us) - self.start_us).max(0) as f64 / 1e6;
        let mut spans = Vec::with_capacity(2);
        if self.has_warmup() {
            spans.push(PhaseSpan {
                name: PhaseKind::WarmUp.name().to_string(),
                start_s: 0.0,
                end_s: at(self.measure_from_us),
            });
        }
        if end_us > self.measure_from_us || !self.has_warmup() {
            spans.push(PhaseSpan {
                name: PhaseKind::Measured.name().to_string(),
                start_s: at(self.measure_from_us),
                end_s: at(end_us),
            });
        }
        spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_belongs_to_the_phase_it_ends_in() {
        let p = PhasePlan { warmup_s: Some(5) }.anchored(1_000_000);
        assert!(p.has_warmup());
        assert_eq!(p.kind_at(5_999_999), PhaseKind::WarmUp);
        assert_eq!(p.kind_at(6_000_000), PhaseKind::Measured);
        let none = PhasePlan::default().anchored(1_000_000);
        assert!(!none.has_warmup());
        assert_eq!(none.kind_at(1_000_000), PhaseKind::Measured);
    }

    #[test]
    fn the_file_keeps_each_phase_cut_at_the_end() {
        let p = PhasePlan { warmup_s: Some(5) }.anchored(1_000_000);
        let spans = |end| {
            p.spans(end)
                .into_iter()
                .map(|s| (s.name, s.start_s, s.end_s))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            spans(16_000_000),
            vec![
                ("warm-up".to_string(), 0.0, 5.0),
                ("measured".to_string(), 5.0, 15.0)
            ]
        );
        // Ctrl-C 2 s into the warm-up.
        assert_eq!(spans(3_000_000), vec![("warm-up".to_string(), 0.0, 2.0)]);
        let none = PhasePlan::default().anchored(0);
        assert_eq!(
            none.spans(10_000_000)
                .into_iter()
                .map(|s| (s.name, s.end_s))
                .collect::<Vec<_>>(),
            vec![("measured".to_string(), 10.0)]
        );
    }
}
