//! libpq's host-name check of a server certificate (`fe-secure-common.c`
//! `pq_verify_peer_name_matches_certificate_name`), for the certificates webpki alone
//! would refuse: the subject alternative names (dNSName, iPAddress) are checked, and
//! when there are none, the subject's common name, as libpq does. PostgreSQL's own
//! documentation makes server certificates with a CN only
//! (`openssl req -new -x509 ... -subj "/CN=dbhost"`), so `verify-full` must accept them.
//!
//! Only the few DER structures needed are read; anything malformed means "no match".

use std::net::IpAddr;

/// One DER element: tag, contents, and the rest of the input after it.
fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// The elements of a constructed value's contents.
fn children(mut contents: &[u8]) -> Vec<(u8, &[u8])> {
    let mut out = Vec::new();
    while !contents.is_empty() {
        match element(contents) {
            Some((tag, value, rest)) => {
                out.push((tag, value));
                contents = rest;
            }
            None => break,
        }
    }
    out
}

const OID_COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];
const OID_SUBJECT_ALT_NAME: &[u8] = &[0x55, 0x1d, 0x11];

/// The names a certificate is issued for.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CertNames {
    pub dns: Vec<String>,
    pub ips: Vec<IpAddr>,
    pub common_names: Vec<String>,
}

/// Reads the subject alternative names and subject common names of a DER certificate.
pub fn cert_names(der: &[u8]) -> Option<CertNames> {
    let (_, cert, _) = element(der)?;
    let (_, tbs, _) = element(cert)?;
    let fields = children(tbs);
    // version [0] is optional; then serial, signature, issuer, validity, subject, spki.
    let skip = usize::from(fields.first()?.0 == 0xa0);
    let subject = fields.get(skip + 4)?.1;
    let mut names = CertNames::default();
    for (_, rdn) in children(subject) {
        for (_, atv) in children(rdn) {
            let parts = children(atv);
            if let [(0x06, oid), (_, value)] = parts.as_slice() {
                if *oid == OID_COMMON_NAME {
                    names
                        .common_names
                        .push(String::from_utf8_lossy(value).into_owned());
                }
            }
        }
    }
    if let Some((_, exts)) = fields.iter().find(|(tag, _)| *tag == 0xa3) {
        let (_, list, _) = element(exts)?;
        for (_, ext) in children(list) {
            let parts = children(ext);
            let Some((0x06, oid)) = parts.first() else {
                continue;
            };
            if *oid != OID_SUBJECT_ALT_NAME {
                continue;
            }
            // extnValue is the last part (criticality may come between).
            let Some((0x04, value)) = parts.last() else {
                continue;
            };
            let (_, general_names, _) = element(value)?;
            for (tag, name) in children(general_names) {
                match tag {
                    0x82 => names.dns.push(String::from_utf8_lossy(name).into_owned()),
                    0x87 => match name.len() {
                        4 => names
                            .ips
                            .push(IpAddr::from(<[u8; 4]>::try_from(name).ok()?)),
                        16 => names
                            .ips
                            .push(IpAddr::from(<[u8; 16]>::try_from(name).ok()?)),
                        _ => {}
                    },
                    _ => {}
                }
            }
        }
    }
    Some(names)
}

/// Whether the certificate has subject alternative names (then only they count).
pub fn has_alt_names(der: &[u8]) -> bool {
    cert_names(der).is_some_and(|n| !n.dns.is_empty() || !n.ips.is_empty())
}

/// The names libpq checked, for its error message: the alternative names, or else
/// the common names.
pub fn presented_names(der: &[u8]) -> Vec<String> {
    let Some(n) = cert_names(der) else {
        return Vec::new();
    };
    if n.dns.is_empty() && n.ips.is_empty() {
        return n.common_names;
    }
    n.dns
        .into_iter()
        .chain(n.ips.iter().map(|ip| ip.to_string()))
        .collect()
}

/// libpq's `wildcard_certificate_match`: case-insensitive, and a leading `*.` stands
/// for exactly one label of the host name.
fn name_matches(pattern: &str, host: &str) -> bool {
    if pattern.contains('\0') {
        return false;
    }
    if let Some(suffix) = pattern.strip_prefix('*') {
        if !suffix.starts_with('.') || host.len() <= suffix.len() {
            return false;
        }
        let (label, rest) = host.split_at(host.len() - suffix.len());
        return rest.eq_ignore_ascii_case(suffix) && !label.contains('.');
    }
    pattern.eq_ignore_ascii_case(host)
}

/// Whether the certificate is issued for `host` by libpq's rules: subject alternative
/// names if there are any, else the common name.
pub fn matches_host(der: &[u8], host: &str) -> bool {
    let Some(names) = cert_names(der) else {
        return false;
    };
    let host_ip: Option<IpAddr> = host.parse().ok();
    let examined = names.dns.len() + names.ips.len();
    let san_match = match host_ip {
        Some(ip) => names.ips.contains(&ip),
        None => names.dns.iter().any(|d| name_matches(d, host)),
    };
    if san_match {
        return true;
    }
    examined == 0 && names.common_names.iter().any(|cn| name_matches(cn, host))
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
    fn malformed_input_matches_nothing() {
        assert!(!matches_host(&[], "localhost"));
        assert!(!matches_host(&[0x30, 0x82, 0xff], "localhost"));
        assert!(cert_names(&[0x30, 0x03, 0x30, 0x01, 0x00]).is_none());
    }
}
