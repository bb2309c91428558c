//! The io_uring driver. A client waiting for replies on a plain socket has its
//! queued request bytes sent and its read buffer filled by the kernel, through the
//! one handle a client gives its driver ([`crate::bench::client::QueuedIo`]): one `io_uring_enter` submits every ready
//! client's send and receive and waits for the next completions, where epoll costs a
//! `send`, a `recv` and a share of `epoll_wait` per transaction. A TLS connection
//! does its own I/O and is only polled for readiness here.
//!
//! Safety rests on one rule, kept by [`Driven`]: a client is advanced (and so touches
//! its connection's buffers, or replaces the connection under `-C`) only when none
//! of its operations is in flight. Each completion is handed to the connection
//! before the client goes on. Clients are advanced in client order within a batch of
//! completions, as pgbench's `threadRun` does.
#![allow(unsafe_code)]

use super::{abort_all, next_wake};
use crate::bench::client::{Client, Wait};
use crate::clock::RunClock;
use io_uring::{opcode, squeue, types, IoUring, Probe};
use std::io;

/// What an operation's `user_data` carries besides the client's index.
const SEND: u64 = 0;
const RECV: u64 = 1;
const POLL: u64 = 2;
const CANCEL: u64 = 3;

fn user_data(client: usize, kind: u64) -> u64 {
    (client as u64) << 2 | kind
}

/// A ring for `clients` clients, or `None` where the kernel refuses io_uring or gives
/// one that cannot do what [`drive`] asks. At most three operations per client are in
/// flight (send, receive, a cancel).
pub(super) fn ring(clients: usize) -> Option<IoUring> {
    let entries = (clients * 4).next_power_of_two().max(8) as u32;
    // One thread submits and reaps, so the kernel may run completions' work at the
    // next wait instead of interrupting it (6.1+); older kernels get a plain ring.
    let ring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_cqsize(entries * 2)
        .build(entries)
        .or_else(|_| IoUring::builder().setup_cqsize(entries * 2).build(entries))
        .ok()?;
    does_what_drive_asks(&ring).then_some(ring)
}

/// Whether the ring can wait with a timeout (`IORING_FEAT_EXT_ARG`, Linux 5.11) and
/// run every operation [`drive`] submits. Found out here, where epoll can still take
/// the thread's clients: a kernel from 5.5 to 5.10 builds the ring, then fails the
/// first wait for a `\sleep` or a `-R` slot (`EINVAL`), which aborts every client;
/// a partial io_uring (a sandbox's) fails the sends.
fn does_what_drive_asks(ring: &IoUring) -> bool {
    if !ring.params().is_feature_ext_arg() {
        return false;
    }
    let mut probe = Probe::new();
    ring.submitter().register_probe(&mut probe).is_ok()
        && [
            opcode::Send::CODE,
            opcode::Recv::CODE,
            opcode::PollAdd::CODE,
            opcode::AsyncCancel::CODE,
        ]
        .into_iter()
        .all(|op| probe.is_supported(op))
}

/// One client as the loop sees it.
struct Driven<'a> {
    client: Client<'a>,
    wait: Wait,
    /// A send of its queued bytes is in flight.
    sending: bool,
    /// A receive into its buffer, or a readiness poll, is in flight.
    receiving: bool,
    /// Its connection met the end or an error: the client reads that itself.
    ended: bool,
}

impl Driven<'_> {
    fn idle(&self) -> bool {
        !self.sending && !self.receiving
    }
}

pub(super) fn drive(mut ring: IoUring, clients: Vec<Client<'_>>, clock: &RunClock) {
    let mut driven: Vec<Driven> = clients
        .into_iter()
        .map(|client| Driven {
            client,
            wait: Wait::Until(0),
            sending: false,
            receiving: false,
            ended: false,
        })
        .collect();
    let mut done: Vec<(u64, i32)> = Vec::with_capacity(driven.len() * 2);
    let failed = 'run: {
        for (i, s) in driven.iter_mut().enumerate() {
            if let Err(e) = settle(&mut ring, s, i) {
                break 'run e;
            }
        }
        loop {
            // A finished client has nothing in flight: it finished by advancing.
            let Some(next_timer) = next_wake(driven.iter().map(|s| &s.wait)) else {
                return;
            };
            let waited = match next_timer {
                None => ring.submit_and_wait(1),
                Some(at) => {
                    let us = clock.wait_until(at).as_micros() as u64;
                    let ts = types::Timespec::new()
                        .sec(us / 1_000_000)
                        .nsec((us % 1_000_000) as u32 * 1000);
                    ring.submitter()
                        .submit_with_args(1, &types::SubmitArgs::new().timespec(&ts))
                }
            };
            match waited {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                    ) => {}
                Err(e) => break 'run e,
            }
            done.clear();
            done.extend(ring.completion().map(|c| (c.user_data(), c.result())));
            // Client order within the batch (a client's send before its receive).
            done.sort_unstable_by_key(|&(ud, _)| ud);
            for &(ud, res) in &done {
                let i = (ud >> 2) as usize;
                if let Some(s) = driven.get_mut(i) {
                    if let Err(e) = completed(&mut ring, s, i, ud & 3, res) {
                        break 'run e;
                    }
                }
            }
            for (i, s) in driven.iter_mut().enumerate() {
                if matches!(s.wait, Wait::Until(at) if at <= clock.now_us()) && s.idle() {
                    if let Err(e) = settle(&mut ring, s, i) {
                        break 'run e;
                    }
                }
            }
        }
    };
    // The ring failed: no client can go on. A client with an operation in flight
    // gives up its connection to a leak, since the kernel may still write into its
    // buffers.
    for s in driven.iter_mut().filter(|s| !s.idle()) {
        s.client.leak_connection();
    }
    let why = format!("io_uring_enter() failed: {}", crate::sys::strerror(&failed));
    abort_all(driven.iter_mut().map(|s| &mut s.client), &why);
}

