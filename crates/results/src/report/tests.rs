//! Report text, line for line, for the option sets that change it.

use super::*;
use crate::run::CommandResult;
use crate::stats::{CommandStats, TxOutcome};
use crate::workload::sysbench::SysbenchSummary;
use crate::workload::WorkloadResult;
use crate::LatencyHistogram;

fn base() -> RunResult {
    RunResult {
        settings: RunSettings {
            clients: 2,
            limit: Limit::Transactions(50),
            ..RunSettings::for_test()
        },
        scale: 2,
        partitions: None,
        total: StatsData::default(),
        scripts: vec![script(
            "<builtin: TPC-B (sort of)>",
            1,
            StatsData::default(),
        )],
        bench_duration_us: 0.0,
        conn_total_duration_us: 0.0,
        conn_elapsed_duration_us: 9143.0,
        latency_late: 0,
        aborted_clients: 0,
        histogram: None,
        series: Vec::new(),
        warmup: None,
        workload: None,
        server: None,
        client_cpu: None,
        ended: None,
        phases: Vec::new(),
        availability: None,
        scenarios: Vec::new(),
        stages: None,
        in_doubt: 0,
    }
}

fn script(desc: &str, weight: i64, stats: StatsData) -> ScriptResult {
    ScriptResult {
        desc: desc.into(),
        weight,
        stats,
        commands: vec![],
        histogram: None,
    }
}

fn successes(n: i64, latency_us: f64) -> StatsData {
    let mut s = StatsData::default();
    for _ in 0..n {
        s.accum(TxOutcome::Success, latency_us, 0.0, 1, false);
    }
    s
}

#[test]
fn t_mode_summary_as_pgbench_15_prints_it() {
    let mut r = base();
    r.total = successes(100, 1500.0);
    // 100 transactions in 78.5 ms with 2 clients: latency average 1.570 ms.
    r.bench_duration_us = 78_500.0;
    assert_eq!(
        render(&r),
        "transaction type: <builtin: TPC-B (sort of)>\n\
         scaling factor: 2\n\
         query mode: simple\n\
         number of clients: 2\n\
         number of threads: 1\n\
         maximum number of tries: 1\n\
         number of transactions per client: 50\n\
         number of transactions actually processed: 100/100\n\
         number of failed transactions: 0 (0.000%)\n\
         latency average = 1.570 ms\n\
         initial connection time = 9.143 ms\n\
         tps = 1273.885350 (without initial connection time)\n"
    );
}

#[test]
fn throttled_limited_t_mode_with_progress_measures_latency() {
    let mut r = base();
    r.settings.limit = Limit::Duration(2);
    r.settings.threads = 2;
    r.settings.rate = Some(100.0);
    r.settings.latency_limit_us = Some(5000);
    r.settings.progress_s = Some(1);
    let mut s = StatsData::default();
    s.accum(TxOutcome::Success, 1000.0, 100.0, 1, true);
    s.accum(TxOutcome::Success, 3000.0, 300.0, 1, true);
    r.total = s;
    r.bench_duration_us = 2_000_000.0;
    let text = render(&r);
    assert!(
        text.contains("duration: 2 s\nnumber of transactions actually processed: 2\n"),
        "{text}"
    );
    assert!(
        text.contains("number of transactions skipped: 0 (0.000%)\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "number of transactions above the 5.0 ms latency limit: 0/2 (0.000%)\n\
         latency average = 2.000 ms\n\
         latency stddev = 1.000 ms\n\
         rate limit schedule lag: avg 0.200 (max 0.300) ms\n"
        ),
        "{text}"
    );
}

#[test]
fn nothing_completed_prints_nan_and_stops() {
    let mut r = base();
    r.settings.limit = Limit::Transactions(3);
    r.bench_duration_us = 1000.0;
    let text = render(&r);
    assert!(
        text.ends_with(
            "number of transactions actually processed: 0/6\n\
         number of failed transactions: 0 (NaN%)\n"
        ),
        "{text}"
    );
}

