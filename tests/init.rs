//! Initialisation mode against stock pgbench 15: for each option set, stock `pgbench -i`
//! and ours initialise two fresh databases of one throwaway cluster; the schema (from
//! pg_catalog), every table's contents (an md5 over all rows in key order), the
//! planner statistics pgbench leaves, and the stderr message sequence (timings masked)
//! must be equal. Also: errors, a re-run, and a server that goes away mid-load.
//!
//! Ours runs in a child process (this test binary re-executed with `init_child`), so
//! its stderr can be compared byte for byte without depending on the command line.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pgbench_cluster::Cluster;
use pgbench_rs::init::{InitOptions, PartitionMethod};
use pgbench_wire::{ConnectArgs, ConnectOptions};

use crate::support::stock_pgbench;

/// The test that the child process runs: `init_child`, by its path in the binary.
const CHILD_TEST: &str = "init::init_child";

/// Environment variable that turns `init_child` into a run of `init::run`.
const CHILD_ENV: &str = "PGBENCH_RS_INIT_CHILD";

/// How long any pgbench run may take before the test calls it a hang.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

fn cluster() -> &'static Cluster {
    pgbench_cluster::shared()
}

fn options(scale: i32) -> InitOptions {
    InitOptions {
        scale,
        ..InitOptions::default()
    }
}

/// The same options as stock pgbench arguments.
fn stock_args(o: &InitOptions) -> Vec<String> {
    let mut args = vec![
        "-i".to_string(),
        format!("--init-steps={}", o.steps),
        format!("--scale={}", o.scale),
        format!("--fillfactor={}", o.fillfactor),
    ];
    if o.quiet {
        args.push("-q".into());
    }
    if o.unlogged_tables {
        args.push("--unlogged-tables".into());
    }
    if o.partitions > 0 {
        args.push(format!("--partitions={}", o.partitions));
        match o.partition_method {
            PartitionMethod::Hash => args.push("--partition-method=hash".into()),
            PartitionMethod::Range => args.push("--partition-method=range".into()),
            PartitionMethod::None => {}
        }
    }
    if let Some(ts) = &o.tablespace {
        args.push(format!("--tablespace={ts}"));
    }
    if let Some(ts) = &o.index_tablespace {
        args.push(format!("--index-tablespace={ts}"));
    }
    args
}

/// Waits for a child with a deadline, so a hang fails the test instead of blocking it.
fn wait_with_timeout(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if start.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("run did not finish within {RUN_TIMEOUT:?} (hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out_reader.join().expect("stdout reader"),
        stderr: err_reader.join().expect("stderr reader"),
    }
}

fn run_stock(db: &str, o: &InitOptions) -> Output {
    let c = cluster();
    let mut cmd = Command::new(stock_pgbench());
    cmd.arg("-h")
        .arg(c.socket_dir())
        .arg("-p")
        .arg(c.port().to_string())
        .args(["-U", c.user()])
        .args(stock_args(o))
        .arg(db)
        .env_remove("PGOPTIONS");
    wait_with_timeout(cmd)
}

/// Serialises the options for the child (fields separated by 0x1f).
fn encode(db: &str, o: &InitOptions) -> String {
    let c = cluster();
    [
        c.socket_dir().display().to_string(),
        c.port().to_string(),
        c.user().to_string(),
        db.to_string(),
        o.steps.clone(),
        o.scale.to_string(),
        o.fillfactor.to_string(),
        o.quiet.to_string(),
        o.unlogged_tables.to_string(),
        o.partitions.to_string(),
        format!("{:?}", o.partition_method),
        o.tablespace.clone().unwrap_or_default(),
        o.index_tablespace.clone().unwrap_or_default(),
        o.jobs.map(|j| j.to_string()).unwrap_or_default(),
    ]
    .join("\x1f")
}

fn run_ours(db: &str, o: &InitOptions) -> Output {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, encode(db, o))
        .env_remove("PGOPTIONS")
        // These tests check the parallel load itself, which on this machine (server
        // and clients on few cores) would otherwise fall back to one session.
        .env("PGBENCH_RS_PARALLEL_INIT", "always");
    wait_with_timeout(cmd)
}

