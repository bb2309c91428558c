//! The verbs: each takes its parsed options (`cli`), reads its files through
//! `pgbench_results` (`io`), and prints or writes the result. Errors are values
//! (`error`), printed by main as `pgbench-report: error: ...` with exit status 1.

use super::cli::{self, CompareArgs, HtmlArgs, ImportArgs, MergeArgs, Parsed, ShowArgs, Verb};
use super::error::{usage, VerbError, EXIT_INCOMPLETE, EXIT_OK, EXIT_REGRESSION, EXIT_UNDECIDED};
use super::io::{print, read_doc, write_out};
use pgbench_results::compare::{self, Gate, GateFinding, Side};
use pgbench_results::import;
use pgbench_results::merge;
use pgbench_results::show;
use std::path::PathBuf;

/// Runs the verb the arguments name; returns the exit status.
pub fn run(args: &[String]) -> Result<u8, VerbError> {
    match cli::parse(args)? {
        Parsed::Print(text) => print(&text).map(|()| EXIT_OK),
        Parsed::Run(Verb::Show(a)) => show_verb(a),
        Parsed::Run(Verb::Import(a)) => import_verb(a),
        Parsed::Run(Verb::Compare(a)) => compare_verb(a),
        Parsed::Run(Verb::Html(a)) => html_verb(a),
        Parsed::Run(Verb::Merge(a)) => merge_verb(a),
        Parsed::Run(Verb::Check(a)) => super::check::verb(a),
        Parsed::Run(Verb::History(a)) => super::history::verb(*a),
    }
}

fn show_verb(args: ShowArgs) -> Result<u8, VerbError> {
    let file = args
        .file
        .ok_or_else(|| usage("show takes exactly one results file"))?;
    let doc = read_doc(&file)?;
    print(&show::render(&doc))?;
    Ok(EXIT_OK)
}

fn import_verb(args: ImportArgs) -> Result<u8, VerbError> {
    let mut paths = import::Paths {
        progress: args.progress,
        logs: args.log,
        aggregate_logs: args.aggregate_log,
        test: args.test,
        ..import::Paths::default()
    };
    paths.report = match args.mixed {
        // One file of stdout and stderr together (`pgbench ... 2>&1 | tee run.log`):
        // the report parser skips progress lines and the progress parser the report.
        Some(file) => {
            if args.report.is_some() || paths.progress.is_some() {
                return Err(usage(
                    "import: a file of report and progress lines together takes no --report or --progress",
                ));
            }
            paths.progress = Some(file.clone());
            file
        }
        None => PathBuf::from(
            args.report
                .ok_or_else(|| usage("import needs --report FILE"))?,
        ),
    };
    let output = args
        .output
        .ok_or_else(|| usage("import needs -o OUT.json"))?;
    let doc = import::import_files(&paths)?;
    write_out(&output, &doc.to_json())?;
    Ok(EXIT_OK)
}

/// The files' labels: each file's name, with as many of its folders as tell it apart
/// from another of the same name (`a/run.json`, `b/run.json`).
fn labels<S: AsRef<str>>(paths: &[S]) -> Vec<String> {
    let parts: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| p.as_ref().split('/').filter(|c| !c.is_empty()).collect())
        .collect();
    let tail = |p: &[&str], k: usize| p[p.len().saturating_sub(k)..].join("/");
    parts
        .iter()
        .zip(paths)
        .map(|(p, path)| {
            (1..=p.len())
                .map(|k| tail(p, k))
                .find(|label| {
                    let k = label.split('/').count();
                    parts.iter().filter(|o| tail(o, k) == *label).count() == 1
                })
                .unwrap_or_else(|| path.as_ref().to_string())
        })
        .collect()
}

