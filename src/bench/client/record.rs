//! What a client measures, and where it goes (pgbench.c `processXactStats` and
//! `doLog`): each transaction as a [`TxRecord`] to the collector, in batches through
//! the run's outbox (one slot per client, emptied by the collector); its `-l`
//! line through its thread's log; the `-r` counters (when the run keeps them:
//! [`crate::bench::plan::Keep::commands`]), the `-C` connection time and its
//! statements by kind, handed over once at the end. In `--warmup` the counters
//! restart at the first event after the warm-up (the collector splits the records by
//! their end).

use crate::bench::events::{ClientDone, StatementKinds, TxRecord};
use crate::bench::launch::{RunShared, ThreadShared};
use crate::bench::phases::PhaseKind;
use crate::bench::txlog::LoggedTx;
use pgbench_results::{CommandStats, TxOutcome};

/// How many records a client keeps before handing them over to the collector, and
/// how long at most (µs), so that progress reports see fresh figures.
const BATCH_RECORDS: usize = 64;
const BATCH_MAX_AGE_US: i64 = 10_000;

/// One client's measurements on their way to the collector.
pub(super) struct Recorder<'a> {
    /// pgbench's client number, for the `-l` line.
    id: usize,
    /// The client's index in this process: its slot in the outbox.
    local: usize,
    ctx: &'a RunShared,
    thread: &'a ThreadShared,
    /// Transactions counted so far (successful, failed, skipped): pgbench's `st->cnt`.
    counted: i64,
    /// `-r` counters per script and command, when the run keeps them: none
    /// otherwise, for that is a set per command of every script for every client.
    commands: Option<Vec<Vec<CommandStats>>>,
    batch: Vec<TxRecord>,
    batch_since: i64,
    /// Time spent in `-C` connects and disconnects, µs.
    conn_duration_us: f64,
    /// Its statements by what they returned, and the errors it survived (what a
    /// workload may report).
    pub(super) queries: StatementKinds,
    /// In `--warmup`: what is counted is thrown away at the first event after it.
    warm: bool,
    /// Transactions left uncounted after sending what may commit.
    cut_short_in_doubt: i64,
}