/// Not a test of its own: the body of the child process `run_ours` starts.
#[test]
fn init_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let f: Vec<&str> = spec.split('\x1f').collect();
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let opts = InitOptions {
        steps: f[4].to_string(),
        scale: f[5].parse().unwrap(),
        fillfactor: f[6].parse().unwrap(),
        quiet: f[7] == "true",
        unlogged_tables: f[8] == "true",
        partitions: f[9].parse().unwrap(),
        partition_method: match f[10] {
            "Range" => PartitionMethod::Range,
            "Hash" => PartitionMethod::Hash,
            _ => PartitionMethod::None,
        },
        tablespace: some(f[11]),
        index_tablespace: some(f[12]),
        jobs: some(f[13]).map(|j| j.parse().unwrap()),
        resumable: Default::default(),
    };
    let conn = ConnectOptions::from_args(&ConnectArgs {
        host: some(f[0]),
        port: some(f[1]),
        user: some(f[2]),
        dbname: some(f[3]),
        fallback_application_name: Some("pgbench".into()),
        ..ConnectArgs::default()
    })
    .expect("connect options");
    if let Err(e) = pgbench_rs::init::run(&conn, &opts, "pgbench") {
        eprint!("{}", e.render("pgbench"));
        std::process::exit(e.exit_code());
    }
}

