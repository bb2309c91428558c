//! `--metrics-listen` with `-i`: the load's progress scraped while it loads, against
//! the shared throwaway cluster. pgbench's `-i -s 20` scraped every 20 ms: the
//! accounts' rows seen between 0 and the total while `client-side generate` runs, never
//! going back, then the totals and `step="done"` in the linger; `--resume` after one
//! shard of two: its units counted from the shard's, to all of them; TPC-C (under
//! `--resume`, its units) and sysbench: every table's rows equal to its rows expected;
//! a real Prometheus scraping a load (`promtool check metrics` on its text, its last
//! values the totals); Ctrl-C in the linger ends it with the load's status; a
//! `--temp-instance -i` serves the same.

use super::{finish, free_port, promtool_accepts, sample, scrape, spawn, tool, Prometheus};
use crate::support::{fresh_db, Db};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A load with the endpoint on `port`, lingering `linger` seconds.
fn start_load(db: &Db, dir: &tempfile::TempDir, port: u16, linger: u32, args: &[&str]) -> Child {
    let listen = format!("--metrics-listen=127.0.0.1:{port}");
    let linger = format!("--metrics-linger={linger}");
    spawn(db, dir.path(), &[args, &[&listen, &linger]].concat())
}

/// Every scrape until the load's `step="done"` (the linger), 20 ms apart.
fn scrapes_until_done(port: u16, child: &mut Child) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut seen = Vec::new();
    loop {
        assert!(Instant::now() < deadline, "the load did not finish");
        if let Some(text) = scrape(port) {
            let done = sample(&text, "pgbench_load_step{step=\"done\"}") == Some(1.0);
            seen.push(text);
            if done {
                return seen;
            }
        } else if let Ok(Some(status)) = child.try_wait() {
            panic!("the load ended ({status}) before its linger: {seen:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every `pgbench_load_rows_total` series of `text` with its rows expected.
fn tables(text: &str) -> Vec<(String, f64, Option<f64>)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("pgbench_load_rows_total{table=\""))
        .filter_map(|l| l.split_once("\"} "))
        .map(|(table, v)| {
            let expected = sample(
                text,
                &format!("pgbench_load_rows_expected{{table=\"{table}\"}}"),
            );
            (table.to_string(), v.trim().parse().unwrap(), expected)
        })
        .collect()
}

#[test]
fn a_load_serves_its_rows_as_they_grow_then_its_totals() {
    let db = fresh_db("metrics_load");
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = start_load(&db, &dir, port, 2, &["-i", "-s", "20"]);
    let seen = scrapes_until_done(port, &mut child);
    let accounts = "pgbench_load_rows_total{table=\"pgbench_accounts\"}";
    let rows: Vec<f64> = seen.iter().filter_map(|t| sample(t, accounts)).collect();
    assert!(rows.windows(2).all(|w| w[0] <= w[1]), "a counter: {rows:?}");
    let generating = "pgbench_load_step{step=\"client-side generate\"}";
    assert!(
        seen.iter().any(|t| sample(t, generating) == Some(1.0)
            && sample(t, accounts).is_some_and(|n| n > 0.0 && n < 2_000_000.0)),
        "no scrape in the middle of the load: {rows:?}"
    );
    let last = seen.last().unwrap();
    let mut got = tables(last);
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        [
            ("pgbench_accounts".into(), 2_000_000.0, Some(2_000_000.0)),
            ("pgbench_branches".into(), 20.0, Some(20.0)),
            ("pgbench_tellers".into(), 200.0, Some(200.0)),
        ],
        "{last}"
    );
    for step in ["drop tables", "create tables", "vacuum", "primary keys"] {
        let series = format!("pgbench_load_step{{step=\"{step}\"}}");
        assert_eq!(sample(last, &series), Some(0.0), "{step}: {last}");
    }
    assert_eq!(sample(last, "pgbench_load_units"), None, "not resumable");
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("\ndone in "), "{stderr}");
    assert!(
        !stderr.contains("metrics"),
        "nothing printed of it: {stderr}"
    );
}

