//! Simulated runs with known properties, for tests of everything that reads results
//! (document, compare, html) without a server: transactions whose latencies follow a
//! log-normal law around a chosen median, a throughput that wanders second to second
//! (an AR(1) drift plus independent noise, so neighbouring seconds are correlated as
//! on a real server),
//! failures, retries and schedule lag at chosen rates. Deterministic for a seed.

use crate::histogram::LatencyHistogram;
use crate::run::{
    CommandResult, Limit, MaxTries, Partitions, QueryMode, RunResult, RunSettings, ScriptResult,
};
use crate::series::SeriesRecorder;
use crate::stats::{CommandStats, StatsData, TxOutcome};

pub mod server;

/// What to simulate.
#[derive(Debug, Clone)]
pub struct Spec {
    pub seed: u64,
    pub seconds: i64,
    /// Mean successful transactions per second.
    pub tps: f64,
    /// Relative second-to-second wander of the throughput (0.05 = 5 %).
    pub tps_noise: f64,
    /// Median latency, µs; latencies are log-normal with `sigma`.
    pub latency_median_us: f64,
    pub sigma: f64,
    /// Fraction of transactions that fail for good (half serialization, half deadlock).
    pub failure_rate: f64,
    /// Fraction of transactions that needed a second try.
    pub retry_rate: f64,
    /// `(name, weight, commands)` per script; commands share the latency.
    pub scripts: Vec<(String, i64, Vec<String>)>,
    pub settings: RunSettings,
    /// `--partitions` as the setup phase found them.
    pub partitions: Option<Partitions>,
}

impl Spec {
    /// A `-T` run of the TPC-B-like builtin with `-c 4 -j 2`.
    pub fn tpcb(seed: u64, seconds: i64, tps: f64, latency_median_us: f64) -> Spec {
        Spec {
            seed,
            seconds,
            tps,
            tps_noise: 0.05,
            latency_median_us,
            sigma: 0.4,
            failure_rate: 0.0,
            retry_rate: 0.0,
            scripts: vec![(
                "<builtin: TPC-B (sort of)>".to_string(),
                1,
                vec![
                    "\\set aid random(1, 100000 * :scale)".to_string(),
                    "BEGIN;".to_string(),
                    "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;"
                        .to_string(),
                    "END;".to_string(),
                ],
            )],
            settings: RunSettings {
                clients: 4,
                threads: 2,
                limit: Limit::Duration(seconds),
                percentiles: Some(vec![50.0, 90.0, 99.0, 99.9, 99.99]),
                ..RunSettings::for_test()
            },
            partitions: None,
        }
    }
}

/// One spec per mode that changes the report or the document: `-T`, `-t`, `-R`,
/// `-L`, `--max-tries`, several scripts, `-r`, `-C`.
pub fn every_mode() -> Vec<(&'static str, Spec)> {
    let base = || Spec::tpcb(7, 5, 300.0, 1800.0);
    let mut t = base();
    t.settings.limit = Limit::Transactions(375);
    let mut rate = base();
    rate.settings.rate = Some(300.0);
    rate.settings.progress_s = Some(1);
    let mut late = rate.clone();
    late.settings.latency_limit_us = Some(2500);
    let mut limit_only = base();
    limit_only.settings.latency_limit_us = Some(2000);
    limit_only.settings.query_mode = QueryMode::Prepared;
    let mut tries = base();
    tries.settings.max_tries = MaxTries::Limited(5);
    tries.settings.failures_detailed = true;
    tries.failure_rate = 0.02;
    tries.retry_rate = 0.1;
    let mut unlimited = tries.clone();
    unlimited.settings.max_tries = MaxTries::Unlimited;
    let mut scripts = base();
    scripts.scripts = vec![
        ("a.sql".into(), 3, vec!["SELECT 1;".into()]),
        (
            "<builtin: select only>".into(),
            1,
            vec!["SELECT abalance FROM pgbench_accounts WHERE aid = :aid;".into()],
        ),
    ];
    let mut per_command = scripts.clone();
    per_command.settings.report_per_command = true;
    per_command.settings.max_tries = MaxTries::Limited(3);
    per_command.retry_rate = 0.05;
    let mut connect = base();
    connect.settings.reconnect = true;
    let mut partitioned = base();
    partitioned.partitions = Some(Partitions {
        method: "range".to_string(),
        count: 4,
    });
    let mut no_percentiles = base();
    no_percentiles.settings.percentiles = None;
    vec![
        ("-T", base()),
        ("-t", t),
        ("-R -P", rate),
        ("-R -L", late),
        ("-L -M prepared", limit_only),
        ("--max-tries --failures-detailed", tries),
        ("--max-tries=0", unlimited),
        ("several scripts", scripts),
        ("several scripts -r", per_command),
        ("-C", connect),
        ("--partitions", partitioned),
        ("no --latency-percentiles", no_percentiles),
    ]
}

