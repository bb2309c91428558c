//! libpq's connection keywords and their two string forms: `key=value` conninfo strings
//! and `postgresql://` URIs, parsed into a keyword→value map with libpq's error texts.
//!
//! Defaults (environment, service file, compiled-in values) are applied elsewhere
//! (`options.rs`); this module only knows the syntax and the keyword table.

/// One libpq connection keyword: its name, the environment variable that supplies a
/// default, and the compiled-in default.
pub(crate) struct Keyword {
    pub name: &'static str,
    pub env: Option<&'static str>,
    pub default: Option<&'static str>,
}

const fn kw(
    name: &'static str,
    env: Option<&'static str>,
    default: Option<&'static str>,
) -> Keyword {
    Keyword { name, env, default }
}

/// The keywords libpq 15 accepts (plus libpq 16's `load_balance_hosts`), in libpq's order.
pub(crate) const KEYWORDS: &[Keyword] = &[
    kw("service", Some("PGSERVICE"), None),
    kw("user", Some("PGUSER"), None),
    kw("password", Some("PGPASSWORD"), None),
    kw("passfile", Some("PGPASSFILE"), None),
    kw("channel_binding", Some("PGCHANNELBINDING"), Some("prefer")),
    kw("connect_timeout", Some("PGCONNECT_TIMEOUT"), None),
    kw("dbname", Some("PGDATABASE"), None),
    kw("host", Some("PGHOST"), None),
    kw("hostaddr", Some("PGHOSTADDR"), None),
    kw("port", Some("PGPORT"), Some("5432")),
    kw("client_encoding", Some("PGCLIENTENCODING"), None),
    kw("options", Some("PGOPTIONS"), Some("")),
    kw("application_name", Some("PGAPPNAME"), None),
    kw("fallback_application_name", None, None),
    kw("keepalives", None, None),
    kw("keepalives_idle", None, None),
    kw("keepalives_interval", None, None),
    kw("keepalives_count", None, None),
    kw("tcp_user_timeout", None, None),
    kw("sslmode", Some("PGSSLMODE"), Some("prefer")),
    kw("sslcompression", Some("PGSSLCOMPRESSION"), Some("0")),
    kw("sslcert", Some("PGSSLCERT"), None),
    kw("sslkey", Some("PGSSLKEY"), None),
    kw("sslpassword", None, None),
    kw("sslrootcert", Some("PGSSLROOTCERT"), None),
    kw("sslcrl", Some("PGSSLCRL"), None),
    kw("sslcrldir", Some("PGSSLCRLDIR"), None),
    kw("sslsni", Some("PGSSLSNI"), Some("1")),
    kw("requirepeer", Some("PGREQUIREPEER"), None),
    kw(
        "ssl_min_protocol_version",
        Some("PGSSLMINPROTOCOLVERSION"),
        Some("TLSv1.2"),
    ),
    kw(
        "ssl_max_protocol_version",
        Some("PGSSLMAXPROTOCOLVERSION"),
        None,
    ),
    kw("gssencmode", Some("PGGSSENCMODE"), Some("prefer")),
    kw("krbsrvname", Some("PGKRBSRVNAME"), Some("postgres")),
    kw("gsslib", Some("PGGSSLIB"), None),
    kw("replication", None, None),
    kw(
        "target_session_attrs",
        Some("PGTARGETSESSIONATTRS"),
        Some("any"),
    ),
    kw(
        "load_balance_hosts",
        Some("PGLOADBALANCEHOSTS"),
        Some("disable"),
    ),
];

/// Index of a keyword in [`KEYWORDS`].
pub(crate) fn keyword_index(name: &str) -> Option<usize> {
    KEYWORDS.iter().position(|k| k.name == name)
}

/// Values for every keyword of [`KEYWORDS`], `None` = not given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Values(pub Vec<Option<String>>);

impl Values {
    pub fn new() -> Values {
        Values(vec![None; KEYWORDS.len()])
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        keyword_index(name).and_then(|i| self.0[i].as_deref())
    }

    /// Stores a value; unknown keywords are libpq's `invalid connection option` error.
    /// `requiressl` is libpq's old spelling of `sslmode`.
    pub fn store(&mut self, name: &str, value: &str) -> Result<(), String> {
        let (name, value) = if name == "requiressl" {
            (
                "sslmode",
                if value.starts_with('1') {
                    "require"
                } else {
                    "prefer"
                },
            )
        } else {
            (name, value)
        };
        match keyword_index(name) {
            Some(i) => {
                self.0[i] = Some(value.to_string());
                Ok(())
            }
            None => Err(format!("invalid connection option \"{name}\"")),
        }
    }
}

