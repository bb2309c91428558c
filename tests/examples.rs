//! The authoring material runs as written: every script of `examples/` (found by
//! listing the directory, so a new example is covered without touching this file)
//! with pgbench-rs and with stock pgbench, and every script of
//! `docs/script-language.md` prints exactly what the guide says it prints, with both.
//!
//! Example headers carry the machine-readable lines this test reads:
//! `-- test-options: ARGS` adds options to the run (`-M extended` for a pipeline, or
//! a whole weighted `-f` list that names the script itself). Runs happen in the
//! examples directory, so such a list names other examples by file name.

use crate::support::{self, fresh_db, run, Db};
use std::path::{Path, PathBuf};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
const GUIDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/script-language.md");

/// `-t 5 -c 2`: what every example's report must count.
const PROCESSED: &str = "number of transactions actually processed: 10/10";

/// One runnable example script.
struct Example {
    file: String,
    text: String,
}

impl Example {
    /// The leading comment block.
    fn header(&self) -> Vec<&str> {
        self.text
            .lines()
            .take_while(|l| l.starts_with("--"))
            .collect()
    }

    fn test_options(&self) -> Vec<String> {
        self.header()
            .iter()
            .filter_map(|l| l.strip_prefix("-- test-options:"))
            .flat_map(|o| o.split_whitespace().map(str::to_string))
            .collect()
    }

    /// The options of the test run after `-t 5 -c 2 -n`: the header's, with
    /// `-f FILE` first unless they name this script already.
    fn run_args(&self) -> Vec<String> {
        let opts = self.test_options();
        let names_itself = opts.iter().enumerate().any(|(i, o)| {
            let value = match o.as_str() {
                "-f" | "--file" => opts.get(i + 1).map(String::as_str),
                _ => o
                    .strip_prefix("--file=")
                    .or_else(|| o.strip_prefix("-f").filter(|v| !v.is_empty())),
            };
            value.is_some_and(|v| v.rsplit_once('@').map_or(v, |(f, _)| f) == self.file)
        });
        let mut args = Vec::new();
        if !names_itself {
            args.extend(["-f".to_string(), self.file.clone()]);
        }
        args.extend(opts);
        args
    }
}

fn sorted_files(suffix: &str, keep: impl Fn(&str) -> bool) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(EXAMPLES)
        .expect("examples directory")
        .map(|e| e.expect("directory entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            (name.ends_with(suffix) && keep(&name)).then_some((name, p))
        })
        .collect();
    files.sort();
    files
}

fn examples() -> Vec<Example> {
    sorted_files(".sql", |n| !n.ends_with(".setup.sql"))
        .into_iter()
        .map(|(file, path)| Example {
            text: std::fs::read_to_string(&path).expect("read example"),
            file,
        })
        .collect()
}

fn setups() -> Vec<(String, String)> {
    sorted_files(".setup.sql", |_| true)
        .into_iter()
        .map(|(file, path)| (file, std::fs::read_to_string(path).expect("read setup")))
        .collect()
}

/// What is wrong with one run of an example, if anything.
fn check_run(who: &str, ex: &Example, args: &[String], out: &support::Run) -> Option<String> {
    let report_ok = out.stdout.contains(PROCESSED) && out.stdout.contains("tps = ");
    if out.code == 0 && report_ok && !out.stderr.contains("aborted") {
        return None;
    }
    Some(format!(
        "{who} on {} ({args:?}) exited {}\n--- stdout:\n{}--- stderr:\n{}",
        ex.file, out.code, out.stdout, out.stderr
    ))
}

