//! The check of a `--reconnect` run that rode through outages: its tps and latencies
//! hold them, so it measured availability, not speed. `pgbench-report check
//! --expect-outages` leaves the warning out for runs made to measure an outage.

use super::{warning, Checks};
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