fn compare_verb(args: CompareArgs) -> Result<u8, VerbError> {
    // The gates first: a mistyped figure is told before any file is read.
    let gates = args
        .fail_if
        .iter()
        .map(|g| Gate::parse(g))
        .collect::<Result<Vec<_>, _>>()?;
    let (singles, groups) = (&args.files, args.groups());
    if !singles.is_empty() && !groups.is_empty() {
        return Err(usage(
            "compare takes either files or groups (--a ... --b ...), not both",
        ));
    }
    let sides = if groups.is_empty() {
        singles
            .iter()
            .zip(labels(singles))
            .map(|(f, label)| {
                Ok(Side {
                    label,
                    runs: vec![read_doc(f)?],
                })
            })
            .collect::<Result<Vec<_>, VerbError>>()?
    } else {
        let mut names = labels(&groups.concat()).into_iter();
        groups
            .iter()
            .map(|files| {
                let runs = files
                    .iter()
                    .map(|f| read_doc(f))
                    .collect::<Result<_, _>>()?;
                let names: Vec<String> = names.by_ref().take(files.len()).collect();
                Ok(Side {
                    label: names.join(", "),
                    runs,
                })
            })
            .collect::<Result<Vec<_>, VerbError>>()?
    };
    let findings: Vec<GateFinding> = if sides
        .iter()
        .flat_map(|s| &s.runs)
        .any(|d| d.capacity.is_some())
    {
        super::sweeps::comparison(&sides, !groups.is_empty(), &gates)?
    } else {
        let comparison = compare::compare(&sides)?;
        print(&compare::render_table(&comparison))?;
        gates.iter().flat_map(|g| g.check(&comparison)).collect()
    };
    let (mut tripped, mut undecided) = (false, false);
    for finding in findings {
        match finding {
            GateFinding::Regression(m) => {
                tripped = true;
                eprintln!("pgbench-report: regression: {m}");
            }
            GateFinding::Undecided(m) => {
                undecided = true;
                eprintln!("pgbench-report: undecided: {m}");
            }
        }
    }
    Ok(match (tripped, undecided) {
        (true, _) => EXIT_REGRESSION,
        (false, true) => EXIT_UNDECIDED,
        (false, false) => EXIT_OK,
    })
}

fn html_verb(args: HtmlArgs) -> Result<u8, VerbError> {
    let files = args.files;
    if files.is_empty() {
        return Err(usage("html needs at least one results file"));
    }
    let output = args
        .output
        .ok_or_else(|| usage("html needs -o PAGE.html"))?;
    let docs = files
        .iter()
        .zip(labels(&files))
        .map(|(f, label)| Ok((label, read_doc(f)?)))
        .collect::<Result<Vec<_>, VerbError>>()?;
    pgbench_results::html::check_files(&docs)?;
    write_out(&output, &pgbench_results::html::render_page(&docs))?;
    Ok(EXIT_OK)
}

fn merge_verb(args: MergeArgs) -> Result<u8, VerbError> {
    let MergeArgs {
        files,
        output,
        report_only,
        history,
        tag,
    } = args;
    if files.is_empty() {
        return Err(usage("merge needs the workers' results files"));
    }
    let docs = files
        .iter()
        .map(|f| Ok((f.to_string(), read_doc(f)?)))
        .collect::<Result<Vec<_>, VerbError>>()?;
    let (merged, notes) = match pgbench_results::capacity::merge::is_sweep(&docs) {
        true => pgbench_results::capacity::merge::merge_noting(&docs)?,
        false => merge::merge_noting(&docs)?,
    };
    // The report as `show` prints it (the merged `run`), then the table.
    let mut text = show::render(&merged);
    let record = merged.merge.as_ref();
    if let (false, Some(record)) = (report_only, record) {
        text.push('\n');
        text.push_str(&merge::table::render(record));
    }
    if output.as_deref() == Some("-") {
        eprint!("{text}");
    } else {
        print(&text)?;
    }
    for w in record.iter().flat_map(|r| r.warnings()) {
        eprintln!("pgbench-report: warning: {w}");
    }
    // What the merged file does not hold combined, and why.
    for n in &notes {
        eprintln!("pgbench-report: warning: {n}");
    }
    if let Some(path) = &output {
        write_out(path, &merged.to_json())?;
    }
    // The merged run is what the history keeps of a --worker run (each worker left
    // its share out); a store that fails is a warning, as after a run.
    let env_store = std::env::var("PGBENCH_RS_HISTORY")
        .ok()
        .filter(|s| !s.is_empty());
    if history.is_some() || env_store.is_some() {
        let store = history.filter(|s| !s.is_empty()).or(env_store);
        super::history::record_merged(&merged, store.as_deref(), &tag)?;
    } else if !tag.is_empty() {
        return Err(usage(
            "merge: --tag needs --history (or PGBENCH_RS_HISTORY)",
        ));
    }
    Ok(if record.is_some_and(|r| r.incomplete) {
        EXIT_INCOMPLETE
    } else {
        EXIT_OK
    })
}

#[cfg(test)]
mod tests {
    use super::labels;

    /// #22: files of the same name in different folders got the same label.
    #[test]
    fn labels_tell_files_of_one_name_apart_by_their_folders() {
        assert_eq!(
            labels(&["x/base/run.json", "x/new/run.json", "other.json"]),
            ["base/run.json", "new/run.json", "other.json"]
        );
        assert_eq!(
            labels(&["/a/b/r.json", "/c/b/r.json"]),
            ["a/b/r.json", "c/b/r.json"]
        );
        assert_eq!(labels(&["r.json", "r.json"]), ["r.json", "r.json"]);
    }
}
