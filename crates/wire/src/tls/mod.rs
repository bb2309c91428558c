//! TLS with OpenSSL, the library libpq itself uses, set up the way libpq's
//! `initialize_SSL` and `open_client_SSL` (fe-secure-openssl.c) set it up: protocol
//! bounds, the root certificate file (`sslrootcert` or `~/.postgresql/root.crt`) and
//! certificate revocation lists (`sslcrl`, `sslcrldir`, `~/.postgresql/root.crl`), when
//! the chain is verified, the client certificate and key (`sslcert`/`sslkey`, encrypted
//! keys with `sslpassword`), SNI, the handshake under the connection deadline, libpq's
//! error texts, the host-name check of `verify-full` (in `certname`), and the
//! `tls-server-end-point` channel-binding hash.
//!
//! Being libpq's library, OpenSSL accepts and refuses the certificates libpq does (X.509
//! v1 certificates from PostgreSQL's documented `openssl x509 -req` recipe, revoked
//! ones, a self-signed server certificate listed as its own root) without re-implementing
//! any of its checks. Nothing outside this module and `stream` names OpenSSL.
//!
//! `settings` holds what TLS takes from the connection options, `context` builds the
//! OpenSSL context from them; this module caches it, opens sessions and words their
//! failures.

use std::ffi::CString;
use std::net::TcpStream;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::Id;
use openssl::ssl::{ErrorCode, HandshakeError, Ssl, SslContext, SslStream};
use openssl::x509::X509Ref;

use crate::error::strerror;

mod context;
mod settings;

use context::{context, reason};
pub use settings::SslMode;
pub(crate) use settings::{tls_version_rank, TlsSettings};

/// The TLS context one set of options (and their clones) built at its first TLS
/// connection, shared with the later ones (see `cached_context`).
#[derive(Clone, Default)]
pub(crate) struct TlsCache(Arc<Mutex<Option<Prepared>>>);

impl TlsCache {
    fn lock(&self) -> MutexGuard<'_, Option<Prepared>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// An established TLS session over TCP.
pub(crate) type TlsStream = SslStream<TcpStream>;

/// What one set of options' connections share: the context, and what the first
/// handshake learnt of the server's key exchange.
struct Prepared {
    ctx: SslContext,
    key_share: KeyShare,
}

/// Which key-exchange groups a connection offers.
#[derive(Clone)]
enum KeyShare {
    /// No handshake has finished yet: OpenSSL's default list, then learn.
    Unlearnt,
    /// OpenSSL's default list (it starts with the server's group, or the group is
    /// not one of the default list's).
    Default,
    /// The default list with the server's group moved to the front.
    ServersFirst(CString),
}

/// OpenSSL 3.0's default client groups, in its order; the TLS 1.3 key share is for the
/// first.
const DEFAULT_GROUPS: [&str; 10] = [
    "X25519",
    "P-256",
    "X448",
    "P-521",
    "P-384",
    "ffdhe2048",
    "ffdhe3072",
    "ffdhe4096",
    "ffdhe6144",
    "ffdhe8192",
];

/// The context built for one set of options, kept for its later connections (and
/// its clones'): building one (OpenSSL 3's SSL_CTX_new, the root file, the key) costs
/// more client CPU than the handshake itself, which `pgbench -C` pays per
/// transaction. libpq builds one per connection; the only difference is that files
/// changed during a run are not re-read. A failed build is not kept.
fn cached_context(
    settings: &TlsSettings,
    cache: &TlsCache,
) -> Result<(SslContext, KeyShare), String> {
    let mut slot = cache.lock();
    if let Some(p) = slot.as_ref() {
        return Ok((p.ctx.clone(), p.key_share.clone()));
    }
    let ctx = context(settings)?;
    *slot = Some(Prepared {
        ctx: ctx.clone(),
        key_share: KeyShare::Unlearnt,
    });
    Ok((ctx, KeyShare::Unlearnt))
}

/// Why later connections offer the server's group first: PostgreSQL's default
/// `ssl_ecdh_curve` is P-256, OpenSSL's first choice (and so its TLS 1.3 key share)
/// X25519, so every handshake began with a HelloRetryRequest, a round trip and a key
/// pair more, which `-C` pays per transaction (rustls keeps the same hint per server).
/// The full list is still offered: a server that changes its mind costs a retry, as
/// it does libpq.
fn learn_group(cache: &TlsCache, stream: &TlsStream) {
    let Ok(key) = stream.ssl().peer_tmp_key() else {
        return;
    };
    let name = match key.id() {
        Id::X25519 => Some("X25519"),
        Id::X448 => Some("X448"),
        Id::EC => key
            .ec_key()
            .ok()
            .and_then(|k| k.group().curve_name())
            .and_then(|nid| match nid {
                Nid::X9_62_PRIME256V1 => Some("P-256"),
                Nid::SECP384R1 => Some("P-384"),
                Nid::SECP521R1 => Some("P-521"),
                _ => None,
            }),
        _ => None,
    };
    let key_share = match name {
        Some(first) if first != DEFAULT_GROUPS[0] && DEFAULT_GROUPS.contains(&first) => {
            let mut list = vec![first];
            list.extend(DEFAULT_GROUPS.iter().filter(|&&g| g != first));
            CString::new(list.join(":")).map_or(KeyShare::Default, KeyShare::ServersFirst)
        }
        _ => KeyShare::Default,
    };
    if let Some(p) = cache.lock().as_mut() {
        p.key_share = key_share;
    }
}

/// Why a TLS session could not be established.
pub(crate) enum TlsFailure {
    /// libpq's text for the failure.
    Refused(String),
    /// `connect_timeout` ran out during the handshake.
    TimedOut,
}

impl From<String> for TlsFailure {
    fn from(text: String) -> TlsFailure {
        TlsFailure::Refused(text)
    }
}

/// libpq's rule for SNI: the host name, unless it is empty or a literal address.
fn sni_name(host: &str) -> Option<&str> {
    let literal = host.bytes().all(|b| b.is_ascii_digit() || b == b'.') || host.contains(':');
    (!host.is_empty() && !literal).then_some(host)
}

/// Establishes TLS on `tcp` to the host `name` (libpq's `pgtls_open_client`), every
/// wait ending at `deadline`, then checks the host name under `verify-full`. libpq 15
/// gives an entry with only `hostaddr` the default socket directory as its host name,
/// and uses that for SNI and the verify-full check.
pub(crate) fn open(
    settings: &TlsSettings,
    cache: &TlsCache,
    name: &str,
    tcp: TcpStream,
    deadline: Option<Instant>,
) -> Result<TlsStream, TlsFailure> {
    let (ctx, key_share) = cached_context(settings, cache)?;
    let mut ssl = Ssl::new(&ctx)
        .map_err(|e| format!("could not establish SSL connection: {}", reason(&e)))?;
    if let KeyShare::ServersFirst(groups) = &key_share {
        // Refused, the context's default list stands.
        crate::sys::set_tls_groups(&mut ssl, groups);
    }
    if settings.sni {
        if let Some(name) = sni_name(name) {
            ssl.set_hostname(name).map_err(|e| {
                format!(
                    "could not set SSL Server Name Indication (SNI): {}",
                    reason(&e)
                )
            })?;
        }
    }
    let stream = handshake(settings, ssl, tcp, deadline)?;
    if matches!(key_share, KeyShare::Unlearnt) {
        learn_group(cache, &stream);
    }
    let cert = stream
        .ssl()
        .peer_certificate()
        .ok_or_else(|| "certificate could not be obtained: no SSL error reported".to_string())?;
    if settings.sslmode == SslMode::VerifyFull {
        crate::certname::verify_peer_name(&cert, name)?;
    }
    Ok(stream)
}

/// `SSL_connect`, resumed while the socket times out before `deadline`.
fn handshake(
    settings: &TlsSettings,
    ssl: Ssl,
    tcp: TcpStream,
    deadline: Option<Instant>,
) -> Result<TlsStream, TlsFailure> {
    let arm = |tcp: &TcpStream| -> Result<(), TlsFailure> {
        if let Some(deadline) = deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(TlsFailure::TimedOut);
            }
            let _ = tcp.set_read_timeout(Some(left));
            let _ = tcp.set_write_timeout(Some(left));
        }
        Ok(())
    };
    arm(&tcp)?;
    let mut attempt = ssl.connect(tcp);
    loop {
        match attempt {
            Ok(s) => return Ok(s),
            Err(HandshakeError::WouldBlock(mid)) => {
                arm(mid.get_ref())?;
                attempt = mid.handshake();
            }
            Err(HandshakeError::SetupFailure(e)) => {
                return Err(format!("could not establish SSL connection: {}", reason(&e)).into())
            }
            Err(HandshakeError::Failure(mid)) => return Err(describe(settings, mid.error()).into()),
        }
    }
}

