//! `pgbench-report`, run as a program: `show` prints a run's report byte for byte
//! from its results file, `import` reads recorded stock pgbench output, `compare`
//! tells real differences from noise and gates on them, `html` draws a page that a
//! real headless Chromium renders without errors or network requests. Self-contained
//! (no shared test support), so it can move into the one test binary as a module.

use pgbench_results::synthetic::{every_mode, run, Spec};
use pgbench_results::{report, ResultsFile, RunMeta};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
}

fn report_cmd(args: &[&str]) -> Output {
    bin().args(args).output().expect("runs pgbench-report")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh directory under the target dir, removed first if left by a previous run.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("report-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_doc(dir: &Path, name: &str, spec: &Spec) -> (PathBuf, String) {
    let result = run(spec);
    let printed = report::render(&result);
    let meta = RunMeta {
        command_line: vec!["pgbench-rs".into(), "-T".into(), spec.seconds.to_string()],
        random_seed: spec.seed,
        started_unix_us: 1_764_578_627_000_000,
        ended_unix_us: 1_764_578_627_000_000 + spec.seconds * 1_000_000,
        ..RunMeta::default()
    };
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, ResultsFile::from_run(result, meta).to_json()).unwrap();
    (path, printed)
}

fn stock(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/results/tests/data/stock")
        .join(case)
}

#[test]
fn show_prints_the_runs_report_byte_for_byte() {
    let dir = scratch("show");
    for (i, (mode, spec)) in every_mode().into_iter().enumerate() {
        let (path, printed) = write_doc(&dir, &format!("mode{i}"), &spec);
        let out = report_cmd(&["show", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), printed, "{mode}");
    }
}

#[test]
fn import_then_show_gives_what_stock_printed() {
    let dir = scratch("import");
    let case = stock("several-scripts");
    let out_json = dir.join("stock.json");
    let arg = |p: PathBuf| p.to_str().unwrap().to_string();
    let out = bin()
        .args(["import", "--report", &arg(case.join("stdout"))])
        .args(["--progress", &arg(case.join("stderr"))])
        .args(["--log", &arg(case.join("log.0"))])
        .args(["-o", &arg(out_json.clone())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&report_cmd(&["show", out_json.to_str().unwrap()]).stdout);
    let printed = std::fs::read_to_string(case.join("stdout")).unwrap();
    assert!(
        shown.starts_with("imported from stock pgbench output ("),
        "{shown}"
    );
    for wanted in [
        "transaction type: ",
        "tps = ",
        "latency average = ",
        "SQL script 2: ",
    ] {
        let line = printed.lines().find(|l| l.starts_with(wanted)).unwrap();
        let head = line.split(" (").next().unwrap();
        assert!(shown.contains(head), "{head:?} not in\n{shown}");
    }
    assert!(shown.contains("latency percentiles in milliseconds (from the -l logs):\n  p50 = "));
}

#[test]
fn bad_input_is_an_error_with_status_1_never_a_panic() {
    let dir = scratch("bad");
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, "{\"schema\": 7}").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&[], "no verb given"),
        (&["frobnicate"], "unknown verb \"frobnicate\""),
        (&["show"], "show takes exactly one results file"),
        (
            &["show", "/nonexistent.json"],
            "/nonexistent.json: No such file",
        ),
        (
            &["show", garbage.to_str().unwrap()],
            "results file schema version 7 is not supported",
        ),
        (&["import", "-o", "x.json"], "import needs --report FILE"),
        (&["import", "--report"], "option --report needs a value"),
        (&["import", "--bogus"], "import: unknown option \"--bogus\""),
    ];
    for (args, wanted) in cases {
        let out = report_cmd(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("pgbench-report: error: "),
            "{args:?}: {err}"
        );
        assert!(err.contains(wanted), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    for verb in ["show", "import"] {
        let out = report_cmd(&[verb, "--help"]);
        assert_eq!(out.status.code(), Some(0));
        assert!(text(&out.stdout).starts_with(&format!("pgbench-report {verb}")));
    }
}

#[test]
fn compare_gates_on_a_regression_and_passes_an_a_a_pair() {
    let dir = scratch("compare");
    let (base, _) = write_doc(&dir, "base", &Spec::tpcb(1, 120, 500.0, 2000.0));
    let (slower, _) = write_doc(&dir, "slower", &Spec::tpcb(2, 120, 450.0, 2200.0));
    let (again, _) = write_doc(&dir, "again", &Spec::tpcb(3, 120, 500.0, 2000.0));
    let p = |p: &PathBuf| p.to_str().unwrap().to_string();
    let run_compare = |b: &PathBuf| {
        report_cmd(&[
            "compare",
            &p(&base),
            &p(b),
            "--fail-if",
            "tps<-5%",
            "--fail-if=p99>20%",
        ])
    };
    let out = run_compare(&slower);
    let table = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{table}{}", text(&out.stderr));
    assert!(text(&out.stderr)
        .starts_with("pgbench-report: regression: slower.json vs base.json: tps changed by -"));
    let tps = table.lines().find(|l| l.starts_with("tps ")).unwrap();
    assert!(tps.ends_with("beyond noise: worse"), "{tps}");
    let out = run_compare(&again);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stderr).is_empty());

    let groups = |b: &str| {
        let mut args = vec!["compare".to_string(), "--a".to_string()];
        for i in 0..3 {
            args.push(p(&write_doc(
                &dir,
                &format!("a{i}"),
                &Spec::tpcb(10 + i, 20, 500.0, 2000.0),
            )
            .0));
        }
        args.push("--b".into());
        for i in 0..3 {
            let tps = if b == "slower" { 440.0 } else { 500.0 };
            args.push(p(&write_doc(
                &dir,
                &format!("b{i}"),
                &Spec::tpcb(20 + i, 20, tps, 2000.0),
            )
            .0));
        }
        args.push("--fail-if=tps<-5%".into());
        bin().args(&args).output().unwrap()
    };
    let out = groups("slower");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("bootstrap over the repeated runs"));
    assert_eq!(groups("same").status.code(), Some(0));
}

#[test]
fn compare_reads_a_stock_import_beside_a_pgbench_rs_run() {
    let dir = scratch("compare-stock");
    let case = stock("T-progress-logged");
    let imported = dir.join("stock.json");
    let arg = |p: PathBuf| p.to_str().unwrap().to_string();
    let out = bin()
        .args([
            "import",
            "--report",
            &arg(case.join("stdout")),
            "--progress",
            &arg(case.join("stderr")),
        ])
        .args(["-o", &arg(imported.clone())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (ours, _) = write_doc(&dir, "ours", &Spec::tpcb(1, 4, 2300.0, 800.0));
    let out = report_cmd(&["compare", &arg(imported), &arg(ours)]);
    let table = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{table}{}", text(&out.stderr));
    assert!(
        table.starts_with("A: stock.json\nB: ours.json\n"),
        "{table}"
    );
    let tps = table.lines().find(|l| l.starts_with("tps ")).unwrap();
    assert!(tps.ends_with("too short to tell"), "{tps}");
    let bad = report_cmd(&["compare", "--fail-if", "speed<1%", "a", "b"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stderr).contains("unknown figure \"speed\""));
}
