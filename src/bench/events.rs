//! What client threads tell the collector: their finished transactions through the
//! [`Outbox`], an abort as it happens, and a last word with the counters only the
//! client kept.

use super::error::ClientAbort;
use pgbench_results::CommandStats;
use std::sync::{Mutex, MutexGuard, TryLockError};

pub use pgbench_results::TxRecord;

/// A client's last word.
#[derive(Debug, Clone)]
pub struct ClientDone {
    /// Its `-r` counters per script and command, when the run keeps them.
    pub commands: Option<Vec<Vec<CommandStats>>>,
    /// Time spent in `-C` connects and disconnects, µs.
    pub conn_duration_us: f64,
    /// Its statements by what they returned, and the errors it survived.
    pub queries: StatementKinds,
    /// When it finished, µs on the run clock.
    pub end_us: i64,
    /// The run was stopped (Ctrl-C, an overdue end) while it was in a transaction.
    pub unfinished: bool,
    /// Transactions it left uncounted (it aborted, was stopped, or lost its
    /// connection after `-T`) after sending what may commit: in doubt.
    pub cut_short_in_doubt: i64,
}

/// A client's statements by what each returned, as its results arrive (outside a
/// pipeline): a read returned rows, a write changed some (its command tag counts
/// rows, `PQcmdTuples`, and counted more than none: `UPDATE 1`, `INSERT 0 1`), any
/// other is other (`BEGIN`, a `DELETE 0`); and the SQL errors its transactions
/// survived (each failure and each retry). What a workload may report of its run
/// (its tool's queries by kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatementKinds {
    pub read: i64,
    pub write: i64,
    pub other: i64,
    pub errors: i64,
}

impl StatementKinds {
    /// Adds another client's.
    pub fn add(&mut self, o: &StatementKinds) {
        self.read += o.read;
        self.write += o.write;
        self.other += o.other;
        self.errors += o.errors;
    }
}

/// Each client's finished transactions on their way to the collector: a slot per
/// client that the client appends its batches to and the collector empties when it
/// looks, the two swapping vectors, so that nothing is allocated or freed per batch.
///
/// A message per batch allocated a vector in the client's thread that the collector
/// freed: at `-c 1000 -j 1000` the threads then queue on glibc's malloc arena locks
/// (16 arenas for 1,000 threads), whose holder, preempted among 2,000 runnable
/// threads, keeps the others and the collector waiting for whole scheduling rounds
/// (issue #49: 97% of the client's futex calls came from that allocation). Neither
/// side waits for the other here: a client that finds its slot taken keeps its batch
/// for the next transaction, the collector skips it until its next look.
#[derive(Debug, Default)]
pub struct Outbox {
    slots: Vec<Mutex<Vec<TxRecord>>>,
}

impl Outbox {
    /// A slot for each of the process's `clients`.
    pub fn new(clients: usize) -> Outbox {
        Outbox {
            slots: (0..clients).map(|_| Mutex::default()).collect(),
        }
    }

    /// Client `local` hands over `batch`, which it gets back empty (with the
    /// capacity of a vector the collector gave back). Unless `wait`, a slot the
    /// collector holds right now is not waited for: false, and the batch stays.
    #[inline]
    pub fn put(&self, local: usize, batch: &mut Vec<TxRecord>, wait: bool) -> bool {
        let Some(slot) = self.slots.get(local) else {
            return false;
        };
        let mut slot = match slot.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) if !wait => return false,
            Err(TryLockError::WouldBlock) => unpoisoned(slot.lock()),
        };
        if slot.is_empty() {
            std::mem::swap(&mut *slot, batch);
        } else {
            slot.append(batch);
        }
        true
    }

    /// The collector takes what client `local` handed over into `into` (empty),
    /// unless the client holds its slot right now: whether it took any.
    pub fn take(&self, local: usize, into: &mut Vec<TxRecord>) -> bool {
        let Some(slot) = self.slots.get(local) else {
            return false;
        };
        let mut slot = match slot.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return false,
        };
        if slot.is_empty() {
            return false;
        }
        std::mem::swap(&mut *slot, into);
        true
    }

    /// How many clients have a slot.
    pub fn clients(&self) -> usize {
        self.slots.len()
    }
}

