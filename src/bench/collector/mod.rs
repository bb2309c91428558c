//! The collector: receives every client's events, keeps the run's counters and
//! histograms (and, when asked, the per-second series), prints each client abort as
//! it arrives and a `-P` line found due at its look (a client thread prints one it
//! finds due first: [`ProgressBoard`]), and returns what it counted when the last
//! client is done. It reads time and writes text only through what it is
//! handed, so it is tested with canned events.
//!
//! Under `--warmup`, a transaction that ends before the warm-up does is counted
//! apart ([`Warm`]: its own totals, its own series) and nowhere else.

use super::events::{ClientDone, Event, Outbox, TxRecord};
use super::phases::{PhaseKind, Phases};
use super::progress::ProgressBoard;
use crossbeam_channel::{Receiver, TryRecvError};
use pgbench_results::series::{Second, SeriesRecorder};
use pgbench_results::stages::StageCounts;
use pgbench_results::{CommandStats, LatencyCounts, StatsData, TxOutcome};
use std::time::Duration;

/// How long the collector sleeps between looks at the channel, µs.
const POLL_US: i64 = 20_000;

/// What the collector needs to know of the run.
#[derive(Debug, Clone)]
pub struct CollectorPlan {
    pub clients: usize,
    pub scripts: usize,
    pub latency_limit_us: Option<i64>,
    pub throttled: bool,
    /// Keep latency histograms (`--latency-percentiles`, results files).
    pub histograms: bool,
    /// Keep the per-second series (results files).
    pub series: bool,
    /// `--exit-on-abort`: stop collecting at the first abort.
    pub exit_on_abort: bool,
    /// The run's phases: counted apart in the warm-up, if it has one.
    pub phases: Phases,
    /// `-T`: the measured part's seconds (its series has that many).
    pub duration_s: Option<i64>,
    /// `--reconnect`: its outages are counted ([`super::availability`]).
    pub availability: Option<super::plan::AvailabilityPlan>,
    /// `--rate-stages`, `--client-stages`: each stage is a window of the run clock
    /// whose transactions are counted apart too.
    pub stages: Option<(super::stages::StagePlan, super::stages::StageClock)>,
}

/// What the warm-up did: counted apart from the run, kept for the results file.
#[derive(Debug, Clone)]
pub struct Warm {
    /// When the warm-up ends (and the measured part begins), µs on the run clock.
    pub until_us: i64,
    pub total: StatsData,
    /// Its per-second series, when the run keeps one.
    pub series: Option<SeriesRecorder>,
}

impl Warm {
    /// What the results file keeps of it (`seconds`: `--warmup`), for a run whose
    /// last client ended at `end_us`.
    pub fn finish(self, seconds: i64, end_us: i64) -> pgbench_results::Warmup {
        pgbench_results::Warmup {
            seconds,
            total: self.total,
            // Up to its last µs: the second holding its end is the run's. A run
            // stopped in its warm-up ends the series where it ended, not with seconds
            // that never ran.
            series: self
                .series
                .map(|s| s.finish(self.until_us.min(end_us + 1) - 1))
                .unwrap_or_default(),
        }
    }

    fn record_batch(&mut self, batch: &[TxRecord], throttled: bool) {
        let before = self.total;
        for r in batch {
            self.total
                .accum(r.outcome, r.latency, r.lag, r.tries, throttled);
        }
        if let Some(series) = &mut self.series {
            series.record_batch(batch, throttled, (&before, &self.total));
        }
    }
}

/// The optional records: latency histograms (run and per script) and the
/// per-second series.
#[derive(Debug, Clone)]
pub struct Extras {
    /// The run's latencies, when kept and there is no series (a series adds them up
    /// from its seconds, so each latency is counted once).
    pub run: Option<LatencyCounts>,
    /// Each script's latencies, when kept and there are several scripts (with one,
    /// the script's are the run's).
    pub per_script: Vec<LatencyCounts>,
    pub series: Option<SeriesRecorder>,
    /// `run` or `per_script` is kept.
    counts_latencies: bool,
}

impl Extras {
    /// Counts one client's batch; `totals` are the run's before and after it.
    fn record_batch(
        &mut self,
        batch: &[TxRecord],
        throttled: bool,
        totals: (&StatsData, &StatsData),
    ) {
        if let Some(series) = &mut self.series {
            series.record_batch(batch, throttled, totals);
        }
        // A results file of a one-script run (the common case) stops here.
        if !self.counts_latencies {
            return;
        }
        if let Some(run) = &mut self.run {
            run.record_successes(batch);
        }
        if !self.per_script.is_empty() {
            for r in batch.iter().filter(|r| r.outcome == TxOutcome::Success) {
                self.per_script[r.script as usize].record(r.latency);
            }
        }
    }

