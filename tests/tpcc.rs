//! `--workload=tpcc` against a real server: the load's row counts, a run with a
//! warm-up and its result line and time profile, the consistency check after runs,
//! NOPM's new orders against the orders the run inserted, a seeded run reproduced,
//! and the errors of bad input.

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
#[test]
fn tpcc_bad_input_is_refused_with_what_to_do() {
    let db = fresh_db("tpcc_bad");
    let out = run(db.ours().args(["--workload=tpcc", "-t1"]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("could not count warehouses")
            && out
                .stderr
                .contains("run \"pgbench-rs -i --workload=tpcc -s WAREHOUSES\" first"),
        "{}",
        out.stderr
    );
    let out = run(db.ours().args(["--workload=tpcc", "--check"]));
    assert_eq!(out.code, 1, "{}", out.stdout);
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
