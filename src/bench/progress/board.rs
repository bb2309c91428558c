//! Who prints the `-P` line: the first thread to find it due. Each client keeps the
//! figures the line reads in a slot of its own; a client thread after a transaction,
//! or the collector at its look, that finds a line due sums the slots and prints it,
//! as pgbench's thread 0 sums its threads' counters and prints.
//!
//! Why not the collector alone: at `-c 1000 -j 1000` it is one runnable thread among
//! 2,000 on two cores. After its timer fired it waited up to 1.5 s in the run queue
//! before it ran, and up to 3 s when preempted in the middle of its work (issue #49,
//! `perf sched`), so its lines came seconds late. A client thread runs as often as
//! any client does, and summing even 1,000 slots is a few microseconds of work, too
//! little to be preempted in.

use super::{ProgressClock, ProgressFormat};
use crate::bench::phases::Phases;
use crate::bench::stages::{StageClock, StagePlan};
use pgbench_results::{StatsData, TxOutcome};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, TryLockError};

/// What the line reads of one client's transactions (of one phase). Written by its
/// client alone (a load and a store, no locked instruction), read by the printer:
/// a transaction being written as the line is summed counts in the next line, as in
/// pgbench. A cache line of its own, so that a client's writes do not slow its
/// neighbours'.
#[repr(align(64))]
#[derive(Debug, Default)]
struct Slot {
    cnt: AtomicU64,
    skipped: AtomicU64,
    retries: AtomicU64,
    retried: AtomicU64,
    /// Failures of every kind: the line shows their sum.
    failures: AtomicU64,
    /// Of successful transactions, µs (f64 bits), as `StatsData`'s latency and lag.
    latency_sum: AtomicU64,
    latency_sum2: AtomicU64,
    lag_sum: AtomicU64,
}

/// Adds to a counter only this thread writes.
#[inline(always)]
fn bump(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Relaxed) + by, Relaxed);
}

/// Adds to a sum (f64 bits) only this thread writes.
#[inline(always)]
fn add_f(sum: &AtomicU64, v: f64) {
    sum.store((f64::from_bits(sum.load(Relaxed)) + v).to_bits(), Relaxed);
}

impl Slot {
    /// One transaction, counted as `StatsData::accum` counts it.
    #[inline]
    fn add(&self, outcome: TxOutcome, latency: f64, lag: f64, tries: u32, throttled: bool) {
        if tries > 1 {
            bump(&self.retries, u64::from(tries - 1));
            bump(&self.retried, 1);
        }
        match outcome {
            TxOutcome::Success => {
                bump(&self.cnt, 1);
                add_f(&self.latency_sum, latency);
                add_f(&self.latency_sum2, latency * latency);
                if throttled {
                    add_f(&self.lag_sum, lag);
                }
            }
            TxOutcome::Skipped => bump(&self.skipped, 1),
            _ => bump(&self.failures, 1),
        }
    }

    /// Adds this slot's figures to `into` (failures as `other_sql_failures`).
    fn sum_into(&self, into: &mut StatsData) {
        let n = |c: &AtomicU64| c.load(Relaxed) as i64;
        let f = |c: &AtomicU64| f64::from_bits(c.load(Relaxed));
        into.counts.cnt += n(&self.cnt);
        into.counts.skipped += n(&self.skipped);
        into.counts.retries += n(&self.retries);
        into.counts.retried += n(&self.retried);
        into.counts.other_sql_failures += n(&self.failures);
        into.latency.sum += f(&self.latency_sum);
        into.latency.sum2 += f(&self.latency_sum2);
        into.lag.sum += f(&self.lag_sum);
    }
}

/// The warm-up's figures and the measured part's: the slot a transaction goes in.
const WARM: usize = 0;
const MEASURED: usize = 1;

/// The printer's state, behind the board's lock: the schedule and what a line says
/// besides the counters. Set when the clients are let go.
#[derive(Debug)]
struct Printer {
    clock: ProgressClock,
    /// In the warm-up, when it ends: the lines say `warm-up` and count its slots.
    warm_until: Option<i64>,
    /// `--rate-stages`, `--client-stages`: a line names the stage of its interval.
    stages: Option<(StagePlan, StageClock)>,
    epoch_shift_us: i64,
}

impl Printer {
    /// When there is next something to do: a line, or the warm-up's end.
    fn next_at(&self) -> i64 {
        self.clock
            .next_at()
            .min(self.warm_until.unwrap_or(i64::MAX))
    }
}

