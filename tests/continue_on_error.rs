//! pgbench 19's `--continue-on-error` on a script whose inserts hit unique violations:
//! the report, per-script and per-command lines, the `-l` lines and aggregates as
//! pgbench 19's source (`printResults`, `doLog`, `getResultString`) writes them. No
//! pgbench 19 binary exists here, so the expected text is built from those rules and
//! the counts the run's own log records.

use crate::support::{fresh_db, normalize, run, script_file, Db};

/// Five ids for 100 inserts: 5 succeed, 95 fail with 23505 (whatever the order).
const INSERTS: &str = "\\set id random(1, 5)\nINSERT INTO cu VALUES (:id);\n";

fn db_with_table(name: &str) -> Db {
    let db = fresh_db(name);
    db.psql("create table cu(id int primary key)");
    db
}

/// The log lines of a run under `prefix` (every thread's file).
fn log_lines(dir: &tempfile::TempDir) -> Vec<String> {
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("log")
        {
            let text = std::fs::read_to_string(path).unwrap();
            lines.extend(text.lines().map(str::to_string));
        }
    }
    lines
}

fn pct(part: usize, total: usize) -> String {
    format!("{:.3}", 100.0 * part as f64 / total as f64)
}

#[test]
fn unique_violations_are_other_failures_as_pgbench_19_reports_them() {
    let db = db_with_table("coe report");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "ins.sql", INSERTS);
    let prefix = dir.path().join("log").display().to_string();
    let out = run(db.ours().args([
        "-n",
        "-t",
        "50",
        "-c",
        "2",
        "-j",
        "2",
        "--continue-on-error",
        "--failures-detailed",
        "-r",
        "-l",
        "--log-prefix",
        &prefix,
        "-f",
        &script,
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(db.value("select count(*) from cu"), "5");
    // doLog: a failed transaction's line says "other" under --failures-detailed
    let lines = log_lines(&dir);
    assert_eq!(lines.len(), 100);
    let others = lines
        .iter()
        .filter(|l| l.split(' ').nth(2) == Some("other"))
        .count();
    assert_eq!(others, 95, "{lines:#?}");
    let expected = format!(
        "pgbench (<version>)\n\
         transaction type: {script}\n\
         scaling factor: 1\n\
         query mode: simple\n\
         number of clients: 2\n\
         number of threads: 2\n\
         maximum number of tries: 1\n\
         number of transactions per client: 50\n\
         number of transactions actually processed: 5/100\n\
         number of failed transactions: 95 (95.000%)\n\
         number of serialization failures: 0 (0.000%)\n\
         number of deadlock failures: 0 (0.000%)\n\
         number of other failures: 95 (95.000%)\n\
         latency average = N ms (including failures)\n\
         initial connection time = N ms\n\
         tps = N (without initial connection time)\n\
         statement latencies in milliseconds and failures:\n\
         \x20  <latency>           0  \\set id random(1, 5)\n\
         \x20  <latency>          95  INSERT INTO cu VALUES (:id);\n"
    );
    assert_eq!(normalize(&out.stdout), expected);
}

#[test]
fn per_script_lines_and_aggregates_count_other_failures() {
    let db = db_with_table("coe scripts");
    let dir = tempfile::tempdir().unwrap();
    let inserts = script_file(&dir, "ins.sql", INSERTS);
    let selects = script_file(&dir, "sel.sql", "SELECT 1;\n");
    let prefix = dir.path().join("log").display().to_string();
    let base = [
        "-n",
        "-t",
        "40",
        "-c",
        "3",
        "--continue-on-error",
        "--failures-detailed",
        "-l",
        "--log-prefix",
        &prefix,
        "-f",
        &inserts,
        "-f",
        &selects,
        "--random-seed=7",
    ];
    let out = run(db.ours().args(base));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // per script: its transactions, failures and other failures, from the log
    let lines = log_lines(&dir);
    let first: Vec<&String> = lines
        .iter()
        .filter(|l| l.split(' ').nth(3) == Some("0"))
        .collect();
    let failed = first.iter().filter(|l| l.contains(" other ")).count();
    let done = first.len() - failed;
    let script_total = done + failed;
    let all_done = lines.len() - failed;
    let block = format!(
        "SQL script 1: {inserts}\n\
         \x20- weight: 1 (targets 50.0% of total)\n\
         \x20- {done} transactions ({:.1}% of total, tps = N)\n\
         \x20- number of failed transactions: {failed} ({}%)\n\
         \x20- number of serialization failures: 0 (0.000%)\n\
         \x20- number of deadlock failures: 0 (0.000%)\n\
         \x20- number of other failures: {failed} ({}%)\n",
        100.0 * done as f64 / all_done as f64,
        pct(failed, script_total),
        pct(failed, script_total),
    );
    assert!(
        normalize(&out.stdout).contains(&block),
        "{block}\nnot in\n{}",
        normalize(&out.stdout)
    );
    assert!(out
        .stdout
        .contains(" - number of other failures: 0 (0.000%)\n - latency average"));

    // aggregates: pgbench 19's 16 columns, the last the other failures
    db.psql("truncate cu");
    let agg_dir = tempfile::tempdir().unwrap();
    let agg_prefix = agg_dir.path().join("log").display().to_string();
    // (the last, unfinished interval is not written: a timed run of whole intervals)
    let mut args: Vec<&str> = base.to_vec();
    args[9] = &agg_prefix;
    args[1..3].copy_from_slice(&["-T", "3"]);
    args.extend(["--aggregate-interval=1", "-R", "60"]);
    let out = run(db.ours().args(&args));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let agg = log_lines(&agg_dir);
    let columns: Vec<Vec<i64>> = agg
        .iter()
        .map(|l| l.split(' ').map(|w| w.parse().unwrap()).collect())
        .collect();
    assert!(
        columns.len() >= 2 && columns.iter().all(|c| c.len() == 16),
        "{agg:#?}"
    );
    let sum = |i: usize| columns.iter().map(|c| c[i]).sum::<i64>();
    // five ids: at most five inserts succeed, the other inserts are other failures
    assert!(sum(15) > 0 && sum(13) == 0 && sum(14) == 0, "{agg:#?}");
    let processed = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of other failures: "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse::<i64>().ok())
        .unwrap();
    assert!(sum(15) <= processed, "{agg:#?}");
}

#[test]
fn without_failures_detailed_the_failure_is_failed() {
    let db = db_with_table("coe plain");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "ins.sql", INSERTS);
    let prefix = dir.path().join("log").display().to_string();
    let out = run(db.ours().args([
        "-n",
        "-t",
        "20",
        "--continue-on-error",
        "--verbose-errors",
        "-l",
        "--log-prefix",
        &prefix,
        "-f",
        &script,
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // 20 unseeded draws of 5 ids miss one about 6% of the time: each id drawn is
    // inserted once, every other insert fails.
    let done: usize = db.value("select count(*) from cu").parse().unwrap();
    assert!((1..=5).contains(&done), "{done}");
    let failed = 20 - done;
    let processed = format!("number of transactions actually processed: {done}/20\n");
    assert!(out.stdout.contains(&processed), "{}", out.stdout);
    let failures = format!(
        "number of failed transactions: {failed} ({}%)\n",
        pct(failed, 20)
    );
    assert!(out.stdout.contains(&failures), "{}", out.stdout);
    assert!(!out.stdout.contains("other failures"));
    let lines = log_lines(&dir);
    assert_eq!(
        lines.iter().filter(|l| l.contains(" failed ")).count(),
        failed
    );
    assert!(
        out.stderr.contains(
            "client 0 got an error in command 1 (SQL) of script 0; ERROR:  duplicate key value violates unique constraint \"cu_pkey\""
        ),
        "{}",
        out.stderr
    );
    assert!(out
        .stderr
        .contains("client 0 ends the failed transaction (try 1/1)"));

    // without the option, the first unique violation aborts the client, as before
    db.psql("truncate cu; insert into cu values (1), (2), (3), (4), (5)");
    let out = run(db.ours().args(["-n", "-t", "5", "-f", &script]));
    assert_eq!(out.code, 2);
    assert!(out
        .stderr
        .contains("client 0 script 0 aborted in command 1 query 0: ERROR:  duplicate key value"));
}
