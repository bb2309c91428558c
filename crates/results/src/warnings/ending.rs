//! The checks of how a run ended: stopped by a signal, transactions cut after `-T`,
//! clients that aborted, and a measured part that counted no transaction at all. Each
//! makes a run's figures those of less than it was asked to do, which no reader of
//! its tps alone would see.

use super::{warning, Checks};
use crate::run::ended::{stopped_by, Ended};
use crate::run::{Limit, RunResult};

/// The checks of `run`'s ending (nothing for a file that does not say how it ended,
/// but its aborted clients and empty measured part, which it does say).
pub fn check(run: &RunResult, c: &mut Checks) {
    match &run.ended {
        Some(Ended::Interrupted {
            signal,
            at_s,
            during_warmup,
            unfinished,
        }) => interrupted(run, (signal, *at_s, *during_warmup, *unfinished), c),
        Some(Ended::Overdue {
            grace_s,
            unfinished,
        }) => c.warnings.push(warning(
            "transactions_cancelled",
            format!(
                "{unfinished} transaction(s) still running {} s after the -T deadline were cancelled and are not counted, so the latencies leave out the slowest: find what held them (a lock, a stuck server or network)",
                grace_s.ceil()
            ),
            &[("grace_s", *grace_s), ("unfinished", *unfinished as f64)],
        )),
        _ => {}
    }
    if run.aborted_clients > 0 {
        let clients = run.settings.clients;
        c.warnings.push(warning(
            "clients_aborted",
            format!(
                "{} of the {clients} clients aborted, so the figures count only what they did before (the report said they are incomplete): fix what the abort messages name and run again",
                run.aborted_clients
            ),
            &[
                ("aborted", run.aborted_clients as f64),
                ("clients", clients as f64),
            ],
        ));
    }
    if run.total.counts.cnt == 0 {
        let t = &run.total;
        c.warnings.push(warning(
            "no_transactions",
            "the measured part counted no successful transaction, so the run has no tps or latency to compare".to_string(),
            &[
                ("transactions", 0.0),
                ("failed", t.failures() as f64),
                ("skipped", t.counts.skipped as f64),
                ("measured_s", run.bench_duration_us / 1e6),
            ],
        ));
    }
}

/// A signal stopped the run: how much of what was asked it did.
fn interrupted(
    run: &RunResult,
    (signal, at_s, during_warmup, unfinished): (&str, f64, bool, usize),
    c: &mut Checks,
) {
    let measured_s = run.bench_duration_us / 1e6;
    let how = stopped_by(signal);
    let (what, planned) = if during_warmup {
        let warmup = run.warmup.as_ref().map_or(0, |w| w.seconds);
        (
            format!("{at_s:.1} s into its {warmup} s warm-up, so nothing was measured"),
            ("warmup_s", warmup as f64),
        )
    } else {
        match run.settings.limit {
            Limit::Duration(secs) => (
                format!("after {measured_s:.1} s of its -T {secs}, so its figures are of a shorter run than the one asked for"),
                ("planned_s", secs as f64),
            ),
            Limit::Transactions(n) => {
                let wanted = i64::from(n) * run.settings.clients as i64;
                (
                    format!(
                        "after {measured_s:.1} s with {} of its {wanted} transactions done, so its figures are of a shorter run than the one asked for",
                        run.total.total()
                    ),
                    ("planned_transactions", wanted as f64),
                )
            }
        }
    };
    c.warnings.push(warning(
        "interrupted",
        format!("the run was {how} {what}: run it again to its end before comparing it"),
        &[
            ("at_s", at_s),
            ("measured_s", measured_s),
            ("unfinished", unfinished as f64),
            planned,
        ],
    ));
}
