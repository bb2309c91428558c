//! A distributed run end to end: three real `pgbench-rs --worker=I/3` processes
//! against one server, their results files merged by `pgbench-report merge`. The
//! merged count is the rows the workers wrote and the sum of their own counts, the
//! merged percentiles those of all their `-l` logs together, the start instant theirs;
//! and with one worker killed mid-run the merge names it, says the result is
//! incomplete and counts what the two others reported (docs/distributed.md).

use crate::support::{self, fresh_db, run, script_file, Db, Run};
use pgbench_results::LatencyHistogram;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const WORKERS: usize = 3;
/// Clients (and threads) per worker: worker I runs the run's clients 2I and 2I+1.
const CLIENTS: usize = 2;
const PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// One row per transaction: who wrote it, and a value drawn from the run's seed.
const INSERTS: &str = "\\set v random(1, 1000000)\n\
    INSERT INTO inserted VALUES (:client_id, :v);\n";

/// The workers' common options but `-c`, `-j` and `-T`; each adds its index and
/// writes its results file and `-l` logs in a directory of its own.
const COMMON: [&str; 5] = [
    "-n",
    "-l",
    "--random-seed=42",
    "--worker-timeout=30",
    "--export-json=worker.json",
];

/// The worker's directory, its process and its results file.
struct Worker {
    dir: PathBuf,
    child: Child,
}

impl Worker {
    fn file(&self) -> PathBuf {
        self.dir.join("worker.json")
    }

    fn finish(self) -> Run {
        let out = self.child.wait_with_output().expect("wait for pgbench-rs");
        Run {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code().unwrap_or(-1),
        }
    }
}

