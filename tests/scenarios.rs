//! `--scenarios=FILE` on a throwaway primary and its streaming standby: reads on the
//! standby through a two-host conninfo with `target_session_attrs=standby`, writes at
//! a rate on the primary, each scenario's block and results checked against what
//! the servers counted; a scenario whose target is down fails the start; the options
//! a scenarios file replaces are refused.

use crate::support;
use pgbench_cluster::{Cluster, ClusterOptions};
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

fn pgbench_rs(primary: &Cluster) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
    support::aim(&mut cmd, primary, "postgres");
    cmd
}

/// A single value of `sql` on `cluster`.
fn value(cluster: &Cluster, sql: &str) -> i64 {
    let text = cluster.psql("postgres", sql).expect("psql");
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{sql}: {text}"))
}

/// Once `sql` on `cluster` is at least `want` (asked again every 100 ms), or after
/// `timeout`, its value.
fn value_reaching(cluster: &Cluster, sql: &str, want: i64, timeout: Duration) -> i64 {
    let deadline = Instant::now() + timeout;
    loop {
        let v = value(cluster, sql);
        if v >= want || Instant::now() > deadline {
            return v;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The results file's scenario `name`.
fn scenario<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["run"]["scenarios"]
        .as_array()
        .expect("scenarios in the results file")
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("scenario {name} in {doc}"))
}

#[test]
fn reads_on_the_standby_and_writes_on_the_primary_in_one_run() {
    let primary = Cluster::start(ClusterOptions::default()).unwrap();
    let init = support::run(pgbench_rs(&primary).args(["-i", "-q", "-s", "1"]));
    assert_eq!(init.code, 0, "{}", init.stderr);
    primary
        .psql(
            "postgres",
            "CREATE TABLE inserted (id bigserial PRIMARY KEY, client int)",
        )
        .unwrap();
    let standby = primary.start_standby().unwrap();
    // The standby has the tables before the run reads them.
    let replicated = value_reaching(
        &standby,
        "SELECT count(*) FROM pgbench_branches",
        1,
        Duration::from_secs(60),
    );
    assert_eq!(replicated, 1);
    let commits = "SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'";
    let standby_before = value(&standby, commits);

    let dir = tempfile::tempdir().unwrap();
    let insert = support::script_file(
        &dir,
        "insert.sql",
        "INSERT INTO inserted (client) VALUES (:client_id);\n",
    );
    let file = dir.path().join("mix.toml");
    std::fs::write(
        &file,
        format!(
            "[[scenario]]\nname = \"reads\"\nscript = \"select-only\"\nclients = 2\n\
             conninfo = \"host={p},{s} port={pp},{sp} target_session_attrs=standby\"\n\n\
             [[scenario]]\nname = \"writes\"\nscript = \"{insert}\"\nclients = 2\nrate = 50\n",
            p = primary.socket_dir().display(),
            s = standby.socket_dir().display(),
            pp = primary.port(),
            sp = standby.port(),
        ),
    )
    .unwrap();
    let results = dir.path().join("run.json");
    let run = support::run(pgbench_rs(&primary).args([
        "-n",
        "-T",
        "4",
        &format!("--scenarios={}", file.display()),
        &format!("--export-json={}", results.display()),
        &format!("--export-html={}", dir.path().join("run.html").display()),
    ]));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // pgbench's lines for the whole run, then a block per scenario, then the total.
    let out = &run.stdout;
    let at = |needle: &str| {
        out.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} in:\n{out}"))
    };
    assert!(at("number of clients: 4\n") < at("tps = "));
    let reads_block = at(&format!(
        "scenario \"reads\": {}:{},{}:{} (standby)\n",
        primary.socket_dir().display(),
        primary.port(),
        standby.socket_dir().display(),
        standby.port()
    ));
    let writes_block = at(&format!(
        "scenario \"writes\": {}:{}\n",
        primary.socket_dir().display(),
        primary.port()
    ));
    assert!(at("tps = ") < reads_block && reads_block < writes_block);
    assert!(writes_block < at("scenarios total: 2 scenarios, 4 clients\n"));
    assert!(out.contains(" - rate limit: 50.0 tps\n"), "{out}");

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let errors: Vec<String> = crate::export::schema()
        .iter_errors(&doc)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    // The results file shows the same report, the scenarios' blocks included.
    let shown = support::run(
        Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
            .arg("show")
            .arg(&results),
    );
    assert_eq!(shown.stdout, run.stdout);
    // compare sets each scenario side by side.
    let compared = support::run(
        Command::new(env!("CARGO_BIN_EXE_pgbench-report"))
            .arg("compare")
            .arg(&results)
            .arg(&results),
    );
    assert!(
        compared.stdout.contains(
            "scenarios (--scenarios; one figure a run, no interval):\n  reads:\n    tps: A "
        ),
        "{}",
        compared.stdout
    );
    // The page's table shows each scenario's figures, as a reader sees them.
    let page = dir.path().join("run.html");
    if let Some(c) = support::browser::check_page(&page, &dir.path().join("run.png")) {
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        let (_, rows) = c
            .tables
            .iter()
            .find(|(id, _)| id == "scenarios")
            .unwrap_or_else(|| panic!("no scenarios table: {:?}", c.tables));
        let row = |name: &str| {
            rows.iter()
                .find(|r| r.get(1).map(String::as_str) == Some(name))
                .unwrap_or_else(|| panic!("no row of {name}: {rows:?}"))
        };
        assert_eq!(rows[0][1], "scenario");
        for (name, s) in [
            ("reads", scenario(&doc, "reads")),
            ("writes", scenario(&doc, "writes")),
        ] {
            assert_eq!(row(name)[2], s["target"].as_str().unwrap());
            assert_eq!(row(name)[5], s["transactions"].to_string());
        }
        assert_eq!(row("writes")[4], "50.0");
    }
    let (reads, writes) = (scenario(&doc, "reads"), scenario(&doc, "writes"));
    let count = |s: &Value| s["transactions"].as_i64().unwrap();
    let total = doc["run"]["total"]["cnt"].as_i64().unwrap();
    assert_eq!(count(reads) + count(writes), total, "{doc}");
    assert_eq!(
        (reads["failed"].as_i64(), writes["failed"].as_i64()),
        (Some(0), Some(0))
    );
    assert!(
        reads["percentiles"]
            .as_array()
            .is_some_and(|p| p.len() == 3),
        "{reads}"
    );
    // Every write committed on the primary, and only they.
    let rows = value(&primary, "SELECT count(*) FROM inserted");
    assert_eq!(rows, count(writes), "{out}");
    // 50 tps over 4 s is about 200; the schedule holds that on a busy machine.
    assert!((100..=300).contains(&rows), "{rows} rows:\n{out}");
    // Every read committed on the standby (its stats are flushed as its backends end).
    let reads_done = count(reads);
    assert!(reads_done > 100, "{out}");
    let grown = value_reaching(
        &standby,
        commits,
        standby_before + reads_done,
        Duration::from_secs(10),
    ) - standby_before;
    assert!(
        grown >= reads_done,
        "standby commits grew by {grown}, reads {reads_done}"
    );

    // A scenario whose target is down fails the start as -c would.
    let stopped = dir.path().join("down.toml");
    std::fs::write(
        &stopped,
        format!(
            "[[scenario]]\nname = \"up\"\nscript = \"select-only\"\nclients = 1\n\n\
             [[scenario]]\nname = \"down\"\nscript = \"select-only\"\nclients = 1\n\
             conninfo = \"host={} port=1\"\n",
            primary.socket_dir().display()
        ),
    )
    .unwrap();
    let run = support::run(pgbench_rs(&primary).args([
        "-n",
        "-T",
        "1",
        &format!("--scenarios={}", stopped.display()),
    ]));
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("could not create connection for client 1"),
        "{}",
        run.stderr
    );
}

