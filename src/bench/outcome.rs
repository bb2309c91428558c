//! How a run ended, as data: its [`RunResult`] (built here from the plan, the setup
//! and what the collector counted, with [`Ended`]: to its end or stopped early), or
//! `--exit-on-abort`'s early stop.

use super::collector::Collected;
use super::control::StopCause;
use super::launch::RunShared;
use super::phases::{PhaseKind, Phases};
use super::plan::BenchPlan;
use super::setup::Setup;
use super::txlog::LogLoss;
use crate::diagnostic::ExitStatus;
use pgbench_results::{
    CommandResult, CommandStats, Ended, LatencyCounts, RunMeta, RunResult, ScriptResult,
};

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
        /// kept transactions running past the `-T` deadline and its grace); the
        /// result's `ended` says the same for the results file.
        stopped: Option<StopCause>,
        /// `-l` files that could not take every line.
        log_losses: Vec<LogLoss>,
    },
    /// `--exit-on-abort`: a client of this thread aborted, the run stopped at once
    /// and no report is printed (pgbench 17).
    StoppedOnAbort { thread: usize },
}

impl RunOutcome {
    /// 0; 2 when a client aborted, a log lost lines, transactions overdue after `-T`
    /// were cut or a workload's result could not be read (its server counts, say); the
    /// signal's when one stopped the run (130 for SIGINT, 143 for SIGTERM), as a
    /// shell reports a process the signal ended.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            RunOutcome::Completed {
                stopped: Some(StopCause::Signal(sig)),
                ..
            } => ExitStatus::Signal(*sig),
            RunOutcome::Completed {
                result,
                log_losses,
                stopped: None,
                ..
            } if result.aborted_clients == 0
                && log_losses.is_empty()
                && result.workload.as_ref().is_none_or(|w| w.lost().is_none()) =>
            {
                ExitStatus::Ok
            }
            _ => ExitStatus::Aborted,
        }
    }
}

/// The instants that bound the run, µs on the run clock.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Before the client threads started (and connected).
    pub start: i64,
    /// When all clients were connected and let go, and when the measured part began.
    pub phases: Phases,
    /// When the last client finished (before the measured part when a signal stopped
    /// the warm-up).
    pub end: i64,
}

impl Timing {
    /// The measured part's length, µs (0 when the run ended in its warm-up).
    pub fn measured_us(&self) -> i64 {
        (self.end - self.phases.measure_from_us).max(0)
    }
}

/// How the run ended: `stopped` early (a signal that came at `signalled_at`, or
/// transactions overdue), with `unfinished` transactions cut short, or to its end,
/// with or without `aborted` clients.
pub fn ending(
    stopped: Option<StopCause>,
    signalled_at: Option<i64>,
    timing: &Timing,
    (unfinished, aborted): (usize, usize),
) -> Ended {
    match stopped {
        Some(StopCause::Signal(sig)) => {
            let at = signalled_at.unwrap_or(timing.end);
            Ended::Interrupted {
                signal: crate::signals::name(sig),
                // A signal while the clients connected stopped them as they started.
                at_s: (at - timing.phases.start_us).max(0) as f64 / 1e6,
                during_warmup: timing.phases.kind_at(timing.end) == PhaseKind::WarmUp,
                unfinished,
            }
        }
        Some(StopCause::Overdue { grace_us }) => Ended::Overdue {
            grace_s: grace_us as f64 / 1e6,
            unfinished,
        },
        None if aborted > 0 => Ended::Aborted,
        None => Ended::Completed,
    }
}

