//! The password prompt without a terminal: like stock pgbench (`simple_prompt`), it
//! asks on stderr and reads stdin when `/dev/tty` cannot be opened, so
//! `echo pw | setsid pgbench ...` works. The prompt runs in a child of this test
//! binary started with `setsid -w` (a new session has no controlling terminal),
//! next to stock pgbench under the same conditions.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use pgbench_cluster::{Cluster, ClusterOptions};

const CHILD: &str = "PGBENCH_WIRE_PROMPT_CHILD";

/// Runs `cmd` under `setsid -w` with `input` on stdin.
fn without_terminal(cmd: &mut Command, input: &str) -> Output {
    let mut setsid = Command::new("setsid");
    setsid
        .arg("-w")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = setsid.spawn().expect("setsid (util-linux)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// In the child: prompt, and print what was read.
#[test]
fn prompt_child() {
    if std::env::var_os(CHILD).is_some() {
        let pw = pgbench_wire::prompt_password("Password: ");
        println!("read <{pw}>");
    }
}

#[test]
fn without_a_terminal_the_prompt_reads_stdin() {
    let mut me = Command::new(std::env::current_exe().unwrap());
    me.args(["--exact", "prompt_child", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1");
    let out = without_terminal(&mut me, "pw from stdin\nrest\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("read <pw from stdin>"), "{stdout}");
    let ours = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(ours, "Password: \n");

    // Stock pgbench under the same conditions prompts the same way, and the password
    // read from stdin lets it in.
    let c = Cluster::start(ClusterOptions {
        hba: Some("local all postgres trust\nlocal all u_pw md5\n".into()),
        ..Default::default()
    })
    .unwrap();
    c.psql(
        "postgres",
        "set password_encryption = 'md5'; create role u_pw login password 'pw from stdin';",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("one.sql");
    std::fs::write(&script, "select 1;\n").unwrap();
    let mut stock = Command::new("pgbench");
    stock
        .args(["-n", "-t", "1", "-f"])
        .arg(&script)
        .arg("-h")
        .arg(c.socket_dir())
        .args(["-p", &c.port().to_string(), "-U", "u_pw", "postgres"])
        .env("HOME", dir.path())
        .env_remove("PGPASSWORD");
    let out = without_terminal(&mut stock, "pw from stdin\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.starts_with(&ours), "{stderr}");
}
