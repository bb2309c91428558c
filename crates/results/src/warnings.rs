//! Validity checks of a run: what makes its figures not to be trusted, each a
//! [`Warning`] with a code, a one-sentence message that says why it matters and what
//! to do, and the figures behind it. They are computed for every pgbench-rs run and
//! kept in the results file (`warnings`, and `not_checked` for the checks a run could
//! not have: those that need `--server-stats`, or a per-second series). How the run
//! ended (a signal, transactions cut, aborts, nothing measured) is checked in
//! `warnings/ending.rs`; the outages a `--reconnect` run rode through in
//! `warnings/outages.rs`; a sweep's or search's missing steps in `warnings/steps.rs`.

mod ending;
pub mod outages;
pub mod steps;

use crate::compare::interval;
pub use crate::run::client_cpu::ClientCpu;
use crate::run::RunResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One thing wrong with a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    pub code: String,
    pub message: String,
    pub figures: BTreeMap<String, f64>,
}

/// A check the run's data could not answer, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotChecked {
    pub code: String,
    pub reason: String,
}

/// The checks' outcome.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checks {
    pub warnings: Vec<Warning>,
    pub not_checked: Vec<NotChecked>,
}

/// CPU use per thread at or above which the client, not the server, set the pace.
pub const CLIENT_BUSY: f64 = 0.9;
/// A change of tps across the run (trend or step) beyond this share is not steady.
pub const UNSTEADY: f64 = 0.2;
/// The first seconds of a run without warm-up differ from the rest beyond this share.
pub const COLD: f64 = 0.2;
/// A measured window whose buffer hit ratio is below this, with its first seconds'
/// misses at least [`COLD_MISSES`] times the rest's, measured a cache that was filling.
pub const COLD_HIT_RATIO: f64 = 0.99;
pub const COLD_MISSES: f64 = 2.0;
/// Fewer blocks read than this in the first seconds is too little to tell a trend.
const COLD_MIN_READS: i64 = 100;

/// The builtins whose every transaction updates a `pgbench_branches` row.
const BRANCH_UPDATERS: &[&str] = &["<builtin: TPC-B (sort of)>", "<builtin: simple update>"];

