//! Connection establishment with libpq's semantics: hosts and addresses tried in order
//! (or shuffled with `load_balance_hosts=random`), per-attempt error lines accumulated in
//! libpq's words, `sslmode` negotiation and its retries, the startup message,
//! authentication (trust, cleartext, md5, SCRAM-SHA-256 with channel binding), and the
//! `target_session_attrs` check.

use std::hash::{BuildHasher, RandomState};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use postgres_protocol::message::frontend;

use crate::attempt::{arm, is_timeout, timed_out, Failure, Next};
use crate::cancel::CancelTarget;
use crate::conn::{Connection, Io, QueryError};
use crate::error::{strerror, ConnError};
use crate::options::{parse_int, ConnectOptions, HostEntry, HostKind, TargetSessionAttrs};
use crate::stream::Stream;
use crate::tls;
use crate::tls::SslMode;

#[derive(Clone)]
enum Addr {
    Tcp(SocketAddr),
    Unix(String),
}

fn shuffle<T>(v: &mut [T]) {
    let seed = RandomState::new();
    for i in (1..v.len()).rev() {
        let j = (seed.hash_one(i) % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

impl Connection {
    /// Connects like libpq's `PQconnectdbParams`, trying each host in turn.
    pub fn connect(opts: &ConnectOptions) -> Result<Connection, ConnError> {
        let mut log = String::new();
        let mut needs_password = false;
        let timeout = match opts.connect_timeout() {
            Ok(t) => t,
            Err(msg) => {
                let first = &opts.hosts[0];
                return Err(ConnError::Connect {
                    message: format!("{}{msg}", identity_without_address(first)),
                    needs_password: false,
                });
            }
        };
        let mut order: Vec<usize> = (0..opts.hosts.len()).collect();
        if opts.load_balance {
            shuffle(&mut order);
        }
        let passes: &[TargetSessionAttrs] = match opts.target {
            TargetSessionAttrs::PreferStandby => {
                &[TargetSessionAttrs::Standby, TargetSessionAttrs::Any]
            }
            ref t => std::slice::from_ref(t),
        };
        'passes: for &want in passes {
            for &i in &order {
                let host = &opts.hosts[i];
                let port = if host.port.is_empty() {
                    5432
                } else {
                    match parse_int(&host.port) {
                        None => {
                            return Err(ConnError::Options(format!(
                                "invalid integer value \"{}\" for connection option \"port\"",
                                host.port
                            )))
                        }
                        Some(p) if !(1..=65535).contains(&p) => {
                            log.push_str(&format!("invalid port number: \"{}\"\n", host.port));
                            continue;
                        }
                        Some(p) => p as u16,
                    }
                };
                let mut addrs = match resolve(host, port) {
                    Ok(a) => a,
                    Err(text) => {
                        log.push_str(&text);
                        log.push('\n');
                        continue;
                    }
                };
                if opts.load_balance {
                    shuffle(&mut addrs);
                }
                for addr in addrs {
                    match attempt(opts, host, &addr, want, timeout, &mut log) {
                        Ok(conn) => return Ok(conn),
                        Err(f) => {
                            needs_password |= f.needs_password;
                            match f.next {
                                Next::Stop => break 'passes,
                                Next::SkipHost => break,
                                Next::OtherHost | Next::RetrySsl => {}
                            }
                        }
                    }
                }
            }
        }
        let message = log.strip_suffix('\n').unwrap_or(&log).to_string();
        Err(ConnError::Connect {
            message,
            needs_password,
        })
    }
}

fn identity_without_address(h: &HostEntry) -> String {
    match h.kind {
        HostKind::UnixSocket => {
            let port = if h.port.is_empty() { "5432" } else { &h.port };
            format!(
                "connection to server on socket \"{}/.s.PGSQL.{port}\" failed: ",
                h.host
            )
        }
        _ => {
            let shown = match (&h.kind, &h.hostaddr) {
                (HostKind::Address, Some(a)) => a.as_str(),
                _ => h.host.as_str(),
            };
            let port = if h.port.is_empty() { "5432" } else { &h.port };
            format!("connection to server at \"{shown}\", port {port} failed: ")
        }
    }
}

/// libpq's `emitHostIdentityInfo`.
fn identity(h: &HostEntry, addr: &Addr) -> String {
    match addr {
        Addr::Unix(path) => format!("connection to server on socket \"{path}\" failed: "),
        Addr::Tcp(sa) => {
            let port = if h.port.is_empty() { "5432" } else { &h.port };
            let ip = sa.ip().to_string();
            match (&h.kind, &h.hostaddr) {
                (HostKind::Address, Some(a)) => {
                    format!("connection to server at \"{a}\", port {port} failed: ")
                }
                _ if h.host != ip => format!(
                    "connection to server at \"{}\" ({ip}), port {port} failed: ",
                    h.host
                ),
                _ => format!(
                    "connection to server at \"{}\", port {port} failed: ",
                    h.host
                ),
            }
        }
    }
}

fn resolve(h: &HostEntry, port: u16) -> Result<Vec<Addr>, String> {
    match h.kind {
        HostKind::UnixSocket => Ok(vec![Addr::Unix(format!("{}/.s.PGSQL.{port}", h.host))]),
        HostKind::Address => {
            let a = h.hostaddr.as_deref().unwrap_or("");
            match a.parse::<IpAddr>() {
                Ok(ip) => Ok(vec![Addr::Tcp(SocketAddr::new(ip, port))]),
                Err(_) => Err(format!(
                    "could not parse network address \"{a}\": Name or service not known"
                )),
            }
        }
        HostKind::Name => match (h.host.as_str(), port).to_socket_addrs() {
            Ok(it) => Ok(it.map(Addr::Tcp).collect()),
            Err(e) => {
                let text = strerror(&e);
                let text = text
                    .strip_prefix("failed to lookup address information: ")
                    .unwrap_or(&text)
                    .to_string();
                Err(format!(
                    "could not translate host name \"{}\" to address: {text}",
                    h.host
                ))
            }
        },
    }
}

/// One address, with libpq's TLS fallbacks; appends to `log` on failure.
fn attempt(
    opts: &ConnectOptions,
    host: &HostEntry,
    addr: &Addr,
    want: TargetSessionAttrs,
    timeout: Option<Duration>,
    log: &mut String,
) -> Result<Connection, Failure> {
    let plan: &[bool] = match (addr, opts.tls.sslmode) {
        (Addr::Unix(_), _) | (_, SslMode::Disable) => &[false],
        (_, SslMode::Allow) => &[false, true],
        (_, SslMode::Prefer) => &[true, false],
        _ => &[true],
    };
    let mut last = Failure::new("", Next::Stop);
    // libpq restarts the connect_timeout clock per address, not per SSL retry.
    let deadline = timeout.map(|t| Instant::now() + t);
    for &use_ssl in plan {
        log.push_str(&identity(host, addr));
        match attempt_once(opts, host, addr, use_ssl, deadline) {
            Ok(conn) => {
                return established(conn, host, want, deadline).inspect_err(|f| {
                    log.push_str(&f.text);
                    log.push('\n');
                })
            }
            Err(f) => {
                log.push_str(&f.text);
                log.push('\n');
                let retry = matches!(f.next, Next::RetrySsl);
                last = f;
                if !retry {
                    break;
                }
            }
        }
    }
    if matches!(last.next, Next::RetrySsl) {
        last.next = Next::Stop;
    }
    Err(last)
}

fn io_failure(e: std::io::Error, unix: bool) -> Failure {
    let hint = if unix {
        "\tIs the server running locally and accepting connections on that socket?"
    } else {
        "\tIs the server running on that host and accepting TCP/IP connections?"
    };
    let text = if is_timeout(&e) {
        "timeout expired".to_string()
    } else {
        format!("{}\n{hint}", strerror(&e))
    };
    Failure::new(text, Next::OtherHost)
}

fn attempt_once(
    opts: &ConnectOptions,
    host: &HostEntry,
    addr: &Addr,
    use_ssl: bool,
    deadline: Option<Instant>,
) -> Result<Connection, Failure> {
    let (stream, target) = match addr {
        Addr::Unix(path) => {
            let s = UnixStream::connect(path).map_err(|e| io_failure(e, true))?;
            if let Some(user) = opts.value("requirepeer") {
                check_peer(&s, user)?;
            }
            (Stream::Unix(s), CancelTarget::Unix(path.into()))
        }
        Addr::Tcp(sa) => {
            let s = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(timed_out());
                    }
                    TcpStream::connect_timeout(sa, left)
                }
                None => TcpStream::connect(sa),
            }
            .map_err(|e| io_failure(e, false))?;
            let _ = s.set_nodelay(true);
            // libpq: a socket option it cannot set fails this address; the next is tried.
            tcp_options(&s, opts).map_err(|text| Failure::new(text, Next::OtherHost))?;
            (Stream::Tcp(s), CancelTarget::Tcp(*sa))
        }
    };
    arm(&stream, deadline)?;
    let stream = match stream {
        Stream::Tcp(tcp) if use_ssl => negotiate_tls(opts, host, tcp, deadline)?,
        other => other,
    };
    let mut conn = Connection::new(stream, target);
    crate::auth::startup(&mut conn, opts, host, deadline).map_err(|mut f| {
        // prefer: a TLS connection the server rejected is retried without TLS;
        // allow: a plain one is retried with TLS. What counts is whether TLS is in
        // use, not whether it was asked for: a server that refused TLS under prefer
        // has already had its plain attempt.
        if matches!(f.next, Next::Stop) && f.is_retried_rejection(opts, conn.stream.is_tls()) {
            f.next = Next::RetrySsl;
        }
        f
    })?;
    Ok(conn)
}

