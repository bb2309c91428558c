//! Sending: libpq's `PQsend*` calls (simple query, extended query with text
//! parameters, prepare, execute prepared), pipeline mode entry, exit and syncs, with
//! libpq's rules for when a request may be sent and when the buffer is flushed.

use std::io;

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::frontend;

use crate::conn::Connection;
use crate::error::ConnError;
use crate::pipeline::{PipelineStatus, QueryClass};

/// Send pipeline data once this much is buffered, like libpq's OUTBUFFER_THRESHOLD.
const OUTBUFFER_THRESHOLD: usize = 65536;

/// What follows a Bind's parameter values in every request `bind_execute` encodes:
/// the Bind's one result format code (text), Describe of the unnamed portal, Execute
/// of it with no row limit, and a Sync (the last 5 bytes), as postgres-protocol's
/// encoders write them. Copied as one slice: encoding them one by one cost more
/// than the whole Bind before them.
const BIND_TAIL: [u8; 26] = [
    0, 1, 0, 0, // one result format code: text
    b'D', 0, 0, 0, 6, b'P', 0, // Describe portal ""
    b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0, // Execute portal "", every row
    b'S', 0, 0, 0, 4, // Sync
];

/// The bytes of `BIND_TAIL` that are the Sync.
const SYNC_LEN: usize = 5;

/// postgres-protocol's error for a count or length its length word cannot hold.
fn too_large() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "value too large to transmit")
}

/// Bind of the unnamed portal to statement `name` with text parameters (`None` =
/// NULL) and text results, Describe portal, Execute, and a Sync if `sync`: the
/// bytes `frontend::{bind, describe, execute, sync}` write, and their errors (same
/// kind and text), in one pass with the lengths computed first. Nothing is written
/// on error.
pub(crate) fn bind_execute(
    name: &str,
    params: &[Option<&[u8]>],
    sync: bool,
    b: &mut BytesMut,
) -> io::Result<()> {
    let name = name.as_bytes();
    if name.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "string contains embedded null",
        ));
    }
    let count = u16::try_from(params.len()).map_err(|_| too_large())?;
    let mut values = 0usize;
    for v in params.iter().flatten() {
        if v.len() > i32::MAX as usize {
            return Err(too_large());
        }
        // At most 65,535 values below 2^31 bytes each: no overflow of a 64-bit usize.
        values += v.len();
    }
    // Length word, portal "" and the statement's name (NUL-terminated), no parameter
    // format codes, the parameter count, a length word per parameter, the values, and
    // the one result format code.
    let body = 4 + 1 + name.len() + 1 + 2 + 2 + 4 * params.len() + values + 4;
    let body_len = i32::try_from(body).map_err(|_| too_large())?;
    b.reserve(1 + body - 4 + BIND_TAIL.len());
    // Runs of fixed length, each one copy the compiler inlines: every put checks
    // the buffer's room and a call of memcpy costs more than these few bytes.
    // The type, the length word and the unnamed portal.
    let [l0, l1, l2, l3] = body_len.to_be_bytes();
    b.put_slice(&[b'B', l0, l1, l2, l3, 0]);
    b.put_slice(name);
    // The name's terminator, no parameter format codes, the parameter count.
    let [c0, c1] = count.to_be_bytes();
    b.put_slice(&[0, 0, 0, c0, c1]);
    for v in params {
        match v {
            // Checked above to fit.
            Some(v) => {
                b.put_i32(v.len() as i32);
                b.put_slice(v);
            }
            None => b.put_i32(-1),
        }
    }
    if sync {
        b.put_slice(&BIND_TAIL);
    } else {
        b.put_slice(&BIND_TAIL[..BIND_TAIL.len() - SYNC_LEN]);
    }
    Ok(())
}

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
        self.encode(|b| bind_execute(name, params, sync, b))
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

#[cfg(test)]
mod tests {
    use super::*;
    use postgres_protocol::IsNull;
    use proptest::prelude::*;

