//! Initialisation: scale 1 with the defaults, with every option, and `--init-steps`.

use super::Case;
use crate::support::fresh_db;
use crate::support::pattern::assert_unlike;

#[test]
fn scale_1_initialization() {
    let db = fresh_db("tap_init_scale_1");
    Case {
        name: "pgbench scale 1 initialization",
        opts: "-i",
        stdout: &["^$"],
        stderr: &[
            "creating tables",
            "vacuuming",
            "creating primary keys",
            r"done in \d+\.\d\d s ",
        ],
        ..Case::default()
    }
    .check(&db);
    assert_eq!(db.value("SELECT count(*) FROM pgbench_accounts"), "100000");
}

/// Upstream also lists a look-ahead for "vacuuming" here, which matches anything
/// (and the steps do vacuum); it is left out.
#[test]
fn scale_1_initialization_with_all_options() {
    let db = fresh_db("tap_init_all_options");
    let ts = "regress_pgbench_tap_1_ts";
    db.psql(&format!("DROP TABLESPACE IF EXISTS {ts}"));
    let dir = db.server_owned_dir("regress_pgbench_tap_1_ts_dir");
    db.psql(&format!(
        "CREATE TABLESPACE {ts} LOCATION '{}'",
        dir.display()
    ));
    Case {
        name: "pgbench scale 1 initialization",
        opts: "--initialize --init-steps=dtpvg --scale=1 --unlogged-tables \
               --fillfactor=98 --foreign-keys --quiet \
               --tablespace=regress_pgbench_tap_1_ts \
               --index-tablespace=regress_pgbench_tap_1_ts --partitions=2 \
               --partition-method=hash",
        stdout: &["(?i)^$"],
        stderr: &[
            "dropping old tables",
            "creating tables",
            "creating 2 partitions",
            "vacuuming",
            "creating primary keys",
            "creating foreign keys",
            r"done in \d+\.\d\d s ",
        ],
        ..Case::default()
    }
    .check(&db);
    assert_eq!(
        db.value(
            "SELECT count(*) FROM pg_class c JOIN pg_tablespace t \
             ON t.oid = c.reltablespace WHERE t.spcname = 'regress_pgbench_tap_1_ts'"
        ),
        // Four tables and two partitions of accounts; five primary key indexes
        // (the partitioned one and its two partitions').
        "11",
        "tables and indexes in the tablespace"
    );
    db.psql(&format!(
        "DROP TABLE pgbench_accounts, pgbench_branches, pgbench_history, \
         pgbench_tellers; DROP TABLESPACE {ts}"
    ));
}

#[test]
fn init_steps() {
    let db = fresh_db("tap_init_steps");
    let out = Case {
        name: "pgbench --init-steps",
        opts: "--initialize --init-steps=dtpvGvv --no-vacuum --foreign-keys \
               --unlogged-tables --partitions=3",
        stdout: &["^$"],
        stderr: &[
            "dropping old tables",
            "creating tables",
            "creating 3 partitions",
            "creating primary keys",
            r"generating data \(server-side\)",
            "creating foreign keys",
            r"done in \d+\.\d\d s ",
        ],
        ..Case::default()
    }
    .check(&db);
    // --no-vacuum takes every v out of the steps.
    assert_unlike(&out.stderr, &["vacuuming"], "pgbench --init-steps");
}
