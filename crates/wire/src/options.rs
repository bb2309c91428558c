//! `ConnectOptions`: everything needed to open a connection, built the way libpq's
//! `PQconnectdbParams(keywords, values, expand_dbname=1)` builds it — explicit
//! arguments, then an expanded `dbname` connection string overriding them, then the
//! service file, environment variables and compiled-in defaults, then the per-host
//! list (hosts, hostaddrs, ports) and password-file look-ups.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::conninfo::{is_connection_string, parse_connection_string, Values, KEYWORDS};
use crate::error::ConnError;
use crate::passfile::{apply_service, password_from_file, DEFAULT_SOCKET_DIR};
use crate::sys;
use crate::tls::{tls_version_rank, SslMode, TlsCache, TlsSettings};

/// What pgbench passes to `PQconnectdbParams` (`-h`, `-p`, `-U`, prompted password,
/// DBNAME, `"pgbench"`); `None` or empty = not given.
#[derive(Clone, Default)]
pub struct ConnectArgs {
    /// `-h`: host name(s), address(es) or socket directory(ies).
    pub host: Option<String>,
    /// `-p`: port(s).
    pub port: Option<String>,
    /// `-U`: user name.
    pub user: Option<String>,
    /// The password typed at pgbench's `Password: ` prompt.
    pub password: Option<String>,
    /// DBNAME: a database name, or a conninfo string / URI that overrides the above.
    pub dbname: Option<String>,
    /// `application_name` when neither the string nor `PGAPPNAME` sets one.
    pub fallback_application_name: Option<String>,
}

impl fmt::Debug for ConnectArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectArgs")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "********"))
            .field("dbname", &self.dbname.as_ref().map(|d| redact(d)))
            .field("fallback_application_name", &self.fallback_application_name)
            .finish()
    }
}

/// A connection string may hold a password; never print it.
fn redact(s: &str) -> String {
    if is_connection_string(s) {
        "<connection string>".into()
    } else {
        s.to_string()
    }
}

/// libpq's `channel_binding`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelBinding {
    /// Never use channel binding.
    Disable,
    /// Use it when TLS and the server offer it.
    Prefer,
    /// Fail unless the server authenticates with channel binding.
    Require,
}

/// libpq's `target_session_attrs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetSessionAttrs {
    /// Any server.
    Any,
    /// A server whose sessions are not read-only.
    ReadWrite,
    /// A server whose sessions are read-only.
    ReadOnly,
    /// A server not in hot standby.
    Primary,
    /// A server in hot standby.
    Standby,
    /// A standby if there is one, else any.
    PreferStandby,
}

/// How a host entry is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum HostKind {
    /// A name to resolve (or a numeric address given as `host`).
    Name,
    /// A numeric address from `hostaddr` (no resolution).
    Address,
    /// A Unix socket directory.
    UnixSocket,
}

/// One entry of the host list.
#[derive(Clone)]
pub(crate) struct HostEntry {
    pub host: String,
    pub hostaddr: Option<String>,
    pub kind: HostKind,
    /// As given (may be empty = 5432); parsed when connecting, like libpq.
    pub port: String,
    pub password: Option<String>,
}

impl HostEntry {
    /// The entry's host name as libpq 15 keeps it: `host`, or with only `hostaddr`
    /// the default socket directory (what `PQhost`, SNI and verify-full see).
    pub(crate) fn reported_name(&self) -> &str {
        match (&self.kind, self.host.as_str()) {
            (HostKind::Address, "") => DEFAULT_SOCKET_DIR,
            (_, name) => name,
        }
    }
}

/// Fully resolved connection options. Build once, connect many times.
#[derive(Clone)]
pub struct ConnectOptions {
    values: Values,
    pub(crate) hosts: Vec<HostEntry>,
    pub(crate) user: String,
    pub(crate) dbname: String,
    pub(crate) password: Option<String>,
    pub(crate) passfile: Option<PathBuf>,
    pub(crate) channel_binding: ChannelBinding,
    pub(crate) target: TargetSessionAttrs,
    pub(crate) load_balance: bool,
    /// Settings libpq takes from the environment into the startup packet.
    pub(crate) environment_settings: Vec<(&'static str, String)>,
    /// `sslmode` and the other `ssl*` keywords.
    pub(crate) tls: TlsSettings,
    /// The TLS context built for these options (and their clones), filled by the TLS
    /// module at the first TLS connection.
    pub(crate) tls_cache: TlsCache,
}

impl fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hosts: Vec<String> = self
            .hosts
            .iter()
            .map(|h| format!("{}:{}", h.host, h.port))
            .collect();
        f.debug_struct("ConnectOptions")
            .field("hosts", &hosts)
            .field("user", &self.user)
            .field("dbname", &self.dbname)
            .field("sslmode", &self.tls.sslmode)
            .finish_non_exhaustive()
    }
}