    /// The series (if kept) and the run's latencies (if kept).
    pub fn finish(self, end_us: i64) -> (Option<Vec<Second>>, Option<LatencyCounts>) {
        match self.series {
            Some(series) => {
                let (seconds, run) = series.finish_with_run_latencies(end_us);
                (Some(seconds), run.or(self.run))
            }
            None => (None, self.run),
        }
    }
}

/// Everything counted.
#[derive(Debug, Clone)]
pub struct Collected {
    pub total: StatsData,
    pub per_script: Vec<StatsData>,
    /// The clients' `-r` counters added up; empty when the run keeps none.
    pub commands: Vec<Vec<CommandStats>>,
    pub conn_total_duration_us: f64,
    /// Every client's statements by kind.
    pub queries: super::events::StatementKinds,
    pub latency_late: i64,
    pub aborted: usize,
    /// What only some runs keep; one test per transaction when none is kept.
    pub extras: Option<Box<Extras>>,
    /// When the last client finished, µs on the run clock.
    pub last_client_end: i64,
    /// `--exit-on-abort` fired: the thread of the client that aborted.
    pub stopped_by_thread: Option<usize>,
    /// Clients stopped in the middle of a transaction (by Ctrl-C or an overdue end).
    pub unfinished: usize,
    /// Transactions left uncounted after sending what may commit (see
    /// [`ClientDone::cut_short_in_doubt`]).
    pub cut_short_in_doubt: i64,
    /// `--warmup`: what it did.
    pub warmup: Option<Warm>,
    /// Clients the collector stopped waiting for (stuck even after the stop).
    pub abandoned: usize,
    /// `--reconnect`: its outages.
    pub outages: Option<Box<super::availability::Outages>>,
    /// `--rate-stages`, `--client-stages`: what each stage's window counted.
    pub stages: Option<Vec<StageCounts>>,
}

impl Collected {
    /// Nothing counted yet; the series (if kept) starts at `start_us`, or after a
    /// warm-up at its end (the warm-up's own at `start_us`).
    pub fn new(plan: &CollectorPlan, start_us: i64) -> Collected {
        let warmup = plan.phases.has_warmup().then(|| Warm {
            until_us: plan.phases.measure_from_us,
            total: StatsData::default(),
            series: plan.series.then(|| SeriesRecorder::new(start_us)),
        });
        let start_us = match plan.phases.has_warmup() {
            true => plan.phases.measure_from_us,
            false => start_us,
        };
        let per_script = if plan.scripts > 1 { plan.scripts } else { 0 };
        let histograms = |n: usize| (0..n).map(|_| LatencyCounts::new()).collect::<Vec<_>>();
        Collected {
            total: StatsData::default(),
            per_script: vec![StatsData::default(); plan.scripts],
            commands: Vec::new(),
            conn_total_duration_us: 0.0,
            queries: Default::default(),
            latency_late: 0,
            aborted: 0,
            extras: (plan.histograms || plan.series).then(|| {
                let series = plan.series.then(|| {
                    match plan.histograms {
                        true => SeriesRecorder::keeping_run_latencies(start_us),
                        false => SeriesRecorder::new(start_us),
                    }
                    .lasting(plan.duration_s)
                });
                let run = (plan.histograms && !plan.series).then(LatencyCounts::new);
                let per_script = histograms(if plan.histograms { per_script } else { 0 });
                Box::new(Extras {
                    counts_latencies: run.is_some() || !per_script.is_empty(),
                    run,
                    per_script,
                    series,
                })
            }),
            last_client_end: 0,
            stopped_by_thread: None,
            unfinished: 0,
            cut_short_in_doubt: 0,
            warmup,
            abandoned: 0,
            outages: plan
                .availability
                .map(|a| Box::new(super::availability::Outages::new(a, start_us))),
            stages: plan.stages.as_ref().map(|(_, clock)| {
                let stage = StageCounts {
                    by_script: vec![0; if plan.scripts > 1 { plan.scripts } else { 0 }],
                    ..StageCounts::default()
                };
                vec![stage; clock.ends_us.len()]
            }),
        }
    }

