//! pgbench's own `t/001_pgbench_with_server.pl`, case by case, against a throwaway
//! cluster: initialisation variants, builtin and custom scripts, server parameter
//! logging, the expression script with its debug output, seeded random values,
//! backslash commands, `\gset`/`\aset`, pipelines, the table of script errors,
//! throttling, `-l` logs (sampled and aggregated), retries after serialization
//! failures and deadlocks.
//!
//! Upstream runs everything in one database, one case after another; here each case
//! is a test of its own. Cases that leave the tables' shape alone share one database
//! initialised once ([`bench_db`]); cases that create or drop tables get their own.
//!
//! The cases are those of the upstream file as of pgbench 16 (15's lacks only
//! `\startpipeline` with serializable transactions, which stock 15.18 passes too), plus
//! "pgbench progress" with aggregated logs from earlier versions of the file. Setting
//! `PGBENCH_TAP_STOCK=1` runs the same expectations against stock pgbench 15.18, which
//! is how they were checked.

mod support;

use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use support::pattern::{assert_like, assert_unlike, Pattern};
use support::{fresh_db, run, Db, Run};

/// The program under test aimed at `db`: pgbench-rs, or stock pgbench with
/// `PGBENCH_TAP_STOCK`.
fn program(db: &Db) -> Command {
    if std::env::var_os("PGBENCH_TAP_STOCK").is_some() {
        db.stock()
    } else {
        db.ours()
    }
}

/// The database initialised once (scale 1) for the cases that need pgbench's tables
/// but do not change their shape.
fn bench_db() -> &'static Db {
    static DB: OnceLock<Db> = OnceLock::new();
    DB.get_or_init(|| {
        let db = fresh_db("tap_bench");
        db.init(1);
        db
    })
}

/// One upstream `$node->pgbench(...)` call: options, expected status, patterns for
/// stdout and stderr, script files (name → contents; a name may end in `@weight`),
/// more arguments after the files, and environment variables.
#[derive(Default)]
struct Case<'a> {
    name: &'a str,
    opts: &'a str,
    status: i32,
    stdout: &'a [&'a str],
    stderr: &'a [&'a str],
    files: &'a [(&'a str, &'a str)],
    extra: &'a [&'a str],
    env: &'a [(&'a str, &'a str)],
}

impl Case<'_> {
    /// Runs the case on `db` and checks it as `command_checks_all` does; the run is
    /// returned for further checks.
    fn check(&self, db: &Db) -> Run {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut cmd = program(db);
        cmd.args(self.opts.split_whitespace());
        let mut files: Vec<&(&str, &str)> = self.files.iter().collect();
        files.sort_by_key(|(name, _)| *name);
        for (name, contents) in files {
            let file = name.rsplit_once('@').map_or(*name, |(f, _)| f);
            std::fs::write(dir.path().join(file), contents).expect("write script");
            cmd.arg("-f").arg(dir.path().join(name));
        }
        cmd.args(self.extra);
        for (k, v) in self.env {
            cmd.env(k, v);
        }
        let out = run(&mut cmd);
        assert_eq!(
            out.code, self.status,
            "{}: exit status\n--- stdout:\n{}--- stderr:\n{}",
            self.name, out.stdout, out.stderr
        );
        assert_like(&out.stdout, self.stdout, &format!("{}: stdout", self.name));
        assert_like(&out.stderr, self.stderr, &format!("{}: stderr", self.name));
        out
    }
}

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

mod init {
    use super::*;

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
}

mod builtin {
    use super::*;

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
}

mod custom {
    use super::*;

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
}

