//! The byte stream under a connection: a TCP socket, a Unix-domain socket, or TLS over
//! TCP. Blocking I/O; dispatch is a `match`, cheap enough for the hot path. A plain
//! socket is read and written with the system calls the standard library makes, made
//! directly (`sys::recv`, `sys::send`): the C library's wrappers cost more than the
//! rest of a read.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// A connected transport.
pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<crate::tls::TlsStream>),
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
                s.get_ref().set_read_timeout(t)?;
                s.get_ref().set_write_timeout(t)
            }
        }
    }

    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tls(s) => s.get_ref().set_nonblocking(on),
        }
    }

    /// Non-blocking write (socket in non-blocking mode): bytes taken, 0 if blocked.
    pub fn try_write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // OpenSSL writes its records straight to the socket; a blocked write is
        // retried with the same bytes, as SSL_write requires.
        match self.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            other => other,
        }
    }

    /// Non-blocking: sends pending TLS records; true once nothing is pending (OpenSSL
    /// keeps none: a write either went to the socket or is retried).
    pub fn try_flush(&mut self) -> io::Result<bool> {
        Ok(true)
    }

    /// Non-blocking read: `None` if nothing is available, `Some(0)` at end of stream.
    pub fn try_read(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match self.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            other => other.map(Some),
        }
    }

    /// The server's certificate, when on TLS.
    pub fn peer_certificate(&self) -> Option<openssl::x509::X509> {
        match self {
            Stream::Tls(s) => s.ssl().peer_certificate(),
            _ => None,
        }
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }
}

impl Read for Stream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            // What the standard library's `read` of either socket is: `recv`, no flags.
            Stream::Tcp(s) => crate::sys::recv(s.as_raw_fd(), buf),
            Stream::Unix(s) => crate::sys::recv(s.as_raw_fd(), buf),
            // OpenSSL reads a peer that closes without close_notify as end of stream.
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            // What the standard library's `write` of either socket is on Linux: `send`
            // with MSG_NOSIGNAL (a closed peer is EPIPE, not a signal).
            Stream::Tcp(s) => crate::sys::send(s.as_raw_fd(), buf, libc::MSG_NOSIGNAL),
            Stream::Unix(s) => crate::sys::send(s.as_raw_fd(), buf, libc::MSG_NOSIGNAL),
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
            Stream::Tls(s) => s.get_ref().as_raw_fd(),
        }
    }
}