/// splitmix64: small, seedable, good enough for simulated noise.
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.unit(), self.unit());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

fn empty_scripts(spec: &Spec) -> Vec<ScriptResult> {
    spec.scripts
        .iter()
        .map(|(name, weight, commands)| ScriptResult {
            desc: name.clone(),
            weight: *weight,
            stats: StatsData::default(),
            commands: commands
                .iter()
                .map(|c| CommandResult {
                    first_line: c.clone(),
                    stats: CommandStats::default(),
                })
                .collect(),
            histogram: Some(LatencyHistogram::new()),
        })
        .collect()
}

/// `-r`: the commands share the latency; the last one fails or is retried.
fn count_commands(script: &mut ScriptResult, latency: f64, ok: bool, tries: u32) {
    let last = script.commands.len().saturating_sub(1);
    let share = latency / 1e6 / (last + 1) as f64;
    for (ci, c) in script.commands.iter_mut().enumerate() {
        c.stats.elapsed.add(share);
        if !ok && ci == last {
            c.stats.failures += 1;
        }
        if tries > 1 && ci == last {
            c.stats.retries += 1;
        }
    }
}

/// Runs the simulation.
pub fn run(spec: &Spec) -> RunResult {
    let mut rng = SplitMix::new(spec.seed);
    let throttled = spec.settings.throttled();
    let mut total = StatsData::default();
    let mut hist = LatencyHistogram::new();
    let mut scripts = empty_scripts(spec);
    let total_weight: i64 = spec.scripts.iter().map(|s| s.1).sum();
    let mut series = SeriesRecorder::new(0);
    let mut late = 0;
    let mut wander = 0.0;
    for t in 0..spec.seconds {
        // A slow drift (correlated from second to second) plus independent noise.
        wander = 0.6 * wander + 0.6 * spec.tps_noise * rng.normal();
        let noise = 0.6 * spec.tps_noise * rng.normal();
        let n = (spec.tps * (1.0 + wander + noise)).max(0.0).round() as i64;
        for k in 0..n {
            let end_us = t * 1_000_000 + k * 1_000_000 / n.max(1);
            let latency = spec.latency_median_us * (spec.sigma * rng.normal()).exp();
            let lag = if throttled { 50.0 * rng.unit() } else { 0.0 };
            let tries = if rng.unit() < spec.retry_rate { 2 } else { 1 };
            let u = rng.unit();
            let outcome = if u < spec.failure_rate / 2.0 {
                TxOutcome::SerializationFailure
            } else if u < spec.failure_rate {
                TxOutcome::DeadlockFailure
            } else {
                TxOutcome::Success
            };
            let mut one = StatsData::default();
            one.accum(outcome, latency, lag, tries, throttled);
            let pick = (rng.unit() * total_weight as f64) as i64;
            let mut acc = 0;
            let si = spec
                .scripts
                .iter()
                .position(|s| {
                    acc += s.1;
                    pick < acc
                })
                .unwrap_or(0);
            let script = &mut scripts[si];
            script.stats.merge(&one);
            total.merge(&one);
            let ok = outcome == TxOutcome::Success;
            if ok {
                hist.record(latency);
                if let Some(h) = &mut script.histogram {
                    h.record(latency);
                }
                if spec
                    .settings
                    .latency_limit_us
                    .is_some_and(|l| latency > l as f64)
                {
                    late += 1;
                }
            }
            series.record(end_us, outcome, latency, lag, tries, throttled);
            if spec.settings.report_per_command {
                count_commands(script, latency, ok, tries);
            }
        }
    }

    RunResult {
        settings: spec.settings.clone(),
        scale: 1,
        partitions: spec.partitions.clone(),
        total,
        scripts,
        bench_duration_us: spec.seconds as f64 * 1e6 + 1234.5,
        conn_total_duration_us: if spec.settings.reconnect {
            total.counts.cnt as f64 * 2100.25
        } else {
            0.0
        },
        conn_elapsed_duration_us: 8123.456,
        latency_late: late,
        aborted_clients: 0,
        histogram: Some(hist),
        series: series.finish(spec.seconds * 1_000_000 - 1),
        warmup: None,
        workload: None,
        server: None,
        client_cpu: None,
        ended: Some(crate::run::ended::Ended::Completed),
        phases: Vec::new(),
        availability: None,
        scenarios: Vec::new(),
        stages: None,
        in_doubt: 0,
    }
}
