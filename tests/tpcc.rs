//! `--workload=tpcc` against a real server, in both modes: the load's row counts and
//! values, runs with a warm-up and their result line and time profile, the check
//! after runs (schema and consistency), NOPM's new orders against the orders the run
//! inserted, a seeded run reproduced, HammerDB's settings (`keyandthink`,
//! `storedprocs`, `vacuum`, `partition`, `timeprofile=xtprof`), what `--check` names
//! when something is broken, a failed load, and the errors of bad input; the monitor's
//! end under a frozen server, a lost connection, counts it may not read (#38). (Loads
//! cut short by Ctrl-C: `tests/interrupt.rs`; real HammerDB beside it:
//! `tests/hammerdb.rs`.)

mod hammerdb_mode; // mode hammerdb's load and run, keying and thinking, HammerDB's settings

use crate::support::{fresh_db, run, Db};

/// Each district's next order id, in district order.
fn next_order_ids(db: &Db) -> Vec<i64> {
    db.psql("select d_next_o_id from district order by d_w_id, d_id")
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// The new orders the server counted, the clients committed, as the JSON has them.
fn tpcc_counts(json: &std::path::Path) -> (i64, i64) {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let t = &doc["run"]["tpcc"];
    (
        t["server"]["new_orders"].as_i64().unwrap(),
        t["new_orders_committed"].as_i64().unwrap(),
    )
}

/// Each district's orders from `from` (next order ids before) on, in order: their
/// customer, line count and lines (item, supply warehouse, quantity).
fn orders_since(db: &Db, from: &[i64]) -> Vec<String> {
    let ids = from
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",");
    db.psql(&format!(
        "select o_w_id, o_d_id, o_id, o_c_id, o_ol_cnt, \
           (select string_agg(format('%s:%s:%s', ol_i_id, ol_supply_w_id, ol_quantity), ',' order by ol_number) \
              from order_line where ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id) \
         from orders join (select row_number() over (order by d_w_id, d_id) n, d_w_id, d_id from district) d \
           on d_w_id = o_w_id and d_id = o_d_id \
         where o_id >= (array[{ids}])[n] order by o_w_id, o_d_id, o_id"
    ))
    .lines()
    .map(|l| {
        // Without the order id: the two runs' ids differ, their contents must not.
        let f: Vec<&str> = l.split('|').collect();
        format!("{}|{}|{}|{}|{}", f[0], f[1], f[3], f[4], f[5])
    })
    .collect()
}

