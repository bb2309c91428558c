//! What libpq asks the C library for that Rust's standard library does not offer:
//! the effective user's login name (default `user`) and home directory (for
//! `~/.pgpass`, `~/.pg_service.conf`, `~/.postgresql/`) and a peer's user name
//! (`requirepeer`), via `getpwuid_r` and `SO_PEERCRED`; `poll` on one socket, and
//! `recv` and `send` of a plain one, as direct system calls;
//! `inet_aton`; terminal echo for the password prompt; TCP keepalive and user-timeout
//! socket options; and the one OpenSSL call the `openssl` crate does not wrap, the
//! key-exchange groups of one TLS connection.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::path::PathBuf;

/// (login name, home directory) of user `uid` from the password database: `Ok(None)`
/// if it has no such user, `Err` with the error number if the look-up failed.
fn passwd_entry_of(uid: libc::uid_t) -> Result<Option<(String, PathBuf)>, i32> {
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: `pwd` and `buf` outlive the call, `buf.len()` is its true size, and the
    // returned pointers (into `buf`) are read only while `buf` is alive.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result);
        if rc != 0 {
            return Err(rc);
        }
        if result.is_null() || pwd.pw_name.is_null() {
            return Ok(None);
        }
        let name = CStr::from_ptr(pwd.pw_name).to_string_lossy().into_owned();
        let home = if pwd.pw_dir.is_null() {
            PathBuf::new()
        } else {
            PathBuf::from(CStr::from_ptr(pwd.pw_dir).to_string_lossy().into_owned())
        };
        Ok(Some((name, home)))
    }
}

/// (login name, home directory) of the effective user, if the password database knows it.
fn passwd_entry() -> Option<(String, PathBuf)> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    passwd_entry_of(unsafe { libc::geteuid() }).ok().flatten()
}

/// The login name of user `uid`: `Ok(None)` if there is no such user, `Err` with the
/// error number if the look-up failed.
pub(crate) fn user_name(uid: u32) -> Result<Option<String>, i32> {
    passwd_entry_of(uid).map(|e| e.map(|(name, _)| name))
}

/// The user id of the process at the other end of a Unix-domain socket
/// (`SO_PEERCRED`, what libpq's `getpeereid` reads on Linux).
pub(crate) fn peer_uid(fd: std::os::fd::RawFd) -> std::io::Result<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes and `len` is `cred`'s size.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(cred.uid)
}

/// The effective user's login name (libpq's `pg_fe_getauthname`).
pub fn os_user_name() -> Option<String> {
    passwd_entry().map(|(name, _)| name)
}

/// The home directory: `$HOME` if set and non-empty, else the password database's.
pub(crate) fn home_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    match env("HOME") {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => passwd_entry().map(|(_, home)| home),
    }
}

/// Waits until `fd` is readable or writable; returns (readable, writable). Errors and
/// hang-ups count as readable, so the caller's read reports them.
pub(crate) fn wait_read_or_write(fd: std::os::fd::RawFd) -> std::io::Result<(bool, bool)> {
    let r = poll_one(fd, libc::POLLIN | libc::POLLOUT)?;
    let readable = r & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0;
    Ok((readable, r & libc::POLLOUT != 0))
}

/// Waits until `fd` is readable (or has an error or hang-up, which the read reports).
pub(crate) fn wait_readable(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    poll_one(fd, libc::POLLIN).map(|_| ())
}

