//! The command line, declared with clap's derive: one subcommand per verb, its help
//! generated from these doc comments. clap splits the words and checks each option's
//! values; what a verb needs (a file, `-o`) each verb checks itself, so that the
//! message says it in the verb's words. clap's own complaints are reworded here into
//! the program's (`import: unknown option "--bogus"`), with exit status 1.

use super::error::{usage, VerbError};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory, Parser, Subcommand};
use std::path::PathBuf;

/// pgbench-report reads pgbench-rs results files (--export-json) and stock pgbench output.
#[derive(Debug, Parser)]
#[command(
    name = "pgbench-report",
    version,
    subcommand_required = true,
    subcommand_value_name = "VERB",
    subcommand_help_heading = "Verbs",
    after_help = "Run pgbench-report VERB --help for a verb's options."
)]
pub struct Cli {
    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Debug, Subcommand)]
pub enum Verb {
    Show(ShowArgs),
    Import(ImportArgs),
    Compare(CompareArgs),
    Html(HtmlArgs),
    Merge(MergeArgs),
    Check(CheckArgs),
    // Boxed: its subcommands' options would make every `Verb` as large.
    History(Box<super::history::args::HistoryArgs>),
}

/// Prints the report of a results file.
///
/// For a pgbench-rs run, exactly what the run printed (its banner, report and
/// latency percentiles; for a run stopped early, the warning after it that says why
/// and the seconds it ran); for an imported stock run, the figures its files gave,
/// in pgbench's words.
#[derive(Debug, Args)]
#[command(override_usage = "pgbench-report show FILE", verbatim_doc_comment)]
pub struct ShowArgs {
    /// the results file
    #[arg(value_name = "FILE")]
    pub file: Option<String>,
}

/// Turns stock pgbench's output into a results file.
///
/// Figures the files do not tell are null. The output of a workload's tool is read
/// as the report too, told apart by its content (the tools: `long_about`, from the
/// results crate's registry of workloads).
#[derive(Debug, Args)]
#[command(
    override_usage = "pgbench-report import --report STDOUT [options] -o OUT.json\n       \
                      pgbench-report import RUN.LOG [options] -o OUT.json",
    verbatim_doc_comment,
    long_about = format!(
        "Turns stock pgbench's output into a results file.\n\n\
         Figures the files do not tell are null. {}",
        pgbench_results::workload::registry::IMPORTS_HELP
    )
)]
pub struct ImportArgs {
    /// stdout and stderr in one file (pgbench ... 2>&1 | tee RUN.LOG):
    /// the report and its progress: lines together
    #[arg(value_name = "RUN.LOG", verbatim_doc_comment)]
    pub mixed: Option<PathBuf>,
    /// pgbench's standard output (the report); required without RUN.LOG
    #[arg(long, value_name = "FILE")]
    pub report: Option<String>,
    /// its standard error (progress: lines of -P, the random seed)
    #[arg(long, value_name = "FILE")]
    pub progress: Option<PathBuf>,
    /// its -l per-transaction logs (pgbench_log.PID[.N]), one per thread:
    /// exact latency percentiles and a per-second series
    #[arg(long, value_name = "FILE", num_args = 1.., verbatim_doc_comment)]
    pub log: Vec<PathBuf>,
    /// its --aggregate-interval logs: per-interval counters
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub aggregate_log: Vec<PathBuf>,
    /// the test the report is of, for a tool that does not name it
    #[arg(
        long,
        value_name = "NAME",
        help = pgbench_results::workload::registry::TEST_OPTION_HELP
    )]
    pub test: Option<String>,
    /// where to write the results file ('-' for stdout)
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<String>,
}