/// `--check` in `mode` (`mode=spec`, `mode=hammerdb`) holds on `w` warehouses.
fn check(db: &Db, mode: &str, w: i64) {
    let out = run(db.ours().args(["--workload=tpcc", "-D", mode, "--check"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout.matches(" holds: ").count(), 4, "{}", out.stdout);
    // What HammerDB's checkschema looks at, too.
    let plural = if w == 1 { "" } else { "s" };
    let routines = if mode == "mode=spec" { 8 } else { 6 };
    for line in [
        format!("load complete: {w} warehouse{plural}\n"),
        format!(
            "\nrows: warehouse {w}, district {}, customer {}, history ",
            w * 10,
            w * 30_000
        ),
        "\nkeys and indexes: all 10\n".to_string(),
        format!("\nfunctions: all {routines}\n"),
    ] {
        assert!(out.stdout.contains(&line), "{line:?} in:\n{}", out.stdout);
    }
}

/// One client, seeded, twice: the same new orders (customers, lines, items).
fn seeded_twice(db: &Db, mode: &str) {
    let mut runs = Vec::new();
    for _ in 0..2 {
        let before = next_order_ids(db);
        let out = run(db.ours().args([
            "--workload=tpcc",
            "-D",
            mode,
            "-c1",
            "-t150",
            "--random-seed=23",
        ]));
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        runs.push(orders_since(db, &before));
    }
    assert!(runs[0].len() > 30, "{}", runs[0].len());
    assert_eq!(runs[0], runs[1]);
}

/// The done-when of #23 on one loaded database, in mode spec (TPC-C by the text).
#[test]
fn tpcc_load_run_with_warmup_nopm_and_a_seeded_rerun() {
    let db = fresh_db("tpcc");
    let out = run(db.ours().args([
        "-i",
        "--workload=tpcc",
        "-D",
        "mode=spec",
        "-s",
        "2",
        "-j",
        "2",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("of "), "progress lines: {}", out.stderr);
    assert!(out.stderr.contains("\ndone in "), "{}", out.stderr);
    // A line per unit (the items, then each warehouse) with its rows, rate and time left.
    for unit in ["items", "warehouse 1", "warehouse 2"] {
        let line = out
            .stderr
            .lines()
            .find(|l| l.starts_with(&format!("{unit}: ")))
            .unwrap_or_else(|| panic!("no line for {unit}: {}", out.stderr));
        assert!(
            line.contains(" rows, ") && line.contains(" MB/s); ") && line.ends_with(" s left"),
            "{line}"
        );
        assert!(line.contains(" of 3 units, "), "{line}");
    }
    // TPC-C 4.3.3.1's cardinalities for two warehouses.
    let counts = db.value(
        "select concat_ws(' ', (select count(*) from warehouse), (select count(*) from district), \
           (select count(*) from customer), (select count(*) from history), (select count(*) from orders), \
           (select count(*) from new_order), (select count(*) from item), (select count(*) from stock))",
    );
    assert_eq!(counts, "2 20 60000 60000 60000 18000 100000 200000");
    let lines = db.value(
        "select (select count(*) from order_line) = (select sum(o_ol_cnt) from orders) \
           and (select count(*) from order_line) between 500000 and 700000",
    );
    assert_eq!(lines, "t");
    let shares = db.value(
        "select (select round(count(*) filter (where c_credit = 'BC') * 100.0 / count(*)) from customer) || ' ' || \
           (select round(count(*) filter (where i_data like '%ORIGINAL%') * 100.0 / count(*)) from item)",
    );
    assert_eq!(shares, "10 10", "10% bad credit, 10% ORIGINAL");
    check(&db, "mode=spec", 2);

    // 30 s measured at -c 8 after a 5 s warm-up.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("tpcc.json");
    let out = run(db.ours().args([
        "--workload=tpcc",
        "-D",
        "mode=spec",
        "-c8",
        "-j2",
        "-T30",
        "--warmup=5",
        &format!("--export-json={}", json.display()),
    ]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("\nduration: 30 s\n"), "{}", out.stdout);
    // #33: warehouses, not a scaling factor; prepared statements, as HammerDB's.
    assert!(
        out.stdout
            .contains("\nwarehouses: 2\nquery mode: prepared\n"),
        "{}",
        out.stdout
    );
    assert_result_line_and_profile(&out.stdout);
    // The results file validates and shows the same report, result line and profile.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let errors: Vec<String> = crate::export::schema()
        .iter_errors(&doc)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let shown = run(
        std::process::Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
            .arg("show")
            .arg(&json),
    );
    assert_eq!(shown.stdout, out.stdout, "{}", shown.stderr);
    let (server, clients) = tpcc_counts(&json);
    assert!(
        server > 0 && (server - clients).abs() * 50 <= clients,
        "{server} {clients}"
    );
    check(&db, "mode=spec", 2);

    // Without a warm-up the server's counts are taken before any client connects:
    // NOPM's new orders are exactly the orders the run inserted and the clients'.
    let before = next_order_ids(&db);
    let out = run(db.ours().args([
        "--workload=tpcc",
        "-D",
        "mode=spec",
        "-c4",
        "-t100",
        &format!("--export-json={}", json.display()),
    ]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let after = next_order_ids(&db);
    let inserted: i64 = after.iter().zip(&before).map(|(a, b)| a - b).sum();
    let orders: i64 = orders_since(&db, &before).len() as i64;
    assert_eq!(orders, inserted);
    assert_eq!(tpcc_counts(&json), (inserted, inserted));
    check(&db, "mode=spec", 2);

    seeded_twice(&db, "mode=spec");
    check(&db, "mode=spec", 2);
    // Its routines are TPC-C's: HammerDB's mode says what to run first.
    let out = run(db.ours().args(["--workload=tpcc", "-t1"]));
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains(&format!(
            "the database has no function neword, which this mode's transactions call; \
             run \"pgbench-rs -i --workload=tpcc -s 2 {}\" first",
            db.name
        )),
        "{}",
        out.stderr
    );
}

/// #23's bad input: no tables, an unknown workload, -s 0, a workload with scripts.
/// #33: the command to run names the database and connection options given, and
/// `--check` on an empty database says the same (it printed a raw SQL error).
#[test]
fn tpcc_bad_input_is_refused_with_what_to_do() {
    let db = fresh_db("tpcc_bad");
    let port = db.cluster.port().to_string();
    let missing = format!(
        "pgbench-rs: error: table \"warehouse\" of workload tpcc does not exist; run \
         \"pgbench-rs -i --workload=tpcc -s WAREHOUSES -p {port} {}\" first\n",
        db.name
    );
    let out = run(db
        .ours()
        .args(["--workload=tpcc", "-t1", "-p", &port, &db.name]));
    assert_eq!(out.code, 1);
    assert!(out.stderr.ends_with(&missing), "{}", out.stderr);
    let out = run(db
        .ours()
        .args(["--workload=tpcc", "--check", "-p", &port, &db.name]));
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(out.stderr, missing);
    let out = run(db.ours().args(["--workload=tpce"]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("pgbench-rs: error: unknown workload \"tpce\"; known workloads: oltp_")
            && out.stderr.ends_with(", tpcc\n"),
        "{}",
        out.stderr
    );
    let out = run(db.ours().args(["-i", "--workload=tpcc", "-s", "0"]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("-s/--scale must be in range 1.."),
        "{}",
        out.stderr
    );
    let out = run(db.ours().args(["--workload=tpcc", "-S"]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("cannot be combined with -b, -f"),
        "{}",
        out.stderr
    );
    let out = run(db.ours().args(["--workload=tpcc", "-D", "warehouses=3"]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(
            "its options: mode, allwarehouse, keyandthink, storedprocs, partition, vacuum, timeprofile, raiseerror"
        ),
        "{}",
        out.stderr
    );
    let out = run(db
        .ours()
        .args(["--workload=tpcc", "-D", "mode=spec", "-D", "storedprocs=1"]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("-D storedprocs=1 is HammerDB's and needs -D mode=hammerdb"),
        "{}",
        out.stderr
    );

    let out = run(db.ours().args(["--check"]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("the pgbench tables could not be counted"),
        "{}",
        out.stderr
    );
    let out = run(db.ours().arg("--show-script=tpcc"));
    assert_eq!(out.code, 0);
    let shown = format!("{}{}", out.stdout, out.stderr);
    assert!(shown.contains("SELECT neword(:w_id, :scale,"), "{shown}");
    let out = run(db.ours().args(["-D", "mode=spec", "--show-script=tpcc"]));
    let shown = format!("{}{}", out.stdout, out.stderr);
    assert!(shown.contains("SELECT tpcc_new_order("), "{shown}");
}

/// #38: a failed COPY said `COPY into tpcc failed`, naming no table. And a load that
/// failed is refused by a run, which says to load again at its scale.
#[test]
fn a_failed_copy_names_its_table_and_the_load_is_refused() {
    let db = fresh_db("tpcc_copy_fails");
    // Every stock row the load writes breaks a constraint added as the table is made.
    db.psql(
        "create function no_stock() returns event_trigger language plpgsql as $$ begin \
           if exists (select from pg_event_trigger_ddl_commands() \
                       where object_identity = 'public.stock') then \
             alter table stock add constraint no_stock check (s_quantity < 0); \
           end if; end $$; \
         create event trigger no_stock on ddl_command_end when tag in ('CREATE TABLE') \
           execute function no_stock();",
    );
    let out = run(db.ours().args(["-i", "--workload=tpcc", "-s", "2"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("pgbench-rs: error: COPY into stock failed: ERROR:  new row for relation \"stock\" violates check constraint \"no_stock\""),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("pgbench-rs: the tpcc load did not complete"),
        "{}",
        out.stderr
    );
    let out = run(db.ours().args(["--workload=tpcc", "-t", "1"]));
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains(&format!(
            "error: the tpcc load did not complete: run \"pgbench-rs -i --workload=tpcc -s 2 {}\" again\n",
            db.name
        )),
        "{}",
        out.stderr
    );
}

/// #33: `--check` said `broken for 3/4`; it names the warehouse and district. #38: it
/// checks the keys, indexes and functions too, as HammerDB's checkschema does.
#[test]
fn check_names_what_is_broken() {
    let db = fresh_db("tpcc_check_broken");
    let out = run(db.ours().args(["-i", "--workload=tpcc", "-s", "1"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    db.psql(
        "update district set d_next_o_id = d_next_o_id + 1 where d_id = 4; \
         drop index orders_i2; alter table stock drop constraint stock_i1; \
         drop function delivery; delete from item where i_id = 1",
    );
    let out = run(db.ours().args(["--workload=tpcc", "--check"]));
    assert_eq!(out.code, 1, "{}", out.stdout);
    for line in [
        "load complete: 1 warehouse\n",
        "\nrows FAIL: item 99999, loaded 100000\n",
        "\nkeys and indexes FAIL: 2 of 10 missing or invalid: stock_i1, orders_i2\n",
        "\nfunctions FAIL: 1 of 6 missing: delivery\n",
        "\nconsistency condition 1 holds: ",
        "\nconsistency condition 2 FAILS: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each \
         district; broken for warehouse 1 district 4\n",
    ] {
        assert!(out.stdout.contains(line), "{line:?} in:\n{}", out.stdout);
    }
    assert!(
        out.stderr.ends_with("error: the tpcc check failed\n"),
        "{}",
        out.stderr
    );
}

/// The run's new orders line: (server's count, clients' count, the verdict).
fn new_orders_line(stdout: &str) -> (i64, i64, String) {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("new orders in the measured part: "))
        .unwrap_or_else(|| panic!("no new orders line in {stdout}"));
    let (server, rest) = line
        .split_once(" counted by the server (district.d_next_o_id), ")
        .unwrap();
    let (clients, verdict) = rest.split_once(" committed by the clients: ").unwrap();
    (
        server.parse().unwrap(),
        clients.parse().unwrap(),
        verdict.to_string(),
    )
}

/// The threads of process `pid` whose name starts with `prefix`.
fn threads_named(pid: u32, prefix: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|name| name.starts_with(prefix))
                })
                .count()
        })
        .unwrap_or(0)
}

/// #38: under a frozen server the line said the server's and the clients' new orders
/// were "the same", but 3 more committed once it resumed: the monitor counted while
/// the transactions its clients were cut from had yet to end. Here the server resumes
/// one part after another: the monitor's backend first, the clients' a little later
/// (and the postmaster, which would deliver the cancel requests, last). The monitor
/// now counts once the run's connections have closed (or says the two counts are not
/// comparable), so a count it calls exact is the orders the run inserted.
#[test]
fn new_orders_that_commit_after_a_frozen_server_resumes_are_counted() {
    use crate::run_end::watchers::{connected, loaded};
    use crate::run_end::{ours, private_cluster, text, Frozen};
    use std::time::Duration;
    // Its own (it is frozen), for the process (a Db's is).
    static CLUSTER: std::sync::OnceLock<pgbench_cluster::Cluster> = std::sync::OnceLock::new();
    let cluster = CLUSTER.get_or_init(|| private_cluster(false));
    let db = Db {
        cluster,
        name: loaded(cluster, "tpcc_frozen"),
    };
    let before = next_order_ids(&db);
    let child = ours(db.cluster, &db.name)
        .args(["--workload=tpcc", "-c", "8", "-j", "2", "-T", "4"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    connected(db.cluster, &db.name, 8);
    let pids = |filter: &str| -> Vec<u32> {
        db.psql(&format!(
            "select pid from pg_stat_activity where datname = current_database() and {filter}"
        ))
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
    };
    // The monitor's last query was its start's read.
    let monitor = pids("query like '%sum(d_next_o_id)%' and pid <> pg_backend_pid()");
    let clients = pids("application_name = 'pgbench-rs' and query not like '%sum(d_next_o_id)%'");
    assert_eq!((monitor.len(), clients.len()), (1, 8));
    std::thread::sleep(Duration::from_secs(1));
    let frozen = Frozen::freeze(db.cluster);
    // The clients are cut after -T and its grace.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while threads_named(pid, "thread ") > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the clients never ended"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    frozen.thaw_first(&monitor);
    // What the monitor reads without waiting is read by then.
    let early = ended.recv_timeout(Duration::from_millis(1500)).ok();
    frozen.thaw_first(&clients);
    drop(frozen);
    let out = early
        .or_else(|| ended.recv_timeout(Duration::from_secs(60)).ok())
        .expect("the run never ended")
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(
        stdout.contains("\nTEST RESULT : System achieved "),
        "{stdout}{stderr}"
    );
    let gone = "select count(*) from pg_stat_activity \
                where datname = current_database() and application_name like 'pgbench-rs%'";
    assert_eq!(db.value_within(gone, "0", Duration::from_secs(30)), "0");
    let after = next_order_ids(&db);
    let inserted: i64 = after.iter().zip(&before).map(|(a, b)| a - b).sum();
    let (server, clients, verdict) = new_orders_line(&stdout);
    eprintln!("server {server}, clients {clients}, inserted {inserted}: {verdict}");
    if !verdict.starts_with("not comparable") {
        assert_eq!(server, inserted, "{stdout}");
        assert_eq!(verdict == "the same", clients == inserted, "{stdout}");
    }
}

/// #38: a monitor whose connection was ended mid-run lost the server's end: no `TEST
/// RESULT` line, and the run exited 0 all the same. Now the connection is made again
/// for the end; and counts that cannot be read (here `pg_stat_database` denied during
/// the run) are said, in the results file too, and the run exits 2.
#[test]
fn a_lost_monitor_is_made_again_and_counts_it_cannot_read_fail_the_run() {
    use std::time::Duration;
    let db = fresh_db("tpcc_monitor_lost");
    let role = "issue38_tpcc";
    db.psql(&format!(
        "do $$ begin create role {role} login; exception when duplicate_object then null; end $$;
         alter database \"{}\" owner to {role};
         alter schema public owner to {role};",
        db.name
    ));
    let out = run(db
        .ours()
        .env("PGUSER", role)
        .args(["-i", "--workload=tpcc", "-s", "1"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("lost.json");
    let connected = "select count(*) >= 2 from pg_stat_activity \
                     where datname = current_database() and application_name = 'pgbench-rs'";
    let during = |sql: &str| {
        let child = db
            .ours()
            .env("PGUSER", role)
            .args(["--workload=tpcc", "-c", "2", "-T", "4"])
            .arg(format!("--export-json={}", json.display()))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        assert_eq!(
            db.value_within(connected, "t", Duration::from_secs(30)),
            "t"
        );
        db.psql(sql);
        let out = child.wait_with_output().unwrap();
        crate::support::Run {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code().unwrap_or(-1),
        }
    };
    // The monitor's connection ended (its queries carry its mark).
    let out = during(
        "select pg_terminate_backend(pid) from pg_stat_activity \
         where datname = current_database() and query like '%sum(d_next_o_id)%' \
         and pid <> pg_backend_pid()",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("\nTEST RESULT : System achieved "),
        "{}",
        out.stdout
    );
    let (server, clients) = tpcc_counts(&json);
    assert_eq!(server, clients, "{}", out.stdout);

    // The counts denied to the run's role: no NOPM, and no success.
    let out = during("revoke select on pg_catalog.pg_stat_database from public");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("\nTEST RESULT : none: the server's counts could not be read (could not read the TPC-C counts: permission denied for view pg_stat_database)\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("error: could not read the TPC-C counts: permission denied for view pg_stat_database; the run has no NOPM or TPM"),
        "{}",
        out.stderr
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(
        doc["run"]["tpcc"]["server"].is_null(),
        "{}",
        doc["run"]["tpcc"]
    );
    assert!(
        doc["run"]["tpcc"]["server_lost"]
            .as_str()
            .is_some_and(|s| s.contains("permission denied")),
        "{}",
        doc["run"]["tpcc"]
    );
    let errors: Vec<String> = crate::export::schema()
        .iter_errors(&doc)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// A run's report ends with HammerDB's result line and a time profile of all five
/// transactions.
fn assert_result_line_and_profile(stdout: &str) {
    assert!(
        stdout.contains("\nTEST RESULT : System achieved "),
        "{stdout}"
    );
    let profile = stdout.split("time profile (ms):\n").nth(1).unwrap();
    for tx in ["neword", "payment", "delivery", "slev", "ostat"] {
        assert!(profile.contains(&format!("  {tx} ")), "{profile}");
    }
}
