//! The OpenSSL context built from the settings, as libpq's `initialize_SSL` builds
//! it: protocol bounds, the root certificate file and CRLs, the client certificate
//! and its key (encrypted keys with `sslpassword`).

use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use openssl::error::ErrorStack;
use openssl::pkey::{PKey, Private};
use openssl::ssl::{
    SslContext, SslContextBuilder, SslFiletype, SslMethod, SslMode as OpensslMode, SslOptions,
    SslVerifyMode, SslVersion,
};
use openssl::x509::store::X509Lookup;
use openssl::x509::verify::X509VerifyFlags;

use super::settings::{tls_version_rank, SslMode, TlsSettings};
use crate::error::strerror;

/// OpenSSL's reason for the earliest queued error, as libpq's `SSLerrmessage` words it.
pub(super) fn reason(stack: &ErrorStack) -> String {
    match stack.errors().first() {
        None => "no SSL error reported".into(),
        Some(e) => match e.reason() {
            Some(r) => r.to_string(),
            None => format!("SSL error code {}", e.code()),
        },
    }
}

/// A connection option naming a file, or its default in `~/.postgresql`.
fn file_option(settings: &TlsSettings, given: &Option<String>, default: &str) -> Option<PathBuf> {
    match given {
        Some(f) => Some(PathBuf::from(f)),
        None => settings.dir.as_ref().map(|d| d.join(default)),
    }
}

fn protocol_version(name: &str) -> Option<SslVersion> {
    match tls_version_rank(name)? {
        0 => Some(SslVersion::TLS1),
        1 => Some(SslVersion::TLS1_1),
        2 => Some(SslVersion::TLS1_2),
        _ => Some(SslVersion::TLS1_3),
    }
}

/// The per-connection context: protocol bounds, root certificates and CRLs, the
/// client certificate and key. libpq builds one per connection too, so a changed file
/// is seen by the next connection.
pub(super) fn context(settings: &TlsSettings) -> Result<SslContext, String> {
    let mut ctx = SslContextBuilder::new(SslMethod::tls_client())
        .map_err(|e| format!("could not create SSL context: {}", reason(&e)))?;
    ctx.set_options(SslOptions::NO_SSLV2 | SslOptions::NO_SSLV3);
    // Options were validated when parsed; the values are libpq's four names.
    if let Some(v) = &settings.min_version {
        ctx.set_min_proto_version(protocol_version(v))
            .map_err(|e| format!("could not set minimum SSL protocol version: {}", reason(&e)))?;
    }
    if let Some(v) = &settings.max_version {
        ctx.set_max_proto_version(protocol_version(v))
            .map_err(|e| format!("could not set maximum SSL protocol version: {}", reason(&e)))?;
    }
    // A non-blocking write that must be retried may see the buffer moved.
    ctx.set_mode(OpensslMode::ACCEPT_MOVING_WRITE_BUFFER);
    let have_root = root_certificates(&mut ctx, settings)?;
    ctx.set_verify(if have_root {
        SslVerifyMode::PEER
    } else {
        SslVerifyMode::NONE
    });
    if client_certificate(&mut ctx, settings)? {
        client_key(&mut ctx, settings)?;
    }
    if settings.compression {
        ctx.clear_options(SslOptions::NO_COMPRESSION);
    } else {
        ctx.set_options(SslOptions::NO_COMPRESSION);
    }
    Ok(ctx.build())
}

