//! The steps, one after another: each a whole run (`bench::run`) of the plan changed
//! for it, with its own connections, warm-up, `-T` or `-t` and results. Before each,
//! a line on stderr says where the sweep is ([`super::progress`]); after each, its
//! line goes to stdout ([`pgbench_results::capacity::table`]). A signal stops the
//! step under way and the steps end there, kept (`super::stop`); so does a run that
//! cannot start, and `--exit-on-abort`'s stop.

use super::export;
use super::plan::{CapacityPlan, What};
use super::progress::{left, StepStart};
use super::search::{self, Next, Tried};
use super::stop::SweepStop;
use crate::bench::plan::BenchPlan;
use crate::bench::{RunEnv, RunOutcome, RunStop};
use crate::diagnostic;
use crate::logging::{self, Output};
use crate::session::{finish, CommandLine, Exit, ExitStatus, Session, SessionError, Target};
use pgbench_results::capacity::{table, Capacity, Found, Miss, Role, Step, Verdict, CLOSED_LOOP};
use pgbench_results::report::fmt_f;
use pgbench_wire::ConnectArgs;
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

/// A step's lines: its stderr as a run's (vacuum, progress, messages); its stdout, the
/// banner every run prints, left out (the sweep prints it once, before the report of
/// its representative step).
struct StepOutput;

impl Output for StepOutput {
    fn stdout(&self, _: &str) {}

    fn stderr(&self, text: &str) {
        logging::raw(text)
    }
}

/// Why the steps ended before the last one planned, and the exit status it gives.
#[derive(Debug, Clone, Default)]
struct Halt {
    why: Option<String>,
    status: Option<ExitStatus>,
}

/// A sweep or search under way.
struct Sweep<'a> {
    base: &'a BenchPlan,
    plan: &'a CapacityPlan,
    record: Capacity,
    command_line: &'a CommandLine<'a>,
    dbname: String,
    endpoint: Option<&'a crate::metrics::Endpoint>,
    stop: &'a SweepStop,
    steps: Vec<Step>,
    /// Each step's wall time, s.
    walls: Vec<f64>,
    columns: Option<table::Columns>,
    halt: Halt,
    /// A client aborted, or a `-l` file lost lines, in some step.
    troubled: bool,
    /// A search whose steps ended before it did.
    search_unfinished: bool,
}

/// Runs the sweep or search `capacity` asks for of `plan`, on the server or a
/// throwaway one, in a [`Session`] like every mode's.
pub fn run(
    target: Target,
    plan: &BenchPlan,
    capacity: &CapacityPlan,
    command_line: &CommandLine<'_>,
    signals: &crate::signals::Signals,
) -> Exit {
    // Before connecting: a port in use ends the sweep before it starts. Sized for
    // the most clients a step runs.
    let mut live = plan.live_plan();
    live.clients = capacity.max_clients(live.clients);
    let stop = SweepStop::new(command_line.export.json.clone());
    let session = Session::open(signals, plan, live, stop.clone())?;
    let mut sweep = Sweep {
        base: plan,
        plan: capacity,
        record: capacity.record(),
        command_line,
        dbname: String::new(),
        endpoint: session.endpoint(),
        stop: &stop,
        steps: Vec::new(),
        walls: Vec::new(),
        columns: None,
        halt: Halt::default(),
        troubled: false,
        search_unfinished: false,
    };
    let status = session
        .on_target(target, plan, |args, run, dbname| {
            sweep.dbname = dbname.to_string();
            sweep.all(args, run)
        })
        .unwrap_or_else(|e| diagnostic::report(&e));
    drop(sweep);
    session.close(stop.signalled().is_some());
    Ok(status)
}

