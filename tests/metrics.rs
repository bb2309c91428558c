//! `--metrics-listen` on real runs: a real Prometheus (Debian's `prometheus`) scrapes a
//! 15 s run every second and its query API gives the report's count, as a counter and
//! as the latency histogram's count; `promtool check metrics` accepts the endpoint's
//! text; two `--worker` processes add up to the merged report; the linger after the
//! report and Ctrl-C ending it; the stage gauges following `--rate-stages` and
//! `--client-stages`; a port in use refused before connecting. Without
//! prometheus the tests that need it fail under CI=true and say "skipped" otherwise.
//! Peers that misbehave are [`hostile`]'s; loads (`-i`) are [`load`]'s.

mod hostile;
mod load;

use crate::support::{fresh_db, run, script_file, Db, StderrWatch};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nobody listens on now (the kernel's pick, released for the test to use).
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `GET path` on a loopback port with `accept` as the Accept header: status and body,
/// or `None` when nothing answers.
fn get(port: u16, path: &str, accept: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(request.as_bytes()).ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let body = match head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        true => unchunk(body),
        false => body.to_string(),
    };
    Some((status, body))
}

/// A chunked body's data.
fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}

/// The endpoint's Prometheus text.
fn scrape(port: u16) -> Option<String> {
    match get(port, "/metrics", "text/plain")? {
        (200, body) => Some(body),
        (status, body) => panic!("status {status}: {body}"),
    }
}

/// The value of an unlabelled or fully labelled series in Prometheus text.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

