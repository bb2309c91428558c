//! `Connection`: one established session — its parts, its I/O mode, writing out
//! requests (flushing), the information libpq's status functions give, and closing.
//! libpq's asynchronous query API is built on it: `send_*` write requests (`send`),
//! `get_result` reads replies and hands out results one at a time with
//! `PQgetResult`'s semantics (`receive`), and the current result is inspected in
//! place (`ntuples`, `field_name`, `last_row_value`). Each part's state is private to
//! the module that owns it: the read buffer (`readbuf`), the requests and the
//! pipeline (`pipeline`), the current result (`result`).
//!
//! The hot path allocates nothing once warmed up: the write buffer, the read buffer, the
//! row description, the last row and the queue of outstanding requests are all reused.

use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use crate::cancel::{CancelTarget, CancelToken};
use crate::error::{ConnError, DbError};
use crate::pipeline::{AsyncState, Pipeline};
use crate::readbuf::ReadBuf;
use crate::result::CurrentResult;
use crate::stream::Stream;

/// The server's transaction state as of the last ReadyForQuery (libpq's
/// `PQtransactionStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionStatus {
    /// Not in a transaction block.
    Idle,
    /// A command is in progress.
    Active,
    /// In a transaction block.
    InTransaction,
    /// In a failed transaction block.
    InError,
    /// The connection is broken.
    Unknown,
}

/// Handler for server notices (NoticeResponse).
pub type NoticeHandler = Box<dyn FnMut(&DbError) + Send>;

/// An established connection. Its parts' fields are private to the modules that
/// own them: the bytes received to `readbuf`, the requests' state to `pipeline`, the
/// current result to `result`.
pub struct Connection {
    pub(crate) stream: Stream,
    pub(crate) wbuf: BytesMut,
    pub(crate) read: ReadBuf,
    pub(crate) pipeline: Pipeline,
    pub(crate) result: CurrentResult,
    pub(crate) io: Io,
    pub(crate) params: Vec<(String, String)>,
    pub(crate) backend_pid: i32,
    pub(crate) secret_key: i32,
    pub(crate) cancel_target: CancelTarget,
    pub(crate) tx_status: TransactionStatus,
    pub(crate) notice_handler: NoticeHandler,
    pub(crate) broken: bool,
    /// The host and port connected to, as libpq's `PQhost` and `PQport` give them.
    pub(crate) host: String,
    pub(crate) port: String,
}

/// Who does the socket I/O, and how a read that finds nothing waits.
pub(crate) enum Io {
    /// The socket blocks (the default). `poll_first`: a read that would block waits
    /// in `poll` for readability first (plain sockets, once established). A blocking
    /// `recv` sleeps on the socket's one wait queue, which the server's reading of our
    /// request also wakes (it frees our send buffer), so it slept twice per reply:
    /// 1.6-1.7 voluntary context switches per `SELECT 1` transaction against
    /// pgbench's 0.96, and 13-15 µs of client CPU against 12.1-12.4 with the poll.
    /// `poll` waits for readability only, as libpq's callers (pgbench's
    /// `select`/`poll`) do.
    Blocking { poll_first: bool },
    /// The socket stays non-blocking (see [`Connection::set_nonblocking_io`]): the
    /// blocking calls then wait on the socket themselves.
    NonBlocking,
    /// The socket is non-blocking and the caller does its I/O (see
    /// [`Connection::queue_io`]); `failure` is one the caller's read or write met,
    /// for the next read to report.
    Queued { failure: Option<ConnError> },
}

impl Io {
    /// Whether the socket is in blocking mode.
    #[inline]
    pub(crate) fn blocking(&self) -> bool {
        matches!(self, Io::Blocking { .. })
    }
}

pub(crate) fn default_notice_handler() -> NoticeHandler {
    Box::new(|notice: &DbError| eprintln!("{notice}"))
}

impl Connection {
    pub(crate) fn new(stream: Stream, cancel_target: CancelTarget) -> Connection {
        Connection {
            stream,
            wbuf: BytesMut::with_capacity(8192),
            read: ReadBuf::new(),
            pipeline: Pipeline::new(),
            result: CurrentResult::new(),
            io: Io::Blocking { poll_first: false },
            params: Vec::new(),
            backend_pid: 0,
            secret_key: 0,
            cancel_target,
            tx_status: TransactionStatus::Idle,
            notice_handler: default_notice_handler(),
            broken: false,
            host: String::new(),
            port: String::new(),
        }
    }

    // ----- low-level I/O -----

    /// Writes out everything buffered.
    pub fn flush(&mut self) -> Result<(), ConnError> {
        if self.wbuf.is_empty() || matches!(self.io, Io::Queued { .. }) {
            return Ok(());
        }
        let res = if !self.pipeline.is_on() && self.io.blocking() {
            // Outside a pipeline every request is followed by reading its replies, so
            // the server never waits for us to read while we write.
            self.stream
                .write_all(&self.wbuf)
                .and_then(|_| self.stream.flush())
                .map_err(ConnError::from_write)
        } else {
            self.flush_while_reading()
        };
        self.wbuf.clear();
        res.map_err(|e| self.fail(e))
    }

    /// Writes the buffer without blocking, reading the server's replies into the read
    /// buffer whenever the socket is full, so a long pipeline cannot deadlock with a
    /// server that is itself blocked sending results (libpq does the same).
    pub(crate) fn flush_while_reading(&mut self) -> Result<(), ConnError> {
        self.nonblocking(ConnError::from_write, Self::write_or_read)
    }

