//! Ctrl-C during `-i`: like pgbench, the running statement is cancelled ("Cancel
//! request sent"), the load is rolled back, and the run ends with exit status 1 and
//! the server's message, instead of dying mid-COPY. A workload's load cut short
//! (TPC-C's while generating or building keys, a sysbench prepare) is refused by runs
//! and `--check` afterwards.

use crate::support::{fresh_db, LockHolder};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn ctrl_c_cancels_the_load_and_rolls_it_back() {
    let db = fresh_db("interrupt_init");
    let child = db
        .ours()
        .args(["-i", "-s", "200"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until generation is under way (the first progress line), then interrupt.
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        sent.elapsed() < Duration::from_secs(30),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Cancel request sent\n"), "{stderr}");
    assert!(
        stderr.contains("canceling statement due to user request"),
        "{stderr}"
    );
    // The load was one transaction: nothing of it is left.
    assert_eq!(db.value("select count(*) from pgbench_accounts"), "0");
}

/// Starts `pgbench-rs ARGS` with its output piped.
fn spawn_ours(db: &crate::support::Db, args: &[&str]) -> std::process::Child {
    db.ours()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Backends of pgbench-rs's clients still connected to `db`, waiting up to 10 s for
/// them to go.
fn our_backends_left(db: &crate::support::Db) -> String {
    let sql = "select count(*) from pg_stat_activity \
               where application_name = 'pgbench-rs' and datname = current_database() \
               and pid <> pg_backend_pid()";
    db.value_within(sql, "0", Duration::from_secs(10))
}

/// Issue #15: stock pgbench dies on Ctrl-C without a report and leaves its backends
/// running their statements; pgbench-rs ends the run as if its time were up.
#[test]
fn sigint_and_sigterm_end_the_run_with_its_report_and_leave_no_backend_running() {
    let db = fresh_db("interrupt_run");
    let dir = tempfile::tempdir().unwrap();
    let script = crate::support::script_file(&dir, "slow.sql", "SELECT pg_sleep(0.3);\n");
    for (sig, code, word) in [("-INT", 130, "SIGINT"), ("-TERM", 143, "SIGTERM")] {
        let child = spawn_ours(
            &db,
            &["-n", "-c", "4", "-j", "2", "-T", "60", "-f", &script],
        );
        std::thread::sleep(Duration::from_millis(2500));
        let sent = Instant::now();
        signal(child.id(), sig);
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "took {:?}",
            sent.elapsed()
        );
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(stdout.contains("duration: 60 s\n"), "{stdout}");
        let processed: i64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count in {stdout}"));
        assert!(processed >= 4, "{stdout}");
        assert!(stdout.contains("\ntps = "), "{stdout}");
        assert!(
            stderr.contains(&format!(
                "warning: run {}",
                if word == "SIGINT" {
                    "interrupted by SIGINT"
                } else {
                    "terminated by SIGTERM"
                }
            )),
            "{stderr}"
        );
        assert!(stderr.contains("unfinished transaction"), "{stderr}");
        assert!(!stderr.contains("aborted"), "{stderr}");
        assert_eq!(our_backends_left(&db), "0");
    }
}

/// Issue #15: a backend that stops answering (SIGSTOP here; a lock wait or a network
/// partition alike) held the run past -T forever. Now its transaction is cancelled
/// after the grace, its connection closed, and the report printed.
#[test]
fn a_stopped_backend_does_not_hold_a_timed_run() {
    let db = fresh_db("interrupt_stuck");
    let dir = tempfile::tempdir().unwrap();
    let script = crate::support::script_file(&dir, "one.sql", "SELECT 1;\n");
    let child = spawn_ours(&db, &["-n", "-c", "2", "-j", "2", "-T", "3", "-f", &script]);
    std::thread::sleep(Duration::from_millis(1000));
    let pid = db.value(
        "select pid from pg_stat_activity where application_name = 'pgbench-rs' \
         and datname = current_database() and pid <> pg_backend_pid() order by pid limit 1",
    );
    signal(pid.parse().unwrap(), "-STOP");
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    signal(pid.parse().unwrap(), "-CONT");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // 2 s left of -T, then the 5 s grace and 2 s for the cancel to work.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    // Cut transactions are a run that did not complete (issue #28).
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stdout.contains("duration: 3 s\n"), "{stdout}");
    assert!(stdout.contains("\ntps = "), "{stdout}");
    assert!(
        stderr.contains("transactions still running 5 s after the end of the run were cancelled"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 unfinished transaction was not counted"),
        "{stderr}"
    );
}

/// Issue #15: Ctrl-C during a parallel load left the pieces loaded so far committed
/// (a third of pgbench_accounts, with pgbench_branches saying scale 20). Now the
/// tables are emptied again, as a one-session load leaves them, and the run says so.
#[test]
fn ctrl_c_during_a_parallel_load_leaves_no_partial_data() {
    let db = fresh_db("interrupt_parallel_init");
    let mut child = db
        .ours()
        .args(["-i", "-s", "40", "-j", "4"])
        .env("PGBENCH_RS_PARALLEL_INIT", "always")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // In the middle of the load (a fixed sleep once came after its end, in the vacuum).
    let watch = crate::support::StderrWatch::new(&mut child);
    watch.wait_for(" tuples (", Duration::from_secs(60));
    signal(child.id(), "-INT");
    let out = child.wait_with_output().unwrap();
    let stderr = watch.finish();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the load did not complete: the pgbench tables were emptied again\n"),
        "{stderr}"
    );
    for table in ["pgbench_accounts", "pgbench_branches", "pgbench_tellers"] {
        assert_eq!(
            db.value(&format!("select count(*) from {table}")),
            "0",
            "{table}"
        );
    }
}

/// Where the server shares this machine's cores, `-j` loads over one session (with
/// COPY FREEZE), which measured faster there, and says so.
#[test]
fn a_parallel_load_falls_back_to_one_session_where_it_cannot_pay() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let db = fresh_db("interrupt_init_fallback");
    let jobs = (cores / 2 + 1).to_string();
    let out = db
        .ours()
        .args(["-i", "-s", "1", "-j", &jobs])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "loading over one connection, not {jobs}: the server shares this machine's {cores} cores"
        )),
        "{stderr}"
    );
    assert_eq!(db.value("select count(*) from pgbench_accounts"), "100000");
}