/// Server logging of query parameters, set per database here (upstream edits
/// postgresql.conf, which would reach every other test's database too); the server
/// log is checked from the start of this test on.
#[test]
fn server_parameter_logging() {
    let db = fresh_db("tap_param_logging");
    let set = |settings: &[(&str, &str)]| {
        for (k, v) in settings {
            db.psql(&format!("ALTER DATABASE {} SET {k} = {v}", db.name));
        }
    };
    let log_start = db.cluster.server_log().len();
    assert!(
        log_start > 0,
        "this test reads the server log of a cluster of its own"
    );
    let log = || db.cluster.server_log()[log_start..].to_string();
    let json_script = "select '{ invalid ' as value \\gset\n\
        select $$'Valame Dios!' dijo Sancho; 'no le dije yo a vuestra merced que mirase bien lo que hacia?'$$ as long \\gset\n\
        select column1::jsonb from (values (:value), (:long)) as q;\n";
    let division_script = "select '1' as one \\gset\n\
        SELECT 1 / (random() / 2)::int, :one::int, :two::int;\n";
    let opts = "-n -t1 -c1 -M prepared";

    // Logging neither with errors nor with statements.
    set(&[
        ("log_min_duration_statement", "0"),
        ("log_parameter_max_length", "0"),
        ("log_parameter_max_length_on_error", "0"),
    ]);
    let out = Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &["ERROR:  invalid input syntax for type json"],
        files: &[("001_param_1", json_script)],
        ..Case::default()
    }
    .check(&db);
    assert_unlike(
        &out.stderr,
        &["unnamed portal with parameters"],
        "no parameters in the error",
    );
    assert_unlike(
        &log(),
        &[r"DETAIL:  parameters: \$1 = '\{ invalid ',"],
        "no parameters logged",
    );

    // Truncated parameters on error, full ones with statements.
    set(&[
        ("log_parameter_max_length", "-1"),
        ("log_parameter_max_length_on_error", "64"),
    ]);
    Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &[
            "ERROR:  division by zero",
            r"CONTEXT:  unnamed portal with parameters: \$1 = '1', \$2 = NULL",
        ],
        files: &[("001_param_2", division_script)],
        ..Case::default()
    }
    .check(&db);
    Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &[
            "ERROR:  invalid input syntax for type json",
            r"(?m)CONTEXT:  JSON data, line 1: \{ invalid\.\.\.[\r\n]+unnamed portal with parameters: \$1 = '\{ invalid ', \$2 = '''Valame Dios!'' dijo Sancho; ''no le dije yo a vuestra merced que \.\.\.'",
        ],
        files: &[("001_param_3", json_script)],
        ..Case::default()
    }
    .check(&db);
    assert_like(
        &log(),
        &[
            r"DETAIL:  parameters: \$1 = '\{ invalid ', \$2 = '''Valame Dios!'' dijo Sancho; ''no le dije yo a vuestra merced que mirase bien lo que hacia\?'''",
        ],
        "parameter report does not truncate",
    );

    // Full parameters on error, truncated ones with statements.
    set(&[
        ("log_min_duration_statement", "-1"),
        ("log_parameter_max_length", "7"),
        ("log_parameter_max_length_on_error", "-1"),
    ]);
    Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &[
            "ERROR:  division by zero",
            r"CONTEXT:  unnamed portal with parameters: \$1 = '1', \$2 = NULL",
        ],
        files: &[("001_param_4", division_script)],
        ..Case::default()
    }
    .check(&db);
    set(&[("log_min_duration_statement", "0")]);
    Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &[
            "ERROR:  invalid input syntax for type json",
            r"(?m)CONTEXT:  JSON data, line 1: \{ invalid\.\.\.[\r\n]+unnamed portal with parameters: \$1 = '\{ invalid ', \$2 = '''Valame Dios!'' dijo Sancho; ''no le dije yo a vuestra merced que mirase bien lo que hacia\?'",
        ],
        files: &[("001_param_5", json_script)],
        ..Case::default()
    }
    .check(&db);
    assert_like(
        &log(),
        &[r"DETAIL:  parameters: \$1 = '\{ inval\.\.\.', \$2 = '''Valame\.\.\.'"],
        "parameter report truncates",
    );

    // Bad parameters are reported in the typinput phase of Bind.
    Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &[
            r#"ERROR:  invalid input syntax for type smallint: "1a""#,
            r"CONTEXT:  unnamed portal parameter \$2 = '1a'",
        ],
        files: &[(
            "001_param_6",
            "select 42 as value1, '1a' as value2 \\gset\n\
             select :value1::smallint, :value2::smallint;\n",
        )],
        ..Case::default()
    }
    .check(&db);
}

