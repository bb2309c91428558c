//! `pgbench-report history` as a program, on SQLite stores in scratch folders: runs
//! imported from results files and stock pgbench's output, listed (as JSON with their
//! tags and environment), shown as `show` shows their file, compared, diffed,
//! searched for a regression (exit 3, naming the first run after the step), exported
//! and removed; the trend page drawn by a real headless Chromium with nothing
//! fetched; bad input an error with status 1, a file that is not a store left as it
//! was; two processes importing into one store at once.

use crate::support::browser::check_page;
use pgbench_results::synthetic::{run, Spec};
use pgbench_results::{ResultsFile, RunMeta};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn report(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .args(args)
        .env_remove("PGBENCH_RS_HISTORY")
        .output()
        .expect("runs pgbench-report")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("history-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// `n` results files of 5-second runs an hour apart, their tps stepping from 400 to
/// 320 at run `step` (0-based).
fn runs(dir: &Path, n: usize, step: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let tps = if i < step { 400.0 } else { 320.0 };
            let result = run(&Spec::tpcb(i as u64 + 1, 5, tps, 2000.0));
            let start = 1_764_578_627_000_000 + i as i64 * 3_600_000_000;
            let meta = RunMeta {
                server_version: Some("15.20".into()),
                command_line: vec!["pgbench-rs".into(), "-T".into(), "5".into()],
                started_unix_us: start,
                ended_unix_us: start + 5_000_000,
                ..RunMeta::default()
            };
            let path = dir.join(format!("run{i:02}.json"));
            std::fs::write(&path, ResultsFile::from_run(result, meta).to_json()).unwrap();
            s(&path)
        })
        .collect()
}

