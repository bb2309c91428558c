//! `COPY ... FROM STDIN` for the init mode: `Connection::copy_in` starts it and returns
//! a `CopyIn` that buffers rows and sends them in large CopyData messages.

use bytes::BufMut;
use postgres_protocol::message::frontend;

use crate::conn::{Connection, QueryError};
use crate::error::ConnError;
use crate::pipeline::AsyncState;
use crate::result::ResultStatus;

/// Send a CopyData message once this much row data is buffered.
const COPY_CHUNK: usize = 64 * 1024;

/// An open COPY FROM STDIN. Finish it with [`CopyIn::finish`]; dropping it unfinished
/// aborts the COPY (CopyFail).
pub struct CopyIn<'a> {
    conn: &'a mut Connection,
    data: Vec<u8>,
    done: bool,
}

impl Connection {
    /// Starts `sql` (a `COPY ... FROM STDIN`) with a simple query. A server error (or a
    /// statement that is not a COPY FROM STDIN) is returned as an error.
    pub fn copy_in(&mut self, sql: &str) -> Result<CopyIn<'_>, QueryError> {
        self.send_query(sql)?;
        let mut first_error = None;
        loop {
            match self.get_result()? {
                Some(ResultStatus::CopyIn) if first_error.is_none() => {
                    return Ok(CopyIn {
                        conn: self,
                        data: Vec::with_capacity(COPY_CHUNK + 1024),
                        done: false,
                    })
                }
                Some(ResultStatus::CopyIn | ResultStatus::CopyOut) => self.end_copy()?,
                Some(ResultStatus::Error(e)) => {
                    first_error.get_or_insert(e);
                }
                Some(_) => {}
                None => {
                    return Err(match first_error {
                        Some(e) => QueryError::Db(e),
                        None => QueryError::Conn(ConnError::Usage(format!(
                            "unexpected copy in result: {sql}"
                        ))),
                    })
                }
            }
        }
    }
}

impl CopyIn<'_> {
    /// Buffers `data` (rows in COPY text format), sending a CopyData message when enough
    /// has accumulated.
    pub fn write(&mut self, data: &[u8]) -> Result<(), ConnError> {
        self.data.extend_from_slice(data);
        if self.data.len() >= COPY_CHUNK {
            self.send_data()?;
            self.conn.flush()?;
        }
        Ok(())
    }

    fn send_data(&mut self) -> Result<(), ConnError> {
        if self.data.is_empty() {
            return Ok(());
        }
        let buf = &mut self.conn.wbuf;
        buf.put_u8(b'd');
        buf.put_i32(self.data.len() as i32 + 4);
        buf.put_slice(&self.data);
        self.data.clear();
        Ok(())
    }

    /// Sends the rest and CopyDone, then returns the number of rows the server copied.
    pub fn finish(mut self) -> Result<u64, QueryError> {
        self.done = true;
        self.send_data()?;
        self.conn.end_copy()?;
        let mut rows = 0;
        let mut first_error = None;
        while let Some(r) = self.conn.get_result()? {
            match r {
                ResultStatus::CommandOk => {
                    rows = self
                        .conn
                        .command_tag()
                        .strip_prefix("COPY ")
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                }
                ResultStatus::Error(e) if first_error.is_none() => first_error = Some(e),
                _ => {}
            }
        }
        match first_error {
            Some(e) => Err(QueryError::Db(e)),
            None => Ok(rows),
        }
    }
}

impl Drop for CopyIn<'_> {
    fn drop(&mut self) {
        if self.done || self.conn.pipeline.state() != AsyncState::CopyIn {
            return;
        }
        if frontend::copy_fail("COPY aborted by client", &mut self.conn.wbuf).is_ok() {
            self.conn.pipeline.set_state(AsyncState::Busy);
            if self.conn.flush().is_ok() {
                while let Ok(Some(_)) = self.conn.get_result() {}
            }
        }
    }
}
