//! The verbs and their options: each parses its arguments, reads its files through
//! `pgbench_results`, and prints or writes the result. Errors are values, printed by
//! main as `pgbench-report: error: ...` with exit status 1.

use pgbench_results::compare::{self, CompareError, Gate, GateFinding, Side};
use pgbench_results::import::{self, ImportError};
use pgbench_results::merge::{self, MergeError};
use pgbench_results::{show, DocumentError, ResultsFile};
use std::io::Write;
use std::path::PathBuf;

/// Success.
pub const EXIT_OK: u8 = 0;
/// Bad arguments or unreadable input.
pub const EXIT_ERROR: u8 = 1;
/// `compare --fail-if`: a gate tripped.
pub const EXIT_REGRESSION: u8 = 2;
/// `merge`: merged, but a worker is missing or its run was cut short, so the result
/// covers less than the run (the merged file says so in `merge.incomplete`).
pub const EXIT_INCOMPLETE: u8 = 3;
/// `compare --fail-if`: no gate tripped, but a change passing a gate's threshold could
/// not be told from noise (runs too short, too few runs).
pub const EXIT_UNDECIDED: u8 = 4;

const USAGE: &str = "\
pgbench-report reads pgbench-rs results files (--export-json) and stock pgbench output.

Usage:
  pgbench-report show FILE
  pgbench-report import --report STDOUT [--progress STDERR] [--log FILE...]
                        [--aggregate-log FILE...] -o OUT.json
  pgbench-report import RUN.LOG [--log FILE...] -o OUT.json
  pgbench-report compare A.json B.json [C.json...] [options]
  pgbench-report compare --a A1.json A2.json... --b B1.json B2.json... [options]
  pgbench-report html FILE... -o PAGE.html
  pgbench-report merge FILE... [-o MERGED.json] [--report-only]
  pgbench-report check FILE... [--fail-if-warnings]

Run pgbench-report VERB --help for a verb's options.
";

const SHOW_HELP: &str = "\
pgbench-report show FILE

Prints the report of a results file: for a pgbench-rs run, exactly the report (and
latency percentiles) the run printed; for an imported stock run, the figures its
files gave, in pgbench's words.
";

const IMPORT_HELP: &str = "\
pgbench-report import --report STDOUT [options] -o OUT.json
pgbench-report import RUN.LOG [options] -o OUT.json

Turns stock pgbench's output into a results file; figures the files do not tell are
null. A sysbench run's output, or HammerDB's (hammerdbcli's, with its time profile
appended where it has one), is read as the report, told apart by its content.

Options:
  RUN.LOG               stdout and stderr in one file (pgbench ... 2>&1 | tee RUN.LOG):
                        the report and its progress: lines together
  --report FILE         pgbench's standard output (the report); required without RUN.LOG
  --progress FILE       its standard error (progress: lines of -P, the random seed)
  --log FILE...         its -l per-transaction logs (pgbench_log.PID[.N]), one per
                        thread: exact latency percentiles and a per-second series
  --aggregate-log FILE...
                        its --aggregate-interval logs: per-interval counters
  -o, --output FILE     where to write the results file ('-' for stdout)
";

const COMPARE_HELP: &str = "\
pgbench-report compare A.json B.json [C.json...] [options]
pgbench-report compare --a A1.json A2.json... --b B1.json B2.json... [--c ...] [options]

