//! Ctrl-C during `-i`: like pgbench, the running statement is cancelled ("Cancel
//! request sent"), the load is rolled back, and the run ends with exit status 1 and
//! the server's message, instead of dying mid-COPY.

use crate::support::fresh_db;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn ctrl_c_cancels_the_load_and_rolls_it_back() {
    let db = fresh_db("interrupt_init");
    let child = db
        .ours()
        .args(["-i", "-s", "200"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until generation is under way (the first progress line), then interrupt.
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        sent.elapsed() < Duration::from_secs(30),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Cancel request sent\n"), "{stderr}");
    assert!(
        stderr.contains("canceling statement due to user request"),
        "{stderr}"
    );
    // The load was one transaction: nothing of it is left.
    assert_eq!(db.value("select count(*) from pgbench_accounts"), "0");
}
