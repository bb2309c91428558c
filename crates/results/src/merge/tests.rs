//! The merge on hand-built results: a run's transactions split among workers merge
//! into exactly the result of the whole run built by the runner's own recording code
//! (StatsData::accum, SeriesRecorder::record_batch, LatencyCounts), and files of
//! different runs, missing workers, runs cut short and outliers are told apart.

use super::*;
use crate::document::WorkerInfo;
use crate::histogram::LatencyCounts;
use crate::run::{CommandResult, Limit, MaxTries, QueryMode, RunSettings, ScriptResult};
use crate::series::SeriesRecorder;
use crate::stats::{StatsData, TxOutcome, TxRecord};
use crate::synthetic::SplitMix;

fn settings(clients: usize) -> RunSettings {
    RunSettings {
        query_mode: QueryMode::Prepared,
        clients,
        threads: clients,
        limit: Limit::Duration(3),
        percentiles: Some(vec![50.0, 90.0, 99.0, 99.9]),
        ..RunSettings::for_test()
    }
}

/// One client's transactions, in batches as it sends them.
type Client = Vec<Vec<TxRecord>>;

/// Integer µs latencies and lags: every sum is exact in f64 whatever its order, so
/// the merge must give the very same bits.
fn clients(seed: u64, n: usize, set: &RunSettings, scripts: u32) -> Vec<Client> {
    let mut rng = SplitMix::new(seed);
    (0..n)
        .map(|c| {
            let mut t = (c as i64) * 137;
            let mut batches = Vec::new();
            while t < 3_000_000 {
                let size = 1 + rng.next_u64() % 9;
                let mut batch = Vec::new();
                for _ in 0..size {
                    // A slow client here and there: latencies from 0.2 to 60 ms.
                    let latency = (200 + rng.next_u64() % 60_000 / (1 + c as u64 % 2)) as f64;
                    let lag = if set.throttled() {
                        (rng.next_u64() % 4_000) as f64
                    } else {
                        0.0
                    };
                    let u = rng.unit();
                    let tries = if !set.max_tries.is_single() && u < 0.1 {
                        2
                    } else {
                        1
                    };
                    let outcome = match u {
                        u if u < 0.02 && !set.max_tries.is_single() => {
                            TxOutcome::SerializationFailure
                        }
                        u if u < 0.03 && !set.max_tries.is_single() => TxOutcome::DeadlockFailure,
                        u if u > 0.97 && set.latency_limit_us.is_some() && set.throttled() => {
                            TxOutcome::Skipped
                        }
                        _ => TxOutcome::Success,
                    };
                    t += latency as i64 + (rng.next_u64() % 2_000) as i64;
                    batch.push(TxRecord {
                        script: (rng.next_u64() % u64::from(scripts)) as u32,
                        outcome,
                        latency: if outcome == TxOutcome::Success {
                            latency
                        } else {
                            0.0
                        },
                        lag,
                        tries,
                        end_us: t,
                    });
                }
                batches.push(batch);
            }
            batches
        })
        .collect()
}

