//! `pgbench-report history SUBCOMMAND`: the run history (`pgbench-history`) from
//! the command line. Each subcommand opens the store `--history` names (or the
//! default), reads or writes it, and prints; the work is in the history crate, the
//! reports are the results crate's (`show`, `compare`), the importers
//! `pgbench-report import`'s.

pub mod args;

use super::error::{usage, VerbError, EXIT_OK};
use super::io::{print, write_out};
use args::{Command, FilterArgs, HistoryArgs};
use pgbench_history::changepoint::Options;
use pgbench_history::environment::ClientFacts;
use pgbench_history::trend::GroupBy;
use pgbench_history::{
    diff, export, regressions, time, trend, Environment, Filter, Metric, RecordInput, RunId,
    RunRow, Store,
};
use pgbench_results::compare::{self, Side};
use pgbench_results::report::fmt_f;
use pgbench_results::{import, show, ResultsFile};

/// `regressions`: a series' newest change point made a figure worse.
pub const EXIT_REGRESSED: u8 = 3;

/// Runs the subcommand.
pub fn verb(args: HistoryArgs) -> Result<u8, VerbError> {
    let open = || match &args.history {
        Some(spec) => Store::open(spec),
        None => Store::open_default(),
    };
    match args.command {
        Command::List(a) => {
            let mut filter = filter(&a.filter)?;
            filter.limit = a.limit;
            let rows = open()?.list(&filter)?;
            print(&match a.json {
                true => export::list_json(&rows),
                false => list_text(&rows),
            })?;
        }
        Command::Show(a) => {
            let id = one_id("show", a.id)?;
            print(&show::render(&open()?.get(id)?.document))?;
        }
        Command::Compare(a) => {
            let ids = ids("compare", &a.ids, 2..)?;
            let mut store = open()?;
            let sides = ids
                .iter()
                .map(|id| {
                    Ok(Side {
                        label: format!("run {id}"),
                        runs: vec![store.get(*id)?.document],
                    })
                })
                .collect::<Result<Vec<_>, VerbError>>()?;
            if sides.iter().any(|s| s.runs[0].capacity.is_some()) {
                super::sweeps::comparison(&sides, false, &[])?;
            } else {
                print(&compare::render_table(&compare::compare(&sides)?))?;
            }
        }
        Command::Diff(a) => {
            let ids = ids("diff", &a.ids, 2..=2)?;
            let mut store = open()?;
            let (x, y) = (store.get(ids[0])?, store.get(ids[1])?);
            let d = diff::diff(&x, &y);
            print(&d.render(&format!("run {}", ids[0]), &format!("run {}", ids[1])))?;
        }
        Command::Trend(a) => {
            let metric = Metric::parse(
                a.metric
                    .as_deref()
                    .ok_or_else(|| usage("history trend needs --metric M"))?,
            )?;
            let group = match &a.group_by {
                Some(g) => GroupBy::parse(g)?,
                None => GroupBy::Series,
            };
            let mut store = open()?;
            let points = store.series(&filter(&a.filter)?, metric)?;
            let findings = regressions::find(&points, metric, Options::default());
            match &a.html {
                Some(path) => write_out(path, &trend::page(&points, metric, &group, &findings))?,
                None => print(&trend_text(&points, metric, &group))?,
            }
        }
        Command::Regressions(a) => {
            let metrics = match &a.metric {
                Some(m) => vec![Metric::parse(m)?],
                None => regressions::DEFAULT_METRICS.to_vec(),
            };
            let defaults = Options::default();
            let min_segment = a.min_segment.unwrap_or(defaults.min_segment);
            if min_segment < 2 {
                return Err(usage("history regressions: --min-segment is at least 2"));
            }
            let alpha = a.alpha.unwrap_or(defaults.alpha);
            if !(alpha > 0.0 && alpha < 1.0) {
                return Err(usage("history regressions: --alpha is between 0 and 1"));
            }
            let found = regressions::search(
                &mut open()?,
                &filter(&a.filter)?,
                &metrics,
                Options { min_segment, alpha },
            )?;
            print(&regressions::render(&found))?;
            if found.iter().any(|f| f.gates()) {
                return Ok(EXIT_REGRESSED);
            }
        }
        Command::Import(a) => {
            if a.files.is_empty() {
                return Err(usage("history import needs at least one file"));
            }
            if !a.log.is_empty() && a.files.len() != 1 {
                return Err(usage("history import: --log goes with one report file"));
            }
            let tags = tags(&a.tag)?;
            let runs = a
                .files
                .iter()
                .map(|f| Ok((read_any(f, &a.log, a.test.as_deref())?, f)))
                .collect::<Result<Vec<_>, VerbError>>()?;
            let records: Vec<(ResultsFile, RecordInput)> = runs
                .into_iter()
                .map(|(doc, _)| {
                    let rec = RecordInput {
                        tags: tags.clone(),
                        command_line: doc.command_line.clone(),
                        environment: Environment {
                            client: doc.client_host.as_ref().map(ClientFacts::from_host),
                            server: None,
                        },
                    };
                    (doc, rec)
                })
                .collect();
            let ids = open()?.record_all(&records)?;
            let mut text = String::new();
            for (f, id) in a.files.iter().zip(ids) {
                text.push_str(&format!("{f}: recorded as run {id}\n"));
            }
            print(&text)?;
        }
        Command::Export(a) => {
            let filter = filter(&a.filter)?;
            let mut store = open()?;
            print(&match a.csv {
                true => export::csv(&store.list(&filter)?),
                false => export::json(&mut store, &filter)?,
            })?;
        }
        Command::Rm(a) => {
            let id = one_id("rm", a.id)?;
            open()?.rm(id)?;
            print(&format!("removed run {id}\n"))?;
        }
    }
    Ok(EXIT_OK)
}

