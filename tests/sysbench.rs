//! `--workload=oltp_*` beside real sysbench 1.0 (its `pgsql` driver) on one throwaway
//! cluster of this module's own, with `pg_stat_statements` loaded: the same schema and
//! value shapes after `prepare`, the same statements in the same proportions per
//! transaction, the same row counts after a run. Without sysbench installed the tests
//! say "skipped" (and fail under `CI=true`).

use crate::support::{aim, run, Run};
use pgbench_cluster::{Cluster, ClusterOptions};
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::OnceLock;

/// This module's cluster: `pg_stat_statements` needs `shared_preload_libraries`.
fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        Cluster::start(ClusterOptions {
            config: vec![
                (
                    "shared_preload_libraries".into(),
                    "pg_stat_statements".into(),
                ),
                ("pg_stat_statements.max".into(), "10000".into()),
                ("autovacuum".into(), "off".into()),
            ],
            ..Default::default()
        })
        .expect("start a cluster with pg_stat_statements")
    })
}

/// Whether sysbench is installed; under `CI=true` its absence fails the test.
fn have_sysbench(test: &str) -> bool {
    let found = Command::new("sysbench")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "sysbench is not installed (Debian: apt-get install sysbench)"
        );
        eprintln!("{test}: skipped: sysbench is not installed");
    }
    found
}

struct Db {
    name: String,
}

impl Db {
    fn fresh(name: &str) -> Db {
        let name = cluster().fresh_database(name).expect("create database");
        let db = Db { name };
        db.psql("create extension pg_stat_statements");
        db
    }

    fn psql(&self, sql: &str) -> String {
        cluster()
            .psql(&self.name, sql)
            .unwrap_or_else(|e| panic!("psql failed: {e}"))
    }

    fn value(&self, sql: &str) -> String {
        self.psql(sql).trim().to_string()
    }

    fn ours(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
        aim(&mut cmd, cluster(), &self.name);
        cmd
    }

    /// sysbench with its pgsql driver aimed at this database.
    fn sysbench(&self, test: &str, options: &[&str], command: &str) -> Run {
        let c = cluster();
        let mut cmd = Command::new("sysbench");
        cmd.arg(test)
            .arg("--db-driver=pgsql")
            .arg(format!("--pgsql-host={}", c.socket_dir().display()))
            .arg(format!("--pgsql-port={}", c.port()))
            .arg(format!("--pgsql-user={}", c.user()))
            .arg(format!("--pgsql-db={}", self.name))
            .args(options)
            .arg(command);
        let out = run(&mut cmd);
        assert_eq!(
            out.code, 0,
            "sysbench {command}: {}{}",
            out.stdout, out.stderr
        );
        out
    }

    /// Statement → calls since the last reset, with table numbers and layout folded
    /// (`sbtest3` → `sbtestN`, runs of whitespace → one space).
    fn statements(&self) -> BTreeMap<String, i64> {
        let rows = self.psql(&format!(
            "select calls, query from pg_stat_statements \
             where dbid = (select oid from pg_database where datname = '{}')",
            self.name
        ));
        let mut calls = BTreeMap::new();
        for row in rows.lines() {
            let Some((n, query)) = row.split_once('|') else {
                continue;
            };
            *calls.entry(fold(query)).or_insert(0) += n.trim().parse::<i64>().unwrap_or(0);
        }
        calls
    }

    fn reset_statements(&self) {
        // this database's only: the other tests' runs go on meanwhile
        self.psql(&format!(
            "select pg_stat_statements_reset(0, (select oid from pg_database where datname = '{}'), 0)",
            self.name
        ));
    }
}

/// `sbtest12` → `sbtestN`, whitespace runs → one space, no trailing `;`.
fn fold(query: &str) -> String {
    let words: Vec<&str> = query.split_whitespace().collect();
    let mut text = words.join(" ");
    while text.ends_with(';') {
        text.pop();
    }
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("sbtest") {
        out.push_str(&rest[..at + 6]);
        rest = rest[at + 6..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push('N');
    }
    out.push_str(rest);
    out
}

/// The number after `label` on its line of a report.
fn figure(report: &str, label: &str) -> f64 {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} line in:\n{report}"));
    line.trim_start()[label.len()..]
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number in {line:?}"))
}

