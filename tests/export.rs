//! `--export-json` and `--export-html` on real runs: the file validates against
//! docs/results.schema.json, `pgbench-report show` prints the run's stdout (banner and
//! report) byte for byte from it, the per-second series adds up to the report, and the
//! page is written; a run stopped by Ctrl-C, after its warm-up and in it, says so in
//! its file, and `show`, `check` and `compare` act on it.
//! Default output is unchanged (the extras add nothing to stdout).

use crate::support::{fresh_db, script_file};

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
fn issue_22_the_page_draws_no_partial_last_second() {
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
    let Some(c) = crate::report::check_page(&page, &dir.path().join("run.png")) else {
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
fn issue_33_an_interrupted_runs_file_says_so_and_the_report_tools_act_on_it() {
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
fn issue_38_ctrl_c_in_the_warm_up_leaves_a_file_that_says_nothing_was_measured() {
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
