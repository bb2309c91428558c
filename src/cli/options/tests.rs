//! Option validation, case by case against what stock pgbench 15.20 prints (the cases
//! of pgbench's own `002_pgbench_no_server.pl` live in tests/cli.rs).

use super::*;
use crate::diagnostic::Diagnostic;
use pgbench_results::QueryMode;

struct TestEnv;

impl Env for TestEnv {
    fn var(&self, name: &str) -> Option<String> {
        match name {
            "PGUSER" => Some("tester".into()),
            _ => None,
        }
    }
    fn read_file(&self, path: &str) -> std::io::Result<String> {
        match path {
            "one.sql" => Ok("SELECT 1;\n".into()),
            "mix.toml" => Ok(MIX.into()),
            "sysbench.toml" => Ok(SYSBENCH_ONLY.into()),
            _ => Err(std::io::Error::from_raw_os_error(2)),
        }
    }
    fn os_user(&self) -> Option<String> {
        Some("os".into())
    }
    fn ensure_open_files(&self, need: u64) -> Result<(), crate::sys::LimitError> {
        match need {
            0..=1003 => Ok(()),
            _ => Err(crate::sys::LimitError::Hard(1024)),
        }
    }
}

fn parse(args: &[&str]) -> Result<Action, ConfigError> {
    crate::logging::init_progname("pgbench");
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    interpret("pgbench", &args, &TestEnv).outcome
}

fn error_of(args: &[&str]) -> String {
    match parse(args) {
        Err(f) => f.render("pgbench"),
        Ok(a) => panic!("{args:?} was accepted: {a:?}"),
    }
}

#[test]
fn numeric_options_use_option_parse_int_messages() {
    assert_eq!(
        error_of(&["-c", "0"]),
        "pgbench: error: -c/--client must be in range 1..2147483647\n"
    );
    assert_eq!(
        error_of(&["-c", "5x"]),
        "pgbench: error: invalid value \"5x\" for option -c/--client\n"
    );
    assert_eq!(
        error_of(&["-F", "5", "-i"]),
        "pgbench: error: -F/--fillfactor must be in range 10..100\n"
    );
    assert_eq!(
        error_of(&["-j", "99999999999"]),
        "pgbench: error: -j/--jobs must be in range 1..2147483647\n"
    );
    // Trailing white space is fine, as with strtol.
    assert!(parse(&["-c", "3 ", "-n"]).is_ok());
}

#[test]
fn mode_checks_and_their_order() {
    assert_eq!(
        error_of(&["-i", "-c", "2"]),
        "pgbench: error: some of the specified options cannot be used in initialization (-i) mode\n"
    );
    assert_eq!(
        error_of(&["--foreign-keys"]),
        "pgbench: error: some of the specified options cannot be used in benchmarking mode\n"
    );
    assert_eq!(
        error_of(&["-t", "1", "-T", "1"]),
        "pgbench: error: specify either a number of transactions (-t) or a duration (-T), not both\n"
    );
    assert_eq!(
        error_of(&["a", "b"]),
        "pgbench: error: too many command-line arguments (first is \"b\")\n\
         pgbench: hint: Try \"pgbench --help\" for more information.\n"
    );
    assert_eq!(
        error_of(&["-I", "xyz", "-i"]),
        "pgbench: error: unrecognized initialization step \"x\"\n\
         pgbench: detail: Allowed step characters are: \"dtgGvpf\".\n"
    );
    assert_eq!(
        error_of(&["--max-tries=0"]),
        "pgbench: error: an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)\n"
    );
    assert_eq!(
        error_of(&["-l", "--aggregate-interval=5", "-T", "3"]),
        "pgbench: error: number of seconds for aggregation (5) must not be higher than test duration (3)\n"
    );
}

