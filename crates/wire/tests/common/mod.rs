//! Helpers shared by the integration tests: an explicit environment map (tests never
//! touch the process environment) and connections to throwaway clusters.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::Path;

use pgbench_cluster::Cluster;
use pgbench_wire::{ConnError, ConnectArgs, ConnectOptions, Connection};

/// An environment for `ConnectOptions::from_env_and_args`; HOME points to an empty
/// directory so no real `~/.pgpass` or `~/.postgresql/` is read.
pub struct Env {
    vars: HashMap<String, String>,
    _home: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let home = tempfile::tempdir().expect("temp HOME");
        let mut vars = HashMap::new();
        vars.insert("HOME".to_string(), home.path().display().to_string());
        vars.insert("PGSYSCONFDIR".to_string(), "/nonexistent".to_string());
        Env { vars, _home: home }
    }

    pub fn home(&self) -> &Path {
        self._home.path()
    }

    pub fn set(mut self, k: &str, v: &str) -> Env {
        self.vars.insert(k.to_string(), v.to_string());
        self
    }

    pub fn options(&self, args: &ConnectArgs) -> Result<ConnectOptions, ConnError> {
        let vars = self.vars.clone();
        ConnectOptions::from_env_and_args(&move |k| vars.get(k).cloned(), args)
    }

    pub fn connect(&self, args: &ConnectArgs) -> Result<Connection, ConnError> {
        Connection::connect(&self.options(args)?)
    }
}

/// pgbench's arguments for a cluster's socket, as superuser, database `db`.
pub fn socket_args(c: &Cluster, db: &str) -> ConnectArgs {
    ConnectArgs {
        host: Some(c.socket_dir().display().to_string()),
        port: Some(c.port().to_string()),
        user: Some(c.user().to_string()),
        dbname: Some(db.to_string()),
        fallback_application_name: Some("pgbench".into()),
        ..ConnectArgs::default()
    }
}

/// A connection to the shared cluster's fresh database `name`.
pub fn shared_conn(name: &str) -> Connection {
    let c = pgbench_cluster::shared();
    let db = c.fresh_database(name).expect("fresh database");
    Env::new().connect(&socket_args(c, &db)).expect("connect")
}

/// What stock libpq says for the same connection attempt: `psql -X -w -d <dbname>` with
/// the same environment, its `psql: error: ` prefix removed.
pub fn stock_error(env: &Env, args: &ConnectArgs) -> String {
    let mut cmd = std::process::Command::new("psql");
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(&env.vars)
        .args(["-X", "-w", "-c", "select 1"]);
    for (flag, value) in [("-h", &args.host), ("-p", &args.port), ("-U", &args.user)] {
        if let Some(v) = value {
            cmd.arg(flag).arg(v);
        }
    }
    if let Some(pw) = &args.password {
        cmd.env("PGPASSWORD", pw);
    }
    if let Some(d) = &args.dbname {
        cmd.arg("-d").arg(d);
    }
    let out = cmd.output().expect("run psql");
    assert!(!out.status.success(), "psql connected");
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    text.strip_prefix("psql: error: ")
        .unwrap_or(&text)
        .trim_end_matches('\n')
        .to_string()
}

/// Our error for the same attempt.
pub fn our_error(env: &Env, args: &ConnectArgs) -> ConnError {
    match env.connect(args) {
        Ok(_) => panic!("connected unexpectedly"),
        Err(e) => e,
    }
}

/// Sends `n` queries `sql` (with one parameter, the query's number) in one pipeline,
/// then a sync, before reading anything; reads every result up to the sync and leaves
/// pipeline mode. The number of rows returned. The server's replies fill the socket
/// buffers long before all requests are written, so writing must also read.
pub fn long_pipeline(conn: &mut Connection, sql: &str, n: usize) -> usize {
    use pgbench_wire::ResultStatus;
    conn.enter_pipeline_mode().unwrap();
    for i in 0..n {
        let v = i.to_string();
        conn.send_query_params(sql, &[Some(v.as_bytes())]).unwrap();
    }
    conn.pipeline_sync().unwrap();
    let mut rows = 0;
    loop {
        match conn.get_result().unwrap() {
            Some(ResultStatus::TuplesOk) => rows += 1,
            Some(ResultStatus::PipelineSync) => break,
            Some(other) => panic!("unexpected {other:?}"),
            None => {}
        }
    }
    assert_eq!(conn.last_row_value(0), None, "sync result has no rows");
    assert_eq!(conn.get_result().unwrap(), None);
    conn.exit_pipeline_mode().unwrap();
    rows
}

/// Runs the `openssl` command line tool in `dir`; panics with its stderr on failure.
pub fn openssl(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the openssl command line tool");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether stock libpq (psql) connects with these arguments over TLS: `Some(true)`
/// on TLS, `Some(false)` in plain text, `None` if it could not connect.
pub fn stock_uses_tls(env: &Env, args: &ConnectArgs) -> Option<bool> {
    let mut cmd = std::process::Command::new("psql");
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(&env.vars)
        .args(["-X", "-w", "-At", "-c"])
        .arg("select ssl from pg_stat_ssl where pid = pg_backend_pid()");
    if let Some(pw) = &args.password {
        cmd.env("PGPASSWORD", pw);
    }
    if let Some(d) = &args.dbname {
        cmd.arg("-d").arg(d);
    }
    let out = cmd.output().expect("run psql");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim() == "t")
}

/// A TCP peer on a free loopback port that answers every connection with `serve`
/// (after reading what the client sent first); runs until the test process ends.
pub fn peer(serve: impl Fn(&mut std::net::TcpStream) + Send + Sync + 'static) -> u16 {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let serve = std::sync::Arc::new(serve);
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let serve = serve.clone();
            std::thread::spawn(move || {
                let mut first = [0u8; 1024];
                let _ = s.read(&mut first);
                serve(&mut s);
            });
        }
    });
    port
}

/// Whether the server sees this connection over TLS.
pub fn uses_tls(conn: &mut Connection) -> bool {
    let rows = conn
        .query_rows("select ssl from pg_stat_ssl where pid = pg_backend_pid()")
        .unwrap();
    rows[0][0].as_deref() == Some("t")
}
