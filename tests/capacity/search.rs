//! `--find-max-rate` with a known answer: `SELECT pg_sleep(0.004)` at `-c 4` does at
//! most about 1,000 tps. The search for the highest `-R` whose p99 (from the schedule)
//! stays within 20 ms is held against an exhaustive ladder of rates 2% apart that the
//! test runs itself, on the same server, right after it, so that the machine's load
//! weighs on both alike, and with the same seed, so that a rate's step sees the same
//! `-R` schedule in both. Then the search's exit statuses.

use super::{described, read, SLEEP};
use crate::support::{fresh_db, script_file};
use pgbench_results::capacity::Role;

/// What the ladder shows: each rung's rate and whether its p99 met 20 ms.
type Rungs = Vec<(f64, bool)>;

/// The best rate the ladder shows meeting the target. One rung on a shared machine
/// can miss for a stall alone (a stall only ever raises latency), and one can pass in
/// a quiet moment: the rungs are split at the rate that leaves the fewest on the
/// wrong side of it (met above, missed below; the highest such split), and the best
/// is the highest rung met below the split.
fn ladder_best(rungs: &Rungs) -> Option<f64> {
    let wrong = |cut: usize| {
        let missed_below = rungs[..cut].iter().filter(|r| !r.1).count();
        let met_above = rungs[cut..].iter().filter(|r| r.1).count();
        missed_below + met_above
    };
    let fewest = (0..=rungs.len()).map(wrong).min()?;
    let cut = (0..=rungs.len()).rev().find(|&c| wrong(c) == fewest)?;
    rungs[..cut]
        .iter()
        .filter(|r| r.1)
        .map(|r| r.0)
        .reduce(f64::max)
}

#[test]
fn the_ladder_splits_at_the_fewest_rungs_on_the_wrong_side() {
    let r = |v: &[(f64, bool)]| v.to_vec();
    // A stalled rung below and a lucky one above move nothing.
    let rungs = r(&[
        (600.0, true),
        (612.0, false),
        (624.0, true),
        (636.0, true),
        (649.0, false),
        (662.0, false),
        (675.0, true),
        (689.0, false),
    ]);
    assert_eq!(ladder_best(&rungs), Some(636.0));
    assert_eq!(ladder_best(&r(&[(1.0, false), (2.0, false)])), None);
    assert_eq!(ladder_best(&r(&[(1.0, true), (2.0, true)])), Some(2.0));
}

