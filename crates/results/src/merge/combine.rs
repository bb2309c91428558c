//! The workers' exact results added into the one a single process with all their
//! clients would have measured. Each figure's rule, and why it is that of one
//! process:
//!
//! - counters (transactions, failures by kind, retries, skipped, late, aborted
//!   clients) and the `-C` connection time: sums, as one process sums its clients';
//! - latency and lag: pgbench's `SimpleStats` merged (count, sum and sum of squares
//!   added, min of mins, max of maxes), so the average and stddev are those of every
//!   transaction together, from exact sums;
//! - histograms (the run's, each script's): added bucket by bucket, so percentiles
//!   are exact to the histogram's 3 significant digits;
//! - `-r` per-command counters and per-script counters: merged the same way;
//! - clients and threads: sums; `-R`: the sum of the workers' rates (each worker
//!   throttles its own clients to its `-R`);
//! - how the run ended: as the worker that ended worst did (one stopped by Ctrl-C
//!   stopped the whole run's figures short);
//! - the clients' run time: the longest worker's. All workers start at one instant,
//!   so that is from the common start to the end of the last client anywhere, which
//!   is what one process measures; tps is then every success over that window;
//! - the initial connection time: the longest worker's (one process's clients have
//!   all connected when its slowest one has);
//! - the per-second series: second `t` of every worker added, as every worker's
//!   second 0 begins at the shared start instant. Counters and latency stats add
//!   exactly; a second keeps four percentiles and no histogram, so a merged second's
//!   percentiles are the highest of the workers' (an upper bound of the true value,
//!   exact when one worker had all of that second's transactions).
//!
//! The sections that may not combine say so ([`Merged`]), and the merge passes on
//! why ([`Note`]):
//!
//! - the histograms: added; one a worker's file lacks leaves none for the whole
//!   (dropped: percentiles of some of the clients would pass for the run's);
//! - a workload's part (`--workload`): added as the workload adds its counts (TPC-C's
//!   new orders and server counts, sysbench's queries); parts of different workloads
//!   (which the checks refuse before) leave the first worker's;
//! - the server's figures (`--server-stats`): worker 0 reads them for the whole
//!   server, the others none, so the one read is the run's; were several read, the
//!   first worker's is kept;
//! - `--reconnect`'s availability block: the counts summed, each worker's outage
//!   windows kept as its own, in order of their first failure
//!   ([`crate::availability::Availability::merge`]).

use super::{Merged, Note};
use crate::histogram::LatencyHistogram;
use crate::run::RunResult;
use crate::series::Second;

/// The result of one process with every client of `runs` (which the checks found to
/// be of one run), and what of it could not be combined.
pub fn combine(runs: &[&RunResult]) -> Option<(RunResult, Vec<Note>)> {
    let (first, rest) = runs.split_first()?;
    let mut out = (*first).clone();
    let mut unlike_workloads = None;
    for r in rest {
        unlike_workloads = unlike_workloads.or(add(&mut out, r));
    }
    let mut notes = Vec::new();
    let histograms = match runs.iter().all(|r| r.histogram.is_some()) {
        true => Merged::Combined(()),
        false if first.histogram.is_some() => Merged::Dropped(
            "a worker's file has none, so the percentiles of the others' clients would pass for the whole run's",
        ),
        false => Merged::Combined(()),
    };
    histograms.note("histogram", &mut notes);
    let workload = match unlike_workloads {
        Some(why) => Merged::FirstWorker((), why),
        None => Merged::Combined(()),
    };
    workload.note("workload", &mut notes);
    let servers = runs.iter().filter(|r| r.server.is_some()).count();
    let server = match servers > 1 {
        true => Merged::FirstWorker(
            (),
            "several workers read the server's figures; the first's are the run's",
        ),
        false => Merged::Combined(()),
    };
    server.note("server", &mut notes);
    // Worker 0's server figures are the whole run's: per transaction of all clients.
    if let Some(s) = out.server.as_mut() {
        s.derived = s.derive(out.total.counts.cnt);
    }
    Some((out, notes))
}

/// Adds `r` into `into`; why its workload part could not be added, if it could not.
fn add(into: &mut RunResult, r: &RunResult) -> Option<&'static str> {
    into.settings.clients += r.settings.clients;
    into.settings.threads += r.settings.threads;
    into.settings.rate = into.settings.rate.zip(r.settings.rate).map(|(a, b)| a + b);
    into.total.merge(&r.total);
    for (mine, theirs) in into.scripts.iter_mut().zip(&r.scripts) {
        mine.stats.merge(&theirs.stats);
        for (c, d) in mine.commands.iter_mut().zip(&theirs.commands) {
            c.stats.merge(&d.stats);
        }
        add_histogram(&mut mine.histogram, &theirs.histogram);
    }
    into.bench_duration_us = into.bench_duration_us.max(r.bench_duration_us);
    into.conn_total_duration_us += r.conn_total_duration_us;
    into.conn_elapsed_duration_us = into
        .conn_elapsed_duration_us
        .max(r.conn_elapsed_duration_us);
    into.latency_late += r.latency_late;
    into.aborted_clients += r.aborted_clients;
    add_histogram(&mut into.histogram, &r.histogram);
    add_series(&mut into.series, &r.series);
    let unlike = match (into.workload.as_mut(), &r.workload) {
        (Some(w), Some(theirs)) => w.merge(theirs).err(),
        _ => None,
    };
    match (into.availability.as_mut(), &r.availability) {
        (Some(a), Some(theirs)) => a.merge(theirs),
        (None, Some(theirs)) => into.availability = Some(theirs.clone()),
        _ => {}
    }
    if into.server.is_none() {
        into.server.clone_from(&r.server);
    }
    // Each worker's machine of its own: the busiest client is the one that set the pace.
    let usage = |c: &Option<crate::warnings::ClientCpu>| c.as_ref().map(|c| c.usage());
    if usage(&r.client_cpu) > usage(&into.client_cpu) {
        into.client_cpu.clone_from(&r.client_cpu);
    }
    let severity = |e: &Option<crate::Ended>| e.as_ref().map(crate::Ended::severity);
    if severity(&r.ended) > severity(&into.ended) {
        into.ended.clone_from(&r.ended);
    }
    if let (Some(w), Some(theirs)) = (into.warmup.as_mut(), &r.warmup) {
        w.total.merge(&theirs.total);
        add_series(&mut w.series, &theirs.series);
    }
    unlike
}

/// A histogram that one side lacks is unknown for the whole.
fn add_histogram(into: &mut Option<LatencyHistogram>, other: &Option<LatencyHistogram>) {
    match (into.as_mut(), other) {
        (Some(h), Some(o)) => h.merge(o),
        _ => *into = None,
    }
}

/// Adds `other`'s seconds to those of the same `t` (seconds only one side has are
/// taken as they are).
fn add_series(into: &mut Vec<Second>, other: &[Second]) {
    for s in other {
        match into.binary_search_by_key(&s.t, |x| x.t) {
            Ok(i) => into[i].merge(s),
            Err(i) => into.insert(i, s.clone()),
        }
    }
}
