//! Certificates as PostgreSQL's documentation makes them, side by side with stock
//! libpq (psql): X.509 v1 server and client certificates from the `openssl x509 -req
//! -CA` recipe, certificate revocation lists (`sslcrl`, `sslcrldir`, the default
//! `~/.postgresql/root.crl`), encrypted client keys with `sslpassword`, and
//! `verify-full`'s name rules (subject alternative names of the host's type, else
//! the common name; `hostaddr` alone).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{openssl, stock_error, stock_uses_tls, Env};
use pgbench_cluster::{Cluster, ClusterOptions};
use pgbench_wire::{ConnectArgs, Connection};

const HBA: &str = "\
local all all trust
hostssl all u_cert 127.0.0.1/32 cert
host all postgres 127.0.0.1/32 trust
";

/// The documented recipe's files in `dir`: a root CA (v3, `-extensions v3_ca`), a
/// server certificate for CN=localhost and a client certificate for CN=u_cert, both
/// v1 (`x509 -req -CA` without extensions), and CRLs.
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn shown(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
}

fn private(path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

fn make_pki() -> Pki {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |args: &str| openssl(d, &args.split(' ').collect::<Vec<_>>());
    run("req -new -nodes -text -out root.csr -keyout root.key -subj /CN=root.test");
    run("x509 -req -in root.csr -text -days 3650 -extfile /etc/ssl/openssl.cnf -extensions v3_ca -signkey root.key -out root.crt");
    for (name, cn) in [("server", "localhost"), ("client", "u_cert")] {
        run(&format!(
            "req -new -nodes -text -out {name}.csr -keyout {name}.key -subj /CN={cn}"
        ));
        run(&format!("x509 -req -in {name}.csr -text -days 365 -CA root.crt -CAkey root.key -CAcreateserial -out {name}.crt"));
    }
    // Encrypted copies of the client key: PKCS#8 and the traditional OpenSSL format.
    run("pkcs8 -topk8 -in client.key -out client.p8.key -v2 aes-256-cbc -passout pass:key-secret");
    run("rsa -in client.key -out client.trad.key -aes256 -traditional -passout pass:key-secret");
    for key in [
        "client.key",
        "client.p8.key",
        "client.trad.key",
        "server.key",
    ] {
        private(&d.join(key));
    }
    // An empty CRL, then one revoking the server certificate, and a hashed CRL
    // directory holding the latter.
    std::fs::write(
        d.join("ca.cnf"),
        "[ca]\ndefault_ca = ca_default\n[ca_default]\ndatabase = index.txt\n\
         crlnumber = crlnumber\ndefault_md = sha256\ndefault_crl_days = 3650\n",
    )
    .unwrap();
    std::fs::write(d.join("index.txt"), "").unwrap();
    std::fs::write(d.join("crlnumber"), "01\n").unwrap();
    run("ca -config ca.cnf -gencrl -keyfile root.key -cert root.crt -out empty.crl");
    run("ca -config ca.cnf -revoke server.crt -keyfile root.key -cert root.crt");
    run("ca -config ca.cnf -gencrl -keyfile root.key -cert root.crt -out revoked.crl");
    let hash = std::process::Command::new("openssl")
        .current_dir(d)
        .args(["crl", "-in", "revoked.crl", "-hash", "-noout"])
        .output()
        .unwrap();
    let hash = String::from_utf8_lossy(&hash.stdout).trim().to_string();
    std::fs::create_dir(d.join("crldir")).unwrap();
    std::fs::copy(
        d.join("revoked.crl"),
        d.join("crldir").join(format!("{hash}.r0")),
    )
    .unwrap();
    Pki { dir }
}

fn tls_cluster(crt: &Path, key: &Path, ca: Option<&Path>) -> Cluster {
    let c = Cluster::start(ClusterOptions {
        tcp: true,
        hba: Some(HBA.into()),
        ..Default::default()
    })
    .expect("tls cluster");
    c.write_data_file("server.crt", &std::fs::read(crt).unwrap())
        .unwrap();
    c.write_data_file("server.key", &std::fs::read(key).unwrap())
        .unwrap();
    let mut sql = "alter system set ssl = on;
         alter system set ssl_cert_file = 'server.crt';
         alter system set ssl_key_file = 'server.key';
         create role u_cert login;"
        .to_string();
    if let Some(ca) = ca {
        c.write_data_file("root.crt", &std::fs::read(ca).unwrap())
            .unwrap();
        sql.push_str("alter system set ssl_ca_file = 'root.crt';");
    }
    c.psql("postgres", &sql).unwrap();
    c.reload().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    c
}

/// The documented recipe's cluster: v1 server certificate, root CA for clients.
fn documented() -> &'static (Cluster, Pki) {
    static S: OnceLock<(Cluster, Pki)> = OnceLock::new();
    S.get_or_init(|| {
        let pki = make_pki();
        let c = tls_cluster(
            &pki.path("server.crt"),
            &pki.path("server.key"),
            Some(&pki.path("root.crt")),
        );
        (c, pki)
    })
}

