//! Receiving: `get_result` (libpq's `PQgetResult` state machine, pipeline mode
//! included), the handling of each backend message, and the accessors of the current
//! result, which lives in reused buffers (row description, last row, command tag).

use crate::conn::{
    be_i16, be_i32, protocol, AsyncState, Connection, Pending, PipelineStatus, QueryClass,
    ResultStatus, TransactionStatus,
};
use postgres_protocol::message::frontend;

use crate::error::{ConnError, DbError};

impl Connection {
    // ----- receiving -----

    pub(crate) fn queue_advance(&mut self, ready_for_query: bool, got_sync: bool) {
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

    pub(crate) fn process_queue(&mut self) {
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

    pub(crate) fn reset_current(&mut self) {
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
}
