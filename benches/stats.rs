//! Micro-benchmarks of the stats thread and the report, without a server: recording a
//! batch of transactions as the collector does (counters, `-L` lateness, and with
//! `--latency-percentiles` the HDR histograms), a `progress:` line, and rendering the
//! final report with per-command latencies and percentiles; `--metrics-listen`'s
//! share of a batch and one scrape.
//!
//!   cargo bench -p pgbench-rs --bench stats

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pgbench_results::{
    report, CommandResult, Limit, QueryMode, RunResult, RunSettings, ScriptResult,
};
use pgbench_results::{CommandStats, LatencyHistogram, StatsData, TxOutcome};
use pgbench_rs::bench::collector::{Collected, CollectorPlan};
use pgbench_rs::bench::events::TxRecord;
use pgbench_rs::bench::progress::{progress_line, ProgressFormat};

/// What a client hands over at once (`BATCH_RECORDS`): latencies spread over
/// 0.2-20 ms, one transaction in 16 late for `-L 5`.
fn batch() -> Vec<TxRecord> {
    (0..64u32)
        .map(|i| TxRecord {
            script: i % 2,
            outcome: TxOutcome::Success,
            latency: 200.0 + f64::from(i * 37 % 64) * 310.0,
            lag: f64::from(i),
            tries: 1,
            end_us: i64::from(i) * 1_000,
        })
        .collect()
}

fn config(histograms: bool) -> CollectorPlan {
    CollectorPlan {
        clients: 256,
        scripts: 2,
        latency_limit_us: Some(5_000),
        throttled: true,
        histograms,
        series: false,
        exit_on_abort: false,
        phases: pgbench_rs::bench::phases::PhasePlan::default().anchored(0),
        duration_s: None,
        availability: None,
        stages: None,
    }
}

fn progress_format() -> ProgressFormat {
    ProgressFormat {
        timestamp: false,
        throttled: true,
        latency_limit: true,
        show_retries: false,
    }
}

fn record(c: &mut Criterion) {
    let records = batch();
    for (name, histograms) in [
        ("record 64 transactions", false),
        ("record 64 transactions with percentiles", true),
    ] {
        let cfg = config(histograms);
        let mut collected = Collected::new(&cfg, 0);
        c.bench_function(name, |b| {
            b.iter(|| {
                collected.record_batch(&cfg, black_box(&records));
            })
        });
    }
}

fn stats(n: i64, latency_us: f64) -> StatsData {
    let mut s = StatsData::default();
    for i in 0..n {
        s.accum(
            TxOutcome::Success,
            latency_us + (i % 100) as f64,
            50.0,
            1,
            true,
        );
    }
    s
}

fn progress(c: &mut Criterion) {
    let last = stats(10_000, 1_500.0);
    let mut cur = last;
    cur.merge(&stats(5_000, 1_800.0));
    c.bench_function("progress line", |b| {
        b.iter(|| progress_line(progress_format(), black_box(&cur), &last, 1e6, 12.0, 1.7e9))
    });
}

/// The report of a `-r --latency-percentiles` run of two weighted scripts of seven
/// commands each (tpcb-like's shape).
fn report() -> RunResult {
    let mut histogram = LatencyHistogram::new();
    for i in 0..100_000 {
        histogram.record(500.0 + f64::from(i % 5_000));
    }
    let script = |desc: &str| ScriptResult {
        desc: desc.into(),
        weight: 1,
        stats: stats(50_000, 2_000.0),
        commands: (0..7)
            .map(|i| {
                let mut cs = CommandStats::default();
                for j in 0..1_000 {
                    cs.elapsed.add(100.0 + f64::from(i * 10 + j % 7));
                }
                CommandResult {
                    first_line: format!("command {i}"),
                    stats: cs,
                }
            })
            .collect(),
        histogram: Some(histogram.clone()),
    };
    RunResult {
        settings: RunSettings {
            query_mode: QueryMode::Prepared,
            clients: 256,
            threads: 256,
            limit: Limit::Duration(3_900),
            progress_s: Some(1),
            report_per_command: true,
            percentiles: Some(vec![50.0, 90.0, 99.0, 99.9]),
            ..RunSettings::for_test()
        },
        scale: 100,
        partitions: None,
        total: stats(100_000, 2_000.0),
        bench_duration_us: 3.9e9,
        conn_total_duration_us: 0.0,
        conn_elapsed_duration_us: 250_000.0,
        latency_late: 0,
        aborted_clients: 0,
        scripts: vec![script("<builtin: TPC-B (sort of)>"), script("mix.sql")],
        histogram: Some(histogram.clone()),
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

fn render(c: &mut Criterion) {
    let r = report();
    c.bench_function("render report (-r, percentiles, 2 scripts)", |b| {
        b.iter(|| report::render(black_box(&r)))
    });
}

/// `--metrics-listen`: a batch into the live state (besides the collector's own
/// counting), and one scrape of two scripts with lag histograms (snapshot and text).
fn metrics(c: &mut Criterion) {
    use pgbench_rs::metrics::encode::{render, Format, Labels};
    use pgbench_rs::metrics::{Live, LivePlan};
    let live = Live::new(LivePlan {
        scripts: vec!["a".into(), "b".into()],
        weights: vec![1, 1],
        clients: 256,
        throttled: true,
        latency_limit_us: Some(5_000),
        limit: Limit::Duration(3_600),
        interval_us: 1_000_000,
        reconnecting: false,
    });
    live.started(0, None, 0);
    let records = batch();
    let per_script = [stats(10_000, 1_500.0), stats(10_000, 1_800.0)];
    c.bench_function("metrics: record 64 transactions", |b| {
        b.iter(|| live.record_batch(black_box(&records), &per_script, None))
    });
    let labels = Labels {
        worker: None,
        step: None,
        scripts: vec![("a".into(), 1), ("b".into(), 1)],
        scenarios: Vec::new(),
    };
    c.bench_function("metrics: scrape (2 scripts, -R)", |b| {
        b.iter(|| render(&labels, live.snapshot(1_000_000), Format::Text))
    });
}

criterion_group!(benches, record, progress, render, metrics);
criterion_main!(benches);