/// A slot's records stay good when a client thread panicked holding it: a vector
/// is never left half-written by `swap` or `append`.
fn unpoisoned<'a, T>(
    locked: Result<MutexGuard<'a, T>, std::sync::PoisonError<MutexGuard<'a, T>>>,
) -> MutexGuard<'a, T> {
    locked.unwrap_or_else(|p| p.into_inner())
}

/// What clients send the collector.
#[derive(Debug)]
pub enum Event {
    /// Finished transactions handed over as a message rather than through the
    /// [`Outbox`] (the collector's tests feed it canned batches so).
    Batch(Vec<TxRecord>),
    /// A client stopped for good; its `Done` follows.
    Aborted {
        thread: usize,
        abort: ClientAbort,
    },
    Done(ClientDone),
    /// `--reconnect`: what a client saw of its connection.
    Link(LinkEvent),
}

/// What is said for a client whose thread panicked before its last word: an abort,
/// then a last word with nothing more counted.
pub fn lost_client(thread: usize, client: usize, end_us: i64) -> [Event; 2] {
    let abort = ClientAbort::new(
        client,
        super::error::AbortReason::Other("internal error in its thread (see the panic above)"),
    );
    [
        Event::Aborted { thread, abort },
        Event::Done(ClientDone {
            commands: None,
            conn_duration_us: 0.0,
            queries: Default::default(),
            end_us,
            unfinished: false,
            cut_short_in_doubt: 0,
        }),
    ]
}

/// What a client says of its connection under `--reconnect`; instants are µs on the
/// run clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkEvent {
    /// Its connection was lost or refused work (or a connection attempt failed) at
    /// `at`; `failed`: the transaction in flight failed, with this SQLSTATE, and
    /// whether it is in doubt (the server may have committed it).
    Lost {
        client: usize,
        at: i64,
        last_success: Option<i64>,
        failed: Option<([u8; 5], bool)>,
    },
    /// It connected again at `at`.
    Reconnected { client: usize, at: i64 },
    /// Its first transaction after a loss succeeded, ending at `at`.
    Recovered { client: usize, at: i64 },
    /// It could not connect again within `--reconnect-timeout`, and gave up at `at`
    /// (its abort follows).
    GaveUp { client: usize, at: i64 },
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgbench_results::TxOutcome;

    fn record(end_us: i64) -> TxRecord {
        TxRecord {
            script: 0,
            outcome: TxOutcome::Success,
            latency: 1.0,
            lag: 0.0,
            tries: 1,
            end_us,
        }
    }

    #[test]
    fn batches_join_in_order_until_the_collector_takes_them() {
        let outbox = Outbox::new(1);
        let mut batch = vec![record(1), record(2)];
        assert!(outbox.put(0, &mut batch, false));
        batch.push(record(3));
        assert!(outbox.put(0, &mut batch, false));
        let mut taken = Vec::new();
        assert!(outbox.take(0, &mut taken));
        let ends: Vec<i64> = taken.iter().map(|r| r.end_us).collect();
        assert_eq!(ends, [1, 2, 3]);
        taken.clear();
        assert!(!outbox.take(0, &mut taken), "nothing new to take");
        // A client beyond the slots hands nothing over and keeps its batch.
        let mut stray = vec![record(4)];
        assert!(!outbox.put(1, &mut stray, true));
        assert_eq!(stray.len(), 1);
    }

    #[test]
    fn a_slot_held_by_the_other_side_is_not_waited_for() {
        let outbox = Outbox::new(1);
        let held = outbox.slots[0].lock().unwrap();
        let mut batch = vec![record(1)];
        assert!(!outbox.put(0, &mut batch, false));
        assert_eq!(batch.len(), 1, "the client keeps its records for next time");
        let mut taken = Vec::new();
        assert!(!outbox.take(0, &mut taken));
        drop(held);
        assert!(outbox.put(0, &mut batch, false));
        assert!(outbox.take(0, &mut taken));
        assert_eq!(taken.len(), 1);
    }
}