/// Starts the three workers together, each in `tmp/wI`.
fn start_workers(db: &Db, tmp: &Path, script: &str, seconds: &str) -> Vec<Worker> {
    let percentiles = PERCENTILES.map(|p| p.to_string()).join(",");
    let clients = CLIENTS.to_string();
    (0..WORKERS)
        .map(|i| {
            let dir = tmp.join(format!("w{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            let child = db
                .ours()
                .current_dir(&dir)
                .args(COMMON)
                .args(["-c", &clients, "-j", &clients])
                .args(["-T", seconds, "-f", script])
                .arg(format!("--latency-percentiles={percentiles}"))
                .arg(format!("--worker={i}/{WORKERS}"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start pgbench-rs");
            Worker { dir, child }
        })
        .collect()
}

fn inserted_table(db: &Db) {
    db.psql("CREATE TABLE inserted (client int, v int)");
}

fn rows(db: &Db, sql_where: &str) -> i64 {
    db.value(&format!("SELECT count(*) FROM inserted {sql_where}"))
        .parse()
        .unwrap()
}

/// Rows written by worker `i`'s clients.
fn rows_of_worker(db: &Db, i: usize) -> i64 {
    let first = i * CLIENTS;
    rows(
        db,
        &format!("WHERE client BETWEEN {first} AND {}", first + CLIENTS - 1),
    )
}

/// `number of transactions actually processed: N` of a report.
fn processed(report: &str) -> i64 {
    report
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {report}"))
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn merge(files: &[PathBuf], out: &Path) -> Run {
    run(Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .arg("merge")
        .args(files)
        .arg("-o")
        .arg(out))
}

/// Every latency (µs) of the `-l` logs in `dirs`: `client tx latency script s us`.
fn logged_latencies(dirs: &[&Path]) -> Vec<u64> {
    let mut out = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.starts_with("pgbench_log.") {
                continue;
            }
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                let latency = line.split(' ').nth(2).unwrap();
                out.push(latency.parse().unwrap_or_else(|_| panic!("{name}: {line}")));
            }
        }
    }
    out.sort_unstable();
    out
}

/// The report's `latency percentiles in milliseconds:` block, up to its `max` line.
fn percentile_block(report: &str) -> String {
    let from = report
        .find("latency percentiles in milliseconds:\n")
        .unwrap_or_else(|| panic!("no percentiles in {report}"));
    let block = &report[from..];
    let end = block.find("  max = ").unwrap();
    let end = end + block[end..].find('\n').unwrap() + 1;
    block[..end].to_string()
}

/// The percentiles and maximum of `latencies` as the report prints them: every one
/// recorded into a histogram of the runner's kind.
fn percentile_block_of(latencies: &[u64]) -> String {
    let mut hist = LatencyHistogram::new();
    for &l in latencies {
        hist.record(l as f64);
    }
    let mut out = "latency percentiles in milliseconds:\n".to_string();
    hist.percentiles(&PERCENTILES).render(&mut out, "  ");
    out
}

#[test]
fn three_workers_merge_into_the_run_one_process_with_all_the_clients_makes() {
    let db = fresh_db("distributed_merge");
    inserted_table(&db);
    let tmp = tempfile::tempdir().unwrap();
    let script = script_file(&tmp, "insert.sql", INSERTS);
    let workers = start_workers(&db, tmp.path(), &script, "2");
    let files: Vec<PathBuf> = workers.iter().map(Worker::file).collect();
    let dirs: Vec<PathBuf> = workers.iter().map(|w| w.dir.clone()).collect();
    let runs: Vec<Run> = workers.into_iter().map(Worker::finish).collect();
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.code, 0, "worker {i}: {}", r.stderr);
        assert_eq!(processed(&r.stdout), rows_of_worker(&db, i), "worker {i}");
    }
    let counts: Vec<i64> = runs.iter().map(|r| processed(&r.stdout)).collect();
    let total = rows(&db, "");
    assert_eq!(counts.iter().sum::<i64>(), total);
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");

    let merged = tmp.path().join("merged.json");
    let out = merge(&files, &merged);
    assert_eq!(out.code, 0, "{}", out.stderr);
    support::assert_merge_complete(&out.stderr);
    let (report, table) = out
        .stdout
        .split_once("\nper worker (")
        .unwrap_or_else(|| panic!("no per-worker table in {}", out.stdout));
    let all_clients = format!("number of clients: {}\n", WORKERS * CLIENTS);
    assert!(report.contains(&all_clients), "{report}");
    assert_eq!(processed(report), total, "{report}");
    assert!(table.starts_with("3 of 3 workers of run "), "{table}");

    let doc = json(&merged);
    assert_eq!(doc["run"]["total"]["cnt"], total);
    assert_eq!(doc["merge"]["incomplete"], false);
    assert_eq!(doc["merge"]["missing"], serde_json::json!([]));
    let start = &doc["merge"]["start_unix_us"];
    assert!(start.as_i64().is_some_and(|us| us > 0), "{start}");
    for (i, file) in files.iter().enumerate() {
        let worker = json(file);
        assert_eq!(&worker["worker"]["start_unix_us"], start, "worker {i}");
        assert_eq!(doc["merge"]["workers"][i]["transactions"], counts[i]);
    }
    let per_second = support::series_transactions(&doc);
    assert_eq!(per_second, total);

    // The percentiles: those of every logged latency of the three workers, recorded
    // into one histogram; and each within the histogram's 3 significant digits of the
    // exact percentile of the logged latencies.
    let dirs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    let latencies = logged_latencies(&dirs);
    assert_eq!(latencies.len() as i64, total);
    let block = percentile_block(report);
    assert_eq!(block, percentile_block_of(&latencies));
    for p in PERCENTILES {
        let rank = ((p / 100.0 * total as f64).ceil() as usize).max(1);
        let exact = latencies[rank - 1] as f64 / 1000.0;
        let label = format!("  p{p} = ");
        let printed: f64 = block
            .lines()
            .find_map(|l| l.strip_prefix(&label))
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            printed >= exact - 0.0005 && printed <= exact * 1.001 + 0.0015,
            "p{p}: {printed} ms, exactly {exact} ms"
        );
    }

    let shown = run(Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .arg("show")
        .arg(&merged));
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert_eq!(shown.stdout, report);
}

