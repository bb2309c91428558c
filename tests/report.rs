//! `pgbench-report`, run as a program: `show` prints a run's stdout byte for byte
//! from its results file, `import` reads recorded stock pgbench output, `compare`
//! tells real differences from noise and gates on them, `html` draws a page that a
//! real headless Chromium renders without errors or network requests. Self-contained
//! (no shared test support), so it can move into the one test binary as a module.

use crate::support::browser::check_page;
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
    // What the run printed: the banner (same server version), then the report.
    let printed = format!(
        "pgbench (15.20 (pgbench-rs {}))\n{}",
        env!("CARGO_PKG_VERSION"),
        report::render(&result)
    );
    let meta = RunMeta {
        server_version: Some("15.20".into()),
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
    // #33: stock's report as stock printed it ((0.000%), "(without initial connection
    // time)", every share), less its banner, then the -l logs' percentiles.
    let report = printed.split_once('\n').unwrap().1;
    let header_end = shown.match_indices('\n').nth(1).unwrap().0 + 1;
    let rest = shown[header_end..].strip_prefix(report);
    let rest = rest.unwrap_or_else(|| panic!("not stock's report:\n{shown}"));
    assert!(
        rest.starts_with("latency percentiles in milliseconds (from the -l logs):\n  p50 = "),
        "{rest}"
    );
}

