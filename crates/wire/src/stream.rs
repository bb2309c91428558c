//! The byte stream under a connection: a TCP socket, a Unix-domain socket, or TLS over
//! TCP. Blocking I/O; dispatch is a `match`, cheap enough for the hot path.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// A connected transport.
pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    pub fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Stream::Unix(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Stream::Tls(s) => {
                s.sock.set_read_timeout(t)?;
                s.sock.set_write_timeout(t)
            }
        }
    }

    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tls(s) => s.sock.set_nonblocking(on),
        }
    }

    /// Non-blocking write (socket in non-blocking mode): bytes taken, 0 if blocked.
    pub fn try_write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => {
                let n = s.conn.writer().write(buf)?;
                drain_tls(s)?;
                Ok(n)
            }
        };
        match r {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            other => other,
        }
    }

    /// Non-blocking: sends pending TLS records; true once nothing is pending.
    pub fn try_flush(&mut self) -> io::Result<bool> {
        match self {
            Stream::Tcp(_) | Stream::Unix(_) => Ok(true),
            Stream::Tls(s) => {
                drain_tls(s)?;
                Ok(!s.conn.wants_write())
            }
        }
    }

    /// Non-blocking read: `None` if nothing is available, `Some(0)` at end of stream.
    pub fn try_read(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let r = match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => loop {
                match s.conn.reader().read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break Ok(0),
                    other => break other,
                }
                match s.conn.read_tls(&mut s.sock) {
                    Ok(0) => break Ok(0),
                    Ok(_) => {
                        s.conn
                            .process_new_packets()
                            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                    }
                    Err(e) => break Err(e),
                }
            },
        };
        match r {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            other => other.map(Some),
        }
    }

    /// The server's end-entity certificate, when on TLS.
    pub fn peer_certificate(&self) -> Option<Vec<u8>> {
        match self {
            Stream::Tls(s) => s
                .conn
                .peer_certificates()
                .and_then(|c| c.first())
                .map(|c| c.as_ref().to_vec()),
            _ => None,
        }
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }
}

/// Writes TLS records until done or the socket would block.
fn drain_tls(s: &mut rustls::StreamOwned<rustls::ClientConnection, TcpStream>) -> io::Result<()> {
    while s.conn.wants_write() {
        match s.conn.write_tls(&mut s.sock) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Read for Stream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => match s.read(buf) {
                // A peer that closes without close_notify is a lost connection too.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
                other => other,
            },
        }
    }
}

impl Write for Stream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(_) | Stream::Unix(_) => Ok(()),
            Stream::Tls(s) => s.flush(),
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.sock.as_raw_fd(),
        }
    }
}