Prints each figure of every side (tps, latency average, stddev, percentiles and
maximum, failures, retries, schedule lag, per script, per statement; with
--server-stats in every file, WAL bytes and blocks read per transaction, full-page
images, buffer hit ratio, checkpoints and wait events' shares), each later
side's change against the first, its 95% confidence interval, and whether the change
is within or beyond noise. Intervals: Welch's t over the runs of each side when every
side has 3 or more runs; batch means over the per-second series when every side has
one run (too short to tell when a run has fewer than 3 batches of seconds). See
docs/comparing.md.

Options:
  --a FILE... --b FILE...  groups of repeated runs (also --c ... --f)
  --fail-if FIGURE<PCT     exit with status 2 when a later side's change of FIGURE is
  --fail-if FIGURE>PCT     below (<) or above (>) PCT percent and not within noise,
                           e.g. 'tps<-5%' or 'p99>10%'; may be repeated. FIGURE is one
                           of: tps, latency_avg, latency_stddev, p50, p90, p99, p99.9,
                           p99.99, max, failed, retries, lag_avg, nopm, tpm; with
                           --server-stats files also wal_bytes_per_transaction,
                           fpi_share, blks_read_per_transaction, hit_ratio,
                           checkpoints, wait:TYPE:EVENT (e.g. wait:LWLock:WALWrite)

Exit status: 0 no gate tripped, 1 error, 2 a --fail-if gate tripped (a change
beyond noise), 4 none tripped but a change passing a gate's threshold could not be
told from noise (too short, too few runs: run longer or run groups).
";

const HTML_HELP: &str = "\
pgbench-report html FILE... -o PAGE.html

Writes one self-contained page (no network needed to view it) with the files' figures
and charts, every file overlaid and labelled by its file name: tps over time, latency
percentiles over time, the latency distribution (percentile spectrum, log scale),
failures and retries over time when there are any, and statement latencies (-r);
the --warmup seconds shaded before the measured window; with --server-stats, the
WAL rate, buffer hit ratio and wait events (stacked) on the same seconds, with the
seconds in which a checkpoint began marked.

Options:
  -o, --output FILE     where to write the page ('-' for stdout); required
";

const MERGE_HELP: &str = "\
pgbench-report merge FILE... [-o MERGED.json] [--report-only]

Merges the results files of the workers of one run (pgbench-rs --worker=I/N
--export-json=FILE) into one result, and prints the report a single pgbench-rs with
all their clients would have printed: counts summed, tps over the common window,
latency average and stddev from exact sums, percentiles from the merged histograms.
Then a table of each worker's own figures, which flags a worker whose throughput per
client or schedule lag stands out (a saturated client machine). Files of different
runs are refused; a missing worker or one whose run was cut short is named, and what
arrived is merged. See docs/distributed.md.

Options:
  -o, --output FILE     also write the merged results file ('-' for stdout; the
                        report and table then go to standard error)
  --report-only         print the report alone, without the per-worker table

Exit status: 0 merged, 1 error (files refused), 3 merged but incomplete (a worker
missing or cut short).
";

/// Why a verb failed.
#[derive(Debug, thiserror::Error)]
pub enum VerbError {
    #[error("{0}\nTry \"pgbench-report --help\" for more information.")]
    Usage(String),
    #[error("{file}: {message}")]
    Read { file: String, message: String },
    #[error("{file}: {source}")]
    Document {
        file: String,
        #[source]
        source: DocumentError,
    },
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Compare(#[from] CompareError),
    #[error(transparent)]
    Merge(#[from] MergeError),
    #[error("{file}: cannot write: {message}")]
    Write { file: String, message: String },
    #[error(transparent)]
    Output(#[from] pgbench_results::destination::WriteError),
}

pub fn usage(msg: impl Into<String>) -> VerbError {
    VerbError::Usage(msg.into())
}

/// A verb: its arguments to its exit status.
type Verb = fn(&[String]) -> Result<u8, VerbError>;

/// Runs the verb `args[0]`; returns the exit status.
pub fn run(args: &[String]) -> Result<u8, VerbError> {
    let Some((verb, rest)) = args.split_first() else {
        return Err(usage("no verb given"));
    };
    let wants_help = rest.iter().any(|a| a == "--help" || a == "-h");
    let (help, verb_fn): (&str, Verb) = match verb.as_str() {
        "--help" | "-h" | "help" => return print(USAGE).map(|()| EXIT_OK),
        "--version" | "-V" => {
            return print(&format!("pgbench-report {}\n", env!("CARGO_PKG_VERSION")))
                .map(|()| EXIT_OK)
        }
        "show" => (SHOW_HELP, show_verb),
        "import" => (IMPORT_HELP, import_verb),
        "compare" => (COMPARE_HELP, compare_verb),
        "html" => (HTML_HELP, html_verb),
        "merge" => (MERGE_HELP, merge_verb),
        "check" => (super::check::HELP, super::check::verb),
        other => return Err(usage(format!("unknown verb \"{other}\""))),
    };
    if wants_help {
        return print(help).map(|()| EXIT_OK);
    }
    verb_fn(rest)
}

/// Writes to stdout; a closed pipe is not a panic.
pub fn print(text: &str) -> Result<(), VerbError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| VerbError::Write {
            file: "standard output".to_string(),
            message: pgbench_results::destination::strerror(&e),
        })
}

/// Reads a results file.
pub fn read_doc(path: &str) -> Result<ResultsFile, VerbError> {
    let text = std::fs::read_to_string(path).map_err(|e| VerbError::Read {
        file: path.to_string(),
        message: pgbench_results::destination::strerror(&e),
    })?;
    let mut doc = ResultsFile::from_json(&text).map_err(|source| VerbError::Document {
        file: path.to_string(),
        source,
    })?;
    // A file written before passwords were masked (or edited) is masked as it is read,
    // so that nothing this program writes or prints holds one.
    for arg in &mut doc.command_line {
        *arg = pgbench_wire::redact_secrets(arg);
    }
    if let Some(serde_json::Value::String(db)) = doc.options.get_mut("dbname") {
        *db = pgbench_wire::redact_secrets(db);
    }
    Ok(doc)
}

/// Writes `text` to `path`, or stdout for `-`.
pub fn write_out(path: &str, text: &str) -> Result<(), VerbError> {
    if path == "-" {
        return print(text);
    }
    pgbench_results::destination::write(path, text.as_bytes()).map_err(VerbError::Output)
}

fn show_verb(args: &[String]) -> Result<u8, VerbError> {
    let [file] = args else {
        return Err(usage("show takes exactly one results file"));
    };
    if file.starts_with('-') && file != "-" {
        return Err(usage(format!("show: unknown option \"{file}\"")));
    }
    let doc = read_doc(file)?;
    print(&show::render(&doc))?;
    Ok(EXIT_OK)
}

/// Splits `--name=value` and `--name value`; `takes_list` options take every
/// following argument up to the next option.
pub struct Options<'a> {
    args: &'a [String],
    i: usize,
}

impl<'a> Options<'a> {
    pub fn new(args: &'a [String]) -> Options<'a> {
        Options { args, i: 0 }
    }

    /// The next argument: `Some((Some(option), inline value))` or `(None, positional)`.
    pub fn next(&mut self) -> Option<(Option<&'a str>, Option<&'a str>)> {
        let a = self.args.get(self.i)?.as_str();
        self.i += 1;
        if a.starts_with("--") && a.len() > 2 {
            Some(match a.split_once('=') {
                Some((k, v)) => (Some(k), Some(v)),
                None => (Some(a), None),
            })
        } else if a.starts_with('-') && a.len() > 1 {
            Some((Some(a), None))
        } else {
            Some((None, Some(a)))
        }
    }

    /// The option's value: inline, or the next argument.
    pub fn value(&mut self, name: &str, inline: Option<&'a str>) -> Result<&'a str, VerbError> {
        if let Some(v) = inline {
            return Ok(v);
        }
        let v = self
            .args
            .get(self.i)
            .ok_or_else(|| usage(format!("option {name} needs a value")))?;
        self.i += 1;
        Ok(v)
    }

    /// The option's values: inline, then every following non-option argument.
    pub fn values(
        &mut self,
        name: &str,
        inline: Option<&'a str>,
    ) -> Result<Vec<&'a str>, VerbError> {
        let mut v: Vec<&str> = inline.into_iter().collect();
        while let Some(a) = self.args.get(self.i) {
            if a.starts_with('-') && a != "-" {
                break;
            }
            v.push(a);
            self.i += 1;
        }
        if v.is_empty() {
            return Err(usage(format!("option {name} needs at least one file")));
        }
        Ok(v)
    }
}

fn import_verb(args: &[String]) -> Result<u8, VerbError> {
    let mut paths = import::Paths::default();
    let (mut report, mut output, mut mixed) = (None, None, None);
    let mut opts = Options::new(args);
    while let Some((name, value)) = opts.next() {
        match name {
            Some("--report") => report = Some(opts.value("--report", value)?),
            Some("--progress") => paths.progress = Some(PathBuf::from(opts.value("--progress", value)?)),
            Some("--log") => paths.logs.extend(opts.values("--log", value)?.into_iter().map(PathBuf::from)),
            Some("--aggregate-log") => paths
                .aggregate_logs
                .extend(opts.values("--aggregate-log", value)?.into_iter().map(PathBuf::from)),
            Some("-o" | "--output") => output = Some(opts.value("--output", value)?),
            Some(other) => return Err(usage(format!("import: unknown option \"{other}\""))),
            // One file of stdout and stderr together (`pgbench ... 2>&1 | tee run.log`):
            // the report parser skips progress lines and the progress parser the report.
            None if mixed.is_none() => mixed = value.map(PathBuf::from),
            None => {
                return Err(usage(format!(
                    "import: unexpected argument \"{}\" (one file of report and progress lines, or --report and --progress)",
                    value.unwrap_or_default()
                )))
            }
        }
    }
    paths.report = match mixed {
        Some(file) => {
            if report.is_some() || paths.progress.is_some() {
                return Err(usage(
                    "import: a file of report and progress lines together takes no --report or --progress",
                ));
            }
            paths.progress = Some(file.clone());
            file
        }
        None => PathBuf::from(report.ok_or_else(|| usage("import needs --report FILE"))?),
    };
    let output = output.ok_or_else(|| usage("import needs -o OUT.json"))?;
    let doc = import::import_files(&paths)?;
    write_out(output, &doc.to_json())?;
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

fn compare_verb(args: &[String]) -> Result<u8, VerbError> {
    let mut singles: Vec<&str> = Vec::new();
    let mut groups: Vec<Vec<&str>> = Vec::new();
    let mut gates = Vec::new();
    let mut opts = Options::new(args);
    while let Some((name, value)) = opts.next() {
        match name {
            None => singles.extend(value),
            Some("--fail-if") => gates.push(Gate::parse(opts.value("--fail-if", value)?)?),
            Some(g) if g.len() == 3 && ("--a"..="--f").contains(&g) => {
                let files = opts.values(g, value)?;
                groups.push(files);
            }
            Some(other) => return Err(usage(format!("compare: unknown option \"{other}\""))),
        }
    }
    if !singles.is_empty() && !groups.is_empty() {
        return Err(usage(
            "compare takes either files or groups (--a ... --b ...), not both",
        ));
    }
    let sides = if groups.is_empty() {
        singles
            .iter()
            .zip(labels(&singles))
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
    let comparison = compare::compare(&sides)?;
    print(&compare::render_table(&comparison))?;
    let (mut tripped, mut undecided) = (false, false);
    for finding in gates.iter().flat_map(|g| g.check(&comparison)) {
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

fn html_verb(args: &[String]) -> Result<u8, VerbError> {
    let mut files = Vec::new();
    let mut output = None;
    let mut opts = Options::new(args);
    while let Some((name, value)) = opts.next() {
        match name {
            None => files.extend(value),
            Some("-o" | "--output") => output = Some(opts.value("--output", value)?),
            Some(other) => return Err(usage(format!("html: unknown option \"{other}\""))),
        }
    }
    if files.is_empty() {
        return Err(usage("html needs at least one results file"));
    }
    let output = output.ok_or_else(|| usage("html needs -o PAGE.html"))?;
    let docs = files
        .iter()
        .zip(labels(&files))
        .map(|(f, label)| Ok((label, read_doc(f)?)))
        .collect::<Result<Vec<_>, VerbError>>()?;
    write_out(output, &pgbench_results::html::render_page(&docs))?;
    Ok(EXIT_OK)
}

fn merge_verb(args: &[String]) -> Result<u8, VerbError> {
    let mut files = Vec::new();
    let (mut output, mut report_only) = (None, false);
    let mut opts = Options::new(args);
    while let Some((name, value)) = opts.next() {
        match name {
            None => files.extend(value),
            Some("-o" | "--output") => output = Some(opts.value("--output", value)?),
            Some("--report-only") => report_only = true,
            Some(other) => return Err(usage(format!("merge: unknown option \"{other}\""))),
        }
    }
    if files.is_empty() {
        return Err(usage("merge needs the workers' results files"));
    }
    let docs = files
        .iter()
        .map(|f| Ok((f.to_string(), read_doc(f)?)))
        .collect::<Result<Vec<_>, VerbError>>()?;
    let merged = merge::merge(&docs)?;
    // The report as `show` prints it (the merged `run`), then the table.
    let mut text = show::render(&merged);
    let record = merged.merge.as_ref();
    if let (false, Some(record)) = (report_only, record) {
        text.push('\n');
        text.push_str(&merge::table::render(record));
    }
    if output == Some("-") {
        eprint!("{text}");
    } else {
        print(&text)?;
    }
    for w in record.iter().flat_map(|r| r.warnings()) {
        eprintln!("pgbench-report: warning: {w}");
    }
    if let Some(path) = output {
        write_out(path, &merged.to_json())?;
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
    fn issue_22_labels_tell_files_of_one_name_apart_by_their_folders() {
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
