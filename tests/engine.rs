//! `bench::run` as a function of its inputs, run twice in one process (issue #34):
//! against the fake server and against a throwaway cluster, each time a first run to
//! its end, then a second one that a real SIGINT stops. The first run's result must
//! be untouched by the second, the second must end with its report (interrupted), and
//! when both are over no thread of either may be left.
//!
//! A test binary of its own, without the test harness: a SIGINT goes to a process, and
//! the harness's threads would take it with its default action. Here `main` takes
//! over SIGINT and SIGTERM first, as the program does, and runs the cases one after
//! the other.

use pgbench_results::{Ended, RunResult};
use pgbench_rs::bench::{self, RunEnv, RunOutcome, RunStop};
use pgbench_rs::cli::options::{interpret, Action, ProcessEnv};
use pgbench_rs::logging::Output;
use pgbench_rs::signals::{self, Signals};
use pgbench_wire::testing::{FakeServer, Reply};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn main() {
    pgbench_rs::logging::init_progname("pgbench-rs");
    let signals = signals::install().expect("the signal thread");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("one.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    let script = script.to_str().unwrap();

    let fake = FakeServer::answering(|r| Reply::usual(&r.sql));
    let fake_target = [
        "-h",
        fake.host(),
        "-p",
        &fake.port().to_string(),
        "-U",
        "tester",
    ]
    .map(str::to_string);
    twice("the fake server", &signals, &fake_target, script);

    match pgbench_cluster::Cluster::start(Default::default()) {
        Ok(cluster) => {
            let target = [
                "-h".to_string(),
                cluster.socket_dir().display().to_string(),
                "-p".to_string(),
                cluster.port().to_string(),
                "-U".to_string(),
                cluster.user().to_string(),
                "postgres".to_string(),
            ];
            twice("a throwaway cluster", &signals, &target, script);
        }
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("no throwaway cluster (CI=true: it must run): {e}")
        }
        Err(e) => eprintln!("skipped: the throwaway cluster's case: {e}"),
    }
    println!("engine: bench::run twice in one process, a SIGINT in the second: ok");
}

/// Two runs on `target`: the first to its end, the second stopped by a SIGINT sent to
/// this process once it has printed a progress line.
fn twice(what: &str, signals: &Signals, target: &[String], script: &str) {
    let baseline = thread_names();
    let first = run(signals, target, &["-T", "2"], script, false);
    let kept = first.clone();
    assert_eq!(first.ended, Some(Ended::Completed), "{what}: the first run");
    assert!(
        first.total.counts.cnt > 0,
        "{what}: the first run counted nothing"
    );
    let second = run(signals, target, &["-T", "60", "-P", "1"], script, true);
    assert!(
        matches!(&second.ended, Some(Ended::Interrupted { signal, .. }) if signal == "SIGINT"),
        "{what}: the second run ended {:?}",
        second.ended
    );
    assert!(
        second.bench_duration_us < 30e6,
        "{what}: the SIGINT did not stop the second run"
    );
    assert!(
        second.total.counts.cnt > 0,
        "{what}: the second run counted nothing"
    );
    assert_eq!(
        first, kept,
        "{what}: the second run changed the first's result"
    );
    no_thread_left(what, &baseline);
}

/// One `bench::run` of `pgbench-rs -n -c 4 -j 2 ARGS -f script TARGET`, with its
/// RunStop attached to the process's signals for as long as it runs, as the program
/// attaches it; with `interrupt`, a SIGINT is sent to this process at its first
/// progress line. Its report is rendered, as the program prints it.
fn run(
    signals: &Signals,
    target: &[String],
    args: &[&str],
    script: &str,
    interrupt: bool,
) -> RunResult {
    let mut argv: Vec<String> = ["-n", "-c", "4", "-j", "2", "-f", script]
        .iter()
        .chain(args)
        .map(|s| s.to_string())
        .collect();
    argv.extend(target.iter().cloned());
    let (plan, conn) = match interpret("pgbench-rs", &argv, &ProcessEnv).outcome {
        Ok(Action::Bench { plan, conn, .. }) => (plan, conn),
        other => panic!("{argv:?} is not a run: {other:?}"),
    };
    let stop = RunStop::new();
    let _attached = signals.attach(stop.clone());
    let out = Arc::new(Watching {
        interrupt,
        sent: Mutex::new(false),
        stdout: Mutex::new(String::new()),
    });
    let env = RunEnv {
        out: out.clone(),
        metrics: None,
        stop,
    };
    let outcome = bench::run(&env, conn.connect_args(), &plan)
        .unwrap_or_else(|e| panic!("{argv:?}: {}", e.render()));
    let RunOutcome::Completed { result, .. } = outcome else {
        panic!("{argv:?}: stopped on an abort");
    };
    let report = pgbench_results::report::render(&result);
    assert!(report.contains("\ntps = "), "{report}");
    assert!(
        out.stdout.lock().unwrap().starts_with("pgbench ("),
        "the banner went elsewhere"
    );
    *result
}

/// The run's lines, kept; with `interrupt`, a SIGINT to this process at the first
/// progress line (the run is then under way).
struct Watching {
    interrupt: bool,
    sent: Mutex<bool>,
    stdout: Mutex<String>,
}

impl Output for Watching {
    fn stdout(&self, text: &str) {
        self.stdout.lock().unwrap().push_str(text);
    }

    fn stderr(&self, text: &str) {
        let mut sent = self.sent.lock().unwrap();
        if self.interrupt && !*sent && text.starts_with("progress: ") {
            *sent = true;
            let status = std::process::Command::new("kill")
                .args(["-INT", &std::process::id().to_string()])
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
}

/// This process's threads by name.
fn thread_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .map(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect();
    names.sort();
    names
}

/// Waits (up to the bound of a cancel request's thread) for the threads to be what
/// they were before the runs.
fn no_thread_left(what: &str, baseline: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = thread_names();
        if now.len() <= baseline.len() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: threads left after the runs: {now:?} (before: {baseline:?})"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