impl Sweep<'_> {
    /// Every step, then what they found; the exit status.
    fn all(&mut self, args: ConnectArgs, base: &BenchPlan) -> ExitStatus {
        let length = table::StepLength {
            warmup_s: base.phases.warmup_s,
            limit: base.settings.limit,
        };
        print(&table::opening(&self.record, length));
        match &self.plan.what {
            What::Sweep { values, repeat, .. } => {
                'rounds: for round in 1..=*repeat {
                    for value in values {
                        if self.step(&args, base, Some(value), round, None).is_none() {
                            break 'rounds;
                        }
                    }
                }
                // The peak's first whole step; when no step ran whole, the first (its
                // report then says why it is incomplete).
                self.record.representative =
                    pgbench_results::capacity::peak_step(&self.record, &self.steps)
                        .or(self.steps.first().map(|s| s.step));
            }
            What::Search { .. } => self.search(&args, base),
        }
        self.finish(base, &args)
    }

    /// The closed-loop step, then the rates [`search::next`] picks.
    fn search(&mut self, args: &ConnectArgs, base: &BenchPlan) {
        let What::Search {
            target,
            tolerance,
            max_steps,
            ..
        } = &self.plan.what
        else {
            return;
        };
        let Some(closed) = self.step(args, base, None, 1, Some(Role::ClosedLoop)) else {
            self.unfinished(&[]);
            return;
        };
        let closed_loop_tps = closed.figures().tps().unwrap_or(0.0);
        let mut tried: Vec<(Tried, u32)> = Vec::new();
        // `None`: the steps ended before the search did (a signal, a step that could
        // not run or was cut short), and nothing is concluded.
        let outcome = loop {
            let so_far: Vec<Tried> = tried.iter().map(|t| t.0).collect();
            let (rate, role) = match search::next(closed_loop_tps, &so_far, *tolerance, *max_steps)
            {
                Next::Done(o) => break Some(o),
                Next::Run { rate, role } => (rate, role),
            };
            let value = rate.to_string();
            let Some(step) = self.step(args, base, Some(&value), 1, Some(role)) else {
                break None;
            };
            let number = step.step;
            let interrupted = step.file.run.as_ref().is_some_and(|r| {
                matches!(r.ended, Some(pgbench_results::Ended::Interrupted { .. }))
            });
            let why = step_misses(target, step);
            let met = why.is_empty();
            if let Some(last) = self.steps.last_mut() {
                last.verdict = Some(Verdict { met, why });
            }
            self.print_line();
            if interrupted {
                // A step cut short says nothing sure of its rate.
                break None;
            }
            tried.push((Tried { rate, met }, number));
        };
        let Some(outcome) = outcome else {
            self.unfinished(&tried);
            return;
        };
        let found = found(closed_loop_tps, &outcome, &tried, &self.steps);
        self.record.representative = found.step;
        self.record.found = Some(found);
    }

    /// A search whose steps ended before it did: nothing is found (the closing line
    /// says it did not finish), and the step shown is the best so far (the highest
    /// rate met below every miss, `tried`), else the first.
    fn unfinished(&mut self, tried: &[(Tried, u32)]) {
        self.search_unfinished = true;
        let tolerance = match &self.plan.what {
            What::Search { tolerance, .. } => *tolerance,
            What::Sweep { .. } => return,
        };
        let rates: Vec<Tried> = tried.iter().map(|t| t.0).collect();
        let best = search::outcome(&rates, tolerance).found;
        let best_step = best.and_then(|r| tried.iter().rev().find(|t| t.0.rate == r).map(|t| t.1));
        self.record.representative = best_step.or(self.steps.first().map(|s| s.step));
    }

    /// Runs step `n + 1` at `value` (`None`: a search's closed loop); prints its line
    /// (a search's once its verdict is in). `None` when the steps end here.
    fn step(
        &mut self,
        args: &ConnectArgs,
        base: &BenchPlan,
        value: Option<&str>,
        round: u32,
        role: Option<Role>,
    ) -> Option<&Step> {
        let number = self.steps.len() as u32 + 1;
        let plan = super::step::step_plan(
            self.plan,
            base,
            value,
            number,
            self.command_line.worker_digests,
        );
        let run_stop = RunStop::for_step();
        self.announce(number, value, role);
        if !self.stop.step(Some(Arc::clone(&run_stop))) {
            return None;
        }
        let metrics = self.endpoint.map(|e| {
            let live = Arc::new(crate::metrics::Live::new(plan.live_plan()));
            let mut labels = plan.metric_labels();
            labels.step = Some(number);
            e.show(Arc::clone(&live), labels);
            live
        });
        let env = RunEnv {
            out: Arc::new(StepOutput),
            metrics,
            stop: run_stop,
        };
        let started = Instant::now();
        let outcome = crate::bench::run(&env, args.clone(), &plan);
        self.stop.step(None);
        self.walls.push(started.elapsed().as_secs_f64());
        let value = value.unwrap_or(CLOSED_LOOP).to_string();
        let file = self.completed(outcome, &plan, number)?;
        self.steps.push(Step {
            step: number,
            value,
            round,
            role,
            verdict: None,
            file,
        });
        // A signal stopped it: it is kept, its line printed (a search's without a
        // verdict: a step cut short says nothing sure of its rate), and the steps end.
        let signalled = self.stop.signalled().is_some();
        if role.is_none() || role == Some(Role::ClosedLoop) || signalled {
            self.print_line();
        }
        if signalled {
            self.halted_by_signal();
            return None;
        }
        self.steps.last()
    }

    /// The step's results file, or why the steps end here (said on stderr).
    fn completed(
        &mut self,
        outcome: Result<RunOutcome, crate::bench::RunError>,
        plan: &BenchPlan,
        number: u32,
    ) -> Option<pgbench_results::ResultsFile> {
        match outcome {
            Err(e) => {
                let status = diagnostic::report(&e);
                self.halt = Halt {
                    why: Some(format!("step {number} could not run: {e}")),
                    status: Some(status),
                };
                None
            }
            Ok(RunOutcome::StoppedOnAbort { thread }) => {
                finish::print_stopped_on_abort(thread);
                self.halt = Halt {
                    why: Some(format!(
                        "--exit-on-abort stopped step {number}: a client aborted"
                    )),
                    status: Some(ExitStatus::Aborted),
                };
                None
            }
            Ok(RunOutcome::Completed {
                result,
                meta,
                log_losses,
                ..
            }) => {
                finish::print_log_losses(&log_losses);
                self.troubled |= result.aborted_clients > 0 || !log_losses.is_empty();
                let measured = result.total.counts.cnt + result.total.failures() > 0;
                if self.stop.signalled().is_some() && !measured {
                    logging::warning(&format!(
                        "step {number} was stopped before it measured anything: left out"
                    ));
                    self.halted_by_signal();
                    return None;
                }
                Some(finish::results_file(
                    &result,
                    &meta,
                    plan,
                    self.command_line,
                    &self.dbname,
                ))
            }
        }
    }

    fn halted_by_signal(&mut self) {
        if let Some(sig) = self.stop.signalled() {
            let planned = match &self.plan.what {
                What::Sweep { .. } => format!(" of {}", self.plan.planned_steps()),
                What::Search { .. } => String::new(),
            };
            self.halt = Halt {
                why: Some(format!(
                    "interrupted by {} after {} step(s){planned}",
                    crate::signals::name(sig),
                    self.steps.len()
                )),
                status: Some(ExitStatus::Signal(sig)),
            };
        }
    }

    /// The line before a step, on stderr.
    fn announce(&self, number: u32, value: Option<&str>, role: Option<Role>) {
        let what = match (value, role) {
            (None, _) => "without -R (the clients' most)".to_string(),
            (Some(v), Some(role)) => format!(
                "-R {v} ({})",
                match role {
                    Role::Bisection => "bisection",
                    Role::Confirmation => "again, to confirm it",
                    _ => "ladder",
                }
            ),
            (Some(v), None) => table::at(&self.record, v),
        };
        let planned = self.plan.planned_steps();
        let remaining = planned.saturating_sub(number as usize - 1);
        let per_step = self
            .base
            .settings
            .limit
            .duration()
            .map(|t| (t + self.base.phases.warmup_s.unwrap_or(0)) as f64);
        let start = StepStart {
            step: number as usize,
            of: planned,
            at_most: matches!(self.plan.what, What::Search { .. }),
            what,
            left_s: left(&self.walls, per_step, remaining),
            best: self.best(),
        };
        logging::info(&start.line());
    }

    /// The best so far (see [`super::progress::best`]).
    fn best(&self) -> Option<String> {
        let tolerance = match &self.plan.what {
            What::Search { tolerance, .. } => Some(*tolerance),
            What::Sweep { .. } => None,
        };
        super::progress::best(&self.record, &self.steps, tolerance)
    }

    /// The last step's line on stdout, the header before the first.
    fn print_line(&mut self) {
        let Some(step) = self.steps.last() else {
            return;
        };
        let mut text = String::new();
        let columns = self.columns.get_or_insert_with(|| {
            let c = table::Columns::new(&self.record, &step.figures());
            text.push_str(&table::header(&self.record, &c));
            c
        });
        text.push_str(&table::step_line(&self.record, columns, step));
        print(&text);
    }

    /// The closing lines, the representative step's report, the results file; the
    /// exit status.
    fn finish(&mut self, base: &BenchPlan, args: &ConnectArgs) -> ExitStatus {
        self.record.stopped = self.halt.why.clone();
        if self.search_unfinished {
            let best = self
                .best()
                .map_or(String::new(), |b| format!(" (best so far: {b})"));
            let why = self.record.stopped.take();
            let why = why.map_or(String::new(), |w| format!("{w}; "));
            self.record.stopped = Some(format!("{why}the search did not finish{best}"));
        }
        print(&table::closing(&self.record, &self.steps));
        if let Some(step) = self
            .steps
            .iter()
            .find(|s| Some(s.step) == self.record.representative)
        {
            export::print_report(&self.record, step, base);
        }
        let mut status = self.halt.status;
        let export = self.command_line.export;
        if export.any() && self.steps.is_empty() {
            // Nothing ran to be kept (a signal in the first warm-up, a first step that
            // could not connect): the file asked for is not there, and the user is told.
            for path in export.paths() {
                logging::error(&format!(
                    "results file \"{path}\" not written: no step was kept"
                ));
            }
        }
        let history = self.command_line.history;
        if (export.any() || history.is_some()) && !self.steps.is_empty() {
            let steps = std::mem::take(&mut self.steps);
            let options = (self.command_line.options)(base, &self.dbname);
            if let Some(file) = export::file(options, self.record.clone(), steps) {
                let errors = finish::write_exports(export, &file, self.stop, "this sweep");
                if let Some(history) = history {
                    crate::session::history::record(history, &file, args, self.command_line.argv);
                }
                if !errors.is_empty() {
                    // An earlier halt's status stands (a signal's).
                    let failed = diagnostic::report(&SessionError::Exports(errors));
                    status = status.or(Some(failed));
                }
            }
        }
        status
            .or_else(|| self.search_verdict())
            .unwrap_or(if self.troubled {
                ExitStatus::Aborted
            } else {
                ExitStatus::Ok
            })
    }

    /// A search's gate: [`ExitStatus::BelowTarget`] when no rate met the target, or
    /// the rate found is below `--fail-if-below` (said on stderr).
    fn search_verdict(&self) -> Option<ExitStatus> {
        let What::Search {
            text,
            fail_if_below,
            ..
        } = &self.plan.what
        else {
            return None;
        };
        let found = self.record.found.as_ref().and_then(|f| f.rate);
        let message = match (found, fail_if_below) {
            (None, _) => format!("no rate met the target {text}"),
            (Some(r), Some(floor)) if r < *floor => format!(
                "the rate found, -R {}, is below --fail-if-below {}",
                fmt_f(r, 1),
                fmt_f(*floor, 1)
            ),
            _ => return None,
        };
        logging::error(&message);
        Some(ExitStatus::BelowTarget)
    }
}

