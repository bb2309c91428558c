//! `--worker=I/N`: several pgbench-rs processes against one server as one run. The
//! workers of a seeded run draw exactly what one process with all the clients draws;
//! they start at one instant; a worker that never comes, a duplicate index or Ctrl-C
//! while waiting stops the others with nothing run, and a worker killed mid-run leaves
//! the others' results whole; the barrier leaves nothing behind in the database. As
//! root, the workers also run in network namespaces of their own, over TCP.

use crate::support::{fresh_db, script_file, Db, Run};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Each transaction records who drew what: the client number, two random values and
/// the run's `:default_seed`.
const DRAWS: &str = "\\set r random(1, 1000000000)\n\
    \\set g random_gaussian(1, 1000000, 2.5)\n\
    insert into draws (client, r, g, seed) values (:client_id, :r, :g, :default_seed);\n";

fn draws_table(db: &Db) {
    db.psql("create table draws (id bigserial, client int, r bigint, g bigint, seed bigint)");
}

/// What every client drew, in order, one line per client.
fn draws_by_client(db: &Db) -> String {
    db.psql(
        "select client, string_agg(r || ':' || g || ':' || seed, ',' order by id) \
         from draws group by client order by client",
    )
}

fn spawn(db: &Db, args: &[&str]) -> Child {
    db.ours()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pgbench-rs")
}

fn finish(child: Child) -> Run {
    let out = child.wait_with_output().expect("wait for pgbench-rs");
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("results file")).unwrap()
}

/// `number of transactions actually processed: N`.
fn processed(stdout: &str) -> i64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|n| n.split('/').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {stdout}"))
}

/// What the barrier leaves in this database: barrier sessions and advisory locks.
fn barrier_leftovers(db: &Db) -> String {
    // A session that just ended may take a moment to leave the server's tables.
    db.value_within(
        "select (select count(*) from pg_stat_activity \
                  where datname = current_database() and application_name like 'pgbr %') \
             || ' sessions, ' || \
                (select count(*) from pg_locks l join pg_database d on d.oid = l.database \
                  where l.locktype = 'advisory' and d.datname = current_database()) \
             || ' locks'",
        "0 sessions, 0 locks",
        Duration::from_secs(5),
    )
}

/// Unix µs of an RFC 3339 UTC time as results files write it (`...T12:34:56.789012Z`).
fn unix_us(rfc3339: &str) -> i64 {
    let n = |range: std::ops::Range<usize>| rfc3339[range].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let secs = days * 86_400 + n(11..13) * 3600 + n(14..16) * 60 + n(17..19);
    let frac = rfc3339[20..26].parse::<i64>().unwrap();
    secs * 1_000_000 + frac
}

#[test]
fn seeded_workers_draw_what_one_run_with_all_the_clients_draws() {
    let db = fresh_db("worker_seeded");
    draws_table(&db);
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "draws.sql", DRAWS);
    let common = ["-n", "-f", &script, "--random-seed=5", "-t", "20"];
    let files: Vec<_> = (0..3)
        .map(|i| dir.path().join(format!("w{i}.json")))
        .collect();
    let workers: Vec<Child> = (0..3)
        .map(|i| {
            let worker = format!("--worker={i}/3");
            let export = format!("--export-json={}", files[i].display());
            let mut args = common.to_vec();
            args.extend([
                "-c",
                "2",
                "-j",
                "2",
                "--worker-timeout=30",
                &worker,
                &export,
            ]);
            spawn(&db, &args)
        })
        .collect();
    let runs: Vec<Run> = workers.into_iter().map(finish).collect();
    for r in &runs {
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let total: i64 = runs.iter().map(|r| processed(&r.stdout)).sum();
    assert_eq!(total, 120);
    assert_eq!(db.value("select count(*) from draws"), "120");
    let split = draws_by_client(&db);

    db.psql("truncate draws");
    let mut args = common.to_vec();
    args.extend(["-c", "6", "-j", "6"]);
    let single = crate::support::run(db.ours().args(&args));
    assert_eq!(single.code, 0, "{}", single.stderr);
    assert_eq!(split, draws_by_client(&db));
    assert_eq!(split.lines().count(), 6, "{split}");

    let docs: Vec<_> = files.iter().map(|f| json(f)).collect();
    for (i, doc) in docs.iter().enumerate() {
        let w = &doc["worker"];
        assert_eq!(w["index"], i as u64);
        assert_eq!(w["count"], 3);
        assert_eq!(w["first_client"], 2 * i as u64);
        assert_eq!(w["run_id"], docs[0]["worker"]["run_id"]);
        assert_eq!(w["start_unix_us"], docs[0]["worker"]["start_unix_us"]);
        assert_eq!(doc["options"]["worker"], format!("{i}/3"));
        assert_eq!(doc["options"]["client"], 2);
        assert_eq!(doc["random_seed"], 5);
    }
    assert_eq!(barrier_leftovers(&db), "0 sessions, 0 locks");
}

