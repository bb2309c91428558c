//! `--server-stats` and the validity warnings on a real server: a select-only run's
//! server transactions beside the client's, its WAL and wait-event samples on the
//! client's seconds; a CHECKPOINT issued mid-run in the window and warned about; a
//! tpcb-like run at a scale below its clients warned about; `pgbench-report check`'s
//! exit statuses; and stdout unchanged by the option. [`views`]: `pg_stat_io`, the
//! checkpointer, `pg_stat_statements` and standbys; [`throttle`]: a client starved of
//! CPU warned about; [`faults`]: views denied, the sampler's connection ended mid-run.

mod faults;
mod throttle;
mod views;

use crate::export::schema;
use crate::support::{fresh_db, normalize_timed, run, Db};
use std::path::Path;
use std::process::Command;

pub(crate) fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub(crate) fn codes(doc: &serde_json::Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

pub(crate) fn valid(doc: &serde_json::Value) {
    let errors: Vec<String> = schema().iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

fn check(files: &[&Path], fail: bool) -> crate::support::Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgbench-report"));
    cmd.arg("check").args(files);
    if fail {
        cmd.arg("--fail-if-warnings");
    }
    run(&mut cmd)
}

/// A fresh database at scale 1 and a run of `args` exporting JSON: what it printed
/// and its results file (checked against the schema).
fn exported(test: &str, args: &[&str]) -> (crate::support::Run, serde_json::Value) {
    let db = fresh_db(test);
    db.init(1);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    let out = run(db
        .ours()
        .args(args)
        .arg(format!("--export-json={}", file.display())));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = json(&file);
    valid(&doc);
    (out, doc)
}

#[test]
fn select_only_server_commits_match_the_clients_with_wal_and_wait_events() {
    let (out, doc) = exported(
        "server_stats_select",
        &[
            "-S",
            "-c",
            "4",
            "-j",
            "2",
            "-T",
            "6",
            "--print-server-stats",
        ],
    );
    assert!(
        out.stdout.contains("\nserver: (server_version_num "),
        "{}",
        out.stdout
    );
    let r = &doc["run"];
    let s = &r["server"];
    let client = r["total"]["cnt"].as_i64().unwrap();
    let server = s["derived"]["server_transactions"].as_i64().unwrap();
    let commits = s["window"]["pg_stat_database"]["xact_commit"]
        .as_i64()
        .unwrap();
    let sampler = s["sampler_transactions"].as_i64().unwrap();
    assert_eq!(server, commits - sampler);
    assert!(sampler > 50, "{sampler}");
    assert!(
        (server - client).abs() as f64 <= client as f64 * 0.01,
        "server {server} client {client}"
    );
    assert!(
        s["window"]["pg_stat_wal"]["wal_bytes"].as_i64().is_some(),
        "{s}"
    );
    assert!(s["derived"]["wal_bytes_per_transaction"].as_f64().is_some());
    assert!(s["activity_rounds"].as_i64().unwrap() >= 40, "{s}");
    let samples: i64 = s["activity"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["samples"].as_i64().unwrap())
        .sum();
    assert!(samples >= 4 * 40, "{samples}");
    // The server's seconds on the client's.
    let ts = |series: &serde_json::Value| -> Vec<i64> {
        series
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["t"].as_i64().unwrap())
            .collect()
    };
    let (client_t, server_t) = (ts(&r["series"]), ts(&s["series"]));
    assert_eq!(server_t[..client_t.len()], client_t[..]);
    // (Checkpoints are the cluster's: another test's may fall in this window.)
}

/// A run of `args` with `--server-stats --export-json`; a CHECKPOINT once its clients
/// have connected and run for a second (on a loaded machine the start can take longer
/// than the run's first seconds).
pub(crate) fn run_with_checkpoint(db: &Db, file: &Path, args: &[&str]) -> crate::support::Run {
    run_with_checkpoint_after(db, file, args, std::time::Duration::from_secs(1))
}