/// After start-up: libpq's target_session_attrs check, still under the attempt's
/// deadline, then the connection as the caller gets it (no timeouts, host and port).
fn established(
    mut conn: Connection,
    host: &HostEntry,
    want: TargetSessionAttrs,
    deadline: Option<Instant>,
) -> Result<Connection, Failure> {
    arm(&conn.stream, deadline)?;
    check_target(&mut conn, want)?;
    conn.stream
        .set_timeouts(None)
        .map_err(|e| Failure::new(strerror(&e), Next::Stop))?;
    // Not before: the attempt's reads end at connect_timeout (the socket's read
    // timeout), which a poll would not see. Not over TLS: OpenSSL may hold decrypted
    // bytes the socket no longer shows.
    conn.io = Io::Blocking {
        poll_first: !conn.stream.is_tls(),
    };
    conn.host = host.reported_name().to_string();
    conn.port = if host.port.is_empty() {
        "5432".into()
    } else {
        host.port.clone()
    };
    Ok(conn)
}

/// `requirepeer`: the server process at the other end of the socket must run as
/// `user` (libpq checks before sending anything, and a mismatch ends the attempt).
fn check_peer(s: &UnixStream, user: &str) -> Result<(), Failure> {
    use std::os::fd::AsRawFd;
    let uid = crate::sys::peer_uid(s.as_raw_fd()).map_err(|e| {
        Failure::new(
            format!("could not get peer credentials: {}", strerror(&e)),
            Next::Stop,
        )
    })?;
    let name = match crate::sys::user_name(uid) {
        Ok(Some(name)) => name,
        Ok(None) => {
            return Err(Failure::new(
                format!("local user with ID {uid} does not exist"),
                Next::Stop,
            ))
        }
        Err(errno) => {
            let e = std::io::Error::from_raw_os_error(errno);
            return Err(Failure::new(
                format!("could not look up local user ID {uid}: {}", strerror(&e)),
                Next::Stop,
            ));
        }
    };
    if name != user {
        return Err(Failure::new(
            format!("requirepeer specifies \"{user}\", but actual peer user name is \"{name}\""),
            Next::Stop,
        ));
    }
    Ok(())
}

