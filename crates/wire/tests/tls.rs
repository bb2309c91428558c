//! TLS against a private cluster with a CA and server certificate made by the
//! `openssl` command line tool: every sslmode, root certificate files, host-name
//! verification, client certificates and SCRAM channel binding.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use common::{openssl, our_error, stock_error, Env};
use pgbench_cluster::{Cluster, ClusterOptions};
use pgbench_wire::{ConnectArgs, Connection};

const HBA: &str = "\
local all all trust
hostssl all u_cert 127.0.0.1/32 cert
hostssl all u_ssl 127.0.0.1/32 trust
hostnossl all u_nossl 127.0.0.1/32 trust
host all u_scram 127.0.0.1/32 scram-sha-256
host all postgres 127.0.0.1/32 trust
";

struct Pki {
    _dir: tempfile::TempDir,
    ca: PathBuf,
    other_ca: PathBuf,
    client_crt: PathBuf,
    client_key: PathBuf,
}

/// A CA, a server certificate for localhost/127.0.0.1, a client certificate for
/// `u_cert`, and an unrelated CA.
fn make_pki() -> (Pki, Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("ext.cnf"),
        "[srv]\nsubjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
         [cli]\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    for ca in ["ca", "other"] {
        openssl(
            d,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "3650",
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.crt"),
                "-subj",
                &format!("/CN={ca} test CA"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
        );
    }
    for (name, cn, ext) in [("server", "localhost", "srv"), ("client", "u_cert", "cli")] {
        openssl(
            d,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &format!("/CN={cn}"),
            ],
        );
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "3650",
                "-out",
                &format!("{name}.crt"),
                "-extfile",
                "ext.cnf",
                "-extensions",
                ext,
            ],
        );
    }
    std::fs::set_permissions(d.join("client.key"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let server_crt = std::fs::read(d.join("server.crt")).unwrap();
    let server_key = std::fs::read(d.join("server.key")).unwrap();
    let pki = Pki {
        ca: d.join("ca.crt"),
        other_ca: d.join("other.crt"),
        client_crt: d.join("client.crt"),
        client_key: d.join("client.key"),
        _dir: dir,
    };
    (pki, server_crt, server_key)
}

fn setup() -> &'static (Cluster, Pki) {
    static S: OnceLock<(Cluster, Pki)> = OnceLock::new();
    S.get_or_init(|| {
        let (pki, crt, key) = make_pki();
        let c = Cluster::start(ClusterOptions {
            tcp: true,
            hba: Some(HBA.into()),
            ..Default::default()
        })
        .expect("tls cluster");
        c.write_data_file("server.crt", &crt).unwrap();
        c.write_data_file("server.key", &key).unwrap();
        c.write_data_file("root.crt", &std::fs::read(&pki.ca).unwrap())
            .unwrap();
        c.psql(
            "postgres",
            "alter system set ssl = on;
             alter system set ssl_cert_file = 'server.crt';
             alter system set ssl_key_file = 'server.key';
             alter system set ssl_ca_file = 'root.crt';
             create role u_cert login; create role u_ssl login; create role u_nossl login;
             create role u_scram login password 'scram pw';",
        )
        .unwrap();
        c.reload().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        (c, pki)
    })
}

fn tcp_args(c: &Cluster, user: &str, extra: &str) -> ConnectArgs {
    ConnectArgs {
        dbname: Some(format!(
            "host=127.0.0.1 port={} user={user} dbname=postgres {extra}",
            c.port()
        )),
        fallback_application_name: Some("pgbench".into()),
        ..ConnectArgs::default()
    }
}

fn check(env: &Env, a: &ConnectArgs, want_tls: Option<bool>) {
    match (env.connect(a), want_tls) {
        (Ok(mut conn), Some(tls)) => assert_eq!(common::uses_tls(&mut conn), tls, "{a:?}"),
        (Ok(_), None) => panic!("connected: {a:?}"),
        (Err(e), Some(_)) => panic!("{a:?}: {e}"),
        (Err(e), None) => {
            assert_eq!(e.to_string(), stock_error(env, a), "{a:?}");
        }
    }
}

