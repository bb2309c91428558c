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

use std::ffi::CString;
use std::fs;
use std::io;
use std::net::TcpStream;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use openssl::error::ErrorStack;
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private};
use openssl::ssl::{
    ErrorCode, HandshakeError, Ssl, SslContext, SslContextBuilder, SslFiletype, SslMethod,
    SslMode as OpensslMode, SslOptions, SslStream, SslVerifyMode, SslVersion,
};
use openssl::x509::store::X509Lookup;
use openssl::x509::verify::X509VerifyFlags;
use openssl::x509::X509Ref;

use crate::error::strerror;
use crate::options::{ConnectOptions, HostEntry, SslMode};

/// An established TLS session over TCP.
pub(crate) type TlsStream = SslStream<TcpStream>;

/// What one set of options' connections share: the context, and what the first
/// handshake learnt of the server's key exchange.
pub(crate) struct Prepared {
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
fn cached_context(opts: &ConnectOptions) -> Result<(SslContext, KeyShare), String> {
    let mut slot = opts
        .tls_context
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(p) = slot.as_ref() {
        return Ok((p.ctx.clone(), p.key_share.clone()));
    }
    let ctx = context(opts)?;
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
fn learn_group(opts: &ConnectOptions, stream: &TlsStream) {
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
    let mut slot = opts
        .tls_context
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(p) = slot.as_mut() {
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

/// OpenSSL's reason for the earliest queued error, as libpq's `SSLerrmessage` words it.
fn reason(stack: &ErrorStack) -> String {
    match stack.errors().first() {
        None => "no SSL error reported".into(),
        Some(e) => match e.reason() {
            Some(r) => r.to_string(),
            None => format!("SSL error code {}", e.code()),
        },
    }
}

fn postgresql_dir(opts: &ConnectOptions) -> Option<PathBuf> {
    opts.home.as_ref().map(|h| h.join(".postgresql"))
}

/// A connection option naming a file, or its default in `~/.postgresql`.
fn file_option(opts: &ConnectOptions, keyword: &str, default: &str) -> Option<PathBuf> {
    match opts.value(keyword) {
        Some(f) => Some(PathBuf::from(f)),
        None => postgresql_dir(opts).map(|d| d.join(default)),
    }
}

fn protocol_version(name: &str) -> Option<SslVersion> {
    match crate::options::tls_version_rank(name)? {
        0 => Some(SslVersion::TLS1),
        1 => Some(SslVersion::TLS1_1),
        2 => Some(SslVersion::TLS1_2),
        _ => Some(SslVersion::TLS1_3),
    }
}

/// The per-connection context: protocol bounds, root certificates and CRLs, the
/// client certificate and key. libpq builds one per connection too, so a changed file
/// is seen by the next connection.
fn context(opts: &ConnectOptions) -> Result<SslContext, String> {
    let mut ctx = SslContextBuilder::new(SslMethod::tls_client())
        .map_err(|e| format!("could not create SSL context: {}", reason(&e)))?;
    ctx.set_options(SslOptions::NO_SSLV2 | SslOptions::NO_SSLV3);
    // Options were validated when parsed; the values are libpq's four names.
    if let Some(v) = opts.value("ssl_min_protocol_version") {
        ctx.set_min_proto_version(protocol_version(v))
            .map_err(|e| format!("could not set minimum SSL protocol version: {}", reason(&e)))?;
    }
    if let Some(v) = opts.value("ssl_max_protocol_version") {
        ctx.set_max_proto_version(protocol_version(v))
            .map_err(|e| format!("could not set maximum SSL protocol version: {}", reason(&e)))?;
    }
    // A non-blocking write that must be retried may see the buffer moved.
    ctx.set_mode(OpensslMode::ACCEPT_MOVING_WRITE_BUFFER);
    let have_root = root_certificates(&mut ctx, opts)?;
    ctx.set_verify(if have_root {
        SslVerifyMode::PEER
    } else {
        SslVerifyMode::NONE
    });
    if client_certificate(&mut ctx, opts)? {
        client_key(&mut ctx, opts)?;
    }
    if opts.value("sslcompression") == Some("0") || opts.value("sslcompression").is_none() {
        ctx.set_options(SslOptions::NO_COMPRESSION);
    } else {
        ctx.clear_options(SslOptions::NO_COMPRESSION);
    }
    Ok(ctx.build())
}

/// Loads the root certificate file and the CRLs if it exists; whether it does.
fn root_certificates(ctx: &mut SslContextBuilder, opts: &ConnectOptions) -> Result<bool, String> {
    let verify = matches!(opts.sslmode, SslMode::VerifyCa | SslMode::VerifyFull);
    let root = file_option(opts, "sslrootcert", "root.crt");
    let Some(file) = root.as_ref().filter(|f| fs::metadata(f).is_ok()) else {
        if !verify {
            return Ok(false);
        }
        return Err(match root {
            Some(f) => format!("root certificate file \"{}\" does not exist\nEither provide the file or change sslmode to disable server certificate verification.", f.display()),
            None => "could not get home directory to locate root certificate file\nEither provide the file or change sslmode to disable server certificate verification.".into(),
        });
    };
    ctx.set_ca_file(file).map_err(|e| {
        format!(
            "could not read root certificate file \"{}\": {}",
            file.display(),
            reason(&e)
        )
    })?;
    let crl_file = opts.value("sslcrl").map(PathBuf::from);
    let crl_dir = opts.value("sslcrldir");
    let crl_file = match (crl_file, crl_dir) {
        (None, None) => postgresql_dir(opts).map(|d| d.join("root.crl")),
        (f, _) => f,
    };
    // As X509_STORE_load_locations: every location given must load; a missing CRL is
    // silently ignored (libpq does not require one), but once one loads, every
    // certificate of the chain must be covered by a CRL.
    let store = ctx.cert_store_mut();
    let mut loaded = crl_file.is_some() || crl_dir.is_some();
    if let Some(f) = &crl_file {
        let lookup = store
            .add_lookup(X509Lookup::file())
            .map_err(|e| reason(&e))?;
        loaded &= lookup.load_crl_file(f, SslFiletype::PEM).is_ok()
            || lookup.load_cert_file(f, SslFiletype::PEM).is_ok();
    }
    if let Some(d) = crl_dir.filter(|_| loaded) {
        let lookup = store
            .add_lookup(X509Lookup::hash_dir())
            .map_err(|e| reason(&e))?;
        loaded &= lookup.add_dir(d, SslFiletype::PEM).is_ok();
    }
    if loaded {
        store
            .set_flags(X509VerifyFlags::CRL_CHECK | X509VerifyFlags::CRL_CHECK_ALL)
            .map_err(|e| reason(&e))?;
    }
    Ok(true)
}

/// Loads the client certificate chain if its file exists (libpq goes without one when
/// it does not); whether it was loaded.
fn client_certificate(ctx: &mut SslContextBuilder, opts: &ConnectOptions) -> Result<bool, String> {
    let Some(file) = file_option(opts, "sslcert", "postgresql.crt") else {
        return Ok(false);
    };
    if let Err(e) = fs::metadata(&file) {
        if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) {
            return Ok(false);
        }
        return Err(format!(
            "could not open certificate file \"{}\": {}",
            file.display(),
            strerror(&e)
        ));
    }
    ctx.set_certificate_chain_file(&file).map_err(|e| {
        format!(
            "could not read certificate file \"{}\": {}",
            file.display(),
            reason(&e)
        )
    })?;
    Ok(true)
}

/// Loads the private key of the client certificate and checks that they match.
fn client_key(ctx: &mut SslContextBuilder, opts: &ConnectOptions) -> Result<(), String> {
    let Some(file) = file_option(opts, "sslkey", "postgresql.key") else {
        return Ok(());
    };
    let shown = file.display();
    let meta = fs::metadata(&file).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            format!("certificate present, but not private key file \"{shown}\"")
        } else {
            format!(
                "could not stat private key file \"{shown}\": {}",
                strerror(&e)
            )
        }
    })?;
    if !meta.is_file() {
        return Err(format!(
            "private key file \"{shown}\" is not a regular file"
        ));
    }
    // Root-owned keys may be group-readable (system-wide keys); others 0600 or less.
    let mode = meta.permissions().mode();
    let too_open = if meta.uid() == 0 {
        mode & 0o037 != 0
    } else {
        mode & 0o077 != 0
    };
    if too_open {
        return Err(format!("private key file \"{shown}\" has group or world access; file must have permissions u=rw (0600) or less if owned by the current user, or permissions u=rw,g=r (0640) or less if owned by root"));
    }
    // Loading checks the key against the certificate already loaded, so a key of
    // another certificate is "could not load ...: key values mismatch", as in libpq.
    read_private_key(&file, opts.value("sslpassword"))
        .and_then(|key| ctx.set_private_key(&key).map_err(|e| reason(&e)))
        .map_err(|e| format!("could not load private key file \"{shown}\": {e}"))?;
    ctx.check_private_key().map_err(|e| {
        format!(
            "certificate does not match private key file \"{shown}\": {}",
            reason(&e)
        )
    })
}