/// Everything the run measured, for the report and the results file; the observers
/// add their parts to it.
pub fn assemble(
    plan: &BenchPlan,
    setup: &Setup,
    ctx: &RunShared,
    mut collected: Collected,
    timing: Timing,
) -> RunResult {
    let ended = ending(
        ctx.control.cause(),
        ctx.control.signalled_at(),
        &timing,
        (collected.unfinished, collected.aborted),
    );
    let scripts = &ctx.scripts;
    let measured = timing.measured_us() > 0;
    let (series, run, per_script) = match collected.extras.map(|e| *e) {
        Some(mut e) => {
            let per_script = std::mem::take(&mut e.per_script);
            let (series, run) = e.finish(timing.end);
            // A run stopped in its warm-up has no measured second, not an empty one.
            (series.filter(|_| measured), run, per_script)
        }
        None => (None, None, Vec::new()),
    };
    let histogram = run.map(|r| r.to_histogram());
    let warmup = collected
        .warmup
        .map(|w| w.finish(plan.phases.warmup_s.unwrap_or(0), timing.end));
    // One script: its latencies are the run's.
    let mut script_histograms = histogram.as_ref().map(|run| {
        let per_script: Vec<_> = if per_script.is_empty() {
            vec![run.clone()]
        } else {
            per_script.iter().map(LatencyCounts::to_histogram).collect()
        };
        per_script.into_iter()
    });
    let shift = ctx.control.clock.epoch_shift_us;
    let in_doubt = collected.total.counts.in_doubt + collected.cut_short_in_doubt;
    let availability = collected
        .outages
        .map(|o| o.finish(timing.end, timing.phases.measure_from_us, shift, in_doubt));
    let stages = stage_results(plan, ctx, collected.stages.take(), &timing);
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
                commands: command_results(&s.script, collected.commands.get(i)),
                histogram: script_histograms.as_mut().and_then(Iterator::next),
            })
            .collect(),
        bench_duration_us: timing.measured_us() as f64,
        conn_total_duration_us: collected.conn_total_duration_us,
        conn_elapsed_duration_us: (timing.phases.start_us - timing.start) as f64,
        latency_late: collected.latency_late,
        aborted_clients: collected.aborted,
        in_doubt,
        histogram,
        series: series.unwrap_or_default(),
        warmup,
        workload: None,
        server: None,
        client_cpu: None,
        ended: Some(ended),
        phases: timing.phases.spans(timing.end),
        availability,
        // The caller names each scenario's target (bench::scenario::results).
        scenarios: Vec::new(),
        stages,
    }
}

/// Each stage's figures from what its window counted.
fn stage_results(
    plan: &BenchPlan,
    ctx: &RunShared,
    counts: Option<Vec<pgbench_results::stages::StageCounts>>,
    timing: &Timing,
) -> Option<pgbench_results::stages::Stages> {
    let (stages, clock, counts) = (plan.stages.as_ref()?, ctx.stage_clock.get()?, counts?);
    let measured_from = timing.phases.measure_from_us;
    let end_s = (timing.end - measured_from) as f64 / 1e6;
    let throttled = plan.settings.throttled();
    Some(pgbench_results::stages::Stages {
        shape: stages.shape(),
        stages: stages
            .windows(clock, measured_from)
            .into_iter()
            .zip(&counts)
            .zip(&stages.stages().stages)
            // A step (a stage of no time) has no figures; a stage a stop came before
            // is left out; one it cut short ends with it.
            .filter(|((w, _), s)| s.duration_us > 0 && (w.start_s < end_s || w.start_s == 0.0))
            .map(|(wc, _)| wc)
            .map(|(mut w, c)| {
                w.end_s = w.end_s.min(end_s).max(w.start_s);
                pgbench_results::stages::StageResult::of(w, c, throttled)
            })
            .collect(),
    })
}

/// What the results file records of the run besides its counters (the command line
/// and the options are the caller's to add): the server, the seed, when it ran (Unix
/// µs: run-clock instants shifted by `epoch_shift_us`), this worker's place.
pub fn meta(
    setup: Setup,
    random_seed: u64,
    timing: &Timing,
    worker: Option<pgbench_results::document::WorkerInfo>,
    epoch_shift_us: i64,
) -> RunMeta {
    RunMeta {
        server_version: setup.server_version,
        server_settings: setup.server_settings,
        started_unix_us: timing.phases.measure_from_us.min(timing.end) + epoch_shift_us,
        ended_unix_us: timing.end + epoch_shift_us,
        random_seed,
        worker,
        ..Default::default()
    }
}