#[test]
fn scripts_weights_and_defines() {
    assert_eq!(
        error_of(&["-b", "se@x"]),
        "pgbench: error: invalid weight specification: @x\n"
    );
    assert_eq!(
        error_of(&["-b", "se@-1"]),
        "pgbench: error: weight specification out of range (0 .. 2147483647): -1\n"
    );
    assert_eq!(
        error_of(&["-b", "se@0"]),
        "pgbench: error: total script weight must not be zero\n"
    );
    assert_eq!(
        error_of(&["-f", "/nonexist"]),
        "pgbench: error: could not open file \"/nonexist\": No such file or directory\n"
    );
    assert_eq!(
        error_of(&["-D", "1x=3"]),
        "pgbench: error: option: invalid variable name: \"1x\"\n"
    );
    assert_eq!(
        error_of(&["-D", "=3"]),
        "pgbench: error: invalid variable definition: \"=3\"\n"
    );
    let Ok(Action::Bench {
        plan: bench, conn, ..
    }) = parse(&["-f", "one.sql@3", "-S", "-D", "x=1"])
    else {
        panic!("not a benchmark");
    };
    assert_eq!(bench.scripts.len(), 2);
    assert_eq!(bench.scripts[0].weight, 3);
    assert_eq!(bench.defines, vec![("x".to_string(), "1".to_string())]);
    // No DBNAME and no PGDATABASE: PGUSER names the database.
    assert_eq!(conn.dbname, "tester");
}

#[test]
fn threads_are_capped_to_clients_and_rate_becomes_a_per_thread_delay() {
    let Ok(Action::Bench { plan, .. }) = parse(&["-c", "2", "-j", "8", "-R", "100"]) else {
        panic!("not a benchmark");
    };
    assert_eq!(plan.settings.threads, 2);
    assert_eq!(plan.settings.rate, Some(100.0));
    assert_eq!(plan.throttle_delay_us(), Some(20_000.0));
    assert_eq!(
        plan.settings.limit,
        pgbench_results::Limit::Transactions(10)
    );
}

#[test]
fn only_r_keeps_counters_per_command() {
    // #48: each client would keep a set per command of every script; only -r's lines
    // (and the statements it puts in a results file) read them.
    let keep = |args: &[&str]| match parse(args) {
        Ok(Action::Bench { plan, .. }) => plan.keep,
        other => panic!("{args:?}: {other:?}"),
    };
    assert!(!keep(&["-S"]).commands);
    assert!(!keep(&["-S", "--export-json=r.json", "--latency-percentiles"]).commands);
    assert!(keep(&["-S", "-r"]).commands);
    assert!(keep(&["-S", "--report-per-command"]).commands);
}

#[test]
fn the_open_files_check_names_the_limit_with_pgbench_hint() {
    assert_eq!(
        error_of(&["-c", "2000"]),
        "pgbench: error: need at least 2003 open files, but system limit is 1024\n\
         pgbench: hint: Reduce number of clients, or use limit/ulimit to increase the system limit.\n"
    );
}