/// #33: sysbench's output does not name its test (`import --test` does), and its own
/// 95th percentile is shown as sysbench's and compared beside a pgbench-rs run's.
#[test]
fn a_sysbench_import_keeps_its_test_and_its_percentile() {
    let dir = scratch("import-sysbench");
    let captured = dir.join("sysbench.txt");
    std::fs::write(&captured, crate::support::SYSBENCH_OUTPUT).unwrap();
    let imported = dir.join("sysbench.json");
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let out = report_cmd(&[
        "import",
        "--report",
        &path(&captured),
        "--test",
        "oltp_read_only",
        "-o",
        &path(&imported),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&report_cmd(&["show", &path(&imported)]).stdout);
    assert!(
        shown.contains("transaction type: <sysbench: oltp_read_only>\n"),
        "{shown}"
    );
    assert!(
        shown.contains("latency percentile in milliseconds (sysbench's own):\n  p95 = 12.980\n"),
        "{shown}"
    );
    let (ours, _) = write_doc(&dir, "ours", &Spec::tpcb(1, 5, 350.0, 2000.0));
    let table = text(&report_cmd(&["compare", &path(&imported), &path(&ours)]).stdout);
    let p95 = table.lines().find(|l| l.starts_with("latency p95 (ms)"));
    let p95 = p95.unwrap_or_else(|| panic!("no p95 row:\n{table}"));
    assert!(p95.split_whitespace().nth(3) == Some("12.980"), "{p95}");
    // --test is for sysbench's output only.
    let stock_report = stock("T-aggregate").join("stdout");
    let out = report_cmd(&[
        "import",
        "--report",
        &path(&stock_report),
        "--test",
        "oltp_read_only",
        "-o",
        &path(&dir.join("x.json")),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("is not sysbench's output"),
        "{}",
        text(&out.stderr)
    );
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
        // #33: no suggestion of an option the help does not show (it was "--e").
        (
            &["compare", "a.json", "--repot"],
            "compare: unknown option \"--repot\"\nTry",
        ),
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
        let help = text(&out.stdout);
        assert!(
            help.contains(&format!("\nUsage: pgbench-report {verb} ")),
            "{help}"
        );
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
    assert!(text(&out.stdout).contains("Welch's t over each side's runs"));
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
    // #22: a gate on runs too short to tell is undecided (4), not a regression (2).
    let (short, _) = write_doc(&dir, "short", &Spec::tpcb(2, 4, 1800.0, 1000.0));
    let (base, _) = write_doc(&dir, "base", &Spec::tpcb(1, 4, 2300.0, 800.0));
    let out = report_cmd(&["compare", &arg(base), &arg(short), "--fail-if=tps<-5%"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr)
            .starts_with("pgbench-report: undecided: short.json vs base.json: tps changed by -"),
        "{}",
        text(&out.stderr)
    );
    let bad = report_cmd(&["compare", "--fail-if", "speed<1%", "a", "b"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stderr).contains("unknown figure \"speed\""));
}

#[test]
fn html_renders_in_chromium_with_every_chart_drawn_and_nothing_fetched() {
    let dir = scratch("html");
    let mut a = Spec::tpcb(1, 60, 400.0, 2000.0);
    a.settings.report_per_command = true;
    a.settings.max_tries = pgbench_results::MaxTries::Limited(3);
    a.retry_rate = 0.03;
    let mut b = a.clone();
    b.seed = 2;
    b.tps = 360.0;
    let (pa, _) = write_doc(&dir, "before", &a);
    let (pb, _) = write_doc(&dir, "after", &b);
    let case = stock("max-tries");
    let imported = dir.join("stock.json");
    let arg = |p: &Path| p.to_str().unwrap().to_string();
    let out = bin()
        .args([
            "import",
            "--report",
            &arg(&case.join("stdout")),
            "--progress",
            &arg(&case.join("stderr")),
        ])
        .args([
            "--log",
            &arg(&case.join("log.0")),
            &arg(&case.join("log.1")),
            "-o",
            &arg(&imported),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let page = dir.join("page.html");
    let out = report_cmd(&[
        "html",
        &arg(&pa),
        &arg(&pb),
        &arg(&imported),
        "-o",
        &arg(&page),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let Some(c) = check_page(&page, &dir.join("page.png")) else {
        return;
    };
    assert_eq!(
        c.requests,
        vec![format!("file://{}", page.display())],
        "only the page itself"
    );
    assert!(c.problems.is_empty(), "{:#?}", c.problems);
    assert_eq!(c.drawn, 4);
    let ids: Vec<&str> = c.charts.iter().map(|ch| ch.0.as_str()).collect();
    assert_eq!(
        ids,
        [
            "chart-tps",
            "chart-latency",
            "chart-spectrum",
            "chart-failures"
        ]
    );
    for (id, coloured, left, bottom, colours) in &c.charts {
        assert!(
            *coloured > 200,
            "{id}: plot area blank ({coloured} coloured pixels)"
        );
        assert!(
            *left > 50 && *bottom > 50,
            "{id}: axis labels missing ({left}, {bottom})"
        );
        // Every file is drawn in its own colour (blue, red, green).
        for (i, n) in colours.iter().take(3).enumerate() {
            assert!(*n > 10, "{id}: file {i} not drawn ({colours:?})");
        }
    }

    // The checker sees what it must reject: a script error and a network request.
    let html = std::fs::read_to_string(&page).unwrap();
    let broken = dir.join("broken.html");
    std::fs::write(
        &broken,
        html.replace(
            "</body>",
            "<img src=\"http://127.0.0.1:9/x.png\"><script>no_such_function();</script></body>",
        ),
    )
    .unwrap();
    let c = check_page(&broken, &dir.join("broken.png")).unwrap();
    assert!(
        c.requests
            .iter()
            .any(|r| r.starts_with("http://127.0.0.1:9/")),
        "{:?}",
        c.requests
    );
    assert!(
        c.problems.iter().any(|p| p.contains("no_such_function")),
        "{:?}",
        c.problems
    );
}

/// `-o` on a full disk: the file that was there survives, no temporary file is left,
/// and the message is the C library's.
#[test]
fn a_full_disk_keeps_the_file_that_was_there() {
    let dir = scratch("full_disk");
    let small = dir.join("small");
    std::fs::create_dir_all(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&small)
        .output();
    if !mounted.as_ref().is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "cannot mount a small tmpfs: {mounted:?}"
        );
        eprintln!("skipped: cannot mount a small tmpfs here ({mounted:?})");
        return;
    }
    let out_json = small.join("old.json");
    std::fs::write(&out_json, "old").unwrap();
    // Fill what is left.
    let _ = std::fs::write(small.join("filler"), vec![b'x'; 64 * 1024]);
    let case = stock("several-scripts");
    let out = bin()
        .args(["import", "--report"])
        .arg(case.join("stdout"))
        .arg("-o")
        .arg(&out_json)
        .output()
        .unwrap();
    let kept = std::fs::read_to_string(&out_json);
    let left = std::fs::read_dir(&small).unwrap().count();
    let _ = Command::new("umount").arg(&small).status();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "pgbench-report: error: could not write results file \"{}\": No space left on device\n",
            out_json.display()
        )
    );
    assert_eq!(kept.unwrap(), "old");
    assert_eq!(left, 2, "only old.json and the filler");
}

/// `import RUN.LOG`: one file of stock pgbench's stdout and stderr together, as
/// `pgbench ... 2>&1 | tee run.log` leaves it (progress lines, then the report).
#[test]
fn import_reads_a_2_and_1_capture_of_stock_pgbench() {
    let db = crate::support::fresh_db("import_mixed");
    db.init(1);
    let dir = scratch("import-mixed");
    let log = dir.join("run.log");
    let capture = std::fs::File::create(&log).unwrap();
    let status = db
        .stock()
        .args(["-n", "-T", "3", "-P", "1", "-c", "2", "--random-seed=7"])
        .stdout(capture.try_clone().unwrap())
        .stderr(capture)
        .status()
        .unwrap();
    assert!(status.success());
    let mixed = std::fs::read_to_string(&log).unwrap();
    assert!(mixed.contains("\nprogress: "), "{mixed}");
    let out_json = dir.join("mixed.json");
    let args = [
        "import",
        log.to_str().unwrap(),
        "-o",
        out_json.to_str().unwrap(),
    ];
    let out = report_cmd(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_json).unwrap()).unwrap();
    let tps = mixed
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .unwrap();
    let tps: f64 = tps.split_whitespace().next().unwrap().parse().unwrap();
    assert_eq!(doc["summary"]["tps"].as_f64(), Some(tps));
    assert_eq!(doc["random_seed"], 7);
    assert_eq!(doc["timeline"]["source"], "progress", "{}", doc["timeline"]);
    assert_eq!(doc["origin"]["files"].as_array().unwrap().len(), 1);
    // With --report or --progress as well, the one file is ambiguous.
    let both = report_cmd(&[&args[..], &["--report", log.to_str().unwrap()]].concat());
    assert_eq!(both.status.code(), Some(1), "{}", text(&both.stderr));
    assert!(text(&both.stderr).contains("takes no --report or --progress"));
}

/// A schema 2 and a schema 3 file (real runs', `crates/results/tests/data/v2` and
/// `v3`, see `document::tests::a_schema_2_file_reads_and_writes_back_as_schema_4` and
/// `a_schema_3_file_and_its_schema_4_rewrite_read_the_same`), each beside the same run
/// written as schema 4 (histogram and timeline stored once, in `run`; a lone
/// script's histogram as the run's), read alike in every verb: show prints the run's
/// stdout (percentiles too), check, html and compare take both.
#[test]
fn old_schema_files_and_their_rewrites_read_alike_in_every_verb() {
    for version in ["v2", "v3"] {
        let dir = scratch(&format!("schema-{version}"));
        let data = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates/results/tests/data")
            .join(version);
        let old = data.join("run.json");
        let stdout = std::fs::read_to_string(data.join("stdout")).unwrap();
        let mut doc = ResultsFile::from_json(&std::fs::read_to_string(&old).unwrap()).unwrap();
        doc.schema = pgbench_results::document::SCHEMA_VERSION;
        let new = dir.join("run4.json");
        std::fs::write(&new, doc.to_json()).unwrap();
        let arg = |p: &Path| p.to_str().unwrap().to_string();
        let mut pages = Vec::new();
        for file in [&old, &new] {
            let shown = report_cmd(&["show", &arg(file)]);
            assert_eq!(text(&shown.stdout), stdout, "{}", text(&shown.stderr));
            let checked = report_cmd(&["check", &arg(file)]);
            assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
            let page = dir.join("page.html");
            let html = report_cmd(&["html", &arg(file), "-o", &arg(&page)]);
            assert_eq!(html.status.code(), Some(0), "{}", text(&html.stderr));
            // The page's data without its label: the same series and spectrum.
            let body = std::fs::read_to_string(&page).unwrap();
            pages.push(body.replace("run4.json", "run.json"));
        }
        assert_eq!(pages[0], pages[1], "{version}");
        let out = report_cmd(&["compare", &arg(&old), &arg(&new)]);
        let table = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{table}{}", text(&out.stderr));
        let tps = table.lines().find(|l| l.starts_with("tps ")).unwrap();
        assert!(tps.contains(" +0.0% "), "{version}: {tps}");
    }
}

/// Two files with server stats: their WAL and hit-ratio lines overlaid in their
/// colours, a wait-event chart each, each run's checkpoint marked on its own.
#[test]
fn html_overlays_the_server_panels_of_two_runs_in_chromium() {
    use pgbench_results::synthetic::server::{server_stats, ServerSpec};
    let dir = scratch("html-server");
    let mut paths = Vec::new();
    for (i, wal) in [(1u64, 400.0), (2, 900.0)] {
        let mut r = run(&Spec::tpcb(i, 30, 400.0, 2000.0));
        let mut s = ServerSpec::reads(i);
        s.wal_bytes_per_transaction = wal;
        s.checkpoints_at = vec![10 * i as i64];
        r.server = Some(server_stats(&r, &s));
        let path = dir.join(format!("run{i}.json"));
        let doc = ResultsFile::from_run(r, RunMeta::default());
        std::fs::write(&path, doc.to_json()).unwrap();
        paths.push(path);
    }
    let page = dir.join("page.html");
    let out = bin()
        .arg("html")
        .args(&paths)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let Some(c) = check_page(&page, &dir.join("page.png")) else {
        return;
    };
    assert!(c.problems.is_empty(), "{:#?}", c.problems);
    assert_eq!(c.drawn, 7, "{:?}", c.charts);
    for id in ["chart-server-wal", "chart-server-hits"] {
        let (_, coloured, _, _, colours) = c.charts.iter().find(|ch| ch.0 == id).unwrap();
        assert!(*coloured > 200, "{id}: {coloured}");
        assert!(colours[0] > 10 && colours[1] > 10, "{id}: {colours:?}");
    }
    let (_, wal) = c.data.iter().find(|d| d.0 == "chart-server-wal").unwrap();
    let mean = |v: &Vec<Option<f64>>| {
        let v: Vec<f64> = v.iter().flatten().copied().collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (a, b) = (mean(&wal[1]), mean(&wal[2]));
    assert!(
        (a - 0.16).abs() < 0.02 && (b - 0.36).abs() < 0.04,
        "MB/s {a} {b}"
    );
    for (i, at) in [(0, 11.0), (1, 21.0)] {
        let id = format!("chart-server-waits-{i}");
        let (_, data) = c.data.iter().find(|d| d.0 == id).unwrap();
        assert!(data[1].iter().flatten().all(|v| (v - 100.0).abs() < 1e-6));
        let marks: Vec<_> = c.marks.iter().filter(|m| m.0 == id).collect();
        assert_eq!(
            marks.len(),
            1,
            "{id}: its own run's checkpoint only: {marks:?}"
        );
        assert!(
            marks[0].2 * 7 > marks[0].3,
            "{id}: {marks:?} (second ending {at})"
        );
    }
    let wal_marks = c.marks.iter().filter(|m| m.0 == "chart-server-wal").count();
    assert_eq!(wal_marks, 2, "both runs' checkpoints on the shared panel");
}

/// A clients sweep's file: one step a `(clients, tps, latency median µs)`, its top
/// level its peak's step, as a sweep writes it.
fn sweep_file(steps: &[(u32, f64, f64)]) -> ResultsFile {
    use pgbench_results::capacity::{peak_step, Capacity, Kind, Step};
    let steps: Vec<Step> = steps
        .iter()
        .enumerate()
        .map(|(i, &(clients, tps, median_us))| {
            let mut spec = Spec::tpcb(i as u64 + 1, 20, tps, median_us);
            spec.settings.clients = clients as usize;
            let mut file = ResultsFile::from_run(run(&spec), RunMeta::default());
            // The curve's tps exactly as given, so that the peak and knee fall where
            // the test puts them.
            file.summary.tps = Some(tps);
            Step {
                step: i as u32 + 1,
                value: clients.to_string(),
                round: 1,
                role: None,
                verdict: None,
                file,
            }
        })
        .collect();
    let mut values: Vec<String> = Vec::new();
    for s in &steps {
        if !values.contains(&s.value) {
            values.push(s.value.clone());
        }
    }
    let mut capacity = Capacity {
        kind: Kind::Sweep,
        parameter: "clients".into(),
        values,
        repeat: 1,
        search: None,
        found: None,
        representative: None,
        stopped: None,
    };
    capacity.representative = peak_step(&capacity, &steps);
    let mut doc = steps
        .iter()
        .find(|s| Some(s.step) == capacity.representative)
        .unwrap()
        .file
        .clone();
    doc.capacity = Some(capacity);
    doc.steps = steps;
    doc
}

/// #43, the sweep page: the knee's and the peak's names, at values close together,
/// were drawn over each other; a repeated value's p99 band went below 0 ms; and a
/// clients sweep, a rate sweep and a search were drawn on one "clients" axis.
#[test]
fn a_sweep_page_keeps_its_marks_names_apart_and_its_bands_above_0() {
    let dir = scratch("sweep-page");
    // Linear axis (100 to 399 clients); the knee at 300 (80.3% efficiency), the peak
    // at 303 (79.9%), a few pixels apart; 100 clients three times, their p99s far
    // apart about a small mean.
    let steps = [
        (100, 1000.0, 100.0),
        (100, 1000.0, 100.0),
        (100, 1000.0, 8000.0),
        (200, 2000.0, 1000.0),
        (300, 2410.0, 1000.0),
        (303, 2420.0, 1000.0),
        (399, 2000.0, 1000.0),
    ];
    let arg = |p: &Path| p.to_str().unwrap().to_string();
    let mut files = Vec::new();
    for name in ["before-the-change", "after-the-change"] {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, sweep_file(&steps).to_json()).unwrap();
        files.push(arg(&path));
    }
    let page = dir.join("sweep.html");
    let out = report_cmd(&["html", &files[0], &files[1], "-o", &arg(&page)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // A sweep of another parameter on the same page: refused, as compare refuses it.
    let mut rates = sweep_file(&steps);
    rates.capacity.as_mut().unwrap().parameter = "rate".into();
    let rates_path = dir.join("rates.json");
    std::fs::write(&rates_path, rates.to_json()).unwrap();
    let mixed = dir.join("mixed.html");
    let out = report_cmd(&["html", &files[0], &arg(&rates_path), "-o", &arg(&mixed)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "pgbench-report: error: before-the-change.json is a sweep of clients, rates.json a sweep of rate: their curves have no axis in common; draw each on a page of its own\n"
    );
    assert!(!mixed.exists());

    let Some(c) = check_page(&page, &dir.join("sweep.png")) else {
        return;
    };
    assert!(c.problems.is_empty(), "{:#?}", c.problems);
    let names: Vec<&str> = c
        .labels
        .iter()
        .filter(|l| l.0 == "chart-sweep-tps")
        .map(|l| l.1.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "before-the-change.json: peak",
            "after-the-change.json: peak",
            "before-the-change.json: knee",
            "after-the-change.json: knee"
        ]
    );
    assert_eq!(c.overlapping_labels(), Vec::new(), "{:#?}", c.labels);
    // Every band's lower bound at 0 or above, and the case is there: one at 0.
    for (id, data) in c.data.iter().filter(|d| d.0.starts_with("chart-sweep")) {
        let legend = &c.legends.iter().find(|l| &l.0 == id).unwrap().1;
        let lows: Vec<f64> = legend
            .iter()
            .enumerate()
            .filter(|(_, name)| name.ends_with("95% low"))
            .flat_map(|(i, _)| data[i].iter().flatten().copied())
            .collect();
        assert!(lows.iter().all(|v| *v >= 0.0), "{id}: {lows:?}");
        if id == "chart-sweep-p99" {
            assert!(lows.contains(&0.0), "{id}: {lows:?}");
        }
    }
}

/// #43 as a CI job meets it: a gate over sweeps with a point missing, or a file of no
/// steps, exits 4 (undecided), not 0; `check --fail-if-warnings` fails a sweep a
/// signal stopped after its first step; `show` of a file whose representative step is
/// not there, or whose tps is negative, is an error (status 1), not half a report.
#[test]
fn gates_checks_and_show_of_sweeps_need_their_data() {
    let dir = scratch("sweep-gates");
    let arg = |p: &Path| p.to_str().unwrap().to_string();
    let write = |name: &str, doc: &ResultsFile| {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, doc.to_json()).unwrap();
        arg(&path)
    };
    let full = sweep_file(&[(1, 100.0, 1000.0), (2, 200.0, 1000.0), (4, 400.0, 1000.0)]);
    let base = write("base", &full);
    let short = write(
        "short",
        &sweep_file(&[(1, 100.0, 1000.0), (2, 200.0, 1000.0)]),
    );
    let out = report_cmd(&["compare", &base, &short, "--fail-if", "tps<-5%"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains(
            "pgbench-report: undecided: clients=4: not in short.json (only in base.json)"
        ),
        "{}",
        text(&out.stderr)
    );
    let mut empty = full.clone();
    empty.steps.clear();
    empty.capacity.as_mut().unwrap().representative = None;
    let empty = write("empty", &empty);
    let out = report_cmd(&["compare", &base, &empty, "--fail-if", "tps<-5%"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("no point of clients compared: empty.json has no steps"),
        "{}",
        text(&out.stderr)
    );

    // Stopped by SIGINT in step 2's warm-up: step 2 was left out, step 1 is sound.
    let mut stopped = sweep_file(&[(1, 100.0, 1000.0)]);
    let c = stopped.capacity.as_mut().unwrap();
    c.values = vec!["1".into(), "2".into(), "4".into()];
    c.stopped = Some("interrupted by SIGINT after 1 step(s) of 3".into());
    for s in &mut stopped.steps {
        s.file.warnings.clear();
    }
    let stopped = write("stopped", &stopped);
    let out = report_cmd(&["check", &stopped, "--fail-if-warnings"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).starts_with(&format!(
            "{stopped}: 1 warning in 1 steps\n  warning: interrupted: the sweep stopped early (interrupted by SIGINT after 1 step(s) of 3)"
        )),
        "{}",
        text(&out.stdout)
    );

    // A run that rode through an outage at 30 s (5 s down, 10 s back to 95%): with
    // --expect-outages, the dip is no unsteadiness.
    let mut r = run(&Spec::tpcb(5, 60, 1000.0, 1000.0));
    r.scale = 100;
    let origin = 1_700_000_000_000_000_i64;
    for (i, second) in r.series.iter_mut().enumerate() {
        second.counts.cnt = match i {
            30..=34 => 0,
            35..=44 => 100 + 85 * (i as i64 - 35),
            _ => 1000,
        };
    }
    r.availability = Some(pgbench_results::availability::Availability {
        reconnect_timeout_s: 60.0,
        backoff_max_ms: 200,
        measured_from_unix_us: origin,
        reconnects: 4,
        gave_up: 0,
        in_doubt: 0,
        failed: [("57P01".to_string(), 4)].into_iter().collect(),
        outages: vec![pgbench_results::availability::Outage {
            last_success_before_unix_us: Some(origin + 29_990_000),
            first_failure_unix_us: origin + 30_001_000,
            first_success_after_unix_us: Some(origin + 35_020_000),
            all_back_unix_us: Some(origin + 35_100_000),
            clients: 4,
            failed_transactions: 4,
            in_doubt: 0,
            reconnects: 4,
            gave_up: 0,
            seen_until_unix_us: None,
            tps_before: Some(1000.0),
            back_to_95_unix_us: Some(origin + 45_000_000),
        }],
    });
    let outage = write("outage", &ResultsFile::from_run(r, RunMeta::default()));
    let out = report_cmd(&["check", &outage]);
    assert!(
        text(&out.stdout).contains("warning: tps_not_steady: "),
        "{}",
        text(&out.stdout)
    );
    let out = report_cmd(&["check", &outage, "--expect-outages"]);
    let said = text(&out.stdout);
    assert!(
        !said.contains("tps_not_steady") && !said.contains("outages:"),
        "{said}"
    );

    let mut edited: serde_json::Value = serde_json::from_str(&full.to_json()).unwrap();
    edited["capacity"]["representative"] = serde_json::json!(9);
    let nowhere = dir.join("nowhere.json");
    std::fs::write(&nowhere, edited.to_string()).unwrap();
    edited["capacity"]["representative"] = serde_json::json!(1);
    edited["steps"][1]["file"]["summary"]["tps"] = serde_json::json!(-200.0);
    let negative = dir.join("negative.json");
    std::fs::write(&negative, edited.to_string()).unwrap();
    for (file, said) in [
        (
            &nowhere,
            "capacity.representative is 9, but the file has no step 9 (its steps: 1, 2, 3)",
        ),
        (
            &negative,
            "steps[1].file.summary.tps is -200: no run measures a negative tps",
        ),
    ] {
        let out = report_cmd(&["show", &arg(file)]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
        assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
        assert_eq!(
            text(&out.stderr),
            format!(
                "pgbench-report: error: {}: invalid results file: {said}{}\n",
                arg(file),
                if said.starts_with("capacity") {
                    ": the file was edited or cut short"
                } else {
                    ""
                }
            )
        );
    }
}
