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
    c.warnings.push(warning(
        CODE,
        format!(
            "the clients rode through {} outage(s) of the server ({total:.3} s in all, the longest {longest:.3} s{}; {} transaction(s) failed), so the tps and latencies hold them: compare it for its availability, not its speed, unless the outage is what was measured (pgbench-report check --expect-outages)",
            a.outages.len(),
            if unfinished > 0 { ", one lasting to the run's end" } else { "" },
            a.failed.values().sum::<i64>()
        ),
        &[
            ("outages", a.outages.len() as f64),
            ("total_s", total),
            ("longest_s", longest),
            ("reconnects", a.reconnects as f64),
        ],
    ));
}
