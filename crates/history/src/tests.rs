//! The store with no server: SQLite files in temporary folders. Recording, listing
//! with filters, removal, migrations and refusals (a newer schema, a file that is
//! not a store, left byte for byte), recording from two threads at once, masking of
//! passwords, regressions over stored series, diff and export.

use crate::changepoint::Options;
use crate::environment::{ClientFacts, Environment, ServerFacts, Setting};
use crate::store::schema::{self, Migration};
use crate::{
    diff, export, regressions, Filter, HistoryError, Metric, RecordInput, RunId, Store, StoreSpec,
};
use pgbench_results::summary::{Failures, PercentileSummary, Summary};
use pgbench_results::synthetic;
use pgbench_results::{ResultsFile, RunMeta};
use std::collections::BTreeMap;
use std::path::Path;

/// An imported run's document with these figures, started at `t` (seconds).
fn doc(t: i64, tps: f64, p99: f64) -> ResultsFile {
    let summary = Summary {
        transaction_type: Some("<builtin: TPC-B (sort of)>".into()),
        scaling_factor: Some(10),
        clients: Some(8),
        threads: Some(2),
        duration_s: Some(60),
        transactions: Some((tps * 60.0) as i64),
        failures: Some(Failures {
            total: 0,
            serialization: None,
            deadlock: None,
            other: None,
        }),
        tps: Some(tps),
        latency_avg_ms: Some(8000.0 / tps),
        percentiles: Some(PercentileSummary {
            values: vec![(50.0, p99 / 3.0), (99.0, p99)],
            max_ms: p99 * 2.0,
            count: 100,
        }),
        ..Summary::default()
    };
    let mut d = ResultsFile::imported(vec!["run.log".into()], summary);
    d.started_at = Some(pgbench_results::document::rfc3339_utc(t * 1_000_000));
    d.server_version = Some("15.20".into());
    d
}

fn tags(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn input(pairs: &[(&str, &str)]) -> RecordInput {
    RecordInput {
        tags: tags(pairs),
        command_line: vec!["pgbench-rs".into(), "-T".into(), "60".into()],
        environment: Environment {
            client: Some(ClientFacts {
                hostname: Some("bench1".into()),
                ..ClientFacts::default()
            }),
            server: None,
        },
    }
}

fn open(path: &Path) -> Store {
    Store::open(path.to_str().unwrap()).expect("open store")
}

#[test]
fn record_list_filter_get_and_rm() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = open(&dir.path().join("h.sqlite"));
    let a = s
        .record(&doc(1000, 500.0, 9.0), input(&[("branch", "main")]))
        .unwrap();
    let b = s
        .record(
            &doc(3000, 450.0, 11.0),
            input(&[("branch", "dev"), ("k", "v")]),
        )
        .unwrap();
    let c = s
        .record(&doc(2000, 520.0, 8.0), input(&[("branch", "main")]))
        .unwrap();
    let ids = |rows: Vec<crate::RunRow>| rows.iter().map(|r| r.id).collect::<Vec<_>>();
    // Newest first, by start.
    assert_eq!(ids(s.list(&Filter::default()).unwrap()), [b, c, a]);
    let main = Filter {
        tags: tags(&[("branch", "main")]),
        ..Filter::default()
    };
    assert_eq!(ids(s.list(&main).unwrap()), [c, a]);
    let since = Filter {
        since_us: Some(1500 * 1_000_000),
        until_us: Some(2500 * 1_000_000),
        ..Filter::default()
    };
    assert_eq!(ids(s.list(&since).unwrap()), [c]);
    for (server, n) in [("15.20", 3), ("15", 3), ("1", 0), ("16", 0)] {
        let f = Filter {
            server: Some(server.into()),
            ..Filter::default()
        };
        assert_eq!(s.list(&f).unwrap().len(), n, "--server {server}");
    }
    let f = Filter {
        workload: Some("<builtin: TPC-B (sort of)>".into()),
        hostname: Some("bench1".into()),
        limit: Some(1),
        ..Filter::default()
    };
    assert_eq!(ids(s.list(&f).unwrap()), [b]);
    let row = &s.list(&Filter::default()).unwrap()[0];
    assert_eq!(row.tags.get("k").map(String::as_str), Some("v"));
    assert_eq!(row.figures.tps, Some(450.0));
    assert_eq!(row.figures.p99_ms, Some(11.0));
    assert_eq!(row.figures.scale, Some(10));
    assert_eq!(row.command_line, "pgbench-rs -T 60");
    let got = s.get(a).unwrap();
    assert_eq!(got.document, doc(1000, 500.0, 9.0));
    assert_eq!(
        got.environment.client.unwrap().hostname.as_deref(),
        Some("bench1")
    );
    s.rm(a).unwrap();
    assert!(matches!(s.get(a), Err(HistoryError::NoRun { .. })));
    let e = s.rm(a).unwrap_err().to_string();
    assert!(e.ends_with(&format!("no run {a}")), "{e}");
    assert_eq!(ids(s.list(&Filter::default()).unwrap()), [b, c]);
    // The tags went with it.
    let left = s.raw_query("select count(*) from {p}tags").unwrap();
    assert_eq!(left[0][0].as_deref(), Some("3"));
}

