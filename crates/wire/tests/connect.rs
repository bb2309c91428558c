//! Connection establishment: libpq's error texts (compared with what stock libpq says
//! through psql), conninfo and URI precedence over -h/-p/-U, environment variables,
//! the password file, the service file and several hosts.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{our_error, socket_args, stock_error, Env};
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};

fn args(dbname: &str) -> ConnectArgs {
    ConnectArgs {
        dbname: Some(dbname.to_string()),
        fallback_application_name: Some("pgbench".into()),
        ..ConnectArgs::default()
    }
}

/// Our message equals stock libpq's for the same arguments and environment.
fn same_error_as_libpq(env: &Env, a: &ConnectArgs) -> String {
    let ours = our_error(env, a).to_string();
    let stock = stock_error(env, a);
    assert_eq!(ours, stock, "for {a:?}");
    ours
}

#[test]
fn socket_and_tcp_failures_read_like_libpq() {
    let env = Env::new();
    let e = same_error_as_libpq(&env, &args("host=/nonexistent port=1"));
    assert_eq!(
        e,
        "connection to server on socket \"/nonexistent/.s.PGSQL.1\" failed: No such file or directory\n\tIs the server running locally and accepting connections on that socket?"
    );
    let e = same_error_as_libpq(&env, &args("host=127.0.0.1 port=1"));
    assert_eq!(
        e,
        "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?"
    );
    same_error_as_libpq(&env, &args("host=localhost port=1"));
    same_error_as_libpq(&env, &args("hostaddr=127.0.0.1 port=1"));
    same_error_as_libpq(&env, &args("host=nosuchhost.invalid"));
    same_error_as_libpq(&env, &args("host=127.0.0.1,/nonexistent port=1,2"));
    same_error_as_libpq(&env, &args("host=/nonexistent,/nonexistent port=99999,3"));
}

#[test]
fn option_errors_read_like_libpq() {
    let env = Env::new();
    for bad in [
        "host=/tmp foo=1",
        "host=/tmp sslmode=foo",
        "host=/tmp channel_binding=foo",
        "host=/tmp target_session_attrs=foo",
        "host=a,b port=1,2,3",
        "host=/tmp hostaddr=1.2.3.4,5.6.7.8",
        "host=/tmp port=abc",
        "host='/tmp",
        "postgresql://[::1",
        "postgresql://h/?foo=bar",
        "service=nosuch",
        "host=/tmp ssl_min_protocol_version=TLSv9",
        "host=/tmp ssl_min_protocol_version=TLSv1.3 ssl_max_protocol_version=TLSv1.2",
        "host=/tmp ssl_max_protocol_version=tlsv1.1",
    ] {
        same_error_as_libpq(&env, &args(bad));
    }
    let e = our_error(&env, &args("host=/tmp ssl_max_protocol_version=TLSv1.1"));
    assert_eq!(e.to_string(), "invalid SSL protocol version range");
    // Names are case-insensitive, as in libpq.
    env.options(&args("host=/tmp ssl_min_protocol_version=tlsv1.3"))
        .unwrap();
    // Stock libpq here is built with GSSAPI; without it (as we are) libpq says this.
    let e = our_error(&env, &args("host=/tmp gssencmode=require"));
    assert_eq!(
        e.to_string(),
        "gssencmode value \"require\" invalid when GSSAPI support is not compiled in"
    );
}

#[test]
fn server_errors_read_like_libpq() {
    let c = pgbench_cluster::shared();
    let env = Env::new();
    let mut a = socket_args(c, "no_such_db");
    let e = same_error_as_libpq(&env, &a);
    assert!(
        e.ends_with("failed: FATAL:  database \"no_such_db\" does not exist"),
        "{e}"
    );
    a.user = Some("no_such_role".into());
    a.dbname = Some("postgres".into());
    same_error_as_libpq(&env, &a);
}