/// libpq's wording of a failed `SSL_connect`.
fn describe(settings: &TlsSettings, e: &openssl::ssl::Error) -> String {
    match e.code() {
        ErrorCode::SYSCALL => match e.io_error() {
            Some(io) => format!("SSL SYSCALL error: {}", strerror(io)),
            None => "SSL SYSCALL error: EOF detected".into(),
        },
        ErrorCode::SSL => {
            let Some(stack) = e.ssl_error() else {
                return "SSL error: no SSL error reported".into();
            };
            let why = reason(stack);
            let mut text = format!("SSL error: {why}");
            // The reasons after which libpq hints at disjoint protocol ranges.
            if matches!(
                why.as_str(),
                "no protocols available"
                    | "unsupported protocol"
                    | "bad protocol version number"
                    | "unknown protocol"
                    | "unknown ssl version"
                    | "unsupported ssl version"
                    | "wrong ssl version"
                    | "wrong version number"
                    | "tlsv1 alert protocol version"
                    | "version too high"
                    | "version too low"
            ) {
                text.push_str(&format!(
                    "\nThis may indicate that the server does not support any SSL protocol version between {} and {}.",
                    settings.min_version.as_deref().unwrap_or("TLSv1"),
                    settings.max_version.as_deref().unwrap_or("TLSv1.3"),
                ));
            }
            text
        }
        other => format!("unrecognized SSL error code: {}", other.as_raw()),
    }
}

/// The `tls-server-end-point` channel-binding data: the server certificate's hash
/// with its signature's digest (SHA-256 for MD5 and SHA-1, RFC 5929).
pub(crate) fn server_end_point(cert: &X509Ref) -> Result<Vec<u8>, String> {
    let algorithms = cert
        .signature_algorithm()
        .object()
        .nid()
        .signature_algorithms()
        .ok_or("could not determine server certificate signature algorithm")?;
    let digest = match algorithms.digest {
        Nid::MD5 | Nid::SHA1 => MessageDigest::sha256(),
        nid => MessageDigest::from_nid(nid).ok_or_else(|| {
            format!(
                "could not find digest for NID {}",
                nid.short_name().unwrap_or("UNDEF")
            )
        })?,
    };
    cert.digest(digest)
        .map(|d| d.to_vec())
        .map_err(|_| "could not generate peer certificate hash".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sni_for_host_names_only() {
        assert_eq!(sni_name("db.example"), Some("db.example"));
        assert_eq!(sni_name("127.0.0.1"), None);
        assert_eq!(sni_name("::1"), None);
        assert_eq!(sni_name(""), None);
    }
}