impl Failure {
    fn is_retried_rejection(&self, opts: &ConnectOptions, tls_in_use: bool) -> bool {
        self.rejected_before_auth
            && ((opts.tls.sslmode == SslMode::Prefer && tls_in_use)
                || (opts.tls.sslmode == SslMode::Allow && !tls_in_use))
    }
}

fn negotiate_tls(
    opts: &ConnectOptions,
    host: &HostEntry,
    mut tcp: TcpStream,
    deadline: Option<Instant>,
) -> Result<Stream, Failure> {
    let mut req = bytes::BytesMut::with_capacity(8);
    frontend::ssl_request(&mut req);
    let lost = |e: std::io::Error| {
        if is_timeout(&e) {
            return timed_out();
        }
        Failure::new(format!("SSL SYSCALL error: {}", strerror(&e)), Next::Stop)
    };
    tcp.write_all(&req).map_err(lost)?;
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer).map_err(lost)?;
    let may_fall_back = opts.tls.sslmode == SslMode::Prefer;
    match answer[0] {
        b'S' => {}
        b'N' if may_fall_back || opts.tls.sslmode == SslMode::Allow => return Ok(Stream::Tcp(tcp)),
        b'N' => {
            return Err(Failure::new(
                "server does not support SSL, but SSL was required",
                Next::Stop,
            ))
        }
        other => {
            return Err(Failure::new(
                format!(
                    "received invalid response to SSL negotiation: {}",
                    other as char
                ),
                Next::Stop,
            ))
        }
    }
    // prefer: any TLS failure (set-up, handshake, host name) is retried without TLS.
    let next = if may_fall_back {
        Next::RetrySsl
    } else {
        Next::Stop
    };
    match tls::open(
        &opts.tls,
        &opts.tls_cache,
        host.reported_name(),
        tcp,
        deadline,
    ) {
        Ok(s) => Ok(Stream::Tls(Box::new(s))),
        Err(tls::TlsFailure::TimedOut) => Err(timed_out()),
        Err(tls::TlsFailure::Refused(text)) => Err(Failure::new(text, next)),
    }
}

