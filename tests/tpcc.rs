//! `--workload=tpcc` against a real server: the load's row counts, a run with a
//! warm-up and its result line and time profile, the check after runs (schema and
//! consistency), NOPM's new orders against the orders the run inserted, a seeded run
//! reproduced, what `--check` names when something is broken, a failed load, and the
//! errors of bad input. (Loads cut short by Ctrl-C: `tests/interrupt.rs`.)

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

fn check(db: &Db) {
    let out = run(db.ours().args(["--workload=tpcc", "--check"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout.matches(" holds: ").count(), 4, "{}", out.stdout);
    // What HammerDB's checkschema looks at, too.
    for line in [
        "load complete: 2 warehouses\n",
        "\nrows: warehouse 2, district 20, customer 60000, history ",
        "\nkeys and indexes: all 10\n",
        "\nfunctions: all 8\n",
    ] {
        assert!(out.stdout.contains(line), "{line:?} in:\n{}", out.stdout);
    }
}

/// The done-when of #23 on one loaded database.
#[test]
fn tpcc_load_run_with_warmup_nopm_and_a_seeded_rerun() {
    let db = fresh_db("tpcc");
    let out = run(db
        .ours()
        .args(["-i", "--workload=tpcc", "-s", "2", "-j", "2"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("of "), "progress lines: {}", out.stderr);
    assert!(out.stderr.contains("\ndone in "), "{}", out.stderr);
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
    check(&db);

    // 30 s measured at -c 8 after a 5 s warm-up.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("tpcc.json");
    let out = run(db.ours().args([
        "--workload=tpcc",
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
    assert!(
        out.stdout.contains("\nTEST RESULT : System achieved "),
        "{}",
        out.stdout
    );
    let profile = out.stdout.split("time profile (ms):\n").nth(1).unwrap();
    for tx in ["neword", "payment", "delivery", "slev", "ostat"] {
        assert!(profile.contains(&format!("  {tx} ")), "{profile}");
    }
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
    check(&db);

    // Without a warm-up the server's counts are taken before any client connects:
    // NOPM's new orders are exactly the orders the run inserted and the clients'.
    let before = next_order_ids(&db);
    let out = run(db.ours().args([
        "--workload=tpcc",
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
    check(&db);

    // One client, seeded, twice: the same new orders (customers, lines, items).
    let mut runs = Vec::new();
    for _ in 0..2 {
        let before = next_order_ids(&db);
        let out = run(db
            .ours()
            .args(["--workload=tpcc", "-c1", "-t150", "--random-seed=23"]));
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        runs.push(orders_since(&db, &before));
    }
    assert!(runs[0].len() > 30, "{}", runs[0].len());
    assert_eq!(runs[0], runs[1]);
    check(&db);
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
        out.stderr
            .contains("its options: allwarehouse, keyandthink"),
        "{}",
        out.stderr
    );
    let out = run(db.ours().args(["--check"]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("--check needs --workload"),
        "{}",
        out.stderr
    );
    let out = run(db.ours().arg("--show-script=tpcc"));
    assert_eq!(out.code, 0);
    let shown = format!("{}{}", out.stdout, out.stderr);
    assert!(shown.contains("SELECT tpcc_new_order("), "{shown}");
}

/// #38: a failed COPY said `COPY into tpcc failed`, naming no table. And a load that
/// failed is refused by a run, which says to load again at its scale.
#[test]
fn issue_38_a_failed_copy_names_its_table_and_the_load_is_refused() {
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
fn issue_33_check_names_what_is_broken() {
    let db = fresh_db("tpcc_check_broken");
    let out = run(db.ours().args(["-i", "--workload=tpcc", "-s", "1"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    db.psql(
        "update district set d_next_o_id = d_next_o_id + 1 where d_id = 4; \
         drop index orders_i2; alter table stock drop constraint stock_i1; \
         drop function tpcc_delivery; delete from item where i_id = 1",
    );
    let out = run(db.ours().args(["--workload=tpcc", "--check"]));
    assert_eq!(out.code, 1, "{}", out.stdout);
    for line in [
        "load complete: 1 warehouse\n",
        "\nrows FAIL: item 99999, loaded 100000\n",
        "\nkeys and indexes FAIL: 2 of 10 missing or invalid: stock_i1, orders_i2\n",
        "\nfunctions FAIL: 1 of 8 missing: tpcc_delivery\n",
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