/// Sets runs side by side and tells their changes from noise.
///
/// Prints each figure of every side (tps, latency average, stddev, percentiles and
/// maximum, failures, retries, schedule lag, per script, per statement; with
/// --server-stats in every file, WAL bytes and blocks read per transaction, full-page
/// images, buffer hit ratio, checkpoints and wait events' shares), each later
/// side's change against the first, its 95% confidence interval, and whether the change
/// is within or beyond noise. Intervals: Welch's t over the runs of each side when every
/// side has 3 or more runs; batch means over the per-second series when every side has
/// one run (too short to tell when a run has fewer than 3 batches of seconds). Under
/// the table, a warning: line for each file's validity warnings (a run interrupted,
/// a cold start, ...) and for runs of different lengths. See docs/comparing.md.
#[derive(Debug, Args)]
#[command(
    override_usage = "pgbench-report compare A.json B.json [C.json...] [options]\n       \
                      pgbench-report compare --a A1.json A2.json... --b B1.json B2.json... [--c ...] [options]",
    after_help = "\
Exit status: 0 no gate tripped, 1 error, 2 a --fail-if gate tripped (a change
beyond noise), 4 none tripped but a change passing a gate's threshold could not be
told from noise (too short, too few runs: run longer or run groups).",
    verbatim_doc_comment
)]
pub struct CompareArgs {
    /// one run per side
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// the first group of repeated runs (side A)
    #[arg(long = "a", value_name = "FILE", num_args = 1..)]
    pub a: Vec<String>,
    /// the second group (side B)
    #[arg(long = "b", value_name = "FILE", num_args = 1..)]
    pub b: Vec<String>,
    /// a third group (also --d, --e, --f)
    #[arg(long = "c", value_name = "FILE", num_args = 1..)]
    pub c: Vec<String>,
    #[arg(long = "d", value_name = "FILE", num_args = 1.., hide = true)]
    pub d: Vec<String>,
    #[arg(long = "e", value_name = "FILE", num_args = 1.., hide = true)]
    pub e: Vec<String>,
    #[arg(long = "f", value_name = "FILE", num_args = 1.., hide = true)]
    pub f: Vec<String>,
    // The help as an attribute: rustdoc would read `<PCT` as an HTML tag.
    #[arg(long, value_name = "GATE", help = fail_if_help())]
    pub fail_if: Vec<String>,
}

/// `--fail-if`'s help: the figures a gate can name, as the figures' tables list
/// them (a workload's among them), wrapped as the rest of the help is.
fn fail_if_help() -> String {
    let summary = pgbench_results::compare::figures::gate_names().join(", ");
    let server = pgbench_results::compare::server::gate_names().join(", ");
    let text = format!(
        "FIGURE<PCT or FIGURE>PCT: exit with status 2 when a later side's change of \
         FIGURE is below (<) or above (>) PCT percent and not within noise, e.g. \
         'tps<-5%' or 'p99>10%'; may be repeated. FIGURE is one of: {summary}; with \
         --server-stats files also {server}, wait:TYPE:EVENT"
    );
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let line = lines.last_mut().expect("a line to start with");
        if !line.is_empty() && line.len() + 1 + word.len() > HELP_WIDTH {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines.push("(e.g. wait:LWLock:WALWrite)".to_string());
    lines.join("\n")
}

/// The width the hand-written helps keep to.
const HELP_WIDTH: usize = 79;

impl CompareArgs {
    /// The groups given (`--a` to `--f`), in their letters' order.
    pub fn groups(&self) -> Vec<&[String]> {
        [&self.a, &self.b, &self.c, &self.d, &self.e, &self.f]
            .into_iter()
            .filter(|g| !g.is_empty())
            .map(Vec::as_slice)
            .collect()
    }
}

/// Writes one self-contained page of charts.
///
/// No network is needed to view it. The files' figures and charts, every file
/// overlaid and labelled by its file name: tps over time, latency percentiles over
/// time, the latency distribution (percentile spectrum, log scale), failures and
/// retries over time when there are any, and statement latencies (-r); the --warmup
/// seconds shaded before the measured window; with --server-stats, the WAL rate,
/// buffer hit ratio and wait events (stacked) on the same seconds, with the seconds
/// in which a checkpoint began marked.
#[derive(Debug, Args)]
#[command(
    override_usage = "pgbench-report html FILE... -o PAGE.html",
    verbatim_doc_comment
)]
pub struct HtmlArgs {
    /// the results files
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// where to write the page ('-' for stdout); required
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<String>,
}

