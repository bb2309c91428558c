//! `--reconnect` against real outages on throwaway clusters, each set beside what the
//! server (or the pooler) logged: `pg_ctl stop -m immediate` and a start again mid-run,
//! a primary stopped and its `pg_basebackup -R` standby promoted under a multi-host
//! conninfo with `target_session_attrs=read-write`, pgbouncer restarted in front of a
//! server, and under `-R` the transactions due in the outage carrying it in their
//! latency. The committed rows are checked against the `-l` log: no loss, no double
//! count.

use crate::support::{self, StderrWatch};
use pgbench_cluster::{Cluster, ClusterOptions};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `-c 8 -j 2` with up to 200 ms between attempts: the outage seen ends at most this
/// long after the server is ready again (the backoff plus 100 ms).
const END_SLACK_MS: i64 = 200 + 100;
/// ... and begins at most this long after the server logged its shutdown.
const START_SLACK_MS: i64 = 50;

/// One test at a time: each runs 8 clients and a server or two, and the instants it
/// checks are tighter on a machine not busy with the others.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The script: each client numbers its transactions (`n`), so that each committed row
/// names the transaction of the `-l` log that wrote it.
const SCRIPT: &str = "\\set n :n + 1\nINSERT INTO t VALUES (:client_id, :n);\n";

/// Server logs in UTC to the millisecond, as the availability block's instants; each
/// commit's WAL written before its reply (a throwaway cluster's `synchronous_commit =
/// off` would lose the last commits acknowledged to an immediate shutdown).
fn logged() -> ClusterOptions {
    ClusterOptions {
        config: vec![
            ("synchronous_commit".into(), "on".into()),
            ("log_line_prefix".into(), "%m ".into()),
            ("log_timezone".into(), "UTC".into()),
        ],
        ..Default::default()
    }
}

fn create_table(cluster: &Cluster) {
    cluster
        .psql(
            "postgres",
            "CREATE TABLE t (client int, n int, PRIMARY KEY (client, n))",
        )
        .unwrap();
}