/// Issue #14: Ctrl-C during `-i` outside COPY (here the vacuum, held by a lock another
/// session keeps) says `Cancel request sent` before the cancelled statement's error,
/// as stock does; before, the run ended before the line was printed.
#[test]
fn ctrl_c_during_the_init_vacuum_says_cancel_request_sent_as_stock() {
    let db = fresh_db("interrupt_init_vacuum");
    db.init(1);
    let mut outputs = Vec::new();
    for ours in [false, true] {
        let holder = LockHolder::lock(&db, "pgbench_branches", "share update exclusive");
        let cmd = if ours { db.ours() } else { db.stock() };
        let child = { cmd }
            .args(["-i", "-I", "v"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let vacuum_waits = "select count(*) > 0 from pg_stat_activity \
                            where datname = current_database() and wait_event_type = 'Lock' \
                            and query like 'vacuum%'";
        assert_eq!(
            db.value_within(vacuum_waits, "t", Duration::from_secs(30)),
            "t"
        );
        signal(child.id(), "-INT");
        let out = child.wait_with_output().unwrap();
        drop(holder);
        let gone = "select count(*) from pg_locks where relation = 'pgbench_branches'::regclass";
        assert_eq!(db.value_within(gone, "0", Duration::from_secs(30)), "0");
        let stderr = crate::support::normalize(&String::from_utf8_lossy(&out.stderr));
        outputs.push((out.status.code(), stderr));
    }
    assert_eq!(outputs[1], outputs[0]);
    assert!(
        outputs[1].1.contains("Cancel request sent\n"),
        "{}",
        outputs[1].1
    );
    assert_eq!(outputs[1].0, Some(1));
}

/// Issue #15: a flat chain of 100,000 terms, skipped inside `\if 0` and evaluated on a
/// client thread, runs (stock pgbench crashes from 50,000 terms when evaluating).
#[test]
fn a_100000_term_chain_runs_in_a_skipped_branch_and_on_a_client_thread() {
    let db = fresh_db("interrupt_deep_chain");
    let dir = tempfile::tempdir().unwrap();
    let chain = format!("1{}", "+1".repeat(99_999));
    let text = format!(
        "\\if 0\n\\set x {chain}\n\\endif\n\\set y {chain}\n\\set z :y is not null{}\nSELECT :y, :z;\n",
        " is not null".repeat(100_000)
    );
    let script = crate::support::script_file(&dir, "deep.sql", &text);
    let out = db
        .ours()
        .args(["-n", "-d", "-t", "1", "-f", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{}",
        &stderr[..stderr.len().min(2000)]
    );
    assert!(
        stderr.contains("client 0 sending SELECT 100000, true;"),
        "{}",
        &stderr[stderr.len().saturating_sub(2000)..]
    );
}

/// Issue #33: a shell starts a script's background jobs (`pgbench ... &`) with SIGINT
/// ignored, so that a Ctrl-C meant for the foreground command does not reach them.
/// Stock pgbench keeps running; pgbench-rs took the signal in and stopped the run.
/// Now a signal ignored at start stays ignored, for both programs alike.
#[test]
fn a_sigint_ignored_at_start_stays_ignored() {
    let db = fresh_db("interrupt_ignored");
    let dir = tempfile::tempdir().unwrap();
    let script = crate::support::script_file(&dir, "one.sql", "SELECT 1;\n");
    for program in [
        PathBuf::from(env!("CARGO_BIN_EXE_pgbench-rs")),
        crate::support::stock_pgbench(),
    ] {
        // As `sh -c '... &'` starts a background job: SIGINT ignored, then exec.
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "trap '' INT; exec \"$0\" \"$@\""])
            .arg(&program)
            .args(["-n", "-c", "2", "-T", "3", "-P", "1", "-f", &script]);
        crate::support::aim(&mut cmd, db.cluster, &db.name);
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let watch = crate::support::StderrWatch::new(&mut child);
        watch.wait_for("progress: ", Duration::from_secs(30));
        signal(child.id(), "-INT");
        let out = child.wait_with_output().unwrap();
        let stderr = watch.finish();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{program:?}: {stderr}");
        assert!(stdout.contains("duration: 3 s\n"), "{program:?}: {stdout}");
        assert!(!stderr.contains("SIGINT"), "{program:?}: {stderr}");
    }
}

/// After a workload's load was cut short: a run refuses its tables, saying `why`, with
/// exit status 1 and no report; `--check` fails too.
fn refused(db: &crate::support::Db, workload: &[&str], why: &str) {
    let out = crate::support::run(db.ours().args(workload).args(["-t", "5"]));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains(why), "{}", out.stderr);
    assert!(!out.stdout.contains("tps = "), "{}", out.stdout);
    let out = crate::support::run(db.ours().args(workload).arg("--check"));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
}