/// `K=V` words as pairs.
/// `merge --history`: the merged file recorded once, with the first worker's host; a
/// store that cannot be written is a warning (the merge itself went through).
pub fn record_merged(
    merged: &ResultsFile,
    store: Option<&str>,
    tag_words: &[String],
) -> Result<(), VerbError> {
    let tags = tags(tag_words)?;
    let opened = match store {
        Some(spec) => Store::open(spec),
        None => Store::open_default(),
    };
    let recorded = opened.and_then(|mut store| {
        store.record(
            merged,
            RecordInput {
                tags,
                command_line: merged.command_line.clone(),
                environment: Environment {
                    client: merged.client_host.as_ref().map(ClientFacts::from_host),
                    server: None,
                },
            },
        )
    });
    if let Err(e) = recorded {
        eprintln!("pgbench-report: warning: the merged run was not recorded in the history: {e}");
    }
    Ok(())
}

fn tags(words: &[String]) -> Result<Vec<(String, String)>, VerbError> {
    words
        .iter()
        .map(|w| match w.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(usage(format!("--tag \"{w}\": give KEY=VALUE"))),
        })
        .collect()
}

fn filter(a: &FilterArgs) -> Result<Filter, VerbError> {
    let now = time::now_us();
    let at = |t: &Option<String>| t.as_deref().map(|t| time::parse_since(t, now)).transpose();
    Ok(Filter {
        tags: tags(&a.tag)?,
        since_us: at(&a.since)?,
        until_us: at(&a.until)?,
        workload: a.workload.clone(),
        server: a.server.clone(),
        hostname: a.host.clone(),
        limit: None,
    })
}

fn one_id(what: &str, id: Option<String>) -> Result<RunId, VerbError> {
    let id = id.ok_or_else(|| usage(format!("history {what} takes a run's id")))?;
    Ok(id.parse()?)
}

fn ids(
    what: &str,
    words: &[String],
    count: impl std::ops::RangeBounds<usize>,
) -> Result<Vec<RunId>, VerbError> {
    if !count.contains(&words.len()) {
        return Err(usage(match what {
            "diff" => "history diff takes two runs' ids".to_string(),
            _ => format!("history {what} takes two or more runs' ids"),
        }));
    }
    words
        .iter()
        .map(|w| w.parse().map_err(VerbError::from))
        .collect()
}

/// A file to import: a results file, or a tool's output as `import` reads it.
fn read_any(
    path: &str,
    logs: &[std::path::PathBuf],
    test: Option<&str>,
) -> Result<ResultsFile, VerbError> {
    let text = std::fs::read_to_string(path).map_err(|e| VerbError::Read {
        file: path.to_string(),
        message: pgbench_results::destination::strerror(&e),
    })?;
    if text.trim_start().starts_with('{') {
        return super::io::read_doc(path);
    }
    let has_progress = text.starts_with("progress: ") || text.contains("\nprogress: ");
    let read = |p: &std::path::PathBuf| {
        std::fs::read_to_string(p)
            .map(|t| (p.display().to_string(), t))
            .map_err(|e| VerbError::Read {
                file: p.display().to_string(),
                message: pgbench_results::destination::strerror(&e),
            })
    };
    let inputs = import::Inputs {
        report: (path.to_string(), text.clone()),
        progress: has_progress.then(|| (path.to_string(), text.clone())),
        logs: logs.iter().map(read).collect::<Result<_, _>>()?,
        aggregate_logs: Vec::new(),
        test: test.map(str::to_string),
    };
    Ok(import::import(&inputs)?)
}

fn num(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| {
        fmt_f(v, if v.abs() >= 1000.0 { 1 } else { 3 })
    })
}

/// `list`'s table.
fn list_text(rows: &[RunRow]) -> String {
    let mut out = format!(
        "{:>6}  {:<27}  {:<28}  {:>4}  {:>12}  {:>10}  {}\n",
        "id", "started", "workload", "c", "tps", "p99 (ms)", "tags"
    );
    for r in rows {
        let f = &r.figures;
        let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut workload = f.workload.clone().unwrap_or_else(|| "-".into());
        if workload.chars().count() > 28 {
            workload = workload.chars().take(27).collect::<String>() + "…";
        }
        out.push_str(&format!(
            "{:>6}  {:<27}  {:<28}  {:>4}  {:>12}  {:>10}  {}\n",
            r.id,
            f.started_at.as_deref().unwrap_or("-"),
            workload,
            f.clients.map_or("-".to_string(), |c| c.to_string()),
            num(f.tps),
            num(f.p99_ms),
            tags.join(" ")
        ));
    }
    if rows.is_empty() {
        out.push_str("(no runs)\n");
    }
    out
}

/// `trend` without `--html`: each group's runs, oldest first.
fn trend_text(points: &[pgbench_history::Point], metric: Metric, group: &GroupBy) -> String {
    let mut groups: std::collections::BTreeMap<String, Vec<&pgbench_history::Point>> =
        Default::default();
    for p in points {
        groups.entry(group.of(p)).or_default().push(p);
    }
    let mut out = String::new();
    for (g, pts) in groups {
        out.push_str(&format!("{g}:\n"));
        for p in pts {
            out.push_str(&format!(
                "  run {:>6}  {:<27}  {} {}\n",
                p.id,
                p.started_at.as_deref().unwrap_or("-"),
                metric.name(),
                num(Some(p.value))
            ));
        }
    }
    if out.is_empty() {
        out.push_str(&format!("(no runs with {})\n", metric.name()));
    }
    out
}