/// The `-P` figures of every client of this process, and the line's schedule.
#[derive(Debug)]
pub struct ProgressBoard {
    /// By the client's index in this process: its warm-up's slot and its measured
    /// part's.
    slots: Vec<[Slot; 2]>,
    period_us: i64,
    format: ProgressFormat,
    /// When the printer next has something to do, µs on the run clock; never before
    /// the run begins. Read by every client after every transaction: the one word
    /// they all read, written once a line.
    next_due: AtomicI64,
    printer: Mutex<Option<Printer>>,
}

impl ProgressBoard {
    /// A board for `clients` clients, lines every `period_us` in `format`.
    pub fn new(clients: usize, period_us: i64, format: ProgressFormat) -> ProgressBoard {
        ProgressBoard {
            slots: (0..clients).map(|_| Default::default()).collect(),
            period_us,
            format,
            next_due: AtomicI64::new(i64::MAX),
            printer: Mutex::new(None),
        }
    }

    /// The client threads start connecting: lines are due every period from
    /// `start_us`, as in pgbench's `threadRun` (the first interval includes the
    /// connections; a line due while 1,000 clients connect is printed then, with
    /// nothing counted, rather than late).
    pub fn start(&self, start_us: i64, epoch_shift_us: i64) {
        let mut printer = self.lock();
        let p = printer.get_or_insert_with(|| Printer {
            clock: ProgressClock::new(self.period_us, self.format, start_us),
            warm_until: None,
            stages: None,
            epoch_shift_us,
        });
        self.next_due.store(p.next_at(), Relaxed);
    }