/// #38: Ctrl-C while a TPC-C load built its keys kept every row but some of the ten
/// indexes; `--check` passed and a run reported its NOPM with exit status 0. Now the
/// load says it did not complete, and runs and `--check` refuse its tables.
#[test]
fn ctrl_c_while_tpcc_builds_keys_leaves_tables_runs_refuse() {
    let db = fresh_db("interrupt_tpcc_keys");
    // TPC-C by the text builds the keys after the load (HammerDB's mode, with the
    // tables).
    let mut child = spawn_ours(
        &db,
        &["-i", "--workload=tpcc", "-D", "mode=spec", "-s", "1"],
    );
    let watch = crate::support::StderrWatch::new(&mut child);
    watch.wait_for("generating data", Duration::from_secs(60));
    // A session reading order_line holds its key's build (ALTER TABLE waits for its
    // lock) until the load is interrupted, however fast the machine.
    let holder = LockHolder::lock(&db, "order_line", "access share");
    watch.wait_for("creating primary keys", Duration::from_secs(300));
    let key_waits = "select count(*) > 0 from pg_stat_activity \
                     where datname = current_database() and wait_event_type = 'Lock' \
                     and query like 'alter table order_line%'";
    assert_eq!(
        db.value_within(key_waits, "t", Duration::from_secs(60)),
        "t"
    );
    signal(child.id(), "-INT");
    let out = child.wait_with_output().unwrap();
    drop(holder);
    let stderr = watch.finish();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Cancel request sent\n"), "{stderr}");
    assert!(
        stderr.contains("the tpcc load did not complete"),
        "{stderr}"
    );
    // What the issue saw: the rows all there, some keys built, some not.
    assert_eq!(db.value("select count(*) from stock"), "100000");
    assert_eq!(
        db.value("select to_regclass('warehouse_i1') is not null and to_regclass('order_line_i1') is null"),
        "t"
    );
    refused(
        &db,
        &["--workload=tpcc"],
        &format!(
            "the tpcc load did not complete: run \"pgbench-rs -i --workload=tpcc -s 1 {}\" again\n",
            db.name
        ),
    );
}

