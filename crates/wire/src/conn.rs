//! `Connection`: one established session — its state, buffers and low-level I/O
//! (flushing, reading messages), the information libpq's status functions give, and
//! closing. libpq's asynchronous query API is built on it: `send_*` write requests
//! (`send`), `get_result` reads replies and hands out results one at a time with
//! `PQgetResult`'s semantics (`receive`), and the current result is inspected in
//! place (`ntuples`, `field_name`, `last_row_value`).
//!
//! The hot path allocates nothing once warmed up: the write buffer, the read buffer, the
//! row description, the last row and the queue of outstanding requests are all reused.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use crate::cancel::{CancelTarget, CancelToken};
use crate::error::{ConnError, DbError};
use crate::message_caps::{may_be_long, sync_lost, MAX_SHORT_LEN};
use crate::stream::Stream;

/// One reply to a request, like libpq's `PGresult` status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultStatus {
    /// A command that returns no rows completed (`PGRES_COMMAND_OK`).
    CommandOk,
    /// A command that returns rows completed (`PGRES_TUPLES_OK`); see `ntuples`.
    TuplesOk,
    /// The query string was empty (`PGRES_EMPTY_QUERY`).
    EmptyQuery,
    /// The server reported an error (`PGRES_FATAL_ERROR`).
    Error(Box<DbError>),
    /// The server waits for COPY data (`PGRES_COPY_IN`); see `end_copy`.
    CopyIn,
    /// The server sends COPY data (`PGRES_COPY_OUT`); see `end_copy`.
    CopyOut,
    /// A pipeline sync point was reached (`PGRES_PIPELINE_SYNC`).
    PipelineSync,
    /// Not executed because an earlier command of the pipeline failed
    /// (`PGRES_PIPELINE_ABORTED`).
    PipelineAborted,
}

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

