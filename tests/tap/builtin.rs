//! The builtin scripts, and how a run fails before one starts: no such database,
//! no tables yet.

use super::{bench_db, Case};
use crate::support::fresh_db;

#[test]
fn no_such_database() {
    Case {
        name: "no such database",
        opts: "no-such-database",
        status: 1,
        stdout: &["^$"],
        stderr: &[
            "connection to server .* failed",
            r#"FATAL:  database "no-such-database" does not exist"#,
        ],
        ..Case::default()
    }
    .check(&fresh_db("tap_no_such_database"));
}

#[test]
fn run_without_init() {
    Case {
        name: "run without init",
        opts: "-S -t 1",
        status: 1,
        stderr: &["Perhaps you need to do initialization"],
        ..Case::default()
    }
    .check(&fresh_db("tap_run_without_init"));
}

#[test]
fn tpcb_like() {
    Case {
        name: "pgbench tpcb-like",
        opts: "--transactions=5 -Dfoo=bla --client=2 --protocol=simple --builtin=t \
               --connect -n -v -n",
        stdout: &[
            "builtin: TPC-B",
            r"clients: 2\b",
            "processed: 10/10",
            "mode: simple",
            "maximum number of tries: 1",
        ],
        stderr: &["^$"],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn simple_update() {
    Case {
        name: "pgbench simple update",
        opts: "--transactions=20 --client=5 -M extended --builtin=si -C --no-vacuum -s 1",
        stdout: &[
            "builtin: simple update",
            r"clients: 5\b",
            r"threads: 1\b",
            "processed: 100/100",
            "mode: extended",
        ],
        stderr: &["scale option ignored"],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn select_only() {
    Case {
        name: "pgbench select only",
        opts: "-t 100 -c 7 -M prepared -b se --debug",
        stdout: &[
            "builtin: select only",
            r"clients: 7\b",
            r"threads: 1\b",
            "processed: 700/700",
            "mode: prepared",
        ],
        stderr: &[
            "vacuum",
            "client 0",
            "client 1",
            "sending",
            "receiving",
            "executing",
        ],
        ..Case::default()
    }
    .check(bench_db());
}
