//! How a run ended, as data: its [`RunResult`] (built here from the plan, the setup
//! and what the collector counted), or `--exit-on-abort`'s early stop.

use super::collector::Collected;
use super::control::StopCause;
use super::launch::RunScript;
use super::plan::BenchPlan;
use super::setup::Setup;
use super::txlog::LogLoss;
use pgbench_results::{CommandResult, LatencyCounts, RunMeta, RunResult, ScriptResult};

/// How the run ended.
#[derive(Debug)]
pub enum RunOutcome {
    /// Every client finished or aborted; the report is printed.
    Completed {
        result: Box<RunResult>,
        /// What the results file records besides the counters, all but the command
        /// line and the options (the caller's to add).
        meta: Box<RunMeta>,
        /// Set when the run was stopped before its end (a signal, or a server that
        /// kept transactions running past the `-T` deadline and its grace).
        stopped: Option<StopCause>,
        /// Transactions cut short by the stop (not counted).
        unfinished: usize,
        /// `-l` files that could not take every line.
        log_losses: Vec<LogLoss>,
    },
    /// `--exit-on-abort`: a client of this thread aborted, the run stopped at once
    /// and no report is printed (pgbench 17).
    StoppedOnAbort { thread: usize },
}

impl RunOutcome {
    /// 0; 2 when a client aborted, a log lost lines or transactions overdue after `-T`
    /// were cut; 128 + the signal when one stopped the run (130 for SIGINT, 143 for
    /// SIGTERM), as a shell reports a process the signal ended.
    pub fn exit_status(&self) -> i32 {
        match self {
            RunOutcome::Completed {
                stopped: Some(StopCause::Signal(sig)),
                ..
            } => 128 + sig,
            RunOutcome::Completed {
                result,
                log_losses,
                stopped: None,
                ..
            } if result.aborted_clients == 0 && log_losses.is_empty() => 0,
            _ => 2,
        }
    }
}

/// The instants that bound the run, µs on the run clock.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Before the client threads started (and connected).
    pub start: i64,
    /// When all clients were connected and started running.
    pub bench_start: i64,
    /// When the measured part began: `bench_start`, or the end of `--warmup`.
    pub measured_from: i64,
    /// When the last client finished.
    pub end: i64,
}

/// Everything the run measured, for the report and the results file.
pub fn assemble(
    plan: &BenchPlan,
    setup: &Setup,
    scripts: &[RunScript],
    collected: Collected,
    timing: Timing,
) -> RunResult {
    let (series, run, per_script) = match collected.extras.map(|e| *e) {
        Some(mut e) => {
            let per_script = std::mem::take(&mut e.per_script);
            let (series, run) = e.finish(timing.end);
            (series, run, per_script)
        }
        None => (None, None, Vec::new()),
    };
    let histogram = run.map(|r| r.to_histogram());
    let warmup = collected
        .warmup
        .map(|w| w.finish(plan.warmup_s.unwrap_or(0)));
    // One script: its latencies are the run's.
    let mut script_histograms = histogram.as_ref().map(|run| {
        let per_script: Vec<_> = if per_script.is_empty() {
            vec![run.clone()]
        } else {
            per_script.iter().map(LatencyCounts::to_histogram).collect()
        };
        per_script.into_iter()
    });
    RunResult {
        settings: plan.settings.clone(),
        scale: setup.scale,
        partitions: setup.partitions.clone(),
        total: collected.total,
        scripts: scripts
            .iter()
            .zip(collected.per_script)
            .enumerate()
            .map(|(i, (s, stats))| ScriptResult {
                desc: s.script.desc.clone(),
                weight: s.weight,
                stats,
                commands: s
                    .script
                    .commands
                    .iter()
                    .zip(collected.commands.get(i).into_iter().flatten())
                    .map(|(c, st)| CommandResult {
                        first_line: c.first_line.clone(),
                        stats: *st,
                    })
                    .collect(),
                histogram: script_histograms.as_mut().and_then(Iterator::next),
            })
            .collect(),
        bench_duration_us: (timing.end - timing.measured_from) as f64,
        conn_total_duration_us: collected.conn_total_duration_us,
        conn_elapsed_duration_us: (timing.bench_start - timing.start) as f64,
        latency_late: collected.latency_late,
        aborted_clients: collected.aborted,
        histogram,
        series: series.unwrap_or_default(),
        warmup,
        tpcc: None,
        sysbench: plan
            .workload
            .as_ref()
            .and_then(|w| w.sysbench_summary(collected.queries)),
        server: None,
        client_cpu: None,
    }
}
