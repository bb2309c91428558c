//! `--server-stats` when things go wrong (#38): views the run's role may not read are
//! notes and `n/a`, never a number made of what was not read (a negative count, an
//! empty query sent); the sampler's connection ended mid-run is made again, the
//! seconds it missed are missing (not zero) and the window stays whole.

use super::{json, valid};
use crate::support::{fresh_db, run, Db};
use std::time::Duration;

/// A role of its own (no superuser, none of `pg_read_all_stats`), owning `db` and its
/// pgbench tables at scale 1.
fn owned_by_role(db: &Db, role: &str) {
    db.psql(&format!(
        "do $$ begin create role {role} login; exception when duplicate_object then null; end $$;
         alter database \"{}\" owner to {role};
         alter schema public owner to {role};",
        db.name
    ));
    let out = run(db.ours().env("PGUSER", role).args(["-i", "-q", "-s", "1"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// #38: with `pg_stat_database` denied the block said `server transactions: -33` (0
/// less the sampler's queries); with `pg_stat_activity` denied, `wait events (0
/// samples)` and no note; with every view denied the run failed its reads with
/// `syntax error at end of input` (an empty query sent).
#[test]
fn views_the_role_may_not_read_are_notes_and_n_a_not_numbers() {
    let db = fresh_db("server_stats_denied");
    let role = "issue38_stats";
    owned_by_role(&db, role);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("denied.json");
    let denied = |revoke: &str| {
        db.psql(&format!("revoke select on {revoke} from public"));
        let out = run(db
            .ours()
            .env("PGUSER", role)
            .args(["-S", "-c", "2", "-T", "2", "--print-server-stats"])
            .arg(format!("--export-json={}", file.display())));
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(!out.stdout.contains("syntax error"), "{}", out.stdout);
        let doc = json(&file);
        valid(&doc);
        (out.stdout, doc)
    };

    let (stdout, doc) = denied("pg_catalog.pg_stat_database");
    assert!(
        stdout.contains("\n  server transactions: n/a (client "),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "\n  note: pg_stat_database left out: permission denied for view pg_stat_database\n"
        ),
        "{stdout}"
    );
    let s = &doc["run"]["server"];
    assert!(s["derived"]["server_transactions"].is_null(), "{s}");
    assert!(s["derived"]["blks_read_per_transaction"].is_null(), "{s}");
    assert!(s["window"].get("pg_stat_database").is_none(), "{s}");
    // What the views it may read say is still there.
    assert!(s["window"]["pg_stat_wal"]["wal_records"].is_i64(), "{s}");

    let (stdout, doc) = denied("pg_catalog.pg_stat_activity");
    assert!(
        stdout.contains("\n  wait events: n/a (not sampled)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "\n  note: pg_stat_activity left out: permission denied for view pg_stat_activity\n"
        ),
        "{stdout}"
    );
    assert_eq!(doc["run"]["server"]["activity_rounds"], 0);

    let (stdout, doc) = denied(
        "pg_catalog.pg_stat_wal, pg_catalog.pg_stat_bgwriter, \
         pg_catalog.pg_stat_all_tables, pg_catalog.pg_stat_replication",
    );
    for view in [
        "pg_stat_database",
        "pg_stat_wal",
        "pg_stat_bgwriter",
        "pg_stat_all_tables",
        "pg_stat_activity",
        "pg_stat_replication",
    ] {
        assert!(
            stdout.contains(&format!("\n  note: {view} left out: permission denied")),
            "{view}: {stdout}"
        );
    }
    assert!(
        !stdout.contains("could not be read"),
        "nothing was read, nothing failed: {stdout}"
    );
    let s = &doc["run"]["server"];
    assert_eq!(s["views"], serde_json::json!([]), "{s}");
    assert_eq!(s["window"], serde_json::json!({}), "{s}");
    assert!(s["end"]["lost"].is_null(), "{s}");
}

/// #38: when the sampler's connection was lost mid-run its seconds recorded zeros from
/// then on, and the window stopped at the loss: the derived figures put 2 s of the
/// server over 8 s of the clients. Now it connects again: the second of the loss is
/// missing (no counters), the others are whole, and so is the window.
#[test]
fn a_sampler_connection_ended_mid_run_is_made_again_and_its_second_missing() {
    let db = fresh_db("server_stats_terminated");
    db.init(1);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("terminated.json");
    let child = db
        .ours()
        .args(["-S", "-c", "2", "-T", "6", "--print-server-stats"])
        .arg(format!("--export-json={}", file.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let connected = "select count(*) >= 2 from pg_stat_activity \
                     where datname = current_database() and application_name = 'pgbench-rs'";
    assert_eq!(
        db.value_within(connected, "t", Duration::from_secs(30)),
        "t"
    );
    // Its queries begin with its mark.
    let ended = db.value(
        "select count(*) from (select pg_terminate_backend(pid) from pg_stat_activity \
         where datname = current_database() and query like '/* pgbench-rs --server-stats */%') t",
    );
    assert_eq!(ended, "1");
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("\n  note: the connection was lost "),
        "{stdout}"
    );
    let doc = json(&file);
    valid(&doc);
    let (r, s) = (&doc["run"], &doc["run"]["server"]);
    let series = s["series"].as_array().unwrap();
    let missing = series
        .iter()
        .filter(|x| x["counters"] == serde_json::json!({}))
        .count();
    assert!(missing >= 1, "{series:#?}");
    // A select-only run commits thousands a second: no second read after the loss
    // says none (the last, partial one aside).
    for x in &series[..series.len() - 1] {
        if let Some(commits) = x["counters"]["pg_stat_database"]["xact_commit"].as_i64() {
            assert!(commits > 0, "{x}");
        }
    }
    assert!(s["end"]["lost"].is_null(), "{}", s["end"]);
    let client = r["total"]["cnt"].as_i64().unwrap();
    let server = s["derived"]["server_transactions"].as_i64().unwrap();
    assert!(
        (server - client).abs() as f64 <= client as f64 * 0.01,
        "server {server} client {client}"
    );
}
