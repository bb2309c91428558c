//! Receiving: reading the socket into the read buffer, however the connection's
//! I/O mode waits; `get_result` (libpq's `PQgetResult` state machine, pipeline mode
//! included), the handling of each backend message, and the current result's
//! accessors. The parts it drives own their state: `readbuf` the bytes, `pipeline`
//! the requests, `result` the current result.

use std::io::Read;
use std::os::fd::AsRawFd;

use postgres_protocol::message::frontend;

use crate::conn::{Connection, Io, TransactionStatus};
use crate::error::{ConnError, DbError};
use crate::message_caps::sync_lost;
use crate::pipeline::{AsyncState, PipelineStatus, QueryClass};
use crate::readbuf::Framed;
use crate::result::{BadRowDescription, ResultStatus};

impl Connection {
    // ----- reading from the socket -----

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
        self.read.scan(|tag| match tag {
            b'Z' => {
                seen += 1;
                seen >= syncs
            }
            b'G' | b'H' | b'W' => true,
            _ => false,
        })
    }

    /// Non-blocking reads until nothing more is there. One read is not enough
    /// before a wait on the socket: TLS may hold decrypted bytes that did not fit,
    /// and the socket would never become readable for them.
    pub(crate) fn read_all_available(&mut self) -> Result<(), ConnError> {
        loop {
            let before = self.read.end();
            if !self.read_available()? {
                return Ok(());
            }
            // A short read of a plain socket took all the kernel held: asking again
            // would only return EAGAIN, one system call per reply for nothing.
            // Whatever arrives later makes the socket readable anew.
            if self.read.end() > before && !self.read.is_full() && !self.stream.is_tls() {
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
    pub(crate) fn read_available(&mut self) -> Result<bool, ConnError> {
        if self.read.is_full() {
            self.read.grow();
        }
        match self.stream.try_read(self.read.space()) {
            Ok(Some(0)) => Err(ConnError::Closed),
            Ok(Some(n)) => {
                self.read.filled(n);
                Ok(true)
            }
            Ok(None) => Ok(false),
            // Nothing read, but more may be there: worth another try.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(true),
            Err(e) => Err(ConnError::from_read(e)),
        }
    }

    /// Next complete message: (type, body start, body end) in the read buffer
    /// (`self.read.body`), valid until the next call.
    #[inline]
    pub(crate) fn next_message(&mut self) -> Result<(u8, usize, usize), ConnError> {
        loop {
            match self.read.next_message() {
                Framed::Message { tag, start, end } => return Ok((tag, start, end)),
                Framed::Malformed { tag, len } => {
                    return Err(self.fail_protocol(sync_lost(tag, len)))
                }
                Framed::Incomplete => self.fill()?,
            }
        }
    }

    /// Reads at least one byte, waiting as the I/O mode says.
    #[inline]
    pub(crate) fn fill(&mut self) -> Result<(), ConnError> {
        if let Io::Queued { failure } = &mut self.io {
            if let Some(e) = failure.take() {
                return Err(self.fail(e));
            }
        }
        self.read.room_to_read();
        if matches!(self.io, Io::Blocking { poll_first: true }) && self.read.is_empty() {
            // A failed poll leaves the read to report the socket's state.
            let _ = crate::sys::wait_readable(self.stream.as_raw_fd());
        }
        loop {
            match self.stream.read(self.read.space()) {
                Ok(0) => return Err(self.fail(ConnError::Closed)),
                Ok(n) => {
                    self.read.filled(n);
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // Only a socket left non-blocking on purpose waits here: on a blocking
                // one, EAGAIN is a read timeout (connect_timeout) expiring.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && !self.io.blocking() => {
                    self.send_queued()?;
                    if let Err(e) = crate::sys::wait_readable(self.stream.as_raw_fd()) {
                        return Err(self.fail(ConnError::from_read(e)));
                    }
                }
                Err(e) => return Err(self.fail(ConnError::from_read(e))),
            }
        }
    }

    // ----- results -----

    /// `PQgetResult`: the next result of the outstanding requests, `None` when the
    /// current request has no more results (in pipeline mode: after each request's
    /// result and after each `PipelineSync`). Blocks until a reply arrives.
    pub fn get_result(&mut self) -> Result<Option<ResultStatus>, ConnError> {
        self.result.reset();
        loop {
            match self.pipeline.state() {
                AsyncState::Idle => return Ok(None),
                AsyncState::PipelineIdle => {
                    self.pipeline.process_queue();
                    return Ok(None);
                }
                AsyncState::Ready => return Ok(Some(self.pipeline.take_ready())),
                AsyncState::CopyIn => return Ok(Some(ResultStatus::CopyIn)),
                AsyncState::CopyOut => return Ok(Some(ResultStatus::CopyOut)),
                AsyncState::Busy => {
                    let (tag, start, end) = self.next_message()?;
                    self.handle_message(tag, start, end)?;
                }
            }
        }
    }

    /// Whether the read buffer holds a complete message that completes a result (or
    /// a malformed one, which `get_result` reports).
    pub(crate) fn result_buffered(&self) -> bool {
        let prepare = self.pipeline.front_class() == Some(QueryClass::Prepare);
        self.read.scan(|tag| {
            matches!(tag, b'C' | b'E' | b'I' | b'Z' | b'G' | b'H' | b'W')
                || (tag == b'1' && prepare)
        })
    }

    #[inline]
    fn handle_message(&mut self, tag: u8, start: usize, end: usize) -> Result<(), ConnError> {
        match tag {
            b'D' => {
                let (skipped, start, end) = if self.result.collecting() {
                    (0, start, end)
                } else {
                    self.read.skip_to_last_row(start, end)
                };
                self.result.data_rows(skipped, self.read.body(start, end))?
            }
            b'C' => {
                self.result.complete(self.read.body(start, end))?;
                self.pipeline.result_ready(self.result.status());
            }
            b'T' => {
                let parsed = self.result.row_description(self.read.body(start, end));
                match parsed {
                    Ok(()) => {}
                    Err(BadRowDescription::Invalid) => {
                        return Err(ConnError::Protocol("invalid RowDescription".into()))
                    }
                    Err(BadRowDescription::Overrun) => {
                        return Err(self.fail_protocol("invalid RowDescription".into()))
                    }
                }
            }
            b'Z' => {
                self.tx_status = match self.read.body(start, end).first() {
                    Some(b'I') => TransactionStatus::Idle,
                    Some(b'T') => TransactionStatus::InTransaction,
                    Some(b'E') => TransactionStatus::InError,
                    _ => TransactionStatus::Unknown,
                };
                self.pipeline.ready_for_query();
            }
            b'1' => {
                if self.pipeline.front_class() == Some(QueryClass::Prepare) {
                    self.pipeline.result_ready(ResultStatus::CommandOk);
                }
            }
            b'2' | b'3' | b'n' | b't' | b's' | b'A' | b'd' | b'c' => {}
            b'I' => self.pipeline.result_ready(ResultStatus::EmptyQuery),
            b'E' => {
                let mut err = DbError::parse(self.read.body(start, end), true);
                err.query = self.pipeline.current_query();
                self.pipeline.error_arrived();
                self.result.failed();
                self.pipeline
                    .result_ready(ResultStatus::Error(Box::new(err)));
            }
            b'N' => {
                let mut notice = DbError::parse(self.read.body(start, end), false);
                notice.query = self.pipeline.current_query();
                (self.notice_handler)(&notice);
            }
            b'S' => self.parameter_status(start, end),
            b'G' => self.pipeline.set_state(AsyncState::CopyIn),
            b'H' => self.pipeline.set_state(AsyncState::CopyOut),
            b'W' => {
                return Err(self.fail_protocol("COPY BOTH is not supported".into()));
            }
            other => {
                return Err(self.fail_protocol(format!(
                    "unexpected response from server; first received character was \"{}\"",
                    other as char
                )))
            }
        }
        Ok(())
    }

    pub(crate) fn parameter_status(&mut self, start: usize, end: usize) {
        let body = self.read.body(start, end);
        let mut parts = body.split(|&b| b == 0);
        let name = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
        let value = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
        match self.params.iter_mut().find(|(k, _)| *k == name) {
            Some(slot) => slot.1 = value,
            None => self.params.push((name, value)),
        }
    }

    /// The transaction status (libpq's `PQtransactionStatus`).
    pub fn transaction_status(&self) -> TransactionStatus {
        if self.broken {
            TransactionStatus::Unknown
        } else if self.pipeline.state() != AsyncState::Idle {
            TransactionStatus::Active
        } else {
            self.tx_status
        }
    }

    /// The pipeline status (libpq's `PQpipelineStatus`).
    pub fn pipeline_status(&self) -> PipelineStatus {
        self.pipeline.status()
    }

    // ----- the current result -----

    /// Rows in the current result (`PQntuples`).
    pub fn ntuples(&self) -> usize {
        self.result.ntuples()
    }

    /// Columns in the current result (`PQnfields`).
    pub fn nfields(&self) -> usize {
        self.result.nfields()
    }

    /// Name of column `i` (`PQfname`); empty if out of range.
    pub fn field_name(&self, i: usize) -> &str {
        self.result.field_name(i)
    }

    /// Value of column `i` in the last row of the current result, text format;
    /// `None` for SQL NULL, no rows, or out of range.
    pub fn last_row_value(&self, i: usize) -> Option<&[u8]> {
        self.result.last_row_value(i)
    }

    /// Whether column `i` of the last row is NULL (`PQgetisnull`).
    pub fn last_row_is_null(&self, i: usize) -> bool {
        self.result.last_row_is_null(i)
    }

    /// The command tag of the current result (`PQcmdStatus`, e.g. `UPDATE 1`).
    pub fn command_tag(&self) -> &str {
        self.result.command_tag()
    }

    // ----- COPY in a benchmark script -----

    /// Leaves a COPY state entered by a query (libpq's `PQendcopy`): ends COPY IN with
    /// CopyDone (plus Sync after an extended-protocol query), and for COPY OUT discards
    /// the data. The command's result and the end of the request then come from
    /// `get_result` as usual.
    pub fn end_copy(&mut self) -> Result<(), ConnError> {
        match self.pipeline.state() {
            AsyncState::CopyIn => {
                frontend::copy_done(&mut self.wbuf);
                if self.pipeline.front_class() != Some(QueryClass::Simple) && !self.pipeline.is_on()
                {
                    frontend::sync(&mut self.wbuf);
                }
                self.pipeline.set_state(AsyncState::Busy);
                self.flush()
            }
            AsyncState::CopyOut => {
                self.pipeline.set_state(AsyncState::Busy);
                Ok(())
            }
            _ => Err(ConnError::Usage("no COPY in progress".into())),
        }
    }
}