/// Reads a private key as `SSL_use_PrivateKey_file` does for libpq: PEM (decrypted
/// with `sslpassword`, PKCS#8 or traditional OpenSSL encryption), else DER; the PEM
/// attempt's error if both fail.
fn read_private_key(file: &Path, password: Option<&str>) -> Result<PKey<Private>, String> {
    let data = fs::read(file).map_err(|e| strerror(&e))?;
    // OpenSSL 3.0's decoders, first used from several threads at once, can fail an
    // encrypted PKCS#8 key with "unsupported" (seen with connections made in parallel);
    // a key is read once per TLS context, so one at a time costs nothing.
    static DECODING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = DECODING.lock().unwrap_or_else(|e| e.into_inner());
    let pem = match password {
        Some(pw) => PKey::private_key_from_pem_passphrase(&data, pw.as_bytes()),
        // libpq installs no callback then, so OpenSSL's own prompt asks for the pass
        // phrase ("Enter PEM pass phrase:" on the terminal, else stderr and stdin).
        None => PKey::private_key_from_pem(&data),
    };
    match pem {
        Ok(k) => Ok(k),
        Err(pem_error) => PKey::private_key_from_der(&data).map_err(|_| reason(&pem_error)),
    }
}

/// libpq's rule for SNI: the host name, unless it is empty or a literal address.
fn sni_name(host: &str) -> Option<&str> {
    let literal = host.bytes().all(|b| b.is_ascii_digit() || b == b'.') || host.contains(':');
    (!host.is_empty() && !literal).then_some(host)
}

