//! What TLS takes from the connection options: `sslmode`, libpq's other `ssl*`
//! keywords and where their files default to; the protocol version names.

use std::path::{Path, PathBuf};

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// Plain first, TLS if the server rejects the plain connection.
    Allow,
    /// TLS first, plain if TLS is refused or the server rejects the TLS connection.
    Prefer,
    /// TLS only; certificate verified only if a root certificate file exists.
    Require,
    /// TLS, certificate chain verified.
    VerifyCa,
    /// TLS, certificate chain and host name verified.
    VerifyFull,
}

/// What TLS takes from the connection options: `sslmode` and libpq's other `ssl*`
/// keywords as given (`None` = not given or empty), and the directory their files
/// default to. No `Debug`: it holds `sslpassword`.
#[derive(Clone)]
pub(crate) struct TlsSettings {
    pub(crate) sslmode: SslMode,
    /// `~/.postgresql`, where the certificate, key, root and CRL files default to.
    pub(crate) dir: Option<PathBuf>,
    /// `sslrootcert`, `sslcrl`, `sslcrldir`.
    pub(crate) root_cert: Option<String>,
    pub(crate) crl: Option<String>,
    pub(crate) crl_dir: Option<String>,
    /// `sslcert`, `sslkey` and its `sslpassword`.
    pub(crate) certificate: Option<String>,
    pub(crate) key: Option<String>,
    pub(crate) key_password: Option<String>,
    /// `sslcompression=1`.
    pub(crate) compression: bool,
    /// `sslsni` (default on).
    pub(crate) sni: bool,
    /// `ssl_min_protocol_version`, `ssl_max_protocol_version` (validated names).
    pub(crate) min_version: Option<String>,
    pub(crate) max_version: Option<String>,
}

impl TlsSettings {
    /// The settings from the options' keyword values (`value` gives a keyword's value
    /// after defaults, `None` when empty) and the home directory.
    pub(crate) fn new<'a>(
        sslmode: SslMode,
        home: Option<&Path>,
        value: impl Fn(&str) -> Option<&'a str>,
    ) -> TlsSettings {
        let owned = |keyword: &str| value(keyword).map(str::to_string);
        TlsSettings {
            sslmode,
            dir: home.map(|h| h.join(".postgresql")),
            root_cert: owned("sslrootcert"),
            crl: owned("sslcrl"),
            crl_dir: owned("sslcrldir"),
            certificate: owned("sslcert"),
            key: owned("sslkey"),
            key_password: owned("sslpassword"),
            compression: !matches!(value("sslcompression"), None | Some("0")),
            sni: value("sslsni").unwrap_or("1") == "1",
            min_version: owned("ssl_min_protocol_version"),
            max_version: owned("ssl_max_protocol_version"),
        }
    }
}

/// The order of a TLS protocol version name as libpq accepts it (case-insensitive):
/// 0 for TLSv1 up to 3 for TLSv1.3.
pub(crate) fn tls_version_rank(name: &str) -> Option<u8> {
    ["tlsv1", "tlsv1.1", "tlsv1.2", "tlsv1.3"]
        .iter()
        .position(|v| v.eq_ignore_ascii_case(name))
        .map(|i| i as u8)
}