/// A `--reconnect` run of [`SCRIPT`] in `dir`, its stderr watched; `target` points it.
fn start_run(
    dir: &Path,
    extra: &[&str],
    target: impl FnOnce(&mut Command),
) -> (Child, StderrWatch) {
    std::fs::write(dir.join("insert.sql"), SCRIPT).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
    target(&mut cmd);
    cmd.current_dir(dir)
        .args([
            "-c",
            "8",
            "-j",
            "2",
            "-n",
            "-P",
            "1",
            "--reconnect",
            "-D",
            "n=0",
        ])
        .args([
            "-l",
            "--log-prefix=tx",
            "-f",
            "insert.sql",
            "--export-json=run.json",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let watch = StderrWatch::new(&mut child);
    (child, watch)
}

/// The run's end: its exit status, stdout and stderr, and its results file's `run`.
fn end_run(child: Child, watch: StderrWatch, dir: &Path) -> (i32, String, String, Value) {
    let out = child.wait_with_output().unwrap();
    let stderr = watch.finish();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let invalid: Vec<String> = crate::export::schema()
        .iter_errors(&doc)
        .map(|e| e.to_string())
        .collect();
    assert!(
        invalid.is_empty(),
        "the results file against the schema: {invalid:?}"
    );
    (
        out.status.code().unwrap_or(-1),
        stdout,
        stderr,
        doc["run"].clone(),
    )
}

/// Unix ms of a log line that begins `YYYY-MM-DD HH:MM:SS.mmm UTC`.
fn line_ms(line: &str) -> Option<i64> {
    let (date, rest) = line.split_once(' ')?;
    let time = rest.get(..12)?;
    let d: Vec<i64> = date
        .split('-')
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    let (hms, ms) = time.split_once('.')?;
    let t: Vec<i64> = hms
        .split(':')
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    let (y, m) = if d[1] <= 2 {
        (d[0] - 1, d[1] + 9)
    } else {
        (d[0], d[1] - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d[2] - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    Some(((days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2]) * 1000) + ms.parse::<i64>().ok()?)
}

/// The instant of the last line of `log` with `text`.
fn logged_at(log: &str, text: &str) -> i64 {
    log.lines()
        .rev()
        .filter(|l| l.contains(text))
        .find_map(line_ms)
        .unwrap_or_else(|| panic!("no {text:?} in the log:\n{log}"))
}

/// The run's one outage: (first failure, first success after) in Unix ms, after
/// checking that every client was touched and connected again.
fn the_outage(run: &Value) -> (i64, i64, &Value) {
    let a = &run["availability"];
    let outages = a["outages"].as_array().expect("outages");
    assert_eq!(outages.len(), 1, "{a:#}");
    let o = &outages[0];
    assert_eq!(o["clients"], 8, "every client saw it: {a:#}");
    assert!(a["reconnects"].as_i64().unwrap() >= 8, "{a:#}");
    assert_eq!(a["gave_up"], 0, "{a:#}");
    let ms = |v: &Value| v.as_i64().expect("an instant") / 1000;
    (
        ms(&o["first_failure_unix_us"]),
        ms(&o["first_success_after_unix_us"]),
        o,
    )
}

/// The `-l` lines of the run in `dir`: (client, transaction number) → failed?, and the
/// lines themselves.
fn logged_transactions(dir: &Path) -> BTreeMap<(i64, i64), Vec<String>> {
    let mut all = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("tx.") {
            continue;
        }
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let f: Vec<String> = line.split(' ').map(str::to_string).collect();
            let key = (f[0].parse().unwrap(), f[1].parse().unwrap());
            assert!(
                all.insert(key, f).is_none(),
                "a transaction logged twice: {line}"
            );
        }
    }
    all
}

/// Rows committed against the log: each success's row is there, each row is a
/// success's or (in doubt) a failure's whose commit went through as the connection
/// ended; the report's successes are the rows less those. Returns the in-doubt count.
fn rows_match_the_log(rows: &str, log: &BTreeMap<(i64, i64), Vec<String>>, run: &Value) -> usize {
    let rows: BTreeSet<(i64, i64)> = rows
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (c, n) = l.trim().split_once('|').unwrap();
            (c.parse().unwrap(), n.parse().unwrap())
        })
        .collect();
    let ok: BTreeSet<(i64, i64)> = log
        .iter()
        .filter(|(_, f)| f[2] != "failed")
        .map(|(k, _)| *k)
        .collect();
    let lost: Vec<_> = ok.difference(&rows).collect();
    assert!(lost.is_empty(), "successes without their row: {lost:?}");
    let extra: Vec<_> = rows.difference(&ok).collect();
    for key in &extra {
        let line = log
            .get(key)
            .unwrap_or_else(|| panic!("a row of no transaction: {key:?}"));
        assert_eq!(line[2], "failed", "{key:?}");
    }
    let reported = run["total"]["cnt"].as_i64().unwrap();
    assert_eq!(
        reported,
        ok.len() as i64,
        "the report's successes are the log's"
    );
    assert_eq!(reported, (rows.len() - extra.len()) as i64);
    let failed = run["total"]["other_sql_failures"].as_i64().unwrap();
    // Each failure whose commit went through was counted in doubt: successful <= rows
    // <= successful + in doubt. The count is written even when it is 0.
    let in_doubt = run["in_doubt"].as_i64().expect("the run's in_doubt");
    assert!(
        extra.len() as i64 <= in_doubt && in_doubt <= failed,
        "{} rows of failures, {in_doubt} in doubt, {failed} failed",
        extra.len()
    );
    assert_eq!(run["total"]["in_doubt"].as_i64().unwrap_or(0), in_doubt);
    assert_eq!(run["availability"]["in_doubt"], in_doubt);
    extra.len()
}

fn rows(cluster: &Cluster) -> String {
    cluster.psql("postgres", "SELECT client, n FROM t").unwrap()
}

