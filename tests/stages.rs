//! `--rate-stages` and `--client-stages` on a real server: each stage's tps in the
//! results file follows the stage's target, and its block follows pgbench's report.

use crate::support::fresh_db;
use serde_json::Value;
use tempfile::TempDir;

/// Held by each test here: their tps are timed, so they do not run beside each
/// other (the TPC-C one loads and runs on both cores).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TIMED: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TIMED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The stages of a run's results file, the run's stdout, and the directory of its
/// results file (`run.json`) and page (`run.html`).
fn staged_run(test: &str, script: &str, args: &[&str]) -> (Vec<Value>, String, TempDir) {
    let _alone = one_at_a_time();
    let db = fresh_db(test);
    let dir = tempfile::tempdir().unwrap();
    let file = crate::support::script_file(&dir, "staged.sql", script);
    let json = dir.path().join("run.json");
    let out = db
        .ours()
        .args(["-n", "-f", &file])
        .args(args)
        .arg(format!("--export-json={}", json.display()))
        .arg(format!(
            "--export-html={}",
            dir.path().join("run.html").display()
        ))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let errors: Vec<String> = crate::export::schema()
        .iter_errors(&doc)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let stages = doc["run"]["stages"]["stages"]
        .as_array()
        .unwrap_or_else(|| panic!("no stages in {doc}"))
        .clone();
    (stages, stdout, dir)
}

fn tps(stage: &Value) -> f64 {
    stage["tps"].as_f64().unwrap()
}

fn assert_near(what: &str, got: f64, want: f64, margin: f64) {
    assert!(
        (got / want - 1.0).abs() <= margin,
        "{what}: {got:.1} tps, wanted {want} within {:.0}%",
        margin * 100.0
    );
}

/// Issue 46: the rate ramps 100 → 500 in the middle stage, so its tps is their mean.
/// At these low rates a busy 2-core machine keeps the schedule. The seed fixes the
/// Poisson draws, so the slots due in each stage are the same every time (within 3%
/// of the rate's integral with this seed); only a late transaction can move.
#[test]
fn rate_stages_give_each_stages_tps() {
    let (stages, stdout, dir) = staged_run(
        "rate_stages",
        "SELECT 1;\n",
        &[
            "-R",
            "100",
            "--rate-stages=6s:100,6s:500,6s:500",
            "-c",
            "4",
            "-j",
            "2",
        ],
    );
    assert_eq!(stages.len(), 3);
    for (stage, want) in stages.iter().zip([100.0, 300.0, 500.0]) {
        assert_near("rate stage", tps(stage), want, 0.12);
        assert_eq!(stage["failed"], 0);
    }
    assert_eq!(stages[1]["from"], 100.0);
    assert_eq!(stages[1]["target"], 500.0);
    // pgbench's lines, then the block.
    assert!(stdout.contains("duration: 18 s\n"), "{stdout}");
    assert!(stdout.contains("rate limit schedule lag: avg "), "{stdout}");
    let block = stdout
        .split("stages (rate):\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        block.starts_with("stage 1 (0.0-6.0 s, 100 -> 100 tps): tps = "),
        "{block}"
    );
    assert_eq!(block.lines().count(), 3, "{block}");
    // show prints the block again; compare sets the stages side by side.
    let report = || std::process::Command::new(env!("CARGO_BIN_EXE_pgbench-report"));
    let json = dir.path().join("run.json");
    let shown = crate::support::run(report().arg("show").arg(&json));
    assert!(shown.stdout.ends_with(block), "{}", shown.stdout);
    let compared = crate::support::run(report().arg("compare").arg(&json).arg(&json));
    assert!(
        compared
            .stdout
            .contains("stages (rate):\n  stage 1:\n    A: "),
        "{}",
        compared.stdout
    );
    // The page names each stage where it begins on the charts over time.
    let page = dir.path().join("run.html");
    if let Some(c) = crate::support::browser::check_page(&page, &dir.path().join("run.png")) {
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        for id in ["chart-tps", "chart-latency"] {
            let names: Vec<&str> = c
                .labels
                .iter()
                .filter(|l| l.0 == id)
                .map(|l| l.1.as_str())
                .collect();
            assert_eq!(
                names,
                [
                    "stage 1: 100 tps",
                    "stage 2: 100\u{2192}500 tps",
                    "stage 3: 500 tps"
                ],
                "{id}: {:?}",
                c.labels
            );
        }
        assert!(c.overlapping_labels().is_empty(), "{:?}", c.labels);
        let (_, _, pixels, _) = c
            .marks
            .iter()
            .find(|m| m.0 == "chart-tps" && m.1 == "stage")
            .unwrap_or_else(|| panic!("no stage line on chart-tps: {:?}", c.marks));
        assert!(*pixels > 0, "{:?}", c.marks);
    }
}

