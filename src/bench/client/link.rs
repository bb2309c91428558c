//! A client's connection over its life: the first connect, `-C`'s reconnect before
//! each transaction and disconnect after it, registration with the run's stopper, and
//! the few things a driver asks of a client's connection: its socket, whether the
//! replies it waits for arrived, and (io_uring) the socket I/O it does for it.

use super::Client;
use crate::bench::error::{AbortReason, ClientAbort};
use pgbench_wire::Connection;
use std::os::fd::{AsRawFd, RawFd};

/// How a client's connections do their socket I/O, as its thread's driver waits.
/// The state machine does not ask: it sends, then says it waits for replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SocketIo {
    /// Blocking: reading the replies waits for them (a client alone on its thread,
    /// [`Client::run`]).
    #[default]
    Blocking,
    /// Non-blocking: the driver waits for readiness (epoll).
    NonBlocking,
    /// Non-blocking, and on a plain socket the driver sends and receives for the
    /// connection (io_uring).
    Queued,
}

/// What a driver that sends and receives for a connection may do with it, and
/// nothing else. The contract is the connection's
/// ([`pgbench_wire::Connection::queue_io`]): while a send from [`QueuedIo::output`]
/// or a receive into [`QueuedIo::read_space`] is in flight, the client is not
/// advanced, and each is reported ([`QueuedIo::sent`], [`QueuedIo::received`])
/// before it is.
pub struct QueuedIo<'c> {
    conn: &'c mut Connection,
}

impl QueuedIo<'_> {
    /// The socket.
    #[inline]
    pub fn fd(&self) -> RawFd {
        self.conn.as_raw_fd()
    }

    /// The request bytes queued and not sent yet.
    #[inline]
    pub fn output(&self) -> &[u8] {
        self.conn.queued_output()
    }

    /// A send of the first bytes of [`QueuedIo::output`] completed (or failed).
    #[inline]
    pub fn sent(&mut self, result: std::io::Result<usize>) {
        self.conn.output_sent(result);
    }

    /// Room to receive into.
    #[inline]
    pub fn read_space(&mut self) -> &mut [u8] {
        self.conn.read_space()
    }

    /// A receive into [`QueuedIo::read_space`] completed (0: the server closed) or
    /// failed.
    #[inline]
    pub fn received(&mut self, result: std::io::Result<usize>) {
        self.conn.received(result);
    }

    /// Whether the replies up to the `syncs`-th ReadyForQuery are received.
    #[inline]
    pub fn replies_buffered(&self, syncs: usize) -> bool {
        self.conn.replies_buffered(syncs)
    }

    /// Sends what is queued now, by itself, for a client that waits for no reply
    /// soon (a pipeline before a `\sleep`).
    pub fn send_now(&mut self) {
        self.conn.send_queued_now();
    }
}

impl Client<'_> {
    /// How this client's connections do their socket I/O: as its thread's driver
    /// waits (blocking unless told otherwise).
    pub fn with_socket_io(mut self, io: SocketIo) -> Self {
        self.socket_io = io;
        self
    }

    /// The socket I/O its driver does for the current connection, if the driver does
    /// it for this one (a plain socket under [`SocketIo::Queued`]).
    #[inline]
    pub fn io(&mut self) -> Option<QueuedIo<'_>> {
        self.conn
            .as_mut()
            .filter(|c| c.io_queued())
            .map(|conn| QueuedIo { conn })
    }

    /// Gives up the connection without closing it or freeing its buffers, for a
    /// driver that can no longer tell whether the kernel still writes into them.
    pub fn leak_connection(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.ctx.control.unregister(self.local_index);
            std::mem::forget(conn);
        }
    }

    /// The current connection's socket, and which connection of the client it is.
    pub fn socket(&self) -> Option<(RawFd, u64)> {
        self.conn
            .as_ref()
            .map(|c| (c.as_raw_fd(), self.connections))
    }

    /// Reads what arrived (without waiting); whether the replies awaited are there.
    pub fn replies_arrived(&mut self, syncs: usize) -> bool {
        self.conn.as_mut().is_none_or(|c| c.replies_arrived(syncs))
    }

    /// Whether the replies awaited are already read into the buffer.
    pub fn replies_buffered(&self, syncs: usize) -> bool {
        self.conn.as_ref().is_none_or(|c| c.replies_buffered(syncs))
    }

    /// Makes the initial connection (not under `-C`).
    pub fn connect_initial(&mut self) -> Result<(), pgbench_wire::ConnError> {
        let mut conn = Connection::connect(&self.group.conn_opts)?;
        self.prepare_on_connect(&mut conn)?;
        self.attach(conn)
    }

    /// Takes a new connection, cancellable by the run's stop.
    pub(super) fn attach(&mut self, mut conn: Connection) -> Result<(), pgbench_wire::ConnError> {
        if self.socket_io != SocketIo::Blocking {
            conn.set_nonblocking_io()?;
        }
        if self.socket_io == SocketIo::Queued {
            // TLS keeps doing its own I/O; the driver waits for its readiness.
            conn.queue_io();
        }
        self.watch_notices(&mut conn);
        self.ctx
            .control
            .register(self.local_index, conn.cancel_token(), conn.as_raw_fd());
        self.conn = Some(conn);
        self.connections += 1;
        Ok(())
    }

    /// Drops the connection (saying goodbye), after the stopper let go of it.
    pub(super) fn detach(&mut self) {
        self.ctx.control.unregister(self.local_index);
        self.conn = None;
    }

    /// `-C` (or after a lost connection): a new connection, timed.
    pub(super) fn reconnect(&mut self) -> Result<(), ClientAbort> {
        let start = self.now();
        let attached = Connection::connect(&self.group.conn_opts).and_then(|c| self.attach(c));
        if let Err(e) = attached {
            return Err(ClientAbort::new(self.id, AbortReason::Connect).because(e.to_string()));
        }
        self.record.connection_time(start, self.now());
        self.prepared.iter_mut().flatten().for_each(|p| *p = false);
        Ok(())
    }

    /// Whether the connection is in pipeline mode.
    #[inline]
    pub(super) fn in_pipeline(&self) -> bool {
        self.conn
            .as_ref()
            .is_some_and(|c| c.pipeline_status() != pgbench_wire::PipelineStatus::Off)
    }
}

/// The one way to reach the connection while a transaction runs: clients run
/// commands only after connecting, so a missing connection is a bug here.
#[inline]
pub(super) fn connected(conn: &mut Option<Connection>) -> &mut Connection {
    conn.as_mut()
        .expect("a client runs commands only while connected")
}
