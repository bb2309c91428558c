//! `\startpipeline` / `\endpipeline`, and what they refuse.

use super::{bench_db, Case};

fn ten_selects(before: &str, after: &str) -> String {
    format!("{before}{}{after}", "select 1;\n".repeat(10))
}

#[test]
fn working_startpipeline() {
    let script = ten_selects(
        "\n-- test startpipeline\n\\startpipeline\n",
        "\n\\endpipeline\n",
    );
    Case {
        name: "working \\startpipeline",
        opts: "-t 1 -n -M extended",
        stdout: &["type: .*/001_pgbench_pipeline", "actually processed: 1/1"],
        files: &[("001_pgbench_pipeline", &script)],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn working_startpipeline_prepared() {
    let script = ten_selects(
        "\n-- test startpipeline\n\\startpipeline\n",
        "\n\\endpipeline\n",
    );
    Case {
        name: "working \\startpipeline",
        opts: "-t 1 -n -M prepared",
        stdout: &[
            "type: .*/001_pgbench_pipeline_prep",
            "actually processed: 1/1",
        ],
        files: &[("001_pgbench_pipeline_prep", &script)],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn call_startpipeline_twice() {
    Case {
        name: "error: call \\startpipeline twice",
        opts: "-t 1 -n -M extended",
        status: 2,
        stderr: &["already in pipeline mode"],
        files: &[(
            "001_pgbench_pipeline_2",
            "\n-- startpipeline twice\n\\startpipeline\n\\startpipeline\n",
        )],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn endpipeline_with_no_start() {
    Case {
        name: "error: \\endpipeline with no start",
        opts: "-t 1 -n -M extended",
        status: 2,
        stderr: &["not in pipeline mode"],
        files: &[(
            "001_pgbench_pipeline_3",
            "\n-- pipeline not started\n\\endpipeline\n",
        )],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn gset_not_allowed_in_pipeline_mode() {
    Case {
        name: "error: \\gset not allowed in pipeline mode",
        opts: "-t 1 -n -M extended",
        status: 2,
        stderr: &["gset is not allowed in pipeline mode"],
        files: &[(
            "001_pgbench_pipeline_4",
            "\n\\startpipeline\nselect 1 \\gset f\n\\endpipeline\n",
        )],
        ..Case::default()
    }
    .check(bench_db());
}

/// Not yet in the upstream file of pgbench 15; stock 15.18 passes it.
#[test]
fn working_startpipeline_with_serializable() {
    let script = ten_selects(
        "\n-- test startpipeline with serializable\n\\startpipeline\n\
         BEGIN ISOLATION LEVEL SERIALIZABLE;\n",
        "\nEND;\n\\endpipeline\n",
    );
    Case {
        name: "working \\startpipeline with serializable",
        opts: "-c4 -j2 -t 10 -n -M prepared",
        stdout: &[
            "type: .*/001_pgbench_pipeline_serializable",
            r"actually processed: (\d+)/\1",
        ],
        files: &[("001_pgbench_pipeline_serializable", &script)],
        ..Case::default()
    }
    .check(bench_db());
}
