//! The start-up exchange on a fresh transport: the StartupMessage (user, database,
//! options, application_name, client_encoding), then authentication — trust,
//! cleartext password, md5, SCRAM-SHA-256 (with `tls-server-end-point` channel binding
//! on TLS and libpq's `channel_binding` rules) — until ReadyForQuery.

use std::time::Instant;

use postgres_protocol::authentication::sasl::{ChannelBinding as ScramBinding, ScramSha256};
use postgres_protocol::message::frontend;

use crate::conn::Connection;
use crate::connect::{arm, read_failure, Failure, Next};
use crate::error::DbError;
use crate::options::{ChannelBinding, ConnectOptions, HostEntry};
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
    frontend::startup_message(params.iter().copied(), &mut conn.wbuf)
        .map_err(|e| Failure::new(format!("could not send startup packet: {e}"), Next::Stop))?;
    send(conn)?;

    let password = opts.password.clone().or_else(|| host.password.clone());
    let from_file = opts.password.is_none() && host.password.is_some();
    let mut scram: Option<ScramSha256> = None;
    let mut bound = false;
    let require_binding = opts.channel_binding == ChannelBinding::Require;
    loop {
        arm(&conn.stream, deadline)?;
        let (tag, start, end) = conn.next_message().map_err(read_failure)?;
        let body = conn.rbuf[start..end].to_vec();
        match tag {
            b'R' => {
                let code =
                    i32::from_be_bytes(body.get(..4).and_then(|b| b.try_into().ok()).ok_or_else(
                        || Failure::new("invalid authentication request", Next::Stop),
                    )?);
                let data = &body[4..];
                if require_binding && !matches!(code, 0 | 10 | 11 | 12) {
                    return Err(Failure::new(
                        "channel binding required but not supported by server's authentication request",
                        Next::Stop,
                    ));
                }
                let need_password = || -> Result<&str, Failure> {
                    match password.as_deref().filter(|p| !p.is_empty()) {
                        Some(p) => Ok(p),
                        None => Err(Failure {
                            text: "fe_sendauth: no password supplied".into(),
                            next: Next::Stop,
                            needs_password: true,
                            from_server: false,
                        }),
                    }
                };
                match code {
                    0 => {
                        if require_binding && !bound {
                            return Err(Failure::new(
                                "channel binding required, but server authenticated client without channel binding",
                                Next::Stop,
                            ));
                        }
                    }
                    3 => {
                        let pw = need_password()?;
                        frontend::password_message(pw.as_bytes(), &mut conn.wbuf)
                            .map_err(|e| Failure::new(e.to_string(), Next::Stop))?;
                        send(conn)?;
                    }
                    5 => {
                        let pw = need_password()?;
                        let salt: [u8; 4] = data
                            .get(..4)
                            .and_then(|s| s.try_into().ok())
                            .ok_or_else(|| Failure::new("invalid MD5 salt", Next::Stop))?;
                        let hash = postgres_protocol::authentication::md5_hash(
                            opts.user.as_bytes(),
                            pw.as_bytes(),
                            salt,
                        );
                        frontend::password_message(hash.as_bytes(), &mut conn.wbuf)
                            .map_err(|e| Failure::new(e.to_string(), Next::Stop))?;
                        send(conn)?;
                    }
                    10 => {
                        if require_binding && !conn.stream.is_tls() {
                            return Err(Failure::new(
                                "channel binding required, but SSL not in use",
                                Next::Stop,
                            ));
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
                        let tls = conn.stream.is_tls();
                        if plus && !tls {
                            return Err(Failure::new(
                                "server offered SCRAM-SHA-256-PLUS authentication over a non-SSL connection",
                                Next::Stop,
                            ));
                        }
                        let use_plus = plus && opts.channel_binding != ChannelBinding::Disable;
                        if !use_plus && !plain {
                            return Err(Failure::new(
                                "none of the server's SASL authentication mechanisms are supported",
                                Next::Stop,
                            ));
                        }
                        if require_binding && !use_plus {
                            return Err(Failure::new(
                                "channel binding is required, but server did not offer an authentication method that supports channel binding",
                                Next::Stop,
                            ));
                        }
                        let pw = need_password()?;
                        let (mech, binding) = if use_plus {
                            let cert = conn.stream.peer_certificate().unwrap_or_default();
                            (
                                "SCRAM-SHA-256-PLUS",
                                ScramBinding::tls_server_end_point(tls::server_end_point(&cert)),
                            )
                        } else if tls && opts.channel_binding != ChannelBinding::Disable {
                            ("SCRAM-SHA-256", ScramBinding::unrequested())
                        } else {
                            ("SCRAM-SHA-256", ScramBinding::unsupported())
                        };
                        bound = use_plus;
                        let s = ScramSha256::new(pw.as_bytes(), binding);
                        frontend::sasl_initial_response(mech, s.message(), &mut conn.wbuf)
                            .map_err(|e| Failure::new(e.to_string(), Next::Stop))?;
                        scram = Some(s);
                        send(conn)?;
                    }
                    11 => {
                        let s = scram.as_mut().ok_or_else(|| {
                            Failure::new("malformed SCRAM message (empty message)", Next::Stop)
                        })?;
                        s.update(data).map_err(|e| {
                            Failure::new(format!("malformed SCRAM message ({e})"), Next::Stop)
                        })?;
                        frontend::sasl_response(s.message(), &mut conn.wbuf)
                            .map_err(|e| Failure::new(e.to_string(), Next::Stop))?;
                        send(conn)?;
                    }
                    12 => {
                        let s = scram.as_mut().ok_or_else(|| {
                            Failure::new("malformed SCRAM message (empty message)", Next::Stop)
                        })?;
                        s.finish(data)
                            .map_err(|_| Failure::new("incorrect server signature", Next::Stop))?;
                    }
                    2 => {
                        return Err(Failure::new(
                            "Kerberos 5 authentication not supported",
                            Next::Stop,
                        ))
                    }
                    6 => {
                        return Err(Failure::new(
                            "SCM_CRED authentication method not supported",
                            Next::Stop,
                        ))
                    }
                    7 | 8 => {
                        return Err(Failure::new(
                            "GSSAPI authentication not supported",
                            Next::Stop,
                        ))
                    }
                    9 => {
                        return Err(Failure::new(
                            "SSPI authentication not supported",
                            Next::Stop,
                        ))
                    }
                    other => {
                        return Err(Failure::new(
                            format!("authentication method {other} not supported"),
                            Next::Stop,
                        ))
                    }
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
                return Err(Failure {
                    from_server: true,
                    ..Failure::new(text, Next::Stop)
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
            b'v' => {}
            b'Z' => return Ok(()),
            other => {
                return Err(Failure::new(
                    format!(
                        "expected authentication request from server, but received {}",
                        other as char
                    ),
                    Next::Stop,
                ))
            }
        }
    }
}
