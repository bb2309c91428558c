//! `Connection`: one established session and libpq's asynchronous query API on top of
//! blocking I/O — `send_*` write requests, `get_result` reads replies and hands out
//! results one at a time with `PQgetResult`'s semantics (including pipeline mode), and
//! the current result is inspected in place (`ntuples`, `field_name`, `last_row_value`).
//!
//! The hot path allocates nothing once warmed up: the write buffer, the read buffer, the
//! row description, the last row and the queue of outstanding requests are all reused.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

use crate::cancel::{CancelTarget, CancelToken};
use crate::error::{ConnError, DbError};
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
enum QueryClass {
    Simple,
    Extended,
    Prepare,
    Sync,
}

/// An outstanding request; `query` is kept (when libpq keeps it) for the error cursor.
struct Pending {
    class: QueryClass,
    query: Option<String>,
}

/// Send pipeline data once this much is buffered, like libpq's OUTBUFFER_THRESHOLD.
const OUTBUFFER_THRESHOLD: usize = 65536;

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
    state: AsyncState,
    pipeline: PipelineStatus,
    queue: VecDeque<Pending>,
    spare: Vec<String>,
    ready: Option<ResultStatus>,
    broken: bool,
    // The current result.
    field_names: Vec<u8>,
    field_ends: Vec<usize>,
    has_fields: bool,
    ntuples: usize,
    row: Vec<u8>,
    row_cols: Vec<Option<(usize, usize)>>,
    tag: Vec<u8>,
    collect: Option<Vec<Vec<Option<String>>>>,
}

