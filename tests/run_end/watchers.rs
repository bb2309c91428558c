//! #38: the run's own connections that watch the server (`--server-stats`'s sampler,
//! TPC-C's monitor) had no bound: a frozen server or a lost network held the run's end
//! and the first Ctrl-C until it came back (a `-T 8` run under a 340 s partition ended
//! at 356 s), and only a second signal ended it, without the report. They now end as
//! the clients do: within bounds after `-T`, at once after Ctrl-C, with the report and
//! a results file that says the server's end could not be read.

use super::{
    assert_thawed, kill, ours, private_cluster, proc_stat, processed, spawn, text, Frozen,
};
use crate::support::netns::NetNs;
use pgbench_cluster::Cluster;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A fresh database with pgbench's tables (scale 1) and TPC-C's (one warehouse).
pub(crate) fn loaded(cluster: &Cluster, name: &str) -> String {
    let db = cluster.fresh_database(name).unwrap();
    for args in [
        &["-i", "-q", "-s", "1"][..],
        &["-i", "--workload=tpcc", "-s", "1"],
    ] {
        let out = ours(cluster, &db).args(args).output().unwrap();
        assert!(out.status.success(), "{}", text(&out).1);
    }
    db
}

/// Waits until `n` of the run's clients (application name `pgbench-rs`) are connected.
pub(crate) fn connected(cluster: &Cluster, db: &str, n: usize) {
    let sql = format!(
        "select count(*) >= {n} from pg_stat_activity \
         where datname = current_database() and application_name = 'pgbench-rs'"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while cluster.psql(db, &sql).unwrap().trim() != "t" {
        assert!(Instant::now() < deadline, "{n} clients never connected");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The child's output once it ends; after `limit` it is killed and the test fails
/// (a guard such as [`Frozen`] thaws the server as the failure unwinds).
pub(crate) fn output_within(child: Child, limit: Duration, what: &str) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // With its children (`ip netns exec` runs pgbench-rs as one).
            for entry in std::fs::read_dir("/proc").unwrap().flatten() {
                let child = entry.file_name().to_string_lossy().parse::<u32>();
                if let Ok(child) = child {
                    if proc_stat(child).is_some_and(|(_, _, ppid)| ppid == pid) {
                        kill(child, "-KILL");
                    }
                }
            }
            kill(pid, "-KILL");
            panic!("{what}: still running {limit:?} after it was waited for")
        }
    }
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no results file {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The results file of a run whose server stopped answering: each watcher says it
/// could not read the end, and the figures it could not have are null.
fn says_the_end_was_not_read(doc: &serde_json::Value, tpcc: bool) {
    let errors: Vec<String> = crate::export::schema()
        .iter_errors(doc)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let s = &doc["run"]["server"];
    assert!(s["end"]["lost"].is_string(), "{}", s["end"]);
    assert!(s["derived"]["server_transactions"].is_null(), "{s}");
    if tpcc {
        let t = &doc["run"]["tpcc"];
        assert!(t["server_lost"].is_string(), "{t}");
        assert!(t["server"].is_null(), "{t}");
    }
}

#[test]
/// Issue #38.
fn a_frozen_server_ends_a_watched_run_in_bounds_and_ctrl_c_at_once() {
    let cluster = private_cluster(false);
    let db = loaded(&cluster, "frozen_watched");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("frozen.json");
    let export = format!("--export-json={}", file.display());
    // Both watchers at once: a TPC-C run with --server-stats, frozen 1 s into -T 5.
    let args = ["--workload=tpcc", "-c", "2", "--server-stats", &export];
    let (child, started) = spawn(ours(&cluster, &db).args(args).args(["-T", "5"]));
    connected(&cluster, &db, 2);
    std::thread::sleep(Duration::from_secs(1));
    let frozen = Frozen::freeze(&cluster);
    let out = output_within(child, Duration::from_secs(120), "-T 5, frozen");
    let took = started.elapsed();
    drop(frozen);
    let (stdout, stderr) = text(&out);
    eprintln!("-T 5 frozen: ended {took:?} after its start");
    // The clients' bound (5 s + their grace, 5 s, and 2 s) and the watchers' (4 s).
    assert!(took < Duration::from_secs(60), "took {took:?}: {stderr}");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(processed(&stdout) > 0, "{stdout}");
    assert!(
        stdout.contains("\nTEST RESULT : none: the server's counts could not be read"),
        "{stdout}"
    );
    assert!(
        stderr.contains("--server-stats: the window's end could not be read"),
        "{stderr}"
    );
    says_the_end_was_not_read(&json(&file), true);

    // Ctrl-C once the server is frozen: the run ends at once, with its report.
    std::fs::remove_file(&file).unwrap();
    let (child, _) = spawn(ours(&cluster, &db).args(args).args(["-T", "30"]));
    connected(&cluster, &db, 2);
    std::thread::sleep(Duration::from_secs(1));
    let frozen = Frozen::freeze(&cluster);
    let sent = Instant::now();
    kill(child.id(), "-INT");
    let out = output_within(child, Duration::from_secs(60), "Ctrl-C, frozen");
    let took = sent.elapsed();
    drop(frozen);
    let (stdout, stderr) = text(&out);
    eprintln!("Ctrl-C, frozen: ended {took:?} after it");
    assert!(took < Duration::from_secs(10), "took {took:?}: {stderr}");
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stdout.contains("\ntps = "), "{stdout}");
    assert!(!stderr.contains("again"), "{stderr}");
    says_the_end_was_not_read(&json(&file), true);
    assert_thawed(&cluster);
}

/// The same under a network partition, each watcher on its own run.
#[test]
/// Issue #38.
fn a_partition_ends_a_watched_run_in_bounds() {
    let Some(spaces) = [11, 12]
        .map(NetNs::create)
        .into_iter()
        .collect::<Option<Vec<_>>>()
    else {
        crate::support::skip("no network namespaces here (root and iproute2's ip needed)");
        return;
    };
    let cluster = private_cluster(true);
    let db = loaded(&cluster, "partition_watched");
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<(Child, Instant, &NetNs, bool)> = spaces
        .iter()
        .zip([false, true])
        .map(|(ns, tpcc)| {
            let file = dir.path().join(format!("{}.json", ns.name));
            let watcher: &[&str] = if tpcc {
                &["--workload=tpcc"]
            } else {
                &["-S", "--server-stats"]
            };
            let mut cmd = Command::new("ip");
            crate::support::aim(&mut cmd, &cluster, &db);
            cmd.args(["netns", "exec", &ns.name, env!("CARGO_BIN_EXE_pgbench-rs")])
                .args(watcher)
                .args(["-T", "8", "-c", "2"])
                .arg(format!("--export-json={}", file.display()))
                .env("PGHOST", format!("10.213.{}.1", if tpcc { 12 } else { 11 }))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let (child, at) = spawn(&mut cmd);
            (child, at, ns, tpcc)
        })
        .collect();
    connected(&cluster, &db, 4);
    std::thread::sleep(Duration::from_secs(1));
    for (_, _, ns, _) in &runs {
        ns.partition();
    }
    for (child, started, ns, tpcc) in runs {
        let out = output_within(child, Duration::from_secs(300), &ns.name);
        let took = started.elapsed();
        let (stdout, stderr) = text(&out);
        eprintln!("{}: ended {took:?} after its start (-T 8)", ns.name);
        assert!(
            took < Duration::from_secs(60),
            "{}: took {took:?}: {stderr}",
            ns.name
        );
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", ns.name);
        assert!(processed(&stdout) > 0, "{stdout}");
        let doc = json(&dir.path().join(format!("{}.json", ns.name)));
        if tpcc {
            assert!(doc["run"]["tpcc"]["server_lost"].is_string(), "{stdout}");
        } else {
            says_the_end_was_not_read(&doc, false);
        }
    }
}
