//! The epoll driver: the clients' sockets are registered with epoll (through mio)
//! once per connection, edge-triggered, so a readiness event is remembered per client
//! until its replies are read: a client whose replies arrived while it was not
//! waiting for them (its timer, another client's turn) is not forgotten. Every client
//! that can go on is advanced in client order, as pgbench's `threadRun` does. Timers
//! (`\sleep`, `-R` slots) are the wait's timeout; the `-T` deadline and the run's stop
//! reach the clients through their sockets and [`crate::bench::control::RunControl`],
//! as they do blocking clients.

use super::{abort_all, cannot_wait, next_wake};
use crate::bench::client::{Client, Wait};
use crate::clock::RunClock;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use std::os::fd::RawFd;

/// One client as the loop sees it.
struct Driven<'a> {
    client: Client<'a>,
    wait: Wait,
    /// Readiness seen and not yet read.
    readable: bool,
    /// Which of the client's connections is registered (they count from 1).
    registered: u64,
}

/// Runs the clients of one pgbench thread until all are finished.
pub(super) fn drive(mut clients: Vec<Client<'_>>, clock: &RunClock) {
    let mut poll = match Poll::new() {
        Ok(p) => p,
        Err(e) => {
            // pgbench's words when its wait fails; the clients cannot run here.
            let why = format!("epoll_create1() failed: {}", crate::sys::strerror(&e));
            abort_all(clients.iter_mut(), &why);
            return;
        }
    };
    let mut driven: Vec<Driven> = clients
        .into_iter()
        .map(|client| Driven {
            client,
            wait: Wait::Until(0),
            readable: false,
            registered: 0,
        })
        .collect();
    let mut events = Events::with_capacity(driven.len());
    for (i, s) in driven.iter_mut().enumerate() {
        advance(&poll, s, i);
    }
    loop {
        let Some(next_timer) = next_wake(driven.iter().map(|s| &s.wait)) else {
            return;
        };
        let timeout = next_timer.map(|at| clock.wait_until(at));
        if let Err(e) = poll.poll(&mut events, timeout) {
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            let why = format!("epoll_wait() failed: {}", crate::sys::strerror(&e));
            abort_all(driven.iter_mut().map(|s| &mut s.client), &why);
            return;
        }
        for event in &events {
            if let Some(s) = driven.get_mut(event.token().0) {
                s.readable = true;
            }
        }
        for (i, s) in driven.iter_mut().enumerate() {
            let due = match s.wait {
                Wait::Replies { syncs } if s.readable => {
                    s.readable = false;
                    s.client.replies_arrived(syncs)
                }
                Wait::Until(at) => at <= clock.now_us(),
                _ => false,
            };
            if due {
                advance(&poll, s, i);
            }
        }
    }
}

/// Advances a client until it waits for something not yet there; keeps its socket
/// registered across `-C` reconnections. A socket that cannot be registered aborts
/// its client: nothing would ever wake it.
fn advance(poll: &Poll, s: &mut Driven, token: usize) {
    loop {
        s.wait = s.client.advance();
        if let Some((fd, connection)) = s.client.socket() {
            if connection != s.registered {
                // The previous socket was closed, which took it out of the epoll set.
                if let Err(e) = register(poll, fd, token) {
                    let why = format!("epoll_ctl() failed: {}", crate::sys::strerror(&e));
                    s.client.abort_now(cannot_wait(s.client.id, &why));
                    s.wait = Wait::Done;
                    return;
                }
                s.registered = connection;
                // Whatever arrived before the registration raised no event.
                s.readable = true;
            }
        }
        match s.wait {
            Wait::Replies { syncs } if s.client.replies_buffered(syncs) => continue,
            Wait::Replies { syncs } if s.readable => {
                s.readable = false;
                if s.client.replies_arrived(syncs) {
                    continue;
                }
                return;
            }
            _ => return,
        }
    }
}

/// Adds a client's socket to the epoll set (or updates its entry, if the number is
/// still in the set).
fn register(poll: &Poll, fd: RawFd, token: usize) -> std::io::Result<()> {
    let registry = poll.registry();
    let mut source = SourceFd(&fd);
    registry
        .register(&mut source, Token(token), Interest::READABLE)
        .or_else(|_| registry.reregister(&mut source, Token(token), Interest::READABLE))
}