pub(crate) fn default_notice_handler() -> NoticeHandler {
    Box::new(|notice: &DbError| eprintln!("{notice}"))
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    b.get(at..at + 4)
        .map(|s| i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

fn be_i16(b: &[u8], at: usize) -> Option<i16> {
    b.get(at..at + 2).map(|s| i16::from_be_bytes([s[0], s[1]]))
}

fn protocol(what: &str) -> ConnError {
    ConnError::Protocol(what.to_string())
}

impl Connection {
    pub(crate) fn new(stream: Stream, cancel_target: CancelTarget) -> Connection {
        Connection {
            stream,
            wbuf: BytesMut::with_capacity(8192),
            rbuf: vec![0; 16384],
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
        }
    }

    // ----- low-level I/O -----

    /// Writes out everything buffered.
    pub fn flush(&mut self) -> Result<(), ConnError> {
        if self.wbuf.is_empty() {
            return Ok(());
        }
        let res = self
            .stream
            .write_all(&self.wbuf)
            .and_then(|_| self.stream.flush());
        self.wbuf.clear();
        res.map_err(|e| self.fail(ConnError::from_write(e)))
    }

    fn fail(&mut self, e: ConnError) -> ConnError {
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

    /// Next complete message: (type, body start, body end) in `rbuf`, valid until the
    /// next call.
    #[inline]
    pub(crate) fn next_message(&mut self) -> Result<(u8, usize, usize), ConnError> {
        loop {
            let avail = self.rend - self.rstart;
            if avail >= 5 {
                let at = self.rstart;
                let tag = self.rbuf[at];
                let len = u32::from_be_bytes([
                    self.rbuf[at + 1],
                    self.rbuf[at + 2],
                    self.rbuf[at + 3],
                    self.rbuf[at + 4],
                ]) as usize;
                if len < 4 {
                    return Err(self.fail_protocol(format!(
                        "invalid message length: {len} (message type 0x{tag:02x})"
                    )));
                }
                if avail > len {
                    self.rstart = at + 1 + len;
                    return Ok((tag, at + 5, at + 1 + len));
                }
                if self.rbuf.len() - at < len + 1 {
                    self.make_room(len + 1);
                }
            }
            self.fill()?;
        }
    }

    fn fail_protocol(&mut self, msg: String) -> ConnError {
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

    #[inline]
    fn fill(&mut self) -> Result<(), ConnError> {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        } else if self.rend == self.rbuf.len() {
            self.make_room(self.rbuf.len() * 2);
        }
        loop {
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return Err(self.fail(ConnError::Closed)),
                Ok(n) => {
                    self.rend += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
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

    // ----- sending -----

    fn check_can_send(&self) -> Result<(), ConnError> {
        if self.broken {
            return Err(ConnError::Usage("no connection to the server".into()));
        }
        match (self.pipeline, self.state) {
            (PipelineStatus::Off, AsyncState::Idle) => Ok(()),
            (PipelineStatus::Off, _) => Err(ConnError::Usage(
                "another command is already in progress".into(),
            )),
            (_, AsyncState::CopyIn | AsyncState::CopyOut) => {
                Err(ConnError::Usage("cannot queue commands during COPY".into()))
            }
            _ => Ok(()),
        }
    }

    fn push_pending(&mut self, class: QueryClass, query: Option<&str>) {
        let query = query.map(|q| {
            let mut s = self.spare.pop().unwrap_or_default();
            s.clear();
            s.push_str(q);
            s
        });
        self.queue.push_back(Pending { class, query });
        match self.pipeline {
            PipelineStatus::Off | PipelineStatus::On => {
                if self.state == AsyncState::Idle {
                    self.state = AsyncState::Busy;
                }
            }
            PipelineStatus::Aborted => {
                if matches!(self.state, AsyncState::Idle | AsyncState::PipelineIdle) {
                    self.process_queue();
                }
            }
        }
    }

    /// Flush now unless pipelining (libpq's `pqPipelineFlush`).
    fn pipeline_flush(&mut self) -> Result<(), ConnError> {
        if self.pipeline != PipelineStatus::On || self.wbuf.len() >= OUTBUFFER_THRESHOLD {
            self.flush()
        } else {
            Ok(())
        }
    }

    /// Runs `encode` on the write buffer, undoing a partial message on failure.
    fn encode(
        &mut self,
        encode: impl FnOnce(&mut BytesMut) -> std::io::Result<()>,
    ) -> Result<(), ConnError> {
        let mark = self.wbuf.len();
        encode(&mut self.wbuf).map_err(|e| {
            self.wbuf.truncate(mark);
            ConnError::Usage(format!("could not encode message: {e}"))
        })
    }

    /// `PQsendQuery`: a simple Query message (all statements of `sql`). In pipeline mode
    /// libpq 15 sends it with the extended protocol instead, and so does this.
    pub fn send_query(&mut self, sql: &str) -> Result<(), ConnError> {
        if self.pipeline != PipelineStatus::Off {
            return self.send_query_params(sql, &[]);
        }
        self.check_can_send()?;
        self.encode(|b| frontend::query(sql, b))?;
        self.push_pending(QueryClass::Simple, Some(sql));
        self.flush()
    }

    fn encode_bind_execute(
        &mut self,
        name: &str,
        params: &[Option<&[u8]>],
    ) -> Result<(), ConnError> {
        let sync = self.pipeline == PipelineStatus::Off;
        self.encode(|b| {
            frontend::bind(
                "",
                name,
                std::iter::empty(),
                params.iter(),
                |v, buf| match v {
                    Some(bytes) => {
                        buf.put_slice(bytes);
                        Ok(IsNull::No)
                    }
                    None => Ok(IsNull::Yes),
                },
                std::iter::once(0),
                b,
            )
            .map_err(|e| match e {
                frontend::BindError::Serialization(e) => e,
                frontend::BindError::Conversion(e) => {
                    std::io::Error::new(std::io::ErrorKind::InvalidInput, e)
                }
            })?;
            frontend::describe(b'P', "", b)?;
            frontend::execute("", 0, b)?;
            if sync {
                frontend::sync(b);
            }
            Ok(())
        })
    }

    /// `PQsendQueryParams` with text parameters of unspecified type: Parse (unnamed, one
    /// type 0 per parameter), Bind, Describe portal, Execute, Sync (no Sync in pipeline
    /// mode).
    pub fn send_query_params(
        &mut self,
        sql: &str,
        params: &[Option<&[u8]>],
    ) -> Result<(), ConnError> {
        self.check_can_send()?;
        let mark = self.wbuf.len();
        self.encode(|b| frontend::parse("", sql, std::iter::repeat_n(0, params.len()), b))?;
        if let Err(e) = self.encode_bind_execute("", params) {
            self.wbuf.truncate(mark);
            return Err(e);
        }
        self.push_pending(QueryClass::Extended, Some(sql));
        self.pipeline_flush()
    }

    /// `PQsendPrepare` with `nparams` parameters of unspecified type: Parse (named), Sync
    /// (no Sync in pipeline mode).
    pub fn send_prepare(&mut self, name: &str, sql: &str, nparams: usize) -> Result<(), ConnError> {
        self.check_can_send()?;
        let sync = self.pipeline == PipelineStatus::Off;
        self.encode(|b| {
            frontend::parse(name, sql, std::iter::repeat_n(0, nparams), b)?;
            if sync {
                frontend::sync(b);
            }
            Ok(())
        })?;
        self.push_pending(QueryClass::Prepare, Some(sql));
        self.pipeline_flush()
    }

    /// `PQsendQueryPrepared` with text parameters: Bind, Describe portal, Execute, Sync
    /// (no Sync in pipeline mode).
    pub fn send_query_prepared(
        &mut self,
        name: &str,
        params: &[Option<&[u8]>],
    ) -> Result<(), ConnError> {
        self.check_can_send()?;
        self.encode_bind_execute(name, params)?;
        self.push_pending(QueryClass::Extended, None);
        self.pipeline_flush()
    }

    /// `PQenterPipelineMode`.
    pub fn enter_pipeline_mode(&mut self) -> Result<(), ConnError> {
        if self.pipeline != PipelineStatus::Off {
            return Ok(());
        }
        if self.state != AsyncState::Idle {
            return Err(ConnError::Usage(
                "cannot enter pipeline mode, connection not idle".into(),
            ));
        }
        self.pipeline = PipelineStatus::On;
        Ok(())
    }

    /// `PQexitPipelineMode`: only once every result has been collected.
    pub fn exit_pipeline_mode(&mut self) -> Result<(), ConnError> {
        if self.pipeline == PipelineStatus::Off {
            return Ok(());
        }
        match self.state {
            AsyncState::Ready => {
                return Err(ConnError::Usage(
                    "cannot exit pipeline mode with uncollected results".into(),
                ))
            }
            AsyncState::Busy => {
                return Err(ConnError::Usage(
                    "cannot exit pipeline mode while busy".into(),
                ))
            }
            AsyncState::CopyIn | AsyncState::CopyOut => {
                return Err(ConnError::Usage(
                    "cannot exit pipeline mode while in COPY".into(),
                ))
            }
            AsyncState::Idle | AsyncState::PipelineIdle => {}
        }
        if !self.queue.is_empty() {
            return Err(ConnError::Usage(
                "cannot exit pipeline mode with uncollected results".into(),
            ));
        }
        self.pipeline = PipelineStatus::Off;
        self.state = AsyncState::Idle;
        self.flush()
    }

    fn queue_sync(&mut self) -> Result<(), ConnError> {
        if self.pipeline == PipelineStatus::Off {
            return Err(ConnError::Usage(
                "cannot send pipeline when not in pipeline mode".into(),
            ));
        }
        if matches!(self.state, AsyncState::CopyIn | AsyncState::CopyOut) {
            return Err(ConnError::Usage(
                "internal error: cannot send pipeline while in COPY mode".into(),
            ));
        }
        frontend::sync(&mut self.wbuf);
        Ok(())
    }

    /// `PQpipelineSync`: a Sync, then flush.
    pub fn pipeline_sync(&mut self) -> Result<(), ConnError> {
        self.queue_sync()?;
        self.flush()?;
        self.push_pending(QueryClass::Sync, None);
        Ok(())
    }

    /// `PQsendPipelineSync` (libpq 17): a Sync without flushing.
    pub fn send_pipeline_sync(&mut self) -> Result<(), ConnError> {
        self.queue_sync()?;
        self.push_pending(QueryClass::Sync, None);
        self.pipeline_flush()
    }

    // ----- receiving -----

    fn queue_advance(&mut self, ready_for_query: bool, got_sync: bool) {
        let Some(head) = self.queue.front() else {
            return;
        };
        if (head.class == QueryClass::Simple && !ready_for_query)
            || (head.class == QueryClass::Sync && !got_sync)
        {
            return;
        }
        if let Some(p) = self.queue.pop_front() {
            if let Some(q) = p.query {
                self.spare.push(q);
            }
        }
    }

    fn process_queue(&mut self) {
        match self.state {
            AsyncState::Idle => {
                if self.queue.is_empty() {
                    return;
                }
            }
            AsyncState::PipelineIdle => {}
            _ => return,
        }
        let Some(head) = self.queue.front() else {
            self.state = AsyncState::Idle;
            return;
        };
        if self.pipeline == PipelineStatus::Aborted && head.class != QueryClass::Sync {
            self.ready = Some(ResultStatus::PipelineAborted);
            self.state = AsyncState::Ready;
        } else {
            self.state = AsyncState::Busy;
        }
    }

    fn reset_current(&mut self) {
        self.has_fields = false;
        self.field_names.clear();
        self.field_ends.clear();
        self.ntuples = 0;
        self.row.clear();
        self.row_cols.clear();
        self.tag.clear();
    }

    /// `PQgetResult`: the next result of the outstanding requests, `None` when the
    /// current request has no more results (in pipeline mode: after each request's
    /// result and after each `PipelineSync`). Blocks until a reply arrives.
    pub fn get_result(&mut self) -> Result<Option<ResultStatus>, ConnError> {
        self.reset_current();
        loop {
            match self.state {
                AsyncState::Idle => return Ok(None),
                AsyncState::PipelineIdle => {
                    self.process_queue();
                    return Ok(None);
                }
                AsyncState::Ready => {
                    let r = self.ready.take().unwrap_or(ResultStatus::CommandOk);
                    self.queue_advance(false, r == ResultStatus::PipelineSync);
                    self.state = if self.pipeline != PipelineStatus::Off {
                        AsyncState::PipelineIdle
                    } else {
                        AsyncState::Busy
                    };
                    return Ok(Some(r));
                }
                AsyncState::CopyIn => return Ok(Some(ResultStatus::CopyIn)),
                AsyncState::CopyOut => return Ok(Some(ResultStatus::CopyOut)),
                AsyncState::Busy => {
                    let (tag, start, end) = self.next_message()?;
                    self.handle_message(tag, start, end)?;
                }
            }
        }
    }

    fn current_query(&self) -> Option<String> {
        match self.queue.front() {
            Some(Pending {
                query: Some(q),
                class: QueryClass::Simple | QueryClass::Extended | QueryClass::Prepare,
            }) => Some(q.clone()),
            _ => None,
        }
    }

    #[inline]
    fn handle_message(&mut self, tag: u8, start: usize, end: usize) -> Result<(), ConnError> {
        match tag {
            b'D' => {
                self.ntuples += 1;
                self.row.clear();
                self.row.extend_from_slice(&self.rbuf[start..end]);
                if self.collect.is_some() {
                    self.collect_row()?;
                }
            }
            b'C' => {
                let body = &self.rbuf[start..end];
                let body = body.strip_suffix(&[0]).unwrap_or(body);
                self.tag.clear();
                self.tag.extend_from_slice(body);
                if self.ntuples > 0 {
                    self.parse_row()?;
                }
                self.ready = Some(if self.has_fields {
                    ResultStatus::TuplesOk
                } else {
                    ResultStatus::CommandOk
                });
                self.state = AsyncState::Ready;
            }
            b'T' => self.parse_row_description(start, end)?,
            b'Z' => {
                self.tx_status = match self.rbuf.get(start) {
                    Some(b'I') => TransactionStatus::Idle,
                    Some(b'T') => TransactionStatus::InTransaction,
                    Some(b'E') => TransactionStatus::InError,
                    _ => TransactionStatus::Unknown,
                };
                if self.pipeline != PipelineStatus::Off {
                    self.ready = Some(ResultStatus::PipelineSync);
                    self.pipeline = PipelineStatus::On;
                    self.state = AsyncState::Ready;
                } else {
                    self.queue_advance(true, false);
                    self.state = AsyncState::Idle;
                }
            }
            b'1' => {
                if self.queue.front().map(|p| p.class) == Some(QueryClass::Prepare) {
                    self.ready = Some(ResultStatus::CommandOk);
                    self.state = AsyncState::Ready;
                }
            }
            b'2' | b'3' | b'n' | b't' | b's' | b'A' | b'd' | b'c' => {}
            b'I' => {
                self.ready = Some(ResultStatus::EmptyQuery);
                self.state = AsyncState::Ready;
            }
            b'E' => {
                let mut err = DbError::parse(&self.rbuf[start..end], true);
                err.query = self.current_query();
                if self.pipeline != PipelineStatus::Off {
                    self.pipeline = PipelineStatus::Aborted;
                }
                self.has_fields = false;
                self.ntuples = 0;
                self.ready = Some(ResultStatus::Error(Box::new(err)));
                self.state = AsyncState::Ready;
            }
            b'N' => {
                let mut notice = DbError::parse(&self.rbuf[start..end], false);
                notice.query = self.current_query();
                (self.notice_handler)(&notice);
            }
            b'S' => self.parameter_status(start, end),
            b'G' => {
                self.state = AsyncState::CopyIn;
            }
            b'H' => {
                self.state = AsyncState::CopyOut;
            }
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
        let body = &self.rbuf[start..end];
        let mut parts = body.split(|&b| b == 0);
        let name = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
        let value = String::from_utf8_lossy(parts.next().unwrap_or(&[])).into_owned();
        match self.params.iter_mut().find(|(k, _)| *k == name) {
            Some(slot) => slot.1 = value,
            None => self.params.push((name, value)),
        }
    }

    fn parse_row_description(&mut self, start: usize, end: usize) -> Result<(), ConnError> {
        let body = &self.rbuf[start..end];
        let n = be_i16(body, 0).ok_or_else(|| protocol("invalid RowDescription"))?;
        let mut at = 2;
        self.field_names.clear();
        self.field_ends.clear();
        for _ in 0..n.max(0) {
            let len = body[at.min(body.len())..]
                .iter()
                .position(|&b| b == 0)
                .ok_or_else(|| protocol("invalid RowDescription"))?;
            self.field_names.extend_from_slice(&body[at..at + len]);
            self.field_ends.push(self.field_names.len());
            at += len + 1 + 18;
        }
        if at > body.len() {
            return Err(self.fail_protocol("invalid RowDescription".into()));
        }
        self.has_fields = true;
        self.ntuples = 0;
        Ok(())
    }

    fn parse_row(&mut self) -> Result<(), ConnError> {
        let body = &self.row;
        let n = be_i16(body, 0).ok_or_else(|| protocol("invalid DataRow"))?;
        self.row_cols.clear();
        let mut at = 2;
        for _ in 0..n.max(0) {
            let len = be_i32(body, at).ok_or_else(|| protocol("invalid DataRow"))?;
            at += 4;
            if len < 0 {
                self.row_cols.push(None);
            } else {
                let len = len as usize;
                if at + len > body.len() {
                    return Err(protocol("invalid DataRow"));
                }
                self.row_cols.push(Some((at, at + len)));
                at += len;
            }
        }
        Ok(())
    }

    fn collect_row(&mut self) -> Result<(), ConnError> {
        self.parse_row()?;
        let row: Vec<Option<String>> = self
            .row_cols
            .iter()
            .map(|c| c.map(|(s, e)| String::from_utf8_lossy(&self.row[s..e]).into_owned()))
            .collect();
        if let Some(rows) = &mut self.collect {
            rows.push(row);
        }
        Ok(())
    }

    // ----- the current result -----

    /// Rows in the current result (`PQntuples`).
    pub fn ntuples(&self) -> usize {
        self.ntuples
    }

    /// Columns in the current result (`PQnfields`).
    pub fn nfields(&self) -> usize {
        self.field_ends.len()
    }

    /// Name of column `i` (`PQfname`); empty if out of range.
    pub fn field_name(&self, i: usize) -> &str {
        let Some(&end) = self.field_ends.get(i) else {
            return "";
        };
        let start = if i == 0 { 0 } else { self.field_ends[i - 1] };
        std::str::from_utf8(&self.field_names[start..end]).unwrap_or("")
    }

    /// Value of column `i` in the last row of the current result, text format;
    /// `None` for SQL NULL, no rows, or out of range.
    pub fn last_row_value(&self, i: usize) -> Option<&[u8]> {
        self.row_cols
            .get(i)
            .copied()
            .flatten()
            .map(|(s, e)| &self.row[s..e])
    }

    /// Whether column `i` of the last row is NULL (`PQgetisnull`).
    pub fn last_row_is_null(&self, i: usize) -> bool {
        matches!(self.row_cols.get(i), Some(None))
    }

    /// The command tag of the current result (`PQcmdStatus`, e.g. `UPDATE 1`).
    pub fn command_tag(&self) -> &str {
        std::str::from_utf8(&self.tag).unwrap_or("")
    }

    // ----- COPY in a benchmark script -----

    /// Leaves a COPY state entered by a query (libpq's `PQendcopy`): ends COPY IN with
    /// CopyDone (plus Sync after an extended-protocol query), and for COPY OUT discards
    /// the data. The command's result and the end of the request then come from
    /// `get_result` as usual.
    pub fn end_copy(&mut self) -> Result<(), ConnError> {
        match self.state {
            AsyncState::CopyIn => {
                frontend::copy_done(&mut self.wbuf);
                if self.queue.front().map(|p| p.class) != Some(QueryClass::Simple)
                    && self.pipeline == PipelineStatus::Off
                {
                    frontend::sync(&mut self.wbuf);
                }
                self.state = AsyncState::Busy;
                self.flush()
            }
            AsyncState::CopyOut => {
                self.state = AsyncState::Busy;
                Ok(())
            }
            _ => Err(ConnError::Usage("no COPY in progress".into())),
        }
    }

    pub(crate) fn state(&self) -> AsyncState {
        self.state
    }

    pub(crate) fn set_state(&mut self, s: AsyncState) {
        self.state = s;
    }

    // ----- convenience: whole statements -----

    /// Runs `sql` (all its statements) with a simple query and reads every result;
    /// returns the first server error. A COPY started by `sql` is ended at once.
    pub fn execute(&mut self, sql: &str) -> Result<(), QueryError> {
        self.send_query(sql)?;
        let mut first_error = None;
        while let Some(r) = self.get_result()? {
            match r {
                ResultStatus::Error(e) if first_error.is_none() => first_error = Some(e),
                ResultStatus::CopyIn | ResultStatus::CopyOut => self.end_copy()?,
                _ => {}
            }
        }
        match first_error {
            Some(e) => Err(QueryError::Db(e)),
            None => Ok(()),
        }
    }

    /// Runs `sql` with a simple query and returns the rows of its last row-returning
    /// statement as text (`None` = NULL); the first server error if any.
    pub fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, QueryError> {
        self.send_query(sql)?;
        self.collect = Some(Vec::new());
        let mut rows = Vec::new();
        let mut first_error = None;
        let outcome = (|| -> Result<(), ConnError> {
            while let Some(r) = self.get_result()? {
                match r {
                    ResultStatus::TuplesOk => {
                        rows = self.collect.replace(Vec::new()).unwrap_or_default()
                    }
                    ResultStatus::Error(e) if first_error.is_none() => first_error = Some(e),
                    ResultStatus::CopyIn | ResultStatus::CopyOut => self.end_copy()?,
                    _ => {}
                }
            }
            Ok(())
        })();
        self.collect = None;
        outcome?;
        match first_error {
            Some(e) => Err(QueryError::Db(e)),
            None => Ok(rows),
        }
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
