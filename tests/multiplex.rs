//! `-j` threads with several clients each (`src/bench/multiplex/`): seeded runs insert
//! what stock pgbench inserts with the same deal of clients to threads, through every
//! wait a client can make (replies, a pipeline's syncs, `\sleep`), with both drivers
//! (io_uring, and epoll as `PGBENCH_RS_IO=epoll` asks) and over TLS; the io_uring
//! driver is the one used where the kernel allows it; and the process runs at most
//! one OS thread per `-j` thread and per CPU, not one per client, with each `-j`
//! thread's random states and log file kept.

use crate::support::{aim, fresh_db, run, stock_pgbench};
use pgbench_cluster::{Cluster, ClusterOptions};
use std::io::Write;
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
    let ours_epoll = rows(db.ours().env("PGBENCH_RS_IO", "epoll"));
    assert_eq!(stock.lines().count(), 7 * 15 * 2);
    assert_eq!(ours, stock);
    assert_eq!(ours_epoll, stock);
}

/// Over TLS a connection does its own I/O (the io_uring driver only waits for its
/// socket to be readable): 6 seeded clients on 2 threads, with sslmode=require over
/// TCP, insert what stock inserts, each row from a TLS session.
#[test]
fn clients_over_tls_sharing_threads_insert_what_stock_pgbench_inserts() {
    let cluster = Cluster::start(ClusterOptions {
        tcp: true,
        ..Default::default()
    })
    .expect("tls cluster");
    let dir = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-new",
            "-x509",
            "-days",
            "2",
            "-nodes",
            "-subj",
            "/CN=localhost",
        ])
        .args([
            "-newkey",
            "rsa:2048",
            "-keyout",
            "server.key",
            "-out",
            "server.crt",
        ])
        .current_dir(dir.path())
        .output()
        .expect("openssl");
    assert!(made.status.success(), "{made:?}");
    for f in ["server.crt", "server.key"] {
        let bytes = std::fs::read(dir.path().join(f)).unwrap();
        cluster.write_data_file(f, &bytes).unwrap();
    }
    cluster
        .psql(
            "postgres",
            "alter system set ssl = on; create table tls_rows (client int, v bigint, tls bool)",
        )
        .unwrap();
    cluster.reload().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let script = dir.path().join("tls.sql");
    std::fs::write(
        &script,
        "\\set r random(1, 1000000)\n\
         insert into tls_rows select :client_id, :r, ssl from pg_stat_ssl where pid = pg_backend_pid();\n",
    )
    .unwrap();
    let rows = |program: std::path::PathBuf| {
        cluster.psql("postgres", "truncate tls_rows").unwrap();
        let mut cmd = std::process::Command::new(program);
        aim(&mut cmd, &cluster, "postgres");
        cmd.env("PGHOST", "127.0.0.1").env("PGSSLMODE", "require");
        let out = run(cmd
            .args([
                "--random-seed=11",
                "-n",
                "-t",
                "20",
                "-c",
                "6",
                "-j",
                "2",
                "-f",
            ])
            .arg(&script));
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        cluster
            .psql(
                "postgres",
                "select client, v, tls from tls_rows order by 1, 2",
            )
            .unwrap()
    };
    let stock = rows(stock_pgbench());
    let ours = rows(env!("CARGO_BIN_EXE_pgbench-rs").into());
    assert_eq!(stock.lines().count(), 6 * 20);
    assert!(stock.lines().all(|l| l.ends_with("|t")), "{stock}");
    assert_eq!(ours, stock);
}

/// Where this process can set up io_uring, a thread with several clients uses it: the
/// process holds an io_uring instance per such thread during the run; where the
/// kernel refuses (an old kernel, `io_uring_disabled`, a seccomp profile), and under
/// `PGBENCH_RS_IO=epoll`, none, and the run still succeeds on epoll.
#[test]
fn threads_with_several_clients_use_io_uring_where_the_kernel_gives_it() {
    let available = io_uring::IoUring::new(8).is_ok();
    let db = fresh_db("multiplexed_uring");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("select1.sql");
    std::fs::write(&script, "select 1;\n").unwrap();
    let rings = |epoll: bool| {
        let mut cmd = db.ours();
        if epoll {
            cmd.env("PGBENCH_RS_IO", "epoll");
        }
        cmd.args([
            "-n",
            "-c",
            "6",
            "-j",
            "3",
            "--os-threads=3",
            "-T",
            "2",
            "-f",
        ])
        .arg(&script);
        let (most, out) = most_while_running(cmd, Duration::from_millis(1500), |pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .map(|d| {
                    d.filter_map(Result::ok)
                        .filter_map(|e| std::fs::read_link(e.path()).ok())
                        .filter(|l| l.to_string_lossy() == "anon_inode:[io_uring]")
                        .count()
                })
                .unwrap_or(0)
        });
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        most
    };
    assert_eq!(rings(false), if available { 3 } else { 0 });
    assert_eq!(rings(true), 0);
}