#[test]
fn unseeded_workers_share_worker_zeros_seed_and_start_at_one_instant() {
    let db = fresh_db("worker_timed");
    draws_table(&db);
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "draws.sql", DRAWS);
    let files: Vec<_> = (0..2)
        .map(|i| dir.path().join(format!("w{i}.json")))
        .collect();
    let start = |i: usize| {
        let worker = format!("--worker={i}/2");
        let export = format!("--export-json={}", files[i].display());
        let args = [
            "-n", "-f", &script, "-T", "2", "-c", "1", "-P", "1", &worker, &export,
        ];
        spawn(&db, &args)
    };
    // Worker 1 comes first and waits for worker 0's seed, then worker 0 for it.
    let late = start(1);
    std::thread::sleep(Duration::from_millis(1000));
    let first = start(0);
    let (w0, w1) = (finish(first), finish(late));
    assert_eq!((w0.code, w1.code), (0, 0), "{}\n{}", w0.stderr, w1.stderr);
    let (d0, d1) = (json(&files[0]), json(&files[1]));
    assert_eq!(d0["random_seed"], d1["random_seed"]);
    let seeds = db.value("select count(distinct seed) from draws");
    assert_eq!(seeds, "1", "both workers' clients see one :default_seed");
    let agreed = d0["worker"]["start_unix_us"].as_i64().unwrap();
    assert_eq!(d1["worker"]["start_unix_us"].as_i64(), Some(agreed));
    for d in [&d0, &d1] {
        let started = unix_us(d["started_at"].as_str().unwrap());
        let ended = unix_us(d["ended_at"].as_str().unwrap());
        assert!((started - agreed).abs() < 100_000, "{started} vs {agreed}");
        assert!(
            (ended - agreed - 2_000_000).abs() < 300_000,
            "{ended} vs {agreed}"
        );
    }
    // The wait for worker 0 is not connection time.
    let conn_ms = |out: &str| -> f64 {
        out.lines()
            .find_map(|l| l.strip_prefix("initial connection time = "))
            .and_then(|v| v.trim_end_matches(" ms").parse().ok())
            .unwrap()
    };
    assert!(conn_ms(&w1.stdout) < 500.0, "{}", w1.stdout);
    // -P counts from the agreed instant on both.
    for w in [&w0, &w1] {
        assert!(w.stderr.contains("progress: 1.0 s"), "{}", w.stderr);
    }
    // #22: a waiting worker printed nothing for up to 60 s. Now a line when it starts
    // waiting, and one per worker that arrives.
    for (w, me, other) in [(&w0, 0, 1), (&w1, 1, 0)] {
        assert!(
            w.stderr.contains(&format!(
                "pgbench-rs: worker {me} of 2: waiting up to 60 s for the other workers of run "
            )),
            "{}",
            w.stderr
        );
        let arrived = format!("pgbench-rs: worker {other} of 2 arrived\n");
        assert_eq!(w.stderr.matches(&arrived).count(), 1, "{}", w.stderr);
    }
    assert_eq!(barrier_leftovers(&db), "0 sessions, 0 locks");
}