/// Advances a client until it waits for something not yet there, and submits what
/// that wait needs. Called only when none of its operations is in flight.
fn settle(ring: &mut IoUring, s: &mut Driven, i: usize) -> io::Result<()> {
    loop {
        s.ended = false;
        s.wait = s.client.advance();
        match s.wait {
            Wait::Replies { syncs } => {
                if !submit_wait(ring, s, i, syncs)? {
                    continue;
                }
            }
            // Queued bytes with no reply awaited (a pipeline before a `\sleep`) go out
            // now, as libpq's would by the time anything waits.
            _ => {
                if let Some(mut io) = s.client.io() {
                    io.send_now();
                }
            }
        }
        return Ok(());
    }
}

/// Submits the send and the receive (or poll) that waiting for `syncs` replies still
/// needs; whether anything is in flight (false: the replies are read, go on).
fn submit_wait(ring: &mut IoUring, s: &mut Driven, i: usize, syncs: usize) -> io::Result<bool> {
    let Some(mut io) = s.client.io() else {
        return submit_poll(ring, s, i, syncs);
    };
    let fd = types::Fd(io.fd());
    let out = io.output();
    if !s.sending && !out.is_empty() {
        let send = opcode::Send::new(fd, out.as_ptr(), out.len() as u32)
            .flags(libc::MSG_NOSIGNAL)
            .build();
        push(ring, send.user_data(user_data(i, SEND)))?;
        s.sending = true;
    }
    if !s.receiving && !io.replies_buffered(syncs) {
        let space = io.read_space();
        let recv = opcode::Recv::new(fd, space.as_mut_ptr(), space.len() as u32).build();
        push(ring, recv.user_data(user_data(i, RECV)))?;
        s.receiving = true;
    }
    Ok(!s.idle())
}

/// A connection that does its own I/O (TLS): polls its socket for readability; as
/// [`submit_wait`].
fn submit_poll(ring: &mut IoUring, s: &mut Driven, i: usize, syncs: usize) -> io::Result<bool> {
    if s.receiving {
        return Ok(true);
    }
    let Some((fd, _)) = s.client.socket() else {
        return Ok(false);
    };
    if s.client.replies_arrived(syncs) {
        return Ok(false);
    }
    let poll = opcode::PollAdd::new(types::Fd(fd), libc::POLLIN as u32).build();
    push(ring, poll.user_data(user_data(i, POLL)))?;
    s.receiving = true;
    Ok(true)
}

/// Hands a completion to the client's connection; advances the client when its
/// replies are all there (or its connection ended) and nothing is in flight.
fn completed(ring: &mut IoUring, s: &mut Driven, i: usize, kind: u64, res: i32) -> io::Result<()> {
    match kind {
        SEND => {
            s.sending = false;
            if let Some(mut io) = s.client.io() {
                io.sent(as_io_result(res));
            }
            if res < 0 {
                s.ended = true;
                if s.receiving {
                    // The server will not answer a request it did not get.
                    let cancel = opcode::AsyncCancel::new(user_data(i, RECV)).build();
                    push(ring, cancel.user_data(user_data(i, CANCEL)))?;
                }
            }
        }
        RECV => {
            s.receiving = false;
            if res == -libc::ECANCELED {
                s.ended = true;
            } else if let Some(mut io) = s.client.io() {
                io.received(as_io_result(res));
                s.ended |= res <= 0;
            }
        }
        POLL => {
            s.receiving = false;
            s.ended |= res < 0;
        }
        _ => return Ok(()),
    }
    let Wait::Replies { syncs } = s.wait else {
        return Ok(());
    };
    if s.ended {
        // The client reads the end itself, once nothing else is in flight.
        return if s.idle() { settle(ring, s, i) } else { Ok(()) };
    }
    // Submits what is still needed (the rest of a short send, the next receive);
    // nothing in flight after that means the replies are all there.
    if !submit_wait(ring, s, i, syncs)? {
        settle(ring, s, i)?;
    }
    Ok(())
}

/// A completion's result as the system call's: a byte count, or `-errno`.
fn as_io_result(res: i32) -> io::Result<usize> {
    if res < 0 {
        Err(io::Error::from_raw_os_error(-res))
    } else {
        Ok(res as usize)
    }
}

/// Queues one operation, submitting what is queued when the ring is full.
fn push(ring: &mut IoUring, entry: squeue::Entry) -> io::Result<()> {
    loop {
        // SAFETY: the buffers an entry names belong to a connection whose client is
        // not advanced, nor its connection dropped, until the entry's completion is
        // reaped (the module's rule); a ring failure leaks them instead.
        if unsafe { ring.submission().push(&entry) }.is_ok() {
            return Ok(());
        }
        ring.submit()?;
    }
}