const EXPRESSIONS: &str = r#"-- integer functions
\set i1 debug(random(10, 19))
\set i2 debug(random_exponential(100, 199, 10.0))
\set i3 debug(random_gaussian(1000, 1999, 10.0))
\set i4 debug(abs(-4))
\set i5 debug(greatest(5, 4, 3, 2))
\set i6 debug(11 + least(-5, -4, -3, -2))
\set i7 debug(int(7.3))
-- integer arithmetic and bit-wise operators
\set i8 debug(17 / (4|1) + ( 4 + (7 >> 2)))
\set i9 debug(- (3 * 4 - (-(~ 1) + -(~ 0))) / -1 + 3 % -1)
\set ia debug(10 + (0 + 0 * 0 - 0 / 1))
\set ib debug(:ia + :scale)
\set ic debug(64 % (((2 + 1 * 2 + (1 # 2) | 4 * (2 & 11)) - (1 << 2)) + 2))
-- double functions and operators
\set d1 debug(sqrt(+1.5 * 2.0) * abs(-0.8E1))
\set d2 debug(double(1 + 1) * (-75.0 / :foo))
\set pi debug(pi() * 4.9)
\set d4 debug(greatest(4, 2, -1.17) * 4.0 * Ln(Exp(1.0)))
\set d5 debug(least(-5.18, .0E0, 1.0/0) * -3.3)
-- reset variables
\set i1 0
\set d1 false
-- yet another integer function
\set id debug(random_zipfian(1, 9, 1.3))
--- pow and power
\set poweri debug(pow(-3,3))
\set powerd debug(pow(2.0,10))
\set poweriz debug(pow(0,0))
\set powerdz debug(pow(0.0,0.0))
\set powernegi debug(pow(-2,-3))
\set powernegd debug(pow(-2.0,-3.0))
\set powernegd2 debug(power(-5.0,-5.0))
\set powerov debug(pow(9223372036854775807, 2))
\set powerov2 debug(pow(10,30))
-- comparisons and logical operations
\set c0 debug(1.0 = 0.0 and 1.0 != 0.0)
\set c1 debug(0 = 1 Or 1.0 = 1)
\set c4 debug(case when 0 < 1 then 32 else 0 end)
\set c5 debug(case when true then 33 else 0 end)
\set c6 debug(case when false THEN -1 when 1 = 1 then 13 + 19 + 2.0 end )
\set c7 debug(case when (1 > 0) and (1 >= 0) and (0 < 1) and (0 <= 1) and (0 != 1) and (0 = 0) and (0 <> 1) then 35 else 0 end)
\set c8 debug(CASE \
                WHEN (1.0 > 0.0) AND (1.0 >= 0.0) AND (0.0 < 1.0) AND (0.0 <= 1.0) AND \
                     (0.0 != 1.0) AND (0.0 = 0.0) AND (0.0 <> 1.0) AND (0.0 = 0.0) \
                  THEN 36 \
                  ELSE 0 \
              END)
\set c9 debug(CASE WHEN NOT FALSE THEN 3 * 12.3333334 END)
\set ca debug(case when false then 0 when 1-1 <> 0 then 1 else 38 end)
\set cb debug(10 + mod(13 * 7 + 12, 13) - mod(-19 * 11 - 17, 19))
\set cc debug(NOT (0 > 1) AND (1 <= 1) AND NOT (0 >= 1) AND (0 < 1) AND \
    NOT (false and true) AND (false OR TRUE) AND (NOT :f) AND (NOT FALSE) AND \
    NOT (NOT TRUE))
-- NULL value and associated operators
\set n0 debug(NULL + NULL * exp(NULL))
\set n1 debug(:n0)
\set n2 debug(NOT (:n0 IS NOT NULL OR :d1 IS NULL))
\set n3 debug(:n0 IS NULL AND :d1 IS NOT NULL AND :d1 NOTNULL)
\set n4 debug(:n0 ISNULL AND NOT :n0 IS TRUE AND :n0 IS NOT FALSE)
\set n5 debug(CASE WHEN :n IS NULL THEN 46 ELSE NULL END)
-- use a variables of all types
\set n6 debug(:n IS NULL AND NOT :f AND :t)
-- conditional truth
\set cs debug(CASE WHEN 1 THEN TRUE END AND CASE WHEN 1.0 THEN TRUE END AND CASE WHEN :n THEN NULL ELSE TRUE END)
-- hash functions
\set h0 debug(hash(10, 5432))
\set h1 debug(:h0 = hash_murmur2(10, 5432))
\set h3 debug(hash_fnv1a(10, 5432))
\set h4 debug(hash(10))
\set h5 debug(hash(10) = hash(10, :default_seed))
-- lazy evaluation
\set zy 0
\set yz debug(case when :zy = 0 then -1 else (1 / :zy) end)
\set yz debug(case when :zy = 0 or (1 / :zy) < 0 then -1 else (1 / :zy) end)
\set yz debug(case when :zy > 0 and (1 / :zy) < 0 then (1 / :zy) else 1 end)
-- substitute variables of all possible types
\set v0 NULL
\set v1 TRUE
\set v2 5432
\set v3 -54.21E-2
SELECT :v0, :v1, :v2, :v3;
-- if tests
\set nope 0
\if 1 > 0
\set id debug(65)
\elif 0
\set nope 1
\else
\set nope 1
\endif
\if 1 < 0
\set nope 1
\elif 1 > 0
\set ie debug(74)
\else
\set nope 1
\endif
\if 1 < 0
\set nope 1
\elif 1 < 0
\set nope 1
\else
\set if debug(83)
\endif
\if 1 = 1
\set ig debug(86)
\elif 0
\set nope 1
\endif
\if 1 = 0
\set nope 1
\elif 1 <> 0
\set ih debug(93)
\endif
-- must be zero if false branches where skipped
\set nope debug(:nope)
-- check automatic variables
\set sc debug(:scale)
\set ci debug(:client_id)
\set rs debug(:random_seed)
-- minint constant parsing
\set min debug(-9223372036854775808)
\set max debug(-(:min + 1))
-- parametric pseudorandom permutation function
\set t debug(permute(0, 2) + permute(1, 2) = 1)
\set t debug(permute(0, 3) + permute(1, 3) + permute(2, 3) = 3)
\set t debug(permute(0, 4) + permute(1, 4) + permute(2, 4) + permute(3, 4) = 6)
\set t debug(permute(0, 5) + permute(1, 5) + permute(2, 5) + permute(3, 5) + permute(4, 5) = 10)
\set t debug(permute(0, 16) + permute(1, 16) + permute(2, 16) + permute(3, 16) + \
             permute(4, 16) + permute(5, 16) + permute(6, 16) + permute(7, 16) + \
             permute(8, 16) + permute(9, 16) + permute(10, 16) + permute(11, 16) + \
             permute(12, 16) + permute(13, 16) + permute(14, 16) + permute(15, 16) = 120)
-- random sanity checks
\set size random(2, 1000)
\set v random(0, :size - 1)
\set p permute(:v, :size)
\set t debug(0 <= :p and :p < :size and :p = permute(:v + :size, :size) and :p <> permute(:v + 1, :size))
-- actual values
\set t debug(permute(:v, 1) = 0)
\set t debug(permute(0, 2, 5431) = 0 and permute(1, 2, 5431) = 1 and \
             permute(0, 2, 5433) = 1 and permute(1, 2, 5433) = 0)
-- check permute's portability across architectures
\set size debug(:max - 10)
\set t debug(permute(:size-1, :size, 5432) = 520382784483822430 and \
             permute(:size-2, :size, 5432) = 1143715004660802862 and \
             permute(:size-3, :size, 5432) = 447293596416496998 and \
             permute(:size-4, :size, 5432) = 916527772266572956 and \
             permute(:size-5, :size, 5432) = 2763809008686028849 and \
             permute(:size-6, :size, 5432) = 8648551549198294572 and \
             permute(:size-7, :size, 5432) = 4542876852200565125)
"#;

#[test]
fn expressions() {
    Case {
        name: "pgbench expressions",
        opts: "--random-seed=5432 -t 1 -Dfoo=-10.1 -Dbla=false -Di=+3 -Dn=null -Dt=t \
               -Df=of -Dd=1.0",
        stdout: &["type: .*/001_pgbench_expressions", "processed: 1/1"],
        stderr: &[
            r"setting random seed to 5432\b",
            // With the seed given, the random values are fixed.
            r"command=1.: int 17\b",
            r"command=2.: int 104\b",
            r"command=3.: int 1498\b",
            r"command=4.: int 4\b",
            r"command=5.: int 5\b",
            r"command=6.: int 6\b",
            r"command=7.: int 7\b",
            r"command=8.: int 8\b",
            r"command=9.: int 9\b",
            r"command=10.: int 10\b",
            r"command=11.: int 11\b",
            r"command=12.: int 12\b",
            r"command=15.: double 15\b",
            r"command=16.: double 16\b",
            r"command=17.: double 17\b",
            r"command=20.: int 3\b",
            r"command=21.: double -27\b",
            r"command=22.: double 1024\b",
            r"command=23.: double 1\b",
            r"command=24.: double 1\b",
            r"command=25.: double -0.125\b",
            r"command=26.: double -0.125\b",
            r"command=27.: double -0.00032\b",
            r"command=28.: double 8.50705917302346e\+0?37\b",
            r"command=29.: double 1e\+0?30\b",
            r"command=30.: boolean false\b",
            r"command=31.: boolean true\b",
            r"command=32.: int 32\b",
            r"command=33.: int 33\b",
            r"command=34.: double 34\b",
            r"command=35.: int 35\b",
            r"command=36.: int 36\b",
            r"command=37.: double 37\b",
            r"command=38.: int 38\b",
            r"command=39.: int 39\b",
            r"command=40.: boolean true\b",
            r"command=41.: null\b",
            r"command=42.: null\b",
            r"command=43.: boolean true\b",
            r"command=44.: boolean true\b",
            r"command=45.: boolean true\b",
            r"command=46.: int 46\b",
            r"command=47.: boolean true\b",
            r"command=48.: boolean true\b",
            r"command=49.: int -5817877081768721676\b",
            r"command=50.: boolean true\b",
            r"command=51.: int -7793829335365542153\b",
            r"command=52.: int -?\d+\b",
            r"command=53.: boolean true\b",
            r"command=65.: int 65\b",
            r"command=74.: int 74\b",
            r"command=83.: int 83\b",
            r"command=86.: int 86\b",
            r"command=93.: int 93\b",
            r"command=95.: int 0\b",
            r"command=96.: int 1\b",
            r"command=97.: int 0\b",
            r"command=98.: int 5432\b",
            r"command=99.: int -9223372036854775808\b",
            r"command=100.: int 9223372036854775807\b",
            r"command=101.: boolean true\b",
            r"command=102.: boolean true\b",
            r"command=103.: boolean true\b",
            r"command=104.: boolean true\b",
            r"command=105.: boolean true\b",
            r"command=109.: boolean true\b",
            r"command=110.: boolean true\b",
            r"command=111.: boolean true\b",
            r"command=113.: boolean true\b",
        ],
        files: &[("001_pgbench_expressions", EXPRESSIONS)],
        ..Case::default()
    }
    .check(bench_db());
}

/// Two runs with the same seed insert the same four random values.
#[test]
fn random_seeded() {
    let db = bench_db();
    db.psql(
        "CREATE UNLOGGED TABLE seeded_random(seed INT8 NOT NULL, rand TEXT NOT NULL, \
         val INTEGER NOT NULL);",
    );
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let seed = nanos % 1_000_000_000;
    let opts = format!("--random-seed={seed} -t 1");
    let seed_re = format!(r"setting random seed to {seed}\b");
    let script = "-- test random functions\n\
        \\set ur random(1000, 1999)\n\
        \\set er random_exponential(2000, 2999, 2.0)\n\
        \\set gr random_gaussian(3000, 3999, 3.0)\n\
        \\set zr random_zipfian(4000, 4999, 1.5)\n\
        INSERT INTO seeded_random(seed, rand, val) VALUES\n\
        \x20 (:random_seed, 'uniform', :ur),\n\
        \x20 (:random_seed, 'exponential', :er),\n\
        \x20 (:random_seed, 'gaussian', :gr),\n\
        \x20 (:random_seed, 'zipfian', :zr);\n";
    for i in 1..=2 {
        let file = format!("001_pgbench_random_seed_{i}");
        Case {
            name: "random seeded",
            opts: &opts,
            stdout: &["processed: 1/1"],
            stderr: &[&seed_re],
            files: &[(&file, script)],
            ..Case::default()
        }
        .check(db);
    }
    let out =
        db.psql("SELECT seed, rand, val, COUNT(*) FROM seeded_random GROUP BY seed, rand, val");
    db.psql("DROP TABLE seeded_random;");
    for (kind, first) in [
        ("uniform", 1),
        ("exponential", 2),
        ("gaussian", 3),
        ("zipfian", 4),
    ] {
        assert_like(
            &out,
            &[&format!(r"\b{seed}\|{kind}\|{first}\d\d\d\|2")],
            "seeded_random count",
        );
    }
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

mod gset {
    use super::*;

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
}

mod pipeline {
    use super::*;

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
}

/// A script that fails, run once with pgbench's error-case options: status 1 means it
/// failed to load (nothing on stdout), 2 that its client aborted (`processed: 0/1`).
fn script_error(name: &str, status: i32, stderr: &[&str], script: impl AsRef<str>) {
    assert_ne!(status, 0, "invalid expected status for test \"{name}\"");
    let file = format!("001_pgbench_error_{name}");
    Case {
        name: &format!("pgbench script error: {name}"),
        opts: "-n -t 1 -Dfoo=bla -Dnull=null -Dtrue=true -Done=1 -Dzero=0.0 \
               -Dbadtrue=trueXXX -Dmaxint=9223372036854775807 \
               -Dminint=-9223372036854775808 -M prepared",
        status,
        stdout: &[if status == 1 { "^$" } else { "processed: 0/1" }],
        stderr,
        files: &[(&file, script.as_ref())],
        ..Case::default()
    }
    .check(bench_db());
}

macro_rules! script_errors {
    ($($name:ident: $status:expr, [$($re:expr),* $(,)?], $script:expr;)*) => {
        $(
            #[test]
            fn $name() {
                super::script_error(
                    stringify!($name),
                    $status,
                    &[$($re),*],
                    $script,
                );
            }
        )*
    };
}

mod script_error {
    fn too_many_sql_args() -> String {
        format!(
            "-- MAX_ARGS=256 for prepared\n\\set i 0\nSELECT LEAST({})",
            vec![":i"; 256].join(", ")
        )
    }

    fn too_many_shell_args() -> String {
        format!(
            "-- 256 arguments to \\shell\n\\shell echo {}",
            vec!["arg"; 255].join(" ")
        )
    }

    script_errors! {
        // SQL
        sql_syntax_error: 2,
            [r"ERROR:  syntax error", r"prepared statement .* does not exist"],
            "-- SQL syntax error\n    SELECT 1 + ;\n";
        sql_too_many_args: 1, [r"statement has too many arguments.*\b255\b"], too_many_sql_args();
        // SHELL
        shell_bad_command: 2, [r"\(shell\) .* meta-command failed"], r"\shell no-such-command";
        shell_undefined_variable: 2, [r#"undefined variable ":nosuchvariable""#],
            "-- undefined variable in shell\n\\shell echo ::foo :nosuchvariable\n";
        shell_missing_command: 1, [r"missing command "], r"\shell";
        shell_too_many_args: 1, [r#"too many arguments in command "shell""#],
            too_many_shell_args();
        // SET
        set_syntax_error: 1, [r#"syntax error in command "set""#], r"\set i 1 +";
        set_no_such_function: 1, [r"unexpected function name"], r"\set i noSuchFunction()";
        set_invalid_variable_name: 2, [r"invalid variable name"], r"\set . 1";
        set_division_by_zero: 2, [r"division by zero"], r"\set i 1/0";
        set_undefined_variable: 2, [r#"undefined variable "nosuchvariable""#],
            r"\set i :nosuchvariable";
        set_unexpected_char: 1, [r"unexpected character .;."], r"\set i ;";
        set_too_many_args: 2, [r"too many function arguments"],
            r"\set i least(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)";
        set_empty_random_range: 2, [r"empty range given to random"], r"\set i random(5,3)";
        set_random_range_too_large: 2, [r"random range is too large"],
            r"\set i random(:minint, :maxint)";
        set_gaussian_param_too_small: 2, [r"gaussian param.* at least 2"],
            r"\set i random_gaussian(0, 10, 1.0)";
        set_exponential_param_greater_0: 2, [r"exponential parameter must be greater "],
            r"\set i random_exponential(0, 10, 0.0)";
        set_zipfian_param_to_1: 2, [r"zipfian parameter must be in range \[1\.001, 1000\]"],
            r"\set i random_zipfian(0, 10, 1)";
        set_zipfian_param_too_large: 2,
            [r"zipfian parameter must be in range \[1\.001, 1000\]"],
            r"\set i random_zipfian(0, 10, 1000000)";
        set_non_numeric_value: 2, [r#"malformed variable "foo" value: "bla""#],
            r"\set i :foo + 1";
        set_no_expression: 1, [r"syntax error"], r"\set i";
        set_missing_argument: 1, [r"(?i)missing argument"], r"\set";
        set_not_a_bool: 2, [r"cannot coerce double to boolean"], r"\set b NOT 0.0";
        set_not_an_int: 2, [r"cannot coerce boolean to int"], r"\set i TRUE + 2";
        set_not_a_double: 2, [r"cannot coerce boolean to double"], r"\set d ln(TRUE)";
        set_case_error: 1, [r#"syntax error in command "set""#],
            r"\set i CASE TRUE THEN 1 ELSE 0 END";
        set_random_error: 2, [r"cannot coerce boolean to int"], r"\set b random(FALSE, TRUE)";
        set_number_of_args_mismatch: 1, [r"unexpected number of arguments"],
            r"\set d ln(1.0, 2.0))";
        set_at_least_one_arg: 1, [r"at least one argument expected"], r"\set i greatest())";
        // SET: arithmetic overflow detection
        set_double_to_int_overflow: 2, [r"double to int overflow for 100"], r"\set i int(1E32)";
        set_bigint_add_overflow: 2, [r"int add out"], r"\set i (1<<62) + (1<<62)";
        set_bigint_sub_overflow: 2, [r"int sub out"], r"\set i 0 - (1<<62) - (1<<62) - (1<<62)";
        set_bigint_mul_overflow: 2, [r"int mul out"], r"\set i 2 * (1<<62)";
        set_bigint_div_out_of_range: 2, [r"bigint div out of range"], r"\set i :minint / -1";
        // SETSHELL
        setshell_not_an_int: 2, [r"command must return an integer"], r"\setshell i echo -n one";
        setshell_missing_arg: 1, [r"missing argument "], r"\setshell var";
        setshell_no_such_command: 2, [r"could not read result "],
            r"\setshell var no-such-command";
        // SLEEP
        sleep_undefined_variable: 2, [r"sleep: undefined variable"], r"\sleep :nosuchvariable";
        sleep_too_many_args: 1, [r"too many arguments"], r"\sleep too many args";
        sleep_missing_arg: 1, [r"missing argument", r"\\sleep"], r"\sleep";
        sleep_unknown_unit: 1, [r"unrecognized time unit"], r"\sleep 1 week";
        // MISC
        misc_invalid_backslash_command: 1, [r#"invalid command .* "nosuchcommand""#],
            r"\nosuchcommand";
        misc_empty_script: 1, [r"empty command list for script"], "";
        bad_boolean: 2, [r"malformed variable.*trueXXX"], r"\set b :badtrue or true";
        invalid_permute_size: 2, [r"permute size parameter must be greater than zero"],
            r"\set i permute(0, 0)";
        // GSET
        gset_no_row: 2, [r"expected one row, got 0\b"], r"SELECT WHERE FALSE \gset";
        gset_alone: 1, [r"gset must follow an SQL command"], r"\gset";
        gset_no_sql: 1, [r"gset must follow an SQL command"], "\\set i +1\n\\gset";
        gset_too_many_arguments: 1, [r"too many arguments"], r"SELECT 1 \gset a b";
        gset_after_gset: 1, [r"gset must follow an SQL command"], "SELECT 1 AS i \\gset\n\\gset";
        gset_non_select: 2, [r"expected one row, got 0"],
            r"DROP TABLE IF EXISTS no_such_table \gset";
        gset_bad_default_name: 2, [r"error storing into variable \?column\?"],
            r"SELECT 1 \gset";
        gset_bad_name: 2, [r"error storing into variable bad name!"],
            r#"SELECT 1 AS "bad name!" \gset"#;
    }
}

mod throttling {
    use super::*;

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
}

mod logs {
    use super::*;

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

/// The retry cases watch pg_locks for advisory-lock waiters of any database, so they
/// must not run at the same time.
static ADVISORY_LOCKS: Mutex<()> = Mutex::new(());

fn retry_db(name: &str) -> Db {
    let db = fresh_db(name);
    db.psql(
        "CREATE UNLOGGED TABLE first_client_table (value integer); \
         CREATE UNLOGGED TABLE xy (x integer, y integer); \
         INSERT INTO xy VALUES (1, 2);",
    );
    db
}

const SERIALIZATION_SCRIPT: &str = r#"
\set delta random(-5000, 5000)

-- The second client waits here until the first one has started its update.
SELECT pg_advisory_lock(0);

BEGIN;
UPDATE xy SET y = y + :delta WHERE x = 1 AND pg_advisory_lock(1) IS NOT NULL;

-- The first client (the table is still empty) lets the second one go, waits until
-- it blocks on the same row, and commits: the second gets a serialization failure
-- and sees a non-empty table when it tries again.
DO $$
DECLARE
  exists boolean;
  waiters integer;
BEGIN
  SELECT EXISTS (SELECT * FROM first_client_table) INTO STRICT exists;
  IF NOT exists THEN
	PERFORM pg_advisory_unlock(0);
	LOOP
	  SELECT COUNT(*) INTO STRICT waiters FROM pg_locks WHERE
	  locktype = 'advisory' AND objsubid = 1 AND
	  ((classid::bigint << 32) | objid::bigint = 1::bigint) AND NOT granted;
	  IF waiters = 1 THEN
		INSERT INTO first_client_table VALUES (1);
		EXIT;
	  END IF;
	END LOOP;
  END IF;
END$$;

COMMIT;
SELECT pg_advisory_unlock_all();
"#;

/// A serialization failure is retried with the same random value of `delta`.
#[test]
fn concurrent_update_with_retrying() {
    let _serial = ADVISORY_LOCKS.lock().unwrap_or_else(|e| e.into_inner());
    let db = retry_db("tap_serialization");
    let err_pattern = r"(?s)(client (0|1) sending UPDATE xy SET y = y \+ -?\d+\b).*client \2 got an error in command 3 \(SQL\) of script 0; ERROR:  could not serialize access due to concurrent update\b.*\1";
    Case {
        name: "concurrent update with retrying",
        opts: "-n -c 2 -t 1 -d --verbose-errors --max-tries 2",
        stdout: &[
            r"processed: 2/2\b",
            r"number of transactions retried: 1\b",
            r"total number of retries: 1\b",
        ],
        stderr: &[err_pattern],
        files: &[("001_pgbench_serialization", SERIALIZATION_SCRIPT)],
        env: &[(
            "PGOPTIONS",
            r"-c default_transaction_isolation=repeatable\ read",
        )],
        ..Case::default()
    }
    .check(&db);
}

const DEADLOCK_SCRIPT: &str = r#"
-- The first client takes lock 2; the second takes lock 3 and waits for 2; the first
-- then waits for 3, and one of them gets a deadlock error. The other one holds a
-- lock from the start, so it releases everything before the failed one tries again.

-- What the failed client still holds from its failed try.
SELECT pg_advisory_unlock_all();

-- The second client and the retrying one stop here.
SELECT pg_advisory_lock(0);
SELECT pg_advisory_lock(1);

-- The first client leaves a row behind, so the others know they are not first.
DO $$
DECLARE
  exists boolean;
BEGIN
  SELECT EXISTS (SELECT * FROM first_client_table) INTO STRICT exists;
  IF exists THEN
	PERFORM pg_advisory_unlock(0);
	PERFORM pg_advisory_lock(3);
	-- The second client can get a deadlock here.
	PERFORM pg_advisory_lock(2);
  ELSE
	INSERT INTO first_client_table VALUES (1);
	PERFORM pg_advisory_lock(2);
  END IF;
END$$;

DO $$
DECLARE
  num_rows integer;
  waiters integer;
BEGIN
  SELECT COUNT(*) FROM first_client_table INTO STRICT num_rows;
  IF num_rows = 1 THEN
	INSERT INTO first_client_table VALUES (2);
	-- Let the second client begin, and wait until it is ready for the deadlock.
	PERFORM pg_advisory_unlock(0);
	PERFORM pg_advisory_unlock(1);
	LOOP
	  SELECT COUNT(*) INTO STRICT waiters FROM pg_locks WHERE
	  locktype = 'advisory' AND
	  objsubid = 1 AND
	  ((classid::bigint << 32) | objid::bigint = 2::bigint) AND
	  NOT granted;
	  IF waiters = 1 THEN
		EXIT;
	  END IF;
	END LOOP;
	PERFORM pg_advisory_lock(0);
  END IF;
END$$;

-- The first client can get a deadlock here.
SELECT pg_advisory_lock(3);

SELECT pg_advisory_unlock_all();
"#;

#[test]
fn deadlock_with_retrying() {
    let _serial = ADVISORY_LOCKS.lock().unwrap_or_else(|e| e.into_inner());
    let db = retry_db("tap_deadlock");
    Case {
        name: "deadlock with retrying",
        opts: "-n -c 2 -t 1 --max-tries 2 --verbose-errors",
        stdout: &[
            r"processed: 2/2\b",
            r"number of transactions retried: 1\b",
            r"total number of retries: 1\b",
        ],
        stderr: &[
            r"client (0|1) got an error in command (3|5) \(SQL\) of script 0; ERROR:  deadlock detected\b",
        ],
        files: &[("001_pgbench_deadlock", DEADLOCK_SCRIPT)],
        env: &[(
            "PGOPTIONS",
            r"-c default_transaction_isolation=read\ committed",
        )],
        ..Case::default()
    }
    .check(&db);
}