#[test]
fn import_list_show_compare_diff_regressions_export_rm() {
    let dir = scratch("cli");
    let store = format!("--history={}", s(&dir.join("h.sqlite")));
    let files = runs(&dir, 24, 16);
    let mut args = vec!["history", &store, "import", "--tag", "branch=main"];
    args.extend(files.iter().map(String::as_str));
    let out = ok(&report(&args));
    assert_eq!(out.lines().count(), 24, "{out}");
    assert!(
        out.starts_with(&format!("{}: recorded as run 1\n", files[0])),
        "{out}"
    );
    // Stock pgbench's output, through import's readers.
    let stock = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/results/tests/data/stock/T-progress-logged");
    let out = ok(&report(&[
        "history",
        &store,
        "import",
        &s(&stock.join("stdout")),
        "--tag",
        "branch=stock",
        "--log",
        &s(&stock.join("log.0")),
        &s(&stock.join("log.1")),
    ]));
    assert!(out.ends_with("recorded as run 25\n"), "{out}");

    // list --json: newest first, each with its tags and environment.
    let list: serde_json::Value = serde_json::from_str(&ok(&report(&[
        "history",
        "list",
        &store,
        "--json",
        "--tag",
        "branch=main",
    ])))
    .unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 24);
    assert_eq!(list[0]["id"], 24);
    assert_eq!(list[0]["tags"]["branch"], "main");
    assert!(list[0]["tps"].as_f64().unwrap() > 300.0);
    assert!(
        list[0]["started_at"]
            .as_str()
            .unwrap()
            .starts_with("2025-12-02T"),
        "{}",
        list[0]
    );
    assert!(list[0]["environment"].is_object(), "{}", list[0]);
    let table = ok(&report(&["history", "list", &store, "--limit", "2"]));
    assert_eq!(table.lines().count(), 3, "{table}");

    // show ID prints what show prints of the file it came from.
    assert_eq!(
        ok(&report(&["history", &store, "show", "3"])),
        ok(&report(&["show", &files[2]]))
    );
    let cmp = ok(&report(&["history", &store, "compare", "1", "24"]));
    assert!(cmp.contains("A: run 1\nB: run 24\n"), "{cmp}");
    assert!(cmp.contains("95% interval"), "{cmp}");
    let diff = ok(&report(&["history", &store, "diff", "1", "24"]));
    assert!(diff.lines().next().unwrap().contains("; tps -2"), "{diff}");
    assert!(diff.contains("settings: the same\n"), "{diff}");

    // The step at run 17 is a regression of tps: exit 3, naming it.
    let out = report(&["history", &store, "regressions", "--metric", "tps"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let found = text(&out.stdout);
    assert!(found.starts_with("regression: tps -"), "{found}");
    assert!(
        found.contains(" from run 17 (2025-12-02T00:43:47.000000Z) in "),
        "{found}"
    );
    assert!(
        found.ends_with("1 series regressed at their newest change point\n"),
        "{found}"
    );
    // Before the step, nothing to report.
    let out = report(&[
        "history",
        &store,
        "regressions",
        "--until",
        "2025-12-01T23:00:00Z",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(text(&out.stdout), "no change point\n");

    let csv = ok(&report(&["history", &store, "export", "--csv"]));
    assert_eq!(csv.lines().count(), 26);
    assert!(
        csv.lines().last().unwrap().ends_with(",branch=stock"),
        "{csv}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&report(&[
        "history",
        &store,
        "export",
        "--tag",
        "branch=stock",
    ])))
    .unwrap();
    assert_eq!(json[0]["document"]["origin"]["kind"], "stock-import");

    assert_eq!(
        ok(&report(&["history", &store, "rm", "25"])),
        "removed run 25\n"
    );
    let out = report(&["history", &store, "show", "25"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).ends_with(": no run 25\n"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_trend_page_draws_in_chromium_and_fetches_nothing() {
    let dir = scratch("trend");
    let store = format!("--history={}", s(&dir.join("h.sqlite")));
    let files = runs(&dir, 20, 12);
    for (i, f) in files.iter().enumerate() {
        let tag = format!("host=db{}", i % 2);
        ok(&report(&["history", &store, "import", f, "--tag", &tag]));
    }
    let page = dir.join("trend.html");
    ok(&report(&[
        "history",
        &store,
        "trend",
        "--metric",
        "tps",
        "--group-by",
        "tag:host",
        "--html",
        &s(&page),
    ]));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h1>pgbench-rs history: tps</h1>"));
    let Some(c) = check_page(&page, &dir.join("trend.png")) else {
        return;
    };
    assert_eq!(
        c.requests,
        vec![format!("file://{}", page.display())],
        "only the page itself"
    );
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert_eq!(c.drawn, 1);
    let (_, coloured, _, _, _) = &c.charts[0];
    assert!(*coloured > 500, "{:?}", c.charts);
    assert_eq!(c.legends[0].1[1..], ["db0", "db1", "change point"]);
    // x, the two hosts, the change points.
    assert_eq!(c.data[0].1.len(), 4);
    // The text form, group by group.
    let out = ok(&report(&[
        "history",
        &store,
        "trend",
        "--metric",
        "p99",
        "--group-by",
        "tag:host",
    ]));
    assert!(out.starts_with("db0:\n  run      1  "), "{out}");
}

#[test]
fn bad_input_is_an_error_with_status_1_and_a_foreign_file_is_left_as_it_was() {
    let dir = scratch("errors");
    let notes = dir.join("notes.sqlite");
    std::fs::write(&notes, "not a database, just notes\n".repeat(200)).unwrap();
    let before = std::fs::read(&notes).unwrap();
    let store = format!("--history={}", s(&notes));
    let out = report(&["history", &store, "list"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "pgbench-report: error: history store {}: is not a pgbench-rs history store (not a SQLite database); left as it is\n",
            s(&notes)
        )
    );
    assert_eq!(std::fs::read(&notes).unwrap(), before);
    let good = format!("--history={}", s(&dir.join("h.sqlite")));
    for (args, message) in [
        (vec!["history", &good, "show", "x"], "\"x\" is not a run id"),
        (
            vec!["history", &good, "show"],
            "history show takes a run's id",
        ),
        (
            vec!["history", &good, "diff", "1"],
            "history diff takes two runs' ids",
        ),
        (
            vec!["history", &good, "trend"],
            "history trend needs --metric M",
        ),
        (
            vec!["history", &good, "trend", "--metric", "speed"],
            "unknown metric \"speed\": one of tps,",
        ),
        (
            vec![
                "history",
                &good,
                "trend",
                "--metric",
                "tps",
                "--group-by",
                "host",
            ],
            "give tag:KEY",
        ),
        (
            vec!["history", &good, "list", "--since", "soon"],
            "\"soon\" is not a time",
        ),
        (
            vec!["history", &good, "list", "--tag", "nokey"],
            "--tag \"nokey\": give KEY=VALUE",
        ),
        (
            vec!["history", &good, "import"],
            "history import needs at least one file",
        ),
        (
            vec!["history", &good, "import", "/nonexistent.json"],
            "/nonexistent.json: ",
        ),
        (
            vec!["history", &good, "frobnicate"],
            "history: unknown subcommand \"frobnicate\"",
        ),
    ] {
        let out = report(&args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn two_processes_importing_into_one_store_at_once_both_succeed() {
    let dir = scratch("concurrent");
    let store = format!("--history={}", s(&dir.join("h.sqlite")));
    let files = runs(&dir, 8, 8);
    let spawn = |tag: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgbench-report"));
        cmd.args(["history", &store, "import", "--tag", tag]);
        cmd.args(&files);
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd.spawn().unwrap()
    };
    let (a, b) = (spawn("who=a"), spawn("who=b"));
    for p in [a, b] {
        let out = p.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let csv = ok(&report(&["history", &store, "export", "--csv"]));
    assert_eq!(csv.lines().count(), 17);
    assert_eq!(csv.matches("who=a").count(), 8);
}

/// Other tools' output goes in through `import`'s readers: HammerDB's (its NOPM
/// indexed) and sysbench's (its test named by --test).
#[test]
fn hammerdb_and_sysbench_output_are_recorded_with_their_figures() {
    let dir = scratch("tools");
    let store = format!("--history={}", s(&dir.join("h.sqlite")));
    let hammerdb = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/results/tests/data/hammerdb/4.12-run.log");
    ok(&report(&[
        "history",
        &store,
        "import",
        &s(&hammerdb),
        "--tag",
        "tool=hammerdb",
    ]));
    let sysbench = dir.join("sysbench.txt");
    std::fs::write(&sysbench, crate::support::SYSBENCH_OUTPUT).unwrap();
    ok(&report(&[
        "history",
        &store,
        "import",
        &s(&sysbench),
        "--test",
        "oltp_read_only",
        "--tag",
        "tool=sysbench",
    ]));
    let list: serde_json::Value =
        serde_json::from_str(&ok(&report(&["history", &store, "list", "--json"]))).unwrap();
    let by_tool = |t: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|r| r["tags"]["tool"] == t)
            .unwrap_or_else(|| panic!("no {t} run: {list}"))
            .clone()
    };
    let h = by_tool("hammerdb");
    assert!(h["nopm"].as_f64().unwrap() > 0.0, "{h}");
    assert!(h["tpm"].as_f64().unwrap() > 0.0, "{h}");
    let x = by_tool("sysbench");
    assert_eq!(x["workload"], "oltp_read_only", "{x}");
    assert_eq!(x["tps"], 358.46, "{x}");
    assert_eq!(x["p95_ms"], 12.98, "{x}");
    let out = ok(&report(&["history", &store, "trend", "--metric", "nopm"]));
    assert!(out.contains(" nopm "), "{out}");
}

/// `pgbench-rs` with `--history` or `PGBENCH_RS_HISTORY` against `cluster`'s
/// `postgres` database, with `extra` options; stdout, stderr and the exit status.
fn recorded_run(
    cluster: &pgbench_cluster::Cluster,
    env_store: Option<&str>,
    extra: &[&str],
) -> (String, String, i32) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
    crate::support::aim(&mut cmd, cluster, "postgres");
    cmd.env_remove("PGBENCH_RS_HISTORY");
    if let Some(store) = env_store {
        cmd.env("PGBENCH_RS_HISTORY", store);
    }
    let out = cmd.args(extra).output().expect("runs pgbench-rs");
    (
        text(&out.stdout),
        text(&out.stderr),
        out.status.code().unwrap_or(-1),
    )
}

/// The report's `tps = N (without initial connection time)`.
fn printed_tps(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("tps = "))
        .expect("a tps line");
    line["tps = ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// #45's whole path on a server started with a non-default work_mem: runs recorded by
/// `--history` and by `PGBENCH_RS_HISTORY` alone (printing what stock prints), listed
/// with the tps each printed and the server's settings; the step from -R 400 to -R 200
/// found as a regression (and none in the first four); two runs at once both
/// recorded; a file that is not a store left as it was while the run reports, writes
/// its results file and warns.
#[test]
fn runs_are_recorded_with_their_server_and_a_slower_rate_is_a_regression() {
    let cluster = pgbench_cluster::Cluster::start(pgbench_cluster::ClusterOptions {
        config: vec![("work_mem".into(), "7MB".into())],
        ..Default::default()
    })
    .unwrap();
    let mut init = Command::new(crate::support::stock_pgbench());
    crate::support::aim(&mut init, &cluster, "postgres");
    assert!(init
        .args(["-i", "-q", "-s", "1"])
        .output()
        .unwrap()
        .status
        .success());
    let dir = scratch("recorded");
    let store = s(&dir.join("h.sqlite"));
    let option = format!("--history={store}");
    let mut printed = Vec::new();
    for (i, rate) in ["400", "400", "400", "400", "200", "200", "200", "200"]
        .iter()
        .enumerate()
    {
        let args = [
            "-S",
            "-T",
            "2",
            "-R",
            rate,
            "-n",
            "--tag",
            "server=throwaway",
        ];
        // The third run records through the environment alone, and prints only what
        // stock prints: nothing about the history.
        let (stdout, stderr, code) = if i == 2 {
            recorded_run(
                &cluster,
                Some(&store),
                &[&args[..6], &["--tag", "server=throwaway"]].concat(),
            )
        } else {
            recorded_run(&cluster, None, &[&args[..], &[option.as_str()]].concat())
        };
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert!(!stderr.contains("history"), "{stderr}");
        printed.push(printed_tps(&stdout));
    }
    let list: serde_json::Value =
        serde_json::from_str(&ok(&report(&["history", "list", &option, "--json"]))).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 8, "{list:?}");
    // newest first
    for (run, tps) in list.iter().rev().zip(&printed) {
        let stored = run["tps"].as_f64().unwrap();
        assert!(
            (stored - tps).abs() <= 1e-6 * tps,
            "{stored} against the printed {tps}"
        );
        assert_eq!(run["tags"]["server"], "throwaway", "{run}");
        assert!(
            run["started_at"].is_string() && run["id"].is_number(),
            "{run}"
        );
        let work_mem = &run["environment"]["server"]["settings"]["work_mem"];
        assert_eq!(work_mem["value"], "7MB", "{run}");
    }
    let first_at_200 = list[3]["id"].as_i64().unwrap();
    let regressions = report(&[
        "history",
        "regressions",
        &option,
        "--metric",
        "tps",
        "--min-segment",
        "4",
    ]);
    assert_eq!(
        regressions.status.code(),
        Some(3),
        "{}",
        text(&regressions.stderr)
    );
    let said = text(&regressions.stdout);
    assert!(said.contains(&format!("run {first_at_200}")), "{said}");
    // A store holding only the first four: no regression.
    let older = format!("--history={}", s(&dir.join("older.sqlite")));
    let dump = dir.join("first-four");
    std::fs::create_dir_all(&dump).unwrap();
    let all: serde_json::Value =
        serde_json::from_str(&ok(&report(&["history", "export", &option]))).unwrap();
    for run in list.iter().rev().take(4) {
        let id = &run["id"];
        let file = dump.join(format!("{id}.json"));
        let doc = all
            .as_array()
            .unwrap()
            .iter()
            .find(|r| &r["id"] == id)
            .unwrap();
        std::fs::write(&file, doc["document"].to_string()).unwrap();
        ok(&report(&["history", "import", &older, &s(&file)]));
    }
    let none = report(&[
        "history",
        "regressions",
        &older,
        "--metric",
        "tps",
        "--min-segment",
        "4",
    ]);
    assert_eq!(
        none.status.code(),
        Some(0),
        "{}{}",
        text(&none.stdout),
        text(&none.stderr)
    );
    // Two runs at once: both recorded.
    let both: Vec<_> = (0..2)
        .map(|_| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
            crate::support::aim(&mut cmd, &cluster, "postgres");
            cmd.args(["-S", "-T", "2", "-n", &option]).spawn().unwrap()
        })
        .collect();
    for child in both {
        assert!(child.wait_with_output().unwrap().status.success());
    }
    let list: serde_json::Value =
        serde_json::from_str(&ok(&report(&["history", "list", &option, "--json"]))).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 10);
    // Not a store: left byte for byte, the run reports, writes its file and warns.
    let garbage = dir.join("garbage.bin");
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&garbage, &bytes).unwrap();
    let json = dir.join("run.json");
    let (stdout, stderr, code) = recorded_run(
        &cluster,
        None,
        &[
            "-S",
            "-T",
            "1",
            "-n",
            &format!("--history={}", s(&garbage)),
            &format!("--export-json={}", s(&json)),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("\ntps = "), "{stdout}");
    assert!(json.exists(), "the results file");
    assert!(
        stderr.contains("warning: the run was not recorded in the history: ")
            && stderr.contains("garbage.bin"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&garbage).unwrap(), bytes);
}