/// `pg_ctl stop -m immediate` and a start again in the middle of `-c 8 -j 2 -T 10
/// --reconnect`: exit 0, every client back, the outage as the server logged it.
#[test]
fn an_immediate_restart_is_ridden_through_and_reported_as_the_server_logged_it() {
    let _alone = alone();
    let cluster = Cluster::start(logged()).unwrap();
    create_table(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let (child, watch) = start_run(dir.path(), &["-T", "10", "--export-html=run.html"], |c| {
        support::aim(c, &cluster, "postgres")
    });
    watch.wait_for("progress: 3.0 s", Duration::from_secs(60));
    cluster.stop_immediate().unwrap();
    // The start truncates the log: the shutdown is read first.
    let down = logged_at(&cluster.server_log(), "received immediate shutdown request");
    cluster.restart().unwrap();
    let ready = logged_at(&cluster.server_log(), "ready to accept connections");
    let (code, stdout, stderr, run) = end_run(child, watch, dir.path());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let (first_failure, first_success, _) = the_outage(&run);
    eprintln!(
        "server: shutdown {down}, ready {ready}; report: first failure {first_failure}, \
         first success after {first_success} (Unix ms)"
    );
    assert!((first_failure - down).abs() <= START_SLACK_MS, "{stdout}");
    assert!(
        first_success >= ready - 2 && first_success <= ready + END_SLACK_MS,
        "{stdout}"
    );
    assert!(stdout.contains("\noutage 1: 8 clients"), "{stdout}");
    // The server warns each client of its immediate shutdown (57P01) as it closes the
    // connection: the failures are put down to it.
    let failed = run["availability"]["failed"].as_object().unwrap();
    assert!(failed.contains_key("57P01"), "{failed:?}");
    let in_doubt = rows_match_the_log(&rows(&cluster), &logged_transactions(dir.path()), &run);
    eprintln!("failed transactions whose commit went through: {in_doubt}");
    // pgbench-report: check warns of the outage unless it was expected; compare sets
    // it beside another run's.
    let json = dir.path().join("run.json");
    let report = || Command::new(env!("CARGO_BIN_EXE_pgbench-report"));
    let check = support::run(report().args(["check", "--fail-if-warnings"]).arg(&json));
    assert_eq!(check.code, 2, "{check:?}");
    assert!(check.stdout.contains("warning: outages: "), "{check:?}");
    let expected = support::run(
        report()
            .args(["check", "--fail-if-warnings", "--expect-outages"])
            .arg(&json),
    );
    assert!(
        !expected.stdout.contains("warning: outages:"),
        "{expected:?}"
    );
    // Nor is the dip it made, or a level after the restart other than before it,
    // unsteadiness (#43).
    assert!(
        !expected.stdout.contains("warning: tps_not_steady:"),
        "{expected:?}"
    );
    // show prints the run's stdout again, the block included.
    let shown = support::run(report().arg("show").arg(&json));
    assert_eq!(shown.stdout, stdout);
    let compared = support::run(report().arg("compare").arg(&json).arg(&json));
    assert!(
        compared.stdout.contains("outages (--reconnect):\n  A: "),
        "{compared:?}"
    );
    // The page shades the outage on the charts over time.
    let page = dir.path().join("run.html");
    if let Some(c) = crate::support::browser::check_page(&page, &dir.path().join("run.png")) {
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        for id in ["chart-tps", "chart-latency"] {
            let (_, _, pixels, area) = c
                .marks
                .iter()
                .find(|m| m.0 == id && m.1 == "outage")
                .unwrap_or_else(|| panic!("no outage shaded on {id}: {:?}", c.marks));
            assert!(
                *area > 500 && *pixels * 2 > *area,
                "{id}: {pixels} of {area}"
            );
        }
        // The failures the outage caused are drawn across their interval, under the
        // outage: high in its box (a line to the interval's end rose through it).
        let (_, _, top) = c
            .marks_top
            .iter()
            .find(|m| m.0 == "chart-failures" && m.1 == "outage")
            .unwrap_or_else(|| panic!("no outage on the failures chart: {:?}", c.marks_top));
        assert!(*top > 0, "no failures drawn high in the outage's box");
    }
}

/// Three immediate restarts in one `-c 16` insert run: every row a success's or an
/// in-doubt failure's, successful <= rows <= successful + in doubt, and the in-doubt
/// transactions in the block, the results file and the compare.
#[test]
fn repeated_immediate_restarts_leave_no_row_outside_the_in_doubt_count() {
    let _alone = alone();
    let cluster = Cluster::start(logged()).unwrap();
    create_table(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let (child, watch) = start_run(
        dir.path(),
        &["-T", "14", "-c", "16", "--reconnect-timeout=30"],
        |c| support::aim(c, &cluster, "postgres"),
    );
    for at in [2, 6, 10] {
        watch.wait_for(&format!("progress: {at}.0 s"), Duration::from_secs(60));
        cluster.stop_immediate().unwrap();
        cluster.restart().unwrap();
    }
    let (code, stdout, stderr, run) = end_run(child, watch, dir.path());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let a = &run["availability"];
    assert_eq!(a["outages"].as_array().unwrap().len(), 3, "{a:#}");
    let rows = rows(&cluster);
    let committed = rows.lines().filter(|l| !l.trim().is_empty()).count() as i64;
    let successful = run["total"]["cnt"].as_i64().unwrap();
    let in_doubt = run["in_doubt"].as_i64().unwrap();
    eprintln!("{successful} successful, {committed} rows, {in_doubt} in doubt");
    assert!(
        successful <= committed && committed <= successful + in_doubt,
        "{successful} successful, {committed} rows, {in_doubt} in doubt"
    );
    rows_match_the_log(&rows, &logged_transactions(dir.path()), &run);
    let per_outage: i64 = a["outages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["in_doubt"].as_i64().unwrap())
        .sum();
    assert_eq!(per_outage, in_doubt, "{a:#}");
    assert!(
        stdout.contains(&format!("\ntransactions in doubt: {in_doubt} (")),
        "{stdout}"
    );
    let json = dir.path().join("run.json");
    let compared = support::run(
        Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
            .arg("compare")
            .arg(&json)
            .arg(&json),
    );
    assert!(
        compared.stdout.contains(&format!(", {in_doubt} in doubt")),
        "{compared:?}"
    );
}

/// A primary and its streaming standby under `host=A,B target_session_attrs=read-write`:
/// the primary stopped, the standby promoted; the clients go on on the new primary,
/// and the outage runs from the first failure to the first commit there.
#[test]
fn a_failover_to_a_promoted_standby_is_ridden_through() {
    let _alone = alone();
    let mut options = logged();
    options
        .config
        .push(("track_commit_timestamp".into(), "on".into()));
    let primary = Cluster::start(options).unwrap();
    create_table(&primary);
    let standby = primary.start_standby().unwrap();
    let conninfo = format!(
        "host={},{} port={},{} user=postgres dbname=postgres target_session_attrs=read-write",
        primary.socket_dir().display(),
        standby.socket_dir().display(),
        primary.port(),
        standby.port()
    );
    let dir = tempfile::tempdir().unwrap();
    let (child, watch) = start_run(dir.path(), &["-T", "10", &conninfo], |c| {
        support::aim(c, &primary, "postgres")
    });
    watch.wait_for("progress: 3.0 s", Duration::from_secs(60));
    primary.stop_immediate().unwrap();
    let down = logged_at(&primary.server_log(), "received immediate shutdown request");
    standby.promote().unwrap();
    let (code, stdout, stderr, run) = end_run(child, watch, dir.path());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let ready = logged_at(
        &standby.server_log(),
        "database system is ready to accept connections",
    );
    // The first commit on the new primary, by its own clock (commit timestamps on):
    // the old primary's last ones replicated too, all before its shutdown, long before
    // the standby's promotion.
    let after = (down + ready) / 2;
    let first_commit: i64 = standby
        .psql(
            "postgres",
            &format!(
                "SELECT floor(extract(epoch FROM min(pg_xact_commit_timestamp(xmin))) * 1000)::bigint \
                 FROM t WHERE pg_xact_commit_timestamp(xmin) > to_timestamp({after} / 1000.0)"
            ),
        )
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let (first_failure, first_success, _) = the_outage(&run);
    eprintln!(
        "primary: shutdown {down}; standby: promoted, ready {ready}, first commit \
         {first_commit}; report: first failure {first_failure}, first success after \
         {first_success} (Unix ms)"
    );
    assert!((first_failure - down).abs() <= START_SLACK_MS, "{stdout}");
    // The first success is the reply to a commit: the first one, or one just after.
    assert!(
        first_success >= first_commit && first_success <= first_commit + 100,
        "first commit {first_commit}, first success after {first_success}:\n{stdout}"
    );
    // Every client's last success committed on the new primary.
    let log = logged_transactions(dir.path());
    let on_standby = rows(&standby);
    for client in 0..8 {
        let last = log
            .iter()
            .filter(|((c, _), f)| *c == client && f[2] != "failed")
            .map(|((_, n), _)| *n)
            .max()
            .unwrap();
        assert!(
            on_standby
                .lines()
                .any(|l| l.trim() == format!("{client}|{last}")),
            "client {client}'s last success ({last}) is not on the new primary"
        );
    }
}

/// pgbouncer, as Debian packages it.
fn pgbouncer() -> Option<PathBuf> {
    ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// pgbouncer in front of `cluster`, on a socket in `dir`, logging in UTC.
struct Bouncer {
    program: PathBuf,
    dir: PathBuf,
    port: u16,
}

impl Bouncer {
    fn new(program: PathBuf, dir: &Path, cluster: &Cluster) -> Bouncer {
        let port = cluster.port() + 1;
        let ini = format!(
            "[databases]\npostgres = host={} port={} user=postgres\n\n[pgbouncer]\n\
             listen_addr =\nlisten_port = {port}\nunix_socket_dir = {d}\nauth_type = trust\n\
             auth_file = {d}/users.txt\npool_mode = session\nmax_client_conn = 100\n\
             default_pool_size = 20\nlogfile = {d}/pgbouncer.log\npidfile = {d}/pgbouncer.pid\n",
            cluster.socket_dir().display(),
            cluster.port(),
            d = dir.display()
        );
        std::fs::write(dir.join("pgbouncer.ini"), ini).unwrap();
        std::fs::write(dir.join("users.txt"), "\"postgres\" \"\"\n").unwrap();
        // pgbouncer refuses to run as root: as postgres, as the cluster does.
        let _ = Command::new("chown")
            .args(["-R", "postgres:"])
            .arg(dir)
            .status();
        Bouncer {
            program,
            dir: dir.to_path_buf(),
            port,
        }
    }

    /// Starts it in the background (`-d`) and waits for its socket.
    fn start(&self) {
        let _ = std::fs::remove_file(self.socket());
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&self.program);
            c
        } else {
            Command::new(&self.program)
        };
        let status = cmd
            .env("TZ", "UTC")
            .arg("-d")
            .arg(self.dir.join("pgbouncer.ini"))
            .status()
            .unwrap();
        assert!(status.success(), "pgbouncer: {}", self.log());
        for _ in 0..200 {
            if self.socket().exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("pgbouncer did not start: {}", self.log());
    }

    /// Stops it at once (SIGTERM), waiting until it is gone.
    fn kill(&self) {
        let pid: i32 = std::fs::read_to_string(self.dir.join("pgbouncer.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let _ = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status();
        while Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn socket(&self) -> PathBuf {
        self.dir.join(format!(".s.PGSQL.{}", self.port))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        if self.dir.join("pgbouncer.pid").exists() {
            self.kill();
        }
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// pgbouncer in front of the server, restarted mid-run: the clients connect to it
/// again, and the outage is the pooler's, as it logged it.
#[test]
fn a_pooler_restarted_in_front_of_the_server_is_ridden_through() {
    let Some(program) = pgbouncer() else {
        return support::skip("pgbouncer is not installed (Debian's package pgbouncer)");
    };
    let _alone = alone();
    let cluster = Cluster::start(logged()).unwrap();
    create_table(&cluster);
    let pool_dir = tempfile::tempdir().unwrap();
    let bouncer = Bouncer::new(program, pool_dir.path(), &cluster);
    bouncer.start();
    let dir = tempfile::tempdir().unwrap();
    let host = format!("-h{}", pool_dir.path().display());
    let port = format!("-p{}", bouncer.port);
    let (child, watch) = start_run(dir.path(), &["-T", "10", &host, &port], |c| {
        support::aim(c, &cluster, "postgres")
    });
    watch.wait_for("progress: 3.0 s", Duration::from_secs(60));
    bouncer.kill();
    std::thread::sleep(Duration::from_millis(300));
    bouncer.start();
    let (code, stdout, stderr, run) = end_run(child, watch, dir.path());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let log = bouncer.log();
    let down = logged_at(&log, "got SIGTERM");
    let up = logged_at(&log, "process up");
    let (first_failure, first_success, _) = the_outage(&run);
    eprintln!(
        "pgbouncer: SIGTERM {down}, up {up}; report: first failure {first_failure}, \
         first success after {first_success} (Unix ms)"
    );
    assert!(
        (first_failure - down).abs() <= START_SLACK_MS,
        "{stdout}\n{log}"
    );
    assert!(
        first_success >= up - 2 && first_success <= up + END_SLACK_MS,
        "{stdout}\n{log}"
    );
    let in_doubt = rows_match_the_log(&rows(&cluster), &logged_transactions(dir.path()), &run);
    eprintln!("failed transactions whose commit went through: {in_doubt}");
}

/// Under `-R` the schedule goes on through the outage: the transactions due in it run
/// once the server is back, and their latency (from their slot) holds the wait.
#[test]
fn under_a_rate_the_transactions_due_in_the_outage_carry_it() {
    let _alone = alone();
    let cluster = Cluster::start(logged()).unwrap();
    create_table(&cluster);
    let dir = tempfile::tempdir().unwrap();
    let (child, watch) = start_run(dir.path(), &["-T", "8", "-R", "200"], |c| {
        support::aim(c, &cluster, "postgres")
    });
    watch.wait_for("progress: 3.0 s", Duration::from_secs(60));
    cluster.stop_immediate().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    cluster.restart().unwrap();
    let (code, stdout, stderr, run) = end_run(child, watch, dir.path());
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let (first_failure, first_success, _) = the_outage(&run);
    // -l under -R: client, number, latency µs, script, end (s, µs), lag µs.
    let due_in_outage: Vec<(i64, i64)> = logged_transactions(dir.path())
        .values()
        .filter(|f| f[2] != "failed")
        .map(|f| {
            let end_ms = f[4].parse::<i64>().unwrap() * 1000 + f[5].parse::<i64>().unwrap() / 1000;
            let latency_ms = f[2].parse::<i64>().unwrap() / 1000;
            (end_ms - latency_ms, latency_ms)
        })
        .filter(|(due, _)| *due > first_failure && *due < first_success)
        .collect();
    let outage = first_success - first_failure;
    assert!(outage >= 400, "the server was down 500 ms: {outage} ms");
    // 200 per second for the outage's length were due in it.
    assert!(
        due_in_outage.len() as i64 >= outage / 10,
        "{} transactions due in a {outage} ms outage",
        due_in_outage.len()
    );
    for (due, latency) in &due_in_outage {
        assert!(
            latency + 1 >= first_success - due,
            "due at {due}, latency {latency} ms: it ran before the server was back"
        );
    }
}