fn args(c: &Cluster, user: &str, extra: &str) -> ConnectArgs {
    ConnectArgs {
        dbname: Some(format!(
            "host=localhost hostaddr=127.0.0.1 port={} user={user} dbname=postgres {extra}",
            c.port()
        )),
        ..ConnectArgs::default()
    }
}

/// Ours and stock agree: both connect with the same TLS state, or both fail with the
/// same text (returned).
fn same_as_stock(env: &Env, a: &ConnectArgs) -> Result<bool, String> {
    let stock = stock_uses_tls(env, a);
    match (env.connect(a), stock) {
        (Ok(mut conn), Some(tls)) => {
            assert_eq!(common::uses_tls(&mut conn), tls, "{a:?}");
            Ok(tls)
        }
        (Ok(_), None) => panic!("we connect, stock does not: {a:?}: {}", stock_error(env, a)),
        (Err(e), Some(_)) => panic!("stock connects, we do not: {a:?}: {e}"),
        (Err(e), None) => {
            assert_eq!(e.to_string(), stock_error(env, a), "{a:?}");
            Err(e.to_string())
        }
    }
}

#[test]
fn version_1_certificates_are_accepted_like_libpq() {
    let (c, pki) = documented();
    let env = Env::new();
    let root = pki.shown("root.crt");
    for mode in ["require", "verify-ca", "verify-full"] {
        let a = args(c, "postgres", &format!("sslmode={mode} sslrootcert={root}"));
        assert_eq!(same_as_stock(&env, &a), Ok(true), "{mode}");
    }
    // prefer with the root certificate in ~/.postgresql verifies it, and must not
    // fall back to plain text.
    let dot = env.home().join(".postgresql");
    std::fs::create_dir_all(&dot).unwrap();
    std::fs::copy(pki.path("root.crt"), dot.join("root.crt")).unwrap();
    for mode in ["prefer", "allow"] {
        let a = args(c, "postgres", &format!("sslmode={mode}"));
        let expected = mode == "prefer";
        assert_eq!(same_as_stock(&env, &a), Ok(expected), "{mode}");
    }
    // A v1 client certificate authenticates u_cert.
    let a = args(
        c,
        "u_cert",
        &format!(
            "sslmode=verify-full sslcert={} sslkey={}",
            pki.shown("client.crt"),
            pki.shown("client.key")
        ),
    );
    assert_eq!(same_as_stock(&env, &a), Ok(true));
}

