//! The check of a `--reconnect` run that rode through outages: its tps and latencies
//! hold them, so it measured availability, not speed. `pgbench-report check
//! --expect-outages` leaves the warning out for runs made to measure an outage, and
//! judges their steadiness without the outages ([`expected`]).

use super::{cold_start, steadiness, warning, Checks, Warning};
use crate::availability::{Availability, Outage};
use crate::run::RunResult;

/// The warning's code.
pub const CODE: &str = "outages";

/// Warns of `run`'s outages, if it had any.
pub fn check(run: &RunResult, c: &mut Checks) {
    let Some(a) = &run.availability else {
        return;
    };
    if a.outages.is_empty() {
        return;
    }
    let total = a.total_outage_s();
    let longest = a.longest_outage_s().unwrap_or(0.0);
    let unfinished = a.outages.iter().filter(|o| o.length_s().is_none()).count();
    // An outage not over, or one that some clients gave up on, was not ridden
    // through, and its length is only what was seen of it.
    let (how, at_least) = match (a.ridden_through(), a.gave_up) {
        (true, _) => ("the clients rode through", ""),
        (false, 0) => ("the clients saw", "at least "),
        (false, _) => ("the clients did not ride through", "at least "),
    };
    let mut notes = String::new();
    if unfinished > 0 {
        notes.push_str(&format!(", {unfinished} not over by the run's end"));
    }
    if a.gave_up > 0 {
        notes.push_str(&format!(
            ", {} client(s) gave up connecting again after --reconnect-timeout",
            a.gave_up
        ));
    }
    c.warnings.push(warning(
        CODE,
        format!(
            "{how} {} outage(s) of the server ({at_least}{total:.3} s in all, the longest {at_least}{longest:.3} s{notes}; {} transaction(s) failed, {} in doubt), so the tps and latencies hold them: compare it for its availability, not its speed, unless the outage is what was measured (pgbench-report check --expect-outages)",
            a.outages.len(),
            a.failed.values().sum::<i64>(),
            a.in_doubt
        ),
        &[
            ("outages", a.outages.len() as f64),
            ("total_s", total),
            ("longest_s", longest),
            ("reconnects", a.reconnects as f64),
            ("gave_up", a.gave_up as f64),
            ("in_doubt", a.in_doubt as f64),
        ],
    ));
}

/// `--expect-outages`: `warnings` as they are for a run made to measure its outages.
/// The outages warning is left out, and the checks of its per-second tps that an
/// outage sets off (`tps_not_steady`; `cold_start` by tps, not by the cache) are
/// judged again on each stretch of seconds clear of the outage windows and their
/// recoveries, each stretch alone: the dip is what such a run measures, and so is a
/// level that differs after a restart or a failover from before it, which a trend
/// over all the seconds would take for unsteadiness (#43), and tps climbing after an
/// outage as the restarted server's caches fill (a fall after it is still told). A
/// stretch too short for a check has no verdict. A run without its counters (an import) or without outages
/// keeps its warnings as they are.
pub fn expected(run: Option<&RunResult>, warnings: &mut Vec<Warning>) {
    warnings.retain(|w| w.code != CODE);
    let Some(run) = run else {
        return;
    };
    let Some(a) = run.availability.as_ref().filter(|a| !a.outages.is_empty()) else {
        return;
    };
    // The stretches: (its first second, whether an outage came before it, its
    // seconds' tps).
    let mut stretches: Vec<(i64, bool, Vec<f64>)> = Vec::new();
    let mut next = None;
    let mut after_outage = false;
    for s in run.series.iter().filter(|s| s.length_s.is_none()) {
        if disturbed(a, s.t) {
            next = None;
            after_outage = true;
            continue;
        }
        match stretches.last_mut() {
            Some((_, _, tps)) if next == Some(s.t) => tps.push(s.counts.cnt as f64),
            _ => stretches.push((s.t, after_outage, vec![s.counts.cnt as f64])),
        }
        next = Some(s.t + 1);
    }
    let again = |check: &dyn Fn(&[f64], &mut Checks), only_first: bool| {
        stretches
            .iter()
            .take(if only_first { 1 } else { usize::MAX })
            .find_map(|(from, after, tps)| {
                let mut c = Checks::default();
                check(tps, &mut c);
                // After a restart the server's caches fill again: tps climbing in
                // the seconds after an outage is the outage's doing too; a fall is not.
                c.warnings.retain(|w| !(*after && rising(w)));
                c.warnings.pop().map(|mut w| {
                    let to = from + tps.len() as i64;
                    w.message = format!(
                        "from second {from} to {to}, clear of the outage windows and their recoveries, {}",
                        w.message
                    );
                    w
                })
            })
    };
    let judged = |w: &Warning| match w.code.as_str() {
        "tps_not_steady" => Some(again(&|tps, c| steadiness(tps, c), false)),
        // A cold start is the run's first seconds: the first stretch's, if the run
        // began clear of an outage.
        "cold_start" if w.figures.contains_key("first_tps") => Some(
            again(&|tps, c| cold_start(run, tps, c), true)
                .filter(|_| stretches.first().is_some_and(|(from, _, _)| *from == 0)),
        ),
        _ => None,
    };
    *warnings = std::mem::take(warnings)
        .into_iter()
        .filter_map(|w| judged(&w).unwrap_or(Some(w)))
        .collect();
}

/// Whether a `tps_not_steady` verdict is of tps going up, as a trend and as a step.
fn rising(w: &Warning) -> bool {
    w.code == "tps_not_steady"
        && ["trend", "step"]
            .iter()
            .all(|k| w.figures.get(*k).is_some_and(|v| *v >= 0.0))
}

/// Whether the second `[t, t + 1)` of the measured part overlaps an outage: from
/// the last success before it (or its first failure) until tps was back at 95%
/// (or, when it never was, until every client it touched had a success again; to
/// the run's end when none had).
fn disturbed(a: &Availability, t: i64) -> bool {
    let from = a.measured_from_unix_us + t * 1_000_000;
    let to = from + 1_000_000;
    a.outages.iter().any(|o: &Outage| {
        let start = o
            .last_success_before_unix_us
            .unwrap_or(o.first_failure_unix_us);
        let end = o
            .back_to_95_unix_us
            .or(o.all_back_unix_us)
            .or(o.first_success_after_unix_us)
            .unwrap_or(i64::MAX);
        start < to && from < end
    })
}
