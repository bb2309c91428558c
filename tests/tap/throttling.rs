//! `--rate` with `--latency-limit`, in time and late.

use super::{bench_db, Case};

#[test]
fn throttling() {
    Case {
        name: "pgbench throttling",
        opts: "-t 100 -S --rate=100000 --latency-limit=1000000 -c 2 -n -r",
        stdout: &["processed: 200/200", "builtin: select only"],
        stderr: &["^$"],
        ..Case::default()
    }
    .check(bench_db());
}

/// At that rate, with 2 ms per transaction, at most one can run in time.
#[test]
fn late_throttling() {
    Case {
        name: "pgbench late throttling",
        opts: "-t 10 --rate=100000 --latency-limit=1 -n -r",
        stdout: &[
            "processed: [01]/10",
            "type: .*/001_pgbench_sleep",
            "above the 1.0 ms latency limit: [01]/",
        ],
        stderr: &["^$"],
        files: &[("001_pgbench_sleep", r"\sleep 2ms")],
        ..Case::default()
    }
    .check(bench_db());
}
