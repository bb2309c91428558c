//! `--scenarios`: a run of several groups of clients, each with its own scripts, `-R`
//! rate and connection target (the plan's [`super::plan::ScenarioPlan`]s), under one
//! gate and one collector. A plan without scenarios is one group of all its clients,
//! threads and scripts, so the engine chooses, schedules and connects through
//! [`Group`] either way (`launch::deal` deals each scenario's clients to its threads).
//!
//! Each scenario owns a range of the plan's scripts and its clients run only those,
//! so a transaction's script says its scenario: the per-scenario figures are the sums
//! of its scripts' ([`results`]), as the collector already keeps them per script.

use super::error::RunError;
use super::plan::BenchPlan;
use super::stages::{StageClock, StagePlan};
use pgbench_results::scenarios::ScenarioResult;
use pgbench_results::{LatencyHistogram, RunResult, StatsData};
use pgbench_wire::{ConnError, ConnectArgs, ConnectOptions};
use std::sync::OnceLock;

/// What the clients of one group share while they run (one per scenario, or one for
/// the whole of a run without scenarios).
#[derive(Debug)]
pub struct Group {
    pub conn_opts: ConnectOptions,
    /// The weight of each of the plan's scripts for its clients (0 outside the group).
    pub weights: Vec<i64>,
    /// The group's only script, which needs no draw.
    pub lone_script: Option<usize>,
    /// The mean gap between two `-R` transactions of one of its threads, µs.
    pub throttle_delay_us: Option<f64>,
    /// A scenario's stages, and where they sit on the run clock once `-T`'s deadline
    /// is set ([`Group::place_stages`]).
    pub stages: Option<(StagePlan, OnceLock<StageClock>)>,
    /// The run's index of its first client: its clients' order under `client_stages`.
    pub first_client: usize,
}

impl Group {
    /// Sets its stages on the run clock: they end at the `-T` deadline `end_us`.
    pub fn place_stages(&self, end_us: i64) {
        if let Some((stages, clock)) = &self.stages {
            let _ = clock.set(stages.on_clock(end_us));
        }
    }

    /// Its `rate_stages` on the run clock, once placed.
    pub fn rate_stages(&self) -> Option<(&super::stages::RateProfile, i64)> {
        match &self.stages {
            Some((StagePlan::Rate(p), clock)) => clock.get().map(|c| (p, c.origin_us)),
            _ => None,
        }
    }
}

/// The groups of a run: each scenario's, or the plan's one; `conn_opts` are the
/// command line's, which a scenario's `conninfo` takes from.
pub fn groups(
    plan: &BenchPlan,
    conn_args: &ConnectArgs,
    conn_opts: &ConnectOptions,
) -> Result<Vec<Group>, RunError> {
    let all_weights: Vec<i64> = plan.scripts.iter().map(|s| s.weight).collect();
    if plan.scenarios.is_empty() {
        return Ok(vec![Group {
            conn_opts: conn_opts.clone(),
            lone_script: (plan.scripts.len() == 1).then_some(0),
            weights: all_weights,
            throttle_delay_us: plan.throttle_delay_us(),
            stages: None,
            first_client: 0,
        }]);
    }
    let mut first_client = 0;
    plan.scenarios
        .iter()
        .map(|s| {
            let first = first_client;
            first_client += s.clients;
            let conn_opts = match &s.conninfo {
                Some(conninfo) => scenario_options(conninfo, conn_args).map_err(|source| {
                    RunError::ScenarioConnect {
                        scenario: s.name.clone(),
                        source,
                    }
                })?,
                None => conn_opts.clone(),
            };
            Ok(Group {
                conn_opts,
                weights: all_weights
                    .iter()
                    .enumerate()
                    .map(|(i, &w)| if s.scripts.contains(&i) { w } else { 0 })
                    .collect(),
                lone_script: (s.scripts.len() == 1).then_some(s.scripts.start),
                // pgbench's order: 1e6 / rate, then times the threads. Under
                // rate_stages the profile draws the gaps: the schedule is on, its
                // delay unused.
                throttle_delay_us: match (&s.stages, s.rate) {
                    (_, Some(r)) => Some(1_000_000.0 / r * s.threads as f64),
                    (Some(StagePlan::Rate(_)), None) => Some(f64::INFINITY),
                    _ => None,
                },
                stages: s.stages.clone().map(|st| (st, OnceLock::new())),
                first_client: first,
            })
        })
        .collect()
}

