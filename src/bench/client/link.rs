//! A client's connection over its life: the first connect, `-C`'s reconnect before
//! each transaction and disconnect after it, registration with the run's stopper, and
//! the few things a driver asks of a client's connection: its socket, whether the
//! replies it waits for arrived, and (io_uring) the socket I/O it does for it.

use super::Client;
use crate::bench::error::{AbortReason, ClientAbort};
use pgbench_wire::Connection;

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

impl Client<'_> {
    /// How this client's connections do their socket I/O: as its thread's driver
    /// waits (blocking unless told otherwise).
    pub fn with_socket_io(mut self, io: SocketIo) -> Self {
        self.socket_io = io;
        self
    }

    /// The current connection, for a driver that does its socket I/O.
    pub fn connection_mut(&mut self) -> Option<&mut Connection> {
        self.conn.as_mut()
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
    pub fn socket(&self) -> Option<(std::os::fd::RawFd, u64)> {
        use std::os::fd::AsRawFd;
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
        let conn = Connection::connect(&self.ctx.conn_opts)?;
        self.attach(conn)
    }

    /// Takes a new connection, cancellable by the run's stop.
    pub(super) fn attach(&mut self, mut conn: Connection) -> Result<(), pgbench_wire::ConnError> {
        use std::os::fd::AsRawFd;
        if self.socket_io != SocketIo::Blocking {
            conn.set_nonblocking_io()?;
        }
        if self.socket_io == SocketIo::Queued {
            // TLS keeps doing its own I/O; the driver waits for its readiness.
            conn.queue_io();
        }
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
        let attached = Connection::connect(&self.ctx.conn_opts).and_then(|c| self.attach(c));
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