/// Every command of `script` with its `-r` counters, at zero where the run kept none
/// (no `-r`): the results file names them all (a run's script digest in the history,
/// the workers' scripts compared by merge).
fn command_results(
    script: &pgbench_script::ast::Script,
    kept: Option<&Vec<CommandStats>>,
) -> Vec<CommandResult> {
    let kept = kept.map_or(&[][..], Vec::as_slice);
    script
        .commands
        .iter()
        .enumerate()
        .map(|(j, c)| CommandResult {
            first_line: c.first_line.clone(),
            stats: kept.get(j).copied().unwrap_or_default(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::phases::PhasePlan;

    #[test]
    fn a_run_without_r_lists_every_command_with_its_counters_at_zero() {
        let script =
            pgbench_script::parse_script("t", "t", "BEGIN;\n\\set x 1\nEND;\n").expect("a script");
        let lines = |r: &[CommandResult]| -> Vec<String> {
            r.iter().map(|c| c.first_line.clone()).collect()
        };
        let none = command_results(&script, None);
        assert_eq!(lines(&none), ["BEGIN;", "\\set x 1", "END;"]);
        assert!(none.iter().all(|c| c.stats == CommandStats::default()));
        let mut counted = vec![CommandStats::default(); 3];
        counted[2].failures = 4;
        let kept = command_results(&script, Some(&counted));
        assert_eq!(lines(&kept), lines(&none));
        assert_eq!(kept[2].stats.failures, 4);
    }

    /// A 10 s warm-up from 1 s on the run clock, then the measured part.
    fn timing(end: i64) -> Timing {
        Timing {
            start: 0,
            phases: PhasePlan { warmup_s: Some(10) }.anchored(1_000_000),
            end,
        }
    }

    #[test]
    fn a_signal_in_the_warm_up_measured_nothing_one_after_it_measured_what_ran() {
        let sigint = Some(StopCause::Signal(libc::SIGINT));
        let cut = timing(4_300_000);
        assert_eq!(cut.measured_us(), 0);
        assert_eq!(
            ending(sigint, Some(4_000_000), &cut, (2, 0)),
            Ended::Interrupted {
                signal: "SIGINT".into(),
                at_s: 3.0,
                during_warmup: true,
                unfinished: 2,
            }
        );
        let later = timing(23_100_000);
        assert_eq!(later.measured_us(), 12_100_000);
        let Ended::Interrupted {
            at_s,
            during_warmup,
            signal,
            ..
        } = ending(
            Some(StopCause::Signal(libc::SIGTERM)),
            Some(23_000_000),
            &later,
            (0, 0),
        )
        else {
            panic!("not interrupted");
        };
        assert_eq!(
            (at_s, during_warmup, signal.as_str()),
            (22.0, false, "SIGTERM")
        );
        // While the clients connected: they stopped as they started.
        let Ended::Interrupted { at_s, .. } = ending(sigint, Some(500_000), &cut, (0, 0)) else {
            panic!("not interrupted");
        };
        assert_eq!(at_s, 0.0);
    }

    #[test]
    fn a_run_without_a_signal_completed_aborted_or_was_overdue() {
        let t = timing(71_000_000);
        assert_eq!(ending(None, None, &t, (0, 0)), Ended::Completed);
        assert_eq!(ending(None, None, &t, (0, 3)), Ended::Aborted);
        assert_eq!(
            ending(
                Some(StopCause::Overdue {
                    grace_us: 5_000_000
                }),
                None,
                &t,
                (1, 0)
            ),
            Ended::Overdue {
                grace_s: 5.0,
                unfinished: 1
            }
        );
    }
}