/// A scenario's connection options: its conninfo over the command line's `-h`, `-p`,
/// `-U` and password, as libpq takes a conninfo given as the database name. The
/// command line's database stays where a `key=value` conninfo names none.
pub fn scenario_options(conninfo: &str, args: &ConnectArgs) -> Result<ConnectOptions, ConnError> {
    let keywords = !conninfo.contains("://");
    let dbname = match (&args.dbname, keywords && conninfo.contains('=')) {
        // A conninfo as the command line's database: libpq expands the first only.
        (Some(d), true) if !d.contains('=') && !d.contains("://") => {
            format!(
                "dbname='{}' {conninfo}",
                d.replace('\\', "\\\\").replace('\'', "\\'")
            )
        }
        _ => conninfo.to_string(),
    };
    ConnectOptions::from_args(&ConnectArgs {
        dbname: Some(dbname),
        ..args.clone()
    })
}

/// Where a group's clients connect, as the report names it: its hosts and ports, and
/// the kind of server it asks for.
pub fn target(opts: &ConnectOptions) -> String {
    let hosts: Vec<String> = opts
        .hosts()
        .into_iter()
        .map(|(host, port)| {
            let port = if port.is_empty() { "5432".into() } else { port };
            format!("{host}:{port}")
        })
        .collect();
    match opts.get("target_session_attrs").filter(|t| *t != "any") {
        Some(attrs) => format!("{} ({attrs})", hosts.join(",")),
        None => hosts.join(","),
    }
}

/// Each scenario's figures, from its scripts' in the run's result; `targets` are
/// its groups' ([`target`]).
pub fn results(plan: &BenchPlan, result: &RunResult, targets: &[String]) -> Vec<ScenarioResult> {
    plan.scenarios
        .iter()
        .zip(targets)
        .map(|(s, target)| {
            let scripts = &result.scripts[s.scripts.clone()];
            let mut stats = StatsData::default();
            let mut histogram: Option<LatencyHistogram> = None;
            for script in scripts {
                stats.merge(&script.stats);
                if let Some(h) = &script.histogram {
                    histogram.get_or_insert_with(LatencyHistogram::new).merge(h);
                }
            }
            ScenarioResult::new(
                (s.name.clone(), target.clone()),
                (s.clients, s.rate),
                stats,
                histogram,
                result.bench_duration_us,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenarios_conninfo_keeps_the_command_lines_database_and_user() {
        let args = ConnectArgs {
            host: Some("/tmp/a".into()),
            port: Some("5650".into()),
            user: Some("bench".into()),
            dbname: Some("shop".into()),
            ..Default::default()
        };
        let opts = scenario_options(
            "host=/tmp/a,/tmp/a port=5650,5651 target_session_attrs=standby",
            &args,
        )
        .unwrap();
        assert_eq!((opts.dbname(), opts.user()), ("shop", "bench"));
        assert_eq!(target(&opts), "/tmp/a:5650,/tmp/a:5651 (standby)");
        // Its own database wins; a URI is libpq's.
        let opts = scenario_options("dbname=other port=5652", &args).unwrap();
        assert_eq!(opts.dbname(), "other");
        assert_eq!(target(&opts), "/tmp/a:5652");
        let opts = scenario_options("postgresql://h1:5653/uri", &args).unwrap();
        assert_eq!((opts.dbname(), target(&opts).as_str()), ("uri", "h1:5653"));
        assert!(scenario_options("port=", &args).is_ok());
        assert!(scenario_options("nonsense=1", &args).is_err());
    }
}