#[test]
fn a_real_run_s_figures_are_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = open(&dir.path().join("h.sqlite"));
    let run = synthetic::run(&synthetic::Spec::tpcb(3, 5, 400.0, 2000.0));
    let d = ResultsFile::from_run(
        run,
        RunMeta {
            started_unix_us: 1_700_000_000_000_000,
            ended_unix_us: 1_700_000_005_000_000,
            ..RunMeta::default()
        },
    );
    let id = s.record(&d, RecordInput::default()).unwrap();
    let row = s.get(id).unwrap().row;
    let f = &row.figures;
    assert_eq!(f.tps, d.summary.tps);
    assert_eq!(f.clients, Some(4));
    assert_eq!(f.started_us, Some(1_700_000_000_000_000));
    // p95 is not among the summary's percentiles: it comes from the histogram.
    let (p50, p95, p99) = (f.p50_ms.unwrap(), f.p95_ms.unwrap(), f.p99_ms.unwrap());
    assert!(p50 < p95 && p95 < p99, "{p50} {p95} {p99}");
    assert!((1.5..2.5).contains(&p50), "{p50}");
    assert_eq!(f.failed_pct, Some(0.0));
    assert_eq!(f.script_digest.as_ref().map(String::len), Some(16));
}

#[test]
fn migrations_bring_an_older_store_up_and_a_newer_one_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let spec = StoreSpec::File(path.clone());
    let mut s = Store::open(path.to_str().unwrap()).unwrap();
    let version = |s: &mut Store| {
        s.raw_query("select version from {p}schema_version")
            .unwrap()
    };
    assert_eq!(
        version(&mut s),
        [[Some(schema::MIGRATIONS.len().to_string())]]
    );
    let id = s.record(&doc(10, 1.0, 1.0), input(&[])).unwrap();
    drop(s);
    // A later build's second migration is applied to this store, which keeps its run.
    static LATER: &[Migration] = &[
        schema::MIGRATIONS[0],
        &["create table {p}notes (run_id bigint, note text)"],
    ];
    let mut s = Store::open_with(&spec, LATER).unwrap();
    assert_eq!(version(&mut s), [[Some("2".to_string())]]);
    assert_eq!(s.get(id).unwrap().row.figures.tps, Some(1.0));
    s.raw_query("select count(*) from {p}notes").unwrap();
    drop(s);
    // This build (one migration) refuses the store the later one left.
    let before = std::fs::read(&path).unwrap();
    let e = Store::open(path.to_str().unwrap())
        .err()
        .unwrap()
        .to_string();
    assert_eq!(
        e,
        format!(
            "history store {}: written by a newer pgbench-rs (schema 2, this one knows {}); left as it is",
            path.display(),
            schema::MIGRATIONS.len()
        )
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_file_that_is_not_a_store_is_refused_and_left_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    // Garbage.
    let garbage = dir.path().join("notes.txt");
    let bytes: Vec<u8> = (0..10_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&garbage, &bytes).unwrap();
    let e = Store::open(garbage.to_str().unwrap()).err().unwrap();
    assert!(matches!(e, HistoryError::NotAStore { .. }), "{e}");
    assert!(
        e.to_string().contains(&garbage.display().to_string()),
        "{e}"
    );
    assert!(
        e.to_string().contains("is not a pgbench-rs history store"),
        "{e}"
    );
    assert_eq!(std::fs::read(&garbage).unwrap(), bytes);
    // Another program's SQLite database.
    let other = dir.path().join("other.db");
    {
        let c = rusqlite::Connection::open(&other).unwrap();
        c.execute_batch("create table customers (id integer, name text); insert into customers values (1, 'a');")
            .unwrap();
    }
    let before = std::fs::read(&other).unwrap();
    let e = Store::open(other.to_str().unwrap())
        .err()
        .unwrap()
        .to_string();
    assert_eq!(
        e,
        format!(
            "history store {}: is not a pgbench-rs history store (it has tables of its own (customers) and no schema_version); left as it is",
            other.display()
        )
    );
    assert_eq!(std::fs::read(&other).unwrap(), before);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no journal or WAL file was made: {names:?}");
}