/// Merges the results files of the workers of one run.
///
/// The files of pgbench-rs --worker=I/N --export-json=FILE become one result, and
/// the report a single pgbench-rs with all their clients would have printed: counts
/// summed, tps over the common window, latency average and stddev from exact sums,
/// percentiles from the merged histograms. Then a table of each worker's own
/// figures, which flags a worker whose throughput per client or schedule lag stands
/// out (a saturated client machine). Files of different runs are refused; a missing
/// worker or one whose run was cut short is named, and what arrived is merged. See
/// docs/distributed.md.
#[derive(Debug, Args)]
#[command(
    override_usage = "pgbench-report merge FILE... [-o MERGED.json] [--report-only] [--history[=STORE]] [--tag K=V]...",
    after_help = "\
Exit status: 0 merged, 1 error (files refused), 3 merged but incomplete (a worker
missing or cut short).",
    verbatim_doc_comment
)]
pub struct MergeArgs {
    /// the workers' results files
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// also write the merged results file ('-' for stdout; the report and table
    /// then go to standard error)
    #[arg(short, long, value_name = "FILE", verbatim_doc_comment)]
    pub output: Option<String>,
    /// print the report alone, without the per-worker table
    #[arg(long)]
    pub report_only: bool,
    /// record the merged run in the run history (the workers record nothing
    /// themselves); default store: $PGBENCH_RS_HISTORY, which set alone records too
    #[arg(long, value_name = "STORE", num_args = 0..=1, require_equals = true, default_missing_value = "", verbatim_doc_comment)]
    pub history: Option<String>,
    /// a label for the recorded run (repeatable)
    #[arg(long, value_name = "K=V")]
    pub tag: Vec<String>,
}

/// Prints the validity warnings of each results file.
///
/// The run was interrupted (Ctrl-C, SIGTERM), transactions were cancelled after -T,
/// clients aborted, nothing was measured, the client was the bottleneck, the scale is
/// below the clients on tpcb-like/simple-update, a checkpoint or autovacuum in the
/// measured window (needs --server-stats), tps not steady, a run too short for
/// compare to give an interval, a cold start (the first seconds' tps without
/// --warmup; with --server-stats, a buffer hit ratio rising as the cache fills),
/// outages a --reconnect run rode through (unless --expect-outages).
/// Each says why it matters and what to do; checks a run could not have are listed
/// as not checked.
#[derive(Debug, Args)]
#[command(
    override_usage = "pgbench-report check FILE... [--fail-if-warnings] [--expect-outages]",
    after_help = "\
Exit status: 0 no warnings (or no --fail-if-warnings), 1 error, 2 a file has
warnings under --fail-if-warnings.",
    verbatim_doc_comment
)]
pub struct CheckArgs {
    /// the results files
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// exit with status 2 when any file has a warning
    #[arg(long)]
    pub fail_if_warnings: bool,
    /// the runs were made to measure an outage (--reconnect): no warning of it
    #[arg(long)]
    pub expect_outages: bool,
}

/// What the command line asks for: a verb to run, or a text (help, version) to print.
pub enum Parsed {
    Run(Verb),
    Print(String),
}

/// Parses the arguments after the program's name.
pub fn parse(args: &[String]) -> Result<Parsed, VerbError> {
    let argv = std::iter::once("pgbench-report").chain(args.iter().map(String::as_str));
    match Cli::try_parse_from(argv) {
        Ok(cli) => Ok(Parsed::Run(cli.verb)),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            Ok(Parsed::Print(e.render().to_string()))
        }
        // The verb is the first word: pgbench-report takes no option before it.
        Err(e) => Err(reword(
            &e,
            args.first()
                .map(String::as_str)
                .filter(|a| !a.starts_with('-')),
        )),
    }
}