/// libpq's `PQpipelineStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipelineStatus {
    /// Not in pipeline mode.
    Off,
    /// In pipeline mode.
    On,
    /// In pipeline mode, an error occurred: commands until the next sync are skipped.
    Aborted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AsyncState {
    Idle,
    Busy,
    Ready,
    PipelineIdle,
    CopyIn,
    CopyOut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueryClass {
    Simple,
    Extended,
    Prepare,
    Sync,
}

/// An outstanding request; `query` is kept (when libpq keeps it) for the error cursor.
pub(crate) struct Pending {
    pub(crate) class: QueryClass,
    pub(crate) query: Option<String>,
}

/// Handler for server notices (NoticeResponse).
pub type NoticeHandler = Box<dyn FnMut(&DbError) + Send>;

/// An established connection.
pub struct Connection {
    pub(crate) stream: Stream,
    pub(crate) wbuf: BytesMut,
    pub(crate) rbuf: Vec<u8>,
    pub(crate) rstart: usize,
    pub(crate) rend: usize,
    pub(crate) params: Vec<(String, String)>,
    pub(crate) backend_pid: i32,
    pub(crate) secret_key: i32,
    pub(crate) cancel_target: CancelTarget,
    pub(crate) tx_status: TransactionStatus,
    pub(crate) notice_handler: NoticeHandler,
    pub(crate) state: AsyncState,
    pub(crate) pipeline: PipelineStatus,
    pub(crate) queue: VecDeque<Pending>,
    pub(crate) spare: Vec<String>,
    pub(crate) ready: Option<ResultStatus>,
    pub(crate) broken: bool,
    // The current result.
    pub(crate) field_names: Vec<u8>,
    pub(crate) field_ends: Vec<usize>,
    pub(crate) has_fields: bool,
    pub(crate) ntuples: usize,
    pub(crate) row: Vec<u8>,
    pub(crate) row_cols: Vec<Option<(usize, usize)>>,
    pub(crate) tag: Vec<u8>,
    pub(crate) collect: Option<Vec<Vec<Option<String>>>>,
    /// The host and port connected to, as libpq's `PQhost` and `PQport` give them.
    pub(crate) host: String,
    pub(crate) port: String,
    /// The socket stays non-blocking (see [`Connection::set_nonblocking_io`]): the
    /// blocking calls then wait on the socket themselves.
    pub(crate) nonblocking_io: bool,
    /// A read that would block waits in `poll` for readability first (plain sockets,
    /// once established). A blocking `recv` sleeps on the socket's one wait queue,
    /// which the server's reading of our request also wakes (it frees our send
    /// buffer), so it slept twice per reply: 1.6-1.7 voluntary context switches per
    /// `SELECT 1` transaction against pgbench's 0.96, and 13-15 µs of client CPU
    /// against 12.1-12.4 with the poll. `poll` waits for readability only, as libpq's
    /// callers (pgbench's `select`/`poll`) do.
    pub(crate) poll_before_reading: bool,
    /// The caller does this connection's socket I/O (see [`Connection::queue_io`]).
    pub(crate) queued_io: bool,
    /// A failure the caller's read or write met, for the next read to report.
    pub(crate) queued_failure: Option<ConnError>,
}

pub(crate) fn default_notice_handler() -> NoticeHandler {
    Box::new(|notice: &DbError| eprintln!("{notice}"))
}

pub(crate) fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    b.get(at..at + 4)
        .map(|s| i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

pub(crate) fn be_i16(b: &[u8], at: usize) -> Option<i16> {
    b.get(at..at + 2).map(|s| i16::from_be_bytes([s[0], s[1]]))
}

pub(crate) fn protocol(what: &str) -> ConnError {
    ConnError::Protocol(what.to_string())
}

impl Connection {
    pub(crate) fn new(stream: Stream, cancel_target: CancelTarget) -> Connection {
        Connection {
            stream,
            wbuf: BytesMut::with_capacity(8192),
            // Small at first, doubled while a reply needs more: a zeroed buffer is touched
            // memory, and 1,000 clients of 16 KiB each would cost 16 MB for replies that
            // mostly fit in a few hundred bytes.
            rbuf: vec![0; 4096],
            rstart: 0,
            rend: 0,
            params: Vec::new(),
            backend_pid: 0,
            secret_key: 0,
            cancel_target,
            tx_status: TransactionStatus::Idle,
            notice_handler: default_notice_handler(),
            state: AsyncState::Idle,
            pipeline: PipelineStatus::Off,
            queue: VecDeque::with_capacity(16),
            spare: Vec::new(),
            ready: None,
            broken: false,
            field_names: Vec::with_capacity(256),
            field_ends: Vec::with_capacity(16),
            has_fields: false,
            ntuples: 0,
            row: Vec::with_capacity(256),
            row_cols: Vec::with_capacity(16),
            tag: Vec::with_capacity(32),
            collect: None,
            host: String::new(),
            port: String::new(),
            nonblocking_io: false,
            poll_before_reading: false,
            queued_io: false,
            queued_failure: None,
        }
    }

    // ----- low-level I/O -----

    /// Writes out everything buffered.
    pub fn flush(&mut self) -> Result<(), ConnError> {
        if self.wbuf.is_empty() || self.queued_io {
            return Ok(());
        }
        let res = if self.pipeline == PipelineStatus::Off && !self.nonblocking_io {
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
        if self.nonblocking_io {
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
            if self.state != AsyncState::Busy {
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
        self.nonblocking_io = true;
        Ok(())
    }

    /// Reads what has arrived without waiting (libpq's `PQconsumeInput`), then
    /// tells whether the replies up to the `syncs`-th ReadyForQuery are buffered,
    /// so that reading them will not wait. A broken connection counts as arrived:
    /// `get_result` reports it. Needs [`Connection::set_nonblocking_io`].
    pub fn replies_arrived(&mut self, syncs: usize) -> bool {
        // A failed read is not reported here: what was buffered before it still
        // comes first, and the next read meets the failure again.
        if self.read_all_available().is_err() {
            return true;
        }
        if self.replies_buffered(syncs) {
            return true;
        }
        // Not all there: read on to EAGAIN. After a short read, an end of stream that
        // came with the data raises no new readiness event.
        self.read_until_blocked().is_err() || self.replies_buffered(syncs)
    }

    /// Whether the read buffer holds `syncs` complete ReadyForQuery messages, a
    /// COPY start (the server then waits for us), or a malformed message: reading
    /// results up to there will not wait.
    pub fn replies_buffered(&self, syncs: usize) -> bool {
        let mut seen = 0;
        self.buffered_until(|tag| match tag {
            b'Z' => {
                seen += 1;
                seen >= syncs
            }
            b'G' | b'H' | b'W' => true,
            _ => false,
        })
    }

    /// Whether the read buffer holds a complete message that completes a result (or
    /// a malformed one, which `get_result` reports).
    fn result_buffered(&self) -> bool {
        let prepare = self.queue.front().map(|p| p.class) == Some(QueryClass::Prepare);
        self.buffered_until(|tag| {
            matches!(tag, b'C' | b'E' | b'I' | b'Z' | b'G' | b'H' | b'W')
                || (tag == b'1' && prepare)
        })
    }

    /// Walks the complete messages in the read buffer: true at the first whose type
    /// `done` accepts (or a malformed header), false at the end of what is buffered.
    fn buffered_until(&self, mut done: impl FnMut(u8) -> bool) -> bool {
        let mut at = self.rstart;
        while self.rend - at >= 5 {
            let (tag, len) = self.header_at(at);
            if len < 4 {
                return true;
            }
            if self.rend - at < len + 1 {
                return false;
            }
            if done(tag) {
                return true;
            }
            at += 1 + len;
        }
        false
    }

    /// Non-blocking reads until nothing more is there. One read is not enough
    /// before a wait on the socket: TLS may hold decrypted bytes that did not fit,
    /// and the socket would never become readable for them.
    fn read_all_available(&mut self) -> Result<(), ConnError> {
        loop {
            let before = self.rend;
            if !self.read_available()? {
                return Ok(());
            }
            // A short read of a plain socket took all the kernel held: asking again
            // would only return EAGAIN, one system call per reply for nothing.
            // Whatever arrives later makes the socket readable anew.
            if self.rend > before && self.rend < self.rbuf.len() && !self.stream.is_tls() {
                return Ok(());
            }
        }
    }

    /// Non-blocking reads until the socket says EAGAIN (or fails).
    fn read_until_blocked(&mut self) -> Result<(), ConnError> {
        while self.read_available()? {}
        Ok(())
    }

    /// One non-blocking read into the read buffer (growing it if full); whether it
    /// got any bytes.
    fn read_available(&mut self) -> Result<bool, ConnError> {
        if self.rend == self.rbuf.len() {
            let len = self.rbuf.len();
            self.make_room(len * 2);
        }
        match self.stream.try_read(&mut self.rbuf[self.rend..]) {
            Ok(Some(0)) => Err(ConnError::Closed),
            Ok(Some(n)) => {
                self.rend += n;
                Ok(true)
            }
            Ok(None) => Ok(false),
            // Nothing read, but more may be there: worth another try.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(true),
            Err(e) => Err(ConnError::from_read(e)),
        }
    }

    pub(crate) fn fail(&mut self, e: ConnError) -> ConnError {
        if matches!(
            e,
            ConnError::Closed | ConnError::Receive(_) | ConnError::Send(_)
        ) {
            self.broken = true;
            self.state = AsyncState::Idle;
            self.tx_status = TransactionStatus::Unknown;
            self.queue.clear();
        }
        e
    }

    /// The type and length word of the message header at `at` (5 bytes buffered).
    #[inline]
    fn header_at(&self, at: usize) -> (u8, usize) {
        let b = &self.rbuf[at..at + 5];
        (b[0], u32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize)
    }

    /// Next complete message: (type, body start, body end) in `rbuf`, valid until the
    /// next call.
    #[inline]
    pub(crate) fn next_message(&mut self) -> Result<(u8, usize, usize), ConnError> {
        loop {
            let avail = self.rend - self.rstart;
            if avail >= 5 {
                let at = self.rstart;
                let (tag, len) = self.header_at(at);
                if len < 4 || (len > MAX_SHORT_LEN && !may_be_long(tag)) {
                    return Err(self.fail_protocol(sync_lost(tag, len)));
                }
                if avail > len {
                    self.rstart = at + 1 + len;
                    return Ok((tag, at + 5, at + 1 + len));
                }
                // Make room by moving the message to the front, never by trusting its
                // length: `fill` grows the buffer only once what arrived fills it.
                if at > 0 && self.rbuf.len() - at < len + 1 {
                    self.make_room(0);
                }
            }
            self.fill()?;
        }
    }

    pub(crate) fn fail_protocol(&mut self, msg: String) -> ConnError {
        self.broken = true;
        self.state = AsyncState::Idle;
        ConnError::Protocol(msg)
    }

    /// Moves unread bytes to the front and grows the buffer to hold `need` bytes.
    fn make_room(&mut self, need: usize) {
        self.rbuf.copy_within(self.rstart..self.rend, 0);
        self.rend -= self.rstart;
        self.rstart = 0;
        if self.rbuf.len() < need {
            self.rbuf.resize(need.next_power_of_two(), 0);
        }
    }

    /// Room after the unparsed bytes for the next read, whoever does it: an emptied
    /// buffer starts again at the front, a full one is compacted and doubled.
    #[inline]
    pub(crate) fn room_to_read(&mut self) {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        } else if self.rend == self.rbuf.len() {
            self.make_room(self.rbuf.len() * 2);
        }
    }

    #[inline]
    pub(crate) fn fill(&mut self) -> Result<(), ConnError> {
        if let Some(e) = self.queued_failure.take() {
            return Err(self.fail(e));
        }
        self.room_to_read();
        if self.poll_before_reading && self.rstart == self.rend && !self.nonblocking_io {
            // A failed poll leaves the read to report the socket's state.
            let _ = crate::sys::wait_readable(self.stream.as_raw_fd());
        }
        loop {
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return Err(self.fail(ConnError::Closed)),
                Ok(n) => {
                    self.rend += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // Only a socket left non-blocking on purpose waits here: on a blocking
                // one, EAGAIN is a read timeout (connect_timeout) expiring.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && self.nonblocking_io => {
                    self.send_queued()?;
                    if let Err(e) = crate::sys::wait_readable(self.stream.as_raw_fd()) {
                        return Err(self.fail(ConnError::from_read(e)));
                    }
                }
                Err(e) => return Err(self.fail(ConnError::from_read(e))),
            }
        }
    }

    // ----- information -----

    /// A ParameterStatus value reported by the server (e.g. `server_version`).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The server version as an integer (`150018`), from `server_version_num` if
    /// reported, else parsed from `server_version` like libpq's `PQserverVersion`.
    pub fn server_version_num(&self) -> i32 {
        if let Some(n) = self
            .parameter("server_version_num")
            .and_then(|v| v.parse().ok())
        {
            return n;
        }
        let Some(v) = self.parameter("server_version") else {
            return 0;
        };
        let nums: Vec<i32> = v
            .split(|c: char| !c.is_ascii_digit())
            .take_while(|s| !s.is_empty())
            .take(3)
            .filter_map(|s| s.parse().ok())
            .collect();
        match nums.as_slice() {
            [major, minor, rev] if *major < 10 => major * 10000 + minor * 100 + rev,
            [major, minor, ..] if *major >= 10 => major * 10000 + minor,
            [major, minor] => major * 10000 + minor * 100,
            [major] => major * 10000,
            _ => 0,
        }
    }

    /// The transaction status (libpq's `PQtransactionStatus`).
    pub fn transaction_status(&self) -> TransactionStatus {
        if self.broken {
            TransactionStatus::Unknown
        } else if self.state != AsyncState::Idle {
            TransactionStatus::Active
        } else {
            self.tx_status
        }
    }

    /// The pipeline status (libpq's `PQpipelineStatus`).
    pub fn pipeline_status(&self) -> PipelineStatus {
        self.pipeline
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