/// The result of the clients numbered `ids`, recorded as the runner's collector
/// records (batches in the order they end, the series from `record_batch`, the run's
/// latencies summed from the closed seconds).
fn result_of(all: &[Client], ids: &[usize], set: &RunSettings, scripts: u32) -> RunResult {
    let throttled = set.throttled();
    let mut order: Vec<(i64, usize, &Vec<TxRecord>)> = ids
        .iter()
        .flat_map(|&c| all[c].iter().map(move |b| (b.last().unwrap().end_us, c, b)))
        .collect();
    order.sort_by_key(|&(end, c, _)| (end, c));
    let mut total = StatsData::default();
    let mut per_script = vec![StatsData::default(); scripts as usize];
    let mut script_latencies = vec![LatencyCounts::new(); scripts as usize];
    let mut commands = vec![vec![crate::stats::CommandStats::default(); 2]; scripts as usize];
    let mut series = SeriesRecorder::keeping_run_latencies(0);
    let (mut late, mut end) = (0, 0);
    for &(_, _, batch) in &order {
        let before = total;
        for r in batch {
            total.accum(r.outcome, r.latency, r.lag, r.tries, throttled);
            let s = r.script as usize;
            per_script[s].accum(r.outcome, r.latency, r.lag, r.tries, throttled);
            if r.outcome == TxOutcome::Success {
                script_latencies[s].record(r.latency);
                // -r: the two commands share the latency (powers of two: exact).
                commands[s][0].elapsed.add(r.latency / 1_048_576.0);
                commands[s][1].elapsed.add(r.latency / 2_097_152.0);
                late += i64::from(set.latency_limit_us.is_some_and(|l| r.latency > l as f64));
            } else if r.outcome != TxOutcome::Skipped {
                commands[s][1].failures += 1;
            }
            commands[s][1].retries += i64::from(r.tries - 1);
            end = end.max(r.end_us);
        }
        series.record_batch(batch, throttled, (&before, &total));
    }
    let (seconds, run_latencies) = series.finish_with_run_latencies(end);
    let mut set = set.clone();
    set.clients = ids.len();
    set.threads = ids.len();
    let reconnect = set.reconnect;
    RunResult {
        settings: set,
        scale: 10,
        partitions: None,
        total,
        scripts: (0..scripts as usize)
            .map(|s| ScriptResult {
                desc: format!("s{s}.sql"),
                weight: 1 + s as i64,
                stats: per_script[s],
                commands: ["\\set aid random(1, 100)", "SELECT :aid;"]
                    .iter()
                    .zip(&commands[s])
                    .map(|(l, st)| CommandResult {
                        first_line: l.to_string(),
                        stats: *st,
                    })
                    .collect(),
                histogram: Some(script_latencies[s].to_histogram()),
            })
            .collect(),
        bench_duration_us: (end + 17) as f64,
        conn_total_duration_us: if reconnect {
            250.0 * total.total() as f64
        } else {
            0.0
        },
        conn_elapsed_duration_us: 4_321.0,
        latency_late: late,
        aborted_clients: 0,
        histogram: run_latencies.map(|l| l.to_histogram()),
        series: seconds,
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

fn worker(index: u32, count: u32, first_client: u32) -> WorkerInfo {
    WorkerInfo {
        index,
        count,
        run_id: "run-7".to_string(),
        start_unix_us: 1_764_583_200_000_000,
        first_client,
    }
}

/// A worker's file: its result and the options its command line would give.
fn worker_doc(run: RunResult, info: WorkerInfo) -> ResultsFile {
    let mut meta = crate::document::RunMeta {
        random_seed: 42,
        started_unix_us: info.start_unix_us,
        ended_unix_us: info.start_unix_us + run.bench_duration_us as i64,
        worker: Some(info.clone()),
        ..Default::default()
    };
    let o = &mut meta.options;
    o.insert("client".into(), run.settings.clients.into());
    o.insert("jobs".into(), run.settings.threads.into());
    o.insert("time".into(), 3.into());
    o.insert(
        "worker".into(),
        format!("{}/{}", info.index, info.count).into(),
    );
    o.insert("protocol".into(), "prepared".into());
    ResultsFile::from_run(run, meta)
}

/// The workers' files for a split of `all` into consecutive client ranges.
fn split(
    all: &[Client],
    sizes: &[usize],
    set: &RunSettings,
    scripts: u32,
) -> Vec<(String, ResultsFile)> {
    let mut first = 0;
    sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let ids: Vec<usize> = (first..first + n).collect();
            let run = result_of(all, &ids, set, scripts);
            let doc = worker_doc(run, worker(i as u32, sizes.len() as u32, first as u32));
            first += n;
            (format!("w{i}.json"), doc)
        })
        .collect()
}

fn modes() -> Vec<(&'static str, RunSettings, u32)> {
    let mut rate = settings(1);
    rate.rate = Some(50.0);
    rate.latency_limit_us = Some(30_000);
    let mut tries = settings(1);
    tries.max_tries = MaxTries::Limited(3);
    tries.failures_detailed = true;
    tries.progress_s = Some(1);
    let mut per_command = settings(1);
    per_command.report_per_command = true;
    per_command.reconnect = true;
    vec![
        ("-T", settings(1), 1),
        ("-R -L", rate, 1),
        ("--max-tries -P", tries, 1),
        ("two scripts -r -C", per_command, 2),
    ]
}

