//! Whether files are workers of one run, before anything is added up: each has a
//! `worker` entry and exact counters, they agree on the run (id, worker count, start
//! instant, seed, every option but the per-worker ones, the settings and scripts),
//! no index comes twice and no two workers claim the same clients. Also: whether a
//! worker's own run was cut short.

use super::MergeError;
use crate::document::{ResultsFile, WorkerInfo};
use crate::run::{Limit, RunResult};

/// Options that may differ between the workers of one run: each worker's `-c` and
/// `-j` and its `--worker=I/N`, and what `--worker` lets each worker choose for
/// itself without changing the run's id (its `--log-prefix`, `-d`).
pub const PER_WORKER_OPTIONS: [&str; 5] = ["client", "jobs", "worker", "log-prefix", "debug"];

/// A worker's file, checked to have what a merge needs.
pub struct WorkerFile<'a> {
    pub file: &'a str,
    pub doc: &'a ResultsFile,
    pub worker: &'a WorkerInfo,
    pub run: &'a RunResult,
}

/// The files as workers of one run, in index order.
pub fn workers<'a>(files: &'a [(String, ResultsFile)]) -> Result<Vec<WorkerFile<'a>>, MergeError> {
    let mut out = files
        .iter()
        .map(|(file, doc)| {
            let worker = doc
                .worker
                .as_ref()
                .ok_or_else(|| MergeError::NotWorker { file: file.clone() })?;
            let run = doc
                .run
                .as_ref()
                .ok_or_else(|| MergeError::NoRun { file: file.clone() })?;
            plausible(file, worker, run)?;
            if worker.index >= worker.count {
                return Err(MergeError::IndexOutOfRange {
                    file: file.clone(),
                    index: worker.index,
                    count: worker.count,
                });
            }
            Ok(WorkerFile {
                file,
                doc,
                worker,
                run,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_by_key(|w| w.worker.index);
    let Some(first) = out.first() else {
        return Err(MergeError::NoFiles);
    };
    for w in &out[1..] {
        same_run(first, w)?;
    }
    for pair in out.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.worker.index == b.worker.index {
            return Err(MergeError::Duplicate {
                index: a.worker.index,
                first: a.file.to_string(),
                second: b.file.to_string(),
            });
        }
        let a_end = u64::from(a.worker.first_client) + a.run.settings.clients as u64;
        if a_end > u64::from(b.worker.first_client) {
            return Err(MergeError::ClientsOverlap {
                first: a.file.to_string(),
                second: b.file.to_string(),
            });
        }
    }
    Ok(out)
}

/// PostgreSQL's most connections (MAX_BACKENDS): every worker has a client, and all
/// connect to one server.
const MAX_WORKERS: u32 = 262_143;

/// Refuses numbers no run writes: more workers than a server takes connections,
/// client numbers past a C int (pgbench's), negative counters.
fn plausible(file: &str, worker: &WorkerInfo, run: &RunResult) -> Result<(), MergeError> {
    let refuse = |field: &str, value: String, why| {
        Err(MergeError::Implausible {
            file: file.to_string(),
            field: field.to_string(),
            value,
            why,
        })
    };
    if worker.count > MAX_WORKERS {
        return refuse(
            "worker.count",
            worker.count.to_string(),
            "more workers than a PostgreSQL server takes connections",
        );
    }
    // Checked sums: 2^64-1 clients wrapped to a plausible count.
    let clients = run.settings.clients as u64;
    let last = u64::from(worker.first_client).checked_add(clients);
    if clients == 0 || last.is_none_or(|l| l > i32::MAX as u64) {
        return refuse(
            "options.client",
            clients.to_string(),
            "not a client count of a worker starting at \"worker.first_client\"",
        );
    }
    let threads = run.settings.threads as u64;
    if threads == 0 || threads > clients {
        return refuse(
            "options.jobs",
            threads.to_string(),
            "not a thread count of a worker with \"options.client\" clients",
        );
    }
    let stats = std::iter::once(("run.total", &run.total)).chain(
        run.scripts
            .iter()
            .map(|s| ("run.scripts[].stats", &s.stats)),
    );
    for (name, s) in stats {
        let counters = [
            ("cnt", s.counts.cnt),
            ("skipped", s.counts.skipped),
            ("retries", s.counts.retries),
            ("retried", s.counts.retried),
            ("serialization_failures", s.counts.serialization_failures),
            ("deadlock_failures", s.counts.deadlock_failures),
            ("latency.count", s.latency.count),
        ];
        if let Some((field, value)) = counters.iter().find(|(_, v)| *v < 0) {
            return refuse(&format!("{name}.{field}"), value.to_string(), "negative");
        }
    }
    Ok(())
}

/// `w` is of the same run as `first`, field by field; the first field that differs
/// is named.
fn same_run(first: &WorkerFile, w: &WorkerFile) -> Result<(), MergeError> {
    let differs = |field: &str, ours: String, theirs: String| MergeError::Differs {
        first: first.file.to_string(),
        file: w.file.to_string(),
        field: field.to_string(),
        ours,
        theirs,
    };
    let (a, b) = (first.worker, w.worker);
    agree("worker.run_id", &a.run_id, &b.run_id, &differs)?;
    agree("worker.count", &a.count, &b.count, &differs)?;
    agree(
        "worker.start_unix_us",
        &a.start_unix_us,
        &b.start_unix_us,
        &differs,
    )?;
    let seed = |d: &ResultsFile| d.random_seed.map_or("null".to_string(), |s| s.to_string());
    if first.doc.random_seed != w.doc.random_seed {
        return Err(differs("random_seed", seed(first.doc), seed(w.doc)));
    }
    let keys = first.doc.options.keys().chain(w.doc.options.keys());
    for key in keys.filter(|k| !PER_WORKER_OPTIONS.contains(&k.as_str())) {
        let (x, y) = (first.doc.options.get(key), w.doc.options.get(key));
        if x != y {
            let show =
                |v: Option<&serde_json::Value>| v.map_or("absent".to_string(), |v| v.to_string());
            return Err(differs(&format!("options.{key}"), show(x), show(y)));
        }
    }
    same_measurement(first, w, &differs)
}

/// `differs` for `field` unless the two files' values are equal.
fn agree<T: PartialEq + std::fmt::Display>(
    field: &str,
    ours: &T,
    theirs: &T,
    differs: &dyn Fn(&str, String, String) -> MergeError,
) -> Result<(), MergeError> {
    if ours == theirs {
        Ok(())
    } else {
        Err(differs(field, ours.to_string(), theirs.to_string()))
    }
}

/// The parts of the exact result that must agree: the settings (apart from the
/// client and thread counts), the scale, the partitions and the scripts.
fn same_measurement(
    first: &WorkerFile,
    w: &WorkerFile,
    differs: &dyn Fn(&str, String, String) -> MergeError,
) -> Result<(), MergeError> {
    let (a, b) = (first.run, w.run);
    let mut b_settings = b.settings.clone();
    b_settings.clients = a.settings.clients;
    b_settings.threads = a.settings.threads;
    if a.settings != b_settings {
        let show = |s: &crate::run::RunSettings| serde_json::to_string(s).unwrap_or_default();
        return Err(differs(
            "run.settings",
            show(&a.settings),
            show(&b.settings),
        ));
    }
    agree("run.scale", &a.scale, &b.scale, differs)?;
    if a.partitions != b.partitions {
        let show =
            |p: &Option<crate::run::Partitions>| serde_json::to_string(p).unwrap_or_default();
        return Err(differs(
            "run.partitions",
            show(&a.partitions),
            show(&b.partitions),
        ));
    }
    let shape = |r: &RunResult| {
        r.scripts
            .iter()
            .map(|s| {
                let lines: Vec<&str> = s.commands.iter().map(|c| c.first_line.as_str()).collect();
                format!("{} @{} {lines:?}", s.desc, s.weight)
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    if shape(a) != shape(b) {
        return Err(differs("run.scripts", shape(a), shape(b)));
    }
    Ok(())
}

/// How much short of `-T` a run may end and still count as whole. pgbench counts
/// `-T` from its start-up, before the initial connections (`--worker` from the
/// agreed start instant, after them), and a run ends when its last client does, at
/// or after that deadline: connection time plus run time reach `-T` either way. The
/// slack covers the clock's reads and a worker that woke a little late.
const DURATION_SLACK_US: f64 = 10_000.0;

/// Why a worker's run covers less than its options asked for, if it does: aborted
/// clients (its report said "the above results are incomplete"), a `-T` run that
/// ended before its deadline (a signal stopped it: the file is still written after
/// Ctrl-C or SIGTERM), or a `-t` run that processed fewer transactions than asked.
pub fn cut_short(run: &RunResult) -> Option<String> {
    let clients = run.settings.clients;
    if run.aborted_clients > 0 {
        return Some(format!(
            "{} of its {clients} clients aborted",
            run.aborted_clients
        ));
    }
    let since_start_up = run.conn_elapsed_duration_us + run.bench_duration_us;
    match run.settings.limit {
        Limit::Duration(secs) if since_start_up + DURATION_SLACK_US < secs as f64 * 1e6 => {
            Some(format!(
                "it stopped {:.1} s into its -T {secs} s",
                since_start_up / 1e6
            ))
        }
        Limit::Transactions(n) => {
            let wanted = i64::from(n) * clients as i64;
            let done = run.total.total();
            (done < wanted).then(|| format!("it processed {done} of its {wanted} transactions"))
        }
        Limit::Duration(_) => None,
    }
}
