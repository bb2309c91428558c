//! Query cancellation: a `CancelToken` opens a new connection to the same server
//! address and sends CancelRequest with the backend's key, as libpq's `PQcancel` does
//! (never over TLS, like libpq 15).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use bytes::BytesMut;
use postgres_protocol::message::frontend;

/// Where the connection went (the resolved address, so a cancel reaches the same server).
#[derive(Clone, Debug)]
pub(crate) enum CancelTarget {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// Cancels the query running on a connection; `Send + Sync`, usable from any thread.
#[derive(Clone, Debug)]
pub struct CancelToken {
    target: CancelTarget,
    pid: i32,
    key: i32,
}

impl CancelToken {
    pub(crate) fn new(target: CancelTarget, pid: i32, key: i32) -> CancelToken {
        CancelToken { target, pid, key }
    }

    /// Sends the cancel request and waits for the server to close that connection
    /// (which means the request was processed). As libpq's `PQcancel`, only failing to
    /// connect or to send is an error; how the server closes does not matter.
    pub fn cancel(&self) -> std::io::Result<()> {
        self.send(None)
    }

    /// [`CancelToken::cancel`] that gives up after about `timeout` at each step
    /// (connecting, sending, waiting for the close): a server that stopped answering
    /// or a lost network costs that, not the kernel's minutes of retries.
    pub fn cancel_within(&self, timeout: Duration) -> std::io::Result<()> {
        self.send(Some(timeout))
    }

    fn send(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        let mut msg = BytesMut::with_capacity(16);
        frontend::cancel_request(self.pid, self.key, &mut msg);
        match &self.target {
            CancelTarget::Tcp(addr) => {
                let s = match timeout {
                    Some(t) => TcpStream::connect_timeout(addr, t)?,
                    None => TcpStream::connect(addr)?,
                };
                s.set_read_timeout(timeout)?;
                s.set_write_timeout(timeout)?;
                send_and_wait(s, &msg)
            }
            CancelTarget::Unix(path) => {
                let s = UnixStream::connect(path)?;
                s.set_read_timeout(timeout)?;
                s.set_write_timeout(timeout)?;
                send_and_wait(s, &msg)
            }
        }
    }
}

/// Writes the request, then reads until the server closes (errors there ignored).
fn send_and_wait(mut s: impl Read + Write, msg: &[u8]) -> std::io::Result<()> {
    s.write_all(msg)?;
    let mut sink = [0u8; 64];
    while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    Ok(())
}
