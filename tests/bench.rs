//! Benchmarking mode against a real server: the headline workload, seeded runs that
//! must insert exactly what stock pgbench inserts, and a server that dies mid-run.

use crate::support::{self, fresh_db, run};
use pgbench_cluster::{Cluster, ClusterOptions};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/index-inserts-only");

fn processed(stdout: &str) -> i64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|v| v.split('/').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no processed count in:\n{stdout}"))
}

/// The reference workload of the users' guide: 5 secondary indexes on
/// pgbench_history, 256 clients inserting for a few seconds.
#[test]
fn headline_index_inserts_with_256_clients() {
    let _many = support::many_connections();
    let db = fresh_db("headline");
    db.init(1);
    db.psql(&std::fs::read_to_string(format!("{REFERENCE}.setup.sql")).unwrap());
    db.psql("truncate pgbench_history");
    let script = format!("{REFERENCE}.sql");
    let out = run(db.ours().args([
        "--time=3",
        "--client=256",
        "--jobs=256",
        "--progress=1",
        "--no-vacuum",
        &format!("--file={script}"),
    ]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let shape = [
        "pgbench (",
        "transaction type: ",
        "scaling factor: 1",
        "query mode: simple",
        "number of clients: 256",
        "number of threads: 256",
        "maximum number of tries: 1",
        "duration: 3 s",
        "number of transactions actually processed: ",
        "number of failed transactions: 0 (0.000%)",
        "latency average = ",
        "latency stddev = ",
        "initial connection time = ",
        "tps = ",
    ];
    assert_eq!(lines.len(), shape.len(), "{}", out.stdout);
    for (line, start) in lines.iter().zip(shape) {
        assert!(
            line.starts_with(start),
            "{line:?} should start with {start:?}"
        );
    }
    let n = processed(&out.stdout);
    assert!(n > 0);
    let rows: i64 = db
        .value("select count(*) from pgbench_history")
        .parse()
        .unwrap();
    assert_eq!(
        rows, n,
        "every processed transaction inserted exactly one row"
    );
    assert!(
        out.stderr.lines().any(|l| l.starts_with("progress: ")),
        "{}",
        out.stderr
    );
}

/// The same seed and options insert the same rows as stock pgbench (one client per
/// thread, so the order of draws is fixed).
#[test]
fn seeded_runs_insert_what_stock_pgbench_inserts() {
    let db = fresh_db("seeded_inserts");
    db.init(1);
    db.psql(&std::fs::read_to_string(format!("{REFERENCE}.setup.sql")).unwrap());
    let script = format!("{REFERENCE}.sql");
    let rows = |cmd: &mut Command| {
        db.psql("truncate pgbench_history");
        let out = run(cmd.args([
            "--random-seed=42",
            "-n",
            "-t",
            "25",
            "-c",
            "4",
            "-j",
            "4",
            "-f",
            &script,
        ]));
        assert_eq!(out.code, 0, "{}", out.stderr);
        db.psql("select tid, bid, aid, delta from pgbench_history order by 1, 2, 3, 4")
    };
    let stock = rows(&mut db.stock());
    let ours = rows(&mut db.ours());
    assert_eq!(stock.lines().count(), 100);
    assert_eq!(ours, stock);
    // And in the other query modes.
    for mode in ["extended", "prepared"] {
        let ours = rows(db.ours().args(["-M", mode]));
        assert_eq!(ours, stock, "-M {mode}");
    }
}

/// Killing the server mid-run: every client ends with pgbench's abort message, the
/// report of what was measured is printed, exit status 2, no hang.
#[test]
fn a_server_that_dies_mid_run_aborts_every_client() {
    let cluster = Cluster::start(ClusterOptions::default()).unwrap();
    let target = |cmd: &mut Command| support::aim(cmd, &cluster, "postgres");
    let mut init = Command::new(support::stock_pgbench());
    target(&mut init);
    assert!(init.args(["-i", "-q"]).output().unwrap().status.success());
    let mut ours = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
    target(&mut ours);
    let child = ours
        .args(["-T", "60", "-c", "4", "-j", "2", "-n"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let killed_at = Instant::now();
    cluster.stop_immediate().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        killed_at.elapsed() < Duration::from_secs(20),
        "pgbench-rs took {:?} to notice",
        killed_at.elapsed()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    let aborted = stderr
        .lines()
        .filter(|l| l.contains("client ") && l.contains(" aborted"))
        .count();
    assert_eq!(aborted, 4, "one abort per client:\n{stderr}");
    assert!(
        processed(&stdout) > 0,
        "what was measured is reported:\n{stdout}"
    );
    assert!(
        stderr.ends_with("Run was aborted; the above results are incomplete.\n"),
        "{stderr}"
    );
}

/// A client that cannot connect at the start is fatal, as in pgbench: one message,
/// exit status 1, no report.
#[test]
fn an_initial_connection_failure_ends_the_run() {
    let cluster = Cluster::start(ClusterOptions {
        config: vec![
            ("max_connections".into(), "4".into()),
            ("superuser_reserved_connections".into(), "0".into()),
        ],
        ..Default::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    let mut ours = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
    support::aim(&mut ours, &cluster, "postgres");
    let out = run(ours
        .args(["-n", "-c", "12", "-j", "12", "-t", "5"])
        .arg("-f")
        .arg(&script));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let fatal = out
        .stderr
        .lines()
        .filter(|l| l.contains("could not create connection for client "))
        .count();
    assert_eq!(fatal, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("too many clients already"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("tps = "), "no report: {}", out.stdout);
}

/// The README's first command: the headline workload on a throwaway server, set up,
/// initialised, run and removed by pgbench-rs itself.
#[test]
fn temp_instance_runs_the_headline_workload_in_one_command() {
    let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs"))
        .args(["--temp-instance", "-c", "4", "-j", "4", "-t", "20"])
        .arg("-f")
        .arg(format!("{REFERENCE}.sql"))
        // For a real server: ignored here, and said so (issue #12).
        .args(["-h", "db.example.invalid", "bench"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "warning: --temp-instance ignores -h, the database name: the run uses its own throwaway server\n"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("creating primary keys...\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("running ") && out.stderr.contains("index-inserts-only.setup.sql\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout
            .contains("number of transactions actually processed: 80/80\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.ends_with("removing the temporary instance\n"),
        "{}",
        out.stderr
    );
}

/// #33: `--workload` could not be combined with `--temp-instance`: the README's
/// one-command try-out did not exist for sysbench and TPC-C users. The throwaway
/// server is prepared as the workload's `-i` prepares it, at `-s` and `-D`.
#[test]
fn temp_instance_runs_a_workload_in_one_command() {
    let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs")).args([
        "--temp-instance",
        "--workload=oltp_read_write",
        "-D",
        "tables=2",
        "-D",
        "table_size=1000",
        "-T",
        "3",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("Inserting 1000 records into 'sbtest2'\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("\ntables: 2\ntable size: 1000\nquery mode: prepared\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\nSQL statistics:\n"), "{}", out.stdout);
    assert!(
        out.stderr.ends_with("removing the temporary instance\n"),
        "{}",
        out.stderr
    );

    let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs")).args([
        "--temp-instance",
        "--workload=tpcc",
        "-s",
        "1",
        "-c",
        "2",
        "-T",
        "3",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("creating functions...\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout
            .contains("\nwarehouses: 1\nquery mode: prepared\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("\nTEST RESULT : System achieved "),
        "{}",
        out.stdout
    );
}

/// #22: `--temp-instance` ran with `fsync`, `synchronous_commit` and `full_page_writes`
/// off and did not say so. Its opening line says it, the results file shows it, and
/// `--temp-instance-durable` runs with them on. And `-s`, used to initialise, was said
/// to be ignored.
#[test]
fn temp_instance_says_it_is_not_durable_and_durable_is_offered() {
    let dir = tempfile::tempdir().unwrap();
    for (option, value, opening) in [
        (
            "--temp-instance",
            "off",
            "starting a temporary PostgreSQL instance (fsync, synchronous_commit and \
             full_page_writes off: not durable; --temp-instance-durable keeps them on)...\n",
        ),
        (
            "--temp-instance-durable",
            "on",
            "starting a temporary PostgreSQL instance (durable: fsync, synchronous_commit \
             and full_page_writes on)...\n",
        ),
    ] {
        let json = dir.path().join(format!("{option}.json"));
        let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs"))
            .args([option, "-s", "2", "-t", "5", "-S"])
            .arg(format!("--export-json={}", json.display())));
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stderr.starts_with(&format!("pgbench-rs: {opening}")),
            "{}",
            out.stderr
        );
        // #22: the scale initialised the instance; it was not ignored.
        assert!(
            !out.stderr.contains("scale option ignored"),
            "{}",
            out.stderr
        );
        assert!(out.stdout.contains("scaling factor: 2\n"), "{}", out.stdout);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for setting in ["fsync", "synchronous_commit", "full_page_writes"] {
            assert_eq!(doc["server_settings"][setting], value, "{option} {setting}");
        }
    }
}

/// Issue #15: `-l` on a full disk printed one message per transaction and exited 0.
/// Now the first failure is said once per file, the lost lines are counted after the
/// report, and the exit status is 2.
#[test]
fn a_full_log_disk_is_said_once_counted_and_fails_the_run() {
    let db = crate::support::fresh_db("bench_full_log");
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=128k", "tmpfs"])
        .arg(&small)
        .output();
    if !mounted.as_ref().is_ok_and(|o| o.status.success()) {
        support::skip(&format!("cannot mount a small tmpfs here ({mounted:?})"));
        return;
    }
    let script = crate::support::script_file(&dir, "one.sql", "SELECT 1;\n");
    let prefix = small.join("log").display().to_string();
    let out = db
        .ours()
        .args(["-n", "-c", "2", "-t", "8000", "-l", "-f", &script])
        .arg(format!("--log-prefix={prefix}"))
        .output()
        .unwrap();
    let _ = std::process::Command::new("umount").arg(&small).status();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stdout.contains("number of transactions actually processed: 16000/16000\n"),
        "{stdout}"
    );
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("could not write to log file"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].ends_with(": No space left on device"), "{stderr}");
    assert!(!stderr.contains("os error"), "{stderr}");
    let lost: u64 = stderr
        .lines()
        .find_map(|l| {
            l.split_once("error: ")?
                .1
                .split_once(" lines could not be written")?
                .0
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no count in {stderr}"));
    // 16,000 lines of about 25 bytes do not fit in 128 kB.
    assert!((1..16_000).contains(&lost), "{lost}");
}

/// `--warmup`: the clients run, then everything restarts. The rows written are the
/// warm-up's transactions plus the measured ones; the report, the `-l` lines, the
/// `-P` numbering and the series count the measured ones only; `-t` counts them
/// per client; `-T` is the measured part's length.
#[test]
fn warmup_is_run_and_then_left_out_of_every_figure() {
    let db = fresh_db("warmup");
    db.psql("create table w (client int, at timestamptz default clock_timestamp())");
    let dir = tempfile::tempdir().unwrap();
    let script = support::script_file(
        &dir,
        "w.sql",
        "insert into w (client) values (:client_id);\n",
    );
    let json = dir.path().join("w.json");
    let prefix = dir.path().join("wl");
    let started = Instant::now();
    let out = run(db.ours().args([
        "-n",
        "-c3",
        "-j2",
        "-T2",
        "--warmup=2",
        "-P1",
        "-l",
        &format!("--log-prefix={}", prefix.display()),
        &format!("--export-json={}", json.display()),
        &format!("--file={script}"),
    ]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        started.elapsed() >= Duration::from_secs(4),
        "warm-up, then -T"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let measured = processed(&out.stdout);
    let warm = doc["run"]["warmup"]["total"]["cnt"].as_i64().unwrap();
    assert!(warm > 0 && measured > 0, "{warm} {measured}");
    let rows: i64 = db.value("select count(*) from w").parse().unwrap();
    assert_eq!(
        rows,
        warm + measured,
        "every transaction is the warm-up's or measured"
    );
    assert_eq!(support::series_transactions(&doc), measured);
    let warm_series: i64 = doc["run"]["warmup"]["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["cnt"].as_i64().unwrap())
        .sum();
    assert_eq!(warm_series, warm);
    let duration = doc["run"]["bench_duration_us"].as_f64().unwrap();
    assert!((2e6..2.5e6).contains(&duration), "{duration}");
    let mut logged = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("wl.")
        {
            logged += std::fs::read_to_string(path).unwrap().lines().count() as i64;
        }
    }
    assert_eq!(logged, measured, "-l logs the measured transactions");
    let progress: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("progress: "))
        .collect();
    assert!(
        progress[0].starts_with("warm-up progress: 1.0 s"),
        "{progress:?}"
    );
    let first = progress
        .iter()
        .position(|l| l.starts_with("progress: "))
        .unwrap();
    assert!(
        progress[first].starts_with("progress: 1.0 s"),
        "{progress:?}"
    );
    assert!(progress[..first].iter().all(|l| l.starts_with("warm-up ")));

    // -t: each client runs its -t measured transactions after the warm-up.
    db.psql("truncate w");
    let out = run(db.ours().args([
        "-n",
        "-c2",
        "-t50",
        "--warmup=1",
        &format!("--file={script}"),
    ]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out
        .stdout
        .contains("number of transactions actually processed: 100/100\n"));
    let per_client = db.psql("select count(*) > 50 from w group by client order by client");
    assert_eq!(per_client.trim(), "t\nt", "the warm-up's rows come first");
}

/// #22: as root in a shell without /usr/sbin on PATH (Debian's `su`), `--temp-instance`
/// failed with `No such file or directory (os error 2)`: `runuser` was not found. It
/// is looked for in /usr/sbin and /sbin too, and a program that is missing is named
/// with where it was looked for, as are missing server binaries. Needs root and a
/// mount namespace (skipped with a message otherwise, failing under CI=true).
#[test]
fn temp_instance_says_which_program_it_did_not_find_and_where() {
    let ours = env!("CARGO_BIN_EXE_pgbench-rs");
    let hidden = |dirs: &str| {
        let mounts: String = dirs
            .split(' ')
            .map(|d| format!("mount -t tmpfs none {d} && "))
            .collect();
        run(Command::new("unshare")
            .args(["-m", "sh", "-c"])
            .arg(format!("{mounts}exec \"$0\" --temp-instance -t 1 -S"))
            .arg(ours)
            .env_remove("PG_BINDIR")
            .env("PATH", "/usr/local/bin:/usr/bin:/bin"))
    };
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
    });
    let probe = Command::new("unshare").args(["-m", "true"]).status();
    if !root || !probe.is_ok_and(|s| s.success()) {
        support::skip("needs root and a mount namespace (unshare -m)");
        return;
    }
    // /usr/sbin off PATH: runuser is found anyway.
    let out = run(Command::new(ours)
        .args(["--temp-instance", "-t", "1", "-S"])
        .env("PATH", "/usr/local/bin:/usr/bin:/bin"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = hidden("/usr/sbin /sbin");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "error: could not start a temporary instance: could not run runuser (looked for it in PATH, /usr/sbin and /sbin;"
        ),
        "{}",
        out.stderr
    );
    let bindir = pgbench_cluster::bindir().unwrap();
    let out = hidden(&format!("{} /usr/lib/postgresql", bindir.display()));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "error: could not start a temporary instance: PostgreSQL server binaries (initdb, postgres) not found in $PG_BINDIR, PATH, `pg_config --bindir` or /usr/lib/postgresql/*/bin"
        ),
        "{}",
        out.stderr
    );
}

/// Issue #33: a `PG_BINDIR` naming a directory without the server binaries was passed
/// over without a word, and `--temp-instance` ran whatever else it found. A setting the
/// user made is used or refused, never guessed around.
#[test]
fn a_pg_bindir_without_the_server_binaries_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs"))
        .args(["--temp-instance", "-t", "1", "-S"])
        .env("PG_BINDIR", dir.path()));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let error = format!(
        "\npgbench-rs: error: could not start a temporary instance: $PG_BINDIR is \"{}\", \
         which has no PostgreSQL server binaries (initdb, postgres): point it at a \
         directory that has them, or unset it\n",
        dir.path().display()
    );
    assert!(out.stderr.ends_with(&error), "{}", out.stderr);
}