/// What a search found, from its outcome and the rates it tried (with their steps'
/// numbers): a rate run twice is its last step's (the confirmation's); the first
/// miss is the step that missed, with why.
fn found(
    closed_loop_tps: f64,
    outcome: &search::Outcome,
    tried: &[(Tried, u32)],
    steps: &[Step],
) -> Found {
    let step_of = |rate: f64| tried.iter().rev().find(|t| t.0.rate == rate).map(|t| t.1);
    let miss = outcome.first_miss.and_then(|rate| {
        let step = tried.iter().find(|t| t.0.rate == rate && !t.0.met)?.1;
        let s = steps.iter().find(|s| s.step == step)?;
        let why = s
            .verdict
            .as_ref()
            .map_or(String::new(), |v| v.why.join("; "));
        Some(Miss { rate, step, why })
    });
    Found {
        closed_loop_tps: Some(closed_loop_tps),
        rate: outcome.found,
        step: outcome.found.and_then(step_of),
        first_miss: miss,
        within_tolerance: outcome.within_tolerance,
        confirmed: outcome.confirmed,
    }
}

/// What of `target` a search's step missed: its conditions, and a client that
/// aborted (its figures then cover less than the rate asked for).
fn step_misses(target: &super::target::Target, step: &Step) -> Vec<String> {
    let Some(run) = &step.file.run else {
        return vec!["no result".to_string()];
    };
    let mut why = target.misses(run);
    if run.aborted_clients > 0 {
        why.push(format!("{} client(s) aborted", run.aborted_clients));
    }
    why
}

/// Text for stdout, flushed (stderr's lines come between).
fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