/// `poll` on one descriptor without a timeout; its `revents`.
fn poll_one(fd: std::os::fd::RawFd, events: libc::c_short) -> std::io::Result<libc::c_short> {
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    loop {
        // `poll(&pfd, 1, -1)` made directly (see `recv` below): `ppoll` without a timeout
        // or signal mask is the same wait, and what the C library's `poll` makes
        // where there is no `poll` system call.
        // SAFETY: `pfd` is a valid, exclusively borrowed pollfd array of length 1; the
        // null timeout and signal mask are read as none (8 is the kernel's mask size,
        // which the C library passes, unused without a mask).
        let rc = unsafe {
            libc::syscall(
                libc::SYS_ppoll,
                &mut pfd as *mut libc::pollfd,
                1 as libc::c_long,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<libc::sigset_t>(),
                8 as libc::c_long,
            )
        };
        if rc >= 0 {
            return Ok(pfd.revents);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

// ----- the hot path's system calls on a plain socket -----
//
// glibc's `recv`, `send` and `poll` are thread cancellation points: each call
// enables and disables asynchronous cancellation around the system call, tens of
// instructions a time, three calls per request. Nothing here uses thread
// cancellation, so the same system calls are made directly. The kernel's
// answer is the same; -1 with `errno` set becomes the same `io::Error`, and EINTR
// and EAGAIN come back to the caller as the standard library's calls return them.
// Arguments are passed as the `long`s `syscall` reads.

/// `recv(fd, buf, len, 0)` as the standard library's `read` of a socket makes it.
#[inline]
pub(crate) fn recv(fd: std::os::fd::RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the call, and the
    // null address and address length ask for no sender address (recv's recvfrom).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            fd as libc::c_long,
            buf.as_mut_ptr(),
            buf.len(),
            0 as libc::c_long,
            std::ptr::null_mut::<libc::sockaddr>(),
            std::ptr::null_mut::<libc::socklen_t>(),
        )
    };
    transferred(rc)
}

/// `send(fd, buf, len, flags)` (the standard library's `write` of a socket is `send`
/// with MSG_NOSIGNAL). At most `isize::MAX` bytes, as the standard library clamps.
#[inline]
pub(crate) fn send(
    fd: std::os::fd::RawFd,
    buf: &[u8],
    flags: libc::c_int,
) -> std::io::Result<usize> {
    let len = buf.len().min(isize::MAX as usize);
    // SAFETY: `buf` is valid for reads of `len` bytes for the call; no destination
    // address (send's sendto).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sendto,
            fd as libc::c_long,
            buf.as_ptr(),
            len,
            flags as libc::c_long,
            std::ptr::null::<libc::sockaddr>(),
            0 as libc::c_long,
        )
    };
    transferred(rc)
}

/// A `recvfrom` or `sendto` system call's return: the bytes moved, or the error
/// `errno` holds.
#[inline]
fn transferred(rc: libc::c_long) -> std::io::Result<usize> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}

extern "C" {
    // In the C library, not bound by the libc crate.
    fn inet_aton(cp: *const libc::c_char, inp: *mut libc::in_addr) -> libc::c_int;
}

/// `inet_aton`: the IPv4 address `host` spells in any of its classic forms
/// (`127.1` too), in network byte order.
pub(crate) fn ipv4_address(host: &std::ffi::CStr) -> Option<[u8; 4]> {
    let mut addr = libc::in_addr { s_addr: 0 };
    // SAFETY: `host` is NUL-terminated and `addr` is a valid, exclusively borrowed
    // in_addr for the call.
    let ok = unsafe { inet_aton(host.as_ptr(), &mut addr) } != 0;
    ok.then(|| addr.s_addr.to_ne_bytes())
}

/// Turns off echo on terminal `fd`; the settings to restore, or `None` if `fd` is
/// not a terminal.
pub(crate) fn echo_off(fd: std::os::fd::RawFd) -> Option<libc::termios> {
    // SAFETY: an all-zero termios is a valid value to be overwritten by tcgetattr.
    let mut term: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `term` is a valid, exclusively borrowed termios.
    if unsafe { libc::tcgetattr(fd, &mut term) } != 0 {
        return None;
    }
    let saved = term;
    term.c_lflag &= !libc::ECHO;
    // SAFETY: `term` holds settings read from this terminal.
    unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &term) };
    Some(saved)
}

/// Restores terminal settings saved by `echo_off`.
pub(crate) fn restore_terminal(fd: std::os::fd::RawFd, saved: &libc::termios) {
    // SAFETY: `saved` holds settings read from this terminal.
    unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, saved) };
}

/// `setsockopt(fd, level, name, &value)` for an `int` option.
pub(crate) fn set_int_option(
    fd: std::os::fd::RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> std::io::Result<()> {
    // SAFETY: the option value is an int that outlives the call, and its size is given.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `getsockopt` of an `int` option (tests check what was set).
#[cfg(test)]
pub(crate) fn int_option(fd: std::os::fd::RawFd, level: libc::c_int, name: libc::c_int) -> i32 {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: value and len are ours and sized for an int.
    unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        );
    }
    value
}