#[test]
fn a_worker_killed_mid_run_is_named_missing_and_the_others_are_merged() {
    let db = fresh_db("distributed_killed");
    inserted_table(&db);
    let tmp = tempfile::tempdir().unwrap();
    let script = script_file(&tmp, "insert.sql", INSERTS);
    let mut workers = start_workers(&db, tmp.path(), &script, "3");
    // Worker 1 is killed once its clients have run a while, well before -T 3 s.
    let deadline = Instant::now() + Duration::from_secs(20);
    while rows_of_worker(&db, 1) == 0 {
        assert!(Instant::now() < deadline, "worker 1 never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(700));
    let mut doomed = workers.remove(1);
    doomed.child.kill().unwrap();
    let status = doomed.child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    assert!(!doomed.file().exists(), "a killed worker writes no file");

    let files: Vec<PathBuf> = workers.iter().map(Worker::file).collect();
    let mut reported = 0;
    for (w, i) in workers.into_iter().zip([0, 2]) {
        let r = w.finish();
        assert_eq!(r.code, 0, "worker {i}: {}", r.stderr);
        assert_eq!(processed(&r.stdout), rows_of_worker(&db, i), "worker {i}");
        reported += processed(&r.stdout);
    }
    assert!(reported > 0);

    let merged = tmp.path().join("merged.json");
    let out = merge(&files, &merged);
    assert_eq!(out.code, 3, "{}", out.stderr);
    for want in [
        "pgbench-report: warning: worker 1 of 3 is missing\n",
        "pgbench-report: warning: the merged result is incomplete: it covers 2 of 3 workers\n",
    ] {
        assert!(out.stderr.contains(want), "{}", out.stderr);
    }
    assert!(
        out.stdout.contains("number of clients: 4\n"),
        "{}",
        out.stdout
    );
    assert_eq!(processed(&out.stdout), reported, "{}", out.stdout);
    assert!(
        out.stdout.contains("2 of 3 workers of run "),
        "{}",
        out.stdout
    );
    let doc = json(&merged);
    assert_eq!(doc["run"]["total"]["cnt"], reported);
    assert_eq!(doc["merge"]["missing"], serde_json::json!([1]));
    assert_eq!(doc["merge"]["incomplete"], true);
}

/// Two `--reconnect` workers merge with their availability block kept, its counts
/// the sum of theirs; and what the merge cannot combine it names on stderr: a
/// worker's file without its histogram leaves the merged run none, and says so.
#[test]
fn reconnect_workers_merge_with_their_availability_and_the_merge_names_what_it_dropped() {
    let db = fresh_db("distributed_reconnect");
    inserted_table(&db);
    let tmp = tempfile::tempdir().unwrap();
    let script = script_file(&tmp, "insert.sql", INSERTS);
    let store = tmp.path().join("history.sqlite");
    let workers: Vec<Worker> = (0..2)
        .map(|i| {
            let dir = tmp.path().join(format!("w{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            let child = db
                .ours()
                .current_dir(&dir)
                .args(["-n", "--random-seed=42", "--worker-timeout=30"])
                .args(["--export-json=worker.json", "--reconnect"])
                .args(["-c", "2", "-j", "2", "-T", "2", "-f", &script])
                .arg(format!("--worker={i}/2"))
                // A worker's share is not recorded: the merged run is, once.
                .arg(format!("--history={}", store.display()))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start pgbench-rs");
            Worker { dir, child }
        })
        .collect();
    let files: Vec<PathBuf> = workers.iter().map(Worker::file).collect();
    for (i, r) in workers.into_iter().map(Worker::finish).enumerate() {
        assert_eq!(r.code, 0, "worker {i}: {}", r.stderr);
    }
    let merged = tmp.path().join("merged.json");
    let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .arg("merge")
        .args(&files)
        .arg("-o")
        .arg(&merged)
        .arg(format!("--history={}", store.display()))
        .args(["--tag", "topology=two-workers"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    support::assert_merge_complete(&out.stderr);
    let listed = run(Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .args(["history", "list", "--json"])
        .arg(format!("--history={}", store.display())));
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 1, "recorded once, merged: {listed:?}");
    assert_eq!(listed[0]["tags"]["topology"], "two-workers");
    let doc = json(&merged);
    assert_eq!(listed[0]["tps"].as_f64(), doc["summary"]["tps"].as_f64());
    let block = &doc["run"]["availability"];
    assert!(block.is_object(), "the merged run keeps its block: {block}");
    for key in ["reconnects", "gave_up", "in_doubt"] {
        let sum: i64 = files
            .iter()
            .map(|f| json(f)["run"]["availability"][key].as_i64().unwrap())
            .sum();
        assert_eq!(block[key].as_i64(), Some(sum), "{key}");
    }

    let mut stripped = json(&files[1]);
    stripped["run"]["histogram"] = Value::Null;
    let stripped_file = tmp.path().join("w1-no-histogram.json");
    std::fs::write(&stripped_file, stripped.to_string()).unwrap();
    let out = merge(
        &[files[0].clone(), stripped_file],
        &tmp.path().join("m2.json"),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "pgbench-report: warning: merged histogram: dropped: a worker's file has none"
        ),
        "{}",
        out.stderr
    );
}