#[test]
fn every_example_runs_with_pgbench_rs_and_with_stock_pgbench() {
    let db = fresh_db("examples");
    db.init(1);
    for (file, sql) in setups() {
        db.cluster
            .psql(&db.name, &sql)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    let examples = examples();
    assert!(examples.len() >= 10, "examples found: {}", examples.len());
    let mut problems = Vec::new();
    for ex in &examples {
        let mut args: Vec<String> = ["-t", "5", "-c", "2", "-n"].map(String::from).to_vec();
        args.extend(ex.run_args());
        for (who, mut cmd) in [("pgbench-rs", db.ours()), ("stock pgbench", db.stock())] {
            let out = run(cmd.current_dir(EXAMPLES).args(&args));
            problems.extend(check_run(who, ex, &args, &out));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn every_example_says_what_it_models_and_how_to_run_it() {
    let mut problems = Vec::new();
    for ex in examples() {
        let header = ex.header().join("\n");
        let lines = ex.header().len();
        let own_path = format!("examples/{}", ex.file);
        if lines < 4 {
            problems.push(format!("{}: header comment of {lines} lines", ex.file));
        }
        if !header.contains("pgbench-rs ") || !header.contains(&own_path) {
            problems.push(format!(
                "{}: the header shows no pgbench-rs command line using {own_path}",
                ex.file
            ));
        }
        let pipelined = ex.text.lines().any(|l| l.starts_with("\\startpipeline"));
        let opts = ex.test_options().join(" ");
        if pipelined && !(opts.contains("-M extended") || opts.contains("-M prepared")) {
            problems.push(format!(
                "{}: a pipeline needs `-- test-options: -M extended` (or prepared)",
                ex.file
            ));
        }
    }
    for (file, sql) in setups() {
        let header: Vec<&str> = sql.lines().take_while(|l| l.starts_with("--")).collect();
        if header.len() < 2 || !header.iter().any(|l| l.contains("psql")) {
            problems.push(format!(
                "{file}: the header does not say how to run it with psql"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A script of the guide and the stderr it shows for it.
struct GuideCase {
    line: usize,
    options: Vec<String>,
    script: String,
    expected: String,
}

/// Every fenced block whose info string starts with `pgbench-script` (the rest of the
/// info string is extra options), with the next fenced block, which must be an
/// `output` block.
fn guide_cases(text: &str) -> Vec<GuideCase> {
    let lines: Vec<&str> = text.lines().collect();
    let mut cases = Vec::new();
    let mut i = 0;
    let fenced_body = |start: usize| -> (String, usize) {
        let mut body = String::new();
        let mut j = start + 1;
        while j < lines.len() && !lines[j].starts_with("```") {
            body.push_str(lines[j]);
            body.push('\n');
            j += 1;
        }
        (body, j + 1)
    };
    while i < lines.len() {
        let Some(info) = lines[i].strip_prefix("```pgbench-script") else {
            i += 1;
            continue;
        };
        let line = i + 1;
        let options = info.split_whitespace().map(str::to_string).collect();
        let (script, after) = fenced_body(i);
        let mut j = after;
        while j < lines.len() && !lines[j].starts_with("```") {
            j += 1;
        }
        assert!(
            j < lines.len() && lines[j].trim_end() == "```output",
            "script at line {line} of the guide has no ```output block after it"
        );
        let (expected, next) = fenced_body(j);
        cases.push(GuideCase {
            line,
            options,
            script,
            expected,
        });
        i = next;
    }
    cases
}

/// Messages carry the program's name; the guide shows pgbench-rs's, and stock's are
/// the same lines under its own name.
fn as_pgbench_rs(stderr: &str) -> String {
    stderr
        .lines()
        .map(|l| match l.strip_prefix("pgbench: ") {
            Some(rest) => format!("pgbench-rs: {rest}\n"),
            None => format!("{l}\n"),
        })
        .collect()
}

fn run_guide_case(db: &Db, dir: &Path, case: &GuideCase) -> Vec<String> {
    std::fs::write(dir.join("script.sql"), &case.script).expect("write script");
    let mut args: Vec<String> = ["-n", "-t", "1", "-f", "script.sql"]
        .map(String::from)
        .to_vec();
    args.extend(case.options.iter().cloned());
    let mut problems = Vec::new();
    for (who, mut cmd) in [("pgbench-rs", db.ours()), ("stock pgbench", db.stock())] {
        let out = run(cmd.current_dir(dir).args(&args));
        let got = as_pgbench_rs(&out.stderr);
        if got != case.expected {
            problems.push(format!(
                "guide line {}: {who} {args:?} printed on stderr:\n{got}--- the guide shows:\n{}",
                case.line, case.expected
            ));
        }
    }
    problems
}

#[test]
fn every_script_of_the_guide_prints_what_the_guide_shows() {
    let text = std::fs::read_to_string(GUIDE).expect("read docs/script-language.md");
    let cases = guide_cases(&text);
    assert!(cases.len() >= 30, "guide scripts found: {}", cases.len());
    let db = fresh_db("guide");
    let dir = tempfile::tempdir().expect("temp dir");
    let problems: Vec<String> = cases
        .iter()
        .flat_map(|c| run_guide_case(&db, dir.path(), c))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