#[test]
fn retries_failures_and_per_command_columns() {
    let mut r = base();
    r.settings.max_tries = MaxTries::Limited(3);
    r.settings.failures_detailed = true;
    r.settings.report_per_command = true;
    let mut s = StatsData::default();
    s.accum(TxOutcome::Success, 1000.0, 0.0, 2, false);
    s.accum(TxOutcome::SerializationFailure, 0.0, 0.0, 3, false);
    r.total = s;
    r.bench_duration_us = 1_000_000.0;
    r.scripts[0].commands = vec![CommandResult {
        first_line: "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;"
            .into(),
        stats: CommandStats {
            elapsed: SimpleStats {
                count: 2,
                min: 0.0004,
                max: 0.0005,
                sum: 0.000936,
                sum2: 0.0,
            },
            failures: 705,
            retries: 1412,
        },
    }];
    let text = render(&r);
    assert!(
        text.contains(
            "number of failed transactions: 1 (50.000%)\n\
         number of serialization failures: 1 (50.000%)\n\
         number of deadlock failures: 0 (0.000%)\n\
         number of transactions retried: 2 (100.000%)\n\
         total number of retries: 3\n\
         latency average = 1000.000 ms (including failures)\n"
        ),
        "{text}"
    );
    assert!(text.ends_with(
        "statement latencies in milliseconds, failures and retries:\n\
         \x20        0.468         705        1412  UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n"
    ), "{text}");
}

#[test]
fn connect_mode_reports_average_connection_time() {
    let mut r = base();
    r.settings.reconnect = true;
    r.total = successes(10, 1000.0);
    r.conn_total_duration_us = 22_870.0;
    r.bench_duration_us = 1_000_000.0;
    let text = render(&r);
    assert!(
        text.ends_with(
            "average connection time = 2.287 ms\ntps = 10.000000 (including reconnection times)\n"
        ),
        "{text}"
    );
}

#[test]
fn several_scripts_get_sections() {
    let mut r = base();
    r.total = successes(4, 1000.0);
    r.bench_duration_us = 1_000_000.0;
    r.scripts = vec![
        script("a.sql", 3, successes(3, 1000.0)),
        script("<builtin: select only>", 1, successes(1, 1000.0)),
    ];
    let text = render(&r);
    assert!(
        text.starts_with("transaction type: multiple scripts\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "SQL script 1: a.sql\n - weight: 3 (targets 75.0% of total)\n\
         \x20- 3 transactions (75.0% of total, tps = 3.000000)\n\
         \x20- number of failed transactions: 0 (0.000%)\n\
         \x20- latency average = 1.000 ms\n - latency stddev = 0.000 ms\n"
        ),
        "{text}"
    );
}

#[test]
fn percentiles_come_after_everything_pgbench_prints() {
    let mut r = base();
    r.total = successes(1, 1000.0);
    r.bench_duration_us = 1000.0;
    let mut h = LatencyHistogram::new();
    h.record(1000.0);
    r.histogram = Some(h);
    r.settings.percentiles = Some(vec![50.0, 99.9]);
    let text = render(&r);
    let tail = text
        .split("(without initial connection time)\n")
        .nth(1)
        .unwrap();
    assert_eq!(
        tail,
        "latency percentiles in milliseconds:\n  p50 = 1.000\n  p99.9 = 1.000\n  max = 1.000\n"
    );
}

#[test]
fn special_values_print_like_postgres_snprintf() {
    assert_eq!(fmt_f(f64::NAN, 3), "NaN");
    assert_eq!(fmt_f(f64::INFINITY, 6), "Infinity");
    assert_eq!(fmt_f(-f64::INFINITY, 1), "-Infinity");
    assert_eq!(fmt_f(0.0005, 3), "0.001");
}

/// #33: a workload's report said `scaling factor: 1`, which means nothing there. A
/// TPC-C run counts warehouses, a sysbench one tables of a size; pgbench's own
/// scripts keep pgbench's line.
#[test]
fn a_workload_shows_its_own_scale_in_place_of_the_scaling_factor() {
    let header = |r: &RunResult| render(r).lines().take(4).collect::<Vec<_>>().join("\n");
    let mut r = base();
    assert!(header(&r).contains("\nscaling factor: 2\nquery mode: simple"));
    r.workload = Some(WorkloadResult::Tpcc(crate::workload::tpcc::TpccResult {
        new_orders_committed: 0,
        server: None,
        profile: Vec::new(),
        server_lost: None,
        layout: Default::default(),
    }));
    assert!(
        header(&r).contains("\nwarehouses: 2\nquery mode: simple"),
        "{}",
        header(&r)
    );
    let sysbench = SysbenchSummary {
        percentile: 95,
        queries: Default::default(),
        tables: Some(8),
        table_size: Some(450_000),
    };
    r.workload = Some(WorkloadResult::Sysbench(sysbench));
    assert!(
        header(&r).contains("\ntables: 8\ntable size: 450000\nquery mode: simple"),
        "{}",
        header(&r)
    );
    // A file written before the tables were kept shows what it showed then.
    r.workload = Some(WorkloadResult::Sysbench(SysbenchSummary {
        tables: None,
        table_size: None,
        ..sysbench
    }));
    assert!(header(&r).contains("\nscaling factor: 2\n"));
}
