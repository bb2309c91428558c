//! Sweeps and capacity searches on real servers (`--sweep`, `--find-max-rate`,
//! docs/capacity.md). Known answers from a script of `SELECT pg_sleep(0.004)`: at
//! `-c C` it can do at most C / 4 ms transactions a second, so a clients sweep grows
//! linearly and a search's closed loop at `-c 4` is about 1,000 tps
//! (`capacity::search`: the search against an exhaustive ladder of rates). A
//! select-only sweep end to end and drawn; Ctrl-C keeping the steps done, with the
//! metrics' `step` label; the search's exit statuses; bad options. The machine may be
//! busy: steps are short, and the figures are held to the tolerances only
//! where a stall on a shared machine can only make them worse (a value's best repeat).
//!
//! A test binary of its own (`cargo test --test capacity`): the rates it measures
//! must not share the machine with the integration tests, which load it as they run
//! beside each other; within it, the timed tests run one at a time ([`alone`]).

#[path = "support/mod.rs"]
#[allow(dead_code)] // the helpers the integration tests use and these do not
mod support;

#[path = "capacity/search.rs"]
mod search;

use crate::support::{fresh_db, script_file, StderrWatch};
use pgbench_results::capacity::{figures, Kind};
use pgbench_results::ResultsFile;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The known-answer script: 4 ms a transaction.
pub const SLEEP: &str = "SELECT pg_sleep(0.004);\n";

/// One test at a time: each loads the machine the others measure (a select-only step
/// at 32 clients takes both cores of a small one), and the search's test holds its
/// steps against a ladder it runs after them, which must see the same machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn report_bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
}

pub fn read(path: &Path) -> ResultsFile {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ResultsFile::from_json(&text).unwrap()
}

fn arg(p: &Path) -> String {
    p.display().to_string()
}