#[test]
fn a_run_split_among_workers_merges_into_exactly_the_whole_run() {
    for (mode, set, scripts) in modes() {
        let all = clients(11, 7, &set, scripts);
        let ids: Vec<usize> = (0..7).collect();
        let mut whole = result_of(&all, &ids, &set, scripts);
        // Each of the 3 workers throttles its clients to its own -R.
        whole.settings.rate = set.rate.map(|r| 3.0 * r);
        let files = split(&all, &[3, 1, 3], &set, scripts);
        let merged = merge(&files).unwrap_or_else(|e| panic!("{mode}: {e}"));
        let m = merged.run.as_ref().unwrap();
        assert_eq!(m.settings, whole.settings, "{mode}");
        assert_eq!(m.total, whole.total, "{mode}: sums are exact");
        assert_eq!(m.scripts, whole.scripts, "{mode}: per script and -r");
        assert_eq!(m.histogram, whole.histogram, "{mode}: bucket for bucket");
        assert_eq!(m.latency_late, whole.latency_late, "{mode}");
        assert_eq!(m.bench_duration_us, whole.bench_duration_us, "{mode}");
        assert_eq!(
            m.conn_total_duration_us, whole.conn_total_duration_us,
            "{mode}"
        );
        assert_eq!(
            crate::report::render(m),
            crate::report::render(&whole),
            "{mode}: the report of one process with all the clients"
        );
        assert_eq!(merged.summary, Summary::from_run(&whole), "{mode}");
        assert_eq!(m.series.len(), whole.series.len(), "{mode}");
        for (a, b) in m.series.iter().zip(&whole.series) {
            let (mut a2, mut b2) = (a.clone(), b.clone());
            (a2.quantiles_us, b2.quantiles_us) = (None, None);
            assert_eq!(a2, b2, "{mode}: second {}", a.t);
            // A second's percentiles: an upper bound of the whole's.
            if let (Some(qa), Some(qb)) = (a.quantiles_us, b.quantiles_us) {
                assert!(
                    qa.iter().zip(&qb).all(|(x, y)| x >= y),
                    "{mode}: {qa:?} {qb:?}"
                );
            }
        }
        let record = merged.merge.as_ref().unwrap();
        assert!(!record.incomplete && record.missing.is_empty(), "{mode}");
        // Uneven splits of uneven clients may flag a worker, nothing else.
        let warnings = record.warnings();
        assert!(
            warnings.iter().all(|w| w.contains("throughput per client")),
            "{mode}: {warnings:?}"
        );
        assert_eq!(merged.options["client"], 7, "{mode}");
        assert!(!merged.options.contains_key("worker"), "{mode}");
    }
}

#[test]
fn percentiles_equal_those_of_every_latency_together_to_the_histograms_precision() {
    let set = settings(1);
    let all = clients(5, 6, &set, 1);
    let files = split(&all, &[2, 2, 2], &set, 1);
    let merged = merge(&files).unwrap();
    let mut latencies: Vec<f64> = all
        .iter()
        .flatten()
        .flatten()
        .filter(|r| r.outcome == TxOutcome::Success)
        .map(|r| r.latency)
        .collect();
    latencies.sort_by(f64::total_cmp);
    let h = merged.run.unwrap().histogram.unwrap();
    assert_eq!(h.len(), latencies.len() as u64);
    for q in [0.5, 0.9, 0.99, 0.999] {
        let exact = latencies[((q * latencies.len() as f64).ceil() as usize).max(1) - 1];
        let got = h.value_at_quantile(q) as f64;
        // 3 significant digits: within 0.1% above the exact value.
        assert!(
            got >= exact && got <= exact * 1.001 + 1.0,
            "q {q}: {got} vs {exact}"
        );
    }
}

fn three() -> Vec<(String, ResultsFile)> {
    let set = settings(1);
    split(&clients(3, 6, &set, 1), &[2, 2, 2], &set, 1)
}

