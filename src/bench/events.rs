//! What client threads tell the collector: batches of finished transactions, an abort
//! as it happens, and a last word with the counters only the client kept.

use super::error::ClientAbort;
use pgbench_results::CommandStats;

pub use pgbench_results::TxRecord;

/// A client's last word.
#[derive(Debug, Clone)]
pub struct ClientDone {
    /// Its `-r` counters per script and command.
    pub commands: Vec<Vec<CommandStats>>,
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

/// What clients send the collector.
#[derive(Debug)]
pub enum Event {
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
            commands: Vec::new(),
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