/// A clients sweep of the sleep script: tps grows about linearly, within 10% of
/// c / 4 ms (each value's best of two: a stall on a busy machine only lowers a step),
/// never above it; and its page, in a real Chromium, draws both curves with their 95%
/// intervals and the knee marked (at the last value: still scaling there).
///
/// A transaction takes 4 ms plus what one client's transaction costs besides the
/// sleep: the round trip, the server's timer waking it (0.2 to 0.4 ms on a small
/// machine, more while others build). The 4 ms are held to the 10%; the
/// scaling, c / L1 where L1 is the one-client steps' mean latency, is held to 10% too,
/// so that the machine's fixed cost per transaction is not counted against it.
#[test]
fn a_clients_sweep_of_4_ms_transactions_scales_linearly_and_its_page_marks_the_knee() {
    let _alone = alone();
    let db = fresh_db("capacity_clients");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "sleep.sql", SLEEP);
    let json = dir.path().join("sweep.json");
    let out = crate::support::run(db.ours().args([
        "-n",
        "-f",
        &script,
        "--sweep=clients=1,2,4,8",
        "--repeat=2",
        "--warmup=1",
        "-T",
        "3",
        &format!("--export-json={}", arg(&json)),
    ]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "sweep of clients over 1, 2, 4, 8, each value 2 times in rounds: 8 steps (each a 1 s warm-up, then 3 s)"
    );
    assert!(lines[1].starts_with("step  clients         tps     p50 ms     p99 ms    failed"));
    assert!(lines[2].starts_with(" 1/8        1 "), "{}", out.stdout);
    assert!(lines[9].starts_with(" 8/8        8 "), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("pgbench-rs: step 8/8: clients=8; about "),
        "{}",
        out.stderr
    );
    let doc = read(&json);
    assert_eq!(doc.steps.len(), 8);
    let best = |c: usize| {
        doc.steps
            .iter()
            .filter(|s| s.value == c.to_string())
            .filter_map(|s| s.figures().tps())
            .fold(0.0, f64::max)
    };
    let l1_ms = {
        let ones: Vec<f64> = doc
            .steps
            .iter()
            .filter(|s| s.value == "1")
            .filter_map(|s| s.file.summary.latency_avg_ms)
            .collect();
        ones.iter().sum::<f64>() / ones.len() as f64
    };
    assert!(
        (4.0..4.0 * 1.1).contains(&l1_ms),
        "one client's transaction: {l1_ms} ms\n{}",
        out.stdout
    );
    for c in [1usize, 2, 4, 8] {
        let (tps, ideal) = (best(c), c as f64 / 0.004);
        let linear = c as f64 / (l1_ms / 1000.0);
        eprintln!(
            "clients={c}: {tps:.1} tps, {:.1}% of c/4ms, {:.1}% of c/L1",
            100.0 * tps / ideal,
            100.0 * tps / linear
        );
        assert!(
            tps >= 0.9 * linear && tps <= 1.01 * ideal,
            "{c} clients: {tps} tps against {linear} (c / {l1_ms} ms) and {ideal} (c / 4 ms)\n{}",
            out.stdout
        );
    }
    let closing = lines.iter().find(|l| l.starts_with("peak: ")).unwrap();
    assert!(
        closing.contains("at clients=8; knee: at or beyond clients=8 (still scaling there)"),
        "{closing}"
    );
    // The report printed is the peak's, as `show` prints it again.
    let report = out.stdout.split("\nreport of step ").nth(1).unwrap();
    assert!(report.contains("number of clients: 8\n"), "{report}");
    let shown = report_bin().args(["show", &arg(&json)]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&shown.stdout), out.stdout);
    let page = dir.path().join("sweep.html");
    let made = report_bin()
        .args(["html", &arg(&json), "-o", &arg(&page)])
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capacity-clients-sweep.png");
    let Some(seen) = crate::support::browser::check_page(&page, &shot) else {
        return;
    };
    assert!(seen.problems.is_empty(), "{:?}", seen.problems);
    assert_eq!(seen.requests.len(), 1, "{:?}", seen.requests);
    for id in ["chart-sweep-tps", "chart-sweep-p99"] {
        let (_, plotted) = seen.data.iter().find(|(c, _)| c == id).unwrap();
        let xs: Vec<f64> = plotted[0].iter().map(|x| x.unwrap()).collect();
        assert_eq!(xs, [1.0, 2.0, 4.0, 8.0], "{id}");
        assert_eq!(
            plotted.len(),
            4,
            "{id}: the means and the interval's bounds"
        );
        let (_, coloured, _, _, _) = seen.charts.iter().find(|c| c.0 == id).unwrap();
        assert!(*coloured > 200, "{id}: {coloured} coloured pixels");
        let knee = seen
            .marks
            .iter()
            .find(|m| m.0 == id && m.1 == "knee")
            .unwrap();
        assert!(knee.2 * 10 > knee.3, "{id}: the knee's line: {knee:?}");
    }
}