#[test]
fn revocation_lists_are_honoured() {
    let (c, pki) = documented();
    let env = Env::new();
    let root = pki.shown("root.crt");
    let with = |extra: String| args(c, "postgres", &format!("sslrootcert={root} {extra}"));
    let empty = with(format!(
        "sslmode=verify-full sslcrl={}",
        pki.shown("empty.crl")
    ));
    assert_eq!(same_as_stock(&env, &empty), Ok(true));
    for extra in [
        format!("sslcrl={}", pki.shown("revoked.crl")),
        format!("sslcrldir={}", pki.shown("crldir")),
    ] {
        for mode in ["verify-ca", "verify-full", "require"] {
            let e = same_as_stock(&env, &with(format!("sslmode={mode} {extra}"))).unwrap_err();
            assert!(e.ends_with("SSL error: certificate verify failed"), "{e}");
        }
    }
    // A CRL file that does not exist is ignored, as libpq ignores it.
    let missing = with("sslmode=verify-full sslcrl=/nonexistent/x.crl".into());
    assert_eq!(same_as_stock(&env, &missing), Ok(true));
    // ~/.postgresql/root.crl is the default.
    let dot = env.home().join(".postgresql");
    std::fs::create_dir_all(&dot).unwrap();
    std::fs::copy(pki.path("revoked.crl"), dot.join("root.crl")).unwrap();
    let e = same_as_stock(&env, &with("sslmode=verify-full".into())).unwrap_err();
    assert!(e.ends_with("SSL error: certificate verify failed"), "{e}");
    // prefer with ~/.postgresql/root.crt verifies too, and like libpq falls back to
    // plain text when the certificate is refused.
    std::fs::copy(pki.path("root.crt"), dot.join("root.crt")).unwrap();
    let prefer = args(c, "postgres", "sslmode=prefer");
    assert_eq!(same_as_stock(&env, &prefer), Ok(false));
}

const CHILD: &str = "PGBENCH_WIRE_TLS_CHILD_CONNINFO";

/// In the child: connect with the conninfo given, print the error.
#[test]
fn connect_child() {
    if let Some(conninfo) = std::env::var_os(CHILD) {
        let a = ConnectArgs {
            dbname: Some(conninfo.to_string_lossy().into_owned()),
            ..ConnectArgs::default()
        };
        match Connection::connect(&pgbench_wire::ConnectOptions::from_args(&a).unwrap()) {
            Ok(_) => eprintln!("connected"),
            Err(e) => eprintln!("{e}"),
        }
    }
}