/// Issue 46: one client, then four, each sleeping 10 ms a transaction: about 100
/// and 400 tps on a quiet machine. A busy one stretches each 10 ms sleep (by 10-20%
/// when other builds share the two cores), which is the machine's doing, not the
/// stages'. So each stage's tps is held, within 15%, to what its clients give at the
/// latency the stage measured (the closed model: clients / latency), and to 100 and
/// 400 within 30%, which no stretch seen here reaches.
#[test]
fn client_stages_give_each_stages_tps() {
    let (stages, stdout, _dir) = staged_run(
        "client_stages",
        "SELECT pg_sleep(0.01);\n",
        &["--client-stages=5s:1,5s:4,5s:4", "-j", "2"],
    );
    assert_eq!(stages.len(), 3);
    for (stage, clients) in [(&stages[0], 1.0), (&stages[2], 4.0)] {
        let what = format!("stage of {clients} clients {stage}");
        let latency_ms = stage["latency_avg_ms"].as_f64().unwrap();
        assert!(latency_ms >= 10.0, "{what}: the sleep did not happen");
        assert_near(&what, tps(stage), clients * 1_000.0 / latency_ms, 0.15);
        assert_near(&what, tps(stage), clients * 100.0, 0.30);
    }
    // The ramp in between: more than one client's, less than four's.
    assert!((120.0..360.0).contains(&tps(&stages[1])), "{stages:?}");
    assert!(stdout.contains("number of clients: 4\n"), "{stdout}");
    assert!(
        stdout.contains("stage 3 (10.0-15.0 s, 4 -> 4 clients)"),
        "{stdout}"
    );
}

/// HammerDB's step workload: TPC-C with a step of clients a stage gives NOPM per
/// stage, from the new orders the clients committed in it (all of them, once).
#[test]
fn client_stages_of_tpcc_give_nopm_per_step() {
    let _alone = one_at_a_time();
    let db = fresh_db("tpcc_steps");
    let load = db
        .ours()
        .args(["-i", "--workload=tpcc", "-s", "1", "-j", "2"])
        .output()
        .unwrap();
    assert!(
        load.status.success(),
        "{}",
        String::from_utf8_lossy(&load.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = db
        .ours()
        .args(["--workload=tpcc", "-j", "2"])
        .arg("--client-stages=0s:1,3s:1,0s:2,3s:2")
        .arg(format!("--export-json={}", json.display()))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // The steps of no time have no figures: two stages.
    let stages = doc["run"]["stages"]["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2, "{stages:?}");
    let mut new_orders = 0;
    for s in stages {
        let n = s["transactions_by_script"][0].as_i64().unwrap();
        let minutes = (s["end_s"].as_f64().unwrap() - s["start_s"].as_f64().unwrap()) / 60.0;
        assert!(n > 0, "{s}");
        assert!(
            (s["nopm"].as_f64().unwrap() - n as f64 / minutes).abs() < 1e-6,
            "{s}"
        );
        new_orders += n;
    }
    assert_eq!(
        Some(new_orders),
        doc["run"]["tpcc"]["new_orders_committed"].as_i64()
    );
    assert!(
        stdout.contains("stage 2 (3.0-6.0 s, 2 -> 2 clients): tps = "),
        "{stdout}"
    );
    assert!(stdout.contains(", NOPM = "), "{stdout}");
}

/// Clients leave between transactions: a ramp down from 3 clients to 1 in the
/// middle of 200 ms transactions fails none and cuts none short, and the last stage
/// runs at one client's pace.
#[test]
fn clients_leave_after_their_transaction() {
    let (stages, stdout, _dir) = staged_run(
        "client_stages_down",
        "SELECT pg_sleep(0.2);\n",
        &["-c", "3", "--client-stages=2s:3,1s:1,2s:1", "-j", "3"],
    );
    assert!(
        stdout.contains("number of failed transactions: 0 (0.000%)\n"),
        "{stdout}"
    );
    assert!(stages.iter().all(|s| s["failed"] == 0), "{stages:?}");
    // -c 3 is where the first stage starts: 3 clients, about 15 tps; 1 client: about 5 (a transaction that began before
    // the ramp may end in it).
    assert_near("first stage", tps(&stages[0]), 15.0, 0.25);
    assert!((3.0..=7.5).contains(&tps(&stages[2])), "{stages:?}");
}
