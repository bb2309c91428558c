//! The current result, kept in reused buffers (row description, last row, command
//! tag) and inspected in place like a `PGresult` (`receive` gives `Connection`'s
//! accessors); and the rows `query_rows` collects. No I/O.

use crate::error::{ConnError, DbError};

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

/// What the messages of the current result have said so far.
pub(crate) struct CurrentResult {
    /// The column names, one after another; `field_ends[i]` ends the i-th.
    field_names: Vec<u8>,
    field_ends: Vec<usize>,
    /// A RowDescription came: the result has rows (`PGRES_TUPLES_OK`).
    has_fields: bool,
    ntuples: usize,
    /// The last DataRow's body and its columns' bounds in it (`None` = NULL).
    row: Vec<u8>,
    row_cols: Vec<Option<(usize, usize)>>,
    tag: Vec<u8>,
    /// Every row as text, while `query_rows` collects them.
    collect: Option<Vec<Vec<Option<String>>>>,
}

impl CurrentResult {
    pub(crate) fn new() -> CurrentResult {
        CurrentResult {
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

    /// Forgets the result handed out last.
    pub(crate) fn reset(&mut self) {
        self.has_fields = false;
        self.field_names.clear();
        self.field_ends.clear();
        self.ntuples = 0;
        self.row.clear();
        self.row_cols.clear();
        self.tag.clear();
    }

    /// A DataRow after `skipped` others not kept (see `ReadBuf::skip_to_last_row`):
    /// kept as the last row (and collected, when collecting).
    #[inline]
    pub(crate) fn data_rows(&mut self, skipped: usize, body: &[u8]) -> Result<(), ConnError> {
        self.ntuples += 1 + skipped;
        self.row.clear();
        self.row.extend_from_slice(body);
        if self.collect.is_some() {
            self.collect_row()?;
        }
        Ok(())
    }

    /// A CommandComplete: the tag kept, the last row's columns found.
    #[inline]
    pub(crate) fn complete(&mut self, body: &[u8]) -> Result<(), ConnError> {
        let body = body.strip_suffix(&[0]).unwrap_or(body);
        self.tag.clear();
        self.tag.extend_from_slice(body);
        if self.ntuples > 0 {
            self.parse_row()?;
        }
        Ok(())
    }

    /// The completed result's status: rows or none.
    #[inline]
    pub(crate) fn status(&self) -> ResultStatus {
        if self.has_fields {
            ResultStatus::TuplesOk
        } else {
            ResultStatus::CommandOk
        }
    }

    /// An error ends the result: it has no rows.
    pub(crate) fn failed(&mut self) {
        self.has_fields = false;
        self.ntuples = 0;
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

    /// Whether every row is wanted (`query_rows`), not only the last.
    #[inline]
    pub(crate) fn collecting(&self) -> bool {
        self.collect.is_some()
    }

    /// Starts collecting every row as text (`query_rows`).
    pub(crate) fn start_collecting(&mut self) {
        self.collect = Some(Vec::new());
    }

    /// The rows collected since the last call; collecting goes on.
    pub(crate) fn take_collected(&mut self) -> Vec<Vec<Option<String>>> {
        self.collect.replace(Vec::new()).unwrap_or_default()
    }

    pub(crate) fn stop_collecting(&mut self) {
        self.collect = None;
    }
}

/// A RowDescription that does not parse; `Overrun`: its fields run past its end.
pub(crate) enum BadRowDescription {
    Invalid,
    Overrun,
}

impl CurrentResult {
    /// A RowDescription: the column names kept. Inlined into `get_result`'s message
    /// loop: a call of its own cost 50 more instructions per `SELECT 1` transaction.
    #[inline]
    pub(crate) fn row_description(&mut self, body: &[u8]) -> Result<(), BadRowDescription> {
        let n = be_i16(body, 0).ok_or(BadRowDescription::Invalid)?;
        let mut at = 2;
        self.field_names.clear();
        self.field_ends.clear();
        for _ in 0..n.max(0) {
            let len = body[at.min(body.len())..]
                .iter()
                .position(|&b| b == 0)
                .ok_or(BadRowDescription::Invalid)?;
            self.field_names.extend_from_slice(&body[at..at + len]);
            self.field_ends.push(self.field_names.len());
            at += len + 1 + 18;
        }
        if at > body.len() {
            return Err(BadRowDescription::Overrun);
        }
        self.has_fields = true;
        self.ntuples = 0;
        Ok(())
    }

    pub(crate) fn ntuples(&self) -> usize {
        self.ntuples
    }

    pub(crate) fn nfields(&self) -> usize {
        self.field_ends.len()
    }

    pub(crate) fn field_name(&self, i: usize) -> &str {
        let Some(&end) = self.field_ends.get(i) else {
            return "";
        };
        let start = if i == 0 { 0 } else { self.field_ends[i - 1] };
        std::str::from_utf8(&self.field_names[start..end]).unwrap_or("")
    }

    pub(crate) fn last_row_value(&self, i: usize) -> Option<&[u8]> {
        self.row_cols
            .get(i)
            .copied()
            .flatten()
            .map(|(s, e)| &self.row[s..e])
    }

    pub(crate) fn last_row_is_null(&self, i: usize) -> bool {
        matches!(self.row_cols.get(i), Some(None))
    }

    pub(crate) fn command_tag(&self) -> &str {
        std::str::from_utf8(&self.tag).unwrap_or("")
    }
}