fn not_target(reason: &str) -> Failure {
    Failure::new(reason, Next::SkipHost)
}

/// libpq's CONNECTION_CHECK_TARGET: Err when this server does not qualify (the next
/// host is tried) or the check ran out of time (the next address).
fn check_target(conn: &mut Connection, want: TargetSessionAttrs) -> Result<(), Failure> {
    let flag = |conn: &mut Connection, param: &str, sql: &str| -> Result<bool, Failure> {
        if let Some(v) = conn.parameter(param) {
            return Ok(v == "on");
        }
        let rows = conn.query_rows(sql).map_err(|e| match e {
            QueryError::Conn(ConnError::Receive(io)) if is_timeout(&io) => timed_out(),
            e => Failure::new(e.to_string(), Next::SkipHost),
        })?;
        Ok(matches!(rows.first().and_then(|r| r.first()), Some(Some(v)) if v == "on" || v == "t"))
    };
    match want {
        TargetSessionAttrs::Any | TargetSessionAttrs::PreferStandby => Ok(()),
        TargetSessionAttrs::ReadWrite | TargetSessionAttrs::ReadOnly => {
            let read_only = if conn.parameter("default_transaction_read_only").is_some()
                && conn.parameter("in_hot_standby").is_some()
            {
                conn.parameter("default_transaction_read_only") == Some("on")
                    || conn.parameter("in_hot_standby") == Some("on")
            } else {
                flag(conn, "__none__", "SHOW transaction_read_only")?
            };
            match (want, read_only) {
                (TargetSessionAttrs::ReadWrite, true) => Err(not_target("session is read-only")),
                (TargetSessionAttrs::ReadOnly, false) => {
                    Err(not_target("session is not read-only"))
                }
                _ => Ok(()),
            }
        }
        TargetSessionAttrs::Primary | TargetSessionAttrs::Standby => {
            let standby = flag(
                conn,
                "in_hot_standby",
                "SELECT pg_catalog.pg_is_in_recovery()",
            )?;
            match (want, standby) {
                (TargetSessionAttrs::Primary, true) => {
                    Err(not_target("server is in hot standby mode"))
                }
                (TargetSessionAttrs::Standby, false) => {
                    Err(not_target("server is not in hot standby mode"))
                }
                _ => Ok(()),
            }
        }
    }
}