/// What the schema of the sbtest tables is: columns, defaults, indexes, sequences.
fn schema(db: &Db) -> String {
    db.psql(
        "select table_name, column_name, data_type, character_maximum_length, is_nullable, \
                column_default \
         from information_schema.columns where table_name like 'sbtest%' \
         order by table_name, ordinal_position; \
         select indexname, indexdef from pg_indexes where tablename like 'sbtest%' \
         order by indexname; \
         select sequencename, data_type, last_value from pg_sequences \
         where sequencename like 'sbtest%' order by 1;",
    )
}

/// The shapes of the values: ids 1..N, `k`'s range and its share in the middle 1%
/// (sysbench's `special` puts 75% there), `c` and `pad` as 11-digit groups.
fn shapes(db: &Db, table: u32, size: u32) -> (String, f64) {
    let lo = size / 2 - size / 200;
    let hi = size / 2 + size / 200;
    let exact = db.value(&format!(
        "select count(*), min(id), max(id), count(distinct id), min(k) >= 1, max(k) <= {size}, \
                bool_and(c::text ~ '^[0-9]{{11}}(-[0-9]{{11}}){{9}}$'), \
                bool_and(pad::text ~ '^[0-9]{{11}}(-[0-9]{{11}}){{4}}$'), \
                bool_and(octet_length(c::text) = 119 and octet_length(pad::text) = 59) \
         from sbtest{table}"
    ));
    let middle: f64 = db
        .value(&format!(
            "select avg((k between {lo} and {hi})::int) from sbtest{table}"
        ))
        .parse()
        .unwrap();
    (exact, middle)
}