    /// What the encoders of postgres-protocol write for the same request (the way
    /// this module encoded it before `bind_execute`), or their error's text.
    fn reference(name: &str, params: &[Option<&[u8]>], sync: bool) -> Result<Vec<u8>, String> {
        let mut b = BytesMut::new();
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
            &mut b,
        )
        .map_err(|e| match e {
            frontend::BindError::Serialization(e) => e.to_string(),
            frontend::BindError::Conversion(e) => e.to_string(),
        })?;
        frontend::describe(b'P', "", &mut b).map_err(|e| e.to_string())?;
        frontend::execute("", 0, &mut b).map_err(|e| e.to_string())?;
        if sync {
            frontend::sync(&mut b);
        }
        Ok(b.to_vec())
    }

    /// `bind_execute`'s bytes after `prefix` already buffered, or its error's text
    /// (then checking it wrote nothing).
    fn ours(name: &str, params: &[Option<&[u8]>], sync: bool) -> Result<Vec<u8>, String> {
        let prefix = b"earlier request";
        let mut b = BytesMut::from(&prefix[..]);
        match bind_execute(name, params, sync, &mut b) {
            Ok(()) => {
                assert_eq!(&b[..prefix.len()], prefix);
                Ok(b[prefix.len()..].to_vec())
            }
            Err(e) => {
                assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
                assert_eq!(&b[..], prefix);
                Err(e.to_string())
            }
        }
    }

    #[test]
    fn same_bytes_as_postgres_protocol() {
        let cases: [(&str, &[Option<&[u8]>]); 5] = [
            ("", &[]),
            ("P0_1", &[Some(b"42")]),
            ("P3_12", &[None, Some(b""), Some(b"x y"), None]),
            ("ä名前", &[Some("ünïcode".as_bytes())]),
            ("s", &[Some(&[0, 255, 0])]),
        ];
        for (name, params) in cases {
            for sync in [false, true] {
                let want = reference(name, params, sync).unwrap();
                assert_eq!(ours(name, params, sync).unwrap(), want, "{name} {params:?}");
            }
        }
    }

    #[test]
    fn tail_is_describe_execute_sync() {
        let mut b = BytesMut::new();
        frontend::describe(b'P', "", &mut b).unwrap();
        frontend::execute("", 0, &mut b).unwrap();
        frontend::sync(&mut b);
        assert_eq!(&BIND_TAIL[4..], &b[..]);
        assert_eq!(&BIND_TAIL[..4], &[0, 1, 0, 0]);
    }

    #[test]
    fn same_errors_as_postgres_protocol() {
        let nul = ours("a\0b", &[Some(b"1")], true);
        assert_eq!(nul, reference("a\0b", &[Some(b"1")], true));
        assert_eq!(nul.unwrap_err(), "string contains embedded null");

        // The parameter count is a 16-bit word: 65,535 parameters fit, one more not.
        let many = vec![None; 65_535];
        assert_eq!(ours("s", &many, false), reference("s", &many, false));
        assert!(ours("s", &many, false).is_ok());
        let too_many = vec![Some(&b""[..]); 65_536];
        let err = ours("s", &too_many, false);
        assert_eq!(err, reference("s", &too_many, false));
        assert_eq!(err.unwrap_err(), "value too large to transmit");
    }

    fn param() -> impl Strategy<Value = Option<Vec<u8>>> {
        prop_oneof![
            1 => Just(None),
            1 => Just(Some(Vec::new())),
            4 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Some),
        ]
    }

    proptest! {
        #[test]
        fn any_request_same_as_postgres_protocol(
            name in "[^\\x00]{0,20}",
            params in proptest::collection::vec(param(), 0..300),
            sync in any::<bool>(),
        ) {
            let params: Vec<Option<&[u8]>> = params.iter().map(|p| p.as_deref()).collect();
            prop_assert_eq!(ours(&name, &params, sync), reference(&name, &params, sync));
        }

        #[test]
        fn a_nul_in_the_name_same_error(
            before in "[^\\x00]{0,8}",
            after in "\\PC{0,8}",
            params in proptest::collection::vec(param(), 0..4),
        ) {
            let name = format!("{before}\0{after}");
            let params: Vec<Option<&[u8]>> = params.iter().map(|p| p.as_deref()).collect();
            let got = ours(&name, &params, true);
            prop_assert!(got.is_err());
            prop_assert_eq!(got, reference(&name, &params, true));
        }
    }
}
