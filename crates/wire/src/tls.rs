//! TLS with rustls (ring provider) following libpq's `sslmode` rules: which root
//! certificate file is used (`sslrootcert` or `~/.postgresql/root.crt`), when the chain
//! and the host name are verified, client certificates (`sslcert`/`sslkey` or
//! `~/.postgresql/postgresql.{crt,key}`), SNI, protocol-version bounds, and the
//! `tls-server-end-point` channel-binding hash.

use std::fs;
use std::io::BufReader;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, DigitallySignedStruct, Error as TlsError, RootCertStore, SignatureScheme,
};

use ring_crate::digest as ring_digest;

use crate::error::strerror;
use crate::options::{ConnectOptions, SslMode};

/// Everything needed to start a TLS session to one host.
pub(crate) struct TlsSetup {
    pub config: Arc<rustls::ClientConfig>,
    pub server_name: ServerName<'static>,
}

/// How the server certificate is checked.
#[derive(Debug)]
struct Verifier {
    /// `None`: no root certificate, accept any certificate (libpq without root.crt).
    webpki: Option<Arc<WebPkiServerVerifier>>,
    /// The root certificates as given: a self-signed server certificate listed there
    /// is trusted as it is, as OpenSSL trusts it (webpki will not use a CA certificate
    /// as an end entity, which is what PostgreSQL's documented quick set-up makes).
    roots: Vec<CertificateDer<'static>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

fn server_name_text(name: &ServerName<'_>) -> String {
    match name {
        ServerName::DnsName(d) => d.as_ref().to_string(),
        ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        _ => String::new(),
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        let Some(webpki) = &self.webpki else {
            return Ok(ServerCertVerified::assertion());
        };
        let name_ok = || {
            !self.check_name
                || crate::certname::matches_host(end_entity, &server_name_text(server_name))
        };
        // What libpq lists in its "server certificate for ..." message.
        let mismatch = || {
            TlsError::InvalidCertificate(CertificateError::NotValidForNameContext {
                expected: server_name.to_owned(),
                presented: crate::certname::presented_names(end_entity)
                    .into_iter()
                    .map(|n| format!("DnsName({n:?})"))
                    .collect(),
            })
        };
        if self.roots.iter().any(|r| r.as_ref() == end_entity.as_ref()) {
            return if name_ok() {
                Ok(ServerCertVerified::assertion())
            } else {
                Err(mismatch())
            };
        }
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            // The chain is good and only the name failed webpki's check (which knows
            // no common names): verify-ca takes any name, verify-full libpq's rules.
            Err(
                e @ TlsError::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                ),
            ) => {
                if name_ok() {
                    Ok(ServerCertVerified::assertion())
                } else if crate::certname::has_alt_names(end_entity) {
                    Err(e)
                } else {
                    Err(mismatch())
                }
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, std::io::Error> {
    let file = fs::File::open(path)?;
    rustls_pemfile::certs(&mut BufReader::new(file)).collect()
}

fn postgresql_dir(opts: &ConnectOptions) -> Option<PathBuf> {
    opts.home.as_ref().map(|h| h.join(".postgresql"))
}

/// Builds the client configuration for `host` (the name used for verification and SNI).
/// Errors are libpq's texts.
pub(crate) fn setup(opts: &ConnectOptions, host: &str) -> Result<TlsSetup, String> {
    let provider = Arc::new(ring::default_provider());
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = {
        let min = opts.value("ssl_min_protocol_version").unwrap_or("TLSv1.2");
        let max = opts.value("ssl_max_protocol_version");
        let mut v = Vec::new();
        if min != "TLSv1.3" && max != Some("TLSv1") && max != Some("TLSv1.1") {
            v.push(&rustls::version::TLS12);
        }
        if !matches!(max, Some("TLSv1" | "TLSv1.1" | "TLSv1.2")) {
            v.push(&rustls::version::TLS13);
        }
        if v.is_empty() {
            return Err("invalid SSL protocol version range".into());
        }
        v
    };

    let root_file = match opts.value("sslrootcert") {
        Some(f) => Some(PathBuf::from(f)),
        None => postgresql_dir(opts).map(|d| d.join("root.crt")),
    };
    let verify = matches!(opts.sslmode, SslMode::VerifyCa | SslMode::VerifyFull);
    let mut root_ders = Vec::new();
    let webpki = match root_file.as_ref().filter(|f| f.exists()) {
        Some(file) => {
            let certs = read_certs(file).map_err(|e| {
                format!(
                    "could not read root certificate file \"{}\": {}",
                    file.display(),
                    strerror(&e)
                )
            })?;
            let mut roots = RootCertStore::empty();
            for cert in certs {
                root_ders.push(cert.clone());
                roots.add(cert).map_err(|e| {
                    format!(
                        "could not read root certificate file \"{}\": {e}",
                        file.display()
                    )
                })?;
            }
            if roots.is_empty() {
                return Err(format!(
                    "could not read root certificate file \"{}\": no certificate found",
                    file.display()
                ));
            }
            let v = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| {
                    format!(
                        "could not read root certificate file \"{}\": {e}",
                        file.display()
                    )
                })?;
            Some(v)
        }
        None if verify => {
            return Err(match root_file {
                Some(f) => format!("root certificate file \"{}\" does not exist\nEither provide the file or change sslmode to disable server certificate verification.", f.display()),
                None => "could not get home directory to locate root certificate file\nEither provide the file or change sslmode to disable server certificate verification.".into(),
            });
        }
        None => None,
    };
    let verifier = Arc::new(Verifier {
        webpki,
        roots: root_ders,
        check_name: opts.sslmode == SslMode::VerifyFull,
        provider: provider.clone(),
    });
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| format!("SSL error: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match client_certificate(opts)? {
        Some((certs, key)) => builder
            .with_client_auth_cert(certs, key)
            .map_err(|e| format!("SSL error: {e}"))?,
        None => builder.with_no_client_auth(),
    };
    let is_ip = host.parse::<std::net::IpAddr>().is_ok();
    config.enable_sni = !is_ip && opts.value("sslsni").unwrap_or("1") != "0";
    let server_name = ServerName::try_from(host.to_string())
        .unwrap_or_else(|_| ServerName::try_from("localhost").expect("valid name"));
    Ok(TlsSetup {
        config: Arc::new(config),
        server_name,
    })
}

type ClientCert = (
    Vec<CertificateDer<'static>>,
    rustls::pki_types::PrivateKeyDer<'static>,
);

/// The client certificate and key, if a certificate file exists (libpq silently goes
/// without one when the file is missing).
fn client_certificate(opts: &ConnectOptions) -> Result<Option<ClientCert>, String> {
    let dir = postgresql_dir(opts);
    let cert_file = match opts.value("sslcert") {
        Some(f) => PathBuf::from(f),
        None => match &dir {
            Some(d) => d.join("postgresql.crt"),
            None => return Ok(None),
        },
    };
    if !cert_file.exists() {
        return Ok(None);
    }
    let certs = read_certs(&cert_file).map_err(|e| {
        format!(
            "could not open certificate file \"{}\": {}",
            cert_file.display(),
            strerror(&e)
        )
    })?;
    if certs.is_empty() {
        return Err(format!(
            "could not read certificate file \"{}\": no certificate found",
            cert_file.display()
        ));
    }
    let key_file = match opts.value("sslkey") {
        Some(f) => PathBuf::from(f),
        None => match &dir {
            Some(d) => d.join("postgresql.key"),
            None => return Ok(None),
        },
    };
    let meta = fs::metadata(&key_file).map_err(|_| {
        format!(
            "certificate present, but not private key file \"{}\"",
            key_file.display()
        )
    })?;
    if !meta.is_file() {
        return Err(format!(
            "private key file \"{}\" is not a regular file",
            key_file.display()
        ));
    }
    let mode = meta.permissions().mode();
    let too_open = if meta.uid() == crate::sys::euid() {
        mode & 0o077 != 0
    } else {
        meta.uid() == 0 && mode & 0o037 != 0
    };
    if too_open {
        return Err(format!("private key file \"{}\" has group or world access; file must have permissions u=rw (0600) or less if owned by the current user, or permissions u=rw,g=r (0640) or less if owned by root", key_file.display()));
    }
    let file = fs::File::open(&key_file).map_err(|e| {
        format!(
            "could not load private key file \"{}\": {}",
            key_file.display(),
            strerror(&e)
        )
    })?;
    let key = rustls_pemfile::private_key(&mut BufReader::new(file))
        .ok()
        .flatten()
        .ok_or_else(|| {
            format!(
                "could not load private key file \"{}\": no private key found",
                key_file.display()
            )
        })?;
    Ok(Some((certs, key)))
}

/// A name from webpki's list (`DnsName("x")`, `IpAddress(1.2.3.4)`) as libpq shows it.
fn presented_name(debug: &str) -> Option<&str> {
    if let Some(rest) = debug.strip_prefix("DnsName(\"") {
        return rest.strip_suffix("\")");
    }
    debug.strip_prefix("IpAddress(")?.strip_suffix(')')
}

/// libpq's wording for a failed handshake.
pub(crate) fn describe_error(err: &TlsError, host: &str) -> String {
    match err {
        TlsError::InvalidCertificate(CertificateError::NotValidForNameContext {
            presented,
            ..
        }) => {
            let names: Vec<&str> = presented.iter().filter_map(|p| presented_name(p)).collect();
            match names.as_slice() {
                [] => "could not get server's host name from server certificate".into(),
                [one] => format!(
                    "server certificate for \"{one}\" does not match host name \"{host}\""
                ),
                [first, rest @ ..] => format!(
                    "server certificate for \"{first}\" (and {} other name{}) does not match host name \"{host}\"",
                    rest.len(),
                    if rest.len() == 1 { "" } else { "s" }
                ),
            }
        }
        TlsError::InvalidCertificate(CertificateError::NotValidForName) => {
            format!("server certificate does not match host name \"{host}\"")
        }
        TlsError::InvalidCertificate(_) => "SSL error: certificate verify failed".into(),
        other => format!("SSL error: {other}"),
    }
}

/// The `tls-server-end-point` channel-binding data: the server certificate's hash with
/// the certificate's signature hash (SHA-256 for MD5/SHA-1/SHA-256, else SHA-384/512).
pub(crate) fn server_end_point(cert: &[u8]) -> Vec<u8> {
    let alg = match signature_hash(cert) {
        SigHash::Sha384 => &ring_digest::SHA384,
        SigHash::Sha512 => &ring_digest::SHA512,
        SigHash::Sha256 => &ring_digest::SHA256,
    };
    ring_digest::digest(alg, cert).as_ref().to_vec()
}

enum SigHash {
    Sha256,
    Sha384,
    Sha512,
}

/// Reads the certificate's outer signatureAlgorithm OID (RFC 5929: MD5 and SHA-1 map to
/// SHA-256).
fn signature_hash(cert: &[u8]) -> SigHash {
    // DER: SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm SEQUENCE { OID ... } }
    fn header(b: &[u8]) -> Option<(u8, usize, usize)> {
        let tag = *b.first()?;
        let first = *b.get(1)? as usize;
        if first < 0x80 {
            return Some((tag, 2, first));
        }
        let n = first & 0x7f;
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = (len << 8) | *b.get(2 + i)? as usize;
        }
        Some((tag, 2 + n, len))
    }
    let inner = || -> Option<Vec<u8>> {
        let (_, hl, _) = header(cert)?;
        let body = cert.get(hl..)?;
        let (_, tbs_hl, tbs_len) = header(body)?;
        let alg = body.get(tbs_hl + tbs_len..)?;
        let (_, alg_hl, _) = header(alg)?;
        let oid = alg.get(alg_hl..)?;
        let (tag, oid_hl, oid_len) = header(oid)?;
        (tag == 0x06).then(|| oid.get(oid_hl..oid_hl + oid_len).map(<[u8]>::to_vec))?
    };
    const SHA384_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0c];
    const SHA512_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0d];
    const ECDSA_SHA384: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03];
    const ECDSA_SHA512: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04];
    match inner().as_deref() {
        Some(SHA384_RSA | ECDSA_SHA384) => SigHash::Sha384,
        Some(SHA512_RSA | ECDSA_SHA512) => SigHash::Sha512,
        _ => SigHash::Sha256,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ConnectArgs;

    fn options(conninfo: &str) -> ConnectOptions {
        let env = |k: &str| (k == "HOME").then(|| "/nonexistent".to_string());
        let args = ConnectArgs {
            dbname: Some(conninfo.into()),
            ..ConnectArgs::default()
        };
        ConnectOptions::from_env_and_args(&env, &args).unwrap()
    }

    #[test]
    fn sni_for_host_names_only() {
        let sni =
            |conninfo: &str, host: &str| setup(&options(conninfo), host).unwrap().config.enable_sni;
        assert!(sni("sslmode=require", "db.example"));
        assert!(!sni("sslmode=require", "127.0.0.1"));
        assert!(!sni("sslmode=require", "::1"));
        assert!(!sni("sslmode=require sslsni=0", "db.example"));
    }

    #[test]
    fn verify_modes_need_a_root_certificate() {
        let e = setup(&options("sslmode=verify-ca"), "h").err().unwrap();
        assert_eq!(e, "root certificate file \"/nonexistent/.postgresql/root.crt\" does not exist\nEither provide the file or change sslmode to disable server certificate verification.");
        assert!(setup(&options("sslmode=require"), "h").is_ok());
    }

    #[test]
    fn protocol_version_bounds() {
        let e = setup(
            &options(
                "sslmode=require ssl_min_protocol_version=TLSv1.3 ssl_max_protocol_version=TLSv1.2",
            ),
            "h",
        )
        .err()
        .unwrap();
        assert_eq!(e, "invalid SSL protocol version range");
    }

    #[test]
    fn names_from_webpki() {
        assert_eq!(presented_name("DnsName(\"a.example\")"), Some("a.example"));
        assert_eq!(presented_name("IpAddress(127.0.0.1)"), Some("127.0.0.1"));
        assert_eq!(presented_name("DirectoryName"), None);
    }
}