#[test]
fn a_resumed_load_counts_its_units_from_the_record() {
    let db = fresh_db("metrics_load_resume");
    let first = crate::support::run(db.ours().args(["-i", "-s", "20", "--shard=1/2"]));
    assert_eq!(first.code, 0, "{}", first.stderr);
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = start_load(&db, &dir, port, 2, &["-i", "-s", "20", "--resume"]);
    let seen = scrapes_until_done(port, &mut child);
    let units: Vec<(f64, f64)> = seen
        .iter()
        .filter_map(|t| {
            Some((
                sample(t, "pgbench_load_units_done")?,
                sample(t, "pgbench_load_units")?,
            ))
        })
        .collect();
    // 21 units: the small tables and 20 of accounts; shard 1/2 loaded 11 of them.
    let (first_done, total) = units[0];
    assert_eq!(total, 21.0, "{units:?}");
    assert!(first_done >= 11.0, "{units:?}");
    assert!(units.windows(2).all(|w| w[0].0 <= w[1].0), "{units:?}");
    assert_eq!(*units.last().unwrap(), (21.0, 21.0));
    let last = seen.last().unwrap();
    let accounts = |series: &str| sample(last, &format!("{series}{{table=\"pgbench_accounts\"}}"));
    // This process's rows: the units the shard left.
    assert_eq!(
        accounts("pgbench_load_rows_total"),
        Some(1_000_000.0),
        "{last}"
    );
    assert_eq!(accounts("pgbench_load_rows_expected"), Some(1_000_000.0));
    let (code, _, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn tpcc_and_sysbench_loads_serve_every_tables_rows() {
    for (test, args, count) in [
        (
            "metrics_load_tpcc",
            &["-i", "--workload=tpcc", "-s", "1", "--resume"][..],
            9,
        ),
        (
            "metrics_load_sysbench",
            &[
                "-i",
                "--workload=oltp_read_write",
                "-D",
                "tables=3",
                "-D",
                "table_size=5000",
            ],
            3,
        ),
    ] {
        let db = fresh_db(test);
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut child = start_load(&db, &dir, port, 1, args);
        let seen = scrapes_until_done(port, &mut child);
        let last = seen.last().unwrap();
        let got = tables(last);
        assert_eq!(got.len(), count, "{last}");
        for (table, rows, expected) in got {
            assert!(rows > 0.0, "{table}: {last}");
            assert_eq!(Some(rows), expected, "{table}: {last}");
        }
        if args.contains(&"--resume") {
            // The items and the one warehouse.
            assert_eq!(sample(last, "pgbench_load_units_done"), Some(2.0), "{last}");
            assert_eq!(sample(last, "pgbench_load_units"), Some(2.0), "{last}");
        }
        let (code, _, stderr) = finish(child);
        assert_eq!(code, 0, "{test}: {stderr}");
    }
}

#[test]
fn prometheus_scrapes_a_load() {
    let (Some(prometheus), Some(promtool)) = (tool("prometheus"), tool("promtool")) else {
        return;
    };
    let db = fresh_db("metrics_load_prometheus");
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let server = Prometheus::start(&prometheus, &[port]);
    let mut child = start_load(&db, &dir, port, 4, &["-i", "-s", "20", "--resume"]);
    let seen = scrapes_until_done(port, &mut child);
    let text = seen.last().unwrap();
    promtool_accepts(&promtool, text);
    let (code, _, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
    let last = |series: &str| server.value(&format!("last_over_time({series}[5m])"));
    assert_eq!(
        last("pgbench_load_rows_total{table=\"pgbench_accounts\"}"),
        2_000_000.0
    );
    assert_eq!(
        last("pgbench_load_rows_expected{table=\"pgbench_accounts\"}"),
        2_000_000.0
    );
    assert_eq!(
        last("pgbench_load_rows_expected{table=\"pgbench_branches\"}"),
        20.0
    );
    assert_eq!(last("pgbench_load_units_done"), 21.0);
    assert_eq!(last("pgbench_load_step{step=\"done\"}"), 1.0);
}

#[test]
fn ctrl_c_ends_a_loads_linger_with_the_loads_status() {
    let db = fresh_db("metrics_load_linger");
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = start_load(&db, &dir, port, 600, &["-i", "-s", "1"]);
    scrapes_until_done(port, &mut child);
    let ((code, _, stderr), took) = super::interrupt(child);
    assert_eq!(code, 0, "{stderr}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// `--temp-instance -i`: the throwaway server's load serves the same metrics.
#[test]
fn a_throwaway_servers_load_serves_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"))
        .current_dir(dir.path())
        .args(["--temp-instance", "-i", "-s", "5"])
        .arg(format!("--metrics-listen=127.0.0.1:{port}"))
        .arg("--metrics-linger=2")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pgbench-rs");
    let seen = scrapes_until_done(port, &mut child);
    let last = seen.last().unwrap();
    let mut got = tables(last);
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        [
            ("pgbench_accounts".into(), 500_000.0, Some(500_000.0)),
            ("pgbench_branches".into(), 5.0, Some(5.0)),
            ("pgbench_tellers".into(), 50.0, Some(50.0)),
        ],
        "{last}"
    );
    let (code, _, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("\ndone in "), "{stderr}");
}
