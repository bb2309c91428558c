//! Sending: libpq's `PQsend*` calls (simple query, extended query with text
//! parameters, prepare, execute prepared), pipeline mode entry, exit and syncs, with
//! libpq's rules for when a request may be sent and when the buffer is flushed.

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

use crate::conn::Connection;
use crate::error::ConnError;
use crate::pipeline::{PipelineStatus, QueryClass};

/// Send pipeline data once this much is buffered, like libpq's OUTBUFFER_THRESHOLD.
const OUTBUFFER_THRESHOLD: usize = 65536;

impl Connection {
    fn check_can_send(&self) -> Result<(), ConnError> {
        if self.broken {
            return Err(ConnError::Usage("no connection to the server".into()));
        }
        self.pipeline.can_send()
    }

    /// Flush now unless pipelining (libpq's `pqPipelineFlush`).
    fn pipeline_flush(&mut self) -> Result<(), ConnError> {
        if self.pipeline.status() != PipelineStatus::On || self.wbuf.len() >= OUTBUFFER_THRESHOLD {
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
        if self.pipeline.is_on() {
            return self.send_query_params(sql, &[]);
        }
        self.check_can_send()?;
        self.encode(|b| frontend::query(sql, b))?;
        self.pipeline.push(QueryClass::Simple, Some(sql));
        self.flush()
    }

    fn encode_bind_execute(
        &mut self,
        name: &str,
        params: &[Option<&[u8]>],
    ) -> Result<(), ConnError> {
        let sync = !self.pipeline.is_on();
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
        self.pipeline.push(QueryClass::Extended, Some(sql));
        self.pipeline_flush()
    }

    /// `PQsendPrepare` with `nparams` parameters of unspecified type: Parse (named), Sync
    /// (no Sync in pipeline mode).
    pub fn send_prepare(&mut self, name: &str, sql: &str, nparams: usize) -> Result<(), ConnError> {
        self.check_can_send()?;
        let sync = !self.pipeline.is_on();
        self.encode(|b| {
            frontend::parse(name, sql, std::iter::repeat_n(0, nparams), b)?;
            if sync {
                frontend::sync(b);
            }
            Ok(())
        })?;
        self.pipeline.push(QueryClass::Prepare, Some(sql));
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
        self.pipeline.push(QueryClass::Extended, None);
        self.pipeline_flush()
    }

    /// `PQenterPipelineMode`.
    pub fn enter_pipeline_mode(&mut self) -> Result<(), ConnError> {
        self.pipeline.enter()
    }

    /// `PQexitPipelineMode`: only once every result has been collected.
    pub fn exit_pipeline_mode(&mut self) -> Result<(), ConnError> {
        if !self.pipeline.is_on() {
            return Ok(());
        }
        self.pipeline.exit()?;
        self.flush()
    }

    fn queue_sync(&mut self) -> Result<(), ConnError> {
        self.pipeline.can_sync()?;
        frontend::sync(&mut self.wbuf);
        Ok(())
    }

    /// `PQpipelineSync`: a Sync, then flush.
    pub fn pipeline_sync(&mut self) -> Result<(), ConnError> {
        self.queue_sync()?;
        self.flush()?;
        self.pipeline.push(QueryClass::Sync, None);
        Ok(())
    }

    /// `PQsendPipelineSync` (libpq 17): a Sync without flushing.
    pub fn send_pipeline_sync(&mut self) -> Result<(), ConnError> {
        self.queue_sync()?;
        self.pipeline.push(QueryClass::Sync, None);
        self.pipeline_flush()
    }
}