/// clap's error in the program's words.
fn reword(e: &clap::Error, verb: Option<&str>) -> VerbError {
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => s.clone(),
        Some(ContextValue::Strings(v)) => v.first().cloned().unwrap_or_default(),
        _ => String::new(),
    };
    let invalid = context(ContextKind::InvalidArg);
    let prefix = verb.map(|v| format!("{v}: ")).unwrap_or_default();
    let message = match e.kind() {
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            if known_verb(verb) =>
        {
            format!("{prefix}no subcommand given")
        }
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            "no verb given".to_string()
        }
        // A verb's own subcommand (`history frobnicate`).
        ErrorKind::InvalidSubcommand if known_verb(verb) => {
            format!(
                "{prefix}unknown subcommand \"{}\"{}",
                context(ContextKind::InvalidSubcommand),
                did_you_mean(&context(ContextKind::SuggestedSubcommand))
            )
        }
        ErrorKind::InvalidSubcommand => format!(
            "unknown verb \"{}\"{}",
            context(ContextKind::InvalidSubcommand),
            did_you_mean(&context(ContextKind::SuggestedSubcommand))
        ),
        ErrorKind::UnknownArgument if invalid.starts_with('-') && invalid != "-" => {
            let name = invalid.split('=').next().unwrap_or_default();
            let suggested = context(ContextKind::SuggestedArg);
            format!(
                "{prefix}unknown option \"{name}\"{}",
                did_you_mean(visible(verb, &suggested))
            )
        }
        ErrorKind::UnknownArgument => format!("{prefix}unexpected argument \"{invalid}\""),
        ErrorKind::InvalidValue | ErrorKind::WrongNumberOfValues | ErrorKind::NoEquals => {
            // clap names the option `--report <FILE>`; `...` after a list's.
            let name = invalid.split_whitespace().next().unwrap_or_default();
            if invalid.ends_with("...") {
                format!("option {name} needs at least one file")
            } else {
                format!("option {name} needs a value")
            }
        }
        ErrorKind::TooManyValues => {
            let name = invalid.split_whitespace().next().unwrap_or_default();
            format!("{prefix}option {name} takes no value")
        }
        // Anything else, as clap words it: its first line, without "error: ".
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_string()
        }
    };
    usage(message)
}

/// Whether `verb` is one of the program's verbs (a word clap did not take for one
/// is the unknown verb itself).
fn known_verb(verb: Option<&str>) -> bool {
    verb.is_some_and(|v| Cli::command().find_subcommand(v).is_some())
}

/// clap's suggested option, unless it is one the help does not show (`compare`'s
/// `--d`, `--e`, `--f`): clap suggests among every option, and `--repot` got `--e`.
fn visible<'a>(verb: Option<&str>, suggested: &'a str) -> &'a str {
    let cmd = Cli::command();
    let cmd = verb.and_then(|v| cmd.find_subcommand(v)).unwrap_or(&cmd);
    let long = suggested.trim_start_matches('-');
    let hidden = cmd
        .get_arguments()
        .any(|a| a.is_hide_set() && a.get_long() == Some(long));
    if hidden {
        ""
    } else {
        suggested
    }
}

