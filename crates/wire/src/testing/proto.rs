//! The fake server's side of the v3 protocol: the client's messages decoded, the
//! server's encoded (the framing the connection itself gets from postgres-protocol,
//! which has no server side).

/// A startup-phase packet.
pub(super) enum Startup {
    /// SSLRequest or GSSENCRequest: answered `N`.
    EncryptionRequest,
    /// CancelRequest.
    Cancel,
    /// StartupMessage (its parameters are not looked at).
    Params,
}

const SSL_REQUEST: u32 = 80_877_103;
const GSSENC_REQUEST: u32 = 80_877_104;
const CANCEL_REQUEST: u32 = 80_877_102;
const PROTOCOL_3: u32 = 196_608;

pub(super) fn startup(body: &[u8]) -> Option<Startup> {
    let code = u32::from_be_bytes(body.get(..4)?.try_into().ok()?);
    match code {
        SSL_REQUEST | GSSENC_REQUEST => Some(Startup::EncryptionRequest),
        CANCEL_REQUEST => Some(Startup::Cancel),
        PROTOCOL_3 => Some(Startup::Params),
        _ => None,
    }
}

/// A message from the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frontend {
    Query(String),
    Parse {
        name: String,
        sql: String,
    },
    Bind {
        portal: String,
        statement: String,
        params: Vec<Option<String>>,
    },
    Describe {
        portal: bool,
        name: String,
    },
    Execute,
    Sync,
    Flush,
    Close,
    Terminate,
    /// Any other message, by its tag.
    Other(u8),
}

/// Reads NUL-terminated strings and big-endian integers off a message body.
struct Body<'a>(&'a [u8]);

impl Body<'_> {
    fn cstr(&mut self) -> Option<String> {
        let end = self.0.iter().position(|&b| b == 0)?;
        let s = String::from_utf8_lossy(&self.0[..end]).into_owned();
        self.0 = &self.0[end + 1..];
        Some(s)
    }

    fn bytes(&mut self, n: usize) -> Option<&[u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    fn i16(&mut self) -> Option<i16> {
        Some(i16::from_be_bytes(self.bytes(2)?.try_into().ok()?))
    }

    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.bytes(4)?.try_into().ok()?))
    }
}

pub(super) fn frontend(tag: u8, body: &[u8]) -> Option<Frontend> {
    let mut b = Body(body);
    Some(match tag {
        b'Q' => Frontend::Query(b.cstr()?),
        b'P' => Frontend::Parse {
            name: b.cstr()?,
            sql: b.cstr()?,
        },
        b'B' => {
            let portal = b.cstr()?;
            let statement = b.cstr()?;
            let formats = b.i16()?;
            b.bytes(2 * formats.max(0) as usize)?;
            let n = b.i16()?;
            let mut params = Vec::with_capacity(n.max(0) as usize);
            for _ in 0..n {
                let len = b.i32()?;
                params.push(if len < 0 {
                    None
                } else {
                    Some(String::from_utf8_lossy(b.bytes(len as usize)?).into_owned())
                });
            }
            Frontend::Bind {
                portal,
                statement,
                params,
            }
        }
        b'D' => Frontend::Describe {
            portal: b.bytes(1)? == b"P",
            name: b.cstr()?,
        },
        b'E' => Frontend::Execute,
        b'S' => Frontend::Sync,
        b'H' => Frontend::Flush,
        b'C' => Frontend::Close,
        b'X' => Frontend::Terminate,
        other => Frontend::Other(other),
    })
}

/// Appends one message: tag, length, body.
fn message(out: &mut Vec<u8>, tag: u8, body: impl FnOnce(&mut Vec<u8>)) {
    out.push(tag);
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    body(out);
    let len = (out.len() - at) as u32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// A message of its tag alone: ParseComplete `1`, BindComplete `2`, CloseComplete
/// `3`, NoData `n`, EmptyQueryResponse `I`.
pub(super) fn tag_only(out: &mut Vec<u8>, tag: u8) {
    message(out, tag, |_| {});
}

pub(super) fn authentication_ok(out: &mut Vec<u8>) {
    message(out, b'R', |b| b.extend_from_slice(&0i32.to_be_bytes()));
}

pub(super) fn parameter_status(out: &mut Vec<u8>, name: &str, value: &str) {
    message(out, b'S', |b| {
        cstr(b, name);
        cstr(b, value);
    });
}

pub(super) fn backend_key_data(out: &mut Vec<u8>, pid: i32, key: i32) {
    message(out, b'K', |b| {
        b.extend_from_slice(&pid.to_be_bytes());
        b.extend_from_slice(&key.to_be_bytes());
    });
}

pub(super) fn ready_for_query(out: &mut Vec<u8>, status: u8) {
    message(out, b'Z', |b| b.push(status));
}

pub(super) fn command_complete(out: &mut Vec<u8>, tag: &str) {
    message(out, b'C', |b| cstr(b, tag));
}

/// RowDescription: text columns of type `text` (OID 25).
pub(super) fn row_description(out: &mut Vec<u8>, columns: &[String]) {
    message(out, b'T', |b| {
        b.extend_from_slice(&(columns.len() as i16).to_be_bytes());
        for name in columns {
            cstr(b, name);
            b.extend_from_slice(&0i32.to_be_bytes()); // table
            b.extend_from_slice(&0i16.to_be_bytes()); // column
            b.extend_from_slice(&25i32.to_be_bytes()); // type
            b.extend_from_slice(&(-1i16).to_be_bytes()); // size
            b.extend_from_slice(&(-1i32).to_be_bytes()); // modifier
            b.extend_from_slice(&0i16.to_be_bytes()); // text format
        }
    });
}

pub(super) fn data_row(out: &mut Vec<u8>, values: &[Option<String>]) {
    message(out, b'D', |b| {
        b.extend_from_slice(&(values.len() as i16).to_be_bytes());
        for v in values {
            match v {
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(v) => {
                    b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    b.extend_from_slice(v.as_bytes());
                }
            }
        }
    });
}

/// ParameterDescription with no parameters.
pub(super) fn parameter_description(out: &mut Vec<u8>) {
    message(out, b't', |b| b.extend_from_slice(&0i16.to_be_bytes()));
}

/// CopyInResponse, text format, no columns.
pub(super) fn copy_in_response(out: &mut Vec<u8>) {
    message(out, b'G', |b| {
        b.push(0);
        b.extend_from_slice(&0i16.to_be_bytes());
    });
}

/// ErrorResponse (or a FATAL one) with the fields a client shows.
pub(super) fn error(out: &mut Vec<u8>, severity: &str, code: &str, text: &str) {
    message(out, b'E', |b| {
        for (field, value) in [
            (b'S', severity),
            (b'V', severity),
            (b'C', code),
            (b'M', text),
        ] {
            b.push(field);
            cstr(b, value);
        }
        b.push(0);
    });
}
