//! deploy/: the Kubernetes manifests pass the Kubernetes API schema
//! (kubernetes-validate, offline, with the schemas it ships), the Containerfile
//! passes hadolint, the Job is an Indexed Job of N workers as docs/distributed.md
//! describes, and collect.sh turns the workers' logs into a merged results file.
//! Under CI=true a missing validator fails the test; elsewhere it is skipped, saying
//! so (`.ci/run` installs both).

use pgbench_results::document::{RunMeta, WorkerInfo};
use pgbench_results::synthetic::{self, Spec};
use pgbench_results::ResultsFile;
use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFESTS: [&str; 5] = [
    "run-configmap.yaml",
    "scripts-configmap.yaml",
    "init-job.yaml",
    "load-job.yaml",
    "worker-job.yaml",
];

fn deploy(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(path)
}

/// The validator on PATH; `None` (skip) outside CI when it is not installed.
fn tool(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        crate::support::skip(&format!("{name} is not installed (.ci/run installs it)"));
    }
    found
}

fn output(cmd: &mut Command) -> (bool, String) {
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn the_manifests_pass_the_kubernetes_schema() {
    let Some(validate) = tool("kubernetes-validate") else {
        return;
    };
    for m in MANIFESTS {
        let (ok, text) = output(
            Command::new(&validate)
                .arg("--strict")
                .arg(deploy(&format!("kubernetes/{m}"))),
        );
        assert!(ok && text.contains("passed"), "{m}: {text}");
    }
    // The check can fail: a field of the wrong type, an unknown field. (The schema
    // has no enums: `completionMode`'s value is checked by the test below.)
    let dir = tempfile::tempdir().unwrap();
    let job = std::fs::read_to_string(deploy("kubernetes/worker-job.yaml")).unwrap();
    for broken in [
        job.replace("parallelism: 4", "parallelism: four"),
        job.replace("backoffLimit: 0", "backoffLimit: 0\n  retries: 3"),
    ] {
        let path = dir.path().join("broken.yaml");
        std::fs::write(&path, broken).unwrap();
        let (ok, text) = output(Command::new(&validate).arg("--strict").arg(&path));
        assert!(!ok, "{text}");
    }
}

#[test]
fn the_containerfile_passes_hadolint() {
    let Some(hadolint) = tool("hadolint") else {
        return;
    };
    let config = deploy("hadolint.yaml");
    let (ok, text) = output(
        Command::new(&hadolint)
            .arg("-c")
            .arg(&config)
            .arg(deploy("Containerfile")),
    );
    assert!(ok, "{text}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("Containerfile");
    std::fs::write(
        &path,
        "FROM debian:latest\nRUN cd /tmp && apt-get install curl\n",
    )
    .unwrap();
    let (ok, text) = output(Command::new(&hadolint).arg("-c").arg(&config).arg(&path));
    assert!(!ok && text.contains("DL3007"), "{text}");
}

#[test]
fn the_job_runs_n_indexed_workers_with_the_script_and_password_it_is_given() {
    let job = std::fs::read_to_string(deploy("kubernetes/worker-job.yaml")).unwrap();
    let run = std::fs::read_to_string(deploy("kubernetes/run-configmap.yaml")).unwrap();
    let workers = run
        .lines()
        .find_map(|l| l.trim().strip_prefix("WORKERS: "))
        .unwrap()
        .trim_matches('"');
    for line in [
        "completionMode: Indexed".to_string(),
        format!("completions: {workers}"),
        format!("parallelism: {workers}"),
        "pgbench-rs --worker=\"$(JOB_COMPLETION_INDEX)/$WORKERS\"".to_string(),
        "--export-json=\"$out\" -c \"$CLIENTS\" -j \"$CLIENTS\" -T \"$DURATION\"".to_string(),
        "--random-seed=\"$SEED\"".to_string(),
        "- name: PGPASSWORD".to_string(),
        "secretKeyRef:".to_string(),
        "name: pgbench-scripts".to_string(),
        "fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']".to_string(),
    ] {
        assert!(job.contains(&line), "worker-job.yaml lacks {line}");
    }
}

#[test]
fn the_load_job_runs_n_indexed_shards_that_resume() {
    let job = std::fs::read_to_string(deploy("kubernetes/load-job.yaml")).unwrap();
    let run = std::fs::read_to_string(deploy("kubernetes/run-configmap.yaml")).unwrap();
    let loaders = run
        .lines()
        .find_map(|l| l.trim().strip_prefix("LOADERS: "))
        .unwrap()
        .trim_matches('"');
    for line in [
        "completionMode: Indexed".to_string(),
        format!("completions: {loaders}"),
        format!("parallelism: {loaders}"),
        "--resume".to_string(),
        "--shard=\"$((JOB_COMPLETION_INDEX + 1))/$LOADERS\"".to_string(),
        "- name: PGPASSWORD".to_string(),
        "fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']".to_string(),
    ] {
        assert!(job.contains(&line), "load-job.yaml lacks {line}");
    }
}

/// A worker's file as `--worker=I/3` writes it (a simulated run).
fn worker_file(index: u32) -> String {
    let run = synthetic::run(&Spec::tpcb(u64::from(index) + 1, 3, 300.0, 1800.0));
    let mut meta = RunMeta {
        random_seed: 5,
        worker: Some(WorkerInfo {
            index,
            count: 3,
            run_id: "k8s".to_string(),
            start_unix_us: 1_764_583_200_000_000,
            first_client: 4 * index,
        }),
        ..RunMeta::default()
    };
    meta.options
        .insert("worker".into(), format!("{index}/3").into());
    ResultsFile::from_run(run, meta).to_json()
}

/// A kubectl that answers collect.sh's three questions from files: the Job's
/// completions, the pod of an index (when it has a log), and a pod's log.
const FAKE_KUBECTL: &str = r#"#!/usr/bin/env bash
case "$1 $2" in
  "get job") printf 3 ;;
  "get pods") i=${4##*=}; if [ -f "$FAKE/log-$i" ]; then printf "pod-$i"; fi ;;
  "logs pod-"*) cat "$FAKE/log-${2#pod-}" ;;
  *) echo "unexpected: $*" >&2; exit 1 ;;