fn warning(code: &str, message: String, figures: &[(&str, f64)]) -> Warning {
    Warning {
        code: code.into(),
        message,
        figures: figures.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

fn not_checked(code: &str, reason: &str) -> NotChecked {
    NotChecked {
        code: code.into(),
        reason: reason.into(),
    }
}

/// Every check of `run`.
pub fn check(run: &RunResult) -> Checks {
    let mut c = Checks::default();
    ending::check(run, &mut c);
    outages::check(run, &mut c);
    client_bottleneck(run, &mut c);
    scale_below_clients(run, &mut c);
    server_events(run, &mut c);
    let tps = whole_seconds_tps(run);
    if let Some(cold) = cold_cache(run) {
        c.warnings.push(cold);
    }
    if tps.is_empty() {
        let why = if !run.series.is_empty() {
            "the run lasted less than a whole second"
        } else if run.bench_duration_us <= 0.0 {
            "nothing was measured"
        } else {
            "the run recorded no per-second series (--export-json or --export-html records one)"
        };
        let unchecked = |code: &str, c: &mut Checks| {
            if !c.warnings.iter().any(|w| w.code == code) {
                c.not_checked.push(not_checked(code, why));
            }
        };
        unchecked("tps_not_steady", &mut c);
        // The run's length needs no whole second to be judged.
        too_short(run, &tps, &mut c);
        unchecked("cold_start", &mut c);
    } else {
        // A staged load changes by design (a ramp is no cold start): each stage has
        // its own figures instead.
        let staged = run.stages.is_some();
        let why = "the load changes by stage (--rate-stages, --client-stages)";
        match staged {
            true => c.not_checked.push(not_checked("tps_not_steady", why)),
            false => steadiness(&tps, &mut c),
        }
        too_short(run, &tps, &mut c);
        if !c.warnings.iter().any(|w| w.code == "cold_start") {
            match staged {
                true => c.not_checked.push(not_checked("cold_start", why)),
                false => cold_start(run, &tps, &mut c),
            }
        }
    }
    c
}

/// The seconds the run measured: its series' (whole seconds and the last one's
/// length), which is what `compare` cuts into batches; without a series, the
/// measured part's length.
fn measured_s(run: &RunResult) -> f64 {
    if run.series.is_empty() {
        return run.bench_duration_us.max(0.0) / 1e6;
    }
    run.series.iter().map(|s| s.length_s.unwrap_or(1.0)).sum()
}

/// tps of each whole second of the series (a partial last second is left out).
fn whole_seconds_tps(run: &RunResult) -> Vec<f64> {
    run.series
        .iter()
        .filter(|s| s.length_s.is_none())
        .map(|s| s.counts.cnt as f64)
        .collect()
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

fn client_bottleneck(run: &RunResult, c: &mut Checks) {
    // Whether the client set the pace is a question about measured figures; a run
    // stopped in its warm-up has none (a second of warm-up on a busy machine made one
    // look client-bound).
    if run.bench_duration_us <= 0.0 {
        c.not_checked
            .push(not_checked("client_bottleneck", "nothing was measured"));
        return;
    }
    let Some(cpu) = &run.client_cpu else {
        c.not_checked.push(not_checked(
            "client_bottleneck",
            "the run recorded no client CPU time",
        ));
        return;
    };
    let (usage, ready) = (cpu.usage(), cpu.ready());
    let message = if usage >= CLIENT_BUSY {
        let of = match cpu.cpu_limit {
            Some(l) if l < cpu.threads.max(1) as f64 => {
                format!(" of the {l:.2} CPUs its cgroup's quota allows")
            }
            _ => String::new(),
        };
        format!(
            "the client's threads were {:.0}% busy{of}, so the client may have set the pace rather than the server: run with more -j threads, more CPU for the client or from a bigger client machine",
            usage * 100.0
        )
    } else if let Some(ready) = ready.filter(|r| *r >= CLIENT_BUSY) {
        format!(
            "the client's threads were running or waiting for a CPU {:.0}% of the run ({:.0}% waiting: other processes or a CPU quota kept them off the CPUs), so the client may have set the pace rather than the server: give the client CPUs of its own",
            ready * 100.0,
            cpu.wait_s.unwrap_or(0.0) / cpu.wall_s / cpu.threads.max(1) as f64 * 100.0
        )
    } else {
        return;
    };
    let mut figures = vec![
        ("cpu_s", cpu.cpu_s),
        ("wall_s", cpu.wall_s),
        ("threads", cpu.threads as f64),
        ("usage", usage),
    ];
    figures.extend(cpu.cpu_limit.map(|l| ("cpu_limit", l)));
    figures.extend(cpu.wait_s.map(|w| ("wait_s", w)));
    figures.extend(ready.map(|r| ("ready", r)));
    c.warnings
        .push(warning("client_bottleneck", message, &figures));
}

fn scale_below_clients(run: &RunResult, c: &mut Checks) {
    let updaters = run
        .scripts
        .iter()
        .any(|s| BRANCH_UPDATERS.contains(&s.desc.as_str()));
    let clients = run.settings.clients;
    if updaters && (run.scale as i64) < clients as i64 {
        c.warnings.push(warning(
            "scale_below_clients",
            format!(
                "scale {} is below the {clients} clients, so clients wait on each other's updates of the same pgbench_branches rows: initialize with -s {clients} or more",
                run.scale
            ),
            &[("scale", run.scale as f64), ("clients", clients as f64)],
        ));
    }
}

fn server_events(run: &RunResult, c: &mut Checks) {
    let Some(server) = &run.server else {
        // A run stopped in its warm-up has no measured window to read.
        let why = if run.bench_duration_us <= 0.0 {
            "nothing was measured"
        } else {
            "needs --server-stats, which was off"
        };
        for code in ["checkpoint_in_window", "autovacuum_in_window"] {
            c.not_checked.push(not_checked(code, why));
        }
        return;
    };
    let d = &server.derived;
    // None counted in part of the window says nothing of the rest.
    let partial = "the window's end could not be read: its counters cover only part of it";
    let whole = server.end_read();
    match d.checkpoints {
        Some(0) if !whole => c
            .not_checked
            .push(not_checked("checkpoint_in_window", partial)),
        Some(n) if n > 0 => c.warnings.push(warning(
            "checkpoint_in_window",
            format!(
                "{n} checkpoint(s) began in the measured window, so its figures include their write and full-page-image cost: run longer than checkpoint_timeout or compare runs with the same checkpoints"
            ),
            &[("checkpoints", n as f64)],
        )),
        Some(_) => {}
        None => c.not_checked.push(not_checked(
            "checkpoint_in_window",
            "the server's checkpoint counters could not be read",
        )),
    }
    match d.autovacuums {
        Some(0) if !whole => c
            .not_checked
            .push(not_checked("autovacuum_in_window", partial)),
        Some(n) if n > 0 => c.warnings.push(warning(
            "autovacuum_in_window",
            format!(
                "autovacuum or autoanalyze ran {n} time(s) on the run's tables in the measured window, competing with the clients: vacuum before the run (pgbench does unless -n) or run long enough that it is part of the steady state"
            ),
            &[("autovacuums", n as f64)],
        )),
        Some(_) => {}
        None => c.not_checked.push(not_checked(
            "autovacuum_in_window",
            "pg_stat_all_tables could not be read",
        )),
    }
}

/// The least-squares line through the series: (its change across the run as a share
/// of the mean, the sum of squared residuals).
fn trend(tps: &[f64]) -> (f64, f64) {
    let n = tps.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = mean(tps);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in tps.iter().enumerate() {
        sxy += (i as f64 - mx) * (y - my);
        sxx += (i as f64 - mx) * (i as f64 - mx);
    }
    if sxx == 0.0 || my == 0.0 {
        return (0.0, 0.0);
    }
    let slope = sxy / sxx;
    let sse = tps
        .iter()
        .enumerate()
        .map(|(i, y)| (y - my - slope * (i as f64 - mx)).powi(2))
        .sum();
    (slope * (n - 1.0) / my, sse)
}

/// Sum of squared deviations from the mean.
fn sse(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum()
}

/// The one instant (each side at least a sixth of the run, and 3 s) that splits the
/// series into the two best-fitting means: (where, the change as a share of the
/// mean, the sum of squared residuals).
fn step(tps: &[f64]) -> Option<(usize, f64, f64)> {
    let m = mean(tps);
    let edge = (tps.len() / 6).max(3);
    if m == 0.0 || tps.len() < 2 * edge {
        return None;
    }
    (edge..=tps.len() - edge)
        .map(|k| {
            let change = (mean(&tps[k..]) - mean(&tps[..k])) / m;
            (k, change, sse(&tps[..k]) + sse(&tps[k..]))
        })
        .min_by(|a, b| a.2.total_cmp(&b.2))
}

fn steadiness(tps: &[f64], c: &mut Checks) {
    let Some((at, jump, step_sse)) = step(tps) else {
        return;
    };
    let (slope, line_sse) = trend(tps);
    let figures = [
        ("trend", slope),
        ("step", jump),
        ("step_at_s", at as f64),
        ("mean_tps", mean(tps)),
    ];
    // Whichever shape fits the seconds better describes the change.
    let what = if step_sse < line_sse && jump.abs() > UNSTEADY {
        Some(format!(
            "tps changed by {:+.0}% in one step at second {at}",
            jump * 100.0
        ))
    } else if slope.abs() > UNSTEADY {
        Some(format!(
            "tps changed by {:+.0}% across the run as a trend",
            slope * 100.0
        ))
    } else {
        None
    };
    if let Some(what) = what {
        c.warnings.push(warning(
            "tps_not_steady",
            format!("{what}, so its average describes no state the server was in: run longer, after a warm-up, and look at the per-second series for the cause"),
            &figures,
        ));
    }
}

/// One rule, whatever ended the run (`-T`, `-t`, a signal): the run's measured
/// seconds cut into batches of the length `compare` would take must make at least
/// [`interval::MIN_BATCHES`]. A run with fewer than two whole seconds has no
/// autocorrelation to size a batch by, so the shortest batch (2 s) is taken: such a
/// run is too short either way. Before, a `-t` run under a second was left
/// unchecked while a 2 s one warned, and a `-T 1` step whose one second came out
/// partial was left unchecked while one whose second was whole warned (#43).
fn too_short(run: &RunResult, tps: &[f64], c: &mut Checks) {
    if run.bench_duration_us <= 0.0 && run.series.is_empty() {
        if !c.warnings.iter().any(|w| w.code == "too_short_to_compare") {
            c.not_checked
                .push(not_checked("too_short_to_compare", "nothing was measured"));
        }
        return;
    }
    let seconds = measured_s(run);
    let len = interval::batch_length(tps);
    if run.series.is_empty() && seconds >= (len * interval::MIN_BATCHES) as f64 {
        // Long enough for the shortest batches; whether for the run's own is for its
        // series to say, and it has none.
        c.not_checked.push(not_checked(
            "too_short_to_compare",
            "the run recorded no per-second series (--export-json or --export-html records one)",
        ));
        return;
    }
    let batches = (seconds / len as f64).floor() as usize;
    if batches < interval::MIN_BATCHES {
        let shown = if seconds.fract() == 0.0 {
            format!("{seconds}")
        } else {
            format!("{seconds:.1}")
        };
        c.warnings.push(warning(
            "too_short_to_compare",
            format!(
                "{shown} s make {batches} batch(es) of {len} s where compare needs {}, so compare cannot put an interval on this run alone: run longer or repeat it at least {} times",
                interval::MIN_BATCHES,
                interval::MIN_RUNS
            ),
            &[
                ("seconds", seconds),
                ("batch_s", len as f64),
                ("batches", batches as f64),
            ],
        ));
    }
}

fn cold_start(run: &RunResult, tps: &[f64], c: &mut Checks) {
    if run.warmup.is_some() || tps.len() < 10 {
        return;
    }
    let head = (tps.len() / 5).clamp(2, 5);
    let (first, rest) = (mean(&tps[..head]), mean(&tps[head..]));
    if rest == 0.0 {
        return;
    }
    let change = first / rest - 1.0;
    if change.abs() > COLD {
        c.warnings.push(warning(
            "cold_start",
            format!(
                "the first {head} s differ by {:+.0}% from the rest's tps (caches and connections warming up) and count in the average: use --warmup=SECONDS",
                change * 100.0
            ),
            &[
                ("first_s", head as f64),
                ("first_tps", first),
                ("rest_tps", rest),
            ],
        ));
    }
}

/// The blocks each second of the server's series read and found in shared buffers
/// (`pg_stat_database`), the seconds that touched none left out.
fn reads_and_hits(run: &RunResult) -> Vec<(i64, i64)> {
    let Some(server) = &run.server else {
        return Vec::new();
    };
    server
        .series
        .iter()
        .filter_map(|s| {
            let db = |col| crate::server::counter(&s.counters, "pg_stat_database", col);
            db("blks_read").zip(db("blks_hit"))
        })
        .filter(|(read, hit)| read + hit > 0)
        .collect()
}

/// The share of `seconds`' blocks that were read (not found in shared buffers).
fn miss_share(seconds: &[(i64, i64)]) -> f64 {
    let (read, hit) = seconds
        .iter()
        .fold((0, 0), |(r, h), (read, hit)| (r + read, h + hit));
    read as f64 / (read + hit).max(1) as f64
}

/// A cold cache as `--server-stats` shows it, warm-up or not: the window's buffer
/// hit ratio is low, and its first seconds read far more of their blocks than the
/// rest (shared buffers filling: the first run after a server restart), which a
/// working set larger than the cache does not (it misses alike all along). The
/// client's tps may hide it: blocks the OS still caches are read quickly.
fn cold_cache(run: &RunResult) -> Option<Warning> {
    let seconds = reads_and_hits(run);
    if seconds.len() < 2 {
        return None;
    }
    let head = (seconds.len() / 5).clamp(1, 5);
    let (first, rest) = (miss_share(&seconds[..head]), miss_share(&seconds[head..]));
    let window = miss_share(&seconds);
    let first_reads: i64 = seconds[..head].iter().map(|(read, _)| read).sum();
    let cold = 1.0 - window < COLD_HIT_RATIO
        && first >= COLD_MISSES * rest
        && first_reads >= COLD_MIN_READS;
    if !cold {
        return None;
    }
    let hint = match &run.warmup {
        Some(w) => format!("a --warmup longer than {} s", w.seconds),
        None => "--warmup=SECONDS".to_string(),
    };
    Some(warning(
        "cold_start",
        format!(
            "the server's buffer hit ratio was {:.1}% in the first {head} s and {:.1}% after (shared buffers filling, as after a server restart), so the run measured a cold cache, which counts in its figures: use {hint}",
            (1.0 - first) * 100.0,
            (1.0 - rest) * 100.0
        ),
        &[
            ("first_s", head as f64),
            ("first_hit_ratio", 1.0 - first),
            ("rest_hit_ratio", 1.0 - rest),
            ("hit_ratio", 1.0 - window),
        ],
    ))
}

/// What `--print-warnings` and `pgbench-report check` print: one line a warning.
pub fn render(warnings: &[Warning]) -> String {
    warnings
        .iter()
        .map(|w| format!("warning: {}: {}\n", w.code, w.message))
        .collect()
}

#[cfg(test)]
mod tests;