#[test]
fn connection_string_overrides_host_port_user() {
    let c = pgbench_cluster::shared();
    let db = c.fresh_database("wire_override").unwrap();
    let env = Env::new();
    let dir = c.socket_dir().display().to_string();
    for dbname in [
        format!("host={dir} port={} user=postgres dbname={db}", c.port()),
        format!(
            "postgresql://postgres@/{db}?host={}&port={}",
            dir.replace('/', "%2F"),
            c.port()
        ),
    ] {
        let a = ConnectArgs {
            host: Some("/nonexistent".into()),
            port: Some("1".into()),
            user: Some("nobody".into()),
            dbname: Some(dbname),
            fallback_application_name: Some("pgbench".into()),
            ..ConnectArgs::default()
        };
        let mut conn = env.connect(&a).expect("string values win");
        let rows = conn
            .query_rows("select current_database(), current_user")
            .unwrap();
        assert_eq!(rows[0][0].as_deref(), Some(db.as_str()));
        assert_eq!(rows[0][1].as_deref(), Some("postgres"));
    }
    // A plain database name does not override anything.
    let a = ConnectArgs {
        host: Some("/nonexistent".into()),
        port: Some("1".into()),
        ..args(&db)
    };
    assert!(env.connect(&a).is_err());
}

#[test]
fn environment_supplies_defaults() {
    let c = pgbench_cluster::shared();
    let db = c.fresh_database("wire_env").unwrap();
    let env = Env::new()
        .set("PGHOST", &c.socket_dir().display().to_string())
        .set("PGPORT", &c.port().to_string())
        .set("PGUSER", "postgres")
        .set("PGDATABASE", &db)
        .set("PGAPPNAME", "from_env")
        .set("PGOPTIONS", "-c work_mem=7MB")
        .set("PGCLIENTENCODING", "LATIN1");
    let mut conn = env.connect(&ConnectArgs::default()).unwrap();
    let rows = conn
        .query_rows("select current_database(), current_setting('application_name'), current_setting('work_mem')")
        .unwrap();
    assert_eq!(
        rows[0],
        vec![
            Some(db.clone()),
            Some("from_env".into()),
            Some("7MB".into())
        ]
    );
    assert_eq!(conn.parameter("client_encoding"), Some("LATIN1"));
    // Arguments beat the environment; fallback_application_name does not.
    let a = ConnectArgs {
        port: Some("1".into()),
        fallback_application_name: Some("pgbench".into()),
        ..ConnectArgs::default()
    };
    assert!(env.connect(&a).is_err());
    let opts = env.options(&ConnectArgs::default()).unwrap();
    assert_eq!(opts.get("application_name"), Some("from_env"));
    assert_eq!(opts.dbname(), db);
}

#[test]
fn defaults_without_anything() {
    let env = Env::new();
    let opts = env.options(&ConnectArgs::default()).unwrap();
    assert_eq!(
        opts.hosts(),
        vec![("/var/run/postgresql".into(), "5432".into())]
    );
    let out = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    let me = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(opts.user(), me);
    assert_eq!(opts.dbname(), me);
    assert_eq!(opts.sslmode(), pgbench_wire::SslMode::Prefer);
    let env = Env::new().set("PGHOST", "a,b").set("PGPORT", "1,2");
    let opts = env.options(&ConnectArgs::default()).unwrap();
    assert_eq!(
        opts.hosts(),
        vec![("a".into(), "1".into()), ("b".into(), "2".into())]
    );
}

