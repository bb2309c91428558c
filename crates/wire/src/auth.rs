//! The start-up exchange on a fresh transport: the StartupMessage (user, database,
//! options, application_name, client_encoding, PGDATESTYLE/PGTZ/PGGEQO), then authentication — trust,
//! cleartext password, md5, SCRAM-SHA-256 (with `tls-server-end-point` channel binding
//! on TLS and libpq's `channel_binding` rules) — until ReadyForQuery.

use std::time::Instant;

use crate::scram::{Binding as ScramBinding, Scram};
use postgres_protocol::message::frontend;

use crate::attempt::{Failure, Next};
use crate::conn::Connection;
use crate::error::DbError;
use crate::options::{ChannelBinding, ConnectOptions, HostEntry};
use crate::startup_read::Phase;
use crate::tls;

fn send(conn: &mut Connection) -> Result<(), Failure> {
    conn.flush()
        .map_err(|e| Failure::new(e.to_string(), Next::Stop))
}

pub(crate) fn startup(
    conn: &mut Connection,
    opts: &ConnectOptions,
    host: &HostEntry,
    deadline: Option<Instant>,
) -> Result<(), Failure> {
    let mut params: Vec<(&str, &str)> = vec![("user", &opts.user), ("database", &opts.dbname)];
    if let Some(r) = opts.value("replication") {
        params.push(("replication", r));
    }
    if let Some(o) = opts.value("options") {
        params.push(("options", o));
    }
    if let Some(a) = opts
        .value("application_name")
        .or_else(|| opts.value("fallback_application_name"))
    {
        params.push(("application_name", a));
    }
    let encoding;
    if let Some(e) = opts.value("client_encoding") {
        encoding = if e == "auto" {
            "UTF8".to_string()
        } else {
            e.to_string()
        };
        params.push(("client_encoding", &encoding));
    }
    for (setting, value) in &opts.environment_settings {
        params.push((setting, value));
    }
    frontend::startup_message(params.iter().copied(), &mut conn.wbuf)
        .map_err(|e| Failure::new(format!("could not send startup packet: {e}"), Next::Stop))?;
    send(conn)?;

    let mut auth = Auth {
        opts,
        password: opts.password.clone().or_else(|| host.password.clone()),
        scram: None,
        bound: false,
    };
    let from_file = opts.password.is_none() && host.password.is_some();
    let mut phase = Phase::Authenticating;
    loop {
        let (tag, start, end) = conn.startup_message(phase, deadline)?;
        let body = conn.read.body(start, end).to_vec();
        match tag {
            b'R' if phase == Phase::Authenticating => {
                if auth.answer(conn, &body)? {
                    phase = Phase::Authenticated;
                }
            }
            b'E' => {
                let err = DbError::parse(&body, true);
                let mut text = err.to_string();
                if from_file && err.code == "28P01" {
                    if let Some(f) = &opts.passfile {
                        text.push_str(&format!(
                            "\npassword retrieved from file \"{}\"",
                            f.display()
                        ));
                    }
                }
                // "cannot connect now" (a standby starting up): the next host is
                // tried, as libpq does.
                let next = if err.code == "57P03" {
                    Next::SkipHost
                } else {
                    Next::Stop
                };
                // Only an error before authentication completes may be retried with
                // the other SSL choice (libpq's CONNECTION_AWAITING_RESPONSE); one
                // after it (no such database, bad options) is final.
                return Err(Failure {
                    rejected_before_auth: phase == Phase::Authenticating,
                    ..Failure::new(text, next)
                });
            }
            b'N' => {
                let notice = DbError::parse(&body, false);
                (conn.notice_handler)(&notice);
            }
            b'S' => conn.parameter_status(start, end),
            b'K' => {
                if body.len() >= 8 {
                    conn.backend_pid = i32::from_be_bytes([body[0], body[1], body[2], body[3]]);
                    conn.secret_key = i32::from_be_bytes([body[4], body[5], body[6], body[7]]);
                }
            }
            b'Z' => return Ok(()),
            _ => {
                return Err(Failure::new(
                    "unexpected message from server during startup",
                    Next::Stop,
                ))
            }
        }
    }
}

/// The authentication exchange's state: the password to answer with and the SCRAM
/// conversation under way.
struct Auth<'a> {
    opts: &'a ConnectOptions,
    password: Option<String>,
    scram: Option<Scram>,
    /// SCRAM with channel binding was used.
    bound: bool,
}

fn stop(text: impl Into<String>) -> Failure {
    Failure::new(text, Next::Stop)
}