#[test]
fn sslmodes_without_a_root_certificate() {
    let (c, _) = setup();
    let env = Env::new();
    check(
        &env,
        &tcp_args(c, "postgres", "sslmode=disable"),
        Some(false),
    );
    check(&env, &tcp_args(c, "postgres", "sslmode=allow"), Some(false));
    check(&env, &tcp_args(c, "postgres", "sslmode=prefer"), Some(true));
    check(&env, &tcp_args(c, "postgres", ""), Some(true));
    check(
        &env,
        &tcp_args(c, "postgres", "sslmode=require"),
        Some(true),
    );
    check(&env, &tcp_args(c, "postgres", "sslmode=verify-ca"), None);
    check(&env, &tcp_args(c, "postgres", "sslmode=verify-full"), None);
    // allow retries with TLS when the plain connection is rejected, prefer retries
    // without TLS when the TLS one is; disable and require just fail.
    check(&env, &tcp_args(c, "u_ssl", "sslmode=allow"), Some(true));
    check(&env, &tcp_args(c, "u_nossl", "sslmode=prefer"), Some(false));
    check(&env, &tcp_args(c, "u_ssl", "sslmode=disable"), None);
    check(&env, &tcp_args(c, "u_nossl", "sslmode=require"), None);
    // On a Unix socket libpq never tries TLS, whatever sslmode says.
    let a = ConnectArgs {
        dbname: Some(format!(
            "host={} port={} user=postgres dbname=postgres sslmode=require",
            c.socket_dir().display(),
            c.port()
        )),
        ..ConnectArgs::default()
    };
    check(&env, &a, Some(false));
}

#[test]
fn verification_with_root_certificates() {
    let (c, pki) = setup();
    let env = Env::new();
    let ca = pki.ca.display();
    let other = pki.other_ca.display();
    for mode in ["require", "verify-ca", "verify-full"] {
        check(
            &env,
            &tcp_args(c, "postgres", &format!("sslmode={mode} sslrootcert={ca}")),
            Some(true),
        );
        // The wrong CA fails; with a root file, require verifies the chain too.
        check(
            &env,
            &tcp_args(
                c,
                "postgres",
                &format!("sslmode={mode} sslrootcert={other}"),
            ),
            None,
        );
    }
    // Host name: verify-ca ignores it, verify-full checks it.
    let renamed = |mode: &str| {
        ConnectArgs {
        dbname: Some(format!(
            "host=wrong.example hostaddr=127.0.0.1 port={} user=postgres dbname=postgres sslmode={mode} sslrootcert={ca}",
            c.port()
        )),
        ..ConnectArgs::default()
    }
    };
    check(&env, &renamed("verify-ca"), Some(true));
    let e = our_error(&env, &renamed("verify-full")).to_string();
    assert!(
        e.ends_with("server certificate for \"localhost\" (and 1 other name) does not match host name \"wrong.example\""),
        "{e}"
    );
    check(&env, &renamed("verify-full"), None);
    let a = ConnectArgs {
        dbname: Some(format!(
            "host=localhost port={} user=postgres dbname=postgres sslmode=verify-full sslrootcert={ca}",
            c.port()
        )),
        ..ConnectArgs::default()
    };
    check(&env, &a, Some(true));
    // ~/.postgresql/root.crt is the default root file.
    let dot = env.home().join(".postgresql");
    std::fs::create_dir_all(&dot).unwrap();
    std::fs::copy(&pki.ca, dot.join("root.crt")).unwrap();
    check(
        &env,
        &tcp_args(c, "postgres", "sslmode=verify-full"),
        Some(true),
    );
    let env = env.set("PGSSLROOTCERT", &other.to_string());
    check(&env, &tcp_args(c, "postgres", "sslmode=verify-ca"), None);
}