/// Whether libpq would expand `dbname` as a connection string: a URI, or any `=`.
pub(crate) fn is_connection_string(s: &str) -> bool {
    uri_prefix_len(s) > 0 || s.contains('=')
}

pub(crate) fn uri_prefix_len(s: &str) -> usize {
    for prefix in ["postgresql://", "postgres://"] {
        if s.starts_with(prefix) {
            return prefix.len();
        }
    }
    0
}

/// Parses a conninfo string or URI into values (no defaults applied).
pub(crate) fn parse_connection_string(s: &str) -> Result<Values, String> {
    if uri_prefix_len(s) > 0 {
        parse_uri(s)
    } else {
        parse_conninfo(s)
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// `key = value ...` with single quotes and backslash escapes, like libpq's
/// `conninfo_parse`.
pub(crate) fn parse_conninfo(s: &str) -> Result<Values, String> {
    let mut values = Values::new();
    let mut at = 0;
    while let Some(pair) = next_pair(s, &mut at).map_err(|e| e.message)? {
        values.store(&pair.name, &pair.value)?;
    }
    Ok(values)
}

/// One `key = value` of a conninfo string.
pub(crate) struct Pair {
    pub name: String,
    /// Unquoted and unescaped.
    pub value: String,
    /// Where the value is written in the string, quotes included.
    pub written: std::ops::Range<usize>,
}

/// A conninfo string's syntax error.
pub(crate) struct PairError {
    /// libpq's text.
    pub message: String,
    /// The keyword of the broken pair.
    pub name: String,
    /// Where its value starts, when the `=` was there.
    pub value_start: Option<usize>,
}

/// The pair of `s` at `*at` (after any white space), moving `*at` past it; `None` at
/// the end of the string.
pub(crate) fn next_pair(s: &str, at: &mut usize) -> Result<Option<Pair>, PairError> {
    let b = s.as_bytes();
    let mut i = *at;
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    if i >= b.len() {
        *at = i;
        return Ok(None);
    }
    let name_start = i;
    while i < b.len() && b[i] != b'=' && !is_space(b[i]) {
        i += 1;
    }
    let name = String::from_utf8_lossy(&b[name_start..i]).into_owned();
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    if i >= b.len() || b[i] != b'=' {
        return Err(PairError {
            message: format!("missing \"=\" after \"{name}\" in connection info string"),
            name,
            value_start: None,
        });
    }
    i += 1;
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    let value_start = i;
    let mut value = Vec::new();
    let mut written_end = None;
    if i < b.len() && b[i] == b'\'' {
        i += 1;
        loop {
            match b.get(i) {
                None => {
                    return Err(PairError {
                        message: "unterminated quoted string in connection info string".into(),
                        name,
                        value_start: Some(value_start),
                    })
                }
                Some(b'\\') => {
                    value.extend(b.get(i + 1));
                    i += 2;
                }
                Some(b'\'') => {
                    i += 1;
                    break;
                }
                Some(&c) => {
                    value.push(c);
                    i += 1;
                }
            }
        }
    } else {
        while i < b.len() {
            if is_space(b[i]) {
                written_end = Some(i);
                i += 1;
                break;
            }
            if b[i] == b'\\' {
                value.extend(b.get(i + 1));
                i += 2;
            } else {
                value.push(b[i]);
                i += 1;
            }
        }
    }
    let i = i.min(b.len());
    *at = i;
    Ok(Some(Pair {
        name,
        value: String::from_utf8_lossy(&value).into_owned(),
        written: value_start..written_end.unwrap_or(i),
    }))
}

/// Percent-decoding of a URI component, libpq's `conninfo_uri_decode`.
pub(crate) fn uri_decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let hex = |c: Option<&u8>| c.and_then(|c| (*c as char).to_digit(16));
        match (hex(b.get(i + 1)), hex(b.get(i + 2))) {
            (Some(h), Some(l)) => {
                let v = (h * 16 + l) as u8;
                if v == 0 {
                    return Err(format!(
                        "forbidden value %00 in percent-encoded value: \"{s}\""
                    ));
                }
                out.push(v);
                i += 3;
            }
            _ => return Err(format!("invalid percent-encoded token: \"{s}\"")),
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `postgresql://[user[:password]@][host[:port][,...]][/dbname][?key=value&...]`,
/// following libpq's `conninfo_uri_parse_options`.
pub(crate) fn parse_uri(uri: &str) -> Result<Values, String> {
    let mut values = Values::new();
    let prefix = uri_prefix_len(uri);
    if prefix == 0 {
        return Err(format!(
            "invalid URI propagated to internal parser routine: \"{uri}\""
        ));
    }
    let b = uri.as_bytes();
    let mut p = prefix;
    let store_decoded = |values: &mut Values, name: &str, raw: &[u8]| -> Result<(), String> {
        let raw = String::from_utf8_lossy(raw);
        values.store(name, &uri_decode(&raw)?)
    };
    let info = uri_user_info(b, p);
    if let Some(user) = info.user {
        store_decoded(&mut values, "user", &b[user])?;
    }
    if let Some(password) = info.password {
        store_decoded(&mut values, "password", &b[password])?;
    }
    p = info.hosts_start;
    let mut hosts = String::new();
    let mut ports = String::new();
    let mut terminator: Option<u8>;
    loop {
        let host: &[u8];
        if p < b.len() && b[p] == b'[' {
            let (start, end) = uri_ipv6_host(uri, p)?;
            host = &b[start..end];
            p = end + 1;
        } else {
            let start = p;
            while p < b.len() && !matches!(b[p], b':' | b'/' | b'?' | b',') {
                p += 1;
            }
            host = &b[start..p];
        }
        terminator = b.get(p).copied();
        hosts.push_str(&String::from_utf8_lossy(host));
        if terminator == Some(b':') {
            p += 1;
            let start = p;
            while p < b.len() && !matches!(b[p], b'/' | b'?' | b',') {
                p += 1;
            }
            terminator = b.get(p).copied();
            ports.push_str(&String::from_utf8_lossy(&b[start..p]));
        }
        if terminator != Some(b',') {
            break;
        }
        p += 1;
        hosts.push(',');
        ports.push(',');
    }
    if !hosts.is_empty() {
        store_decoded(&mut values, "host", hosts.as_bytes())?;
    }
    if !ports.is_empty() {
        store_decoded(&mut values, "port", ports.as_bytes())?;
    }
    if terminator.is_some() && terminator != Some(b'?') {
        p += 1;
        let start = p;
        while p < b.len() && b[p] != b'?' {
            p += 1;
        }
        terminator = b.get(p).copied();
        if p > start {
            store_decoded(&mut values, "dbname", &b[start..p])?;
        }
    }
    if terminator.is_some() {
        parse_uri_params(&uri[p + 1..], &mut values)?;
    }
    Ok(values)
}

/// Where a URI's `user[:password]@` part puts things.
pub(crate) struct UserInfo {
    pub user: Option<std::ops::Range<usize>>,
    pub password: Option<std::ops::Range<usize>>,
    /// Where the host list starts.
    pub hosts_start: usize,
}

/// The `user[:password]@` part, if there is an `@` before any `/` (byte ranges, still
/// percent-encoded).
pub(crate) fn uri_user_info(b: &[u8], start: usize) -> UserInfo {
    let mut info = UserInfo {
        user: None,
        password: None,
        hosts_start: start,
    };
    let mut q = start;
    while q < b.len() && b[q] != b'@' && b[q] != b'/' {
        q += 1;
    }
    if q >= b.len() || b[q] != b'@' {
        return info;
    }
    let mut r = start;
    while b[r] != b':' && b[r] != b'@' {
        r += 1;
    }
    info.user = (r > start).then_some(start..r);
    if b[r] == b':' {
        let pw_start = r + 1;
        r = pw_start;
        while b[r] != b'@' {
            r += 1;
        }
        info.password = (r > pw_start).then_some(pw_start..r);
    }
    info.hosts_start = r + 1;
    info
}

/// A bracketed IPv6 host starting at `open` (the `[`): the address's byte range,
/// with libpq's errors for a missing `]`, an empty address or what follows it.
fn uri_ipv6_host(uri: &str, open: usize) -> Result<(usize, usize), String> {
    let b = uri.as_bytes();
    let start = open + 1;
    let mut p = start;
    while p < b.len() && b[p] != b']' {
        p += 1;
    }
    if p >= b.len() {
        return Err(format!("end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"{uri}\""));
    }
    if p == start {
        return Err(format!(
            "IPv6 host address may not be empty in URI: \"{uri}\""
        ));
    }
    let after = p + 1;
    if after < b.len() && !matches!(b[after], b':' | b'/' | b'?' | b',') {
        return Err(format!(
            "unexpected character \"{}\" at position {} in URI (expected \":\" or \"/\"): \"{uri}\"",
            b[after] as char,
            after + 1
        ));
    }
    Ok((start, p))
}

fn parse_uri_params(params: &str, values: &mut Values) -> Result<(), String> {
    let mut rest = params;
    while !rest.is_empty() {
        let (param, next) = rest.split_once('&').unwrap_or((rest, ""));
        rest = next;
        let mut parts = param.splitn(2, '=');
        let key = parts.next().unwrap_or("");
        let value = match parts.next() {
            None => {
                return Err(format!(
                    "missing key/value separator \"=\" in URI query parameter: \"{key}\""
                ))
            }
            Some(v) if v.contains('=') => {
                return Err(format!(
                    "extra key/value separator \"=\" in URI query parameter: \"{key}\""
                ))
            }
            Some(v) => v,
        };
        let key = uri_decode(key)?;
        let value = uri_decode(value)?;
        let (key, value) = if key == "ssl" && value == "true" {
            ("sslmode".to_string(), "require".to_string())
        } else {
            (key, value)
        };
        if keyword_index(&key).is_none() && key != "requiressl" {
            return Err(format!("invalid URI query parameter: \"{key}\""));
        }
        values.store(&key, &value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conninfo_quoting_and_escapes() {
        let v = parse_conninfo(r"host = /tmp  port=5 dbname='my db\'s' user=a\ b").unwrap();
        assert_eq!(v.get("host"), Some("/tmp"));
        assert_eq!(v.get("port"), Some("5"));
        assert_eq!(v.get("dbname"), Some("my db's"));
        assert_eq!(v.get("user"), Some("a b"));
        assert_eq!(parse_conninfo("").unwrap(), Values::new());
    }

    #[test]
    fn conninfo_errors_read_like_libpq() {
        assert_eq!(
            parse_conninfo("host=x foo=1").unwrap_err(),
            "invalid connection option \"foo\""
        );
        assert_eq!(
            parse_conninfo("host").unwrap_err(),
            "missing \"=\" after \"host\" in connection info string"
        );
        assert_eq!(
            parse_conninfo("host x").unwrap_err(),
            "missing \"=\" after \"host\" in connection info string"
        );
        assert_eq!(
            parse_conninfo("host='x").unwrap_err(),
            "unterminated quoted string in connection info string"
        );
        assert_eq!(
            parse_conninfo("requiressl=1").unwrap().get("sslmode"),
            Some("require")
        );
    }

    #[test]
    fn uri_all_parts() {
        let v = parse_uri(
            "postgresql://us%40r:p%3Aw@h1:1,[::1]:2,h3/d%20b?sslmode=require&application_name=x",
        )
        .unwrap();
        assert_eq!(v.get("user"), Some("us@r"));
        assert_eq!(v.get("password"), Some("p:w"));
        assert_eq!(v.get("host"), Some("h1,::1,h3"));
        assert_eq!(v.get("port"), Some("1,2,"));
        assert_eq!(v.get("dbname"), Some("d b"));
        assert_eq!(v.get("sslmode"), Some("require"));
        assert_eq!(v.get("application_name"), Some("x"));
        let v = parse_uri("postgres:///db?host=%2Ftmp%2Fsock&ssl=true").unwrap();
        assert_eq!(v.get("host"), Some("/tmp/sock"));
        assert_eq!(v.get("dbname"), Some("db"));
        assert_eq!(v.get("sslmode"), Some("require"));
        let v = parse_uri("postgresql://").unwrap();
        assert_eq!(v, Values::new());
        let v = parse_uri("postgresql://u@").unwrap();
        assert_eq!(v.get("user"), Some("u"));
        assert_eq!(v.get("host"), None);
    }

    #[test]
    fn uri_errors_read_like_libpq() {
        assert_eq!(
            parse_uri("postgresql://h/?foo=1").unwrap_err(),
            "invalid URI query parameter: \"foo\""
        );
        assert_eq!(
            parse_uri("postgresql://h/?foo").unwrap_err(),
            "missing key/value separator \"=\" in URI query parameter: \"foo\""
        );
        assert_eq!(
            parse_uri("postgresql://h/?a=b=c").unwrap_err(),
            "extra key/value separator \"=\" in URI query parameter: \"a\""
        );
        assert_eq!(
            parse_uri("postgresql://[::1").unwrap_err(),
            "end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"postgresql://[::1\""
        );
        assert_eq!(
            parse_uri("postgresql://[]").unwrap_err(),
            "IPv6 host address may not be empty in URI: \"postgresql://[]\""
        );
        assert_eq!(
            parse_uri("postgresql://[::1]x").unwrap_err(),
            "unexpected character \"x\" at position 19 in URI (expected \":\" or \"/\"): \"postgresql://[::1]x\""
        );
        assert_eq!(
            parse_uri("postgresql://h/d%zz").unwrap_err(),
            "invalid percent-encoded token: \"d%zz\""
        );
        assert_eq!(
            parse_uri("postgresql://h/d%00").unwrap_err(),
            "forbidden value %00 in percent-encoded value: \"d%00\""
        );
    }

    #[test]
    fn recognises_connection_strings() {
        assert!(is_connection_string("postgres://x"));
        assert!(is_connection_string("dbname=x"));
        assert!(!is_connection_string("postgres"));
    }
}
