//! What libpq asks the C library for that Rust's standard library does not offer:
//! the effective user's login name (default `user`) and home directory (for
//! `~/.pgpass`, `~/.pg_service.conf`, `~/.postgresql/`) and a peer's user name
//! (`requirepeer`), via `getpwuid_r` and `SO_PEERCRED`; `poll` on one socket;
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
        // SAFETY: `pfd` is a valid, exclusively borrowed pollfd array of length 1.
        let rc = unsafe { libc::poll(&mut pfd, 1, -1) };
        if rc >= 0 {
            return Ok(pfd.revents);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
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
