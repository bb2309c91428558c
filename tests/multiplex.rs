//! `-j` threads with several clients each (`src/bench/multiplex.rs`): seeded runs insert
//! what stock pgbench inserts with the same deal of clients to threads, through every
//! wait a client can make (replies, a pipeline's syncs, `\sleep`), and the process runs
//! one OS thread per `-j` thread, not one per client.

use crate::support::{fresh_db, run};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Each client inserts its number and random values, through a pipeline, a sleep and
/// a `\gset` round trip: every phase a client can wait in.
const SCRIPT: &str = r"\set r random(1, 1000000)
\set s random(1, 1000000)
select :r + 1 as t \gset
\sleep 1 ms
\startpipeline
insert into mux_rows values (:client_id, :r, :t);
insert into mux_rows values (:client_id, :s, :t);
\endpipeline
";

#[test]
fn several_clients_per_thread_insert_what_stock_pgbench_inserts() {
    let db = fresh_db("multiplexed_inserts");
    db.psql("create table mux_rows (client int, v bigint, t bigint)");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("mux.sql");
    std::fs::write(&script, SCRIPT).unwrap();
    let rows = |cmd: &mut std::process::Command| {
        db.psql("truncate mux_rows");
        let out = run(cmd
            .args(["--random-seed=7", "-n", "-t", "15", "-c", "7", "-j", "2"])
            .args(["-M", "extended", "-f"])
            .arg(&script));
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        let only_the_seed = out
            .stderr
            .lines()
            .all(|l| l.ends_with("setting random seed to 7"));
        assert!(only_the_seed, "{}", out.stderr);
        db.psql("select client, v, t from mux_rows order by 1, 2, 3")
    };
    let stock = rows(&mut db.stock());
    let ours = rows(&mut db.ours());
    assert_eq!(stock.lines().count(), 7 * 15 * 2);
    assert_eq!(ours, stock);
}

/// 40 clients on 2 threads: the process has the 2 client threads, the main thread
/// (the collector) and the signal thread, not 40 client threads.
#[test]
fn forty_clients_on_two_threads_run_on_two_os_threads() {
    let db = fresh_db("multiplexed_threads");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("select1.sql");
    std::fs::write(&script, "select 1;\n").unwrap();
    let child = db
        .ours()
        .args(["-n", "-c", "40", "-j", "2", "-T", "3", "-f"])
        .arg(&script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let started = Instant::now();
    let mut most = 0;
    while started.elapsed() < Duration::from_secs(2) {
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        if let Some(n) = text
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|n| n.trim().parse::<usize>().ok())
        {
            most = most.max(n);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("number of clients: 40"), "{stdout}");
    assert!(
        (3..=4).contains(&most),
        "{most} threads for 40 clients on -j 2"
    );
}