/// #38: interrupted while generating, half-loaded TPC-C tables ran with exit status 0.
#[test]
fn ctrl_c_while_tpcc_generates_leaves_tables_runs_refuse() {
    let db = fresh_db("interrupt_tpcc_generate");
    let mut child = spawn_ours(&db, &["-i", "--workload=tpcc", "-s", "3"]);
    let watch = crate::support::StderrWatch::new(&mut child);
    watch.wait_for(" tuples (", Duration::from_secs(60));
    signal(child.id(), "-INT");
    let out = child.wait_with_output().unwrap();
    let stderr = watch.finish();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        !stderr.contains("vacuuming..."),
        "not in generation: {stderr}"
    );
    assert!(
        stderr.contains("the tpcc load did not complete"),
        "{stderr}"
    );
    refused(
        &db,
        &["--workload=tpcc"],
        "the tpcc load did not complete: run \"pgbench-rs -i --workload=tpcc -s 3 ",
    );
}

/// #38: an interrupted sysbench prepare left empty tables that ran at 2.6 tps with
/// exit status 0. Now each table is prepared in one transaction: none is left half
/// done, and a run says how to prepare them.
#[test]
fn ctrl_c_during_a_sysbench_prepare_leaves_no_table_half_done() {
    let db = fresh_db("interrupt_sysbench_prepare");
    let defines = ["-D", "tables=2", "-D", "table_size=1000000"];
    let mut child = db
        .ours()
        .args(["-i", "--workload=oltp_read_write", "-j", "2"])
        .args(defines)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Both tables created, both being filled.
    let watch = crate::support::StderrWatch::stdout(&mut child);
    for _ in 0..2 {
        watch.wait_for("Inserting 1000000 records into ", Duration::from_secs(60));
    }
    signal(child.id(), "-INT");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = watch.finish();
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        !stdout.contains("secondary index"),
        "not in the load: {stdout}"
    );
    assert!(
        stderr.contains("the oltp_read_write prepare did not complete"),
        "{stderr}"
    );
    assert_eq!(
        db.value("select count(*) from pg_class where relname like 'sbtest%'"),
        "0"
    );
    let mut workload = vec!["--workload=oltp_read_write"];
    workload.extend(defines);
    refused(
        &db,
        &workload,
        &format!(
            "table \"sbtest1\" of workload oltp_read_write does not exist; prepare the tables \
             with \"pgbench-rs -i --workload=oltp_read_write -D tables=2 -D table_size=1000000 {}\"\n",
            db.name
        ),
    );
}