#[test]
fn a_worker_that_never_comes_stops_the_others_with_nothing_run() {
    let db = fresh_db("worker_missing");
    draws_table(&db);
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "draws.sql", DRAWS);
    let started = Instant::now();
    let run = |worker: &str, seed: &str| {
        let w = format!("--worker={worker}");
        spawn(
            &db,
            &[
                "-n",
                "-f",
                &script,
                "-t",
                "5",
                "--worker-timeout=2",
                &w,
                seed,
            ],
        )
    };
    let present: Vec<Child> = vec![
        run("0/3", "--random-seed=1"),
        run("1/3", "--random-seed=1"),
        // Unseeded and alone: waits for worker 0's seed, which never comes.
        run("1/2", "--random-seed=rand"),
    ];
    let runs: Vec<Run> = present.into_iter().map(finish).collect();
    let elapsed = started.elapsed();
    for r in &runs[..2] {
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(
            r.stderr.contains(
                "error: worker 2 of 3 did not arrive within 2 s (--worker-timeout); the run did not start"
            ),
            "{}",
            r.stderr
        );
        assert!(!r.stdout.contains("transaction type"), "{}", r.stdout);
    }
    assert_eq!(runs[2].code, 1, "{}", runs[2].stderr);
    assert!(
        runs[2]
            .stderr
            .contains("error: worker 0 of 2 did not arrive within 2 s"),
        "{}",
        runs[2].stderr
    );
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert_eq!(db.value("select count(*) from draws"), "0");
    assert_eq!(barrier_leftovers(&db), "0 sessions, 0 locks");
}

/// #22: workers of two runs that differ in an option each said the other "did not
/// arrive". Now each says a worker of another run is waiting, and names the option.
#[test]
fn workers_of_different_runs_name_the_option_that_differs() {
    let db = fresh_db("worker_other_run");
    draws_table(&db);
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "draws.sql", DRAWS);
    let run = |worker: &str, clients: &str| {
        let w = format!("--worker={worker}");
        spawn(
            &db,
            &[
                "-n",
                "-f",
                &script,
                "-t",
                "5",
                "-c",
                clients,
                "--worker-timeout=2",
                &w,
            ],
        )
    };
    let (a, b) = (run("0/2", "1"), run("1/2", "2"));
    let (a, b) = (finish(a), finish(b));
    for (r, other) in [(&a, 1), (&b, 0)] {
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "warning: a worker of another run is waiting here: worker {other} of run "
            )) && r.stderr.contains(
                "; its -c differs from this run's (the workers of one run need the same options)\n"
            ),
            "{}",
            r.stderr
        );
    }
    assert_eq!(barrier_leftovers(&db), "0 sessions, 0 locks");
}

#[test]
fn a_duplicate_index_is_refused_and_the_first_keeps_its_place() {
    let db = fresh_db("worker_duplicate");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "one.sql", "select 1;\n");
    let args = |more: &[&'static str]| [&["-n", "-f", &script, "-t", "5"], more].concat();
    let first = spawn(&db, &args(&["--worker=0/2", "--worker-timeout=3"]));
    wait_for_entry(&db, "ready");
    let second = crate::support::run(db.ours().args(args(&["--worker=0/2"])));
    assert_eq!(second.code, 1);
    assert!(
        second
            .stderr
            .contains("error: worker 0 of 2 of this run is already waiting"),
        "{}",
        second.stderr
    );
    let first = finish(first);
    assert_eq!(first.code, 1);
    assert!(
        first.stderr.contains("worker 1 of 2 did not arrive"),
        "{}",
        first.stderr
    );
    assert_eq!(barrier_leftovers(&db), "0 sessions, 0 locks");
}

