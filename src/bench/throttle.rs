//! The `-R` schedule (pgbench's CSTATE_PREPARE_THROTTLE): each pgbench thread draws
//! Poisson-distributed gaps from its own generator, and its clients take the slots in
//! turn; under `-L` a slot already too late is skipped, and past the `-T` deadline the
//! client stops. Under `--rate-stages` the gaps follow the rate in force
//! ([`super::stages::RateProfile`]). Pure: the caller holds the thread's lock and
//! reads the clock.

use super::stages::RateProfile;
use pgbench_script::prng::Prng;

/// What the next slot of the schedule is for the client that drew it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// Start the transaction at this run-clock instant (µs).
    Run(i64),
    /// `-L`: the slot is already later than the limit; count it skipped and draw again.
    Skip,
    /// `-T`: the slot is past the deadline; the client is done.
    End,
}

/// One pgbench thread's schedule parameters.
#[derive(Debug, Clone, Copy)]
pub struct Schedule<'a> {
    /// The thread's mean gap, µs (`throttle_delay`).
    pub delay_us: f64,
    pub latency_limit_us: Option<i64>,
    /// The `-T` deadline on the run clock.
    pub end_us: Option<i64>,
    /// `--rate-stages`: the rate over time, and the first stage's start on the run
    /// clock; `delay_us` is then unused.
    pub staged: Option<(&'a RateProfile, i64)>,
}

impl Schedule<'_> {
    /// Draws the next slot: moves the thread's `trigger` by one Poisson gap. `now` is
    /// read only under `-L`; `may_skip` is false once a `-t` client counted all its
    /// transactions (a skip would count one more).
    pub fn next(
        &self,
        trigger: &mut i64,
        rng: &mut Prng,
        now: impl FnOnce() -> i64,
        may_skip: bool,
    ) -> Slot {
        match self.staged {
            None => *trigger += rng.poisson(self.delay_us),
            Some((profile, origin_us)) => match profile.next_slot(*trigger - origin_us, rng) {
                Some(at) => *trigger = origin_us + at,
                None => return Slot::End,
            },
        }
        if let Some(limit) = self.latency_limit_us {
            if *trigger < now() - limit && may_skip {
                return Slot::Skip;
            }
        }
        if self.end_us.is_some_and(|end| *trigger > end) {
            return Slot::End;
        }
        Slot::Run(*trigger)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule() -> Schedule<'static> {
        Schedule {
            delay_us: 1_000.0,
            latency_limit_us: None,
            end_us: None,
            staged: None,
        }
    }

    #[test]
    fn slots_follow_the_threads_poisson_draws() {
        let mut rng = Prng::seed(42);
        let mut expected = Prng::seed(42);
        let mut trigger = 5_000;
        let mut at = 5_000;
        for _ in 0..100 {
            at += expected.poisson(1_000.0);
            assert_eq!(
                schedule().next(&mut trigger, &mut rng, || 0, true),
                Slot::Run(at)
            );
        }
        // About 1 ms apart on average.
        assert!((95_000..105_000).contains(&(at - 5_000)), "{at}");
    }

    #[test]
    fn late_slots_are_skipped_under_a_latency_limit_and_the_deadline_ends_the_run() {
        let s = Schedule {
            latency_limit_us: Some(500),
            ..schedule()
        };
        let mut rng = Prng::seed(1);
        let mut trigger = 0;
        // The clock is far ahead: every slot is late.
        assert_eq!(
            s.next(&mut trigger, &mut rng, || 1_000_000, true),
            Slot::Skip
        );
        // A -t client with nothing left to count does not skip.
        assert!(matches!(
            s.next(&mut trigger, &mut rng, || 1_000_000, false),
            Slot::Run(_)
        ));
        let s = Schedule {
            end_us: Some(trigger),
            ..schedule()
        };
        assert_eq!(s.next(&mut trigger, &mut rng, || 0, true), Slot::End);
    }

    #[test]
    fn staged_slots_follow_the_profile_on_the_run_clock_and_end_with_it() {
        let profile = RateProfile {
            start: 1_000.0,
            stages: crate::bench::stages::Stages::parse("1s:1000").unwrap(),
            threads: 1,
        };
        let s = Schedule {
            staged: Some((&profile, 50_000)),
            ..schedule()
        };
        let mut rng = Prng::seed(3);
        let mut trigger = 50_000;
        let mut slots = 0;
        while let Slot::Run(at) = s.next(&mut trigger, &mut rng, || 0, true) {
            assert!((50_000..=1_050_000).contains(&at), "{at}");
            slots += 1;
        }
        assert!((900..1_100).contains(&slots), "{slots}");
    }
}