#[test]
fn several_hosts_are_tried_in_order() {
    let c = pgbench_cluster::shared();
    let db = c.fresh_database("wire_hosts").unwrap();
    let env = Env::new();
    let dir = c.socket_dir().display().to_string();
    let a = ConnectArgs {
        host: Some(format!("/nonexistent,127.0.0.1,{dir}")),
        port: Some(format!("1,1,{}", c.port())),
        user: Some("postgres".into()),
        ..args(&db)
    };
    let conn = env.connect(&a).expect("third host works");
    // The host and port actually connected to (libpq's PQhost, PQport).
    assert_eq!(
        (conn.host(), conn.port()),
        (dir.as_str(), c.port().to_string().as_str())
    );
    // Load balancing still reaches the one working host.
    let s = format!(
        "host=/nonexistent,{dir} port=1,{} load_balance_hosts=random user=postgres dbname={db}",
        c.port()
    );
    for _ in 0..5 {
        env.connect(&args(&s)).unwrap();
    }
    // The server is a primary: read-write and primary accept it, the others refuse.
    let base = format!("host={dir} port={} user=postgres dbname={db}", c.port());
    for ok in ["any", "read-write", "primary", "prefer-standby"] {
        env.connect(&args(&format!("{base} target_session_attrs={ok}")))
            .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for (bad, why) in [
        ("read-only", "session is not read-only"),
        ("standby", "server is not in hot standby mode"),
    ] {
        let e = our_error(&env, &args(&format!("{base} target_session_attrs={bad}")));
        assert_eq!(
            e.to_string(),
            format!(
                "connection to server on socket \"{dir}/.s.PGSQL.{}\" failed: {why}",
                c.port()
            )
        );
    }
}

#[test]
fn password_file_rules() {
    let env = Env::new();
    let file = env.home().join("pgpass");
    std::fs::write(&file, "h1:5432:db:u:secret\\:1\n*:*:*:other:two\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let env = env.set("PGPASSFILE", &file.display().to_string());
    let a = ConnectArgs {
        host: Some("h1,h2".into()),
        user: Some("u".into()),
        ..args("db")
    };
    let opts = env.options(&a).unwrap();
    assert!(opts.has_password());
    let a = ConnectArgs {
        host: Some("h2".into()),
        user: Some("u".into()),
        ..args("db")
    };
    assert!(!env.options(&a).unwrap().has_password());
    // ~/.pgpass is used when PGPASSFILE is not set, but not if others may read it.
    let env = Env::new();
    let pgpass = env.home().join(".pgpass");
    std::fs::write(&pgpass, "*:*:*:*:pw\n").unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(env.options(&args("db")).unwrap().has_password());
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(!env.options(&args("db")).unwrap().has_password());
}

#[test]
fn service_file_supplies_values() {
    let c = pgbench_cluster::shared();
    let db = c.fresh_database("wire_service").unwrap();
    let env = Env::new();
    let file = env.home().join(".pg_service.conf");
    std::fs::write(
        &file,
        format!(
            "[bench]\nhost={}\nport={}\nuser=postgres\ndbname={db}\napplication_name=svc\n",
            c.socket_dir().display(),
            c.port()
        ),
    )
    .unwrap();
    let mut conn = env.connect(&args("service=bench")).unwrap();
    let rows = conn
        .query_rows("select current_database(), current_setting('application_name')")
        .unwrap();
    assert_eq!(rows[0], vec![Some(db.clone()), Some("svc".into())]);
    let env = env.set("PGSERVICE", "bench");
    let conn = env.connect(&ConnectArgs::default()).unwrap();
    drop(conn);
    // Values given explicitly beat the service file.
    let opts = env
        .options(&ConnectArgs {
            port: Some("9".into()),
            ..ConnectArgs::default()
        })
        .unwrap();
    assert_eq!(opts.hosts()[0].1, "9");
}

#[test]
fn options_debug_output_hides_passwords() {
    let env = Env::new();
    let a = ConnectArgs {
        password: Some("hunter2".into()),
        ..args("postgresql://u:s3cret@h/db")
    };
    let opts = env.options(&a).unwrap();
    assert!(!format!("{a:?} {opts:?}").contains("hunter2"));
    assert!(!format!("{a:?} {opts:?}").contains("s3cret"));
    assert_eq!(opts.get("password"), None);
    let _ = ConnectOptions::from_args(&ConnectArgs::default()).map(|o| o.user().to_string());
    let _: fn(&ConnectOptions) -> _ = Connection::connect;
}

#[test]
fn connect_timeout_moves_on_to_the_next_host() {
    // A listener that never answers: the kernel completes the handshake, nobody reads.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let env = Env::new();
    for sslmode in ["disable", "prefer"] {
        let a = args(&format!(
            "host=127.0.0.1,127.0.0.1 port={port},1 connect_timeout=1 sslmode={sslmode}"
        ));
        let start = std::time::Instant::now();
        let e = our_error(&env, &a).to_string();
        let took = start.elapsed();
        assert!(took >= std::time::Duration::from_millis(1900), "{took:?}");
        assert!(took < std::time::Duration::from_secs(6), "{took:?}");
        assert_eq!(
            e,
            format!(
                "connection to server at \"127.0.0.1\", port {port} failed: timeout expired\n\
                 connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\
                 \tIs the server running on that host and accepting TCP/IP connections?"
            )
        );
        assert_eq!(e, stock_error(&env, &a));
    }
    let e = our_error(&env, &args("host=127.0.0.1 connect_timeout=x")).to_string();
    assert_eq!(
        e,
        stock_error(&env, &args("host=127.0.0.1 connect_timeout=x"))
    );
}

/// `requirepeer` on a Unix socket: the server must run as the named user, checked
/// with the socket's peer credentials before anything is sent; libpq's words.
#[test]
fn requirepeer_checks_the_server_user() {
    use std::os::unix::fs::MetadataExt;
    let c = pgbench_cluster::shared();
    let env = Env::new();
    let owner = std::fs::metadata(c.data_dir()).unwrap().uid();
    let out = std::process::Command::new("id")
        .args(["-nu", &owner.to_string()])
        .output()
        .unwrap();
    let server_user = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let at = |peer: &str| ConnectArgs {
        user: Some(c.user().to_string()),
        ..socket_args_with(c, &format!("dbname=postgres requirepeer={peer}"))
    };
    env.connect(&at(&server_user))
        .expect("the server's own user passes");
    let e = same_error_as_libpq(&env, &at("no_such_server_user"));
    assert!(
        e.ends_with(&format!(
            "requirepeer specifies \"no_such_server_user\", but actual peer user name is \"{server_user}\""
        )),
        "{e}"
    );
    // Over TCP libpq ignores it.
    let tcp = ConnectArgs {
        host: Some("127.0.0.1".into()),
        ..at("no_such_server_user")
    };
    if c.has_tcp() {
        env.connect(&tcp)
            .expect("requirepeer is for Unix sockets only");
    }
}

fn socket_args_with(c: &pgbench_cluster::Cluster, dbname: &str) -> ConnectArgs {
    ConnectArgs {
        dbname: Some(dbname.to_string()),
        ..socket_args(c, "postgres")
    }
}

/// With only `hostaddr`, libpq 15's PQhost is the default socket directory (what
/// pgbench's `-d` line prints; checked with stock pgbench 15.18).
#[test]
fn host_and_port_as_libpq_reports_them() {
    let port = common::peer(|s| {
        use std::io::Write;
        let _ = s.write_all(b"R\0\0\0\x08\0\0\0\0Z\0\0\0\x05I");
        std::thread::sleep(std::time::Duration::from_millis(200));
    });
    let env = Env::new();
    let conn = env
        .connect(&args(&format!(
            "hostaddr=127.0.0.1 port={port} sslmode=disable"
        )))
        .unwrap();
    assert_eq!(conn.host(), "/var/run/postgresql");
    assert_eq!(conn.port(), port.to_string());
    let conn = env
        .connect(&args(&format!(
            "host=127.0.0.1 port={port} sslmode=disable"
        )))
        .unwrap();
    assert_eq!(conn.host(), "127.0.0.1");
}

/// libpq's EnvironmentOptions: PGDATESTYLE, PGTZ and PGGEQO go into the startup
/// packet as session settings (and `default` sends nothing): the same settings as a
/// libpq connection (psql) made with the same environment.
#[test]
fn pgtz_pgdatestyle_and_pggeqo_set_the_session_as_libpq_does() {
    let c = pgbench_cluster::shared();
    let db = c.fresh_database("wire_env_settings").unwrap();
    let sql = "select current_setting('timezone') || ' ' || current_setting('datestyle') \
               || ' ' || current_setting('geqo')";
    let env = Env::new()
        .set("PGTZ", "Asia/Tokyo")
        .set("PGDATESTYLE", "German, DMY")
        .set("PGGEQO", "off");
    let mut conn = env.connect(&socket_args(c, &db)).unwrap();
    let ours = conn.query_rows(sql).unwrap()[0][0].clone().unwrap();
    assert_eq!(ours, "Asia/Tokyo German, DMY off");
    let psql = std::process::Command::new("psql")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs([
            ("PGTZ", "Asia/Tokyo"),
            ("PGDATESTYLE", "German, DMY"),
            ("PGGEQO", "off"),
        ])
        .args(["-X", "-w", "-At", "-h"])
        .arg(c.socket_dir())
        .args([
            "-p",
            &c.port().to_string(),
            "-U",
            c.user(),
            "-d",
            &db,
            "-c",
            sql,
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&psql.stdout).trim_end(), ours);
    // `default`, in any case, leaves the server's setting.
    let mut plain = Env::new().connect(&socket_args(c, &db)).unwrap();
    let server = plain.query_rows(sql).unwrap()[0][0].clone().unwrap();
    let env = Env::new()
        .set("PGTZ", "DEFAULT")
        .set("PGDATESTYLE", "default")
        .set("PGGEQO", "Default");
    let mut conn = env.connect(&socket_args(c, &db)).unwrap();
    assert_eq!(conn.query_rows(sql).unwrap()[0][0].clone().unwrap(), server);
}
