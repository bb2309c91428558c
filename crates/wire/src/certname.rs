//! libpq's host-name check of the server certificate under `verify-full`
//! (`pq_verify_peer_name_matches_certificate` and its OpenSSL half): subject
//! alternative names of the host's type (dNSName for a name, iPAddress for an
//! address) decide; when there is none of that type, the first common name does.
//! The mismatch message names the first name examined and counts the others.

use std::net::IpAddr;

use openssl::nid::Nid;
use openssl::x509::X509Ref;

/// libpq's `wildcard_certificate_match`: case-insensitive, and a leading `*.` stands
/// for exactly one label of the host name.
fn name_matches(pattern: &str, host: &str) -> bool {
    if let Some(suffix) = pattern.strip_prefix('*') {
        if !suffix.starts_with('.') || host.len() <= suffix.len() {
            return false;
        }
        let (label, rest) = host.split_at(host.len() - suffix.len());
        return rest.eq_ignore_ascii_case(suffix) && !label.contains('.');
    }
    pattern.eq_ignore_ascii_case(host)
}

/// One name of the certificate checked against the host: whether it matched.
fn dns_name_matches(name: &[u8], host: &str) -> Result<bool, String> {
    // A NUL inside the name could make "a.example\0.evil" pass as "a.example".
    if name.contains(&0) {
        return Err("SSL certificate's name contains embedded null".into());
    }
    Ok(name_matches(&String::from_utf8_lossy(name), host))
}

/// libpq's `is_ip_address` (`inet_aton` also takes forms like `127.1`).
fn host_address(host: &str) -> Option<IpAddr> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Some(ip);
    }
    let c = std::ffi::CString::new(host).ok()?;
    crate::sys::ipv4_address(&c).map(IpAddr::from)
}

/// The result of examining a certificate's names.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Examined {
    pub matched: bool,
    pub count: usize,
    pub first: Option<String>,
}

/// Examines the certificate's names against `host` in libpq's order.
pub(crate) fn examine(cert: &X509Ref, host: &str) -> Result<Examined, String> {
    let ip = host_address(host);
    let mut out = Examined::default();
    let mut check_cn = true;
    for name in cert.subject_alt_names().iter().flatten() {
        let (text, matched) = if let Some(dns) = name.dnsname() {
            if ip.is_none() {
                check_cn = false;
            }
            (dns.to_string(), dns_name_matches(dns.as_bytes(), host)?)
        } else if let Some(bytes) = name.ipaddress() {
            if ip.is_some() {
                check_cn = false;
            }
            let presented = match bytes.len() {
                4 => IpAddr::from(<[u8; 4]>::try_from(bytes).unwrap_or_default()),
                16 => IpAddr::from(<[u8; 16]>::try_from(bytes).unwrap_or_default()),
                _ => return Err("SSL certificate's address entry is missing".into()),
            };
            (presented.to_string(), ip == Some(presented))
        } else {
            continue;
        };
        out.count += 1;
        out.first.get_or_insert(text);
        if matched {
            out.matched = true;
            return Ok(out);
        }
    }
    if check_cn {
        if let Some(cn) = cert.subject_name().entries_by_nid(Nid::COMMONNAME).next() {
            let value = cn.data().as_slice();
            out.count += 1;
            out.first
                .get_or_insert_with(|| String::from_utf8_lossy(value).into_owned());
            out.matched = dns_name_matches(value, host)?;
        }
    }
    Ok(out)
}

/// `verify-full`'s check after the handshake; `host` is the `host` option of the
/// entry connected to (never `hostaddr`). Err is libpq's text.
pub(crate) fn verify_peer_name(cert: &X509Ref, host: &str) -> Result<(), String> {
    if host.is_empty() {
        return Err("host name must be specified for a verified SSL connection".into());
    }
    let e = examine(cert, host)?;
    if e.matched {
        return Ok(());
    }
    let first = e.first.unwrap_or_default();
    Err(match e.count {
        0 => "could not get server's host name from server certificate".into(),
        1 => format!("server certificate for \"{first}\" does not match host name \"{host}\""),
        n => format!(
            "server certificate for \"{first}\" (and {} other name{}) does not match host name \"{host}\"",
            n - 1,
            if n == 2 { "" } else { "s" }
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_cover_one_label() {
        assert!(name_matches("*.example.com", "db.example.com"));
        assert!(name_matches("*.Example.COM", "DB.example.com"));
        assert!(!name_matches("*.example.com", "a.b.example.com"));
        assert!(!name_matches("*.example.com", "example.com"));
        assert!(name_matches("db.example.com", "DB.EXAMPLE.COM"));
        assert!(!name_matches("db.example.com", "dbx.example.com"));
    }

    #[test]
    fn embedded_nul_is_refused() {
        assert!(dns_name_matches(b"a.example\0.evil", "a.example").is_err());
    }

    #[test]
    fn addresses_as_inet_aton_reads_them() {
        assert_eq!(
            host_address("127.0.0.1"),
            Some(IpAddr::from([127, 0, 0, 1]))
        );
        assert_eq!(host_address("127.1"), Some(IpAddr::from([127, 0, 0, 1])));
        assert_eq!(host_address("::1"), "::1".parse().ok());
        assert_eq!(host_address("localhost"), None);
    }
}