/// Loads the root certificate file and the CRLs if it exists; whether it does.
fn root_certificates(ctx: &mut SslContextBuilder, settings: &TlsSettings) -> Result<bool, String> {
    let verify = matches!(settings.sslmode, SslMode::VerifyCa | SslMode::VerifyFull);
    let root = file_option(settings, &settings.root_cert, "root.crt");
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
    let crl_file = settings.crl.as_ref().map(PathBuf::from);
    let crl_dir = settings.crl_dir.as_deref();
    let crl_file = match (crl_file, crl_dir) {
        (None, None) => settings.dir.as_ref().map(|d| d.join("root.crl")),
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
fn client_certificate(ctx: &mut SslContextBuilder, settings: &TlsSettings) -> Result<bool, String> {
    let Some(file) = file_option(settings, &settings.certificate, "postgresql.crt") else {
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
fn client_key(ctx: &mut SslContextBuilder, settings: &TlsSettings) -> Result<(), String> {
    let Some(file) = file_option(settings, &settings.key, "postgresql.key") else {
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
    read_private_key(&file, settings.key_password.as_deref())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Settings with `sslmode` and nothing else given, HOME at `/nonexistent`.
    fn settings(sslmode: SslMode) -> TlsSettings {
        TlsSettings::new(sslmode, Some(Path::new("/nonexistent")), |_| None)
    }

    #[test]
    fn verify_modes_need_a_root_certificate() {
        let e = context(&settings(SslMode::VerifyCa)).err().unwrap();
        assert_eq!(e, "root certificate file \"/nonexistent/.postgresql/root.crt\" does not exist\nEither provide the file or change sslmode to disable server certificate verification.");
        assert!(context(&settings(SslMode::Require)).is_ok());
    }
}

#[cfg(test)]
mod key_tests {
    use super::*;

    /// A 1,024-bit RSA key encrypted with the password `right` by `openssl pkcs8
    /// -topk8 -v2 aes-256-cbc`.
    const PKCS8_KEY: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----
MIIC3TBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQIyxAcIqloKvoCAggA
MAwGCCqGSIb3DQIJBQAwHQYJYIZIAWUDBAEqBBBY0Mf7VK4tJcM6JLaFqKRaBIIC
gN5tDI3uDEsjEzozOkLNhVRpzxGLrPT/uF15QLnH5X4+lBfOpNRISrzRzfIV0oBv
WfQlakUB+lkQxqa/DcCRsjxUe7PBlPFjj1WJQsvR9D1DotmKGtrBdrvPyPh3ddTU
4v1Pr0zWKBYfh0ijdoqzayNr+p53PXzZ/WvHU/ZHo1Wf1XGZFaiBS8wuQHP7MQx2
eW/GXx4SCClnQNmUvzCQ4ZuKF3X3EVt+8knwnEDQnzNdOsgPL/7H/wKeiBpRgskd
2GumnEtLo44po+2bPq7PW7DZFiR9qGuCmza4AUkfj+QGmkm34ej4p9eBVz+ah5/d
rKLQMFNX/eeTKXf4phVSPgjxN6wuzZVM4iI0kGSW252hxabep1++KnfVwHR9Z3Pm
fjqLBvMsiMTBwvHK6rbwcYvCOznloPAX48udSq5WC+j9B/7IHo0NpsScd1DkPh0w
9/0NzNNB3YDIQJThF5BjAYMiWRmmX6Rzj7bnrLlR5RgjUCi5OFiSGb0bh0sJY9lK
EDaF+af1skd/mLRp+o0uxMGhntu6f/gtRWZqF6DpeZA86wkxOUqxIlMxgUVmAGnI
PaiwRPQJdoKkcpG1UbPDpkgOu6RTWLZm0F4ogZFdf4/LUL7rkuSEATYsZ2ZHr6PZ
AqGwGRvm+DBiE0Z8VbQYh8qdoHAbcJKmv013Mcswy0nRF4dsLvUQX2gE8RWzqgB5
11YH5ejGxhCxl+tuF5b0Cie6EdYlwBTHPdD3Ykpw38nzYArAv/SasQicdenUc9Xo
wmxMjapGOQGGorisO1cZHCgnhB7l+eWFhlSejpeFsqlUvpw/R78Al+cGuWWt15WW
6afoMinF8BtkYqoG5NQfrdQ=
-----END ENCRYPTED PRIVATE KEY-----\n";

    /// The same key by `openssl rsa -aes256 -traditional`.
    const TRADITIONAL_KEY: &str = "-----BEGIN RSA PRIVATE KEY-----
Proc-Type: 4,ENCRYPTED
DEK-Info: AES-256-CBC,37D8537BE1434CD4E7B65A412135A4D6

rgXAQAbuABcLwcxpF7zojbwP6ET0V12NeB346aNoowdw+okD4YakSjNry1sYuAw6
Ux8jaD3CZCLDezvBHfUMjMrqW19xZhOJq3jjCE84KN4Gl1u89nVJkPqRek8RU9Sw
rl0fncwQMRjwVlRtiKHpYaRjpuo/axQmz2rGvlKAhF4mXaoWxsB7+Xknk9cIage+
3cth0JBYQaclfues95Pkru1+JOzEZJeJkTxGJ7VTzTU86Jg/ShDZjzcq/KCZJ1LG
9tzwjysPgP0ceeq6dpQBgegVwaNu5FHaA+SXNeA0pO5JuuRK5sX4Yymm5BmgXs+B
/6+uxhU7etZO0USwth1qr8SEhfrJUakZhx57gkZCxDHbuBLMcJjnF92/g4IB1TtI
2qo/j1dDp6tmEK14QtW99q5nyWKwPviwfotfF2k85AXr3MFSfJ3AHzKu2jrQ0MIB
xkOLbjNNprnAt47lEhwQBq6Q4nEnHe9l0yMML+f6qonVqqTupW+VLHeMah61T/Xu
P0iqnzstsHy3qaWPtGYPUd6gqeks3s/6sNSi0gpywKnqTBAdU/SIxH6J8Oj4SGxB
H0gQza4LCPkcayK3AzkFHPN78lHRK1h/CtX5OkwUW5NUHrHc3C0ZXMEwY8QTdwoj
A1w72unvj6HQuHJFg/1V+0+6xZav3dicx+QE0G6cKSV8CccTSsc2qq65w8/9ZKiR
hjKf4huLg8I2kH5BKtjDCmuNBAjIeXhsPUSx2C9TCBK8s2oGofes7JVLYJ4DXZa9
0yVC8qfNC8BDbuYkX/IP4p7KsdaKiEyZhzsbIf0A7wm+B3f4YPFqUS33Ipq3lPMc
-----END RSA PRIVATE KEY-----\n";

    /// The key in `format` ("pkcs8" or "traditional"), written to `dir`. Fixed keys,
    /// not made anew each run: decrypted with a wrong password, a fresh key's last
    /// block ends in valid padding about once in 256 runs, and OpenSSL then reports
    /// the garbage it decoded ("unsupported") rather than "bad decrypt". These two
    /// were checked to give "bad decrypt", as almost every key does.
    fn encrypted_key(dir: &Path, format: &str) -> PathBuf {
        let out = dir.join(format!("{format}.key"));
        let text = match format {
            "pkcs8" => PKCS8_KEY,
            _ => TRADITIONAL_KEY,
        };
        std::fs::write(&out, text).expect("a key file");
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
