//! Passwords given in the connection string (conninfo `password=`/`sslpassword=`, a
//! URI's `user:password@` and `?password=`) on a server that asks for them: a real run
//! writes its results file, page and `-l` logs, `pgbench-report` reads them back, and
//! the password is in no file and no output. And another session's password, which
//! `pg_stat_statements` keeps, is in nothing `--server-stats` writes (#38).

use pgbench_cluster::{Cluster, ClusterOptions};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const PASSWORD: &str = "Sekr1t-pw-0x5f";
const SSL_PASSWORD: &str = "Sekr1t-key-0x7a";

const HBA: &str = "\
local all postgres trust
local all bench scram-sha-256
";

/// Everything a command printed, checked for the secrets.
fn outputs(what: &str, out: &Output) -> String {
    format!(
        "{what}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn no_pg_env(cmd: &mut Command) -> &mut Command {
    for (k, _) in std::env::vars() {
        if k.starts_with("PG") {
            cmd.env_remove(k);
        }
    }
    cmd.stdin(Stdio::null())
}

fn ours(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
    no_pg_env(&mut cmd).current_dir(dir);
    cmd
}

fn report(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn assert_ok(out: &Output, what: &str) {
    assert!(out.status.success(), "{}", outputs(what, out));
}

/// #22: a password in the connection string was written in plain text into the results
/// file (`command_line`, `options.dbname`) and the HTML page (title, labels).
#[test]
fn no_password_in_any_file_or_output() {
    let cluster = Cluster::start(ClusterOptions {
        hba: Some(HBA.into()),
        ..Default::default()
    })
    .expect("cluster with password authentication");
    cluster
        .psql(
            "postgres",
            &format!(
                "create role bench login password '{PASSWORD}';
                 create database benchdb owner bench;"
            ),
        )
        .unwrap();
    let sock = cluster.socket_dir().display().to_string();
    let port = cluster.port().to_string();
    let conninfo = format!(
        "host={sock} port={port} user=bench dbname=benchdb password='{PASSWORD}' \
         sslmode=disable sslpassword={SSL_PASSWORD}"
    );
    let uri = format!(
        "postgresql://bench:{PASSWORD}@/benchdb?host={}&port={port}&sslpassword={SSL_PASSWORD}",
        sock.replace('/', "%2F")
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut printed = Vec::new();

    let init = ours(d)
        .args(["-i", "-s", "1"])
        .arg(&conninfo)
        .output()
        .unwrap();
    assert_ok(&init, "init");
    printed.push(outputs("init", &init));
    // Without the password the server refuses: the runs below did authenticate with it.
    let refused = ours(d)
        .args([
            "-t", "1", "-h", &sock, "-p", &port, "-U", "bench", "benchdb",
        ])
        .output()
        .unwrap();
    assert!(
        !refused.status.success(),
        "{}",
        outputs("no password", &refused)
    );

    for (name, target) in [("conninfo", &conninfo), ("uri", &uri)] {
        let run = ours(d)
            .args([
                "-t", "20", "-c", "2", "-j", "1", "-P", "1", "-r", "-d", "-l",
            ])
            .arg(format!("--log-prefix={name}_log"))
            .arg(format!("--export-json={name}.json"))
            .arg(format!("--export-html={name}.html"))
            .arg(target)
            .output()
            .unwrap();
        assert_ok(&run, name);
        printed.push(outputs(name, &run));
    }
    // A file holding the password (written before it was masked): pgbench-report masks
    // it as it reads it. The file itself lies outside the directory checked below.
    let old_dir = tempfile::tempdir().unwrap();
    let old = old_dir.path().join("old.json");
    let masked = std::fs::read_to_string(d.join("uri.json")).unwrap();
    std::fs::write(&old, masked.replace(pgbench_wire::MASK, PASSWORD)).unwrap();
    assert!(std::fs::read_to_string(&old).unwrap().contains(PASSWORD));
    let old = old.display().to_string();
    for args in [
        &["html", &old, "-o", "old.html"][..],
        &["merge", &old, "-o", "old-merged.json"],
        &["compare", &old, "conninfo.json"],
        &["show", "conninfo.json"],
        &["show", "uri.json"],
        &["html", "conninfo.json", "uri.json", "-o", "both.html"],
        &["compare", "conninfo.json", "uri.json"],
        &["merge", "conninfo.json", "-o", "merged.json"],
    ] {
        let out = report(d, args);
        printed.push(outputs(&args.join(" "), &out));
    }

    let mut files = 0;
    for entry in std::fs::read_dir(d).unwrap() {
        let path = entry.unwrap().path();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        for secret in [PASSWORD, SSL_PASSWORD] {
            assert!(!text.contains(secret), "{} holds {secret}", path.display());
        }
        files += 1;
    }
    // Two runs' json, html and -l logs (one per -j thread), and pgbench-report's page.
    assert!(files >= 7, "{files} files written");
    for out in &printed {
        for secret in [PASSWORD, SSL_PASSWORD] {
            assert!(!out.contains(secret), "{secret} printed in {out}");
        }
    }
    let json = std::fs::read_to_string(d.join("uri.json")).unwrap();
    assert!(
        json.contains(&format!("bench:{}@", pgbench_wire::MASK)),
        "the masked connection string is recorded: {json}"
    );
}

/// #38: `--server-stats` wrote other sessions' statements into the results, and
/// PostgreSQL 15's `pg_stat_statements` keeps a utility statement's text verbatim:
/// another session's `ALTER ROLE ... PASSWORD '...'` during a run was printed in the
/// `server:` block and written to `run.server.statements`. Only the run's own
/// statements are kept now, with their scripts' text.
#[test]
fn no_other_session_s_statement_or_password_in_server_stats() {
    const SECRET: &str = "Leaky_Secret_42";
    const OTHER: &str = "another_session_s_column";
    let cluster = Cluster::start(ClusterOptions {
        config: vec![(
            "shared_preload_libraries".into(),
            "pg_stat_statements".into(),
        )],
        ..Default::default()
    })
    .expect("cluster with pg_stat_statements");
    let db = cluster.fresh_database("statements_secret").unwrap();
    let psql = |sql: &str| cluster.psql(&db, sql).unwrap();
    psql("create extension pg_stat_statements; create role victim");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("one.sql"),
        "SELECT count(*) FROM pg_class WHERE oid = 1259;\n",
    )
    .unwrap();
    let mut cmd = ours(d);
    crate::support::aim(&mut cmd, &cluster, &db);
    let child = cmd
        .args([
            "-n",
            "-c",
            "2",
            "-T",
            "4",
            "-f",
            "one.sql",
            "--print-server-stats",
        ])
        .args(["--export-json=run.json", "--export-html=run.html"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // In the window, as the same role as the run's.
    let connected = "select count(*) >= 2 from pg_stat_activity \
                     where datname = current_database() and application_name = 'pgbench-rs'";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while psql(connected).trim() != "t" {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never connected"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    psql(&format!(
        "alter role victim password '{SECRET}'; select 1 as {OTHER};"
    ));
    let run = child.wait_with_output().unwrap();
    assert_ok(&run, "server-stats run");
    // The server did keep the password: there was something to leak.
    let kept = psql(&format!(
        "select count(*) from pg_stat_statements where query like '%{SECRET}%'"
    ));
    assert_eq!(kept.trim(), "1");
    let mut printed = vec![outputs("server-stats run", &run)];
    printed.push(outputs("show", &report(d, &["show", "run.json"])));
    for out in &printed {
        for secret in [SECRET, OTHER] {
            assert!(!out.contains(secret), "{secret} printed in {out}");
        }
    }
    for entry in std::fs::read_dir(d).unwrap() {
        let path = entry.unwrap().path();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        for secret in [SECRET, OTHER] {
            assert!(!text.contains(secret), "{} holds {secret}", path.display());
        }
    }
    // The run's own statement is there, as its script has it.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("run.json")).unwrap()).unwrap();
    let top = doc["run"]["server"]["statements"].as_array().unwrap();
    let texts: Vec<&str> = top.iter().map(|s| s["query"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        ["SELECT count(*) FROM pg_class WHERE oid = 1259"],
        "{top:#?}"
    );
}
