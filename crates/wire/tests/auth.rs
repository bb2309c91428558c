//! Authentication against a private cluster whose pg_hba.conf picks the method per
//! role: trust, password, md5 and scram-sha-256, over the Unix socket and TCP; missing
//! and wrong passwords read like libpq and never show the password.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::sync::OnceLock;

use common::{our_error, stock_error, Env};
use pgbench_cluster::{Cluster, ClusterOptions};
use pgbench_wire::ConnectArgs;

const HBA: &str = "\
local all postgres trust
host all postgres 127.0.0.1/32 trust
local all u_password password
host all u_password 127.0.0.1/32 password
local all u_md5 md5
host all u_md5 127.0.0.1/32 md5
local all u_scram scram-sha-256
host all u_scram 127.0.0.1/32 scram-sha-256
host all u_lockout 127.0.0.1/32 md5
";

const ROLES: &[(&str, &str)] = &[
    ("u_password", "pw plain"),
    ("u_md5", "pw md5"),
    ("u_scram", "pw: scr@m/é"),
];

fn cluster() -> &'static Cluster {
    static C: OnceLock<Cluster> = OnceLock::new();
    C.get_or_init(|| {
        let c = Cluster::start(ClusterOptions {
            tcp: true,
            hba: Some(HBA.into()),
            ..Default::default()
        })
        .expect("auth cluster");
        c.psql(
            "postgres",
            "set password_encryption = 'md5';
             create role u_md5 login password 'pw md5';
             create role u_password login password 'pw plain';
             create role u_lockout login password 'pw lockout';
             set password_encryption = 'scram-sha-256';
             create role u_scram login password 'pw: scr@m/é';",
        )
        .expect("roles");
        c
    })
}

fn role_args(c: &Cluster, tcp: bool, user: &str, password: Option<&str>) -> ConnectArgs {
    ConnectArgs {
        host: Some(if tcp {
            "127.0.0.1".into()
        } else {
            c.socket_dir().display().to_string()
        }),
        port: Some(c.port().to_string()),
        user: Some(user.into()),
        password: password.map(str::to_string),
        dbname: Some("postgres".into()),
        fallback_application_name: Some("pgbench".into()),
    }
}

#[test]
fn each_method_with_the_right_password() {
    let c = cluster();
    let env = Env::new().set("PGSSLMODE", "disable");
    for tcp in [false, true] {
        let mut conn = env.connect(&role_args(c, tcp, "postgres", None)).unwrap();
        assert_eq!(
            conn.query_rows("select current_user").unwrap()[0][0].as_deref(),
            Some("postgres")
        );
        for (user, pw) in ROLES {
            let mut conn = env
                .connect(&role_args(c, tcp, user, Some(pw)))
                .unwrap_or_else(|e| panic!("{user} tcp={tcp}: {e}"));
            let rows = conn.query_rows("select current_user").unwrap();
            assert_eq!(rows[0][0].as_deref(), Some(*user));
        }
    }
}