#[test]
fn a_seed_is_announced_before_a_later_error_and_a_bad_one_says_where_it_came_from() {
    crate::logging::init_progname("pgbench");
    let args: Vec<String> = ["--random-seed=5", "-c", "0"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let i = interpret("pgbench", &args, &TestEnv);
    assert_eq!(i.notices, ["setting random seed to 5"]);
    assert!(i.outcome.is_err());
    assert_eq!(
        error_of(&["--random-seed=x"]),
        "pgbench: error: unrecognized random seed option \"x\"\n\
         pgbench: detail: Expecting an unsigned integer, \"time\" or \"rand\".\n\
         pgbench: error: error while setting random seed from --random-seed option\n"
    );
}

#[test]
fn init_mode_applies_no_vacuum_and_foreign_keys_to_the_steps() {
    let Ok(Action::Init { init, .. }) =
        parse(&["-i", "-n", "--foreign-keys", "-s", "3", "-j", "2"])
    else {
        panic!("not init");
    };
    assert_eq!(init.steps, "dtg pf");
    assert_eq!(init.scale, 3);
    assert_eq!(init.jobs, Some(2));
}

/// `--metrics-listen` serves a load's progress: `-i` (pgbench's, a workload's) takes
/// it and `--metrics-linger` as a run does.
#[test]
fn init_modes_take_the_metrics_endpoint() {
    let want = Some(crate::metrics::MetricsPlan {
        host: "127.0.0.1".into(),
        port: 9450,
        linger_s: 5,
    });
    let args = [
        "-i",
        "-s",
        "3",
        "--metrics-listen=9450",
        "--metrics-linger=5",
    ];
    assert!(matches!(parse(&args), Ok(Action::Init { metrics, .. }) if metrics == want));
    let args = [
        "-i",
        "--workload=tpcc",
        "--metrics-listen=9450",
        "--metrics-linger=5",
    ];
    assert!(matches!(parse(&args), Ok(Action::Prepare { metrics, .. }) if metrics == want));
    assert!(matches!(
        parse(&["-i", "--metrics-listen=9450"]),
        Ok(Action::Init { metrics: Some(m), .. }) if m.linger_s == crate::metrics::DEFAULT_LINGER_S
    ));
}

#[test]
fn worker_is_i_of_n_with_its_timeout_and_seed_rule() {
    let plan = |args: &[&str]| match parse(args) {
        Ok(Action::Bench { plan, .. }) => plan,
        other => panic!("{args:?}: {other:?}"),
    };
    let p = plan(&["--worker=2/3", "-c", "4", "-j", "2"]);
    let w = p.worker.clone().unwrap();
    assert_eq!((w.index, w.count, w.timeout_s), (2, 3, 60));
    assert!(!w.seed_given, "the clock's seed is not shared");
    assert_eq!((p.first_client(), p.first_thread()), (8, 4));
    let p = plan(&["--worker", "0/1", "--worker-timeout=5", "--random-seed=9"]);
    let w = p.worker.unwrap();
    assert_eq!(
        (w.index, w.count, w.timeout_s, w.seed_given),
        (0, 1, 5, true)
    );
    assert!(
        !plan(&["--worker=1/2", "--random-seed=rand"])
            .worker
            .unwrap()
            .seed_given
    );
    assert_eq!(plan(&["-c", "3"]).worker, None);
    assert_eq!(plan(&["-c", "3"]).first_client(), 0);
}

#[test]
fn metrics_listen_on_loopback_by_default_lingering_30_s() {
    use crate::metrics::MetricsPlan;
    let metrics = |args: &[&str]| match parse(args) {
        Ok(Action::Bench { plan, .. }) => plan.metrics,
        other => panic!("{args:?}: {other:?}"),
    };
    let m = |host: &str, port, linger_s| {
        Some(MetricsPlan {
            host: host.into(),
            port,
            linger_s,
        })
    };
    assert_eq!(
        metrics(&["--metrics-listen=9450"]),
        m("127.0.0.1", 9450, 30)
    );
    assert_eq!(
        metrics(&["--metrics-listen", "0.0.0.0:1", "--metrics-linger=0"]),
        m("0.0.0.0", 1, 0)
    );
    assert_eq!(metrics(&["-c", "2"]), None);
    assert_eq!(
        error_of(&["--metrics-listen=a:b"]),
        "pgbench: error: invalid value \"a:b\" for option --metrics-listen\n"
    );
}

#[test]
fn bad_worker_values_are_refused_with_what_is_expected() {
    let spec = "expecting I/N, this process's index I (0 to N-1) and the number of workers N";
    for bad in [
        "3",
        "1/",
        "/2",
        "a/b",
        "-1/2",
        "1/2/3",
        " 1/2",
        "1/2x",
        "99999999999/2",
    ] {
        assert_eq!(
            error_of(&[&format!("--worker={bad}")]),
            format!("pgbench: error: invalid value \"{bad}\" for option --worker: {spec}\n"),
        );
    }
    assert_eq!(
        error_of(&["--worker=0/0"]),
        "pgbench: error: invalid value \"0/0\" for option --worker: the number of workers N must be at least 1\n"
    );
    assert_eq!(
        error_of(&["--worker=3/3"]),
        "pgbench: error: invalid value \"3/3\" for option --worker: the worker index I must be less than N (it counts from 0)\n"
    );
    assert_eq!(
        error_of(&["--worker-timeout=0", "--worker=0/2"]),
        "pgbench: error: --worker-timeout must be in range 1..2147483647\n"
    );
    assert_eq!(
        error_of(&["--worker-timeout=3"]),
        "pgbench: error: --worker-timeout is allowed only under --worker\n"
    );
    assert_eq!(
        error_of(&["--worker=0/2", "--temp-instance"]),
        "pgbench: error: --worker cannot be used with --temp-instance: the workers of a run share one server\n"
    );
    assert_eq!(
        error_of(&["--worker=1/3000000", "-c", "1000"]),
        "pgbench: error: --worker=1/3000000 with -c 1000 makes more than 2147483647 clients in all\n"
    );
    // A benchmarking option: refused with -i, as pgbench refuses the others.
    assert_eq!(
        error_of(&["-i", "--worker=0/2"]),
        "pgbench: error: some of the specified options cannot be used in initialization (-i) mode\n"
    );
}

#[test]
fn workers_of_one_run_share_its_id_and_other_runs_do_not() {
    let id = |args: &[&str]| match parse(args) {
        Ok(Action::Bench { plan, .. }) => crate::bench::worker::run_id(&plan),
        other => panic!("{args:?}: {other:?}"),
    };
    let base = id(&["--worker=0/3", "-c", "2", "--random-seed=7"]);
    assert_eq!(base.len(), 16);
    assert!(base.bytes().all(|b| b.is_ascii_hexdigit()));
    // What each worker chooses for itself.
    for same in [
        &["--worker=2/3", "-c", "2", "--random-seed=7"][..],
        &[
            "--worker=1/3",
            "-c",
            "2",
            "--random-seed=7",
            "--worker-timeout=5",
        ],
        &[
            "--worker=1/3",
            "-c",
            "2",
            "--random-seed=7",
            "--export-json=w1.json",
            "-d",
        ],
    ] {
        assert_eq!(id(same), base, "{same:?}");
    }
    // Anything else.
    for other in [
        &["--worker=0/4", "-c", "2", "--random-seed=7"][..],
        &["--worker=0/3", "-c", "3", "--random-seed=7"],
        &["--worker=0/3", "-c", "2", "--random-seed=8"],
        &["--worker=0/3", "-c", "2", "--random-seed=7", "-D", "x=1"],
        &[
            "--worker=0/3",
            "-c",
            "2",
            "--random-seed=7",
            "-f",
            "one.sql",
        ],
        &["--worker=0/3", "-c", "2", "--random-seed=7", "-T", "10"],
    ] {
        assert_ne!(id(other), base, "{other:?}");
    }
    // An unnumbered seed is worker 0's, whatever each worker's clock says.
    let clock = id(&["--worker=0/3", "-c", "2"]);
    assert_eq!(
        id(&["--worker=2/3", "-c", "2", "--random-seed=time"]),
        clock
    );
    assert_ne!(clock, base);
}

#[test]
fn warmup_is_seconds_zero_meaning_none_and_a_benchmarking_option() {
    let warmup = |args: &[&str]| match parse(args) {
        Ok(Action::Bench { plan, .. }) => plan.phases.warmup_s,
        other => panic!("{args:?}: {other:?}"),
    };
    assert_eq!(warmup(&["-T", "5", "--warmup=10"]), Some(10));
    assert_eq!(warmup(&["--warmup", "0"]), None);
    assert_eq!(warmup(&[]), None);
    assert_eq!(
        error_of(&["--warmup=-1"]),
        "pgbench: error: --warmup must be in range 0..2147483647\n"
    );
    assert_eq!(
        error_of(&["--warmup=x"]),
        "pgbench: error: invalid value \"x\" for option --warmup\n"
    );
    assert_eq!(
        error_of(&["-i", "--warmup=3"]),
        "pgbench: error: some of the specified options cannot be used in initialization (-i) mode\n"
    );
}

#[test]
fn a_workloads_init_refuses_pgbench_table_options_instead_of_ignoring_them() {
    assert_eq!(
        error_of(&["-i", "--workload=tpcc", "-F", "90"]),
        "pgbench: error: -F/--fillfactor does not apply to -i --workload=tpcc, which creates its own tables\n"
    );
    assert_eq!(
        error_of(&["-i", "--workload=oltp_read_write", "--partitions=4"]),
        "pgbench: error: --partitions does not apply to -i --workload=oltp_read_write, which creates its own tables\n"
    );
    assert_eq!(
        error_of(&["-i", "--workload=tpcc", "--unlogged-tables"]),
        "pgbench: error: --unlogged-tables does not apply to -i --workload=tpcc, which creates its own tables\n"
    );
    // -q (the progress lines) and -j apply to a workload's load as to pgbench's.
    assert!(matches!(
        parse(&["-i", "--workload=tpcc", "-q", "-j", "2"]),
        Ok(Action::Prepare {
            how: crate::workload::PrepareOptions {
                quiet: true,
                jobs: 2,
                ..
            },
            ..
        })
    ));
}

/// #33: a workload ran in pgbench's simple protocol unless told, while sysbench and
/// HammerDB prepare their statements by default: forgetting `-M prepared` changed
/// what the server saw. A workload's default is its tool's; `-M` given wins.
#[test]
fn a_workload_runs_in_its_tools_query_mode_unless_m_is_given() {
    let mode = |args: &[&str]| match parse(args) {
        Ok(Action::Bench { plan, .. }) => plan.settings.query_mode,
        other => panic!("{args:?}: {other:?}"),
    };
    assert_eq!(mode(&["--workload=oltp_read_write"]), QueryMode::Prepared);
    assert_eq!(mode(&["--workload=tpcc"]), QueryMode::Prepared);
    assert_eq!(
        mode(&["-M", "simple", "--workload=oltp_point_select"]),
        QueryMode::Simple
    );
    assert_eq!(
        mode(&["--workload=oltp_read_write", "-M", "extended"]),
        QueryMode::Extended
    );
    // pgbench's own scripts keep pgbench's default.
    assert_eq!(mode(&["-S"]), QueryMode::Simple);
    // --show-script prints the script a run would use: unquoted, for parameters.
    match parse(&["--show-script=oltp_update_non_index"]) {
        Ok(Action::PrintAndExit(text)) => assert!(text.contains(" SET c=:c WHERE "), "{text}"),
        other => panic!("{other:?}"),
    }
}

/// #33: sysbench's `--tables=8` is read by getopt as a prefix of `--tablespace`; with a
/// workload, the error says so and what to write instead. Without one it is stock's
/// `--tablespace`.
#[test]
fn sysbench_tables_option_is_hinted_as_a_define() {
    let hint = "pgbench: hint: sysbench's --tables=8 is -D tables=8 here (its options are -D NAME=VALUE)\n";
    assert_eq!(
        error_of(&["--workload=oltp_read_write", "--tables=8", "-T", "10"]),
        format!(
            "pgbench: error: --tables=8 is read as --tablespace=8, which does not apply to \
             --workload=oltp_read_write\n{hint}"
        )
    );
    assert!(error_of(&["-i", "--workload=oltp_insert", "--tables", "8"]).ends_with(hint));
    // --tablespace itself, or no workload: pgbench's own messages.
    assert_eq!(
        error_of(&["--workload=oltp_insert", "--tablespace=8"]),
        "pgbench: error: some of the specified options cannot be used in benchmarking mode\n"
    );
    assert!(matches!(
        parse(&["-i", "--tables=8"]),
        Ok(Action::Init { init, .. }) if init.tablespace.as_deref() == Some("8")
    ));
}

#[test]
fn reconnect_rides_through_for_a_minute_unless_told_and_its_timeout_needs_it() {
    use crate::bench::plan::AvailabilityPlan;
    let availability = |args: &[&str]| match parse(args) {
        Ok(Action::Bench { plan, .. }) => plan.availability,
        other => panic!("{args:?}: {other:?}"),
    };
    assert_eq!(availability(&["-c", "2"]), None);
    assert_eq!(
        availability(&["--reconnect"]),
        Some(AvailabilityPlan {
            timeout_us: 60_000_000
        })
    );
    assert_eq!(
        availability(&["--reconnect-timeout=5", "--reconnect"]),
        Some(AvailabilityPlan {
            timeout_us: 5_000_000
        })
    );
    assert_eq!(
        error_of(&["--reconnect-timeout=5"]),
        "pgbench: error: --reconnect-timeout is allowed only under --reconnect\n"
    );
    assert!(
        error_of(&["--reconnect", "--reconnect-timeout=0"]).contains("--reconnect-timeout"),
        "{}",
        error_of(&["--reconnect", "--reconnect-timeout=0"])
    );
    // -C is pgbench's own --connect, apart from it.
    let plan = match parse(&["-C", "--reconnect"]) {
        Ok(Action::Bench { plan, .. }) => plan,
        other => panic!("{other:?}"),
    };
    assert!(plan.settings.reconnect && plan.availability.is_some());
}

#[test]
fn stages_make_the_runs_length_and_clients_and_bad_ones_are_refused() {
    use crate::bench::stages::StagePlan;
    let plan = |args: &[&str]| match parse(args) {
        Ok(Action::Bench { plan, .. }) => plan,
        other => panic!("{args:?}: {other:?}"),
    };
    let p = plan(&["-R", "100", "--rate-stages=6s:100,6s:500,6s:500", "-j", "2"]);
    assert_eq!(p.settings.limit, pgbench_results::Limit::Duration(18));
    assert_eq!(p.settings.rate, Some(100.0));
    assert!(matches!(&p.stages, Some(StagePlan::Rate(r)) if r.start == 100.0 && r.threads == 1));
    // Without -R the run is still a -R schedule, from 0.
    let p = plan(&["--rate-stages=1m:50", "-T", "60"]);
    assert_eq!(p.settings.rate, Some(0.0));
    // -c defaults to the largest target; given, it is where the first stage starts.
    let p = plan(&["--client-stages=5s:1,5s:4,5s:4", "-j", "2"]);
    assert_eq!((p.settings.clients, p.settings.threads), (4, 2));
    assert!(matches!(&p.stages, Some(StagePlan::Clients(c)) if c.start == 1.0));
    let p = plan(&["-c", "8", "--client-stages=5s:2"]);
    assert_eq!(p.settings.clients, 8);
    assert!(matches!(&p.stages, Some(StagePlan::Clients(c)) if c.start == 8.0));
    // A target above -c: the run connects the most, the first stage starts from -c.
    let p = plan(&["-c", "2", "--client-stages=3s:4,3s:1"]);
    assert_eq!(p.settings.clients, 4);
    assert!(matches!(&p.stages, Some(StagePlan::Clients(c)) if c.start == 2.0));
    assert_eq!(
        error_of(&["--rate-stages=5x:100"]),
        "pgbench: error: invalid value \"5x:100\" for option --rate-stages\n\
         pgbench: detail: stage 1 has an invalid duration \"5x\" (a whole number of seconds, with s, m or h: 30s, 5m)\n"
    );
    assert_eq!(
        error_of(&["--client-stages=5s:1,5s"]),
        "pgbench: error: invalid value \"5s:1,5s\" for option --client-stages\n\
         pgbench: detail: stage 2 \"5s\" is not DURATION:VALUE\n"
    );
    assert_eq!(
        error_of(&["--rate-stages=5s:1", "-T", "6"]),
        "pgbench: error: -T 6 is not the length of --rate-stages (5 s): its stages make the run's length, so give -T of that length or none\n"
    );
    assert_eq!(
        error_of(&["--rate-stages=5s:1", "-t", "6"]),
        "pgbench: error: --rate-stages cannot be combined with -t\n"
    );
    assert_eq!(
        error_of(&["--rate-stages=5s:1", "--client-stages=5s:1"]),
        "pgbench: error: --rate-stages cannot be combined with --client-stages\n"
    );
    assert_eq!(
        error_of(&["--rate-stages=5s:0"]),
        "pgbench: error: --rate-stages gives no load: every target is 0\n"
    );
    assert!(error_of(&["--client-stages=5s:1001"])
        .starts_with("pgbench: error: need at least 1004 open files, but system limit is 1024\n"));
    assert_eq!(
        error_of(&["-i", "--rate-stages=5s:3"]),
        "pgbench: error: some of the specified options cannot be used in initialization (-i) mode\n"
    );
}

/// A scenarios file of a builtin, a file and a builtin by weight, and a workload.
const MIX: &str = r#"
[[scenario]]
name = "reads"
script = "select-only"
clients = 2
conninfo = "host=/tmp port=5651,5652 target_session_attrs=standby"

[[scenario]]
name = "writes"
script = ["one.sql", "tpcb-like"]
weight = [3, 1]
clients = 3
threads = 2
rate = 50

[[scenario]]
name = "sysbench"
script = "oltp_point_select"
clients = 1
"#;

#[test]
fn a_scenarios_file_becomes_groups_of_the_plans_scripts_clients_and_threads() {
    let plan = match parse(&["--scenarios=mix.toml", "-T", "10", "-M", "prepared"]) {
        Ok(Action::Bench { plan, .. }) => plan,
        other => panic!("{other:?}"),
    };
    let s = &plan.scenarios;
    assert_eq!(s.len(), 3);
    assert_eq!((s[0].scripts.clone(), s[1].scripts.clone()), (0..1, 1..3));
    assert_eq!(s[2].scripts.start, 3);
    assert_eq!(s[2].scripts.end, plan.scripts.len());
    assert_eq!(plan.scripts[0].script.desc, "<builtin: select only>");
    assert_eq!(
        plan.scripts[1..3]
            .iter()
            .map(|w| w.weight)
            .collect::<Vec<_>>(),
        [3, 1]
    );
    assert_eq!((plan.settings.clients, plan.settings.threads), (6, 4));
    assert_eq!(
        (s[1].rate, s[0].rate, plan.settings.rate),
        (Some(50.0), None, None)
    );
    assert!(s[0].conninfo.as_deref().unwrap().contains("standby"));
    assert!(plan.builtin_used && plan.keep.histograms);
    let labels = plan.metric_labels();
    assert_eq!(labels.scenarios.len(), plan.scripts.len());
    assert_eq!(
        (labels.scenarios[0].as_str(), labels.scenarios[2].as_str()),
        ("reads", "writes")
    );
    // What a scenario says for itself is refused on the command line.
    assert_eq!(
        error_of(&["--scenarios=mix.toml", "-f", "one.sql"]),
        "pgbench: error: --scenarios cannot be combined with -b, -f, -S or -N (each scenario's script)\n"
    );
    assert!(error_of(&["--scenarios=none.toml"])
        .contains("could not read scenarios file \"none.toml\": No such file or directory"));
}

/// Two sysbench scenarios: no pgbench script among them.
const SYSBENCH_ONLY: &str = r#"
[[scenario]]
name = "points"
script = "oltp_point_select"
clients = 1

[[scenario]]
name = "writes"
script = "oltp_write_only"
clients = 2
"#;

/// A workload in a scenario runs as under `--workload`: sysbench's statements
/// prepared and no vacuum of pgbench's tables; scenarios that want different query
/// modes need `-M` to say which.
#[test]
fn a_scenarios_workload_runs_as_its_tool_runs_it() {
    let plan = match parse(&["--scenarios=sysbench.toml", "-T", "10"]) {
        Ok(Action::Bench { plan, .. }) => plan,
        other => panic!("{other:?}"),
    };
    assert_eq!(plan.settings.query_mode, QueryMode::Prepared);
    assert_eq!(plan.vacuum, crate::bench::plan::Vacuum::Skip);
    assert_eq!(
        error_of(&["--scenarios=mix.toml", "-T", "10"]),
        "pgbench: error: mix.toml:18: key \"script\": scenario \"reads\" runs in simple mode \
         and scenario \"sysbench\" in prepared mode (a workload's, as its tool runs it): give -M \
         to run them all in one\n"
    );
    let plan = match parse(&["--scenarios=mix.toml", "-T", "10", "-M", "simple"]) {
        Ok(Action::Bench { plan, .. }) => plan,
        other => panic!("{other:?}"),
    };
    assert_eq!(plan.settings.query_mode, QueryMode::Simple);
    assert_eq!(plan.vacuum, crate::bench::plan::Vacuum::Default);
}

#[test]
fn os_threads_takes_a_positive_count() {
    let plan = |args: &[&str]| match parse(args) {
        Ok(Action::Bench { plan, .. }) => plan,
        other => panic!("{args:?}: {other:?}"),
    };
    assert_eq!(plan(&["-c", "8", "-j", "8"]).os_threads, None);
    assert_eq!(
        plan(&["-c", "8", "-j", "8", "--os-threads=2"]).os_threads,
        Some(2)
    );
    assert_eq!(
        error_of(&["--os-threads=0"]),
        "pgbench: error: --os-threads must be in range 1..2147483647\n"
    );
    assert_eq!(
        error_of(&["--os-threads=x"]),
        "pgbench: error: invalid value \"x\" for option --os-threads\n"
    );
}