#[test]
fn options_a_scenarios_file_replaces_are_refused_and_its_errors_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(
        &file,
        "[[scenario]]\nname = \"a\"\nscript = \"select-only\"\nclients = 1\n",
    )
    .unwrap();
    let scenarios = format!("--scenarios={}", file.display());
    for (extra, named) in [
        ("-c4", "-c/--client"),
        ("-R10", "-R/--rate"),
        ("-bselect-only", "-b, -f, -S or -N"),
        ("-j2", "-j/--jobs"),
    ] {
        let run = support::run(
            Command::new(env!("CARGO_BIN_EXE_pgbench-rs")).args([scenarios.as_str(), extra]),
        );
        assert_eq!(run.code, 1, "{extra}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("--scenarios cannot be combined with {named}")),
            "{extra}: {}",
            run.stderr
        );
    }
    std::fs::write(
        &file,
        "[[scenario]]\nname = \"a\"\nscript = \"select-only\"\nclients = \"two\"\n",
    )
    .unwrap();
    let run = support::run(Command::new(env!("CARGO_BIN_EXE_pgbench-rs")).arg(&scenarios));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "{}:4: key \"clients\": expected a positive integer, got \"two\"",
            file.display()
        )),
        "{}",
        run.stderr
    );
    std::fs::write(
        &file,
        "[[scenario]]\nname = \"a\"\nscript = \"no-such.sql\"\nclients = 1\n",
    )
    .unwrap();
    let run = support::run(
        Command::new(env!("CARGO_BIN_EXE_pgbench-rs"))
            .current_dir(dir.path())
            .arg(&scenarios),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(":3: key \"script\": \"no-such.sql\" is not a builtin script"),
        "{}",
        run.stderr
    );
}