/// ` (did you mean "X"?)` for clap's suggestion, if it has one.
fn did_you_mean(suggested: &str) -> String {
    match suggested {
        "" => String::new(),
        s => format!(" (did you mean \"{s}\"?)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &str) -> Vec<String> {
        words.split_whitespace().map(String::from).collect()
    }

    fn error(words: &str) -> String {
        match parse(&args(words)) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{words}: parsed"),
        }
    }

    /// clap's own checks of the declarations (names, value names, conflicts).
    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// Groups are sides in their letters' order, whatever order they are given in;
    /// a letter given twice adds to its group.
    #[test]
    fn compare_groups_in_letter_order() {
        let Ok(Parsed::Run(Verb::Compare(c))) = parse(&args(
            "compare --b b1 b2 --a a1 --fail-if=tps<-5% --a a2 --fail-if p99>10%",
        )) else {
            panic!("not compare");
        };
        assert_eq!(c.groups(), [&["a1", "a2"][..], &["b1", "b2"][..]]);
        assert_eq!(c.fail_if, ["tps<-5%", "p99>10%"]);
        assert!(c.files.is_empty());
    }

    #[test]
    fn import_takes_lists_up_to_the_next_option() {
        let Ok(Parsed::Run(Verb::Import(i))) = parse(&args(
            "import --log l.0 l.1 --aggregate-log=a.0 -o - run.log",
        )) else {
            panic!("not import");
        };
        assert_eq!(i.log, [PathBuf::from("l.0"), PathBuf::from("l.1")]);
        assert_eq!(i.aggregate_log, [PathBuf::from("a.0")]);
        assert_eq!(i.output.as_deref(), Some("-"));
        assert_eq!(i.mixed, Some(PathBuf::from("run.log")));
    }

    /// clap's complaints, in the program's words (tests/report.rs pins some).
    #[test]
    fn usage_errors_are_worded_as_before() {
        for (words, wanted) in [
            ("", "no verb given"),
            ("frobnicate", "unknown verb \"frobnicate\""),
            ("history", "history: no subcommand given"),
            (
                "history lst",
                "history: unknown subcommand \"lst\" (did you mean \"list\"?)",
            ),
            (
                "comapre",
                "unknown verb \"comapre\" (did you mean \"compare\"?)",
            ),
            ("--bogus", "unknown option \"--bogus\""),
            ("import --bogus=1", "import: unknown option \"--bogus\""),
            ("import --repot x", "(did you mean \"--report\"?)"),
            // #33: not `--e`, which the help does not show.
            (
                "compare a.json --repot",
                "compare: unknown option \"--repot\"\n",
            ),
            ("import --report", "option --report needs a value"),
            ("import --log", "option --log needs at least one file"),
            ("import a b", "import: unexpected argument \"b\""),
            ("show a b", "show: unexpected argument \"b\""),
            (
                "merge --report-only=yes",
                "merge: option --report-only takes no value",
            ),
        ] {
            let e = error(words);
            assert!(e.contains(wanted), "{words}: {e}");
            assert!(e.ends_with("Try \"pgbench-report --help\" for more information."));
        }
    }

    /// `--fail-if`'s help names every figure a gate can name (the figures' tables
    /// say which; the help is written by hand).
    #[test]
    fn the_gate_help_names_every_gate_figure() {
        let Ok(Parsed::Print(help)) = parse(&args("compare --help")) else {
            panic!("no help");
        };
        let words: Vec<&str> = help
            .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
            .collect();
        for name in pgbench_results::compare::gate_figures() {
            assert!(words.contains(&name.as_str()), "{name} missing: {help}");
        }
        assert!(help.contains("wait:TYPE:EVENT"), "{help}");
    }

    /// The gate help, written from the figures' tables, reads as it did by hand.
    #[test]
    fn the_gate_help_lists_the_tables_figures_wrapped_as_before() {
        assert_eq!(
            fail_if_help(),
            "\
FIGURE<PCT or FIGURE>PCT: exit with status 2 when a later side's change of
FIGURE is below (<) or above (>) PCT percent and not within noise, e.g.
'tps<-5%' or 'p99>10%'; may be repeated. FIGURE is one of: tps, latency_avg,
latency_stddev, p50, p90, p99, p99.9, p99.99, max, failed, retries, lag_avg,
nopm, tpm; with --server-stats files also wal_bytes_per_transaction, fpi_share,
blks_read_per_transaction, hit_ratio, checkpoints, wait:TYPE:EVENT
(e.g. wait:LWLock:WALWrite)"
        );
    }

    /// Every verb has its help, starting with what it does and showing its usage.
    #[test]
    fn every_verb_prints_its_help() {
        for verb in [
            "show", "import", "compare", "html", "merge", "check", "history",
        ] {
            for flag in ["-h", "--help"] {
                let Ok(Parsed::Print(help)) = parse(&args(&format!("{verb} {flag}"))) else {
                    panic!("{verb} {flag}: no help");
                };
                assert!(
                    help.contains(&format!("\nUsage: pgbench-report {verb} ")),
                    "{help}"
                );
            }
        }
        let Ok(Parsed::Print(version)) = parse(&args("--version")) else {
            panic!("no version");
        };
        assert_eq!(
            version,
            format!("pgbench-report {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
}