/// Establishes TLS on `tcp` for `host` (libpq's `pgtls_open_client`), every wait
/// ending at `deadline`, then checks the host name under `verify-full`.
pub(crate) fn open(
    opts: &ConnectOptions,
    host: &HostEntry,
    tcp: TcpStream,
    deadline: Option<Instant>,
) -> Result<TlsStream, TlsFailure> {
    let (ctx, key_share) = cached_context(opts)?;
    let mut ssl = Ssl::new(&ctx)
        .map_err(|e| format!("could not establish SSL connection: {}", reason(&e)))?;
    if let KeyShare::ServersFirst(groups) = &key_share {
        // Refused, the context's default list stands.
        crate::sys::set_tls_groups(&mut ssl, groups);
    }
    // libpq 15 gives an entry with only `hostaddr` the default socket directory as
    // its host name, and uses that for SNI and the verify-full check.
    let name = host.reported_name();
    if opts.value("sslsni").unwrap_or("1") == "1" {
        if let Some(name) = sni_name(name) {
            ssl.set_hostname(name).map_err(|e| {
                format!(
                    "could not set SSL Server Name Indication (SNI): {}",
                    reason(&e)
                )
            })?;
        }
    }
    let stream = handshake(opts, ssl, tcp, deadline)?;
    if matches!(key_share, KeyShare::Unlearnt) {
        learn_group(opts, &stream);
    }
    let cert = stream
        .ssl()
        .peer_certificate()
        .ok_or_else(|| "certificate could not be obtained: no SSL error reported".to_string())?;
    if opts.sslmode == SslMode::VerifyFull {
        crate::certname::verify_peer_name(&cert, name)?;
    }
    Ok(stream)
}

/// `SSL_connect`, resumed while the socket times out before `deadline`.
fn handshake(
    opts: &ConnectOptions,
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
            Err(HandshakeError::Failure(mid)) => return Err(describe(opts, mid.error()).into()),
        }
    }
}

/// libpq's wording of a failed `SSL_connect`.
fn describe(opts: &ConnectOptions, e: &openssl::ssl::Error) -> String {
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
                    opts.value("ssl_min_protocol_version").unwrap_or("TLSv1"),
                    opts.value("ssl_max_protocol_version").unwrap_or("TLSv1.3"),
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
        assert_eq!(sni_name("db.example"), Some("db.example"));
        assert_eq!(sni_name("127.0.0.1"), None);
        assert_eq!(sni_name("::1"), None);
        assert_eq!(sni_name(""), None);
    }

    #[test]
    fn verify_modes_need_a_root_certificate() {
        let e = context(&options("sslmode=verify-ca")).err().unwrap();
        assert_eq!(e, "root certificate file \"/nonexistent/.postgresql/root.crt\" does not exist\nEither provide the file or change sslmode to disable server certificate verification.");
        assert!(context(&options("sslmode=require")).is_ok());
    }
}

#[cfg(test)]
mod key_tests {
    use super::*;

    /// An RSA key encrypted with `openssl` in `format` ("pkcs8" or "traditional").
    fn encrypted_key(dir: &Path, format: &str) -> PathBuf {
        let plain = dir.join("plain.key");
        let out = dir.join(format!("{format}.key"));
        let run = |args: &[&str]| {
            let ok = std::process::Command::new("openssl")
                .args(args)
                .output()
                .expect("the openssl tool")
                .status
                .success();
            assert!(ok, "openssl {args:?}");
        };
        run(&["genrsa", "-out", plain.to_str().unwrap(), "2048"]);
        let (p, o) = (plain.to_str().unwrap(), out.to_str().unwrap());
        match format {
            "pkcs8" => run(&[
                "pkcs8",
                "-topk8",
                "-in",
                p,
                "-out",
                o,
                "-v2",
                "aes-256-cbc",
                "-passout",
                "pass:right",
            ]),
            _ => run(&[
                "rsa",
                "-in",
                p,
                "-out",
                o,
                "-aes256",
                "-traditional",
                "-passout",
                "pass:right",
            ]),
        }
        out
    }

    #[test]
    fn wrong_key_passwords_are_openssls_bad_decrypt() {
        let dir = tempfile::tempdir().unwrap();
        for format in ["pkcs8", "traditional"] {
            let key = encrypted_key(dir.path(), format);
            assert!(read_private_key(&key, Some("right")).is_ok(), "{format}");
            let e = read_private_key(&key, Some("wrong")).err().unwrap();
            assert_eq!(e, "bad decrypt", "{format}");
        }
    }
}