/// Select-only over 1 to 32 clients against a throwaway database: every step runs,
/// its file holds them all, `show`, `check` and `html` read it.
#[test]
fn a_select_only_sweep_over_clients_runs_end_to_end_and_is_drawn() {
    let _alone = alone();
    let db = fresh_db("capacity_select");
    db.init(1);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("select.json");
    let out = crate::support::run(db.ours().args([
        "-S",
        "-j",
        "4",
        "--sweep=clients=1,2,4,8,16,32",
        "-T",
        "2",
        &format!("--export-json={}", arg(&json)),
    ]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let doc = read(&json);
    let c = doc.capacity.as_ref().unwrap();
    assert_eq!((c.kind, c.parameter.as_str()), (Kind::Sweep, "clients"));
    assert_eq!(doc.steps.len(), 6);
    for (s, clients) in doc.steps.iter().zip([1, 2, 4, 8, 16, 32]) {
        let run = s.file.run.as_ref().unwrap();
        assert_eq!(run.settings.clients, clients);
        assert_eq!(run.settings.threads, clients.min(4), "-j as given, or -c");
        assert!(s.figures().tps().unwrap() > 0.0);
        assert_eq!(s.file.options["client"], clients);
    }
    // The top level is the peak's step, its options the command line's.
    assert_eq!(doc.options["sweep"], "clients=1,2,4,8,16,32");
    let peak = doc.representative_step().unwrap();
    assert_eq!(doc.summary.tps, peak.file.summary.tps);
    let check = report_bin().args(["check", &arg(&json)]).output().unwrap();
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(said.contains(" in 6 steps\n"), "{said}");
    let page = dir.path().join("select.html");
    assert!(report_bin()
        .args(["html", &arg(&json), "-o", &arg(&page)])
        .status()
        .unwrap()
        .success());
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("capacity-select-sweep.png");
    let Some(seen) = crate::support::browser::check_page(&page, &shot) else {
        return;
    };
    assert!(seen.problems.is_empty(), "{:?}", seen.problems);
    let (_, plotted) = seen
        .data
        .iter()
        .find(|(c, _)| c == "chart-sweep-tps")
        .unwrap();
    assert_eq!(plotted[0].len(), 6);
    assert!(seen
        .marks
        .iter()
        .any(|m| m.0 == "chart-sweep-tps" && m.1 == "peak"));
}

/// Ctrl-C in the second step of three: that step stops with its results, the third
/// never starts, the two are printed and written (the second says it was
/// interrupted), and the exit status is SIGINT's. Meanwhile `--metrics-listen`
/// serves the second step's counters under `step="2"`.
#[test]
fn ctrl_c_in_a_sweep_keeps_the_steps_done_and_metrics_name_the_step() {
    let _alone = alone();
    let db = fresh_db("capacity_interrupt");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "sleep.sql", SLEEP);
    let json = dir.path().join("cut.json");
    let port = free_port();
    let mut child = db
        .ours()
        .args([
            "-n",
            "-f",
            &script,
            "--sweep=clients=1,2,3",
            "-T",
            "10",
            "-P",
            "1",
            &format!("--metrics-listen={port}"),
            "--metrics-linger=0",
            &format!("--export-json={}", arg(&json)),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let watch = StderrWatch::new(&mut child);
    watch.wait_for("step 2/3: clients=2", Duration::from_secs(120));
    watch.wait_for("progress: ", Duration::from_secs(60));
    let metrics = scrape(port);
    assert!(
        metrics.contains("pgbench_transactions_total{step=\"2\",script=\"1\"} "),
        "{metrics}"
    );
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let stderr = watch.finish();
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\n 2/3        2 "), "{stdout}");
    assert!(!stdout.contains(" 3/3 "), "{stdout}");
    assert!(
        stdout.contains("stopped early: interrupted by SIGINT after 2 step(s) of 3\n"),
        "{stdout}"
    );
    // The step cut short, though it ran more clients, is not the peak: its figures
    // cover less than its value asked for.
    assert!(stdout.contains("\npeak: "), "{stdout}");
    assert!(
        stdout.contains(" at clients=1") && !stdout.contains(" at clients=2"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nreport of step 1 (clients=1, the peak):\n"),
        "{stdout}"
    );
    assert!(!stderr.contains("step 3/3"), "{stderr}");
    let doc = read(&json);
    assert_eq!(doc.steps.len(), 2);
    let codes: Vec<&str> = doc.steps[1]
        .file
        .warnings
        .iter()
        .map(|w| w.code.as_str())
        .collect();
    assert!(codes.contains(&"interrupted"), "{codes:?}");
    let c = doc.capacity.as_ref().unwrap();
    assert!(c
        .stopped
        .as_deref()
        .unwrap()
        .starts_with("interrupted by SIGINT"));
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET /metrics` on `port`: the body.
fn scrape(port: u16) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    text
}

/// What a sweep or search refuses before it connects, with pgbench's exit status 1.
#[test]
fn bad_sweeps_and_searches_are_refused_before_connecting() {
    let ours = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
        c.env("PGHOST", "/nonexistent").stdin(Stdio::null());
        c
    };
    for (args, said) in [
        (&["--repeat=2"][..], "pgbench-rs: error: --repeat needs --sweep\n"),
        (
            &["--sweep=clients=1,x"][..],
            "pgbench-rs: error: invalid --sweep value \"x\" for clients: a client count is a whole number from 1 to 2147483647\n",
        ),
        // #43: the most a client count can be, a limit too large, a limit missing.
        (
            &["--sweep=clients=4294967297"][..],
            "pgbench-rs: error: invalid --sweep value \"4294967297\" for clients: a client count is a whole number from 1 to 2147483647\n",
        ),
        (
            &["--find-max-rate=p99<=1e308ms", "-T", "5"][..],
            "pgbench-rs: error: invalid --find-max-rate target \"p99<=1e308ms\": the latency limit is too large: at most 3600s (1 hour)",
        ),
        (
            &["--find-max-rate=p99<=", "-T", "5"][..],
            "pgbench-rs: error: invalid --find-max-rate target \"p99<=\": the limit is missing after the comparison",
        ),
        (
            &["--find-max-rate=p99<=20ms"][..],
            "pgbench-rs: error: --find-max-rate needs -T (each step runs --warmup, then -T seconds)\n",
        ),
        (
            &["--find-max-rate=p99<=20", "-T", "5"][..],
            "pgbench-rs: error: invalid --find-max-rate target \"p99<=20\": a latency takes a unit: us, ms or s (p99<=20ms)\n",
        ),
        (
            &["-b", "tpcb-like", "--sweep=aid=1,2", "-T", "1"][..],
            "pgbench-rs: error: --sweep over :aid would change nothing: the script sets it itself, over what -D gives\n",
        ),
        (&["-i", "--sweep=clients=1"][..], "some of the specified options cannot be used in initialization (-i) mode"),
    ] {
        let out = ours().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
}

/// A sweep whose steps have a client abort: no step ran whole, so there is no peak;
/// the first step's report is printed with the line a single run prints after an
/// abort, and the exit status is an abort's.
#[test]
fn a_sweep_whose_clients_abort_has_no_peak_and_its_report_says_it_is_incomplete() {
    let _alone = alone();
    let db = fresh_db("capacity_abort");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(
        &dir,
        "abort.sql",
        "\\if :client_id = 1\nSELECT 1/0;\n\\endif\nSELECT 1;\n",
    );
    let out =
        crate::support::run(
            db.ours()
                .args(["-n", "-f", &script, "--sweep=clients=2", "-t", "3"]),
        );
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "\npeak: none (no step ran whole: each was interrupted or had clients abort)\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("\nreport of step 1 (clients=2, no step ran whole):\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("error: Run was aborted; the above results are incomplete.\n"),
        "{}",
        out.stderr
    );
}

/// A sweep whose first step cannot connect keeps no step: the results file asked for
/// is not written, and stderr says so (not only why the step could not run).
#[test]
fn a_sweep_that_keeps_no_step_says_its_results_file_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("none.json");
    let out = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"))
        .env("PGHOST", "/nonexistent")
        .stdin(Stdio::null())
        .args([
            "-n",
            "-S",
            "--sweep=clients=1,2",
            "-T",
            "1",
            &format!("--export-json={}", arg(&json)),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "pgbench-rs: error: results file \"{}\" not written: no step was kept\n",
            arg(&json)
        )),
        "{stderr}"
    );
    assert!(!json.exists());
}

/// The figures of a step, for the tests' messages.
pub fn described(doc: &ResultsFile) -> String {
    doc.steps
        .iter()
        .map(|s| {
            let f = figures(&s.file);
            format!(
                "{} {}: tps {:?} p99 {:?}\n",
                s.step,
                s.value,
                f.tps(),
                f.get("p99")
            )
        })
        .collect()
}
