//! `--export-json` and `--export-html` on real runs: the file validates against
//! docs/results.schema.json, `pgbench-report show` prints the run's stdout (banner and
//! report) byte for byte from it, the per-second series adds up to the report, and the
//! page is written; a run stopped by Ctrl-C, after its warm-up and in it, says so in
//! its file, and `show`, `check` and `compare` act on it; a FIFO's reader gets the
//! file, and a signal ends a wait for one.
//! Default output is unchanged (the extras add nothing to stdout).

use crate::support::{fresh_db, script_file};
use std::process::Stdio;
use std::time::{Duration, Instant};

pub fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/results.schema.json"
    ))
    .unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft202012::new(&schema).unwrap()
}

#[test]
fn every_mode_exports_a_valid_file_whose_report_shows_byte_for_byte() {
    let db = fresh_db("export_modes");
    db.init(1);
    let dir = tempfile::tempdir().unwrap();
    let s1 = script_file(&dir, "a.sql", "\\set aid random(1, 1000)\nSELECT :aid;\n");
    let s2 = script_file(&dir, "b.sql", "SELECT 2;\n");
    let modes: Vec<Vec<&str>> = vec![
        vec!["-t", "50", "-c", "2"],
        vec!["-T", "2", "-c", "2", "-j", "2", "-P", "1"],
        vec!["-T", "2", "-R", "200", "-L", "50", "-c", "2"],
        vec!["-T", "2", "--max-tries=3", "-c", "2", "-S"],
        vec![
            "-t",
            "40",
            "-r",
            "-f",
            &s1,
            "-f",
            &s2,
            "--latency-percentiles",
        ],
    ];
    let validator = schema();
    let report = env!("CARGO_BIN_EXE_pgbench-report");
    for (i, args) in modes.iter().enumerate() {
        let json = dir.path().join(format!("run{i}.json"));
        let html = dir.path().join(format!("run{i}.html"));
        let out = db
            .ours()
            .args(["-n", "--random-seed=42"])
            .args(args)
            .arg(format!("--export-json={}", json.display()))
            .arg(format!("--export-html={}", html.display()))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&json).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{args:?}: {errors:?}");
        let shown = std::process::Command::new(report)
            .arg("show")
            .arg(&json)
            .output()
            .unwrap();
        // The whole stdout, the version banner included.
        assert!(
            stdout.starts_with("pgbench (15.20 (pgbench-rs "),
            "{stdout}"
        );
        assert_eq!(String::from_utf8_lossy(&shown.stdout), stdout, "{args:?}");
        // The series counts every transaction the report does.
        let run = &value["run"];
        let per_second: i64 = run["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["cnt"].as_i64().unwrap())
            .sum();
        assert_eq!(
            per_second,
            run["total"]["cnt"].as_i64().unwrap(),
            "{args:?}"
        );
        assert!(
            value["server_settings"]["shared_buffers"].is_string(),
            "{args:?}"
        );
        assert_eq!(value["random_seed"], 42, "{args:?}");
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(
            page.starts_with("<!DOCTYPE html>") || page.starts_with("<!doctype html>"),
            "{args:?}"
        );
        assert!(
            !page.contains("http://") && !page.contains("https://cdn"),
            "{args:?}"
        );
    }
}

