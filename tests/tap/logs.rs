//! `-l` transaction logs: sampled, their contents, aggregated with progress reports.

use std::path::Path;

use super::{bench_db, Case};
use crate::support::pattern::Pattern;

/// Checks the per-thread logs `<prefix>.<pid>[.<thread>]` in `dir`: `files` of
/// them, each with `min..=max` lines that all match `line`.
fn check_pgbench_logs(
    dir: &Path,
    prefix: &str,
    files: usize,
    lines: std::ops::RangeInclusive<usize>,
    line: &str,
) {
    let mut logs: Vec<String> = std::fs::read_dir(dir)
        .expect("log directory")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("{prefix}.")))
        .collect();
    logs.sort();
    assert_eq!(logs.len(), files, "number of log files: {logs:?}");
    let name = Pattern::new(&format!(r"^{prefix}\.\d+(\.\d+)?$"));
    assert!(
        logs.iter().all(|l| name.is_match(l)),
        "file name format: {logs:?}"
    );
    let line_re = Pattern::new(line);
    for log in logs {
        let contents = std::fs::read_to_string(dir.join(&log)).expect("read log");
        let n = contents.lines().count();
        assert!(lines.contains(&n), "transaction count for {log} ({n})");
        let bad: Vec<&str> = contents.lines().filter(|l| !line_re.is_match(l)).collect();
        assert!(
            bad.is_empty(),
            "log entries not matching {line_re:?}: {bad:?}"
        );
    }
}

#[test]
fn logs_with_sampling_rate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prefix = format!("--log-prefix={}/001_pgbench_log_2", dir.path().display());
    Case {
        name: "pgbench logs",
        opts: "-n -S -t 50 -c 2 --log --sampling-rate=0.5",
        stdout: &["select only", "processed: 100/100"],
        stderr: &["^$"],
        extra: &[&prefix],
        ..Case::default()
    }
    .check(bench_db());
    // Both clients are in the one thread's log.
    check_pgbench_logs(
        dir.path(),
        "001_pgbench_log_2",
        1,
        8..=92,
        r"^[01] \d{1,2} \d+ \d \d+ \d+$",
    );
}

#[test]
fn logs_contents() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prefix = format!("--log-prefix={}/001_pgbench_log_3", dir.path().display());
    Case {
        name: "pgbench logs contents",
        opts: "-n -b select-only -t 10 -l",
        stdout: &["select only", "processed: 10/10"],
        stderr: &["^$"],
        extra: &[&prefix],
        ..Case::default()
    }
    .check(bench_db());
    check_pgbench_logs(
        dir.path(),
        "001_pgbench_log_3",
        1,
        10..=10,
        r"^0 \d{1,2} \d+ \d \d+ \d+$",
    );
}

/// Progress reports and aggregated logs ("pgbench progress" of earlier versions of
/// the upstream file). In 15 an aggregate line has 15 fields, not 11: failures,
/// lag, skipped, retried and retries are always there.
#[test]
fn progress_with_aggregate_interval() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prefix = format!("--log-prefix={}/001_pgbench_log_1", dir.path().display());
    Case {
        name: "pgbench progress",
        opts: "-T 2 -P 1 -l --aggregate-interval=1 -S -b se@2 --rate=20 \
               --latency-limit=1000 -j 2 -c 3 -r",
        stdout: &[
            "type: multiple",
            "clients: 3",
            "threads: 2",
            "duration: 2 s",
            "script 1: .* select only",
            "script 2: .* select only",
            "statement latencies in milliseconds",
            "FROM pgbench_accounts",
        ],
        stderr: &["vacuum", r"progress: 1\b"],
        extra: &[&prefix],
        ..Case::default()
    }
    .check(bench_db());
    // Two threads, two seconds; timing may make it one to three intervals.
    check_pgbench_logs(
        dir.path(),
        "001_pgbench_log_1",
        2,
        1..=3,
        r"^\d+ \d{1,2} \d+ \d+ \d+ \d+ \d+ \d+ \d+ \d+ \d+ \d+ \d+ \d+ \d+$",
    );
}
