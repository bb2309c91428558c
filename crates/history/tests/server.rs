//! The history against a real server, on a throwaway cluster of its own: a
//! PostgreSQL database as the store (made on first use, by two sessions at once;
//! no password of any conninfo form anywhere in its tables; a newer schema refused),
//! and `Environment::server` reading a setting given on the server's configuration
//! as `SHOW` prints it, and nothing a plain role may not read turned into an error.

use pgbench_cluster::{Cluster, ClusterOptions};
use pgbench_history::{Environment, Filter, HistoryError, RecordInput, Store};
use pgbench_results::summary::Summary;
use pgbench_results::ResultsFile;
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};
use std::sync::OnceLock;

const PASSWORD: &str = "Sekr1t-hist-0x5f";

const HBA: &str = "\
local all postgres trust
local all bench scram-sha-256
";

/// One cluster for this file's tests: password authentication for `bench`, and
/// `work_mem` set to 7MB in its configuration.
fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        let c = Cluster::start(ClusterOptions {
            hba: Some(HBA.into()),
            config: vec![("work_mem".into(), "7MB".into())],
            ..ClusterOptions::default()
        })
        .expect("a throwaway cluster");
        c.psql(
            "postgres",
            &format!("create role bench login password '{PASSWORD}';"),
        )
        .unwrap();
        c
    })
}

/// A database of its own, owned by `bench`.
fn database(name: &str) -> String {
    let c = cluster();
    c.psql(
        "postgres",
        &format!(
            "drop database if exists {name} with (force); create database {name} owner bench;"
        ),
    )
    .unwrap();
    name.to_string()
}

fn conninfo(db: &str) -> String {
    let c = cluster();
    format!(
        "host={} port={} user=bench dbname={db} password='{PASSWORD}'",
        c.socket_dir().display(),
        c.port()
    )
}

fn uri(db: &str) -> String {
    let c = cluster();
    format!(
        "postgresql://bench:{PASSWORD}@/{db}?host={}&port={}",
        c.socket_dir().display(),
        c.port()
    )
}

fn connect(user: &str, db: &str) -> Connection {
    let c = cluster();
    let opts = ConnectOptions::from_args(&ConnectArgs {
        host: Some(c.socket_dir().display().to_string()),
        port: Some(c.port().to_string()),
        user: Some(user.into()),
        password: Some(PASSWORD.into()),
        dbname: Some(db.into()),
        ..ConnectArgs::default()
    })
    .unwrap();
    Connection::connect(&opts).expect("connect")
}

fn doc(t: i64, tps: f64) -> ResultsFile {
    let mut d = ResultsFile::imported(
        vec!["run.log".into()],
        Summary {
            transaction_type: Some("<builtin: select only>".into()),
            clients: Some(4),
            tps: Some(tps),
            ..Summary::default()
        },
    );
    d.started_at = Some(pgbench_results::document::rfc3339_utc(t * 1_000_000));
    d
}

