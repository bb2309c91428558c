//! Resumable, sharded, self-checking loads (#47) on real servers: `-i --resume` killed
//! with SIGKILL half way (by the progress record's count of units, not by time) and
//! resumed; a resume with another scale refused; a run refused on an unfinished load;
//! two `--shard` processes loading one database at once; the same for TPC-C and a
//! sysbench workload; a load whose server restarts in the middle, resumed. The record
//! (`pgbench_rs_load`) is gone after every load that finished.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use pgbench_cluster::{Cluster, ClusterOptions};

use crate::support::{aim, fresh_db, Db};

/// The units of `loader` the record holds (committed with their rows).
fn units_recorded(db: &Db, loader: &str) -> i64 {
    units_in(db.cluster, &db.name, loader)
}

/// The same on any cluster (a failed query, e.g. the table not made yet, reads 0).
fn units_in(cluster: &Cluster, db: &str, loader: &str) -> i64 {
    cluster
        .psql(
            db,
            &format!(
                "select count(*) from pgbench_rs_load where loader = '{loader}' and unit not like '=%'"
            ),
        )
        .unwrap_or_default()
        .trim()
        .parse()
        .unwrap_or(0)
}

fn spawn(mut cmd: Command) -> Child {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pgbench-rs")
}

/// Starts `cmd`, and kills it with SIGKILL once the record holds `units` units of
/// `loader` (panics if it ends first or after 120 s).
fn kill_at(db: &Db, mut cmd: Command, loader: &str, units: i64) {
    let mut child = spawn({
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        cmd
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    while units_recorded(db, loader) < units {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the load ended before {units} units"
        );
        assert!(Instant::now() < deadline, "no {units} units in 120 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn succeeds(mut cmd: Command) -> String {
    let out = cmd.output().expect("run pgbench-rs");
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    all
}

/// `-i` with `args` as shards 1/2 and 2/2 at once, both succeeding: their outputs.
fn two_shards_at_once(db: &Db, args: &[&str]) -> String {
    let shard = |k: u32| {
        let mut c = db.ours();
        c.args(args).arg(format!("--shard={k}/2"));
        spawn(c)
    };
    let (a, b) = (shard(1), shard(2));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{}", text(&a));
    assert!(b.status.success(), "{}", text(&b));
    text(&a) + &text(&b)
}

/// The "N of M units loaded" a resume printed.
fn resumed_from(output: &str) -> (i64, i64) {
    let line = output
        .lines()
        .find(|l| l.starts_with("resuming the load"))
        .unwrap_or_else(|| panic!("no resume line in:\n{output}"));
    let tail = line.rsplit_once("): ").unwrap().1;
    let mut words = tail.split(' ');
    let done = words.next().unwrap().parse().unwrap();
    words.next();
    (done, words.next().unwrap().parse().unwrap())
}

fn no_record_left(db: &Db) {
    assert_eq!(
        db.value("select to_regclass('pgbench_rs_load') is null"),
        "t"
    );
}

/// `-i -s 20 --resume` killed half way, resumed: exactly 2,000,000 accounts with their
/// primary key, the resume loading only the units the first load had not.
#[test]
fn pgbench_killed_half_way_resumes() {
    let db = fresh_db("resume_pgbench");
    let mut first = db.ours();
    first.args(["-i", "-s", "20", "--resume"]);
    // 21 units: branches and tellers, then 20 ranges of 100,000 accounts.
    kill_at(&db, first, "pgbench", 10);
    let loaded = units_recorded(&db, "pgbench");
    assert!(loaded >= 10);
    assert_eq!(
        db.value("select count(*) from pgbench_accounts"),
        ((loaded - 1) * 100_000).to_string(),
        "the record names exactly the units in the table"
    );

    // A run and another scale are refused while the load is unfinished.
    let run = db.ours().args(["-t", "1"]).output().unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    assert!(text(&run).contains("did not finish"), "{}", text(&run));
    let other = db
        .ours()
        .args(["-i", "-s", "10", "--resume"])
        .output()
        .unwrap();
    let said = text(&other);
    assert_eq!(other.status.code(), Some(1), "{said}");
    assert!(
        said.contains("started with scale 20, fillfactor 100") && said.contains("not scale 10,"),
        "{said}"
    );

    let mut resume = db.ours();
    resume.args(["-i", "-s", "20", "--resume"]);
    let out = succeeds(resume);
    let (done, total) = resumed_from(&out);
    assert_eq!((done, total), (loaded, 21), "{out}");
    assert!(out.contains("creating primary keys..."), "{out}");
    assert_eq!(db.value("select count(*) from pgbench_accounts"), "2000000");
    assert_eq!(
        db.value("select count(distinct aid) from pgbench_accounts"),
        "2000000"
    );
    assert_eq!(db.value("select count(*) from pgbench_branches"), "20");
    assert_eq!(
        db.value("select conname from pg_constraint where conrelid = 'pgbench_accounts'::regclass"),
        "pgbench_accounts_pkey"
    );
    no_record_left(&db);
    let checked = succeeds({
        let mut c = db.ours();
        c.arg("--check");
        c
    });
    assert!(
        checked.contains(
            "rows: scale 20: pgbench_branches 20, pgbench_tellers 200, pgbench_accounts 2000000"
        ),
        "{checked}"
    );
    // The tables are a whole load: a run goes.
    succeeds({
        let mut c = db.ours();
        c.args(["-t", "1"]);
        c
    });
}

/// A plain `-i` after an unfinished load does what stock does (drops and loads again),
/// and leaves no record behind.
#[test]
fn plain_init_starts_over() {
    let db = fresh_db("resume_plain");
    let mut first = db.ours();
    first.args(["-i", "-s", "5", "--resume"]);
    kill_at(&db, first, "pgbench", 2);
    let mut plain = db.ours();
    plain.args(["-i", "-s", "2"]);
    let out = succeeds(plain);
    assert!(!out.contains("resum"), "{out}");
    assert_eq!(db.value("select count(*) from pgbench_accounts"), "200000");
    no_record_left(&db);
}

/// Two shards at once into one database: one creates the tables, both load, the last
/// builds the keys; the result is one whole load.
#[test]
fn pgbench_two_shards_at_once() {
    let db = fresh_db("resume_shards");
    let both = two_shards_at_once(&db, &["-i", "-s", "6"]);
    assert_eq!(both.matches("creating tables...").count(), 1, "{both}");
    assert_eq!(
        both.matches("creating primary keys...").count(),
        1,
        "{both}"
    );
    assert_eq!(db.value("select count(*) from pgbench_accounts"), "600000");
    assert_eq!(db.value("select count(*) from pgbench_tellers"), "60");
    assert_eq!(db.value("select count(*) from pg_constraint where contype = 'p' and conrelid::regclass::text like 'pgbench%'"), "3");
    no_record_left(&db);
}

/// A lost shard's units are finished by a later `--resume`.
#[test]
fn a_lost_shard_is_finished_by_resume() {
    let db = fresh_db("resume_lost_shard");
    let mut one = db.ours();
    one.args(["-i", "-s", "4", "--shard=1/2"]);
    let out = succeeds(one);
    assert!(out.contains("shard 1/2 loaded its units"), "{out}");
    assert_eq!(db.value("select count(*) from pgbench_accounts"), "200000");
    // Shard 1 again without --resume: refused, it already ran.
    let again = db
        .ours()
        .args(["-i", "-s", "4", "--shard=1/2"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    let mut resume = db.ours();
    resume.args(["-i", "-s", "4", "--resume"]);
    let out = succeeds(resume);
    assert_eq!(resumed_from(&out), (3, 5), "{out}");
    assert_eq!(db.value("select count(*) from pgbench_accounts"), "400000");
    no_record_left(&db);
}

/// The server restarts (immediate stop, then start) in the middle of a load; the load
/// fails, and `--resume` finishes it from the units committed before the crash.
#[test]
fn a_server_restart_mid_load_resumes() {
    let cluster = Cluster::start(ClusterOptions {
        config: vec![("synchronous_commit".into(), "on".into())],
        ..Default::default()
    })
    .unwrap();
    let ours = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
        aim(&mut c, &cluster, "postgres");
        c
    };
    let units = || units_in(&cluster, "postgres", "pgbench");
    let mut load = ours();
    load.args(["-i", "-s", "12", "--resume"]);
    let child = spawn(load);
    let deadline = Instant::now() + Duration::from_secs(120);
    while units() < 5 {
        assert!(Instant::now() < deadline, "no 5 units in 120 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    cluster.stop_immediate().unwrap();
    let failed = child.wait_with_output().unwrap();
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed));
    cluster.restart().unwrap();
    // Units commit asynchronously: the crash may take the last ones (rows and record
    // rows together), never part of one.
    let committed = units();
    let rows: i64 = cluster
        .psql("postgres", "select count(*) from pgbench_accounts")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let branches_unit = i64::from(committed > 0);
    assert_eq!(rows, (committed - branches_unit).max(0) * 100_000);
    let mut resume = ours();
    resume.args(["-i", "-s", "12", "--resume"]);
    let out = succeeds(resume);
    assert_eq!(resumed_from(&out), (committed, 13), "{out}");
    let count = cluster
        .psql(
            "postgres",
            "select count(*), count(distinct aid) from pgbench_accounts",
        )
        .unwrap();
    assert_eq!(count.trim(), "1200000|1200000");
}

/// `--workload=tpcc --check`'s report, after asserting it passed.
fn tpcc_check(db: &Db) -> String {
    let mut check = db.ours();
    check.args(["--workload=tpcc", "--check"]);
    succeeds(check)
}

/// The `rows:` line of a check.
fn rows_line(report: &str) -> String {
    report
        .lines()
        .find(|l| l.starts_with("rows"))
        .unwrap_or_else(|| panic!("no rows line in:\n{report}"))
        .to_string()
}

/// TPC-C at 4 warehouses: killed half way and resumed, and loaded by two shards at
/// once, both pass `--check` with a fresh load's row counts.
#[test]
fn tpcc_killed_resumed_and_sharded() {
    let fresh = fresh_db("resume_tpcc_fresh");
    succeeds({
        let mut c = fresh.ours();
        c.args(["-i", "--workload=tpcc", "-s", "4"]);
        c
    });
    let want = rows_line(&tpcc_check(&fresh));
    no_record_left(&fresh);

    let killed = fresh_db("resume_tpcc_killed");
    let mut first = killed.ours();
    first.args(["-i", "--workload=tpcc", "-s", "4", "--resume"]);
    // 5 units: the items, then a warehouse each.
    kill_at(&killed, first, "tpcc", 3);
    let loaded = units_recorded(&killed, "tpcc");
    let refused = killed
        .ours()
        .args(["--workload=tpcc", "--check"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused).contains("did not finish"),
        "{}",
        text(&refused)
    );
    let mut resume = killed.ours();
    resume.args(["-i", "--workload=tpcc", "-s", "4", "--resume"]);
    let out = succeeds(resume);
    assert_eq!(resumed_from(&out), (loaded, 5), "{out}");
    assert_eq!(rows_line(&tpcc_check(&killed)), want);
    no_record_left(&killed);

    let sharded = fresh_db("resume_tpcc_shards");
    let both = two_shards_at_once(&sharded, &["-i", "--workload=tpcc", "-s", "4"]);
    assert_eq!(both.matches("creating tables...").count(), 1, "{both}");
    assert_eq!(both.matches("creating indexes...").count(), 1, "{both}");
    assert_eq!(rows_line(&tpcc_check(&sharded)), want);
    no_record_left(&sharded);
}

/// A sysbench workload of 8 tables: two shards at once, and a prepare killed half way
/// and resumed, pass `--check`.
#[test]
fn sysbench_sharded_and_resumed() {
    let options = [
        "--workload=oltp_read_write",
        "-D",
        "tables=8",
        "-D",
        "table_size=20000",
    ];
    let check = |db: &Db| {
        let mut c = db.ours();
        c.args(options).arg("--check");
        let report = succeeds(c);
        assert!(report.contains("tables: all 8"), "{report}");
        assert!(report.contains("table size: all 8"), "{report}");
        assert_eq!(
            db.value("select sum(n) from (select count(*) n from sbtest1 union all select count(*) from sbtest8) t"),
            "40000"
        );
    };
    let sharded = fresh_db("resume_sysbench_shards");
    let mut prepare = vec!["-i"];
    prepare.extend(options);
    two_shards_at_once(&sharded, &prepare);
    check(&sharded);
    no_record_left(&sharded);

    let killed = fresh_db("resume_sysbench_killed");
    let mut first = killed.ours();
    first.arg("-i").args(options).arg("--resume");
    kill_at(&killed, first, "sysbench", 4);
    let run = killed
        .ours()
        .args(options)
        .args(["-t", "1"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let mut resume = killed.ours();
    resume.arg("-i").args(options).arg("--resume");
    let out = succeeds(resume);
    assert!(out.contains("resuming the prepare"), "{out}");
    check(&killed);
    no_record_left(&killed);
}