/// 40 clients on 2 threads: the process has the 2 client threads, the main thread
/// (the collector) and the signal thread, not 40 client threads.
#[test]
fn forty_clients_on_two_threads_run_on_two_os_threads() {
    let db = fresh_db("multiplexed_threads");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("select1.sql");
    std::fs::write(&script, "select 1;\n").unwrap();
    let mut cmd = db.ours();
    cmd.args(["-n", "-c", "40", "-j", "2", "-T", "3", "-f"])
        .arg(&script);
    let (most, out) = most_while_running(cmd, Duration::from_secs(2), threads_of);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("number of clients: 40"), "{stdout}");
    assert!(
        (3..=4).contains(&most),
        "{most} threads for 40 clients on -j 2"
    );
}

/// More `-j` threads than CPUs run on one OS thread per CPU (`--os-threads` says how
/// many otherwise): 16 clients on `-j 16` make at most as many client threads as
/// this machine gives the process CPUs, beside the main and signal threads; with
/// `--os-threads=1`, one.
#[test]
fn more_threads_than_cpus_run_on_one_os_thread_per_cpu() {
    let db = fresh_db("os_threads");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("select1.sql");
    std::fs::write(&script, "select 1;\n").unwrap();
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let most_threads = |extra: &[&str]| {
        let mut cmd = db.ours();
        cmd.args(["-n", "-c", "16", "-j", "16", "-T", "3"])
            .args(extra)
            .arg("-f")
            .arg(&script);
        let (most, out) = most_while_running(cmd, Duration::from_secs(2), threads_of);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        // pgbench's report says what was asked, not how it ran.
        assert!(stdout.contains("number of threads: 16"), "{stdout}");
        most
    };
    let most = most_threads(&[]);
    assert!(
        (3..=cpus.min(16) + 2).contains(&most),
        "{most} threads for -j 16 on {cpus} CPUs"
    );
    let most = most_threads(&["--os-threads=1"]);
    assert!(
        (2..=3).contains(&most),
        "{most} threads with --os-threads=1"
    );
}