#[test]
fn without_export_options_nothing_is_written_and_stdout_is_unchanged() {
    let db = fresh_db("export_none");
    let dir = tempfile::tempdir().unwrap();
    let s = script_file(&dir, "one.sql", "SELECT 1;\n");
    let json = dir.path().join("r.json");
    let plain = db
        .ours()
        .args(["-n", "-t", "5", "-f", &s])
        .output()
        .unwrap();
    let exported = db
        .ours()
        .args(["-n", "-t", "5", "-f", &s])
        .arg(format!("--export-json={}", json.display()))
        .output()
        .unwrap();
    let lines =
        |o: &std::process::Output| crate::support::normalize(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(lines(&plain), lines(&exported));
    assert!(json.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "only the script and the file"
    );
}

/// A device node like /dev/null or /dev/full, made in `dir` (never the system's).
fn device(dir: &tempfile::TempDir, name: &str, minor: &str) -> Option<std::path::PathBuf> {
    let path = dir.path().join(name);
    let made = std::process::Command::new("mknod")
        .arg(&path)
        .args(["c", "1", minor])
        .status()
        .is_ok_and(|s| s.success());
    if made {
        return Some(path);
    }
    crate::support::skip("mknod needs root");
    None
}

#[test]
fn a_results_file_that_cannot_be_written_after_the_run_is_an_error_after_the_report() {
    let db = fresh_db("export_unwritable");
    let dir = tempfile::tempdir().unwrap();
    let s = script_file(&dir, "one.sql", "SELECT 1;\n");
    let Some(full) = device(&dir, "full", "7") else {
        return;
    };
    let out = db
        .ours()
        .args(["-n", "-t", "5", "-f", &s])
        .arg(format!("--export-json={}", full.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\ntps = "));
    assert!(
        stderr.contains(&format!(
            "could not write results file \"{}\": No space left on device",
            full.display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_bad_destination_stops_the_run_before_it_connects() {
    // No server is asked: the socket directory does not exist.
    for option in ["--export-json", "--export-html"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pgbench-rs"))
            .args(["-h", "/nonexistent/socket/dir", "-n", "-t", "5"])
            .arg(format!("{option}=/nonexistent/dir/r.json"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(
            stderr,
            "pgbench-rs: error: could not open results file \"/nonexistent/dir/r.json\": No such file or directory\n"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn devices_and_standard_output_are_written_in_place() {
    let db = fresh_db("export_in_place");
    let dir = tempfile::tempdir().unwrap();
    let s = script_file(&dir, "one.sql", "SELECT 1;\n");
    // A device stays one (as root, a rename would turn it into a JSON file).
    if let Some(null) = device(&dir, "null", "3") {
        let out = db
            .ours()
            .args(["-n", "-t", "5", "-f", &s])
            .arg(format!("--export-json={}", null.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
        assert!(std::os::unix::fs::FileTypeExt::is_char_device(&kind));
    }
    // `--export-json=/dev/stdout | jq`: the file follows the report on the pipe.
    let piped = db
        .ours()
        .args(["-n", "-t", "5", "-f", &s, "--export-json=/dev/stdout"])
        .output()
        .unwrap();
    assert!(piped.status.success(), "{piped:?}");
    let stdout = String::from_utf8_lossy(&piped.stdout);
    let (report, json) = stdout.split_once("\n{").unwrap();
    assert!(report.contains("\ntps = "), "{stdout}");
    let doc: serde_json::Value = serde_json::from_str(&format!("{{{json}")).unwrap();
    assert!(doc["summary"].is_object(), "{doc}");
    // Standard output redirected to a file: the report stays, the file follows it.
    let out_path = dir.path().join("out.txt");
    let status = db
        .ours()
        .args(["-n", "-t", "5", "-f", &s, "--export-json=/dev/stdout"])
        .stdout(std::fs::File::create(&out_path).unwrap())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(text.contains("\ntps = ") && text.contains("\n{"), "{text}");
}

/// #22: the partial last second (the transactions still running at `-T`'s deadline,
/// a few ms) was drawn as a whole second, the page's tps falling to about 0 at the end.
/// Seen in headless Chromium: a `-T 3` run's tps chart has 3 seconds, ending at 3 s,
/// the last not far below the others.
#[test]
fn the_page_draws_no_partial_last_second() {
    let db = fresh_db("export_last_second");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "one.sql", "SELECT 1;\n");
    let page = dir.path().join("run.html");
    let out = db
        .ours()
        .args(["-n", "-T", "3", "-c", "2", "-j", "1", "-f", &script])
        .arg(format!("--export-html={}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // #22: a single run's series were each labelled with the whole command line; the
    // page's name labels them, the command line is the run's row's tooltip.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<title>pgbench results: run</title>"));
    assert!(
        html.contains(" -T 3 -c 2 -j 1 -f "),
        "the command line, as a tooltip"
    );
    let Some(c) = crate::support::browser::check_page(&page, &dir.path().join("run.png")) else {
        return;
    };
    let (_, data) = c.data.iter().find(|(id, _)| id == "chart-tps").unwrap();
    let x: Vec<f64> = data[0].iter().map(|v| v.unwrap()).collect();
    let tps: Vec<f64> = data[1].iter().map(|v| v.unwrap()).collect();
    assert_eq!(x, [1.0, 2.0, 3.0], "{tps:?}");
    let mut earlier = tps[..2].to_vec();
    earlier.sort_by(f64::total_cmp);
    assert!(
        tps[2] > earlier[0] / 4.0,
        "the last second drawn at {tps:?}"
    );
}

/// `pgbench-report ARGS`.
fn report_tool(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
        .args(args)
        .output()
        .unwrap()
}

/// A results file, checked against docs/results.schema.json.
fn valid_doc(path: &std::path::Path) -> serde_json::Value {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let errors: Vec<String> = schema().iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    doc
}

fn warning_codes(doc: &serde_json::Value) -> Vec<&str> {
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect()
}

/// `pgbench-rs ARGS` stopped by SIGINT once its stderr has a line with `after`:
/// its output and stderr.
fn interrupted_after(
    db: &crate::support::Db,
    args: &[&str],
    after: &str,
) -> (std::process::Output, String) {
    let mut child = db
        .ours()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let watch = crate::support::StderrWatch::new(&mut child);
    watch.wait_for(after, std::time::Duration::from_secs(60));
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    (out, watch.finish())
}

/// #33: after Ctrl-C at 12 s of `-T 60` the results file kept `-T`'s 60 s and said
/// nothing else: `show` printed `duration: 60 s`, `check` gave no warning and
/// `compare` set the run beside a whole one without a word. Now the file says how the
/// run ended, `show` prints the line the run printed after its report (the time it
/// ran), `check` warns and fails it, and `compare` says what it compares.
#[test]
fn an_interrupted_runs_file_says_so_and_the_report_tools_act_on_it() {
    let db = fresh_db("interrupt_export");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "one.sql", "SELECT 1;\n");
    let cut = dir.path().join("cut.json");
    let export = format!("--export-json={}", cut.display());
    let args = [
        "-n", "-c", "2", "-T", "60", "-P", "1", "-f", &script, &export,
    ];
    let (out, stderr) = interrupted_after(&db, &args, "progress: ");
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("duration: 60 s\n"), "{stdout}");
    let note = stderr
        .lines()
        .find_map(|l| l.strip_prefix("pgbench-rs: warning: "))
        .unwrap_or_else(|| panic!("no warning in {stderr}"));
    assert!(
        note.starts_with("run interrupted by SIGINT; the results above cover the "),
        "{note}"
    );

    let doc = valid_doc(&cut);
    let (run, ended) = (&doc["run"], &doc["run"]["ended"]);
    assert_eq!(
        (&ended["how"], &ended["signal"], &ended["during_warmup"]),
        (&"interrupted".into(), &"SIGINT".into(), &false.into()),
        "{ended}"
    );
    let at_s = ended["at_s"].as_f64().unwrap();
    let measured_s = run["bench_duration_us"].as_f64().unwrap() / 1e6;
    assert!(at_s > 0.0 && at_s < 60.0 && measured_s < 60.0, "{ended}");
    assert!(
        note.contains(&format!(" cover the {measured_s:.1} s it ran; ")),
        "{note}"
    );
    assert_eq!(warning_codes(&doc)[0], "interrupted", "{}", doc["warnings"]);

    // show: the run's stdout, then the line it printed after it.
    let shown = report_tool(&["show", cut.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&shown.stdout),
        format!("{stdout}warning: {note}\n")
    );
    // check: warned, and failed under --fail-if-warnings.
    let checked = report_tool(&["check", "--fail-if-warnings", cut.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(2), "{text}");
    assert!(
        text.contains(&format!(
            "  warning: interrupted: the run was interrupted by SIGINT after {measured_s:.1} s of its -T 60, "
        )),
        "{text}"
    );
    // compare, beside a whole run of 5 s: both things said.
    let whole = dir.path().join("whole.json");
    let ran = db
        .ours()
        .args(["-n", "-c", "2", "-T", "5", "-f", &script])
        .arg(format!("--export-json={}", whole.display()))
        .output()
        .unwrap();
    assert!(ran.status.success());
    assert_eq!(valid_doc(&whole)["run"]["ended"]["how"], "completed");
    let compared = report_tool(&["compare", whole.to_str().unwrap(), cut.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&compared.stdout);
    assert_eq!(compared.status.code(), Some(0), "{said}");
    assert!(
        said.contains(
            "\nwarning: B: cut.json: interrupted: the run was interrupted by SIGINT after "
        ),
        "{said}"
    );
    let whole_s = valid_doc(&whole)["run"]["bench_duration_us"]
        .as_f64()
        .unwrap()
        / 1e6;
    assert!(
        said.contains(&format!(
            "\nwarning: the runs differ in length (A {whole_s:.1} s; B {measured_s:.1} s)"
        )),
        "{said}"
    );
}

/// #38: Ctrl-C in the warm-up padded the warm-up's series with seconds that never
/// ran, left no mark of the interruption in the file, and `check --fail-if-warnings`
/// said "no warnings" for a file of 0 measured transactions.
#[test]
fn ctrl_c_in_the_warm_up_leaves_a_file_that_says_nothing_was_measured() {
    let db = fresh_db("interrupt_warmup");
    let dir = tempfile::tempdir().unwrap();
    let script = script_file(&dir, "one.sql", "SELECT 1;\n");
    let file = dir.path().join("warm.json");
    let export = format!("--export-json={}", file.display());
    let args = [
        "-n",
        "-c",
        "2",
        "-T",
        "5",
        "--warmup=60",
        "-P",
        "1",
        "-f",
        &script,
        &export,
    ];
    let (out, stderr) = interrupted_after(&db, &args, "warm-up progress: ");
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains(" s into its 60 s warm-up, before anything was measured; "),
        "{stderr}"
    );
    let doc = valid_doc(&file);
    let run = &doc["run"];
    let ended = &run["ended"];
    assert_eq!(
        (&ended["how"], &ended["during_warmup"]),
        (&"interrupted".into(), &true.into()),
        "{ended}"
    );
    assert_eq!(run["bench_duration_us"], 0.0);
    assert_eq!(run["total"]["cnt"], 0);
    assert_eq!(run["series"].as_array().unwrap().len(), 0);
    // The warm-up's seconds are those it ran, not its 60.
    let at_s = ended["at_s"].as_f64().unwrap();
    let warm = run["warmup"]["series"].as_array().unwrap();
    assert!(
        !warm.is_empty() && (warm.len() as f64) <= at_s.ceil() + 1.0,
        "{} seconds for a stop at {at_s} s",
        warm.len()
    );
    assert!(run["warmup"]["total"]["cnt"].as_i64().unwrap() > 0);
    assert_eq!(doc["started_at"], doc["ended_at"]);
    assert_eq!(warning_codes(&doc), ["interrupted", "no_transactions"]);
    let checked = report_tool(&["check", "--fail-if-warnings", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(2), "{text}");
    assert!(
        text.contains(
            "  warning: no_transactions: the measured part counted no successful transaction"
        ),
        "{text}"
    );
}

/// A FIFO made in `dir`.
fn mkfifo(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let fifo = dir.path().join("results.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    fifo
}

/// A reader of `fifo` there from now on (opened without waiting for a writer, as a
/// `cat` blocked in its open would be there), read on a thread of its own until
/// end-of-file: what a writer wrote, or nothing when a writer came and went without
/// writing. Gives up after `limit`.
fn fifo_reader(
    fifo: &std::path::Path,
    limit: Duration,
) -> std::thread::JoinHandle<Result<Vec<u8>, String>> {
    use mio::unix::pipe::Receiver;
    use mio::{Events, Interest, Poll, Token};
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .unwrap();
    let mut rx = Receiver::from(std::os::fd::OwnedFd::from(file));
    std::thread::spawn(move || {
        let mut poll = Poll::new().unwrap();
        poll.registry()
            .register(&mut rx, Token(0), Interest::READABLE)
            .unwrap();
        let (mut events, mut got) = (Events::with_capacity(4), Vec::new());
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("no end-of-file after {limit:?}"));
            }
            poll.poll(&mut events, Some(left)).unwrap();
            let mut buf = [0u8; 65536];
            loop {
                match rx.read(&mut buf) {
                    Ok(0) => return Ok(got),
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e.to_string()),
                }
            }
        }
    })
}

/// Waits for `child` for up to `limit`; kills it and fails the test when it has not
/// ended by then.
fn ended_within(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// #38: the check before connecting opened and closed `--export-json`'s FIFO, so the
/// reader waiting on it got end-of-file with nothing and left, and the write after
/// the report then waited for ever for another. The reader there before the run now
/// gets the whole file; one that comes only after the report (when pgbench-rs says it
/// waits for one) gets it too.
#[test]
fn a_fifo_export_reaches_a_reader_there_before_the_run_or_after_it() {
    let db = fresh_db("export_fifo");
    let dir = tempfile::tempdir().unwrap();
    let s = script_file(&dir, "one.sql", "SELECT 1;\n");
    let fifo = mkfifo(&dir);
    let run = || {
        db.ours()
            .args(["-n", "-t", "20", "-f", &s])
            .arg(format!("--export-json={}", fifo.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let limit = Duration::from_secs(120);
    let reader = fifo_reader(&fifo, limit);
    let out = ended_within(run(), limit);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let got = reader.join().unwrap().unwrap();
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&got)
        .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&got)));
    assert_eq!(doc["summary"]["transactions"], 20, "{doc}");
    assert!(!stderr.contains("waiting for a reader"), "{stderr}");
    // No reader yet at the end of the run: pgbench-rs says it waits, and a reader
    // that comes then gets the file.
    let mut child = run();
    let notice = first_line_with(child.stderr.take().unwrap(), "waiting for a reader", limit);
    assert_eq!(
        notice,
        format!(
            "pgbench-rs: waiting for a reader of FIFO \"{}\" to write the results file (SIGINT or SIGTERM gives up)",
            fifo.display()
        )
    );
    let got = std::fs::read(&fifo).unwrap();
    let out = ended_within(child, limit);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&got).unwrap();
    assert_eq!(doc["summary"]["transactions"], 20, "{doc}");
}

/// The first line of `stream` that contains `text` (the rest is read and dropped on
/// a thread of its own, so the writer never blocks on it); fails after `limit`.
fn first_line_with(
    stream: impl std::io::Read + Send + 'static,
    text: &str,
    limit: Duration,
) -> String {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    let text = text.to_string();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(stream)
            .lines()
            .map_while(Result::ok)
        {
            if line.contains(&text) {
                let _ = tx.send(Ok(line.clone()));
            }
            seen.push(line);
        }
        let _ = tx.send(Err(seen.join("\n")));
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(line)) => line,
        Ok(Err(seen)) => panic!("no line with the text in:\n{seen}"),
        Err(_) => panic!("no line with the text after {limit:?}"),
    }
}

/// #38: with no reader ever, the write after the report waited in open() for ever and
/// SIGTERM (`timeout`'s) changed nothing. Now SIGTERM ends the program: the results
/// file is named as not written, the page of `--export-html` is still written, and the
/// exit status is SIGTERM's.
#[test]
fn sigterm_ends_a_fifo_export_no_reader_opens() {
    let db = fresh_db("export_fifo_term");
    let dir = tempfile::tempdir().unwrap();
    let s = script_file(&dir, "one.sql", "SELECT 1;\n");
    let fifo = mkfifo(&dir);
    let page = dir.path().join("page.html");
    let mut child = db
        .ours()
        .args(["-n", "-t", "20", "-f", &s])
        .arg(format!("--export-json={}", fifo.display()))
        .arg(format!("--export-html={}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let limit = Duration::from_secs(120);
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let lines = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = Vec::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.contains("waiting for a reader") {
                let _ = tx.send(());
            }
            all.push(line);
        }
        all.join("\n")
    });
    rx.recv_timeout(limit)
        .expect("pgbench-rs never said it waits for a reader");
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = ended_within(child, Duration::from_secs(60));
    let stderr = lines.join().unwrap();
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(
        stderr.ends_with(&format!(
            "pgbench-rs: error: results file \"{}\" not written: SIGTERM before a reader opened the FIFO",
            fifo.display()
        )),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("\ntps = "));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<html"), "{}", &html[..200.min(html.len())]);
}