#[test]
fn two_writers_at_once_both_record_everything() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                // Each opens the store itself, the first perhaps while the other
                // creates it.
                let mut s = open(&path);
                (0..25)
                    .map(|i| {
                        s.record(
                            &doc(i, 100.0 + t as f64, 5.0),
                            input(&[("writer", &t.to_string())]),
                        )
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
        })
        .collect();
    let mut ids = Vec::new();
    for t in threads {
        ids.extend(t.join().unwrap().expect("every record succeeds"));
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 50);
    assert_eq!(open(&path).list(&Filter::default()).unwrap().len(), 50);
}

#[test]
fn a_store_held_by_a_writer_says_it_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    drop(open(&path));
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("begin exclusive").unwrap();
    let mut s = open(&path);
    let started = std::time::Instant::now();
    let e = s
        .record(&doc(1, 1.0, 1.0), input(&[]))
        .unwrap_err()
        .to_string();
    assert!(started.elapsed() >= std::time::Duration::from_secs(9));
    assert_eq!(
        e,
        format!(
            "history store {}: locked by another process (gave up after 10 s)",
            path.display()
        )
    );
}

const SECRET: &str = "Sekr1t-0x5f";

#[test]
fn no_password_reaches_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let mut s = open(&path);
    let mut d = doc(5, 10.0, 1.0);
    let uri = format!("postgresql://bench:{SECRET}@db/bench?sslpassword={SECRET}");
    let conninfo = format!("host=db password='{SECRET}' dbname=bench");
    d.command_line = vec!["pgbench-rs".into(), uri.clone(), conninfo.clone()];
    d.options
        .insert("dbname".into(), serde_json::Value::String(uri.clone()));
    let mut settings = BTreeMap::new();
    settings.insert(
        "primary_conninfo".to_string(),
        crate::environment::parse_settings(&[vec![
            Some("primary_conninfo".into()),
            Some(format!("host=p password={SECRET}")),
            None,
            Some("configuration file".into()),
            Some(format!("host=p password={SECRET}")),
        ]])["primary_conninfo"]
            .clone(),
    );
    let rec = RecordInput {
        tags: tags(&[("env", "ci")]),
        command_line: vec!["pgbench-rs".into(), uri, conninfo],
        environment: Environment {
            client: None,
            server: Some(ServerFacts {
                settings,
                ..ServerFacts::default()
            }),
        },
    };
    let id = s.record(&d, rec).unwrap();
    let all = s
        .raw_query("select command_line || environment || document from {p}runs join {p}documents on run_id = id")
        .unwrap();
    let text = all[0][0].clone().unwrap();
    assert!(!text.contains(SECRET), "{text}");
    assert!(text.contains("postgresql://bench:********@db"), "{text}");
    assert!(text.contains("password=********"), "{text}");
    drop(s);
    let bytes = std::fs::read(&path).unwrap();
    assert!(!bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()));
    assert!(open(&path).get(id).is_ok());
}

#[test]
fn regressions_over_a_stored_series_name_the_first_run_after_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = open(&dir.path().join("h.sqlite"));
    let wobble = [0.0, 4.0, -3.0, 2.0, -4.0, 3.0, -2.0];
    let runs: Vec<(ResultsFile, RecordInput)> = (0..30)
        .map(|i| {
            let tps = if i < 18 { 1000.0 } else { 850.0 } + wobble[i % 7];
            (doc(i as i64 * 60, tps, 9.0), input(&[("branch", "main")]))
        })
        .collect();
    let ids = s.record_all(&runs).unwrap();
    // Another series (other tags): steady, no finding.
    for i in 0..30 {
        s.record(
            &doc(i * 60 + 1, 300.0 + wobble[i as usize % 7], 9.0),
            input(&[("branch", "dev")]),
        )
        .unwrap();
    }
    let found = regressions::search(
        &mut s,
        &Filter::default(),
        &[Metric::Tps],
        Options::default(),
    )
    .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].first_run, ids[18]);
    assert!(found[0].gates());
    assert!(
        found[0].series_key.ends_with(" branch=main"),
        "{}",
        found[0].series_key
    );
    let series = s.series(&Filter::default(), Metric::Tps).unwrap();
    assert_eq!(series.len(), 60);
    assert!(series
        .windows(2)
        .all(|w| w[0].started_us <= w[1].started_us));
}

