//! Socket I/O done by the caller: a driver that submits many connections' sends and
//! receives to the kernel at once (io_uring) takes the bytes a request left to send
//! and gives the bytes it received, while the connection keeps framing, parsing and
//! libpq's semantics. Plain sockets only: TLS does its own I/O.
//!
//! The contract, which keeps the kernel and this code off the same memory: the
//! caller calls nothing else on the connection while a send from
//! [`Connection::queued_output`] or a receive into [`Connection::read_space`] is in
//! flight, and reports each with [`Connection::output_sent`] or
//! [`Connection::received`] before it does. A call that must wait on the socket by
//! itself (a result read before its replies were all received) first sends what is
//! queued, so nothing waits for a request still in the buffer.

use crate::conn::{Connection, Io};
use crate::error::ConnError;

impl Connection {
    /// Hands the socket I/O to the caller, if this connection is a plain socket made
    /// non-blocking ([`Connection::set_nonblocking_io`]); whether it did. From then
    /// on `flush` only queues.
    pub fn queue_io(&mut self) -> bool {
        if matches!(self.io, Io::NonBlocking) && !self.stream.is_tls() {
            self.io = Io::Queued { failure: None };
        }
        self.io_queued()
    }

    /// Whether the caller does this connection's socket I/O.
    pub fn io_queued(&self) -> bool {
        matches!(self.io, Io::Queued { .. })
    }

    /// Keeps the first failure of the caller's I/O for the next read to report.
    fn keep_failure(&mut self, e: ConnError) {
        if let Io::Queued { failure } = &mut self.io {
            failure.get_or_insert(e);
        }
    }

    /// What requests queued and the caller has not sent yet.
    pub fn queued_output(&self) -> &[u8] {
        &self.wbuf
    }

    /// The caller sent the first `n` bytes of [`Connection::queued_output`], or met
    /// `Err` sending them (reported by the next read).
    pub fn output_sent(&mut self, sent: std::io::Result<usize>) {
        match sent {
            Ok(n) if n >= self.wbuf.len() => self.wbuf.clear(),
            // A short send: the rest goes next (the space in front is reclaimed when
            // the buffer is next reserved, not reallocated).
            Ok(n) => bytes::Buf::advance(&mut self.wbuf, n),
            Err(e) => {
                self.wbuf.clear();
                self.keep_failure(ConnError::from_write(e));
            }
        }
    }

    /// Room for the caller to receive into, after the bytes not yet parsed (the
    /// buffer is compacted or doubled when full).
    pub fn read_space(&mut self) -> &mut [u8] {
        self.read.room_to_read();
        self.read.space()
    }

    /// The caller received `n` bytes into [`Connection::read_space`]: `Ok(0)` is the
    /// server closing, `Err` a failed receive; both reach the next read, and a
    /// closed connection counts as replies arrived (reading them reports it).
    pub fn received(&mut self, got: std::io::Result<usize>) {
        match got {
            Ok(n) => self.read.received(n),
            // At 0 (closed) nothing is kept: the next read meets the end itself.
            Err(e) => self.keep_failure(ConnError::from_read(e)),
        }
    }

    /// Sends what is queued now, reading replies meanwhile, for a caller that will
    /// not wait for replies soon (a pipeline before a `\sleep`); a failure is kept
    /// for the next read to report, as the caller's own failures are.
    pub fn send_queued_now(&mut self) {
        if let Err(e) = self.send_queued() {
            self.keep_failure(e);
        }
    }

    /// Sends what is queued, reading replies meanwhile, for a call about to wait on
    /// the socket by itself.
    pub(crate) fn send_queued(&mut self) -> Result<(), ConnError> {
        if !self.io_queued() || self.wbuf.is_empty() {
            return Ok(());
        }
        let res = self.flush_while_reading();
        self.wbuf.clear();
        res.map_err(|e| self.fail(e))
    }
}
