//! Passwords given in the connection string (conninfo `password=`/`sslpassword=`, a
//! URI's `user:password@` and `?password=`) on a server that asks for them: a real run
//! writes its results file, page and `-l` logs, `pgbench-report` reads them back, and
//! the password is in no file and no output.

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
fn issue_22_no_password_in_any_file_or_output() {
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
