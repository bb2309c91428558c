//! Custom scripts: weights, query modes, backslash commands, many clients creating
//! types at once, and a script that ends inside a transaction block.

use super::{bench_db, Case};
use crate::support::fresh_db;

#[test]
fn concurrent_oid_generation() {
    let db = fresh_db("tap_concurrent_oid");
    let labels: Vec<String> = (1..=1000).map(|i| format!("'l{i}'")).collect();
    let script = format!(
        "CREATE TYPE pg_temp.e AS ENUM ({}); DROP TYPE pg_temp.e;",
        labels.join(",")
    );
    Case {
        name: "concurrent OID generation",
        opts: "--no-vacuum --client=5 --protocol=prepared --transactions=25",
        stdout: &["processed: 125/125"],
        stderr: &["^$"],
        files: &[("001_pgbench_concurrent_insert", &script)],
        ..Case::default()
    }
    .check(&db);
}

#[test]
fn custom_scripts() {
    Case {
        name: "pgbench custom scripts",
        opts: "-t 100 -c 1 -j 2 -M prepared -n",
        stdout: &[
            "type: multiple scripts",
            "mode: prepared",
            "script 1: .*/001_pgbench_custom_script_1",
            "weight: 2",
            "script 2: .*/001_pgbench_custom_script_2",
            "weight: 1",
            "processed: 100/100",
        ],
        stderr: &["^$"],
        files: &[
            (
                "001_pgbench_custom_script_1@1",
                "-- select only\n\
                 \\set aid random(1, :scale * 100000)\n\
                 SELECT abalance::INTEGER AS balance\n  FROM pgbench_accounts\n  WHERE aid=:aid;\n",
            ),
            (
                "001_pgbench_custom_script_2@2",
                "-- special variables\nBEGIN;\n\\set foo 1\n\
                 -- cast are needed for typing under -M prepared\n\
                 SELECT :foo::INT + :scale::INT * :client_id::INT AS bla;\nCOMMIT;\n",
            ),
        ],
        ..Case::default()
    }
    .check(bench_db());
}

const SELECT_ONLY_VARIANT: &str = "-- select only variant\n\
    \\set aid random(1, :scale * 100000)\nBEGIN;\n\
    SELECT abalance::INTEGER AS balance\n  FROM pgbench_accounts\n  WHERE aid=:aid;\nCOMMIT;\n";

#[test]
fn custom_script_simple() {
    Case {
        name: "pgbench custom script",
        opts: "-n -t 10 -c 1 -M simple",
        stdout: &[
            "type: .*/001_pgbench_custom_script_3",
            "processed: 10/10",
            "mode: simple",
        ],
        stderr: &["^$"],
        files: &[("001_pgbench_custom_script_3", SELECT_ONLY_VARIANT)],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn custom_script_extended() {
    Case {
        name: "pgbench custom script",
        opts: "-n -t 10 -c 2 -M extended",
        stdout: &[
            "type: .*/001_pgbench_custom_script_4",
            "processed: 20/20",
            "mode: extended",
        ],
        stderr: &["^$"],
        files: &[("001_pgbench_custom_script_4", SELECT_ONLY_VARIANT)],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn backslash_commands() {
    Case {
        name: "pgbench backslash commands",
        opts: "-t 1",
        stdout: &[
            "type: .*/001_pgbench_backslash_commands",
            "processed: 1/1",
            "shell-echo-output",
        ],
        stderr: &[r"command=8.: int 1\b"],
        files: &[(
            "001_pgbench_backslash_commands",
            "-- run set\n\\set zero 0\n\\set one 1.0\n\
             -- sleep\n\\sleep :one ms\n\\sleep 100 us\n\\sleep 0 s\n\\sleep :zero\n\
             -- setshell and continuation\n\\setshell another_one\\\n  echo \\\n    :one\n\
             \\set n debug(:another_one)\n\
             -- shell\n\\shell echo shell-echo-output\n",
        )],
        ..Case::default()
    }
    .check(bench_db());
}

/// A client that reaches the end of its script inside a transaction block aborts.
#[test]
fn incomplete_transaction_block() {
    Case {
        name: "incomplete transaction block",
        opts: "--no-vacuum",
        status: 2,
        stdout: &["processed: 1/10"],
        stderr: &[
            "client 0 aborted: end of script reached without completing the last transaction",
        ],
        files: &[(
            "001_pgbench_incomplete_transaction_block",
            "BEGIN;SELECT 1;",
        )],
        ..Case::default()
    }
    .check(bench_db());
}