    /// Runs `io` with the socket non-blocking, then makes it blocking again (`mode`
    /// words a failure to switch).
    fn nonblocking<T>(
        &mut self,
        mode: fn(std::io::Error) -> ConnError,
        io: impl FnOnce(&mut Self) -> Result<T, ConnError>,
    ) -> Result<T, ConnError> {
        if !self.io.blocking() {
            return io(self);
        }
        self.stream.set_nonblocking(true).map_err(mode)?;
        let res = io(self);
        let restored = self.stream.set_nonblocking(false);
        let value = res?;
        restored.map_err(mode)?;
        Ok(value)
    }

    fn write_or_read(&mut self) -> Result<(), ConnError> {
        let mut pos = 0;
        loop {
            if pos < self.wbuf.len() {
                let n = self
                    .stream
                    .try_write(&self.wbuf[pos..])
                    .map_err(ConnError::from_write)?;
                pos += n;
                if n > 0 {
                    continue;
                }
            } else if self.stream.try_flush().map_err(ConnError::from_write)? {
                return Ok(());
            }
            let (readable, _) = crate::sys::wait_read_or_write(self.stream.as_raw_fd())
                .map_err(ConnError::from_write)?;
            if readable {
                let _ = self.read_available()?;
            }
        }
    }

    /// Waits for the next result as pgbench's loop does with libpq: `look` is called,
    /// then what has arrived is read without waiting (`PQconsumeInput`), and while no
    /// complete result is there (`PQisBusy`) it waits on the socket and looks again.
    /// Only `--debug` needs this: pgbench prints `client N receiving` at every look,
    /// so usually twice per command (once before the reply is there). `get_result`
    /// then returns what was read.
    pub fn wait_result_looking(&mut self, mut look: impl FnMut()) -> Result<(), ConnError> {
        loop {
            look();
            if self.pipeline.state() != AsyncState::Busy {
                return Ok(());
            }
            self.nonblocking(ConnError::from_read, |conn| {
                conn.read_all_available().map_err(|e| conn.fail(e))
            })?;
            if self.result_buffered() {
                return Ok(());
            }
            self.send_queued()?;
            crate::sys::wait_readable(self.stream.as_raw_fd()).map_err(ConnError::from_read)?;
        }
    }

    /// Makes the socket non-blocking for good, for a caller that waits on many
    /// connections' sockets at once (a pgbench thread with several clients) and
    /// calls [`Connection::replies_arrived`] when this one is readable. The calls
    /// that block keep blocking: they wait on this socket alone when it has nothing.
    pub fn set_nonblocking_io(&mut self) -> Result<(), ConnError> {
        self.stream
            .set_nonblocking(true)
            .map_err(ConnError::from_read)?;
        if self.io.blocking() {
            self.io = Io::NonBlocking;
        }
        Ok(())
    }

    pub(crate) fn fail(&mut self, e: ConnError) -> ConnError {
        if matches!(
            e,
            ConnError::Closed | ConnError::Receive(_) | ConnError::Send(_)
        ) {
            self.broken = true;
            self.pipeline.lost();
            self.tx_status = TransactionStatus::Unknown;
        }
        e
    }

    pub(crate) fn fail_protocol(&mut self, msg: String) -> ConnError {
        self.broken = true;
        self.pipeline.set_state(AsyncState::Idle);
        ConnError::Protocol(msg)
    }

    // ----- information -----

    /// A ParameterStatus value reported by the server (e.g. `server_version`).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// True once the connection is known to be lost.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// The host connected to, after failover (libpq's `PQhost`): the `host` value of
    /// the entry that accepted (a name, an address or a socket directory), or with
    /// only `hostaddr` the default socket directory, as libpq 15 reports it.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port connected to, after failover (libpq's `PQport`): as given, or
    /// `5432` when none was.
    pub fn port(&self) -> &str {
        &self.port
    }

    /// The server process id (libpq's `PQbackendPID`).
    pub fn backend_pid(&self) -> i32 {
        self.backend_pid
    }

    /// A token to cancel the running query from another thread.
    pub fn cancel_token(&self) -> CancelToken {
        CancelToken::new(
            self.cancel_target.clone(),
            self.backend_pid,
            self.secret_key,
        )
    }

    /// Replaces the notice handler (default: print `NOTICE:  msg` to stderr like libpq).
    pub fn set_notice_handler(&mut self, handler: NoticeHandler) {
        self.notice_handler = handler;
    }
}

impl AsRawFd for Connection {
    fn as_raw_fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }
}

impl Drop for Connection {
    /// Says goodbye (Terminate) like `PQfinish`; errors do not matter any more.
    fn drop(&mut self) {
        if !self.broken {
            self.wbuf.clear();
            frontend::terminate(&mut self.wbuf);
            let _ = self.stream.write_all(&self.wbuf);
            let _ = self.stream.flush();
        }
    }
}

/// Failure of a whole-statement helper: a server error or a connection failure.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The server reported an error.
    #[error("{0}")]
    Db(Box<DbError>),
    /// The connection failed.
    #[error("{0}")]
    Conn(#[from] ConnError),
}

impl QueryError {
    /// The server error, if that is what this is.
    pub fn db_error(&self) -> Option<&DbError> {
        match self {
            QueryError::Db(e) => Some(e),
            QueryError::Conn(_) => None,
        }
    }
}
