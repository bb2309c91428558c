//! Between transactions (pgbench.c CSTATE_CHOOSE_SCRIPT, CSTATE_PREPARE_THROTTLE and
//! CSTATE_THROTTLE): whether the client is done (`-t` counted, `-T` over), which
//! script runs next (by weight, from the thread's random state), and under `-R` when:
//! the schedule's next slot, or a skipped transaction when `-L` says it would start
//! too late. Under `--client-stages`, a client the count of active clients leaves
//! out waits here, between transactions, for its next turn; under stages, a client
//! with nothing left to run (its turns over, the rate down to 0) waits for the
//! run's end, which the stages set.

use super::{Client, Phase, Wait};
use crate::bench::error::ClientAbort;
use crate::bench::stages::StagePlan;
use crate::bench::throttle::Slot;
use pgbench_results::{Limit, TxOutcome};
use pgbench_script::prng::choose_script;

/// How long a client left out by `--client-stages` sleeps before it looks again, µs.
const GATE_POLL_US: i64 = 50_000;

/// What the client does after choosing a script.
enum Next {
    Run {
        script: usize,
        scheduled: Option<i64>,
    },
    /// Wait for the `-R` slot at `at`, then run.
    Throttle { script: usize, at: i64 },
    /// `--rate-stages`: no slot is left before the end; wait for it.
    Idle,
    /// The run is over for this client.
    Finish,
}

impl Client<'_> {
    /// CSTATE_CHOOSE_SCRIPT: the next transaction, its slot, or the end.
    pub(super) fn choose(&mut self) -> Result<Option<Wait>, ClientAbort> {
        let ctx = self.ctx;
        if ctx.plan.settings.limit.duration().is_some() && ctx.control.clock.timer_exceeded() {
            return Ok(Some(Wait::Done));
        }
        if let Some(wait) = self.stage_gate() {
            return Ok(Some(wait));
        }
        match self.next_transaction() {
            Next::Run { script, scheduled } => {
                self.start_transaction(script, scheduled)?;
                Ok(None)
            }
            Next::Throttle { script, at } => {
                self.phase = Phase::Throttled { script, at };
                Ok(Some(Wait::Until(at)))
            }
            Next::Idle => Ok(Some(self.idle_until(None))),
            Next::Finish => Ok(Some(Wait::Done)),
        }
    }

    /// Waits between transactions, under stages, until `at` or the run's end
    /// (`None`: the end), looking again at least every [`GATE_POLL_US`]: a stop
    /// brings the end forward, and a waiting client must see it.
    fn idle_until(&mut self, at: Option<i64>) -> Wait {
        let now = self.now();
        let end = self.ctx.control.clock.end_us().unwrap_or(now);
        let at = at.unwrap_or(end).min(end).min(now + GATE_POLL_US);
        if at <= now {
            return Wait::Done;
        }
        self.record.flush_before_wait(now, at);
        Wait::Until(at)
    }

    /// `--client-stages`: `None` while the client is active; else a wait for the
    /// time it becomes active again, or for the run's end when it never does. A
    /// client that leaves has ended its transaction (this runs between
    /// transactions); one that joins starts at its instant.
    fn stage_gate(&mut self) -> Option<Wait> {
        // The run's, or its scenario's (its clients counted from its first).
        let (profile, origin_us, first) = match (&self.ctx.plan.stages, &self.group.stages) {
            (Some(StagePlan::Clients(profile)), _) => {
                (profile, self.ctx.stage_clock.get()?.origin_us, 0)
            }
            (_, Some((StagePlan::Clients(profile), clock))) => {
                (profile, clock.get()?.origin_us, self.group.first_client)
            }
            _ => return None,
        };
        let now = self.now();
        match profile.next_active(self.local_index - first, now - origin_us) {
            Some(at) if origin_us + at <= now => None,
            Some(at) => Some(self.idle_until(Some(origin_us + at))),
            None => Some(self.idle_until(None)),
        }
    }

    /// `-t` counted or `-T` over.
    pub(super) fn is_done(&self) -> bool {
        match self.ctx.plan.settings.limit {
            Limit::Transactions(n) => {
                self.record.counted() >= i64::from(n) || self.ctx.control.clock.timer_exceeded()
            }
            Limit::Duration(_) => self.ctx.control.clock.timer_exceeded(),
        }
    }

    /// CSTATE_CHOOSE_SCRIPT, then under `-R` CSTATE_PREPARE_THROTTLE / CSTATE_THROTTLE.
    fn next_transaction(&mut self) -> Next {
        let ctx = self.ctx;
        let group = self.group;
        let script = match group.lone_script {
            Some(only) => only,
            None => {
                let mut t = self.thread.lock();
                choose_script(&mut t.choose_rng, &group.weights)
            }
        };
        self.debug(|| {
            format!(
                "client {} executing script \"{}\"",
                self.id, ctx.scripts[script].script.desc
            )
        });
        let Some(schedule) = ctx.throttle_schedule(self.group) else {
            return Next::Run {
                script,
                scheduled: None,
            };
        };
        let limit = ctx.plan.settings.limit.transactions();
        loop {
            let may_skip = limit.is_none_or(|n| self.record.counted() < i64::from(n));
            let decision = {
                let mut t = self.thread.lock();
                let st = &mut *t;
                schedule.next(
                    &mut st.throttle_trigger,
                    &mut st.throttle_rng,
                    || ctx.control.clock.now_us(),
                    may_skip,
                )
            };
            match decision {
                Slot::Skip => {
                    let skipped = TxOutcome::Skipped;
                    self.record
                        .transaction(script, skipped, (0.0, 0.0), 1, self.now());
                    if limit.is_some_and(|n| self.record.counted() >= i64::from(n)) {
                        return Next::Finish;
                    }
                }
                // The stages last until the run's end, the client with them.
                Slot::End if ctx.plan.stages.is_some() && !ctx.control.clock.timer_exceeded() => {
                    return Next::Idle
                }
                Slot::End => return Next::Finish,
                Slot::Run(at) => {
                    let now = self.now();
                    if at > now {
                        self.record.flush_before_wait(now, at);
                        return Next::Throttle { script, at };
                    }
                    if ctx.control.clock.timer_exceeded() {
                        return Next::Finish;
                    }
                    return Next::Run {
                        script,
                        scheduled: Some(at),
                    };
                }
            }
        }
    }
}
