//! `\gset` and `\aset`.

use super::{bench_db, Case};

#[test]
fn gset_command() {
    Case {
        name: "pgbench gset command",
        opts: "-t 1",
        stdout: &["type: .*/001_pgbench_gset", "processed: 1/1"],
        stderr: &[
            r"command=3.: int 0\b",
            r"command=5.: int 1\b",
            r"command=6.: int 2\b",
            r"command=8.: int 3\b",
            r"command=10.: int 4\b",
            r"command=12.: int 5\b",
        ],
        files: &[(
            "001_pgbench_gset",
            "-- test gset\n-- no columns\nSELECT \\gset\n\
             -- one value\nSELECT 0 AS i0 \\gset\n\\set i debug(:i0)\n\
             -- two values\nSELECT 1 AS i1, 2 AS i2 \\gset\n\\set i debug(:i1)\n\\set i debug(:i2)\n\
             -- with prefix\nSELECT 3 AS i3 \\gset x_\n\\set i debug(:x_i3)\n\
             -- overwrite existing variable\nSELECT 0 AS i4, 4 AS i4 \\gset\n\\set i debug(:i4)\n\
             -- work on the last SQL command under \\;\n\
             \\; \\; SELECT 0 AS i5 \\; SELECT 5 AS i5 \\; \\; \\gset\n\\set i debug(:i5)\n",
        )],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn gset_command_with_two_rows() {
    Case {
        name: "pgbench gset command with two rows",
        opts: "-t 1",
        status: 2,
        stdout: &["type: .*/001_pgbench_gset_two_rows", "processed: 0/1"],
        stderr: &[r"expected one row, got 2\b"],
        files: &[(
            "001_pgbench_gset_two_rows",
            "\nSELECT 5432 AS fail UNION SELECT 5433 ORDER BY 1 \\gset\n",
        )],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn aset_command() {
    Case {
        name: "pgbench aset command",
        opts: "-t 1",
        stdout: &["type: .*/001_pgbench_aset", "processed: 1/1"],
        stderr: &[r"command=3.: int 8\b", r"command=4.: int 7\b"],
        files: &[(
            "001_pgbench_aset",
            "\n-- test aset, which applies to a combined query\n\
             \\; SELECT 6 AS i6 \\; SELECT 7 AS i7 \\; \\aset\n\
             -- unless it returns more than one row, last is kept\n\
             SELECT 8 AS i6 UNION SELECT 9 ORDER BY 1 DESC \\aset\n\
             \\set i debug(:i6)\n\\set i debug(:i7)\n",
        )],
        ..Case::default()
    }
    .check(bench_db());
}

#[test]
fn aset_command_with_empty_result() {
    Case {
        name: "pgbench aset command with empty result",
        opts: "-t 1",
        status: 2,
        stdout: &["type: .*/001_pgbench_aset_empty", "processed: 0/1"],
        stderr: &[
            r#"undefined variable \"i8\""#,
            r"evaluation of meta-command failed\b",
        ],
        files: &[(
            "001_pgbench_aset_empty",
            "\n-- empty result\n\\; SELECT 5432 AS i8 WHERE FALSE \\; \\aset\n\
             \\set i debug(:i8)\n",
        )],
        ..Case::default()
    }
    .check(bench_db());
}