fn refused(files: &[(String, ResultsFile)]) -> String {
    match merge(files) {
        Ok(_) => panic!("merged files of different runs"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn files_of_different_runs_are_refused_naming_the_files_and_the_field() {
    type Edit = fn(&mut ResultsFile);
    let edits: [(Edit, &str); 8] = [
        (
            |d| d.worker = None,
            "w1.json: not a worker's results file: it has no \"worker\" field",
        ),
        (
            |d| d.random_seed = Some(43),
            "w0.json and w1.json are not of the same run: \"random_seed\" differs (42 against 43)",
        ),
        (
            |d| {
                d.options.insert("protocol".into(), "simple".into());
            },
            "\"options.protocol\" differs (\"prepared\" against \"simple\")",
        ),
        (
            |d| d.worker.as_mut().unwrap().run_id = "run-8".into(),
            "\"worker.run_id\" differs (run-7 against run-8)",
        ),
        (
            |d| d.worker.as_mut().unwrap().count = 4,
            "\"worker.count\" differs (3 against 4)",
        ),
        (
            |d| d.worker.as_mut().unwrap().start_unix_us += 1,
            "\"worker.start_unix_us\" differs",
        ),
        (
            |d| d.run.as_mut().unwrap().settings.query_mode = QueryMode::Simple,
            "\"run.settings\" differs",
        ),
        (|d| d.run = None, "w1.json: has no exact counters"),
    ];
    for (edit, message) in edits {
        let mut files = three();
        edit(&mut files[1].1);
        let e = refused(&files);
        assert!(e.contains(message), "{e}");
    }
    let mut files = three();
    files[2].1.worker.as_mut().unwrap().index = 1;
    assert_eq!(
        refused(&files),
        "w1.json and w2.json are both worker 1 (\"worker.index\")"
    );
    let mut files = three();
    files[2].1.worker.as_mut().unwrap().first_client = 3;
    assert!(refused(&files).contains("w1.json and w2.json ran some of the same clients"));
    let mut files = three();
    files[0].1.worker.as_mut().unwrap().index = 5;
    assert!(refused(&files).contains("\"worker.index\" is 5, not below \"worker.count\" 3"));
    assert_eq!(refused(&[]), "merge needs at least one results file");
    // What each worker may choose for itself is not a difference of runs.
    let mut files = three();
    files[1]
        .1
        .options
        .insert("log-prefix".into(), "/var/log/w1".into());
    files[2].1.options.insert("debug".into(), true.into());
    assert!(merge(&files).is_ok());
}

#[test]
fn a_missing_worker_is_named_and_the_rest_merged_as_incomplete() {
    let mut files = three();
    let gone = files.remove(1);
    let merged = merge(&files).unwrap();
    let record = merged.merge.as_ref().unwrap();
    assert_eq!(record.missing, vec![1]);
    assert!(record.incomplete);
    let warnings = record.warnings();
    assert_eq!(warnings[0], "worker 1 of 3 is missing");
    assert!(
        warnings
            .last()
            .unwrap()
            .contains("incomplete: it covers 2 of 3 workers"),
        "{warnings:?}"
    );
    let run = merged.run.as_ref().unwrap();
    let expect: i64 = files
        .iter()
        .map(|(_, d)| d.run.as_ref().unwrap().total.counts.cnt)
        .sum();
    assert_eq!(run.total.counts.cnt, expect);
    assert_eq!(run.settings.clients, 4);
    assert!(gone.1.run.unwrap().total.counts.cnt > 0);
    let table = table::render(record);
    assert!(table.contains("2 of 3 workers of run run-7"), "{table}");
    assert!(
        table.lines().any(|l| l.trim() == "1  missing: no file"),
        "{table}"
    );
    // Through JSON and back, the record stays.
    let back = ResultsFile::from_json(&merged.to_json()).unwrap();
    assert_eq!(back.merge, merged.merge);
}

#[test]
fn a_worker_cut_short_is_reported_and_makes_the_result_incomplete() {
    let mut files = three();
    files[0].1.run.as_mut().unwrap().aborted_clients = 1;
    files[2].1.run.as_mut().unwrap().bench_duration_us = 1_400_000.0;
    let merged = merge(&files).unwrap();
    let record = merged.merge.unwrap();
    assert!(record.incomplete && record.missing.is_empty());
    let w = record.warnings();
    assert!(
        w.contains(&"worker 0 (w0.json) was cut short: 1 of its 2 clients aborted".to_string()),
        "{w:?}"
    );
    assert!(
        w.contains(
            &"worker 2 (w2.json) was cut short: it stopped 1.4 s into its -T 3 s".to_string()
        ),
        "{w:?}"
    );
    assert_eq!(merged.run.unwrap().aborted_clients, 1);
    let mut t = three();
    let run = t[1].1.run.as_mut().unwrap();
    run.settings.limit = Limit::Transactions(1_000_000);
    assert!(check::cut_short(run).unwrap().starts_with("it processed "));
}

#[test]
fn a_worker_whose_clients_do_less_or_lag_is_flagged() {
    let mut files = three();
    // Worker 1's clients did half the work: its machine could not keep up.
    let run = files[1].1.run.as_mut().unwrap();
    run.total.counts.cnt /= 2;
    let merged = merge(&files).unwrap();
    let record = merged.merge.unwrap();
    assert!(
        record.workers[1].flags[0].starts_with("throughput per client"),
        "{:?}",
        record.workers
    );
    assert!(record.workers[0].flags.is_empty() && record.workers[2].flags.is_empty());
    assert!(table::render(&record).contains("low tps/client"));
    // Under -R, the lag tells.
    let mut set = settings(1);
    set.rate = Some(100.0);
    let mut files = split(&clients(3, 6, &set, 1), &[2, 2, 2], &set, 1);
    let lag = &mut files[2].1.run.as_mut().unwrap().total.lag;
    lag.sum *= 5.0;
    lag.sum += 5_000.0 * lag.count as f64;
    let record = merge(&files).unwrap().merge.unwrap();
    assert!(
        record.workers[2]
            .flags
            .iter()
            .any(|f| f.starts_with("schedule lag")),
        "{:?}",
        record.workers[2]
    );
    assert!(record.workers[0].flags.is_empty());
}

#[test]
fn merged_and_worker_files_validate_against_the_schema_and_read_back_equal() {
    let v = crate::document::tests::validator();
    let mut files = three();
    files.remove(1);
    files[0].1.run.as_mut().unwrap().aborted_clients = 1;
    let mut set = settings(1);
    set.rate = Some(100.0);
    for (what, files) in [
        ("incomplete", files),
        ("-R", split(&clients(3, 4, &set, 1), &[2, 2], &set, 1)),
    ] {
        crate::document::tests::assert_valid(&v, what, &files[0].1.to_json());
        let merged = merge(&files).unwrap();
        let json = merged.to_json();
        crate::document::tests::assert_valid(&v, what, &json);
        assert_eq!(ResultsFile::from_json(&json).unwrap(), merged, "{what}");
        // The workers' files as written (a lone script's histogram once, as the
        // run's) merge as the results they were written from.
        let read: Vec<(String, ResultsFile)> = files
            .iter()
            .map(|(name, doc)| {
                (
                    name.clone(),
                    ResultsFile::from_json(&doc.to_json()).unwrap(),
                )
            })
            .collect();
        assert_eq!(read, files, "{what}");
        assert_eq!(
            merge(&read).unwrap(),
            merged,
            "{what}: merged from the files"
        );
        assert!(merged.run.unwrap().scripts[0].histogram.is_some(), "{what}");
    }
}

#[test]
fn implausible_numbers_are_refused_naming_the_file_and_the_field() {
    type Edit = fn(&mut ResultsFile);
    let edits: [(Edit, &str); 6] = [
        (
            // Each worker would be listed as missing: 400 MB for nothing.
            |d| d.worker.as_mut().unwrap().count = 100_000_000,
            "w1.json: \"worker.count\" is 100000000: more workers than a PostgreSQL server takes connections",
        ),
        (
            |d| d.run.as_mut().unwrap().total.counts.cnt = -5,
            "w1.json: \"run.total.cnt\" is -5: negative",
        ),
        (
            |d| d.run.as_mut().unwrap().scripts[0].stats.latency.count = -1,
            "w1.json: \"run.scripts[].stats.latency.count\" is -1: negative",
        ),
        (
            |d| d.worker.as_mut().unwrap().first_client = u32::MAX - 1,
            "w1.json: \"options.client\" is 2: not a client count",
        ),
        (
            // #38: the sum wrapped, and the merged run had 1 client.
            |d| d.run.as_mut().unwrap().settings.clients = usize::MAX,
            "w1.json: \"options.client\" is 18446744073709551615: not a client count",
        ),
        (
            |d| d.run.as_mut().unwrap().settings.threads = usize::MAX,
            "w1.json: \"options.jobs\" is 18446744073709551615: not a thread count",
        ),
    ];
    for (edit, message) in edits {
        let mut files = three();
        edit(&mut files[1].1);
        let e = refused(&files);
        assert!(e.contains(message), "{e}");
    }
}

/// One worker's outage window beginning at `first_failure_unix_us`.
fn outage(first_failure_unix_us: i64, clients: usize) -> crate::availability::Outage {
    crate::availability::Outage {
        last_success_before_unix_us: Some(first_failure_unix_us - 1_000),
        first_failure_unix_us,
        first_success_after_unix_us: Some(first_failure_unix_us + 2_000_000),
        all_back_unix_us: Some(first_failure_unix_us + 2_500_000),
        clients,
        failed_transactions: 3,
        in_doubt: 1,
        reconnects: clients as i64,
        gave_up: 0,
        seen_until_unix_us: None,
        tps_before: Some(100.0),
        back_to_95_unix_us: Some(first_failure_unix_us + 3_000_000),
    }
}

fn availability(
    from: i64,
    failed: &[(&str, i64)],
    outages: Vec<crate::availability::Outage>,
) -> crate::availability::Availability {
    crate::availability::Availability {
        reconnect_timeout_s: 30.0,
        backoff_max_ms: 200,
        measured_from_unix_us: from,
        reconnects: outages.iter().map(|o| o.reconnects).sum(),
        gave_up: 1,
        in_doubt: outages.iter().map(|o| o.in_doubt).sum(),
        failed: failed.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
        outages,
    }
}

/// Two `--reconnect` workers' availability blocks merge: their counts summed, each
/// worker's outage windows kept (overlapping ones too), in order of first failure;
/// nothing is noted as not combined.
#[test]
fn workers_availability_blocks_merge_with_every_workers_outages() {
    let mut files = three();
    files.truncate(2);
    let (w0, w1) = (1_000_000_000, 1_000_000_500);
    files[0].1.run.as_mut().unwrap().availability = Some(availability(
        w0,
        &[("08006", 4), ("57P01", 2)],
        vec![outage(w0 + 5_000_000, 2), outage(w0 + 20_000_000, 1)],
    ));
    files[1].1.run.as_mut().unwrap().availability = Some(availability(
        w1,
        &[("08006", 3)],
        vec![outage(w0 + 4_000_000, 2)],
    ));
    let (merged, notes) = merge_noting(&files).unwrap();
    assert_eq!(notes, []);
    let a = merged
        .run
        .clone()
        .unwrap()
        .availability
        .expect("the block is kept");
    assert_eq!(a.measured_from_unix_us, w0);
    assert_eq!((a.reconnects, a.gave_up, a.in_doubt), (5, 2, 3));
    let failed: Vec<(&str, i64)> = a.failed.iter().map(|(s, n)| (s.as_str(), *n)).collect();
    assert_eq!(failed, [("08006", 7), ("57P01", 2)]);
    let starts: Vec<i64> = a
        .outages
        .iter()
        .map(|o| o.first_failure_unix_us - w0)
        .collect();
    assert_eq!(starts, [4_000_000, 5_000_000, 20_000_000]);
    // The merged file's report prints the block.
    assert!(
        crate::show::render(&merged).contains("outage"),
        "the merged report shows the outages"
    );
}

/// What the merge cannot combine it says: a worker's file without its histogram
/// leaves the merged run none, and the note says why.
#[test]
fn a_section_the_merge_cannot_combine_is_noted_with_why() {
    let mut files = three();
    files[2].1.run.as_mut().unwrap().histogram = None;
    let (merged, notes) = merge_noting(&files).unwrap();
    assert_eq!(merged.run.unwrap().histogram, None);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        (notes[0].section, notes[0].kept),
        ("histogram", Kept::Dropped)
    );
    assert!(
        notes[0]
            .to_string()
            .starts_with("merged histogram: dropped: a worker's file has none"),
        "{}",
        notes[0]
    );
}

/// sysbench's parts merge: the queries of every worker counted.
#[test]
fn workers_sysbench_parts_merge_with_their_queries_added() {
    use crate::workload::sysbench::{QueryCounts, SysbenchSummary};
    use crate::workload::WorkloadResult;
    let mut files = three();
    for (i, (_, d)) in files.iter_mut().enumerate() {
        let n = 10 * (i as i64 + 1);
        d.run.as_mut().unwrap().workload = Some(WorkloadResult::Sysbench(SysbenchSummary {
            percentile: 95,
            queries: QueryCounts {
                read: n,
                write: 2 * n,
                other: 3,
                errors: 1,
                reconnects: 0,
            },
            tables: Some(2),
            table_size: Some(1000),
        }));
    }
    let (merged, notes) = merge_noting(&files).unwrap();
    assert_eq!(notes, []);
    let Some(WorkloadResult::Sysbench(s)) = merged.run.unwrap().workload else {
        panic!("no sysbench part");
    };
    assert_eq!(
        s.queries,
        QueryCounts {
            read: 60,
            write: 120,
            other: 9,
            errors: 3,
            reconnects: 0
        }
    );
}