impl<'a> Recorder<'a> {
    pub(super) fn new(
        (local, id): (usize, usize),
        ctx: &'a RunShared,
        thread: &'a ThreadShared,
    ) -> Recorder<'a> {
        Recorder {
            id,
            local,
            ctx,
            thread,
            counted: 0,
            commands: ctx.plan.keep.commands.then(|| {
                ctx.scripts
                    .iter()
                    .map(|s| vec![CommandStats::default(); s.script.commands.len()])
                    .collect()
            }),
            batch: Vec::with_capacity(BATCH_RECORDS),
            batch_since: 0,
            conn_duration_us: 0.0,
            queries: Default::default(),
            warm: ctx.plan.phases.has_warmup(),
            cut_short_in_doubt: 0,
        }
    }

    /// Whether it keeps the `-r` counters, so its commands are timed.
    #[inline]
    pub(super) fn times_commands(&self) -> bool {
        self.commands.is_some()
    }

    /// Transactions counted so far (not those of the warm-up): what `-t` counts.
    #[inline]
    pub(super) fn counted(&self) -> i64 {
        self.counted
    }

    /// Whether `now` is in the warm-up. At the first event after it, the `-r` and
    /// `-C` counters restart (the collector splits the transactions by their end).
    #[inline]
    fn warming_up(&mut self, now: i64) -> bool {
        if !self.warm {
            return false;
        }
        if self
            .ctx
            .phases
            .get()
            .is_some_and(|p| p.kind_at(now) == PhaseKind::WarmUp)
        {
            return true;
        }
        self.warm = false;
        self.commands
            .iter_mut()
            .flatten()
            .flatten()
            .for_each(|c| *c = CommandStats::default());
        self.conn_duration_us = 0.0;
        self.queries = Default::default();
        false
    }

    /// A try of the transaction failed at `command` and is retried.
    pub(super) fn retried(&mut self, script: usize, command: usize, now: i64) {
        self.warming_up(now);
        if let Some(commands) = &mut self.commands {
            commands[script][command].retries += 1;
        }
        self.queries.errors += 1;
    }

    /// The transaction failed at `command` for good.
    ///
    /// The errors survived are counted here and in [`Self::retried`], not as the
    /// error arrives: so they are exactly the failed transactions plus the retries. A
    /// try whose error came after `-T` is neither (pgbench does not count it), and one
    /// that began in the warm-up is counted where its transaction is.
    pub(super) fn failed(&mut self, script: usize, command: usize, now: i64) {
        self.warming_up(now);
        if let Some(commands) = &mut self.commands {
            commands[script][command].failures += 1;
        }
        self.queries.errors += 1;
    }

    /// A transaction left uncounted (an abort, a stop) had sent what may commit.
    pub(super) fn cut_short_in_doubt(&mut self) {
        self.cut_short_in_doubt += 1;
    }

    /// `-r`: the command ran from `start` to `now` (only asked when
    /// [`Self::times_commands`]).
    #[inline]
    pub(super) fn command_time(&mut self, script: usize, command: usize, start: i64, now: i64) {
        self.warming_up(now);
        if let Some(commands) = &mut self.commands {
            let elapsed = (now - start) as f64 / 1e6;
            commands[script][command].elapsed.add(elapsed);
        }
    }

    /// `-C`: a connect or disconnect took from `start` to `end`.
    pub(super) fn connection_time(&mut self, start: i64, end: i64) {
        self.warming_up(start);
        self.conn_duration_us += (end - start) as f64;
    }

    /// Counts a finished transaction (`processXactStats`) and logs it.
    pub(super) fn transaction(
        &mut self,
        script: usize,
        outcome: TxOutcome,
        (latency, lag): (f64, f64),
        tries: u32,
        now: i64,
    ) {
        // A warm-up transaction counts towards nothing but the warm-up's own figures
        // (the collector's, from its end): not -t, not the -l numbering.
        let warm = self.warming_up(now);
        if !warm {
            self.counted += 1;
        }
        if self.batch.is_empty() {
            self.batch_since = now;
        }
        let record = TxRecord {
            script: script as u32,
            outcome,
            latency,
            lag,
            tries,
            end_us: now,
        };
        if self.ctx.plan.log.is_some() && !warm {
            self.log(&record);
        }
        if let Some(board) = &self.ctx.progress {
            let throttled = self.ctx.plan.settings.throttled();
            board.record(self.local, warm, outcome, (latency, lag), tries, throttled);
            // pgbench's thread 0 prints the line after its clients' work: here any
            // client's thread that finds it due does.
            if board.due(now) {
                board.print_due(now, &mut |line| self.ctx.out.stderr(line));
            }
        }
        self.batch.push(record);
        // A transaction as long as a batch may age goes at once: the collector's
        // grace after -T rests on the longest transaction it has seen.
        if self.batch.len() >= BATCH_RECORDS
            || now - self.batch_since >= BATCH_MAX_AGE_US
            || latency >= BATCH_MAX_AGE_US as f64
        {
            self.flush();
        }
    }

    /// The transaction's `-l` line, under the thread's lock (its clients share the file).
    fn log(&mut self, record: &TxRecord) {
        let tx = LoggedTx {
            client_id: self.id,
            tx_no: self.counted,
            script: record.script as usize,
            outcome: record.outcome,
            latency: record.latency,
            lag: record.lag,
            tries: record.tries,
            now_epoch_us: record.end_us + self.ctx.control.clock.epoch_shift_us,
        };
        let mut t = self.thread.lock();
        if let Some(message) = t.log.as_mut().and_then(|log| log.log(&tx)) {
            self.ctx.out.error(&message);
        }
    }

    /// Hands over the records kept so far, unless the collector is taking the
    /// client's earlier ones right now: then they go with the next transaction.
    pub(super) fn flush(&mut self) {
        if !self.batch.is_empty() {
            self.ctx.outbox.put(self.local, &mut self.batch, false);
        }
    }

    /// Hands over the records kept so far, waiting for the collector if it is
    /// taking earlier ones: before the client's last word.
    pub(super) fn flush_all(&mut self) {
        if !self.batch.is_empty() {
            self.ctx.outbox.put(self.local, &mut self.batch, true);
        }
    }

    /// Before waiting from `now` until `until`: a wait longer than the batch age hands
    /// over what is measured so far.
    pub(super) fn flush_before_wait(&mut self, now: i64, until: i64) {
        if until - now > BATCH_MAX_AGE_US {
            self.flush_all();
        }
    }

    /// The counters handed over at the end (the records are flushed before).
    pub(super) fn done(&mut self, end_us: i64, unfinished: bool) -> ClientDone {
        ClientDone {
            commands: std::mem::take(&mut self.commands),
            conn_duration_us: self.conn_duration_us,
            queries: self.queries,
            end_us,
            unfinished,
            cut_short_in_doubt: self.cut_short_in_doubt,
        }
    }
}