    /// Counts a client's batch of transactions (see [`Collected::record`]); returns
    /// its measured part (after any warm-up).
    pub fn record_batch<'b>(
        &mut self,
        plan: &CollectorPlan,
        batch: &'b [TxRecord],
    ) -> &'b [TxRecord] {
        // A client's batch is in the order its transactions ended.
        let batch = match &mut self.warmup {
            Some(w) if batch.first().is_some_and(|r| r.end_us < w.until_us) => {
                let split = batch.partition_point(|r| r.end_us < w.until_us);
                w.record_batch(&batch[..split], plan.throttled);
                &batch[split..]
            }
            _ => batch,
        };
        if batch.is_empty() {
            return batch;
        }
        let before = self.total;
        for r in batch {
            self.record(plan, r);
        }
        if let Some(extras) = &mut self.extras {
            extras.record_batch(batch, plan.throttled, (&before, &self.total));
        }
        if let (Some(counts), Some((_, clock))) = (&mut self.stages, &plan.stages) {
            record_stages(counts, clock, plan, batch);
        }
        batch
    }

    /// Counts one transaction: totals, its script's counters and `-L` lateness (the
    /// optional histograms and series take whole batches).
    #[inline]
    pub fn record(&mut self, plan: &CollectorPlan, r: &TxRecord) {
        let script = r.script as usize;
        let throttled = plan.throttled;
        self.total
            .accum(r.outcome, r.latency, r.lag, r.tries, throttled);
        self.per_script[script].accum(r.outcome, r.latency, r.lag, r.tries, throttled);
        if plan.latency_limit_us.is_some_and(|l| r.latency > l as f64) {
            self.latency_late += 1;
        }
    }

    /// A client's last word: its `-r` counters (if kept) and connection time.
    fn client_done(&mut self, done: ClientDone) {
        self.last_client_end = self.last_client_end.max(done.end_us);
        self.unfinished += usize::from(done.unfinished);
        self.cut_short_in_doubt += done.cut_short_in_doubt;
        self.conn_total_duration_us += done.conn_duration_us;
        self.queries.add(&done.queries);
        let Some(commands) = done.commands else {
            return;
        };
        if self.commands.is_empty() {
            self.commands = commands;
        } else {
            for (mine, theirs) in self.commands.iter_mut().zip(&commands) {
                for (m, t) in mine.iter_mut().zip(theirs) {
                    m.merge(t);
                }
            }
        }
    }
}

/// Counts a batch in the stages' windows: each transaction in the stage it ended in.
fn record_stages(
    counts: &mut [StageCounts],
    clock: &super::stages::StageClock,
    plan: &CollectorPlan,
    batch: &[TxRecord],
) {
    for r in batch {
        let stage = &mut counts[clock.index_of(r.end_us)];
        stage
            .total
            .accum(r.outcome, r.latency, r.lag, r.tries, plan.throttled);
        if r.outcome == TxOutcome::Success {
            stage.latencies.record(r.latency);
            if let Some(n) = stage.by_script.get_mut(r.script as usize) {
                *n += 1;
            }
            if plan.latency_limit_us.is_some_and(|l| r.latency > l as f64) {
                stage.late += 1;
            }
        }
    }
}

/// What the collector reads and writes besides the events.
pub struct Hooks<'a> {
    /// Reads the run clock.
    pub now: &'a mut dyn FnMut() -> i64,
    /// Gets the stderr text (progress lines, aborts).
    pub out: &'a mut dyn FnMut(&str),
    /// Called at every look with the time and the longest transaction counted (µs):
    /// enforces the run's end; true says to stop waiting for the clients left.
    pub watch: &'a mut dyn FnMut(i64, f64) -> bool,
    /// `--metrics-listen`: gets every batch, abort and last word too.
    pub live: Option<&'a crate::metrics::Live>,
    /// Where the clients leave their finished transactions (besides any
    /// [`Event::Batch`]).
    pub outbox: Option<&'a Outbox>,
    /// `-P`: the clients' figures for the line, and its schedule.
    pub board: Option<&'a ProgressBoard>,
}

/// Counts a batch however it came: the outages, the totals, the live figures.
fn take_batch(
    c: &mut Collected,
    plan: &CollectorPlan,
    records: &[TxRecord],
    live: Option<&crate::metrics::Live>,
) {
    if let Some(o) = &mut c.outages {
        o.record_batch(records);
    }
    let measured = c.record_batch(plan, records);
    if let Some(l) = live {
        let warm = c.warmup.as_ref().map(|w| &w.total);
        l.record_batch(measured, &c.per_script, warm);
    }
}

/// Counts what the clients left in the outbox since the last look (a slot a client
/// holds right now waits for the next); `scratch` is an empty vector to swap in.
fn take_outbox(
    c: &mut Collected,
    plan: &CollectorPlan,
    (outbox, scratch): (Option<&Outbox>, &mut Vec<TxRecord>),
    live: Option<&crate::metrics::Live>,
) {
    let Some(outbox) = outbox else {
        return;
    };
    for local in 0..outbox.clients() {
        if outbox.take(local, scratch) {
            take_batch(c, plan, scratch, live);
            scratch.clear();
        }
    }
}