/// Waits until a barrier session of this database shows `state`.
fn wait_for_entry(db: &Db, state: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let sql = format!(
        "select count(*) from pg_stat_activity where datname = current_database() \
         and application_name like 'pgbr % {state}%'"
    );
    while db.value(&sql) == "0" {
        assert!(
            Instant::now() < deadline,
            "no barrier session in state {state}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `signal` (`-INT`, `-TERM`) to a child.
fn signal(child: &Child, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[test]
fn ctrl_c_while_waiting_stops_the_worker_and_leaves_nothing() {
    let db = fresh_db("worker_interrupt");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "one.sql", "select 1;\n");
    // Worker 0, its clients connected; then worker 1 of another run, waiting for its
    // worker 0's seed before its clients connect.
    for (worker, state, sig, code) in [("0/2", "ready", "-INT", 130), ("1/3", "wait", "-TERM", 143)]
    {
        let w = format!("--worker={worker}");
        let args = ["-n", "-f", &script, "-t", "5", &w, "--worker-timeout=60"];
        let waiting = spawn(&db, &args);
        wait_for_entry(&db, state);
        let asked = Instant::now();
        signal(&waiting, sig);
        let r = finish(waiting);
        assert!(asked.elapsed() < Duration::from_secs(5));
        assert_eq!(r.code, code, "{worker}: {}", r.stderr);
        if state == "ready" {
            assert!(
                r.stderr.contains(
                    "interrupted while waiting for the other workers; the run did not start"
                ),
                "{}",
                r.stderr
            );
        }
        assert_eq!(barrier_leftovers(&db), "0 sessions, 0 locks", "{worker}");
    }
}

#[test]
fn a_worker_killed_mid_run_leaves_the_others_results_whole() {
    let db = fresh_db("worker_killed");
    draws_table(&db);
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "draws.sql", DRAWS);
    let file = dir.path().join("w0.json");
    let export = format!("--export-json={}", file.display());
    let common = ["-n", "-f", &script, "-T", "3", "-c", "2", "-j", "2"];
    let survivor = spawn(&db, &[&common[..], &["--worker=0/2", &export]].concat());
    let mut doomed = spawn(&db, &[&common[..], &["--worker=1/2"]].concat());
    // Killed once its clients are running.
    let deadline = Instant::now() + Duration::from_secs(20);
    while db.value("select count(*) from draws where client >= 2") == "0" {
        assert!(Instant::now() < deadline, "worker 1 never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1000));
    doomed.kill().unwrap();
    let _ = doomed.wait();
    let r = finish(survivor);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let counted = processed(&r.stdout);
    let mine = db.value("select count(*) from draws where client in (0, 1)");
    assert_eq!(mine, counted.to_string());
    assert!(counted > 0);
    let doc = json(&file);
    assert_eq!(
        doc["summary"]["transactions"], counted,
        "{}",
        doc["summary"]
    );
    assert_eq!(barrier_leftovers(&db), "0 sessions, 0 locks");
}

#[test]
fn bad_worker_options_exit_1_before_connecting() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--worker=2/2"],
            "pgbench-rs: error: invalid value \"2/2\" for option --worker: the worker index I must be less than N (it counts from 0)\n",
        ),
        (
            &["--worker=0/0"],
            "pgbench-rs: error: invalid value \"0/0\" for option --worker: the number of workers N must be at least 1\n",
        ),
        (
            &["--worker", "1"],
            "pgbench-rs: error: invalid value \"1\" for option --worker: expecting I/N, this process's index I (0 to N-1) and the number of workers N\n",
        ),
        (
            &["--worker=0/2", "--worker-timeout=-1"],
            "pgbench-rs: error: --worker-timeout must be in range 1..2147483647\n",
        ),
        (
            &["--worker-timeout=5"],
            "pgbench-rs: error: --worker-timeout is allowed only under --worker\n",
        ),
    ];
    for (args, want) in cases {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
        // Nothing may connect: if something tried, it would find no server.
        cmd.args(*args)
            .env("PGHOST", "/nonexistent")
            .stdin(Stdio::null());
        let r = crate::support::run(&mut cmd);
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (1, ""),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(r.stderr, *want, "{args:?}");
    }
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
    let r = crate::support::run(cmd.arg("--work=0/1").stdin(Stdio::null()));
    assert!(
        r.stderr.contains(
            "option '--work=0/1' is ambiguous; possibilities: '--worker' '--worker-timeout'"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn log_files_and_lines_carry_the_whole_runs_thread_and_client_numbers() {
    let db = fresh_db("worker_logs");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "one.sql", "select 1;\n");
    let workers: Vec<Child> = (0..2)
        .map(|i| {
            let worker = format!("--worker={i}/2");
            let args = [
                "-n", "-f", &script, "-t", "3", "-c", "2", "-j", "2", "-l", &worker,
            ];
            let mut cmd = db.ours();
            cmd.args(args)
                .current_dir(dir.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    let pids: Vec<u32> = workers.iter().map(Child::id).collect();
    for w in workers {
        let r = finish(w);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    // Thread t of worker i is the run's thread 2*i + t; thread 0 has no suffix.
    let files = [
        (format!("pgbench_log.{}", pids[0]), "0"),
        (format!("pgbench_log.{}.1", pids[0]), "1"),
        (format!("pgbench_log.{}.2", pids[1]), "2"),
        (format!("pgbench_log.{}.3", pids[1]), "3"),
    ];
    for (name, client) in &files {
        let text = std::fs::read_to_string(dir.path().join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(text.lines().count(), 3, "{name}: {text}");
        for line in text.lines() {
            assert_eq!(line.split(' ').next(), Some(*client), "{name}: {line}");
        }
    }
}

/// As if on three machines: each worker in its own network namespace, reaching the
/// server over TCP through its own link; together they insert what one process with
/// all the clients inserts.
#[test]
fn workers_in_network_namespaces_meet_over_tcp() {
    let Some(spaces) = (1..=3)
        .map(crate::support::netns::NetNs::create)
        .collect::<Option<Vec<_>>>()
    else {
        eprintln!("skipped: no network namespaces here (root and iproute2's ip needed)");
        return;
    };
    let cluster = pgbench_cluster::Cluster::start(pgbench_cluster::ClusterOptions {
        tcp: true,
        hba: Some("local all all trust\nhost all all 0.0.0.0/0 trust\n".into()),
        config: vec![("listen_addresses".into(), "*".into())],
        ..Default::default()
    })
    .unwrap();
    let db = cluster.fresh_database("worker_netns").unwrap();
    let psql = |sql: &str| cluster.psql(&db, sql).unwrap();
    // Each row says where its client connected from.
    psql(
        "create table draws (id bigserial, client int, r bigint, g bigint, seed bigint, \
         addr inet default inet_client_addr())",
    );
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "draws.sql", DRAWS);
    let common = ["-n", "-f", &script, "--random-seed=11", "-t", "20"];
    let workers: Vec<Child> = spaces
        .iter()
        .enumerate()
        .map(|(i, ns)| {
            let mut cmd = std::process::Command::new("ip");
            crate::support::aim(&mut cmd, &cluster, &db);
            cmd.args(["netns", "exec", &ns.name, env!("CARGO_BIN_EXE_pgbench-rs")])
                .args(common)
                .args(["-c", "2", "-j", "2", "--worker-timeout=30"])
                .arg(format!("--worker={i}/3"))
                .env("PGHOST", format!("10.213.{}.1", i + 1))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    for w in workers {
        let r = finish(w);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(processed(&r.stdout), 40);
    }
    let by_client = "select client, string_agg(r || ':' || g || ':' || seed, ',' order by id) \
                     from draws group by client order by client";
    let tcp_addresses = "select count(distinct client_addr) from pg_stat_activity \
                         where client_addr is not null";
    let sources = "select string_agg(distinct client / 2 || ' ' || host(addr), ',') from draws";
    assert_eq!(
        psql(sources).trim(),
        "0 10.213.1.2,1 10.213.2.2,2 10.213.3.2"
    );
    let split = psql(by_client);
    psql("truncate draws");
    let mut single = std::process::Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
    crate::support::aim(&mut single, &cluster, &db);
    let r = crate::support::run(single.args(common).args(["-c", "6", "-j", "6"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(split, psql(by_client));
    assert_eq!(split.lines().count(), 6, "{split}");
    // Nothing of the workers is still connected.
    assert_eq!(psql(tcp_addresses).trim(), "0");
}