/// Sets the key-exchange groups one TLS connection offers, most preferred first
/// (`SSL_set1_groups_list`; the first gets the TLS 1.3 key share); false if OpenSSL
/// refused the list.
pub(crate) fn set_tls_groups(ssl: &mut openssl::ssl::SslRef, groups: &CStr) -> bool {
    use foreign_types::ForeignTypeRef;
    // SAFETY: `ssl` is a live SSL owned by the caller, `groups` is NUL-terminated and
    // outlives the call, and OpenSSL copies the list.
    let rc = unsafe { openssl_sys::SSL_set1_groups_list(ssl.as_ptr(), groups.as_ptr()) };
    rc == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{ErrorKind, Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    /// What an I/O result is, to compare ours with the standard library's: the byte
    /// count, or the error's kind and number.
    fn outcome(r: std::io::Result<usize>) -> Result<usize, (ErrorKind, Option<i32>)> {
        r.map_err(|e| (e.kind(), e.raw_os_error()))
    }

    fn pair() -> (UnixStream, UnixStream) {
        UnixStream::pair().unwrap()
    }

    #[test]
    fn recv_and_send_move_the_bytes() {
        let (a, mut b) = pair();
        assert_eq!(
            send(a.as_raw_fd(), b"hello", libc::MSG_NOSIGNAL).unwrap(),
            5
        );
        let mut got = [0; 16];
        assert_eq!(b.read(&mut got).unwrap(), 5);
        assert_eq!(&got[..5], b"hello");

        b.write_all(b"world!").unwrap();
        let mut got = [0; 4];
        // A short buffer takes what fits; the rest stays for the next read.
        assert_eq!(recv(a.as_raw_fd(), &mut got).unwrap(), 4);
        assert_eq!(&got, b"worl");
        assert_eq!(recv(a.as_raw_fd(), &mut got).unwrap(), 2);
        assert_eq!(&got[..2], b"d!");
    }

    #[test]
    fn recv_errors_and_end_of_stream_as_the_standard_library() {
        // Nothing there on a non-blocking socket: EAGAIN, WouldBlock.
        let (a, _b) = pair();
        let (mut c, _d) = pair();
        a.set_nonblocking(true).unwrap();
        c.set_nonblocking(true).unwrap();
        let mut buf = [0; 8];
        let ours = outcome(recv(a.as_raw_fd(), &mut buf));
        assert_eq!(ours, Err((ErrorKind::WouldBlock, Some(libc::EAGAIN))));
        assert_eq!(ours, outcome(c.read(&mut buf)));

        // The peer gone: end of stream.
        let (a, b) = pair();
        drop(b);
        let (mut c, d) = pair();
        drop(d);
        assert_eq!(outcome(recv(a.as_raw_fd(), &mut buf)), Ok(0));
        assert_eq!(outcome(c.read(&mut buf)), Ok(0));

        // Not a socket at all: ENOTSOCK, as `recv` says.
        let file = tempfile::tempfile().unwrap();
        let ours = outcome(recv(file.as_raw_fd(), &mut buf));
        assert_eq!(ours.unwrap_err().1, Some(libc::ENOTSOCK));
    }

    #[test]
    fn send_errors_as_the_standard_library() {
        // The peer gone: EPIPE and no SIGPIPE (the test process would die of it).
        let (a, b) = pair();
        drop(b);
        let (mut c, d) = pair();
        drop(d);
        let ours = outcome(send(a.as_raw_fd(), b"x", libc::MSG_NOSIGNAL));
        assert_eq!(ours, Err((ErrorKind::BrokenPipe, Some(libc::EPIPE))));
        assert_eq!(ours, outcome(c.write(b"x")));

        // A full non-blocking socket: EAGAIN, after taking what fit.
        let (a, _b) = pair();
        a.set_nonblocking(true).unwrap();
        let chunk = [7u8; 65536];
        let mut sent = 0;
        let blocked = loop {
            match send(a.as_raw_fd(), &chunk, libc::MSG_NOSIGNAL) {
                Ok(n) => sent += n,
                Err(e) => break e,
            }
        };
        assert!(sent > 0);
        assert_eq!(blocked.kind(), ErrorKind::WouldBlock);
        assert_eq!(blocked.raw_os_error(), Some(libc::EAGAIN));
    }

    #[test]
    fn poll_waits_for_what_was_asked() {
        let (a, mut b) = pair();
        // Writable at once, not readable.
        assert_eq!(wait_read_or_write(a.as_raw_fd()).unwrap(), (false, true));
        b.write_all(b"x").unwrap();
        assert_eq!(wait_read_or_write(a.as_raw_fd()).unwrap(), (true, true));
        wait_readable(a.as_raw_fd()).unwrap();
        // A hang-up counts as readable.
        let (c, d) = pair();
        drop(d);
        wait_readable(c.as_raw_fd()).unwrap();
        assert!(wait_read_or_write(c.as_raw_fd()).unwrap().0);
        // It waits: a byte written later wakes it.
        let (e, mut f) = pair();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            f.write_all(b"y").unwrap();
            f
        });
        wait_readable(e.as_raw_fd()).unwrap();
        let mut got = [0; 1];
        assert_eq!(recv(e.as_raw_fd(), &mut got).unwrap(), 1);
        drop(writer.join().unwrap());
        // A descriptor not open (none is this high): POLLNVAL, as `poll` says.
        assert_eq!(poll_one(1_000_000, libc::POLLIN).unwrap(), libc::POLLNVAL);
    }
}