/// The search finds a rate within 5% of the ladder's best in at most 12 steps.
///
/// The ladder covers 10% either side of the rate found, 2% apart: enough to show the
/// search more than 5% off either way (rungs above it meeting, or those below it
/// missing), which is all the test asks of it.
#[test]
fn find_max_rate_finds_the_rate_an_exhaustive_ladder_shows_within_5_percent() {
    let _alone = super::alone();
    let db = fresh_db("capacity_search");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "sleep.sql", SLEEP);
    let step = [
        "-n",
        "-f",
        &script,
        "-c",
        "4",
        "--warmup=1",
        "-T",
        "3",
        "--random-seed=7",
    ];
    let json = dir.path().join("search.json");
    let out = crate::support::run(db.ours().args(step).args([
        "--find-max-rate=p99<=20ms",
        &format!("--export-json={}", json.display()),
    ]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let doc = read(&json);
    let found = doc.capacity.as_ref().unwrap().found.clone().unwrap();
    assert!(doc.steps.len() <= 12, "{}", described(&doc));
    assert_eq!(doc.steps[0].role, Some(Role::ClosedLoop));
    let most = found.closed_loop_tps.unwrap();
    assert!(
        most <= 1010.0 && most > 500.0,
        "at most about 1,000 tps: {most}"
    );
    let rate = found.rate.unwrap();
    assert!(found.within_tolerance && found.confirmed, "{found:?}");
    let confirmation = &doc.steps[found.step.unwrap() as usize - 1];
    assert_eq!(confirmation.role, Some(Role::Confirmation));
    let last = out
        .stdout
        .lines()
        .find(|l| l.starts_with("found: -R "))
        .unwrap();
    assert!(
        last.contains("; met twice); first rate that missed: -R "),
        "{last}"
    );
    let rates: Vec<String> = (0..)
        .map(|k| rate / 1.1 * 1.02f64.powi(k))
        .take_while(|r| *r <= rate * 1.1)
        .map(|r| format!("{r:.1}"))
        .collect();
    let ladder_json = dir.path().join("ladder.json");
    let ladder = crate::support::run(db.ours().args(step).args([
        &format!("--sweep=rate={}", rates.join(",")),
        &format!("--export-json={}", ladder_json.display()),
    ]));
    assert_eq!(ladder.code, 0, "{}{}", ladder.stdout, ladder.stderr);
    let ladder_doc = read(&ladder_json);
    let rungs: Rungs = ladder_doc
        .steps
        .iter()
        .map(|s| {
            (
                s.x().unwrap(),
                s.figures().get("p99").is_some_and(|p| p <= 20.0),
            )
        })
        .collect();
    let best = ladder_best(&rungs);
    let report = format!(
        "search:\n{}ladder:\n{}",
        described(&doc),
        described(&ladder_doc)
    );
    let best = best.unwrap_or_else(|| panic!("no rung met the target\n{report}"));
    eprintln!(
        "find-max-rate: -R {rate} in {} steps; the ladder's best -R {best} ({:+.1}%); closed loop {most:.1} tps",
        doc.steps.len(),
        100.0 * (rate - best) / best
    );
    assert!(
        (rate - best).abs() <= 0.05 * best,
        "found -R {rate}, the ladder's best {best}\n{report}"
    );
}

/// Nothing meets an impossible target: every step kept, exit 3; a rate found below
/// `--fail-if-below`: exit 3, said.
#[test]
fn a_search_that_misses_its_target_or_floor_exits_3_keeping_every_step() {
    let _alone = super::alone();
    let db = fresh_db("capacity_search_gate");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "sleep.sql", SLEEP);
    let json = dir.path().join("none.json");
    let out = crate::support::run(db.ours().args([
        "-n",
        "-f",
        &script,
        "-T",
        "1",
        "--find-max-rate=p99<=1us",
        "--search-steps=4",
        &format!("--export-json={}", json.display()),
    ]));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("pgbench-rs: error: no rate met the target p99<=1us\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout
            .contains("\nfound: no rate met p99<=1us; first rate that missed: -R "),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("report of step"),
        "no report without a rate found"
    );
    let doc = read(&json);
    assert_eq!(doc.steps.len(), 4);
    assert_eq!(doc.capacity.as_ref().unwrap().representative, None);
    let out = crate::support::run(db.ours().args([
        "-n",
        "-f",
        &script,
        "-T",
        "1",
        "--find-max-rate=p99<=10s",
        "--search-steps=3",
        "--fail-if-below=1000000",
    ]));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("is below --fail-if-below 1000000.0\n"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("\nreport of step "), "{}", out.stdout);
}

/// Ctrl-C in the search's second step: its line is printed without a verdict (a
/// step cut short says nothing sure of its rate), nothing is found from it (the
/// closing line says the search did not finish, not that no rate met the target),
/// the closed-loop step's report is printed, the file keeps both steps, and `show`
/// prints what the run printed, byte for byte.
#[test]
fn ctrl_c_in_a_search_prints_and_keeps_the_step_cut_short() {
    let _alone = super::alone();
    use crate::support::StderrWatch;
    use std::process::{Command, Stdio};
    use std::time::Duration;
    let db = fresh_db("capacity_search_cut");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "sleep.sql", SLEEP);
    let json = dir.path().join("cut.json");
    let mut child = db
        .ours()
        .args(["-n", "-f", &script, "-c", "4", "-T", "10", "-P", "1"])
        .args([
            "--find-max-rate=p99<=20ms",
            &format!("--export-json={}", json.display()),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let watch = StderrWatch::new(&mut child);
    watch.wait_for("step 2 of at most 12: -R ", Duration::from_secs(120));
    watch.wait_for("progress: ", Duration::from_secs(60));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let stderr = watch.finish();
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let second = stdout.lines().find(|l| l.starts_with("   2 ")).unwrap();
    assert!(
        second.contains("  interrupted") && !second.contains("met"),
        "{stdout}"
    );
    assert!(!stdout.contains("found: "), "{stdout}");
    assert!(
        stdout.contains(
            "\nstopped early: interrupted by SIGINT after 2 step(s); the search did not finish\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nreport of step 1 (closed loop, the search did not finish):\n"),
        "{stdout}"
    );
    let doc = read(&json);
    assert_eq!(doc.steps.len(), 2);
    assert_eq!(doc.steps[1].verdict, None);
    let shown = Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .args(["show", &json.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&shown.stdout), stdout);
}