/// `cmd` with no controlling terminal (under `setsid -w`) and an empty stdin: its
/// stderr, so OpenSSL's pass-phrase prompt can neither wait nor reach a keyboard.
fn stderr_without_terminal(env: &Env, cmd: &[&str], child_conninfo: Option<&str>) -> String {
    let mut c = std::process::Command::new("setsid");
    c.arg("-w")
        .args(cmd)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .env("PGSYSCONFDIR", "/nonexistent")
        .stdin(std::process::Stdio::null());
    if let Some(conninfo) = child_conninfo {
        c.env(CHILD, conninfo);
    }
    let out = c.output().expect("setsid");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ours_without_terminal(env: &Env, a: &ConnectArgs) -> String {
    let me = std::env::current_exe().unwrap();
    let me = me.to_str().unwrap();
    let cmd = [
        me,
        "--exact",
        "connect_child",
        "--nocapture",
        "--test-threads=1",
    ];
    stderr_without_terminal(env, &cmd, a.dbname.as_deref())
}

fn stock_without_terminal(env: &Env, a: &ConnectArgs) -> String {
    let dbname = a.dbname.as_deref().unwrap();
    let cmd = ["psql", "-X", "-w", "-c", "select 1", "-d", dbname];
    stderr_without_terminal(env, &cmd, None).replace("psql: error: ", "")
}

#[test]
fn encrypted_client_keys() {
    let (c, pki) = documented();
    let env = Env::new();
    let cert = pki.shown("client.crt");
    let key_args = |key: &str, extra: &str| {
        args(
            c,
            "u_cert",
            &format!(
                "sslmode=require sslcert={cert} sslkey={} {extra}",
                pki.shown(key)
            ),
        )
    };
    for key in ["client.p8.key", "client.trad.key"] {
        let right = key_args(key, "sslpassword=key-secret");
        assert_eq!(same_as_stock(&env, &right), Ok(true), "{key}");
        let wrong = key_args(key, "sslpassword=not-the-secret");
        let e = same_as_stock(&env, &wrong).unwrap_err();
        assert!(e.ends_with(&format!("{key}\": bad decrypt")), "{e}");
        assert!(!e.contains("not-the-secret"));
        // No password: OpenSSL's own prompt, as libpq leaves it; without a terminal
        // it asks on stderr and reads stdin (empty here).
        let none = key_args(key, "");
        let ours = ours_without_terminal(&env, &none);
        assert!(ours.starts_with("Enter PEM pass phrase:"), "{ours}");
        assert!(ours.contains("could not load private key file"), "{ours}");
        assert_eq!(ours, stock_without_terminal(&env, &none));
    }
    // The server's key with the client's certificate.
    let mismatched = key_args("server.key", "");
    let e = same_as_stock(&env, &mismatched).unwrap_err();
    assert!(e.ends_with("server.key\": key values mismatch"), "{e}");
}

/// With `hostaddr` alone, libpq 15 checks the certificate against the default socket
/// directory, its host name for such an entry (later libpq versions refuse with
/// "host name must be specified for a verified SSL connection").
#[test]
fn verify_full_with_hostaddr_alone() {
    let (c, pki) = documented();
    let env = Env::new();
    let a = ConnectArgs {
        dbname: Some(format!(
            "hostaddr=127.0.0.1 port={} user=postgres dbname=postgres sslmode=verify-full sslrootcert={}",
            c.port(),
            pki.shown("root.crt")
        )),
        ..ConnectArgs::default()
    };
    let e = same_as_stock(&env, &a).unwrap_err();
    assert!(
        e.ends_with(
            "server certificate for \"localhost\" does not match host name \"/var/run/postgresql\""
        ),
        "{e}"
    );
}

/// A server certificate whose only subject alternative name is a DNS name, with an
/// IP address as its common name: for a host given as an address, libpq finds no
/// SAN of that type and checks the CN; for a name, the DNS SAN alone decides.
#[test]
fn names_of_the_host_type_decide_else_the_common_name() {
    let (_, pki) = documented();
    let d = pki.dir.path();
    std::fs::write(d.join("san.cnf"), "[san]\nsubjectAltName=DNS:localhost\n").unwrap();
    let run = |args: &str| openssl(d, &args.split(' ').collect::<Vec<_>>());
    run("req -new -nodes -out ipcn.csr -keyout ipcn.key -subj /CN=127.0.0.1");
    run("x509 -req -in ipcn.csr -days 365 -CA root.crt -CAkey root.key -CAcreateserial -out ipcn.crt -extfile san.cnf -extensions san");
    private(&d.join("ipcn.key"));
    let c = tls_cluster(&d.join("ipcn.crt"), &d.join("ipcn.key"), None);
    let env = Env::new();
    let root = pki.shown("root.crt");
    let at = |host: &str| {
        ConnectArgs {
        dbname: Some(format!(
            "host={host} hostaddr=127.0.0.1 port={} user=postgres dbname=postgres sslmode=verify-full sslrootcert={root}",
            c.port()
        )),
        ..ConnectArgs::default()
    }
    };
    assert_eq!(same_as_stock(&env, &at("127.0.0.1")), Ok(true));
    assert_eq!(same_as_stock(&env, &at("localhost")), Ok(true));
    let e = same_as_stock(&env, &at("127.0.0.2")).unwrap_err();
    assert!(
        e.ends_with("server certificate for \"localhost\" (and 1 other name) does not match host name \"127.0.0.2\""),
        "{e}"
    );
    let e = same_as_stock(&env, &at("wrong.example")).unwrap_err();
    assert!(
        e.ends_with(
            "server certificate for \"localhost\" does not match host name \"wrong.example\""
        ),
        "{e}"
    );
}