#[test]
fn password_from_environment_uri_and_password_file() {
    let c = cluster();
    let (user, pw) = ROLES[2];
    let env = Env::new().set("PGPASSWORD", pw);
    env.connect(&role_args(c, true, user, None)).unwrap();

    let uri = format!(
        "postgresql://{user}:{}@127.0.0.1:{}/postgres",
        "pw%3A%20scr%40m%2F%C3%A9",
        c.port()
    );
    let a = ConnectArgs {
        dbname: Some(uri),
        ..ConnectArgs::default()
    };
    Env::new().connect(&a).unwrap();

    let env = Env::new();
    let pgpass = env.home().join(".pgpass");
    std::fs::write(
        &pgpass,
        format!(
            "127.0.0.1:{port}:*:{user}:{}\n{dir}:{port}:*:u_md5:pw md5\n",
            pw.replace(':', "\\:"),
            port = c.port(),
            dir = c.socket_dir().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    env.connect(&role_args(c, true, user, None)).unwrap();
    env.connect(&role_args(c, false, "u_md5", None)).unwrap();
}

#[test]
fn missing_password_is_reported_for_a_prompt() {
    let c = cluster();
    let env = Env::new().set("PGSSLMODE", "disable");
    for tcp in [false, true] {
        for (user, _) in ROLES {
            let a = role_args(c, tcp, user, None);
            let e = our_error(&env, &a);
            assert!(e.needs_password(), "{user}: {e}");
            assert!(
                e.to_string()
                    .ends_with("failed: fe_sendauth: no password supplied"),
                "{e}"
            );
            assert_eq!(e.to_string(), stock_error(&env, &a));
        }
    }
    // pgbench then prompts and connects again with what was typed.
    let a = role_args(c, true, "u_scram", None);
    let opts = env.options(&a).unwrap();
    assert!(!opts.has_password());
    let retry = opts.with_password(ROLES[2].1);
    pgbench_wire::Connection::connect(&retry).unwrap();
}

#[test]
fn wrong_password_reads_like_libpq_and_hides_the_password() {
    let c = cluster();
    let env = Env::new().set("PGSSLMODE", "disable");
    let secret = "Wr0ng-Secret-xyzzy";
    for tcp in [false, true] {
        for (user, _) in ROLES {
            let a = role_args(c, tcp, user, Some(secret));
            let e = our_error(&env, &a);
            let text = e.to_string();
            assert!(!e.needs_password());
            assert!(
                text.ends_with(&format!(
                    "FATAL:  password authentication failed for user \"{user}\""
                )),
                "{text}"
            );
            assert_eq!(text, stock_error(&env, &a));
            assert!(!text.contains(secret));
            assert!(!format!("{e:?}").contains(secret));
        }
    }
    // A wrong password from the password file is named, like libpq does.
    let env = Env::new().set("PGSSLMODE", "disable");
    let pgpass = env.home().join(".pgpass");
    std::fs::write(&pgpass, format!("*:*:*:*:{secret}\n")).unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let a = role_args(c, true, "u_scram", None);
    let text = our_error(&env, &a).to_string();
    assert!(
        text.ends_with(&format!(
            "password retrieved from file \"{}\"",
            pgpass.display()
        )),
        "{text}"
    );
    assert_eq!(text, stock_error(&env, &a));
    assert!(!text.contains(secret));
}

#[test]
fn channel_binding_rules_without_tls() {
    let c = cluster();
    let env = Env::new().set("PGSSLMODE", "disable");
    let (user, pw) = ROLES[2];
    for (cb, ok) in [("disable", true), ("prefer", true), ("require", false)] {
        let a = ConnectArgs {
            dbname: Some(format!("dbname=postgres channel_binding={cb}")),
            ..role_args(c, true, user, Some(pw))
        };
        match env.connect(&a) {
            Ok(_) => assert!(ok, "{cb} should fail"),
            Err(e) => {
                assert!(!ok, "{cb}: {e}");
                assert_eq!(e.to_string(), stock_error(&env, &a));
                assert!(!e.to_string().contains(pw));
            }
        }
    }
    // Trust (and md5) cannot satisfy channel_binding=require either.
    for user in ["postgres", "u_md5"] {
        let a = ConnectArgs {
            dbname: Some("dbname=postgres channel_binding=require".into()),
            ..role_args(c, true, user, Some("pw md5"))
        };
        let e = our_error(&env, &a);
        assert_eq!(e.to_string(), stock_error(&env, &a));
    }
}

#[test]
fn server_without_tls() {
    let c = cluster();
    let env = Env::new();
    for (mode, ok) in [
        ("disable", true),
        ("allow", true),
        ("prefer", true),
        ("require", false),
        ("verify-ca", false),
        ("verify-full", false),
    ] {
        let a = ConnectArgs {
            dbname: Some(format!("dbname=postgres sslmode={mode}")),
            ..role_args(c, true, "postgres", None)
        };
        match env.connect(&a) {
            Ok(_) => assert!(ok, "{mode} connected"),
            Err(e) => {
                assert!(!ok, "{mode}: {e}");
                assert_eq!(e.to_string(), stock_error(&env, &a), "{mode}");
            }
        }
    }
}

/// A wrong password is one failed login in the server's log, as with libpq: under the
/// default sslmode (prefer) a server without TLS has already had its plain attempt,
/// so nothing is retried (account lock-out policies count every attempt).
#[test]
fn a_wrong_password_is_one_login_attempt() {
    let c = cluster();
    let env = Env::new();
    let failures = || {
        // The server writes its log asynchronously.
        std::thread::sleep(std::time::Duration::from_millis(300));
        c.server_log()
            .matches("password authentication failed for user \"u_lockout\"")
            .count()
    };
    for mode in ["prefer", "allow"] {
        let a = ConnectArgs {
            dbname: Some(format!("dbname=postgres sslmode={mode}")),
            ..role_args(c, true, "u_lockout", Some("wrong"))
        };
        let before = failures();
        let ours = our_error(&env, &a).to_string();
        let after_ours = failures();
        let stock = stock_error(&env, &a);
        let after_stock = failures();
        assert_eq!(ours, stock, "{mode}");
        assert_eq!(
            after_stock - after_ours,
            after_ours - before,
            "{mode}: stock vs ours"
        );
        let expected = if mode == "allow" { 2 } else { 1 };
        assert_eq!(after_ours - before, expected, "{mode}");
    }
}