fn processed(report: &str) -> i64 {
    report
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        // `-t` runs print `done/planned`.
        .and_then(|n| n.split('/').next()?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {report}"))
}

/// A tool from Debian's prometheus package; `None` (skip) outside CI without it.
fn tool(name: &str) -> Option<PathBuf> {
    let path = Path::new("/usr/bin").join(name);
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{name} is not installed (.ci/run installs Debian's prometheus)"
    );
    eprintln!("skipped: {name} is not installed (.ci/run installs Debian's prometheus)");
    None
}

/// A Prometheus of the test's own: loopback, a throwaway port and storage, scraping
/// the given endpoints every second.
struct Prometheus {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(binary: &Path, targets: &[u16]) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let targets: Vec<String> = targets.iter().map(|p| format!("'127.0.0.1:{p}'")).collect();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: pgbench\n    static_configs:\n      \
             - targets: [{}]\n",
            targets.join(", ")
        );
        std::fs::write(dir.path().join("prometheus.yml"), config).unwrap();
        let port = free_port();
        let child = Command::new(binary)
            .arg(format!(
                "--config.file={}",
                dir.path().join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("log")).unwrap())
            .spawn()
            .expect("start prometheus");
        let p = Prometheus {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while get(port, "/-/ready", "*/*").map(|(s, _)| s) != Some(200) {
            assert!(
                Instant::now() < deadline,
                "prometheus not ready: {}",
                p.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        p
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("log")).unwrap_or_default()
    }

    /// An instant query's single value.
    fn value(&self, query: &str) -> f64 {
        let path = format!("/api/v1/query?query={}", url_encode(query));
        let (status, body) = get(self.port, &path, "application/json").expect("query");
        assert_eq!(status, 200, "{body}");
        let doc: Value = serde_json::from_str(&body).unwrap();
        let result = &doc["data"]["result"];
        assert_eq!(result.as_array().map(Vec::len), Some(1), "{query}: {body}");
        result[0]["value"][1].as_str().unwrap().parse().unwrap()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `SELECT 1` with a little sleep, so that a debug build's run stays light.
fn script(dir: &tempfile::TempDir) -> String {
    script_file(dir, "select.sql", "SELECT 1;\n\\sleep 1 ms\n")
}

/// `promtool check metrics` finds nothing to say of `text`.
fn promtool_accepts(promtool: &Path, text: &str) {
    let mut check = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    check
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let checked = check.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&checked.stdout).into_owned()
        + &String::from_utf8_lossy(&checked.stderr);
    assert!(
        checked.status.success() && said.trim().is_empty(),
        "{said}\n{text}"
    );
}

fn spawn(db: &Db, dir: &Path, args: &[&str]) -> Child {
    db.ours()
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start pgbench-rs")
}

/// pgbench-rs running [`script`] with `-n -c 2` and the endpoint on `port`, plus `args`.
struct Metered {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

fn start_metered(test: &str, port: u16, args: &[&str]) -> Metered {
    let db = fresh_db(test);
    let dir = tempfile::tempdir().unwrap();
    let script = script(&dir);
    let listen = format!("--metrics-listen=127.0.0.1:{port}");
    let common = ["-n", "-c", "2", "-f", &script, &listen];
    let child = spawn(&db, dir.path(), &[&common[..], args].concat());
    Metered {
        child,
        port,
        _dir: dir,
    }
}

fn finish(child: Child) -> (i32, String, String) {
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// The endpoint's text once the run is finished (the report printed or about to be).
fn scrape_when_finished(port: u16) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "the run did not finish");
        match scrape(port) {
            Some(t) if sample(&t, "pgbench_phase{phase=\"finished\"}") == Some(1.0) => return t,
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// Ctrl-C to the child; its exit status and output, and how long it took to end.
fn interrupt(child: Child) -> ((i32, String, String), Duration) {
    let sent = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    assert!(kill.unwrap().success());
    let out = finish(child);
    (out, sent.elapsed())
}

#[test]
fn prometheus_scrapes_a_15_s_run_and_its_last_values_are_the_reports() {
    let (Some(prometheus), Some(promtool)) = (tool("prometheus"), tool("promtool")) else {
        return;
    };
    let port = free_port();
    let server = Prometheus::start(&prometheus, &[port]);
    let args = ["-j", "2", "-T", "15", "-P", "5", "--metrics-linger=4"];
    let Metered { child, _dir, .. } = start_metered("metrics_prometheus", port, &args);
    std::thread::sleep(Duration::from_secs(6));
    let text = scrape(port).expect("the endpoint answers during the run");
    assert_eq!(
        sample(&text, "pgbench_phase{phase=\"measured\"}"),
        Some(1.0),
        "{text}"
    );
    promtool_accepts(&promtool, &text);

    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
    let count = processed(&stdout) as f64;
    // Range selections skip the staleness markers written once the endpoint is gone.
    let last = |series: &str| server.value(&format!("last_over_time({series}[5m])"));
    assert_eq!(last("pgbench_transactions_total{script=\"1\"}"), count);
    assert_eq!(last("pgbench_latency_seconds_count{script=\"1\"}"), count);
    assert_eq!(
        last("pgbench_latency_seconds_bucket{script=\"1\",le=\"+Inf\"}"),
        count
    );
    assert_eq!(last("pgbench_phase{phase=\"finished\"}"), 1.0);
    assert_eq!(last("pgbench_progress_ratio"), 1.0);
    // Scraped all along, not only at the end.
    let scrapes = server.value("count_over_time(pgbench_transactions_total[5m])");
    assert!(scrapes >= 12.0, "{scrapes} scrapes");
    let p99 = server
        .value("histogram_quantile(0.99, last_over_time(pgbench_latency_seconds_bucket[5m]))");
    assert!(p99 > 0.001 && p99 < 1.0, "p99 {p99} s");
}

#[test]
fn two_workers_add_up_to_the_merged_report() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let db = fresh_db("metrics_workers");
    let tmp = tempfile::tempdir().unwrap();
    let script = script(&tmp);
    let ports = [free_port(), free_port()];
    let server = Prometheus::start(&prometheus, &ports);
    let workers: Vec<Child> = (0..2)
        .map(|i| {
            let listen = format!("--metrics-listen={}", ports[i]);
            let worker = format!("--worker={i}/2");
            let json = format!("--export-json=w{i}.json");
            let args = ["-n", "-c", "2", "-j", "2", "-T", "5", "--worker-timeout=30"];
            let more = ["-f", &script, &listen, "--metrics-linger=4", &worker, &json];
            spawn(&db, tmp.path(), &[&args[..], &more[..]].concat())
        })
        .collect();
    let mut counts = Vec::new();
    for w in workers {
        let (code, stdout, stderr) = finish(w);
        assert_eq!(code, 0, "{stderr}");
        counts.push(processed(&stdout));
    }
    let merged = run(Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .current_dir(tmp.path())
        .args(["merge", "w0.json", "w1.json", "-o", "merged.json"]));
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    let total = processed(&merged.stdout);
    assert_eq!(total, counts.iter().sum::<i64>());
    let query = "sum(last_over_time(pgbench_transactions_total[5m]))";
    assert_eq!(server.value(query), total as f64);
    for (i, &n) in counts.iter().enumerate() {
        let q = format!("last_over_time(pgbench_transactions_total{{worker=\"{i}\"}}[5m])");
        assert_eq!(server.value(&q), n as f64, "worker {i}");
    }
}

#[test]
fn the_final_values_linger_after_the_report_until_ctrl_c() {
    let args = ["-t", "50", "--metrics-linger=60"];
    let Metered { child, port, _dir } = start_metered("metrics_linger", free_port(), &args);
    let text = scrape_when_finished(port);
    // Lingering: the endpoint still answers a while after the report.
    std::thread::sleep(Duration::from_secs(1));
    let again = scrape(port).expect("still serving");
    assert_eq!(
        (get(port, "/", "*/*").map(|r| r.0)),
        Some(404),
        "only /metrics is served"
    );
    let ((code, stdout, stderr), took) = interrupt(child);
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_eq!(code, 0, "the run completed: {stderr}");
    assert_eq!(processed(&stdout), 100);
    for t in [&text, &again] {
        assert_eq!(
            sample(t, "pgbench_transactions_total{script=\"1\"}"),
            Some(100.0)
        );
        assert_eq!(sample(t, "pgbench_clients_running"), Some(0.0));
    }
    let om = get(port, "/metrics", "application/openmetrics-text");
    assert_eq!(om, None, "nothing listens after the linger");
}

/// #38: Ctrl-C after the report, while the results file waits for a reader of its
/// FIFO: the write gives up, and the linger, not begun yet, does not begin. It ran its
/// whole time, the signal lost.
#[test]
fn ctrl_c_between_the_report_and_the_linger_ends_the_linger() {
    let args = ["-t", "50", "--metrics-linger=600", "--export-json=r.json"];
    let db = fresh_db("metrics_linger_race");
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("r.json");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let script = script(&dir);
    let listen = format!("--metrics-listen=127.0.0.1:{}", free_port());
    let common = ["-n", "-c", "2", "-f", &script, &listen];
    let mut child = spawn(&db, dir.path(), &[&common[..], &args].concat());
    let watch = StderrWatch::new(&mut child);
    // The report is out; the results file waits for a reader that never comes.
    watch.wait_for("waiting for a reader of FIFO", Duration::from_secs(60));
    let ((code, stdout, _), took) = interrupt(child);
    let stderr = watch.finish();
    assert!(took < Duration::from_secs(300), "{took:?}");
    assert!(stderr.contains("not written: SIGINT"), "{stderr}");
    assert_eq!(code, 130, "{stderr}");
    assert_eq!(processed(&stdout), 100);
}

#[test]
fn ctrl_c_during_the_run_prints_the_report_and_ends_without_the_linger() {
    let args = ["-T", "60", "--metrics-linger=60"];
    let Metered { child, port, _dir } = start_metered("metrics_interrupt", free_port(), &args);
    std::thread::sleep(Duration::from_secs(2));
    let text = scrape(port).expect("serving during the run");
    assert_eq!(
        sample(&text, "pgbench_clients_running"),
        Some(2.0),
        "{text}"
    );
    let ((code, stdout, stderr), took) = interrupt(child);
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(code, 130, "{stderr}");
    assert!(processed(&stdout) > 0, "{stdout}");
    assert_eq!(scrape(port), None, "no linger after Ctrl-C");
}

#[test]
fn a_warm_up_is_a_phase_of_its_own_counted_apart() {
    let args = ["-T", "2", "--warmup=2", "--metrics-linger=30"];
    let Metered { child, port, _dir } = start_metered("metrics_warmup", free_port(), &args);
    std::thread::sleep(Duration::from_millis(1500));
    let warm = scrape(port).expect("serving in the warm-up");
    assert_eq!(
        sample(&warm, "pgbench_phase{phase=\"warmup\"}"),
        Some(1.0),
        "{warm}"
    );
    assert_eq!(
        sample(&warm, "pgbench_transactions_total{script=\"1\"}"),
        Some(0.0)
    );
    assert!(sample(&warm, "pgbench_warmup_transactions_total").unwrap() > 0.0);
    assert_eq!(sample(&warm, "pgbench_progress_ratio"), Some(0.0));
    let last = scrape_when_finished(port);
    let ((code, stdout, stderr), _) = interrupt(child);
    assert_eq!(code, 0, "{stderr}");
    let count = processed(&stdout) as f64;
    assert_eq!(
        sample(&last, "pgbench_transactions_total{script=\"1\"}"),
        Some(count)
    );
    assert_eq!(
        sample(&last, "pgbench_latency_seconds_count{script=\"1\"}"),
        Some(count)
    );
}

/// One scrape of a staged run in its measured part: the stage, the stage count, the
/// schedule's target (`target` names it) and the progress, all of one instant.
#[derive(Debug, Clone, Copy)]
struct StageScrape {
    stage: f64,
    stages: f64,
    target: f64,
    progress: f64,
}

fn stage_scrape(text: &str, target: &str) -> StageScrape {
    let get = |series| sample(text, series).unwrap_or_else(|| panic!("no {series} in\n{text}"));
    StageScrape {
        stage: get("pgbench_stage"),
        stages: get("pgbench_stages"),
        target: get(target),
        progress: get("pgbench_progress_ratio"),
    }
}

/// pgbench-rs running [`script`] with `args` (stages of 6 s in all) and no `-c` (the
/// client stages start from 1), scraped every 50 ms from the start to the end: the
/// measured part's scrapes, and the first one once it finished.
fn scrape_stages(test: &str, target: &str, args: &[&str]) -> (Vec<StageScrape>, StageScrape) {
    let db = fresh_db(test);
    let dir = tempfile::tempdir().unwrap();
    let script = script(&dir);
    let port = free_port();
    let listen = format!("--metrics-listen=127.0.0.1:{port}");
    let common = ["-n", "-f", &script, &listen, "--metrics-linger=60"];
    let child = spawn(&db, dir.path(), &[&common[..], args].concat());
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    let last = loop {
        assert!(
            Instant::now() < deadline,
            "the run did not finish: {seen:?}"
        );
        let Some(text) = scrape(port) else {
            // Not listening yet.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if sample(&text, "pgbench_phase{phase=\"finished\"}") == Some(1.0) {
            break stage_scrape(&text, target);
        }
        if sample(&text, "pgbench_phase{phase=\"measured\"}") == Some(1.0) {
            seen.push(stage_scrape(&text, target));
        } else {
            assert_eq!(
                sample(&text, "pgbench_stage"),
                None,
                "before the start: {text}"
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Lingering: Ctrl-C ends it, the run's exit status kept.
    let ((code, _, stderr), _) = interrupt(child);
    assert_eq!(code, 0, "{stderr}");
    (seen, last)
}

/// The stages the scrapes went through, in order, each once.
fn stages_seen(scrapes: &[StageScrape]) -> Vec<f64> {
    let mut stages: Vec<f64> = scrapes.iter().map(|s| s.stage).collect();
    stages.dedup();
    stages
}

/// The schedule at a scrape follows the stages: the stage and the rate are read at
/// the scrape's instant, the progress's too (both count from the start of the client
/// threads), so the rate is the ramp's at `6 s × progress` however late the scrape.
#[test]
fn the_stage_and_the_rate_follow_rate_stages() {
    let (seen, last) = scrape_stages(
        "metrics_rate_stages",
        "pgbench_stage_rate",
        &["-T", "6", "--rate-stages=3s:50,3s:200"],
    );
    assert!(seen.len() >= 10, "{seen:?}");
    assert_eq!(stages_seen(&seen), [1.0, 2.0], "{seen:?}");
    for s in &seen {
        assert_eq!(s.stages, 2.0);
        // From 0 (no -R) to 50 over 3 s, then to 200 over 3 s.
        let t = 6.0 * s.progress;
        let want = if t < 3.0 {
            50.0 * t / 3.0
        } else {
            50.0 + 150.0 * (t - 3.0) / 3.0
        };
        assert!(
            (s.target - want).abs() <= 2.0,
            "at {t:.3} s: {s:?}, wanted {want:.1}"
        );
        // A scrape within 50 ms of the boundary may see either stage.
        if (t - 3.0).abs() > 0.05 {
            assert_eq!(
                s.stage,
                if t < 3.0 { 1.0 } else { 2.0 },
                "at {t:.3} s: {s:?}"
            );
        }
    }
    assert!(
        seen.windows(2).all(|w| w[1].target >= w[0].target),
        "{seen:?}"
    );
    assert!(seen
        .iter()
        .any(|s| s.stage == 1.0 && s.target > 5.0 && s.target < 45.0));
    assert!(seen
        .iter()
        .any(|s| s.stage == 2.0 && s.target > 60.0 && s.target < 190.0));
    // The run's end stays: its last stage at the last target.
    assert_eq!(
        (last.stage, last.stages, last.target),
        (2.0, 2.0, 200.0),
        "{last:?}"
    );
}

/// The same for `--client-stages`: from 1 client up to 4 over 3 s, down to 1 over
/// the next 3; the clients active are whole, as the `-P` line has them.
#[test]
fn the_stage_and_the_clients_follow_client_stages() {
    let (seen, last) = scrape_stages(
        "metrics_client_stages",
        "pgbench_stage_clients",
        &["-T", "6", "--client-stages=3s:4,3s:1"],
    );
    assert!(seen.len() >= 10, "{seen:?}");
    assert_eq!(stages_seen(&seen), [1.0, 2.0], "{seen:?}");
    let count = |t: f64| {
        let v = if t < 3.0 {
            1.0 + 3.0 * t / 3.0
        } else {
            4.0 - 3.0 * (t - 3.0) / 3.0
        };
        (v + 1e-9).floor()
    };
    for s in &seen {
        assert_eq!(s.stages, 2.0);
        let t = 6.0 * s.progress;
        // Either side of a step within 50 ms.
        let near = [count(t - 0.05), count(t), count(t + 0.05)];
        assert!(
            near.contains(&s.target),
            "at {t:.3} s: {s:?}, wanted {near:?}"
        );
        if (t - 3.0).abs() > 0.05 {
            assert_eq!(
                s.stage,
                if t < 3.0 { 1.0 } else { 2.0 },
                "at {t:.3} s: {s:?}"
            );
        }
    }
    let targets: Vec<f64> = seen.iter().map(|s| s.target).collect();
    // 4 only about the instant between the stages.
    for n in [1.0, 2.0, 3.0] {
        assert!(targets.contains(&n), "no {n} clients in {targets:?}");
    }
    assert_eq!((last.stage, last.target), (2.0, 1.0), "{last:?}");
}

/// Without stages, nothing of them is served.
#[test]
fn a_run_without_stages_serves_no_stage() {
    let args = ["-t", "20", "--metrics-linger=1"];
    let Metered { child, port, _dir } = start_metered("metrics_no_stages", free_port(), &args);
    let text = scrape_when_finished(port);
    let (code, _, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
    assert!(!text.contains("pgbench_stage"), "{text}");
}

#[test]
fn a_port_in_use_is_an_error_before_connecting() {
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let tmp = tempfile::tempdir().unwrap();
    // No server there: the error comes before any connection is tried.
    let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs"))
        .env("PGHOST", tmp.path())
        .args(["-n", "-T", "1", &format!("--metrics-listen={port}")]));
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        format!(
            "pgbench-rs: error: could not listen for metrics on 127.0.0.1:{port}: \
             Address already in use\n"
        )
    );
    assert_eq!(out.stdout, "");
    // The same for a load.
    let out = run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs"))
        .env("PGHOST", tmp.path())
        .args(["-i", &format!("--metrics-listen={port}")]));
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        format!(
            "pgbench-rs: error: could not listen for metrics on 127.0.0.1:{port}: \
             Address already in use\n"
        )
    );
}

#[test]
fn bad_metrics_options_are_refused() {
    let ours = |args: &[&str]| run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs")).args(args));
    for (args, message) in [
        (
            &["--metrics-listen=host"][..],
            "pgbench-rs: error: invalid value \"host\" for option --metrics-listen\n",
        ),
        (
            &["--metrics-listen=0"],
            "pgbench-rs: error: invalid value \"0\" for option --metrics-listen\n",
        ),
        (
            &["--metrics-linger=5"],
            "pgbench-rs: error: --metrics-linger is allowed only under --metrics-listen\n",
        ),
        (
            &["--metrics-listen=9", "--metrics-linger=-1"],
            "pgbench-rs: error: --metrics-linger must be in range 0..2147483647\n",
        ),
        (
            &["-i", "--metrics-linger=5"],
            "pgbench-rs: error: --metrics-linger is allowed only under --metrics-listen\n",
        ),
        (
            &["-i", "--workload=tpcc", "--metrics-linger=5"],
            "pgbench-rs: error: --metrics-linger is allowed only under --metrics-listen\n",
        ),
    ] {
        let out = ours(args);
        assert_eq!((out.code, out.stderr.as_str()), (1, message), "{args:?}");
    }
}