    /// The clients are let go: lines are due every period from `start_us` unless
    /// [`Self::start`] set the schedule already; the warm-up's lines, if `phases`
    /// has one, say so, and the measured part's count from its start.
    pub fn begin(
        &self,
        start_us: i64,
        phases: Phases,
        stages: Option<(StagePlan, StageClock)>,
        epoch_shift_us: i64,
    ) {
        self.start(start_us, epoch_shift_us);
        let mut printer = self.lock();
        let p = printer.as_mut().expect("just started");
        p.warm_until = phases.has_warmup().then_some(phases.measure_from_us);
        p.stages = stages;
        self.next_due.store(p.next_at(), Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Printer>> {
        self.printer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Client `local`'s transaction ended: counted in the warm-up's figures (`warm`)
    /// or the measured part's.
    #[inline]
    pub fn record(
        &self,
        local: usize,
        warm: bool,
        outcome: TxOutcome,
        (latency, lag): (f64, f64),
        tries: u32,
        throttled: bool,
    ) {
        if let Some(slots) = self.slots.get(local) {
            slots[if warm { WARM } else { MEASURED }].add(outcome, latency, lag, tries, throttled);
        }
    }

    /// Whether something is due at `now`: one load, for every client after every
    /// transaction.
    #[inline]
    pub fn due(&self, now: i64) -> bool {
        now >= self.next_due.load(Relaxed)
    }

    /// How long until something is due, µs (for a thread that sleeps until then).
    pub fn due_in(&self, now: i64) -> i64 {
        (self.next_due.load(Relaxed).saturating_sub(now)).max(0)
    }

    /// Prints the line due at `now` to `out`, unless none is or another thread is
    /// printing it; at the warm-up's end, the lines start counting the measured part.
    pub fn print_due(&self, now: i64, out: &mut dyn FnMut(&str)) {
        if !self.due(now) {
            return;
        }
        let mut guard = match self.printer.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        let Some(p) = guard.as_mut() else {
            return;
        };
        let phase = if p.warm_until.is_some() {
            WARM
        } else {
            MEASURED
        };
        let mut total = StatsData::default();
        for slots in &self.slots {
            slots[phase].sum_into(&mut total);
        }
        if let Some(line) = p.clock.tick(now, &total, p.epoch_shift_us) {
            let line = self.with_stage(line, p.stages.as_ref(), now);
            match phase {
                WARM => out(&format!("warm-up {line}")),
                _ => out(&line),
            }
        }
        if let Some(until) = p.warm_until.filter(|&u| now >= u) {
            p.clock.restart(until);
            p.warm_until = None;
        }
        self.next_due.store(p.next_at(), Relaxed);
    }

    /// A line of a staged run names the stage in force in the middle of its interval
    /// (which ends at `t`), and the value then.
    fn with_stage(&self, line: String, stages: Option<&(StagePlan, StageClock)>, t: i64) -> String {
        match stages {
            Some((stages, clock)) => {
                let body = line.strip_suffix('\n').unwrap_or(&line);
                let middle = t - self.period_us / 2;
                format!("{body}, {}\n", stages.describe_at(clock, middle))
            }
            None => line,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::phases::PhasePlan;

    fn board(clients: usize) -> ProgressBoard {
        let format = ProgressFormat {
            timestamp: false,
            throttled: false,
            latency_limit: false,
            show_retries: true,
        };
        ProgressBoard::new(clients, 1_000_000, format)
    }

    fn printed(b: &ProgressBoard, now: i64) -> String {
        let mut text = String::new();
        b.print_due(now, &mut |s| text.push_str(s));
        text
    }

    #[test]
    fn nothing_is_due_before_the_run_begins() {
        let b = board(1);
        assert!(!b.due(i64::MAX - 1));
        assert_eq!(printed(&b, 5_000_000), "");
    }

    #[test]
    fn a_line_sums_every_clients_slot_once_and_counts_from_the_last() {
        let b = board(3);
        b.begin(0, PhasePlan::default().anchored(0), None, 0);
        b.record(0, false, TxOutcome::Success, (1_000.0, 0.0), 1, false);
        b.record(2, false, TxOutcome::Success, (3_000.0, 0.0), 3, false);
        b.record(1, false, TxOutcome::DeadlockFailure, (0.0, 0.0), 2, false);
        assert!(!b.due(999_999));
        assert_eq!(printed(&b, 999_999), "");
        assert_eq!(b.due_in(400_000), 600_000);
        assert_eq!(
            printed(&b, 1_000_000),
            "progress: 1.0 s, 2.0 tps, lat 2.000 ms stddev 1.000, 1 failed, \
             2 retried, 3 retries\n"
        );
        // Printed once: the next is due a period on.
        assert_eq!(printed(&b, 1_000_000), "");
        b.record(1, false, TxOutcome::Success, (5_000.0, 0.0), 1, false);
        assert_eq!(
            printed(&b, 2_500_000),
            "progress: 2.5 s, 0.7 tps, lat 5.000 ms stddev 0.000, 0 failed, \
             0 retried, 0 retries\n"
        );
        assert_eq!(b.due_in(2_500_000), 500_000);
    }

    #[test]
    fn the_warm_ups_lines_say_so_and_the_measured_part_counts_from_its_start() {
        let b = board(1);
        b.begin(0, PhasePlan { warmup_s: Some(1) }.anchored(0), None, 0);
        b.record(0, true, TxOutcome::Success, (1_000.0, 0.0), 1, false);
        b.record(0, true, TxOutcome::Success, (3_000.0, 0.0), 1, false);
        assert_eq!(
            printed(&b, 1_000_000),
            "warm-up progress: 1.0 s, 2.0 tps, lat 2.000 ms stddev 1.000, 0 failed, \
             0 retried, 0 retries\n"
        );
        b.record(0, false, TxOutcome::Success, (6_000.0, 0.0), 1, false);
        assert_eq!(
            printed(&b, 2_000_000),
            "progress: 1.0 s, 1.0 tps, lat 6.000 ms stddev 0.000, 0 failed, \
             0 retried, 0 retries\n"
        );
    }

    /// Lines due while the clients connect are printed then, with nothing counted;
    /// the run's beginning does not restart the schedule.
    #[test]
    fn lines_come_on_time_while_the_clients_connect() {
        let b = board(1);
        b.start(0, 0);
        assert!(printed(&b, 1_000_000).starts_with("progress: 1.0 s, 0.0 tps"));
        b.begin(1_500_000, PhasePlan::default().anchored(1_500_000), None, 0);
        assert_eq!(b.due_in(1_500_000), 500_000);
        b.record(0, false, TxOutcome::Success, (1_000.0, 0.0), 1, false);
        assert!(printed(&b, 2_000_000).starts_with("progress: 2.0 s, 1.0 tps"));
    }

    /// A thread that finds the printer busy goes on: it never waits for a line.
    #[test]
    fn a_thread_finding_another_printing_does_not_wait() {
        let b = board(1);
        b.begin(0, PhasePlan::default().anchored(0), None, 0);
        let held = b.printer.lock().unwrap();
        assert_eq!(printed(&b, 1_000_000), "");
        drop(held);
        assert!(printed(&b, 1_000_000).starts_with("progress: 1.0 s"));
    }
}