fn invalid(name: &str, value: &str) -> ConnError {
    ConnError::Options(format!("invalid {name} value: \"{value}\""))
}

fn nonempty(v: Option<&str>) -> Option<&str> {
    v.filter(|s| !s.is_empty())
}

/// libpq's `EnvironmentOptions`: variables whose values go into the startup packet as
/// session settings (`default`, in any case, sends nothing).
const ENVIRONMENT_SETTINGS: [(&str, &str); 3] = [
    ("PGDATESTYLE", "datestyle"),
    ("PGTZ", "timezone"),
    ("PGGEQO", "geqo"),
];

fn environment_settings(env: &dyn Fn(&str) -> Option<String>) -> Vec<(&'static str, String)> {
    ENVIRONMENT_SETTINGS
        .iter()
        .filter_map(|&(var, setting)| {
            env(var)
                .filter(|v| !v.eq_ignore_ascii_case("default"))
                .map(|v| (setting, v))
        })
        .collect()
}

/// libpq's `parse_comma_separated_list` over a whole string: `a,,b` → `["a","","b"]`.
fn split_list(s: &str) -> Vec<String> {
    s.split(',').map(str::to_string).collect()
}

impl ConnectOptions {
    /// Builds options from pgbench's arguments and the process environment.
    pub fn from_args(args: &ConnectArgs) -> Result<ConnectOptions, ConnError> {
        Self::from_env_and_args(&|k| std::env::var(k).ok(), args)
    }

    /// Builds options from pgbench's arguments and an explicit environment (`env` returns
    /// the value of a variable such as `PGHOST` or `HOME`).
    pub fn from_env_and_args(
        env: &dyn Fn(&str) -> Option<String>,
        args: &ConnectArgs,
    ) -> Result<ConnectOptions, ConnError> {
        let mut values = Values::new();
        let given = [
            ("host", &args.host),
            ("port", &args.port),
            ("user", &args.user),
            ("password", &args.password),
            ("dbname", &args.dbname),
            ("fallback_application_name", &args.fallback_application_name),
        ];
        let mut expanded = false;
        for (name, value) in given {
            let Some(value) = value.as_deref().filter(|v| !v.is_empty()) else {
                continue;
            };
            if name == "dbname" && !expanded && is_connection_string(value) {
                expanded = true;
                // Values from the string override earlier keywords (later wins).
                let parsed = parse_connection_string(value).map_err(ConnError::Options)?;
                for (slot, v) in values.0.iter_mut().zip(parsed.0) {
                    if v.is_some() {
                        *slot = v;
                    }
                }
            } else {
                values.store(name, value).map_err(ConnError::Options)?;
            }
        }
        let home = sys::home_dir(env);
        apply_service(&mut values, env, home.as_deref()).map_err(ConnError::Options)?;
        for (slot, kw) in values.0.iter_mut().zip(KEYWORDS) {
            if slot.is_some() {
                continue;
            }
            if let Some(v) = kw.env.and_then(env) {
                *slot = Some(v);
                continue;
            }
            if kw.name == "sslmode" && env("PGREQUIRESSL").is_some_and(|v| v.starts_with('1')) {
                *slot = Some("require".into());
                continue;
            }
            if let Some(d) = kw.default {
                *slot = Some(d.into());
            } else if kw.name == "user" {
                *slot = sys::os_user_name();
            }
        }
        let mut options = Self::finish(values, home)?;
        options.environment_settings = environment_settings(env);
        Ok(options)
    }