#[test]
fn prepare_gives_sysbench_schema_and_value_shapes() {
    if !have_sysbench("prepare_gives_sysbench_schema_and_value_shapes") {
        return;
    }
    let (size, tables) = (20_000u32, 3u32);
    let theirs = Db::fresh("sysbench prepare theirs");
    let sizes = [format!("--tables={tables}"), format!("--table-size={size}")];
    let sizes: Vec<&str> = sizes.iter().map(String::as_str).collect();
    theirs.sysbench("oltp_read_write", &sizes, "prepare");
    let ours = Db::fresh("sysbench prepare ours");
    let out = run(ours.ours().args([
        "-i",
        "--workload=oltp_read_write",
        "-D",
        &format!("tables={tables}"),
        "-D",
        &format!("table_size={size}"),
        "-j",
        "2",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out
        .stdout
        .contains("Creating a secondary index on 'sbtest3'..."));
    assert_eq!(schema(&ours), schema(&theirs));
    for table in 1..=tables {
        let (exact_theirs, middle_theirs) = shapes(&theirs, table, size);
        let (exact_ours, middle_ours) = shapes(&ours, table, size);
        assert_eq!(exact_ours, format!("{size}|1|{size}|{size}|t|t|t|t|t"));
        assert_eq!(exact_ours, exact_theirs);
        assert!(
            (middle_ours - middle_theirs).abs() < 0.02,
            "k in the middle 1%: ours {middle_ours}, sysbench {middle_theirs}"
        );
    }
    // no auto_inc: a plain integer key, no sequence; no secondary index
    let plain = Db::fresh("sysbench prepare plain");
    let out = run(plain.ours().args([
        "-i",
        "--workload=oltp_point_select",
        "-D",
        "auto_inc=off",
        "-D",
        "create_secondary=off",
        "-D",
        "table_size=100",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let plain_theirs = Db::fresh("sysbench prepare plain theirs");
    plain_theirs.sysbench(
        "oltp_point_select",
        &[
            "--auto-inc=off",
            "--create-secondary=off",
            "--table-size=100",
        ],
        "prepare",
    );
    assert_eq!(schema(&plain), schema(&plain_theirs));
}

/// One side-by-side run: both databases prepared by sysbench, a 15 s run of each tool
/// with the same options; every statement's calls per transaction within 1%.
fn same_statements(name: &str, test: &str, options: &[(&str, &str)], simple: bool, clients: usize) {
    let sysbench_options: Vec<String> = options
        .iter()
        .map(|(k, v)| format!("--{}={v}", k.replace('_', "-")))
        .chain(["--time=15".to_string(), format!("--threads={clients}")])
        .chain(simple.then(|| "--db-ps-mode=disable".to_string()))
        .collect();
    let sysbench_options: Vec<&str> = sysbench_options.iter().map(String::as_str).collect();
    let theirs = Db::fresh(&format!("{name} theirs"));
    let ours = Db::fresh(&format!("{name} ours"));
    theirs.sysbench(test, &sysbench_options, "prepare");
    ours.sysbench(test, &sysbench_options, "prepare");

    theirs.reset_statements();
    let report = theirs.sysbench(test, &sysbench_options, "run").stdout;
    let their_calls = theirs.statements();
    let their_tx = figure(&report, "transactions:");

    ours.reset_statements();
    let mut cmd = ours.ours();
    cmd.arg(format!("--workload={test}"))
        .args(["-T", "15", "-c", &clients.to_string(), "-M"])
        .arg(if simple { "simple" } else { "prepared" });
    for (k, v) in options {
        cmd.arg("-D").arg(format!("{k}={v}"));
    }
    let out = run(&mut cmd);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let our_calls = ours.statements();
    let our_tx = figure(&out.stdout, "number of transactions actually processed:");

    // sysbench's prepared BEGIN/COMMIT are counted once per connection by
    // pg_stat_statements; the other statements per execution.
    // ROLLBACK: after an error both roll back, as often as the errors come.
    // Our checks of the tables before the run (keys, sizes, unused tables) are not
    // the workload's.
    let skip = |q: &str| {
        q == "ROLLBACK"
            || q.contains("pg_stat_statements_reset")
            || q.contains("to_regclass")
            || q.starts_with("select (select max(id) from sbtest")
            || q.contains("pg_table_is_visible")
            || (!simple && (q == "BEGIN" || q == "COMMIT"))
    };
    let per_tx = |calls: &BTreeMap<String, i64>, tx: f64| -> BTreeMap<String, f64> {
        calls
            .iter()
            .filter(|(q, _)| !skip(q))
            .map(|(q, &n)| (q.clone(), n as f64 / tx))
            .collect()
    };
    let (theirs_per_tx, ours_per_tx) = (per_tx(&their_calls, their_tx), per_tx(&our_calls, our_tx));
    assert!(!theirs_per_tx.is_empty());
    assert_eq!(
        theirs_per_tx.keys().collect::<Vec<_>>(),
        ours_per_tx.keys().collect::<Vec<_>>(),
        "statements differ:\nsysbench {theirs_per_tx:#?}\nours {ours_per_tx:#?}"
    );
    for (q, t) in &theirs_per_tx {
        let o = ours_per_tx[q];
        assert!(
            (o - t).abs() <= 0.01 * t,
            "{q}: {o} per transaction, sysbench {t}\nsysbench {theirs_per_tx:#?}\nours {ours_per_tx:#?}"
        );
    }
    summary_like_sysbench(&report, &out.stdout);
    // the same rows left: delete+insert pairs keep each table's count
    let count = "select sum(n) from (select count(*) n from sbtest1) t";
    assert_eq!(ours.value(count), theirs.value(count));
}

/// sysbench prepares every table's statements when its threads start
/// (`oltp_common.lua`'s `prepare_statements`, before "Threads started!"), so no
/// measured transaction waits for a Prepare. Ours too: each client prepares all its
/// script's statements when it connects, before its first transaction, where
/// pgbench's `-M prepared` prepares each at its first execution (at 1,000 clients on
/// 25 tables that put 2.5 extra round trips and a parse in every transaction of a
/// 20 s run: issue #49).
#[test]
fn statements_are_prepared_when_a_client_connects() {
    let db = Db::fresh("sb prepared at connect");
    let tables = ["-D", "tables=3", "-D", "table_size=1000"];
    let out = run(db
        .ours()
        .args(["-i", "--workload=oltp_write_only"])
        .args(tables));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = run(db
        .ours()
        .args(["--workload=oltp_write_only", "-c", "2", "-t", "3", "-d"])
        .args(tables));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // Two clients deleting and inserting the same ids may collide (a duplicate
    // key, counted as failed as sysbench ignores it): what is checked is when the
    // statements were prepared, not how many transactions succeeded.
    assert!(out.stdout.contains("number of failed transactions: "));
    for client in 0..2 {
        let said: Vec<&str> = out
            .stderr
            .lines()
            .filter_map(|l| l.split_once(&format!("client {client} ")).map(|(_, w)| w))
            .collect();
        let first_sent = said.iter().position(|w| w.starts_with("sending")).unwrap();
        let preparing = |w: &&&str| w.starts_with("preparing");
        // BEGIN, COMMIT, and each table's UPDATE k, UPDATE c, DELETE and INSERT.
        assert_eq!(
            said[..first_sent].iter().filter(preparing).count(),
            2 + 3 * 4
        );
        assert_eq!(
            said[first_sent..].iter().filter(preparing).count(),
            0,
            "{said:#?}"
        );
    }
}

#[test]
fn read_write_sends_sysbench_statements() {
    if have_sysbench("read_write_sends_sysbench_statements") {
        same_statements(
            "sb rw",
            "oltp_read_write",
            &[("tables", "4"), ("table_size", "5000")],
            false,
            2,
        );
    }
}

/// The guide's write-only run: the select counts zeroed, `--rand-type=uniform`.
#[test]
fn write_only_guide_settings_send_sysbench_statements() {
    if have_sysbench("write_only_guide_settings_send_sysbench_statements") {
        same_statements(
            "sb wo",
            "oltp_read_write",
            &[
                ("tables", "3"),
                ("table_size", "5000"),
                ("point_selects", "0"),
                ("simple_ranges", "0"),
                ("sum_ranges", "0"),
                ("order_ranges", "0"),
                ("distinct_ranges", "0"),
                ("rand_type", "uniform"),
            ],
            true,
            1,
        );
    }
}

#[test]
fn special_distribution_sends_sysbench_statements() {
    if have_sysbench("special_distribution_sends_sysbench_statements") {
        same_statements(
            "sb special",
            "oltp_read_only",
            &[
                ("tables", "2"),
                ("table_size", "5000"),
                ("rand_type", "special"),
                ("rand_spec_pct", "5"),
            ],
            false,
            1,
        );
    }
}

#[test]
fn insert_and_delete_leave_sysbench_row_counts() {
    let db = Db::fresh("sb insert rows");
    let prepare = run(db.ours().args([
        "-i",
        "--workload=oltp_insert",
        "-D",
        "tables=2",
        "-D",
        "table_size=1000",
    ]));
    assert_eq!(prepare.code, 0, "{}", prepare.stderr);
    let check = run(db
        .ours()
        .args(["--workload=oltp_insert", "--check", "-D", "tables=2"]));
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert_eq!(
        check.stdout,
        "tables: all 2\nprimary keys: all 2\nsecondary indexes k_N: all 2\nrows: all 2\n"
    );
    let out = run(db.ours().args([
        "--workload=oltp_insert",
        "-D",
        "tables=2",
        "-D",
        "table_size=1000",
        "-t",
        "150",
        "-c",
        "2",
        "-M",
        "prepared",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = "select (select count(*) from sbtest1) + (select count(*) from sbtest2)";
    assert_eq!(db.value(rows), "2300");
    // the summary's figures in the results file: 150 inserts, each a write
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = run(db
        .ours()
        .args(["--workload=oltp_insert", "-D", "tables=2", "-t", "20"])
        .arg(format!("--export-json={}", json.display())));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out
        .stdout
        .contains("        write:                           20\n"));
    // #33: sysbench's tables in place of the scaling factor; without -M, prepared
    // statements, as sysbench's default.
    assert!(
        out.stdout
            .contains("\ntables: 2\ntable size: 10000\nquery mode: prepared\n"),
        "{}",
        out.stdout
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let errors: Vec<String> = crate::export::schema()
        .iter_errors(&doc)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let queries = &doc["run"]["sysbench"]["queries"];
    assert_eq!(
        (&queries["write"], &queries["read"]),
        (&20.into(), &0.into())
    );
    assert_eq!(doc["run"]["sysbench"]["percentile"], 95);
    // oltp_insert without auto_inc: prepared empty, ids unique across clients
    let empty = Db::fresh("sb insert noinc");
    let defines = ["-D", "auto_inc=off", "-D", "tables=1"];
    let prepare = run(empty
        .ours()
        .args(["-i", "--workload=oltp_insert"])
        .args(defines));
    assert_eq!(prepare.code, 0, "{}", prepare.stderr);
    assert_eq!(empty.value("select count(*) from sbtest1"), "0");
    let out = run(empty
        .ours()
        .args(["--workload=oltp_insert", "-t", "200", "-c", "3"])
        .args(defines));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(empty.value("select count(distinct id) from sbtest1"), "600");
    // oltp_delete: each transaction deletes at most one row
    let out = run(db.ours().args([
        "--workload=oltp_delete",
        "-D",
        "tables=2",
        "-D",
        "table_size=1000",
        "-t",
        "100",
        "-D",
        "rand_type=uniform",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let left: i64 = db.value(rows).parse().unwrap();
    assert!((2200..2300).contains(&left), "{left}");
}

/// #33: the command the message suggests names the database and connection options
/// given (it dropped them), and the schema options the prepare needs.
#[test]
fn tables_not_prepared_say_how_to_prepare_them() {
    let db = Db::fresh("sb not prepared");
    let port = cluster().port().to_string();
    let hint = format!(
        "prepare the tables with \"pgbench-rs -i --workload=oltp_read_only -D tables=3 \
         -D table_size=10000 -D auto_inc=off -p {port} {}\"",
        db.name
    );
    let defines = ["-D", "tables=3", "-D", "auto_inc=off"];
    let out = run(db
        .ours()
        .args(["--workload=oltp_read_only", "-t", "1"])
        .args(defines)
        .args(["-p", &port, &db.name]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.ends_with(&format!(
            "error: table \"sbtest1\" of workload oltp_read_only does not exist; {hint}\n"
        )),
        "{}",
        out.stderr
    );
    let out = run(db
        .ours()
        .args(["--workload=oltp_read_only", "--check"])
        .args(defines)
        .args(["-p", &port, &db.name]));
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        format!("tables FAIL: 3 of 3 missing: sbtest1, sbtest2, sbtest3\n{hint}\n")
    );
}

/// A run told another table size than the tables were prepared with would draw ids of
/// rows that are not there: refused, and `--check` says so (it passed before).
#[test]
fn tables_prepared_smaller_than_the_run_is_told_are_refused() {
    let db = Db::fresh("sb short tables");
    let prepare = run(db.ours().args([
        "-i",
        "--workload=oltp_read_write",
        "-D",
        "tables=2",
        "-D",
        "table_size=1000",
    ]));
    assert_eq!(prepare.code, 0, "{}", prepare.stderr);
    let told = ["-D", "tables=2", "-D", "table_size=50000"];
    let out = run(db
        .ours()
        .args(["--workload=oltp_read_write", "-t", "5"])
        .args(told));
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "error: table \"sbtest1\" of workload oltp_read_write holds rows up to id 1000, \
             but the run is told -D table_size=50000 (2 of 2 tables are short); prepare the \
             tables with \"pgbench-rs -i --workload=oltp_read_write -D tables=2 -D table_size=50000"
        ),
        "{}",
        out.stderr
    );
    let check = run(db
        .ours()
        .args(["--workload=oltp_read_write", "--check"])
        .args(told));
    assert_eq!(check.code, 1, "{}", check.stdout);
    assert!(
        check.stdout.contains(
            "\ntable size FAIL: 2 of 2 with fewer than table_size=50000 rows (their largest id \
             is below it): sbtest1, sbtest2\n"
        ),
        "{}",
        check.stdout
    );
    // Told the size they have, both go ahead.
    let right = ["-D", "tables=2", "-D", "table_size=1000"];
    let check = run(db
        .ours()
        .args(["--workload=oltp_read_write", "--check"])
        .args(right));
    assert_eq!(check.code, 0, "{}", check.stdout);
    assert!(
        check.stdout.ends_with("\ntable size: all 2\n"),
        "{}",
        check.stdout
    );
    let out = run(db
        .ours()
        .args(["--workload=oltp_read_write", "-t", "5"])
        .args(right));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    // Told fewer tables and rows than were prepared (no -D at all: sysbench's one
    // table of 10,000 rows would be 1 table of the 1,000 here; 500 rows is fewer), the
    // run goes ahead on what it is told and says what it leaves unused.
    let out = run(db
        .ours()
        .args(["--workload=oltp_read_write", "-t", "5"])
        .args(["-D", "tables=1", "-D", "table_size=500"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "warning: 1 more sbtest table is prepared than the run uses: it uses 1 \
             (-D tables=1, sysbench's --tables); give -D tables as prepared to use them\n"
        ) && out.stderr.contains(
            "warning: table \"sbtest1\" holds rows up to id 1000, but the run draws ids up \
             to 500 (-D table_size=500, sysbench's --table-size)"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn unknown_workload_option_names_the_known_ones() {
    let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs")).args([
        "--workload=oltp_point_select",
        "-D",
        "oltp_tables_count=4",
    ]));
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains(
        "unknown option \"oltp_tables_count\" for workload oltp_point_select; its options: table_size, range_size, tables,"
    ), "{}", out.stderr);
    let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs")).arg("--workload=tpcb"));
    assert_eq!(out.code, 1);
    assert!(out
        .stderr
        .contains("unknown workload \"tpcb\"; known workloads: oltp_read_write,"));
}

/// Our summary has sysbench's layout (each line's words, and the column where its
/// first number starts) and its queries by kind per transaction within 2%.
fn summary_like_sysbench(theirs: &str, ours: &str) {
    let block = |text: &str| -> Vec<String> {
        let start = text
            .find("SQL statistics:")
            .expect("an SQL statistics block");
        let end = text.find("Threads fairness:").unwrap_or(text.len());
        let (counts, latency) =
            text[start..end].split_at(text[start..end].find("Latency").unwrap());
        // left-aligned values: where the value starts; right-aligned ones: where it ends
        let left = counts
            .lines()
            .map(|l| match l.find(|c: char| c.is_ascii_digit()) {
                Some(at) => format!("{}#{at}", &l[..at]),
                None => l.to_string(),
            });
        let right = latency.lines().map(|l| match l.rfind(':') {
            Some(at) => format!("{}#{}", &l[..=at], l.len()),
            None => l.to_string(),
        });
        left.chain(right).collect()
    };
    assert_eq!(
        block(ours),
        block(theirs),
        "ours:\n{ours}\nsysbench:\n{theirs}"
    );
    let tx = |text: &str| figure(text, "transactions:");
    for kind in ["read:", "write:", "other:"] {
        let (t, o) = (
            figure(theirs, kind) / tx(theirs),
            figure(ours, kind) / tx(ours),
        );
        assert!(
            (o - t).abs() <= 0.02 * t.max(0.01),
            "{kind} {o} per transaction, sysbench {t}"
        );
    }
}

/// `pgbench-report import` reads real sysbench's output; `compare` sets it beside a
/// `--workload` run's results file.
#[test]
fn sysbench_output_imports_and_compares() {
    if !have_sysbench("sysbench_output_imports_and_compares") {
        return;
    }
    let db = Db::fresh("sb import");
    let options = ["--tables=2", "--table-size=2000", "--time=3", "--threads=2"];
    db.sysbench("oltp_read_only", &options, "prepare");
    let report = db.sysbench("oltp_read_only", &options, "run").stdout;
    let dir = tempfile::tempdir().unwrap();
    let (theirs, imported, ours) = (
        dir.path().join("sysbench.txt"),
        dir.path().join("sysbench.json"),
        dir.path().join("ours.json"),
    );
    std::fs::write(&theirs, &report).unwrap();
    let report_cmd = || Command::new(env!("CARGO_BIN_EXE_pgbench-report"));
    let out = run(report_cmd()
        .args(["import", "--report"])
        .arg(&theirs)
        .arg("-o")
        .arg(&imported));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let shown = run(report_cmd().arg("show").arg(&imported));
    let tx = figure(&report, "transactions:") as i64;
    assert!(
        shown
            .stdout
            .contains(&format!("number of transactions actually processed: {tx}")),
        "{}",
        shown.stdout
    );
    let out = run(db
        .ours()
        .args([
            "--workload=oltp_read_only",
            "-D",
            "tables=2",
            "-D",
            "table_size=2000",
        ])
        .args(["-T", "3", "-c", "2", "-M", "prepared"])
        .arg(format!("--export-json={}", ours.display())));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(report_cmd().arg("compare").arg(&imported).arg(&ours));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.starts_with("A: sysbench.json\nB: ours.json\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.lines().any(|l| l.starts_with("tps ")),
        "{}",
        out.stdout
    );
}