esac
"#;

#[test]
fn collect_gathers_the_workers_files_from_their_logs_and_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    let kubectl = dir.path().join("kubectl");
    std::fs::write(&kubectl, FAKE_KUBECTL).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
    for i in 0..3 {
        let log = format!(
            "pgbench (15.20 (pgbench-rs 0.1.0))\nprogress: 10.0 s, 1.0 tps\n----- pgbench-rs results file of worker {i} -----\n{}----- end of pgbench-rs results file -----\n",
            worker_file(i)
        );
        std::fs::write(dir.path().join(format!("log-{i}")), log).unwrap();
    }
    let collect = |out: &Path| {
        let mut cmd = Command::new(deploy("kubernetes/collect.sh"));
        cmd.args(["pgbench-rs"])
            .arg(out)
            .env("FAKE", dir.path())
            .env("KUBECTL", &kubectl)
            .env("PGBENCH_REPORT", env!("CARGO_BIN_EXE_pgbench-report"));
        cmd.output().unwrap()
    };
    let out = collect(&dir.path().join("all"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("number of clients: 12\n"), "{stdout}");
    let merged = std::fs::read_to_string(dir.path().join("all/merged.json")).unwrap();
    let merged = ResultsFile::from_json(&merged).unwrap();
    let cnt: i64 = (0..3)
        .map(|i| {
            synthetic::run(&Spec::tpcb(i + 1, 3, 300.0, 1800.0))
                .total
                .counts
                .cnt
        })
        .sum();
    assert_eq!(merged.run.unwrap().total.counts.cnt, cnt);
    // Worker 1's pod died before it wrote a file: named twice, merged without it.
    std::fs::write(
        dir.path().join("log-1"),
        "pgbench-rs: error: connection refused\n",
    )
    .unwrap();
    let out = collect(&dir.path().join("some"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("collect.sh: worker 1 of 3: no results file in the log of pod-1"),
        "{stderr}"
    );
    assert!(
        stderr.contains("pgbench-report: warning: worker 1 of 3 is missing"),
        "{stderr}"
    );
}