#[test]
fn diff_names_the_settings_and_versions_beside_the_figures_that_moved() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = open(&dir.path().join("h.sqlite"));
    let env = |shared: &str, extra: Option<&str>, version: &str| {
        let mut settings = BTreeMap::new();
        let set = |v: &str| Setting {
            value: v.into(),
            setting: v.into(),
            unit: None,
            source: "configuration file".into(),
        };
        settings.insert("shared_buffers".into(), set(shared));
        settings.insert("max_connections".into(), set("100"));
        if let Some(e) = extra {
            settings.insert("jit".into(), set(e));
        }
        Environment {
            client: Some(ClientFacts {
                hostname: Some("bench1".into()),
                pgbench_rs: Some("pgbench-rs 0.1.0".into()),
                ..ClientFacts::default()
            }),
            server: Some(ServerFacts {
                version: Some(format!(
                    "PostgreSQL {version} (Debian {version}-1) on x86_64"
                )),
                settings,
                ..ServerFacts::default()
            }),
        }
    };
    let mut da = doc(1, 1000.0, 10.0);
    let mut db = doc(2, 990.0, 13.8);
    da.server_version = None;
    db.server_version = None;
    let a = s
        .record(
            &da,
            RecordInput {
                environment: env("4GB", Some("off"), "15.18"),
                ..input(&[])
            },
        )
        .unwrap();
    let b = s
        .record(
            &db,
            RecordInput {
                environment: env("1GB", None, "15.20"),
                ..input(&[])
            },
        )
        .unwrap();
    let (ra, rb) = (s.get(a).unwrap(), s.get(b).unwrap());
    let d = diff::diff(&ra, &rb);
    assert_eq!(
        d.headline(),
        "p50 +38%; p99 +38%; max +38%; jit off → (not set); shared_buffers 4GB → 1GB; server 15.18 (Debian 15.18-1) → 15.20 (Debian 15.20-1)"
    );
    let text = d.render("run 1", "run 2");
    assert!(
        text.contains("  jit: off → (not set) (removed)\n"),
        "{text}"
    );
    assert!(text.contains("  shared_buffers: 4GB → 1GB\n"), "{text}");
    assert!(
        text.contains("  server: 15.18 (Debian 15.18-1) → 15.20 (Debian 15.20-1)\n"),
        "{text}"
    );
    assert!(!text.contains("max_connections"), "{text}");
    assert_eq!(diff::diff(&ra, &ra).headline(), "no difference");
}

#[test]
fn export_writes_every_run_with_its_document_and_csv_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = open(&dir.path().join("h.sqlite"));
    let a = s
        .record(&doc(1, 100.0, 5.0), input(&[("note", "a, \"quoted\"")]))
        .unwrap();
    let b = s.record(&doc(2, 200.0, 5.0), input(&[])).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&export::json(&mut s, &Filter::default()).unwrap()).unwrap();
    let runs = json.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["id"], b.0);
    assert_eq!(runs[1]["tags"]["note"], "a, \"quoted\"");
    assert_eq!(runs[1]["document"]["summary"]["tps"], 100.0);
    assert_eq!(runs[1]["environment"]["client"]["hostname"], "bench1");
    let rows = s.list(&Filter::default()).unwrap();
    let csv = export::csv(&rows);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], export::CSV_COLUMNS.join(","));
    assert_eq!(lines.len(), 3);
    assert!(
        lines[2].starts_with(&format!(
            "{a},1970-01-01T00:00:01.000000Z,<builtin: TPC-B (sort of)>,"
        )),
        "{}",
        lines[2]
    );
    assert!(
        lines[2].ends_with(",\"note=a, \"\"quoted\"\"\""),
        "{}",
        lines[2]
    );
}

#[test]
fn run_ids_are_positive_numbers() {
    assert_eq!("12".parse::<RunId>().unwrap(), RunId(12));
    for bad in ["0", "-1", "x", ""] {
        assert!(bad.parse::<RunId>().is_err(), "{bad}");
    }
}
