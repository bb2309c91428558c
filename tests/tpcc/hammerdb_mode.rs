//! `--workload=tpcc` in mode `hammerdb`, the default (#35): its load's values and
//! build order, a run of its functions, the "rolled back" new orders it commits, a
//! seeded rerun; `-D keyandthink=1` ending with the run and staying out of the
//! latency; HammerDB's other settings (`storedprocs`, `vacuum`, `partition`).

use super::{check, seeded_twice};
use crate::support::{fresh_db, run};
use pgbench_rs::workload::tpcc::{schema, Mode};

/// #35: HammerDB's mode, the default: its load's values and build order, a run of its
/// functions (prepared, NOPM, the time profile), the consistency check, the "rolled
/// back" new orders committed with a line for item 100001, a seeded rerun.
#[test]
fn tpcc_hammerdb_mode_loads_its_values_and_runs_its_functions() {
    let db = fresh_db("tpcc_hammerdb");
    let out = run(db
        .ours()
        .args(["-i", "--workload=tpcc", "-s", "2", "-j", "2"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // HammerDB's order: keys with the tables, the two indexes after, no vacuum.
    assert!(
        out.stderr.contains("\ndone in ")
            && out.stderr.contains(", indexes ")
            && out.stderr.contains(", analyze ")
            && !out.stderr.contains("vacuum"),
        "{}",
        out.stderr
    );
    let counts = db.value(
        "select concat_ws(' ', (select count(*) from warehouse), (select count(*) from district), \
           (select count(*) from customer), (select count(*) from history), (select count(*) from orders), \
           (select count(*) from new_order), (select count(*) from item), (select count(*) from stock))",
    );
    assert_eq!(counts, "2 20 60000 60000 60000 18000 100000 200000");
    // Half bad credit, half the customers with an order, 9.5% "original" items.
    let shares = db.value(
        "select (select round(count(*) filter (where c_credit = 'BC') * 100.0 / count(*)) from customer) || ' ' || \
           (select round(count(distinct (o_w_id, o_d_id, o_c_id)) * 100.0 / (select count(*) from customer)) from orders) || ' ' || \
           (select round(count(*) filter (where i_data like '%original%') * 1000.0 / count(*)) from item)",
    );
    let shares: Vec<i64> = shares.split(' ').map(|v| v.parse().unwrap()).collect();
    assert!(
        (49..=51).contains(&shares[0]) && (48..=52).contains(&shares[1]),
        "{shares:?}"
    );
    assert!((93..=97).contains(&shares[2]), "{shares:?}");
    let routines = db.value(
        "select string_agg(proname || ':' || prokind::text, ' ' order by proname) from pg_proc \
         where pronamespace = 'public'::regnamespace",
    );
    assert_eq!(
        routines,
        "dbms_random:f delivery:f neword:f ostat:f payment:f slev:f"
    );
    check(&db, "mode=hammerdb", 2);

    let before: i64 = db.value("select count(*) from order_line").parse().unwrap();
    let out = run(db
        .ours()
        .args(["--workload=tpcc", "-c8", "-j2", "-T10", "--warmup=2"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("\nquery mode: prepared\n"),
        "{}",
        out.stdout
    );
    super::assert_result_line_and_profile(&out.stdout);
    // HammerDB's "rolled back" new orders (1%) commit, with a line for item 100001.
    let unused = db.value(
        "select count(*) from order_line join orders on o_w_id = ol_w_id and o_d_id = ol_d_id \
           and o_id = ol_o_id where ol_i_id = 100001",
    );
    let added: i64 = db
        .value("select count(*) from order_line")
        .parse::<i64>()
        .unwrap()
        - before;
    assert!(
        unused.parse::<i64>().unwrap() > 0 && added > 1000,
        "{unused} of {added}"
    );
    check(&db, "mode=hammerdb", 2);
    seeded_twice(&db, "mode=hammerdb");
    check(&db, "mode=hammerdb", 2);
}

/// #35: `-D keyandthink=1` ends at `-T` (a client pausing then stops there), and the
/// profile times the database calls only: without the fix, a `--warmup=2 -T 6` run
/// waited out 18 s keying times and timed them.
#[test]
fn tpcc_keying_and_thinking_end_with_the_run_and_stay_out_of_the_latency() {
    let db = fresh_db("tpcc_keyandthink");
    let out = run(db.ours().args(["-i", "--workload=tpcc", "-s", "1"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let start = std::time::Instant::now();
    let out = run(db.ours().args([
        "--workload=tpcc",
        "-D",
        "keyandthink=1",
        "-D",
        "timeprofile=xtprof",
        "-c24",
        "-j2",
        "--warmup=2",
        "-T6",
    ]));
    let wall = start.elapsed().as_secs_f64();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!((8.0..10.0).contains(&wall), "{wall} s\n{}", out.stdout);
    // HammerDB 6's layout: the calls' latencies, each well below any keying time
    // (2 s at least) that would be in them otherwise.
    let summary = out.stdout.split(">>>>> SUMMARY OF ").nth(1).unwrap();
    assert!(summary.starts_with("24 ACTIVE VIRTUAL USERS : MEDIAN ELAPSED TIME : "));
    let calls: Vec<f64> = summary
        .lines()
        .filter_map(|l| l.strip_prefix("CALLS: "))
        .map(|l| {
            let max = l.split('\t').find_map(|f| f.strip_prefix("MAX: ")).unwrap();
            max.trim_end_matches("ms").parse().unwrap()
        })
        .collect();
    assert!(!calls.is_empty(), "{summary}");
    assert!(
        calls.iter().all(|&max| max < 1_500.0),
        "{calls:?}\n{summary}"
    );
    check(&db, "mode=hammerdb", 1);
}

/// #35: HammerDB's other settings: `storedprocs` (PROCEDUREs and CALL), `vacuum`
/// (CHECKPOINT and VACUUM after the run), and `partition` (from 200 warehouses,
/// tried on empty tables: its statements as the load runs them).
#[test]
fn tpcc_stored_procedures_vacuum_and_partitions() {
    let db = fresh_db("tpcc_procs");
    let out = run(db.ours().args([
        "-i",
        "--workload=tpcc",
        "-s",
        "1",
        "-D",
        "storedprocs=1",
        "-D",
        "partition=1",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("order_line is not partitioned below 200 warehouses"),
        "{}",
        out.stderr
    );
    let kinds = db.value(
        "select string_agg(proname || ':' || prokind::text, ' ' order by proname) from pg_proc \
         where pronamespace = 'public'::regnamespace",
    );
    assert_eq!(
        kinds,
        "dbms_random:f delivery:p neword:p ostat:p payment:p slev:p"
    );
    let out = run(db.ours().args([
        "--workload=tpcc",
        "-D",
        "storedprocs=1",
        "-D",
        "vacuum=1",
        "-c4",
        "-T5",
    ]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("\nquery mode: simple\n"),
        "{}",
        out.stdout
    );
    assert!(out
        .stdout
        .contains("\nnumber of failed transactions: 0 (0.000%)\n"));
    assert!(
        out.stderr.contains("checkpoint and vacuum done in "),
        "{}",
        out.stderr
    );
    assert_eq!(
        db.value(
            "select last_vacuum is not null from pg_stat_user_tables where relname = 'district'"
        ),
        "t"
    );
    check(&db, "mode=hammerdb", 1);
    // 200 warehouses: order_line in 2 hash partitions by warehouse.
    let parted = fresh_db("tpcc_partitions");
    let tables = schema::create_tables(Mode::Hammerdb, schema::order_line_partitions(true, 200));
    parted.psql(&tables.join(";\n"));
    assert_eq!(
        parted.value(
            "select partstrat::text || ' ' || (select count(*) from pg_inherits \
               where inhparent = 'order_line'::regclass) \
             from pg_partitioned_table where partrelid = 'order_line'::regclass"
        ),
        "h 2"
    );
}
