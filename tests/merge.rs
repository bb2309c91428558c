//! `pgbench-report merge` on real results files: ordinary `--export-json` runs
//! against one server, rewritten to carry the `worker` entry a `--worker=I/N` run
//! writes (so this does not depend on the worker side), then merged by the real
//! binary. The merged count is the rows the runs wrote, the percentiles those of all
//! their `-l` logs together, and the fault cases (a missing worker, one cut short by
//! SIGINT, files of different runs) end as docs/distributed.md says.

use crate::support::{self, fresh_db, run, script_file, Db};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const WORKERS: u32 = 3;
const START_US: i64 = 1_764_583_200_000_000;

fn report() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
}

/// A run of 2 clients writing one row per transaction, in its own directory (so its
/// `-l` log does not meet the others'); the child, to wait for or interrupt.
fn start(db: &Db, script: &str, dir: &Path) -> std::process::Child {
    std::fs::create_dir_all(dir).unwrap();
    db.ours()
        .current_dir(dir)
        .args(["-n", "-c", "2", "-j", "2", "-T", "3", "-P", "1", "-l"])
        .args(["--random-seed=42", "--latency-percentiles", "-f", script])
        .arg("--export-json=run.json")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// The run's file as worker `index` of the run wrote it.
fn as_worker(dir: &Path, index: u32, out: &Path) -> PathBuf {
    let text = std::fs::read_to_string(dir.join("run.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["worker"] = json!({
        "index": index, "count": WORKERS, "run_id": "merge-test",
        "start_unix_us": START_US, "first_client": 2 * index,
    });
    doc["options"]["worker"] = json!(format!("{index}/{WORKERS}"));
    let path = out.join(format!("worker{index}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

fn schema() -> jsonschema::Validator {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/results.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::draft202012::new(&schema).unwrap()
}

fn valid(path: &Path) -> Value {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let errors: Vec<String> = schema().iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    doc
}

/// Every latency (µs) of the `-l` logs under `dirs`.
fn logged_latencies(dirs: &[PathBuf]) -> Vec<u64> {
    let mut out = Vec::new();
    for dir in dirs {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if !path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("pgbench_log")
            {
                continue;
            }
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                let latency = line.split(' ').nth(2).unwrap();
                out.push(latency.parse().unwrap());
            }
        }
    }
    out.sort_unstable();
    out
}

fn arg(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn merged_workers_count_every_row_and_every_latency_and_faults_are_named() {
    let db = fresh_db("merge_workers");
    db.psql("CREATE TABLE merged_rows (client int, v int)");
    let tmp = tempfile::tempdir().unwrap();
    let script = script_file(
        &tmp,
        "insert.sql",
        "\\set v random(1, 1000000)\nINSERT INTO merged_rows VALUES (:client_id, :v);\n",
    );
    let dirs: Vec<PathBuf> = (0..WORKERS)
        .map(|i| tmp.path().join(format!("w{i}")))
        .collect();
    let children: Vec<_> = dirs.iter().map(|d| start(&db, &script, d)).collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let rows: i64 = db
        .value("SELECT count(*) FROM merged_rows")
        .parse()
        .unwrap();
    let files: Vec<PathBuf> = (0..WORKERS)
        .map(|i| as_worker(&dirs[i as usize], i, tmp.path()))
        .collect();
    valid(&files[0]);
    let merged = tmp.path().join("merged.json");
    let out = run(report()
        .arg("merge")
        .args(files.iter().map(|f| arg(f)))
        .args(["-o", &arg(&merged)]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    support::assert_merge_complete(&out.stderr);
    assert!(
        out.stdout.contains("number of clients: 6\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "number of transactions actually processed: {rows}\n"
        )),
        "{}",
        out.stdout
    );
    let (report_text, table) = out.stdout.split_once("\nper worker (").unwrap();
    assert!(
        table.starts_with("3 of 3 workers of run merge-test):"),
        "{table}"
    );
    // The merged file validates, and shows the same report.
    let doc = valid(&merged);
    let shown = run(report().arg("show").arg(&merged));
    assert_eq!(shown.stdout, report_text);
    assert_eq!(doc["run"]["total"]["cnt"], rows);
    assert_eq!(doc["merge"]["incomplete"], false);
    let per_second = support::series_transactions(&doc);
    assert_eq!(per_second, rows);
    let only = run(report()
        .arg("merge")
        .args(files.iter().map(|f| arg(f)))
        .arg("--report-only"));
    assert_eq!((only.code, only.stdout.as_str()), (0, report_text));
    let empty = run(report().arg("merge"));
    assert_eq!(empty.code, 1);
    assert!(
        empty
            .stderr
            .contains("merge needs the workers' results files"),
        "{}",
        empty.stderr
    );
    // compare and html read a merged file like any other.
    let compared = run(report().arg("compare").arg(&files[0]).arg(&merged));
    assert_eq!(compared.code, 0, "{}", compared.stderr);
    let page = tmp.path().join("merged.html");
    let html = run(report().arg("html").arg(&merged).args(["-o", &arg(&page)]));
    assert_eq!(html.code, 0, "{}", html.stderr);
    // Percentiles: those of every logged latency, to the histogram's 3 digits.
    let latencies = logged_latencies(&dirs);
    assert_eq!(latencies.len() as i64, rows);
    for (p, line) in [(50.0, "p50"), (90.0, "p90"), (99.0, "p99")] {
        let exact =
            latencies[((p / 100.0 * rows as f64).ceil() as usize).max(1) - 1] as f64 / 1000.0;
        let printed: f64 = report_text
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{line} = ")))
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            printed >= exact - 0.0005 && printed <= exact * 1.001 + 0.0015,
            "{line}: {printed} vs {exact}"
        );
    }

    // A missing worker: named, the rest merged, exit status 3, marked in the file.
    let partial = tmp.path().join("partial.json");
    let out = run(report()
        .arg("merge")
        .arg(&files[0])
        .arg(&files[2])
        .args(["-o", &arg(&partial)]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("pgbench-report: warning: worker 1 of 3 is missing\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("the merged result is incomplete: it covers 2 of 3 workers"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("number of clients: 4\n"));
    let doc = valid(&partial);
    assert_eq!(
        (
            doc["merge"]["incomplete"].clone(),
            doc["merge"]["missing"].clone()
        ),
        (json!(true), json!([1]))
    );

    // #38: a worker's 2^64-1 clients wrapped the merged count to a plausible one.
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&files[2]).unwrap()).unwrap();
    doc["run"]["settings"]["clients"] = json!(u64::MAX);
    let wrapped = tmp.path().join("wrapped.json");
    std::fs::write(&wrapped, doc.to_string()).unwrap();
    let out = run(report()
        .arg("merge")
        .arg(&files[0])
        .arg(&files[1])
        .arg(&wrapped));
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains(&format!(
            "{}: \"options.client\" is 18446744073709551615: not a client count",
            arg(&wrapped)
        )),
        "{}",
        out.stderr
    );

    // Different runs: refused, naming both files and the field.
    let text = std::fs::read_to_string(&files[1]).unwrap();
    let other = tmp.path().join("other-seed.json");
    std::fs::write(
        &other,
        text.replace("\"random_seed\": 42", "\"random_seed\": 7"),
    )
    .unwrap();
    let out = run(report().arg("merge").arg(&files[0]).arg(&other));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(&format!(
            "{} and {} are not of the same run: \"random_seed\" differs (42 against 7)",
            arg(&files[0]),
            arg(&other)
        )),
        "{}",
        out.stderr
    );
    let out = run(report()
        .arg("merge")
        .arg(&files[0])
        .arg(dirs[1].join("run.json")));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("run.json: not a worker's results file: it has no \"worker\" field"),
        "{}",
        out.stderr
    );

    // A worker stopped by Ctrl-C: its file says so by its duration; merged, named.
    let cut = tmp.path().join("cut");
    let child = start(&db, &script, &cut);
    // Interrupted once it is running (it has written rows), well before its -T 3 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while db
        .value("SELECT count(*) FROM merged_rows")
        .parse::<i64>()
        .unwrap()
        == rows
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the run did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let status = child.wait_with_output().unwrap().status;
    assert_eq!(status.code(), Some(130));
    let cut_file = as_worker(&cut, 2, &cut);
    let out = run(report()
        .arg("merge")
        .arg(&files[0])
        .arg(&files[1])
        .arg(&cut_file));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("worker 2 (")
            && out.stderr.contains(") was cut short: it stopped ")
            && out.stderr.contains(" s into its -T 3 s"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("cut short"), "{}", out.stdout);
}