/// [`run_with_checkpoint`] with the CHECKPOINT `after` the clients connected.
fn run_with_checkpoint_after(
    db: &Db,
    file: &Path,
    args: &[&str],
    after: std::time::Duration,
) -> crate::support::Run {
    let child = db
        .ours()
        .args(args)
        .arg("--server-stats")
        .arg(format!("--export-json={}", file.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let connected = "select count(*) >= 2 from pg_stat_activity \
         where datname = current_database() and application_name = 'pgbench-rs'";
    db.value_within(connected, "t", std::time::Duration::from_secs(30));
    std::thread::sleep(after);
    db.psql("checkpoint");
    let out = child.wait_with_output().unwrap();
    crate::support::Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

#[test]
fn a_checkpoint_mid_run_is_in_the_window_and_a_warning_check_fails_on() {
    let db = fresh_db("server_stats_checkpoint");
    db.init(1);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.json");
    let out = run_with_checkpoint(&db, &file, &["-N", "-c", "2", "-T", "5"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = json(&file);
    valid(&doc);
    assert!(
        doc["run"]["server"]["derived"]["checkpoints"]
            .as_i64()
            .unwrap()
            >= 1
    );
    assert!(
        doc["run"]["server"]["derived"]["wal_bytes_per_transaction"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(
        codes(&doc).contains(&"checkpoint_in_window".to_string()),
        "{}",
        doc["warnings"]
    );
    let plain = check(&[&file], false);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(
        plain.stdout.contains("warning: checkpoint_in_window: "),
        "{}",
        plain.stdout
    );
    assert_eq!(check(&[&file], true).code, 2);

    // The same file without warnings passes the gate; a version 1 file is checked
    // from its run (it warns of the checkpoint again).
    let mut clean = doc.clone();
    clean["warnings"] = serde_json::json!([]);
    let clean_file = dir.path().join("clean.json");
    std::fs::write(&clean_file, clean.to_string()).unwrap();
    let out = check(&[&clean_file], true);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout.contains("clean.json: no warnings"),
        "{}",
        out.stdout
    );
    let mut old = clean;
    old["schema"] = serde_json::json!(1);
    let old_file = dir.path().join("old.json");
    std::fs::write(&old_file, old.to_string()).unwrap();
    assert_eq!(check(&[&clean_file, &old_file], true).code, 2);
    assert_eq!(check(&[Path::new("/nonexistent.json")], true).code, 1);
}

#[test]
fn tpcb_like_below_its_clients_warns_about_the_scale_and_server_checks_say_off() {
    let (out, doc) = exported(
        "server_stats_scale",
        &["-c", "8", "-j", "2", "-T", "2", "--print-warnings"],
    );
    assert!(
        out.stdout
            .contains("\nwarning: scale_below_clients: scale 1 is below the 8 clients"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("not checked: checkpoint_in_window: needs --server-stats"),
        "{}",
        out.stdout
    );
    let w = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "scale_below_clients")
        .unwrap();
    assert_eq!(w["figures"]["clients"], 8.0);
    assert!(doc["run"]["client_cpu"]["cpu_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn without_print_options_stdout_is_unchanged() {
    let db = fresh_db("server_stats_stdout");
    db.init(1);
    let plain = run(db.ours().args(["-S", "-t", "200", "-c", "2"]));
    let with = run(db
        .ours()
        .args(["-S", "-t", "200", "-c", "2", "--server-stats"]));
    assert_eq!(with.code, 0, "{}", with.stderr);
    assert_eq!(
        normalize_timed(&with.stdout),
        normalize_timed(&plain.stdout)
    );
    assert_eq!(with.stderr, plain.stderr);
}

#[test]
fn after_a_warmup_the_window_and_its_seconds_are_the_measured_part() {
    let (_, doc) = exported(
        "server_stats_warmup",
        &["-S", "-c", "2", "-T", "3", "--warmup=2", "--server-stats"],
    );
    let (r, s) = (&doc["run"], &doc["run"]["server"]);
    let client = r["total"]["cnt"].as_i64().unwrap();
    let server = s["derived"]["server_transactions"].as_i64().unwrap();
    // The warm-up's 2 s are not in the window (a second's lag of published counts is).
    assert!(
        server < client * 3 / 2 && server > client / 2,
        "server {server} client {client}"
    );
    assert_eq!(s["series"][0]["t"], r["series"][0]["t"]);
    assert!(!codes(&doc).contains(&"cold_start".to_string()));
}

/// `compare`'s row for WAL bytes per transaction: its columns after the label.
fn wal_row(table: &str) -> Vec<String> {
    let line = table
        .lines()
        .find_map(|l| l.strip_prefix("WAL bytes per transaction "))
        .unwrap_or_else(|| panic!("no WAL row in\n{table}"));
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
fn an_insert_heavy_runs_wal_per_transaction_is_above_a_select_only_runs_in_compare() {
    // pg_stat_wal counts the whole cluster's WAL: on the shared cluster, the other
    // tests' loads fell into the select-only run's window and could outweigh the
    // inserts' 20 kB a transaction. A cluster of its own sees only this test's.
    static CLUSTER: std::sync::OnceLock<pgbench_cluster::Cluster> = std::sync::OnceLock::new();
    let cluster = CLUSTER.get_or_init(|| {
        pgbench_cluster::Cluster::start(pgbench_cluster::ClusterOptions {
            config: vec![("autovacuum".into(), "off".into())],
            ..Default::default()
        })
        .expect("start a cluster")
    });
    let db = Db {
        cluster,
        name: cluster.fresh_database("server_stats_compare").unwrap(),
    };
    db.init(1);
    db.psql("create table inserted (id int, pad text)");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("insert.sql");
    std::fs::write(
        &script,
        "insert into inserted select g, repeat('x', 200) from generate_series(1, 100) g;\n",
    )
    .unwrap();
    let export = |name: &str, args: &[&str]| {
        let file = dir.path().join(name);
        let out = run(db
            .ours()
            .args(args)
            .args(["-c", "2", "-T", "15", "--server-stats"])
            .arg(format!("--export-json={}", file.display())));
        assert_eq!(out.code, 0, "{}", out.stderr);
        file
    };
    let select = export("select.json", &["-S"]);
    let insert = export("insert.json", &["-n", "-f", script.to_str().unwrap()]);
    let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .arg("compare")
        .args([&select, &insert])
        .arg("--fail-if=wal_bytes_per_transaction>100%"));
    let row = wal_row(&out.stdout);
    let (a, b): (f64, f64) = (row[0].parse().unwrap(), row[1].parse().unwrap());
    // 100 rows of 200 bytes: over 20 kB of WAL a transaction; a select writes none
    // of its own (the server's own background writes aside).
    assert!(b > 20_000.0 && b > 2.0 * a, "{row:?}\n{}", out.stdout);
    for figure in [
        "full-page images",
        "buffer hit ratio",
        "checkpoints in window",
        "wait ",
    ] {
        assert!(
            out.stdout.contains(&format!("\n{figure}")),
            "{}",
            out.stdout
        );
    }
    // From 0 the change has no percentage (but a verdict all the same).
    assert_eq!(row[2].starts_with('+'), a > 0.0, "{row:?}");
    assert_eq!(row[2] == "-", a == 0.0, "{row:?}");
    // Alone on the cluster the change is beyond noise; a busy machine can still make
    // the seconds too few to tell. The gate follows.
    let verdict = row[row.len() - 3..].join(" ");
    let gate = if verdict == "beyond noise: worse" {
        (2, "regression")
    } else {
        assert_eq!(
            row[row.len() - 4..].join(" "),
            "too short to tell",
            "{}",
            out.stdout
        );
        (4, "undecided")
    };
    assert_eq!(out.code, gate.0, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(&format!(
            "pgbench-report: {}: insert.json vs select.json: wal_bytes_per_transaction changed ",
            gate.1
        )),
        "{}",
        out.stderr
    );
}

/// The values of one series of a chart the page drew (0: the x values).
fn plotted(c: &crate::support::browser::PageCheck, id: &str, series: usize) -> Vec<Option<f64>> {
    let (_, data) = c.data.iter().find(|(i, _)| i == id).unwrap();
    data[series].clone()
}

#[test]
fn the_html_draws_server_panels_a_checkpoint_and_the_warmup_in_chromium() {
    let db = fresh_db("server_stats_html");
    db.init(1);
    // Kept after the test (under the target dir) to look at: run.png.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("server-stats-html");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (file, page) = (dir.join("run.json"), dir.join("run.html"));
    let html = format!("--export-html={}", page.display());
    let args = ["-N", "-c", "2", "-T", "8", "--warmup=2", &html];
    // 2 s into the measured window, after the 2 s warm-up.
    let out = run_with_checkpoint_after(&db, &file, &args, std::time::Duration::from_secs(4));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = json(&file);
    assert!(
        doc["run"]["server"]["derived"]["checkpoints"]
            .as_i64()
            .unwrap()
            >= 1
    );
    // pgbench-report html draws the same page from the results file.
    let again = dir.join("again.html");
    let report = run(Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .arg("html")
        .arg(&file)
        .arg("-o")
        .arg(&again));
    assert_eq!(report.code, 0, "{}", report.stderr);
    let ids = |p: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(p).unwrap();
        text.split("id=\"chart-")
            .skip(1)
            .map(|s| s.split('"').next().unwrap().to_string())
            .collect()
    };
    let expected = [
        "tps",
        "latency",
        "spectrum",
        "server-wal",
        "server-hits",
        "server-waits-0",
    ];
    assert_eq!(ids(&page), expected);
    assert_eq!(ids(&again), expected);

    let Some(c) = crate::support::browser::check_page(&page, &dir.join("run.png")) else {
        return;
    };
    assert!(c.problems.is_empty(), "{:#?}", c.problems);
    assert_eq!(c.requests, [format!("file://{}", page.display())]);
    assert_eq!(c.drawn, expected.len());
    for (id, coloured, left, bottom, _) in &c.charts {
        assert!(*coloured > 200, "{id}: plot area blank ({coloured})");
        // A glyph of the tick labels is 15-20 dark pixels: a live run's latency axis
        // may read just "2 3 4" (about 50), where a blank strip has none.
        assert!(
            *left > 20 && *bottom > 20,
            "{id}: axis labels missing ({left}, {bottom}); the screenshot: {}",
            dir.join("run.png").display()
        );
    }
    // The server's seconds are the client's (those of the measured p50), each with
    // a figure.
    let (t, p50) = (
        plotted(&c, "chart-latency", 0),
        plotted(&c, "chart-latency", 1),
    );
    let measured: Vec<Option<f64>> = t
        .iter()
        .zip(&p50)
        .filter(|(_, v)| v.is_some())
        .map(|(x, _)| *x)
        .collect();
    for id in ["chart-server-wal", "chart-server-hits"] {
        let (t, v) = (plotted(&c, id, 0), plotted(&c, id, 1));
        assert_eq!(t[..measured.len()], measured[..], "{id}");
        assert!(v.iter().filter(|v| v.is_some()).count() >= 7, "{id}: {v:?}");
    }
    // Stacked wait events: the top series is each second's whole, 100 %.
    let top = plotted(&c, "chart-server-waits-0", 1);
    assert!(
        top.iter().flatten().all(|v| (v - 100.0).abs() < 1e-6),
        "{top:?}"
    );
    assert!(top.iter().flatten().count() >= 7, "{top:?}");
    // The warm-up's tps (dashed, the last series) before the measured seconds, which
    // count from the window's start.
    let t = plotted(&c, "chart-tps", 0);
    let (tps, warm) = (plotted(&c, "chart-tps", 1), plotted(&c, "chart-tps", 2));
    for (i, x) in t.iter().enumerate() {
        let x = x.unwrap();
        assert_eq!(warm[i].is_some(), x <= 0.0, "second ending {x}: {warm:?}");
        assert_eq!(tps[i].is_some(), x > 0.0, "second ending {x}: {tps:?}");
    }
    // Its latencies too, after the measured ones and named for the warm-up: before
    // 0, not after, and the measured ones after 0 only.
    let (_, legend) = c
        .legends
        .iter()
        .find(|(id, _)| id == "chart-latency")
        .unwrap();
    // The page's name labels its series.
    let names = ["p50", "p99", "warm-up p50", "warm-up p99"].map(|n| format!("run {n}"));
    assert_eq!(legend[1..], names, "{legend:?}");
    let t = plotted(&c, "chart-latency", 0);
    for (k, name) in names.iter().enumerate() {
        let s = plotted(&c, "chart-latency", k + 1);
        let of_warmup = name.contains("warm-up");
        for (x, v) in t.iter().zip(&s) {
            let x = x.unwrap();
            assert_eq!(v.is_some(), (x <= 0.0) == of_warmup, "{name} at {x}: {s:?}");
        }
    }
    assert!(
        t.iter().filter(|x| x.unwrap() <= 0.0).count() >= 2,
        "the 2 s warm-up's seconds: {t:?}"
    );
    // The shading covers the warm-up on every chart over time; the checkpoint's
    // dashed line is on the server's charts and the tps chart.
    let mark = |id: &str, kind: &str| {
        c.marks
            .iter()
            .find(|m| m.0 == id && m.1 == kind)
            .unwrap_or_else(|| panic!("no {kind} mark on {id}: {:?}", c.marks))
    };
    for id in ["chart-tps", "chart-latency", "chart-server-wal"] {
        let (_, _, pixels, area) = mark(id, "warmup");
        assert!(
            *area > 1000 && *pixels * 2 > *area,
            "{id}: {pixels} of {area}"
        );
    }
    for id in ["chart-tps", "chart-server-wal", "chart-server-waits-0"] {
        let (_, _, pixels, area) = mark(id, "checkpoint");
        // A dashed line (4 px on, 3 off) 2 px wide in a box 5 px wide: 23 %.
        assert!(*pixels * 7 > *area, "{id}: {pixels} of {area}");
    }
}

/// #33: the first run after a server restart had a buffer hit ratio of 90.4% (99.9%
/// the next run) and no warning, and compare called its difference with a warm run
/// beyond noise: `cold_start` looked only at the client's tps, which the OS's cache of
/// the data kept within 20%. Its reads falling as shared buffers fill are a cold
/// start now. Here the first run after `-i` at scale 15 with 512MB of shared buffers:
/// the load, its vacuum and its index build read and write pgbench_accounts (240MB,
/// over a quarter of shared buffers) through small rings of buffers, so the run
/// starts with it uncached, as after a restart. (In a 10 s run, from about 4,000 to
/// 70,000 tps the window's hit ratio is under 99% and the first 2 s read at least
/// twice the rest's share of their blocks; scale 10 read 1.8% of its blocks at
/// 24,000 tps.)
#[test]
fn the_first_run_on_a_cold_cache_is_a_cold_start_by_its_reads() {
    static CLUSTER: std::sync::OnceLock<pgbench_cluster::Cluster> = std::sync::OnceLock::new();
    let cluster = CLUSTER.get_or_init(|| {
        pgbench_cluster::Cluster::start(pgbench_cluster::ClusterOptions {
            config: vec![
                ("autovacuum".into(), "off".into()),
                ("shared_buffers".into(), "512MB".into()),
            ],
            ..Default::default()
        })
        .expect("start a cluster")
    });
    let db = Db {
        cluster,
        name: cluster.fresh_database("server_stats_cold").unwrap(),
    };
    db.init(15);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cold.json");
    let out = run(db
        .ours()
        .args(["-S", "-c", "2", "-T", "10", "--server-stats"])
        .arg(format!("--export-json={}", file.display())));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = json(&file);
    valid(&doc);
    let reads: Vec<&serde_json::Value> = doc["run"]["server"]["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["counters"]["pg_stat_database"]["blks_read"])
        .collect();
    let cold = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "cold_start")
        .unwrap_or_else(|| panic!("{}\nblocks read: {reads:?}", doc["warnings"]));
    let message = cold["message"].as_str().unwrap();
    assert!(
        message.starts_with("the server's buffer hit ratio was "),
        "{message}"
    );
    let f = &cold["figures"];
    assert!(f["hit_ratio"].as_f64().unwrap() < 0.99, "{f}");
    assert!(
        f["first_hit_ratio"].as_f64().unwrap() < f["rest_hit_ratio"].as_f64().unwrap(),
        "{f}"
    );
}