    /// libpq's `connectOptions2`: host list, defaults that depend on others,
    /// password-file look-ups and validation, in libpq's order.
    fn finish(values: Values, home: Option<PathBuf>) -> Result<ConnectOptions, ConnError> {
        let mut hosts = host_entries(&values)?;
        let user = match nonempty(values.get("user")) {
            Some(u) => u.to_string(),
            None => sys::os_user_name()
                .ok_or_else(|| ConnError::Options("could not look up local user name".into()))?,
        };
        let dbname = nonempty(values.get("dbname")).unwrap_or(&user).to_string();
        let password = nonempty(values.get("password")).map(str::to_string);
        let passfile = if password.is_none() {
            let file = match nonempty(values.get("passfile")) {
                Some(f) => Some(PathBuf::from(f)),
                None => home.as_ref().map(|h| h.join(".pgpass")),
            };
            if let Some(file) = &file {
                passwords_from_file(&mut hosts, file, &dbname, &user);
            }
            file
        } else {
            None
        };
        let channel_binding = match values.get("channel_binding").unwrap_or("prefer") {
            "disable" => ChannelBinding::Disable,
            "prefer" => ChannelBinding::Prefer,
            "require" => ChannelBinding::Require,
            other => return Err(invalid("channel_binding", other)),
        };
        let sslmode = match values.get("sslmode").unwrap_or("prefer") {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => return Err(invalid("sslmode", other)),
        };
        check_tls_versions(&values)?;
        let tls = TlsSettings::new(sslmode, home.as_deref(), |k| nonempty(values.get(k)));
        check_gssencmode(&values)?;
        let target = match values.get("target_session_attrs").unwrap_or("any") {
            "any" => TargetSessionAttrs::Any,
            "read-write" => TargetSessionAttrs::ReadWrite,
            "read-only" => TargetSessionAttrs::ReadOnly,
            "primary" => TargetSessionAttrs::Primary,
            "standby" => TargetSessionAttrs::Standby,
            "prefer-standby" => TargetSessionAttrs::PreferStandby,
            other => return Err(invalid("target_session_attrs", other)),
        };
        let load_balance = match values.get("load_balance_hosts").unwrap_or("disable") {
            "disable" => false,
            "random" => true,
            other => return Err(invalid("load_balance_hosts", other)),
        };
        Ok(ConnectOptions {
            values,
            hosts,
            user,
            dbname,
            password,
            passfile,
            channel_binding,
            target,
            load_balance,
            environment_settings: Vec::new(),
            tls,
            tls_cache: TlsCache::default(),
        })
    }

    /// The value of a libpq keyword after defaults (e.g. `"sslrootcert"`); never the
    /// password.
    pub fn get(&self, keyword: &str) -> Option<&str> {
        if keyword == "password" {
            return None;
        }
        self.values.get(keyword)
    }

    /// The user name the connection will use.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The database name the connection will use.
    pub fn dbname(&self) -> &str {
        &self.dbname
    }

    /// The `sslmode`.
    pub fn sslmode(&self) -> SslMode {
        self.tls.sslmode
    }

    /// Hosts in the order they are tried (before `load_balance_hosts` shuffling), with
    /// their ports (`""` = 5432).
    pub fn hosts(&self) -> Vec<(String, String)> {
        self.hosts
            .iter()
            .map(|h| {
                let host = match (&h.kind, &h.hostaddr) {
                    (HostKind::Address, Some(a)) if h.host.is_empty() => a.clone(),
                    _ => h.host.clone(),
                };
                (host, h.port.clone())
            })
            .collect()
    }

    /// The same options with the password typed at pgbench's `Password: ` prompt (what
    /// pgbench does after `ConnError::needs_password`).
    pub fn with_password(&self, password: &str) -> ConnectOptions {
        let mut opts = self.clone();
        opts.password = Some(password.to_string());
        opts
    }

    /// Whether a password is known (given, or found in the password file).
    pub fn has_password(&self) -> bool {
        self.password.is_some() || self.hosts.iter().any(|h| h.password.is_some())
    }

    /// `connect_timeout` in seconds, libpq's parsing (values 1 become 2; ≤0 = none).
    pub(crate) fn connect_timeout(&self) -> Result<Option<Duration>, String> {
        match nonempty(self.values.get("connect_timeout")) {
            None => Ok(None),
            Some(v) => {
                let n: i64 = parse_int(v).ok_or_else(|| {
                    format!(
                        "invalid integer value \"{v}\" for connection option \"connect_timeout\""
                    )
                })?;
                Ok(match n {
                    i64::MIN..=0 => None,
                    1 => Some(Duration::from_secs(2)),
                    n => Some(Duration::from_secs(n as u64)),
                })
            }
        }
    }