impl Auth<'_> {
    fn require_binding(&self) -> bool {
        self.opts.channel_binding == ChannelBinding::Require
    }

    fn need_password(&self) -> Result<&str, Failure> {
        match self.password.as_deref().filter(|p| !p.is_empty()) {
            Some(p) => Ok(p),
            None => Err(Failure {
                needs_password: true,
                ..stop("fe_sendauth: no password supplied")
            }),
        }
    }

    /// Answers one authentication request (`body` of an `R` message); true once the
    /// server says AuthenticationOk.
    fn answer(&mut self, conn: &mut Connection, body: &[u8]) -> Result<bool, Failure> {
        let code = body
            .get(..4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| stop("invalid authentication request"))?;
        let data = &body[4..];
        if self.require_binding() && !matches!(code, 0 | 10 | 11 | 12) {
            return Err(stop(
                "channel binding required but not supported by server's authentication request",
            ));
        }
        match code {
            0 => {
                if self.require_binding() && !self.bound {
                    return Err(stop(
                        "channel binding required, but server authenticated client without channel binding",
                    ));
                }
                return Ok(true);
            }
            3 => {
                let pw = self.need_password()?;
                frontend::password_message(pw.as_bytes(), &mut conn.wbuf)
                    .map_err(|e| stop(e.to_string()))?;
                send(conn)?;
            }
            5 => {
                let pw = self.need_password()?;
                let salt: [u8; 4] = data
                    .get(..4)
                    .and_then(|s| s.try_into().ok())
                    .ok_or_else(|| stop("invalid MD5 salt"))?;
                let hash = postgres_protocol::authentication::md5_hash(
                    self.opts.user.as_bytes(),
                    pw.as_bytes(),
                    salt,
                );
                frontend::password_message(hash.as_bytes(), &mut conn.wbuf)
                    .map_err(|e| stop(e.to_string()))?;
                send(conn)?;
            }
            10 => self.sasl_start(conn, data)?,
            11 => {
                let s = self
                    .scram
                    .as_mut()
                    .ok_or_else(|| stop("malformed SCRAM message (empty message)"))?;
                s.update(data)
                    .map_err(|e| stop(format!("malformed SCRAM message ({e})")))?;
                frontend::sasl_response(s.message(), &mut conn.wbuf)
                    .map_err(|e| stop(e.to_string()))?;
                send(conn)?;
            }
            12 => {
                let s = self
                    .scram
                    .as_mut()
                    .ok_or_else(|| stop("malformed SCRAM message (empty message)"))?;
                s.finish(data).map_err(stop)?;
            }
            2 => return Err(stop("Kerberos 5 authentication not supported")),
            6 => return Err(stop("SCM_CRED authentication method not supported")),
            7 | 8 => return Err(stop("GSSAPI authentication not supported")),
            9 => return Err(stop("SSPI authentication not supported")),
            other => return Err(stop(format!("authentication method {other} not supported"))),
        }
        Ok(false)
    }

    /// AuthenticationSASL: picks the mechanism by libpq's `channel_binding` rules and
    /// sends the SCRAM client-first message.
    fn sasl_start(&mut self, conn: &mut Connection, data: &[u8]) -> Result<(), Failure> {
        let tls = conn.stream.is_tls();
        if self.require_binding() && !tls {
            return Err(stop("channel binding required, but SSL not in use"));
        }
        let mut plus = false;
        let mut plain = false;
        for m in data.split(|&b| b == 0).take_while(|m| !m.is_empty()) {
            match m {
                b"SCRAM-SHA-256-PLUS" => plus = true,
                b"SCRAM-SHA-256" => plain = true,
                _ => {}
            }
        }
        if plus && !tls {
            return Err(stop(
                "server offered SCRAM-SHA-256-PLUS authentication over a non-SSL connection",
            ));
        }
        let use_plus = plus && self.opts.channel_binding != ChannelBinding::Disable;
        if !use_plus && !plain {
            return Err(stop(
                "none of the server's SASL authentication mechanisms are supported",
            ));
        }
        if self.require_binding() && !use_plus {
            return Err(stop(
                "channel binding is required, but server did not offer an authentication method that supports channel binding",
            ));
        }
        let pw = self.need_password()?;
        let (mech, binding) = if use_plus {
            let cert = conn
                .stream
                .peer_certificate()
                .ok_or_else(|| stop("could not get server certificate"))?;
            let hash = tls::server_end_point(&cert).map_err(stop)?;
            ("SCRAM-SHA-256-PLUS", ScramBinding::ServerEndPoint(hash))
        } else if tls && self.opts.channel_binding != ChannelBinding::Disable {
            ("SCRAM-SHA-256", ScramBinding::Unrequested)
        } else {
            ("SCRAM-SHA-256", ScramBinding::Unsupported)
        };
        let s = Scram::new(pw, binding).map_err(stop)?;
        frontend::sasl_initial_response(mech, s.message(), &mut conn.wbuf)
            .map_err(|e| stop(e.to_string()))?;
        self.scram = Some(s);
        self.bound = use_plus;
        send(conn)
    }
}