/// A scenario's `rate_stages` and `client_stages` shape its load alone: a rate
/// ramping from 0 to 200 tps over 4 s gives about 400 transactions (the ramp's
/// area); 2 clients leaving one by one as their count falls to 0 over the same 4 s
/// run about 2 s of one client's 10 ms sleeps; the stages set `-T`.
#[test]
fn a_scenarios_stages_shape_its_own_load() {
    let db = support::fresh_db("scenario_stages");
    let dir = tempfile::tempdir().unwrap();
    let select = support::script_file(&dir, "select.sql", "SELECT 1;\n");
    let sleep = support::script_file(&dir, "sleep.sql", "SELECT pg_sleep(0.01);\n");
    let file = dir.path().join("shapes.toml");
    std::fs::write(
        &file,
        format!(
            "[[scenario]]\nname = \"ramp\"\nscript = \"{select}\"\nclients = 2\n\
             rate_stages = \"4s:200\"\n\n\
             [[scenario]]\nname = \"drain\"\nscript = \"{sleep}\"\nclients = 2\n\
             client_stages = \"4s:0\"\n"
        ),
    )
    .unwrap();
    let results = dir.path().join("run.json");
    let run = support::run(db.ours().args([
        "-n",
        &format!("--scenarios={}", file.display()),
        &format!("--export-json={}", results.display()),
    ]));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("duration: 4 s\n"), "{}", run.stdout);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let count = |name| scenario(&doc, name)["transactions"].as_i64().unwrap();
    // Poisson's spread on 400 is 20, and the end of -T may cut the last slots (the
    // ramp's busiest); runs here gave 342 to 412. Wide enough for a busy machine,
    // narrow enough to tell the ramp from a flat 200 tps (800) or none.
    assert!((260..=520).contains(&count("ramp")), "{}", run.stdout);
    // One client for about 2 s at under 100 tps; two clients throughout would be 800.
    assert!((100..=240).contains(&count("drain")), "{}", run.stdout);
}