    pub(crate) fn value(&self, keyword: &str) -> Option<&str> {
        nonempty(self.values.get(keyword))
    }
}

/// libpq's `parse_int_param`: optional surrounding spaces, decimal, fits in an int.
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let n: i64 = t.parse().ok()?;
    (i32::MIN as i64..=i32::MAX as i64)
        .contains(&n)
        .then_some(n)
}

/// `host`, `hostaddr` and `port` as libpq pairs them up: one entry per host (or
/// address), each with its port; the default socket directory when none is given.
fn host_entries(values: &Values) -> Result<Vec<HostEntry>, ConnError> {
    let host_s = nonempty(values.get("host"));
    let addr_s = nonempty(values.get("hostaddr"));
    let count = match (addr_s, host_s) {
        (Some(a), _) => split_list(a).len(),
        (None, Some(h)) => split_list(h).len(),
        (None, None) => 1,
    };
    let addrs: Vec<Option<String>> = match addr_s {
        Some(a) => split_list(a).into_iter().map(Some).collect(),
        None => vec![None; count],
    };
    let names: Vec<String> = match host_s {
        Some(h) => {
            let list = split_list(h);
            if list.len() != count {
                return Err(ConnError::Options(format!(
                    "could not match {} host names to {count} hostaddr values",
                    list.len()
                )));
            }
            list
        }
        None => vec![String::new(); count],
    };
    let mut hosts: Vec<HostEntry> = names
        .into_iter()
        .zip(addrs)
        .map(|(host, hostaddr)| {
            let (host, kind) = if hostaddr.as_deref().is_some_and(|a| !a.is_empty()) {
                (host, HostKind::Address)
            } else if !host.is_empty() {
                let kind = if host.starts_with('/') {
                    HostKind::UnixSocket
                } else {
                    HostKind::Name
                };
                (host, kind)
            } else {
                (DEFAULT_SOCKET_DIR.to_string(), HostKind::UnixSocket)
            };
            HostEntry {
                host,
                hostaddr,
                kind,
                port: String::new(),
                password: None,
            }
        })
        .collect();
    if let Some(p) = nonempty(values.get("port")) {
        let ports = split_list(p);
        if ports.len() == 1 {
            hosts.iter_mut().for_each(|h| h.port = ports[0].clone());
        } else if ports.len() == count {
            hosts.iter_mut().zip(ports).for_each(|(h, p)| h.port = p);
        } else {
            return Err(ConnError::Options(format!(
                "could not match {} port numbers to {count} hosts",
                ports.len()
            )));
        }
    }
    Ok(hosts)
}

/// Each host's password from the password file, keyed as libpq keys it (the host
/// name, else the address).
fn passwords_from_file(hosts: &mut [HostEntry], file: &std::path::Path, dbname: &str, user: &str) {
    for h in hosts {
        let key = if h.host.is_empty() {
            h.hostaddr.as_deref().unwrap_or("")
        } else {
            &h.host
        };
        h.password = password_from_file(file, key, &h.port, dbname, user);
    }
}

/// `ssl_min_protocol_version` and `ssl_max_protocol_version`: known names, and a
/// range that is not empty.
fn check_tls_versions(values: &Values) -> Result<(), ConnError> {
    let min = nonempty(values.get("ssl_min_protocol_version"));
    let max = nonempty(values.get("ssl_max_protocol_version"));
    for (name, v) in [
        ("ssl_min_protocol_version", min),
        ("ssl_max_protocol_version", max),
    ] {
        if let Some(v) = v.filter(|v| tls_version_rank(v).is_none()) {
            return Err(invalid(name, v));
        }
    }
    if let (Some(min), Some(max)) = (
        min.and_then(tls_version_rank),
        max.and_then(tls_version_rank),
    ) {
        if min > max {
            return Err(ConnError::Options(
                "invalid SSL protocol version range".into(),
            ));
        }
    }
    Ok(())
}

/// `gssencmode`: this build has no GSSAPI, as a libpq built without it.
fn check_gssencmode(values: &Values) -> Result<(), ConnError> {
    match values.get("gssencmode").unwrap_or("prefer") {
        "disable" | "prefer" => {}
        "require" => {
            return Err(ConnError::Options(
                "gssencmode value \"require\" invalid when GSSAPI support is not compiled in"
                    .into(),
            ))
        }
        other => return Err(invalid("gssencmode", other)),
    }
    Ok(())
}