/// libpq's TCP options: `keepalives` (on unless 0), `keepalives_idle`,
/// `keepalives_interval`, `keepalives_count` (seconds, count) and `tcp_user_timeout`
/// (ms), so a dead peer is noticed. Errors read as libpq's.
pub(crate) fn tcp_options(s: &TcpStream, opts: &ConnectOptions) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let fd = s.as_raw_fd();
    let int = |keyword: &str| -> Result<Option<i32>, String> {
        match opts.value(keyword) {
            None => Ok(None),
            Some(v) => crate::options::parse_int(v)
                .map(|n| Some(n.max(0) as i32))
                .ok_or_else(|| {
                    format!("invalid integer value \"{v}\" for connection option \"{keyword}\"")
                }),
        }
    };
    let set = |level, name, label: &str, value: i32| {
        crate::sys::set_int_option(fd, level, name, value)
            .map_err(|e| format!("setsockopt({label}) failed: {}", crate::strerror(&e)))
    };
    if int("keepalives")? != Some(0) {
        set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, "SO_KEEPALIVE", 1)?;
        for (keyword, name, label) in [
            ("keepalives_idle", libc::TCP_KEEPIDLE, "TCP_KEEPIDLE"),
            ("keepalives_interval", libc::TCP_KEEPINTVL, "TCP_KEEPINTVL"),
            ("keepalives_count", libc::TCP_KEEPCNT, "TCP_KEEPCNT"),
        ] {
            if let Some(v) = int(keyword)?.filter(|v| *v > 0) {
                set(libc::IPPROTO_TCP, name, label, v)?;
            }
        }
    }
    if let Some(ms) = int("tcp_user_timeout")? {
        set(
            libc::IPPROTO_TCP,
            libc::TCP_USER_TIMEOUT,
            "TCP_USER_TIMEOUT",
            ms,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tcp_option_tests {
    use super::*;
    use crate::sys::int_option;
    use std::os::fd::AsRawFd;

    fn pair() -> TcpStream {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let _ = l.accept().unwrap();
        s
    }

    fn options(conninfo: &str) -> ConnectOptions {
        let args = crate::ConnectArgs {
            dbname: Some(conninfo.to_string()),
            ..Default::default()
        };
        ConnectOptions::from_env_and_args(&|_| None, &args).unwrap()
    }

    #[test]
    fn keepalives_and_user_timeout_reach_the_socket_as_libpq_sets_them() {
        let s = pair();
        let o = options("host=127.0.0.1 keepalives_idle=7 keepalives_interval=3 keepalives_count=4 tcp_user_timeout=2500");
        tcp_options(&s, &o).unwrap();
        let fd = s.as_raw_fd();
        assert_eq!(int_option(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 1);
        assert_eq!(int_option(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 7);
        assert_eq!(int_option(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL), 3);
        assert_eq!(int_option(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT), 4);
        assert_eq!(
            int_option(fd, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT),
            2500
        );
        let off = pair();
        tcp_options(&off, &options("host=127.0.0.1 keepalives=0")).unwrap();
        assert_eq!(
            int_option(off.as_raw_fd(), libc::SOL_SOCKET, libc::SO_KEEPALIVE),
            0
        );
        assert_eq!(
            tcp_options(&off, &options("host=127.0.0.1 keepalives_idle=x")).unwrap_err(),
            "invalid integer value \"x\" for connection option \"keepalives_idle\""
        );
    }
}