#[test]
fn a_postgres_store_is_made_on_first_use_and_holds_no_password() {
    let db = database("hist_store");
    // Two sessions make the store at once; both record.
    let writers: Vec<_> = [conninfo(&db), uri(&db)]
        .into_iter()
        .enumerate()
        .map(|(i, spec)| {
            std::thread::spawn(move || {
                let mut store = Store::open(&spec).expect("open the store");
                assert!(!store.name().contains(PASSWORD), "{}", store.name());
                let mut d = doc(100 + i as i64, 500.0 + i as f64);
                d.command_line = vec!["pgbench-rs".into(), spec.clone()];
                d.options.insert("dbname".into(), spec.clone().into());
                let environment = Environment {
                    client: Some(Environment::client("pgbench-rs test")),
                    server: Some(Environment::server(&mut connect("bench", "hist_store"))),
                };
                (0..5)
                    .map(|_| {
                        store.record(
                            &d,
                            RecordInput {
                                tags: vec![("secret".into(), "none".into())],
                                command_line: vec!["pgbench-rs".into(), spec.clone()],
                                environment: environment.clone(),
                            },
                        )
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap().expect("every record succeeds");
    }
    let c = cluster();
    assert_eq!(
        c.psql(&db, "select count(*) from pgbench_rs_history.runs")
            .unwrap()
            .trim(),
        "10"
    );
    // Every table's every row, as text.
    let all = c
        .psql(
            &db,
            "select r::text from pgbench_rs_history.runs r \
             union all select d::text from pgbench_rs_history.documents d \
             union all select t::text from pgbench_rs_history.tags t \
             union all select v::text from pgbench_rs_history.schema_version v",
        )
        .unwrap();
    assert!(all.contains("password=********"), "{all}");
    assert!(all.contains("bench:********@"), "{all}");
    assert!(!all.contains(PASSWORD), "a password reached the store");
    // The store reads back through either form.
    let mut store = Store::open(&uri(&db)).unwrap();
    let rows = store.list(&Filter::default()).unwrap();
    assert_eq!(rows.len(), 10);
    assert_eq!(rows[0].figures.tps, Some(501.0));
    let run = store.get(rows[0].id).unwrap();
    let server = run.environment.server.expect("server facts");
    assert_eq!(server.settings["work_mem"].value, "7MB");
}

#[test]
fn a_postgres_store_of_a_newer_schema_is_refused_untouched() {
    let db = database("hist_newer");
    drop(Store::open(&conninfo(&db)).unwrap());
    let c = cluster();
    c.psql(
        &db,
        "update pgbench_rs_history.schema_version set version = 99",
    )
    .unwrap();
    let e = Store::open(&conninfo(&db)).err().expect("refused");
    assert!(matches!(e, HistoryError::Newer { found: 99, .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("written by a newer pgbench-rs (schema 99, this one knows 1)"),
        "{text}"
    );
    assert!(text.contains("password=********"), "{text}");
    assert!(!text.contains(PASSWORD), "{text}");
    assert_eq!(
        c.psql(&db, "select version from pgbench_rs_history.schema_version")
            .unwrap()
            .trim(),
        "99"
    );
}

#[test]
fn a_wrong_password_is_an_error_naming_the_store_without_it() {
    let c = cluster();
    let spec = format!(
        "host={} port={} user=bench dbname=postgres password=wrong-{PASSWORD}",
        c.socket_dir().display(),
        c.port()
    );
    let e = Store::open(&spec).err().expect("refused").to_string();
    assert!(e.starts_with("history store host="), "{e}");
    assert!(e.contains("cannot connect"), "{e}");
    assert!(!e.contains(PASSWORD), "{e}");
}

#[test]
fn environment_server_reads_settings_as_show_prints_them() {
    let mut conn = connect("postgres", "postgres");
    let facts = Environment::server(&mut conn);
    let work_mem = &facts.settings["work_mem"];
    assert_eq!(work_mem.value, "7MB");
    assert_eq!(
        (work_mem.setting.as_str(), work_mem.unit.as_deref()),
        ("7168", Some("kB"))
    );
    assert_ne!(work_mem.source, "default");
    assert!(
        facts.version.as_deref().unwrap().starts_with("PostgreSQL "),
        "{facts:?}"
    );
    assert_eq!(
        facts.short_version().as_deref(),
        conn.parameter("server_version")
    );
    assert!(facts.version_num.unwrap() >= 150_000);
    let id = facts
        .system_identifier
        .clone()
        .expect("a superuser reads it");
    assert!(
        id.len() > 10 && id.bytes().all(|b| b.is_ascii_digit()),
        "{id}"
    );
    assert!(facts.database_size.unwrap() > 1_000_000);
    assert_eq!(facts.managed_service, None);
    // A plain role where pg_control_system() is not granted to it (as managed
    // services have it): what it may not read is unknown, not an error.
    let db = database("hist_plain");
    cluster()
        .psql(
            &db,
            "revoke execute on function pg_control_system() from public",
        )
        .unwrap();
    let plain = Environment::server(&mut connect("bench", &db));
    assert_eq!(plain.system_identifier, None);
    assert_eq!(plain.settings["work_mem"].value, "7MB");
    assert_eq!(plain.version, facts.version);
}

/// A store another role made, in tables this role may not read: an error saying so,
/// not an attempt to make the store again over it.
#[test]
fn a_store_another_role_made_is_not_made_again() {
    let db = database("hist_other");
    let c = cluster();
    let superuser = format!(
        "host={} port={} user=postgres dbname={db}",
        c.socket_dir().display(),
        c.port()
    );
    drop(Store::open(&superuser).unwrap());
    // It may make tables in the schema, but not read the store's: through
    // information_schema the store looked empty to it, and making it again failed
    // on "already exists".
    c.psql(
        &db,
        "grant usage, create on schema pgbench_rs_history to bench",
    )
    .unwrap();
    let e = Store::open(&conninfo(&db))
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("permission denied"), "{e}");
    assert!(!e.contains("already exists"), "{e}");
}