/// Collects until every client is done (or, with `--exit-on-abort`, one aborted).
/// `start_us` is when the client threads started.
pub fn collect(
    plan: &CollectorPlan,
    rx: &Receiver<Event>,
    start_us: i64,
    hooks: &mut Hooks<'_>,
) -> Collected {
    let Hooks {
        now,
        out,
        watch,
        live,
        outbox,
        board,
    } = hooks;
    let (live, outbox, board) = (*live, *outbox, *board);
    let mut scratch = Vec::new();
    if let Some(l) = live {
        let measure_from = plan.phases.has_warmup();
        l.started(
            start_us,
            measure_from.then_some(plan.phases.measure_from_us),
            now(),
        );
        if let Some((stages, clock)) = plan.stages.clone() {
            // Read at each scrape, on the endpoint's thread: nothing here or in
            // the clients computes it.
            l.staged(Box::new(move |t| live_stage(&stages, &clock, t)));
        }
    }
    let mut c = Collected::new(plan, start_us);
    let mut done = 0;
    while done < plan.clients {
        // The collector polls: it sleeps a little, then takes whatever arrived. Being
        // woken for every batch would cost a futex wake-up (and crossbeam's spinning)
        // per batch, CPU the clients and the server on the same cores need.
        match rx.try_recv() {
            Ok(Event::Batch(records)) => {
                // On the board too, where the client would have put them.
                if let Some(b) = board {
                    for r in &records {
                        let warm = plan.phases.kind_at(r.end_us) == PhaseKind::WarmUp;
                        let figures = (r.latency, r.lag);
                        b.record(0, warm, r.outcome, figures, r.tries, plan.throttled);
                    }
                }
                take_batch(&mut c, plan, &records, live)
            }
            Ok(Event::Aborted { thread, abort }) => {
                out(&abort.render());
                c.aborted += 1;
                live.inspect(|l| l.aborted());
                if plan.exit_on_abort {
                    c.stopped_by_thread = Some(thread);
                    live.inspect(|l| l.finished(now()));
                    return c;
                }
            }
            Ok(Event::Done(d)) => {
                // The client left its last records before its last word.
                take_outbox(&mut c, plan, (outbox, &mut scratch), live);
                done += 1;
                c.client_done(d);
                live.inspect(|l| l.client_done());
            }
            Ok(Event::Link(event)) => {
                // The transaction a loss failed is counted before the loss.
                take_outbox(&mut c, plan, (outbox, &mut scratch), live);
                c.link(event, live)
            }
            Err(TryRecvError::Disconnected) => {
                take_outbox(&mut c, plan, (outbox, &mut scratch), live);
                break;
            }
            Err(TryRecvError::Empty) => {
                take_outbox(&mut c, plan, (outbox, &mut scratch), live);
                // Only when idle: after the run's end the channel goes quiet.
                let t = now();
                if watch(t, c.total.latency.max) {
                    // Clients that did not end even with their sockets shut.
                    c.abandoned = plan.clients - done;
                    c.unfinished += c.abandoned;
                    c.last_client_end = c.last_client_end.max(t);
                    break;
                }
                live.inspect(|l| l.tick(t));
                let wait = board.map_or(POLL_US, |b| b.due_in(t).min(POLL_US));
                std::thread::sleep(Duration::from_micros(wait as u64));
            }
        }
        // A line no client printed yet (all of them waiting, or a run without
        // transactions) comes from here.
        if let Some(b) = board.filter(|_| done < plan.clients) {
            b.print_due(now(), *out);
        }
    }
    // Everything counted is in before the report is printed.
    if let Some(l) = live {
        l.finished(now());
    }
    c
}

/// Where `stages` are at `t_us` on the run clock, as the metrics endpoint shows it.
fn live_stage(
    stages: &super::stages::StagePlan,
    clock: &super::stages::StageClock,
    t_us: i64,
) -> crate::metrics::live::StageNow {
    use crate::metrics::live::{StageNow, StageTarget};
    let at = stages.at(clock, t_us);
    StageNow {
        stage: at.index,
        stages: at.count,
        target: match stages {
            super::stages::StagePlan::Rate(_) => StageTarget::Rate(at.value),
            super::stages::StagePlan::Clients(_) => StageTarget::Clients(at.value),
        },
    }
}

impl Collected {
    /// A client's word of its connection: counted, and shown live.
    pub(super) fn link(
        &mut self,
        event: super::events::LinkEvent,
        live: Option<&crate::metrics::Live>,
    ) {
        if let Some(o) = &mut self.outages {
            o.link(event);
            if let Some(l) = live {
                l.link(o.reconnects(), o.out_now());
            }
        }
    }
}

#[cfg(test)]
mod tests;
