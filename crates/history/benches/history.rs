//! The history's costs, with no server (a SQLite store in a temporary folder):
//! recording one run's results file (target: at most 50 ms, as it follows every
//! run), `list` over 100,000 stored runs and `regressions` over a 1,000-run series
//! (targets: at most 1 s each). Figures in benches/README.md.

use criterion::{criterion_group, criterion_main, Criterion};
use pgbench_history::changepoint::Options;
use pgbench_history::environment::Environment;
use pgbench_history::{regressions, Filter, Metric, RecordInput, Store};
use pgbench_results::summary::{PercentileSummary, Summary};
use pgbench_results::synthetic::{run, Spec};
use pgbench_results::{ResultsFile, RunMeta};
use std::time::Duration;

/// A small imported run's document (a report's figures, no histogram), started at
/// `t` seconds: what fills the big stores.
fn small(t: i64, tps: f64) -> ResultsFile {
    let mut d = ResultsFile::imported(
        vec!["run.log".into()],
        Summary {
            transaction_type: Some("<builtin: TPC-B (sort of)>".into()),
            scaling_factor: Some(100),
            clients: Some(32),
            threads: Some(8),
            tps: Some(tps),
            latency_avg_ms: Some(32_000.0 / tps),
            percentiles: Some(PercentileSummary {
                values: vec![(50.0, 2.0), (99.0, 9.0)],
                max_ms: 40.0,
                count: 1000,
            }),
            ..Summary::default()
        },
    );
    d.started_at = Some(pgbench_results::document::rfc3339_utc(t * 1_000_000));
    d
}

fn input(tags: &[(&str, &str)]) -> RecordInput {
    RecordInput {
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        command_line: vec!["pgbench-rs".into(), "-c".into(), "32".into()],
        environment: Environment {
            client: Some(Environment::client("pgbench-rs bench")),
            server: None,
        },
    }
}

fn store(dir: &tempfile::TempDir, name: &str) -> Store {
    Store::open(dir.path().join(name).to_str().unwrap()).unwrap()
}

fn history(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();

    // A 60-second run's whole file: histogram and per-second series (about 40 kB).
    let doc = ResultsFile::from_run(
        run(&Spec::tpcb(1, 60, 400.0, 2000.0)),
        RunMeta {
            started_unix_us: 1_764_578_627_000_000,
            ended_unix_us: 1_764_578_687_000_000,
            ..RunMeta::default()
        },
    );
    let mut s = store(&dir, "record.sqlite");
    c.bench_function("record one run (60 s results file)", |b| {
        b.iter(|| s.record(&doc, input(&[("branch", "main")])).unwrap())
    });

    let mut big = store(&dir, "big.sqlite");
    for batch in 0..10 {
        let runs: Vec<_> = (0..10_000)
            .map(|i| {
                let n = batch * 10_000 + i;
                let host = if n % 2 == 0 { "db1" } else { "db2" };
                (
                    small(n, 1000.0 + (n % 7) as f64),
                    input(&[("branch", "main"), ("host", host)]),
                )
            })
            .collect();
        big.record_all(&runs).unwrap();
    }
    let mut g = c.benchmark_group("100,000 stored runs");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("list, all", |b| {
        b.iter(|| big.list(&Filter::default()).unwrap().len())
    });
    let one_host = Filter {
        tags: vec![("host".into(), "db2".into())],
        since_us: Some(50_000 * 1_000_000),
        ..Filter::default()
    };
    g.bench_function("list --tag host=db2 --since (25,000 runs)", |b| {
        b.iter(|| big.list(&one_host).unwrap().len())
    });
    g.bench_function("list --limit 20", |b| {
        let newest = Filter {
            limit: Some(20),
            ..Filter::default()
        };
        b.iter(|| big.list(&newest).unwrap().len())
    });
    g.finish();

    let mut series = store(&dir, "series.sqlite");
    let runs: Vec<_> = (0..1000)
        .map(|i| {
            let tps = if i < 700 { 1000.0 } else { 900.0 }
                + [0.0, 9.0, -7.0, 4.0, -9.0, 6.0, -3.0][i % 7];
            (small(i as i64 * 600, tps), input(&[("branch", "main")]))
        })
        .collect();
    series.record_all(&runs).unwrap();
    let mut g = c.benchmark_group("1,000-run series");
    g.sample_size(10);
    g.bench_function("regressions (default metrics)", |b| {
        b.iter(|| {
            let found = regressions::search(
                &mut series,
                &Filter::default(),
                &regressions::DEFAULT_METRICS,
                Options::default(),
            )
            .unwrap();
            assert!(found.iter().any(|f| f.metric == Metric::Tps && f.gates()));
        })
    });
    g.finish();
}

criterion_group!(benches, history);
criterion_main!(benches);