fn stderr_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Masks the timings, and the program path prefix of stock's error lines.
fn normalize(stderr: &str) -> String {
    stderr
        .lines()
        .map(|line| {
            let line = line.replace(&format!("{}: ", stock_pgbench().display()), "pgbench: ");
            if let Some(at) = line.find(" done (elapsed ") {
                format!("{} done (elapsed X s, remaining Y s)", &line[..at])
            } else if line.starts_with("done in ") {
                let ops: Vec<String> = line
                    .split(['(', ','])
                    .skip(1)
                    .map(|op| {
                        op.trim()
                            .trim_end_matches(").")
                            .trim_end_matches(" s")
                            .rsplit_once(' ')
                            .map(|(name, _)| name.to_string())
                            .unwrap_or_default()
                    })
                    .collect();
                format!("done in X s ({}).", ops.join(", "))
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Tables, columns, partitioning, constraints and indexes of the pgbench tables.
fn schema(db: &str) -> String {
    cluster()
        .psql(
            db,
            r#"
select 'table', c.relname, c.relkind, c.relpersistence, coalesce(c.reloptions::text, ''),
       coalesce(ts.spcname, ''), coalesce(pg_get_expr(c.relpartbound, c.oid), ''),
       case when c.relkind = 'p' then pg_get_partkeydef(c.oid) else '' end
  from pg_class c left join pg_tablespace ts on ts.oid = c.reltablespace
 where c.relname like 'pgbench%' and c.relkind in ('r', 'p')
 order by c.relname;
select 'column', c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
       a.attnotnull, coalesce(pg_get_expr(d.adbin, d.adrelid), '')
  from pg_class c join pg_attribute a on a.attrelid = c.oid
  left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
 where c.relname like 'pgbench%' and c.relkind in ('r', 'p') and a.attnum > 0
 order by c.relname, a.attnum;
select 'constraint', c.relname, k.conname, pg_get_constraintdef(k.oid)
  from pg_constraint k join pg_class c on c.oid = k.conrelid
 where c.relname like 'pgbench%'
 order by c.relname, k.conname;
select 'index', i.relname, pg_get_indexdef(i.oid), coalesce(ts.spcname, '')
  from pg_index x join pg_class i on i.oid = x.indexrelid
  join pg_class c on c.oid = x.indrelid
  left join pg_tablespace ts on ts.oid = i.reltablespace
 where c.relname like 'pgbench%'
 order by i.relname;
"#,
        )
        .expect("schema query")
}

/// Row count and md5 of every row of every table, in key order.
fn contents(db: &str) -> String {
    let mut out = String::new();
    for (table, key) in [
        ("pgbench_branches", "bid"),
        ("pgbench_tellers", "tid"),
        ("pgbench_accounts", "aid"),
        ("pgbench_history", "tid, bid, aid, delta, mtime"),
    ] {
        out += &cluster()
            .psql(
                db,
                &format!(
                    "select '{table}', count(*), md5(coalesce(string_agg(t::text, ',' order by {key}), '')) from {table} t"
                ),
            )
            .unwrap_or_else(|e| format!("{table}: {e}\n"));
    }
    out
}

/// What vacuum/analyze (and COPY FREEZE) leave behind: analysed, and which tables have
/// every page frozen (pg_visibility, when the server has it). Not `relallvisible`:
/// whether vacuum may set it depends on other sessions' snapshots (autovacuum), even
/// for stock runs.
fn maintenance_state(db: &str) -> String {
    let frozen = if cluster()
        .psql(db, "create extension if not exists pg_visibility")
        .is_ok()
    {
        "case when c.relkind = 'r' then \
           (select v.all_frozen = c.relpages from pg_visibility_map_summary(c.oid) v) end"
    } else {
        "null"
    };
    cluster()
        .psql(
            db,
            &format!(
                "select c.relname, c.reltuples, {frozen},
                        s.last_analyze is not null
                   from pg_class c join pg_stat_user_tables s on s.relid = c.oid
                  where c.relname like 'pgbench%' order by c.relname"
            ),
        )
        .expect("maintenance query")
}

/// Compares a stock run and ours with the same options on two fresh databases.
fn compare(name: &str, o: &InitOptions) {
    let stock_db = cluster().fresh_database(&format!("{name}_stock")).unwrap();
    let ours_db = cluster().fresh_database(&format!("{name}_ours")).unwrap();
    let stock = run_stock(&stock_db, o);
    let ours = run_ours(&ours_db, o);
    let (stock_err, ours_err) = (stderr_text(&stock), stderr_text(&ours));
    assert_eq!(
        stock.status.code(),
        ours.status.code(),
        "exit status\nstock:\n{stock_err}\nours:\n{ours_err}"
    );
    assert_eq!(normalize(&stock_err), normalize(&ours_err), "stderr");
    assert_eq!(schema(&stock_db), schema(&ours_db), "schema");
    assert_eq!(contents(&stock_db), contents(&ours_db), "contents");
    if o.steps.contains('v') && stock.status.success() {
        assert_eq!(
            maintenance_state(&stock_db),
            maintenance_state(&ours_db),
            "vacuum"
        );
    }
}

#[test]
fn default_steps() {
    compare("default", &options(2));
}

#[test]
fn range_partitions() {
    compare(
        "range",
        &InitOptions {
            partitions: 3,
            partition_method: PartitionMethod::Range,
            ..options(2)
        },
    );
}

#[test]
fn hash_partitions() {
    compare(
        "hash",
        &InitOptions {
            partitions: 3,
            partition_method: PartitionMethod::Hash,
            ..options(1)
        },
    );
}

#[test]
fn foreign_keys_unlogged_fillfactor() {
    compare(
        "fk_unlogged",
        &InitOptions {
            steps: "dtgvpf".into(),
            unlogged_tables: true,
            fillfactor: 80,
            ..options(1)
        },
    );
}

#[test]
fn unlogged_partitions_quiet() {
    compare(
        "unlogged_parts",
        &InitOptions {
            unlogged_tables: true,
            quiet: true,
            partitions: 2,
            ..options(1)
        },
    );
}

#[test]
fn server_side_generation() {
    compare(
        "server_side",
        &InitOptions {
            steps: "dtGvpf".into(),
            ..options(2)
        },
    );
}

#[test]
fn step_subsets() {
    for (i, steps) in ["dt", "dtg", "d t g", " ", "dtpf", "dtvp", "g", "v", "dtfg"]
        .iter()
        .enumerate()
    {
        compare(
            &format!("subset{i}"),
            &InitOptions {
                steps: steps.to_string(),
                ..options(1)
            },
        );
    }
}

#[test]
fn bigint_columns_from_scale_20000() {
    compare(
        "bigint",
        &InitOptions {
            steps: "dt".into(),
            ..options(20_000)
        },
    );
}

#[test]
fn tablespaces_are_quoted() {
    let c = cluster();
    // Inside the cluster's own directory: removed only after the server has stopped, so
    // the server never loses files it still has dirty buffers for.
    let location = c.socket_dir().join("init_tablespace");
    let _ = std::fs::remove_dir_all(&location);
    std::fs::create_dir(&location).unwrap();
    // The server runs as `postgres` when the tests run as root; it must own the directory.
    if current_uid() == Some(0) {
        let owner = Command::new("id")
            .args(["-u", c.user()])
            .output()
            .expect("id");
        let uid: u32 = String::from_utf8_lossy(&owner.stdout)
            .trim()
            .parse()
            .expect("uid");
        std::os::unix::fs::chown(&location, Some(uid), None).unwrap();
    }
    c.psql(
        "postgres",
        &format!(
            "drop tablespace if exists \"Init TS\"; create tablespace \"Init TS\" location '{}'",
            location.display()
        ),
    )
    .expect("create tablespace");
    compare(
        "tablespace",
        &InitOptions {
            tablespace: Some("Init TS".into()),
            index_tablespace: Some("Init TS".into()),
            partitions: 2,
            ..options(1)
        },
    );
    compare(
        "tablespace_missing",
        &InitOptions {
            tablespace: Some("no such \"ts\"".into()),
            ..options(1)
        },
    );
    for db in ["tablespace_stock", "tablespace_ours"] {
        c.psql("postgres", &format!("drop database t_{db} with (force)"))
            .unwrap();
    }
    c.psql("postgres", "drop tablespace \"Init TS\"").unwrap();
}

fn current_uid() -> Option<u32> {
    let out = Command::new("id").arg("-u").output().ok()?;
    String::from_utf8(out.stdout).ok()?.trim().parse().ok()
}

#[test]
fn rerun_starts_clean() {
    let stock_db = cluster().fresh_database("rerun_stock").unwrap();
    let ours_db = cluster().fresh_database("rerun_ours").unwrap();
    let o = InitOptions {
        steps: "dtgvpf".into(),
        ..options(1)
    };
    assert!(run_stock(&stock_db, &o).status.success());
    for _ in 0..2 {
        let out = run_ours(&ours_db, &o);
        assert!(out.status.success(), "{}", stderr_text(&out));
    }
    // A data-only rerun over existing keys, as `-I g` does.
    let g = InitOptions {
        steps: "g".into(),
        ..options(1)
    };
    assert!(run_ours(&ours_db, &g).status.success());
    assert_eq!(schema(&stock_db), schema(&ours_db));
    assert_eq!(contents(&stock_db), contents(&ours_db));
}

/// `-j 2` gives the rows, schema and messages of a stock run without `-j`.
#[test]
fn parallel_jobs_same_result() {
    for (i, o) in [
        InitOptions {
            jobs: Some(2),
            ..options(3)
        },
        InitOptions {
            jobs: Some(2),
            steps: "dtgvpf".into(),
            partitions: 4,
            partition_method: PartitionMethod::Range,
            ..options(3)
        },
        InitOptions {
            jobs: Some(3),
            partitions: 2,
            partition_method: PartitionMethod::Hash,
            quiet: true,
            ..options(2)
        },
        InitOptions {
            jobs: Some(2),
            steps: "dtGvp".into(),
            ..options(2)
        },
    ]
    .iter()
    .enumerate()
    {
        let stock_db = cluster().fresh_database(&format!("jobs{i}_stock")).unwrap();
        let ours_db = cluster().fresh_database(&format!("jobs{i}_ours")).unwrap();
        let stock = run_stock(&stock_db, o);
        let ours = run_ours(&ours_db, o);
        assert!(stock.status.success());
        assert!(ours.status.success(), "{}", stderr_text(&ours));
        assert_eq!(
            normalize(&stderr_text(&stock)),
            normalize(&stderr_text(&ours))
        );
        assert_eq!(schema(&stock_db), schema(&ours_db));
        assert_eq!(contents(&stock_db), contents(&ours_db));
        // Vacuumed and analysed like stock's. Not compared: the frozen state (stock's
        // COPY FREEZE freezes accounts; several connections can't, see docs/init.md)
        // and all-visible bits (vacuum may set them only when no other session's
        // snapshot is older, which concurrent tests make a matter of timing).
        let maintained = "select c.relname, c.reltuples, s.last_analyze is not null,
                                 s.last_vacuum is not null
                            from pg_class c join pg_stat_user_tables s on s.relid = c.oid
                           where c.relname like 'pgbench%' order by c.relname";
        assert_eq!(
            cluster().psql(&stock_db, maintained).unwrap(),
            cluster().psql(&ours_db, maintained).unwrap()
        );
    }
}

/// The server terminates the loading backend: a clear error and exit 1, no hang.
#[test]
fn server_gone_mid_load() {
    for jobs in [None, Some(2)] {
        let db = cluster()
            .fresh_database(&format!("gone_{}", jobs.unwrap_or(1)))
            .unwrap();
        let o = InitOptions {
            jobs,
            steps: "dtg".into(),
            ..options(30)
        };
        let spec = encode(&db, &o);
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, spec);
        let killer_db = db.clone();
        let killer = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                let killed = cluster()
                    .psql(
                        "postgres",
                        &format!(
                            "select count(pg_terminate_backend(pid)) from pg_stat_activity \
                             where datname = '{killer_db}' and query like 'copy pgbench_accounts%' and state = 'active'"
                        ),
                    )
                    .unwrap_or_default();
                if killed.trim() != "0" && !killed.trim().is_empty() {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            false
        });
        let out = wait_with_timeout(cmd);
        assert!(killer.join().unwrap(), "never saw the COPY running");
        let err = stderr_text(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("pgbench: error: PQputline failed")
                || err.contains("pgbench: error: PQendcopy failed"),
            "{err}"
        );
        assert!(
            err.contains("terminating connection") || err.contains("server closed the connection"),
            "no reason given: {err}"
        );
    }
}

/// On a terminal the progress lines end in `\r` and the last one is followed by `\n`;
/// runs both under `script` (a pseudo-terminal), when it is installed.
#[test]
fn terminal_progress() {
    if Command::new("script").arg("--version").output().is_err() {
        crate::support::skip("script(1) is not installed");
        return;
    }
    let o = InitOptions {
        steps: "dtg".into(),
        ..options(3)
    };
    let c = cluster();
    let stock_db = c.fresh_database("tty_stock").unwrap();
    let ours_db = c.fresh_database("tty_ours").unwrap();
    let stock_cmd = format!(
        "{} -h {} -p {} -U {} {} {}",
        stock_pgbench().display(),
        c.socket_dir().display(),
        c.port(),
        c.user(),
        stock_args(&o).join(" "),
        stock_db
    );
    let ours_cmd = format!(
        "{} {CHILD_TEST} --exact --nocapture --test-threads=1 >/dev/null",
        std::env::current_exe().unwrap().display()
    );
    let in_pty = |cmd: &str, child_spec: Option<String>| {
        let mut script = Command::new("script");
        script.args(["-q", "-e", "-c", cmd, "/dev/null"]);
        if let Some(spec) = child_spec {
            script.env(CHILD_ENV, spec);
        }
        let out = wait_with_timeout(script);
        assert!(out.status.success(), "{}", stderr_text(&out));
        // The terminal turns "\n" into "\r\n"; progress lines keep their bare "\r".
        let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
        let masked: Vec<String> = text
            .split_inclusive(['\r', '\n'])
            .filter(|piece| piece.contains("tuples") || piece == &"\n")
            .map(|piece| match piece.find(" done (elapsed ") {
                Some(at) => format!("{}{}", &piece[..at], &piece[piece.len() - 1..]),
                None => piece.to_string(),
            })
            .collect();
        masked.concat()
    };
    let stock = in_pty(&stock_cmd, None);
    let ours = in_pty(&ours_cmd, Some(encode(&ours_db, &o)));
    assert_eq!(
        stock,
        "100000 of 300000 tuples (33%)\r200000 of 300000 tuples (66%)\r300000 of 300000 tuples (100%)\r\n"
    );
    assert_eq!(stock, ours);
}

/// A database that does not exist: libpq's line, then pgbench's, exit 1.
#[test]
fn connection_failure() {
    let o = options(1);
    let stock = run_stock("t_init_no_such_database", &o);
    let ours = run_ours("t_init_no_such_database", &o);
    assert_eq!(stock.status.code(), Some(1));
    assert_eq!(ours.status.code(), Some(1));
    assert_eq!(
        normalize(&stderr_text(&stock)),
        normalize(&stderr_text(&ours))
    );
    assert!(stderr_text(&ours)
        .ends_with("pgbench: error: could not create connection for initialization\n"));
}

/// `-I g` with `--partitions` on tables made without them: pgbench loads them anyway
/// (without FREEZE); so must `-j`, which therefore always COPYs through the parent.
#[test]
fn partition_options_on_plain_tables() {
    let stock_db = cluster().fresh_database("plain_parts_stock").unwrap();
    let ours_db = cluster().fresh_database("plain_parts_ours").unwrap();
    let tables = InitOptions {
        steps: "dt".into(),
        ..options(2)
    };
    for db in [&stock_db, &ours_db] {
        assert!(run_stock(db, &tables).status.success());
    }
    let g = InitOptions {
        steps: "gv".into(),
        partitions: 3,
        partition_method: PartitionMethod::Range,
        ..options(2)
    };
    let stock = run_stock(&stock_db, &g);
    let ours = run_ours(&ours_db, &InitOptions { jobs: Some(2), ..g });
    assert!(stock.status.success(), "{}", stderr_text(&stock));
    assert!(ours.status.success(), "{}", stderr_text(&ours));
    assert_eq!(
        normalize(&stderr_text(&stock)),
        normalize(&stderr_text(&ours))
    );
    assert_eq!(contents(&stock_db), contents(&ours_db));
}