#[test]
fn client_certificates() {
    let (c, pki) = setup();
    let env = Env::new();
    let with_cert = format!(
        "sslmode=require sslcert={} sslkey={}",
        pki.client_crt.display(),
        pki.client_key.display()
    );
    check(&env, &tcp_args(c, "u_cert", &with_cert), Some(true));
    check(&env, &tcp_args(c, "u_cert", "sslmode=require"), None);
    // The default files in ~/.postgresql are used when present.
    let dot = env.home().join(".postgresql");
    std::fs::create_dir_all(&dot).unwrap();
    std::fs::copy(&pki.client_crt, dot.join("postgresql.crt")).unwrap();
    std::fs::copy(&pki.client_key, dot.join("postgresql.key")).unwrap();
    check(&env, &tcp_args(c, "u_cert", "sslmode=require"), Some(true));
    // A key others can read is refused, like libpq.
    std::fs::set_permissions(
        dot.join("postgresql.key"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    check(&env, &tcp_args(c, "u_cert", "sslmode=require"), None);
}

#[test]
fn scram_channel_binding_over_tls() {
    let (c, _) = setup();
    let env = Env::new();
    for cb in ["disable", "prefer", "require"] {
        let a = ConnectArgs {
            password: Some("scram pw".into()),
            ..tcp_args(
                c,
                "u_scram",
                &format!("sslmode=require channel_binding={cb}"),
            )
        };
        check(&env, &a, Some(true));
    }
    // require without TLS fails before sending anything.
    let a = ConnectArgs {
        password: Some("scram pw".into()),
        ..tcp_args(c, "u_scram", "sslmode=disable channel_binding=require")
    };
    check(&env, &a, None);
    // Wrong password over TLS: libpq's text, no password in it.
    let a = ConnectArgs {
        password: Some("not-the-pw-123".into()),
        ..tcp_args(c, "u_scram", "sslmode=require")
    };
    let e = our_error(&env, &a).to_string();
    assert!(!e.contains("not-the-pw-123"));
    check(&env, &a, None);
}

/// Errors after authentication (no such database, a bad `options` setting) are final
/// under prefer and allow: libpq retries with the other SSL choice only a rejection
/// before authentication completes, so the error is shown once.
#[test]
fn errors_after_authentication_are_not_retried() {
    let (c, _) = setup();
    let env = Env::new();
    for mode in ["prefer", "allow"] {
        for extra in [
            "dbname=no_such_db",
            "options='-c no_such.setting_x=1 -c work_mem=-5'",
        ] {
            let a = tcp_args(c, "postgres", &format!("sslmode={mode} {extra}"));
            let e = our_error(&env, &a).to_string();
            assert_eq!(
                e.lines().filter(|l| l.starts_with("connection to")).count(),
                1,
                "{e}"
            );
            check(&env, &a, None);
        }
        // A rejection before authentication (no pg_hba.conf entry) is retried.
        let a = tcp_args(c, "u_nobody", &format!("sslmode={mode}"));
        let e = our_error(&env, &a).to_string();
        assert_eq!(
            e.lines().filter(|l| l.starts_with("connection to")).count(),
            2,
            "{e}"
        );
        check(&env, &a, None);
    }
}

#[test]
fn a_long_pipeline_over_tls() {
    let mut conn = tls_conn();
    let rows = common::long_pipeline(&mut conn, "select repeat('y', 300) || $1", 30_000);
    assert_eq!(rows, 30_000);
    assert_eq!(
        conn.query_rows("select 5").unwrap()[0][0].as_deref(),
        Some("5")
    );
}

/// `wait_result_looking` (what `-d` uses) over TLS, with results from a few bytes to
/// far more than the read buffer holds: it comes back, and `get_result` then returns
/// the whole result. (It drains what TLS has decrypted before waiting on the socket,
/// so bytes left in the TLS layer cannot leave it waiting.)
#[test]
fn looking_for_a_large_result_over_tls() {
    let mut conn = tls_conn();
    for size in [10, 100_000, 3_000_000] {
        conn.send_query(&format!("select repeat('z', {size}) from pg_sleep(0.01)"))
            .unwrap();
        // The reply cannot be there at the first look: the server sleeps first.
        let mut looks = 0;
        conn.wait_result_looking(|| looks += 1).unwrap();
        assert!(looks >= 2, "{looks} looks");
        assert_eq!(
            conn.get_result().unwrap(),
            Some(pgbench_wire::ResultStatus::TuplesOk)
        );
        assert_eq!(conn.last_row_value(0).map(<[u8]>::len), Some(size));
        assert_eq!(conn.get_result().unwrap(), None);
    }
}

/// A connection over TLS (`sslmode=require`) to the test cluster, checked to use it.
fn tls_conn() -> Connection {
    let (c, _) = setup();
    let mut conn = Env::new()
        .connect(&tcp_args(c, "postgres", "sslmode=require"))
        .unwrap();
    assert!(common::uses_tls(&mut conn));
    conn
}

/// PostgreSQL's documented quick set-up: one self-signed certificate with a common
/// name and no subject alternative names (`openssl req -new -x509 ... -subj
/// "/CN=localhost"`, which also marks it a CA), used as the server certificate and
/// as the client's root certificate. libpq accepts it for verify-ca and verify-full
/// (the name comes from the CN); so must we.
#[test]
fn documented_self_signed_certificate_with_a_common_name() {
    let dir = tempfile::tempdir().unwrap();
    openssl(
        dir.path(),
        &[
            "req",
            "-new",
            "-x509",
            "-days",
            "365",
            "-nodes",
            "-text",
            "-out",
            "server.crt",
            "-keyout",
            "server.key",
            "-subj",
            "/CN=localhost",
        ],
    );
    let crt = std::fs::read(dir.path().join("server.crt")).unwrap();
    let key = std::fs::read(dir.path().join("server.key")).unwrap();
    let c = Cluster::start(ClusterOptions {
        tcp: true,
        hba: Some("local all all trust\nhost all all 127.0.0.1/32 trust\n".into()),
        ..Default::default()
    })
    .unwrap();
    c.write_data_file("server.crt", &crt).unwrap();
    c.write_data_file("server.key", &key).unwrap();
    c.psql(
        "postgres",
        "alter system set ssl = on;
         alter system set ssl_cert_file = 'server.crt';
         alter system set ssl_key_file = 'server.key';",
    )
    .unwrap();
    c.reload().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let env = Env::new();
    let root = dir.path().join("server.crt");
    let args = |host: &str, mode: &str| {
        ConnectArgs {
        dbname: Some(format!(
            "host={host} hostaddr=127.0.0.1 port={} user=postgres dbname=postgres sslmode={mode} sslrootcert={}",
            c.port(),
            root.display()
        )),
        ..ConnectArgs::default()
    }
    };
    check(&env, &args("localhost", "verify-full"), Some(true));
    check(&env, &args("LOCALHOST", "verify-full"), Some(true));
    check(&env, &args("wrong.example", "verify-ca"), Some(true));
    let e = our_error(&env, &args("wrong.example", "verify-full")).to_string();
    assert!(
        e.ends_with(
            "server certificate for \"localhost\" does not match host name \"wrong.example\""
        ),
        "{e}"
    );
    // Word for word what libpq (psql) says.
    check(&env, &args("wrong.example", "verify-full"), None);
}

/// Relays one TCP connection at a time to `port` and counts the TLS ClientHello
/// messages the client sends in each (after PostgreSQL's 8-byte SSLRequest).
fn counting_relay(port: u16) -> (u16, std::sync::mpsc::Receiver<usize>) {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let relay_port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let mut client = client.unwrap();
            let mut server = TcpStream::connect(("127.0.0.1", port)).unwrap();
            let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut s2, &mut c2);
                let _ = c2.shutdown(std::net::Shutdown::Write);
            });
            // Client to server: keep the bytes, forward them, then parse the records.
            let mut seen = Vec::new();
            let mut buf = [0u8; 16384];
            while let Ok(n) = client.read(&mut buf) {
                if n == 0 || server.write_all(&buf[..n]).is_err() {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
            }
            let _ = server.shutdown(std::net::Shutdown::Write);
            let (mut at, mut hellos) = (8, 0);
            while at + 5 <= seen.len() {
                let len = u16::from_be_bytes([seen[at + 3], seen[at + 4]]) as usize;
                // A handshake record whose message is a ClientHello.
                if seen[at] == 0x16 && seen.get(at + 5) == Some(&1) {
                    hellos += 1;
                }
                at += 5 + len;
            }
            let _ = tx.send(hellos);
        }
    });
    (relay_port, rx)
}

/// PostgreSQL's default `ssl_ecdh_curve` is P-256, OpenSSL's first key share X25519:
/// the first handshake needs a HelloRetryRequest (two ClientHellos); the options'
/// later connections offer P-256 first and need one, as `-C` reconnects do.
#[test]
fn later_connections_offer_the_key_exchange_group_the_server_chose() {
    let (c, _) = setup();
    let (port, hellos) = counting_relay(c.port());
    let args = ConnectArgs {
        dbname: Some(format!(
            "host=127.0.0.1 port={port} user=postgres dbname=postgres sslmode=require"
        )),
        ..ConnectArgs::default()
    };
    let opts = Env::new().options(&args).unwrap();
    let timeout = std::time::Duration::from_secs(20);
    for want in [2, 1, 1] {
        let mut conn = Connection::connect(&opts).unwrap();
        assert!(common::uses_tls(&mut conn));
        drop(conn);
        assert_eq!(hellos.recv_timeout(timeout).unwrap(), want);
    }
}
