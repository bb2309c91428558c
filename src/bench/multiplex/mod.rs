//! An OS thread with several clients, of one pgbench `-j` thread or of several
//! ([`super::threads::os_threads`]), as pgbench.c's `threadRun`: it waits on all its
//! clients at once and advances every client that can go on before it waits again. A
//! client alone on its OS thread does not come here: it blocks on its own socket
//! ([`super::client::Client::run`]), which costs least for one client.
//!
//! Why: with a sleeping OS thread per client, every transaction costs a wake-up and
//! a context switch; here a thread keeps running while any of its clients has a
//! reply, as stock pgbench's threads do, and 1,000 clients need a stack per CPU, not
//! 1,000.
//!
//! Two drivers, one contract (the client's `Wait`):
//! - `uring`: io_uring, where the kernel allows it. Each wait submits every ready
//!   client's send and receive together, so a transaction costs no system call of
//!   its own; measured, 10% less client CPU per `SELECT 1` than epoll with 32 clients
//!   on a thread (benches/README.md). A ring that fails once the clients run (a wait
//!   the kernel refuses) aborts every client of its thread, in pgbench's words for a
//!   failed wait; what they counted before stays counted.
//! - `epoll`: readiness through mio, then the client's own non-blocking reads and
//!   writes: where io_uring is missing, refused (container seccomp profiles) or
//!   short of what the driver uses (kernels before 5.11, partial implementations),
//!   or when `PGBENCH_RS_IO=epoll` asks for it.

mod epoll;
mod uring;

use super::client::{Client, SocketIo, Wait};
use super::error::{AbortReason, ClientAbort};
use crate::clock::RunClock;

/// How one thread waits on its clients.
pub enum Driver {
    Epoll,
    Uring(Box<io_uring::IoUring>),
}

impl Driver {
    /// io_uring for `clients` clients if this kernel gives one (and the environment
    /// does not ask for epoll), else epoll. Made on the thread that will drive.
    pub fn new(clients: usize) -> Driver {
        if std::env::var_os("PGBENCH_RS_IO").is_some_and(|v| v == "epoll") {
            return Driver::Epoll;
        }
        Driver::uring(clients).unwrap_or(Driver::Epoll)
    }

    /// io_uring for `clients` clients, if this kernel gives one.
    pub fn uring(clients: usize) -> Option<Driver> {
        uring::ring(clients).map(|ring| Driver::Uring(Box::new(ring)))
    }

    /// How the clients' connections do their socket I/O under this driver.
    pub fn socket_io(&self) -> SocketIo {
        match self {
            Driver::Epoll => SocketIo::NonBlocking,
            Driver::Uring(_) => SocketIo::Queued,
        }
    }

    /// Runs the clients of one pgbench thread until all are finished, timing their
    /// waits on the run's `clock`.
    pub fn drive(self, clients: Vec<Client<'_>>, clock: &RunClock) {
        match self {
            Driver::Epoll => epoll::drive(clients, clock),
            Driver::Uring(ring) => uring::drive(*ring, clients, clock),
        }
    }
}

/// How long the thread may wait: `None` once every client is done, else the
/// earliest time a client waits for (`Some(None)`: none, only for replies).
fn next_wake<'w>(waits: impl Iterator<Item = &'w Wait>) -> Option<Option<i64>> {
    let mut live = false;
    let mut earliest: Option<i64> = None;
    for wait in waits {
        match *wait {
            Wait::Done => {}
            Wait::Until(at) => {
                live = true;
                earliest = Some(earliest.map_or(at, |t| t.min(at)));
            }
            Wait::Replies { .. } => live = true,
        }
    }
    live.then_some(earliest)
}

/// The abort of a client whose thread can no longer wait on its sockets.
fn cannot_wait(client: usize, why: &str) -> ClientAbort {
    ClientAbort::new(client, AbortReason::Other("could not wait for the server")).because(why)
}

/// Ends every client not finished yet, aborted: its thread can no longer wait on
/// their sockets (`why`, in pgbench's words for the failed call).
fn abort_all<'c, 'a: 'c>(clients: impl Iterator<Item = &'c mut Client<'a>>, why: &str) {
    for c in clients {
        let abort = cannot_wait(c.id, why);
        c.abort_now(abort);
    }
}