/// A `-j` thread keeps its random states and its log file whatever OS thread runs
/// it: 6 seeded clients on `-j 6` insert what stock inserts (each client's `\set`
/// draws are its own, its script choices its thread's) whether the six threads run
/// on one OS thread, on one per CPU or on six; and `-l` writes stock's six files.
#[test]
fn threads_sharing_an_os_thread_draw_and_log_as_stock_threads_do() {
    let db = fresh_db("os_threads_seeded");
    db.psql("create table os_rows (client int, script int, v bigint)");
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.sql");
    let two = dir.path().join("two.sql");
    std::fs::write(
        &one,
        "\\set r random(1, 1000000)\ninsert into os_rows values (:client_id, 1, :r);\n",
    )
    .unwrap();
    std::fs::write(
        &two,
        "\\set r random_exponential(1, 1000000, 3)\ninsert into os_rows values (:client_id, 2, :r);\n",
    )
    .unwrap();
    let rows = |cmd: &mut std::process::Command, logs: &std::path::Path| {
        db.psql("truncate os_rows");
        std::fs::create_dir_all(logs).unwrap();
        let out = run(cmd
            .current_dir(logs)
            .args([
                "--random-seed=11",
                "-n",
                "-t",
                "12",
                "-c",
                "6",
                "-j",
                "6",
                "-l",
            ])
            .arg("-f")
            .arg(format!("{}@1", one.display()))
            .arg("-f")
            .arg(format!("{}@3", two.display())));
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        let mut files: Vec<String> = std::fs::read_dir(logs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .map(
                |name| match name.split_once('.').map(|(_, rest)| rest.split_once('.')) {
                    // pgbench_log.PID[.THREAD]: the thread's number, without the pid.
                    Some(Some((_, thread))) => format!("log {thread}"),
                    _ => "log 0".to_string(),
                },
            )
            .collect();
        files.sort();
        let lines: usize = std::fs::read_dir(logs)
            .unwrap()
            .map(|e| {
                std::fs::read_to_string(e.unwrap().path())
                    .unwrap()
                    .lines()
                    .count()
            })
            .sum();
        assert_eq!(lines, 6 * 12, "a log line per transaction");
        (
            files,
            db.psql("select client, script, v from os_rows order by 1, 2, 3"),
        )
    };
    let stock = rows(&mut db.stock(), &dir.path().join("stock"));
    assert_eq!(
        stock.0,
        ["log 0", "log 1", "log 2", "log 3", "log 4", "log 5"]
    );
    assert_eq!(stock.1.lines().count(), 6 * 12);
    for (name, extra) in [
        ("one", Some("--os-threads=1")),
        ("cpus", None),
        ("six", Some("--os-threads=6")),
    ] {
        let mut cmd = db.ours();
        cmd.args(extra);
        assert_eq!(rows(&mut cmd, &dir.path().join(name)), stock, "{name}");
    }
}

/// How many threads process `pid` has (0 once it is gone).
fn threads_of(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(0)
}

/// Starts `cmd`, samples `count` of its process every 50 ms for `sampling`, and
/// returns the highest count and the finished command's output.
fn most_while_running(
    mut cmd: std::process::Command,
    sampling: Duration,
    count: impl Fn(u32) -> usize,
) -> (usize, std::process::Output) {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut most = 0;
    while started.elapsed() < sampling {
        most = most.max(count(child.id()));
        std::thread::sleep(Duration::from_millis(50));
    }
    (most, child.wait_with_output().unwrap())
}

/// #22: under `-M prepared`, a client whose Prepare waits (here on a lock another
/// session holds) stopped the other clients of its `-j` thread until it was answered:
/// the Prepare was sent and waited for synchronously. Client 1 must go on inserting
/// while client 0's Prepare waits; once the lock goes, client 0 finishes too.
#[test]
fn a_prepare_waiting_on_a_lock_does_not_stop_its_threads_other_clients() {
    let db = fresh_db("multiplexed_prepare_waits");
    db.psql("create table locked_t (x int); create table mux_done (client int)");
    for io in ["uring", "epoll"] {
        db.psql("truncate mux_done");
        a_prepare_waits_on_a_lock(&db, io);
    }
}

fn a_prepare_waits_on_a_lock(db: &crate::support::Db, io: &str) {
    let dir = tempfile::tempdir().unwrap();
    let script = crate::support::script_file(
        &dir,
        "lock.sql",
        "\\if :client_id = 0\nselect count(*) from locked_t;\n\\else\ninsert into mux_done values (:client_id);\n\\endif\n",
    );
    // The lock is held until psql reads the commit (or its input ends).
    let mut holder = std::process::Command::new("psql");
    aim(&mut holder, db.cluster, &db.name);
    let mut holder = holder
        .args(["-X", "-q", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut sql = holder.stdin.take().unwrap();
    sql.write_all(b"begin; lock table locked_t in access exclusive mode;\n")
        .unwrap();
    let locked = "select count(*) > 0 from pg_locks where relation = 'locked_t'::regclass \
                  and granted and mode = 'AccessExclusiveLock'";
    assert_eq!(db.value_within(locked, "t", Duration::from_secs(30)), "t");
    let child = db
        .ours()
        .env("PGBENCH_RS_IO", io)
        .args([
            "-n", "-t", "100", "-c", "2", "-j", "1", "-M", "prepared", "-f",
        ])
        .arg(&script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let waiting = "select count(*) > 0 from pg_stat_activity where datname = current_database() \
                   and wait_event_type = 'Lock' and query like 'select count(*) from locked_t%'";
    let prepare_waited = db.value_within(waiting, "t", Duration::from_secs(30));
    let others = db.value_within(
        "select count(*) from mux_done",
        "100",
        Duration::from_secs(20),
    );
    let _ = sql.write_all(b"commit;\n");
    drop(sql);
    let _ = holder.wait();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        prepare_waited, "t",
        "{io}: client 0's Prepare never waited on the lock"
    );
    assert_eq!(
        others, "100",
        "{io}: client 1 stalled while client 0's Prepare waited"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("number of transactions actually processed: 200/200"),
        "{stderr}"
    );
}
