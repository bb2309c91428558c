//! HammerDB's output read back, compared with a `--workload=tpcc` run.

use super::*;
use crate::compare::{compare, Figure, Side};
use crate::document::{ResultsFile, RunMeta};
use crate::import::{import, Inputs};
use crate::synthetic::{run, Spec};

/// A `hammerdbcli` capture of a PostgreSQL TPROC-C run (`vuset vu 4`, rampup 1,
/// duration 3, `pg_timeprofile true`) with the time profile file appended
/// (`hammerdbcli auto run.tcl > run.log; cat /tmp/hdbxtprofile.log >> run.log`).
/// HammerDB cannot run here (no Tcl), so the lines are written from its source
/// (TPC-Council/HammerDB, master, under its src folder but for modules): the banner
/// from `hammerdbcli` (`HammerDB CLI $hdb_version`, the copyright, the help hint);
/// `Vuser N created ... - WAIT IDLE`, `N Virtual Users Created with Monitor VU`, `Vuser
/// N:RUNNING`, `Vuser N:FINISHED SUCCESS` and `ALL VIRTUAL USERS COMPLETE` from
/// generic/gencli.tcl (a virtual user's output is prefixed `Vuser N:` by its `Log`);
/// `DBVersion:`, `Beginning rampup time of`, `Rampup 1 minutes complete ...`, `Rampup
/// complete, Taking start Transaction Count.`, `Timing test period of 3 in minutes`,
/// `Test complete, ...`, `4 Active Virtual Users configured` and `Processing ...
/// transactions with output suppressed...` from postgresql/pgoltp.tcl (the minute ticks
/// it prints without a newline are left out); `TEST RESULT : System achieved N NOPM
/// from M PostgreSQL TPM` from modules/tpcccommon-1.0.tm (`testresult`); the profiler's
/// lines and the report (`>>>>> VIRTUAL USER`, `>>>>> SUMMARY OF`, `>>>>> PROC:`, the
/// tab-separated `CALLS:` and `P99:` lines) from modules/xtprof-1.0.tm. The figures are
/// this machine's own TPC-C result (benches/README.md: 26,275 NOPM from 61,185 TPM).
const RUN_LOG: &str = "HammerDB CLI v4.12
Copyright © HammerDB Ltd hosted by tpc.org 2019-2024
Type \"help\" for a list of commands
Vuser 1 created MONITOR - WAIT IDLE
Vuser 2 created - WAIT IDLE
Vuser 3 created - WAIT IDLE
Vuser 4 created - WAIT IDLE
Vuser 5 created - WAIT IDLE
5 Virtual Users Created with Monitor VU
Vuser 1:RUNNING
Vuser 1:Initializing xtprof time profiler
Vuser 1:DBVersion:15.18 (Debian 15.18-0+deb12u1)
Vuser 1:Beginning rampup time of 1 minutes
Vuser 2:RUNNING
Vuser 2:Initializing xtprof time profiler
Vuser 2:Processing 10000000 transactions with output suppressed...
Vuser 3:RUNNING
Vuser 3:Initializing xtprof time profiler
Vuser 3:Processing 10000000 transactions with output suppressed...
Vuser 1:Rampup 1 minutes complete ...
Vuser 1:Rampup complete, Taking start Transaction Count.
Vuser 1:Timing test period of 3 in minutes
Vuser 1:Test complete, Taking end Transaction Count.
Vuser 1:4 Active Virtual Users configured
Vuser 1:TEST RESULT : System achieved 26275 NOPM from 61185 PostgreSQL TPM
Vuser 1:Gathering timing data from Active Virtual Users...
Vuser 1:Calculating timings...
Vuser 1:Writing timing data to /tmp/hdbxtprofile.log
Vuser 1:FINISHED SUCCESS
Vuser 2:FINISHED SUCCESS
Vuser 3:FINISHED SUCCESS
ALL VIRTUAL USERS COMPLETE
PostgreSQL Hammerdb Time Profile Report @ Tue Dec 01 23:40:00 UTC 2026
+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
>>>>> VIRTUAL USER 2 : ELAPSED TIME : 180204ms
>>>>> PROC: NEWORD
CALLS: 13121\tMIN: 0.822ms\tAVG: 3.052ms\tMAX: 118.903ms\tTOTAL: 40045.298ms
P99: 9.902ms\tP95: 6.133ms\tP75: 3.711ms\tP50: 2.620ms\tP25: 1.930ms\tSD: 2.318ms\tRATIO: 44.412%
+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
>>>>> SUMMARY OF 4 ACTIVE VIRTUAL USERS : MEDIAN ELAPSED TIME : 180205ms
>>>>> PROC: NEWORD
CALLS: 52547\tMIN: 0.812ms\tAVG: 3.041ms\tMAX: 120.311ms\tTOTAL: 159812.117ms
P99: 9.880ms\tP95: 6.120ms\tP75: 3.702ms\tP50: 2.611ms\tP25: 1.921ms\tSD: 2.301ms\tRATIO: 44.301%
>>>>> PROC: PAYMENT
CALLS: 50310\tMIN: 0.402ms\tAVG: 1.507ms\tMAX: 96.550ms\tTOTAL: 75819.170ms
P99: 5.711ms\tP95: 3.390ms\tP75: 1.822ms\tP50: 1.201ms\tP25: 0.861ms\tSD: 1.402ms\tRATIO: 21.017%
+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
";

#[test]
fn a_hammerdb_capture_reads_its_result_users_times_and_profile() {
    assert!(is_hammerdb(RUN_LOG));
    assert!(!is_hammerdb(
        "pgbench (15.18)\ntransaction type: <builtin: TPC-B (sort of)>\n"
    ));
    let h = parse("run.log", RUN_LOG).unwrap();
    let s = &h.summary;
    assert_eq!(
        (s.workload.tpcc.nopm, s.workload.tpcc.tpm),
        (Some(26_275), Some(61_185))
    );
    assert_eq!((s.clients, s.duration_s), (Some(4), Some(180)));
    assert_eq!(h.banner.client.as_deref(), Some("HammerDB v4.12"));
    assert_eq!(
        h.banner.server.as_deref(),
        Some("15.18 (Debian 15.18-0+deb12u1)")
    );
    assert_eq!(h.options["warmup"], 60);
    assert_eq!(h.options["time"], 180);
    assert_eq!(h.options["client"], 4);
    // The summary of all users, not virtual user 2's block before it.
    let names: Vec<&str> = s.scripts.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["neword", "payment"]);
    let neword = &s.scripts[0];
    assert_eq!(neword.transactions, Some(52_547));
    assert_eq!(
        (neword.latency_avg_ms, neword.latency_stddev_ms),
        (Some(3.041), Some(2.301))
    );
    let p = neword.percentiles.as_ref().unwrap();
    assert_eq!(p.max_ms, 120.311);
    assert_eq!(
        p.values,
        [
            (25.0, 1.921),
            (50.0, 2.611),
            (75.0, 3.702),
            (95.0, 6.12),
            (99.0, 9.88)
        ]
    );
    // The other order of testresult's figures (`first_result` TPM).
    let tpm_first = RUN_LOG.replace(
        "26275 NOPM from 61185 PostgreSQL TPM",
        "61185 PostgreSQL TPM at 26275 NOPM",
    );
    let s = parse("run.log", &tpm_first).unwrap().summary;
    assert_eq!(
        (s.workload.tpcc.nopm, s.workload.tpcc.tpm),
        (Some(26_275), Some(61_185))
    );
    let broken = RUN_LOG.replace("26275 NOPM from", "many NOPM from");
    assert_eq!(
        parse("run.log", &broken).unwrap_err().to_string(),
        "run.log:25: cannot read this TEST RESULT line"
    );
}

#[test]
fn a_hammerdb_import_compares_with_a_tpcc_run_on_nopm_and_tpm() {
    let imported = import(&Inputs {
        report: ("run.log".to_string(), RUN_LOG.to_string()),
        ..Inputs::default()
    })
    .unwrap();
    assert_eq!(imported.client_version.as_deref(), Some("HammerDB v4.12"));
    assert_eq!(imported.options["workload"], "tpcc");
    // A 60-second --workload=tpcc run whose server counted 25,000 new orders and
    // 60,000 transactions: 25,000 NOPM from 60,000 TPM.
    let mut r = run(&Spec::tpcb(1, 60, 500.0, 2000.0));
    let tpcc = crate::workload::tpcc::TpccResult {
        new_orders_committed: 25_000,
        server: Some(crate::workload::tpcc::ServerCounts {
            transactions: 60_000,
            new_orders: 25_000,
            backends_left: 0,
        }),
        profile: Vec::new(),
        server_lost: None,
        layout: Default::default(),
    };
    let (nopm, tpm) = crate::workload::tpcc::report::nopm_tpm(&r, &tpcc).unwrap();
    r.workload = Some(crate::workload::WorkloadResult::Tpcc(tpcc));
    assert!((24_900..=25_000).contains(&nopm), "{nopm}");
    let ours = ResultsFile::from_run(r, RunMeta::default());
    let sides = [
        Side {
            label: "hammerdb".into(),
            runs: vec![imported],
        },
        Side {
            label: "pgbench-rs".into(),
            runs: vec![ours],
        },
    ];
    let c = compare(&sides).unwrap();
    let row = |f: Figure| c.rows.iter().find(|r| r.figure == f).unwrap();
    assert_eq!(
        row(Figure::Nopm).values,
        [Some(26_275.0), Some(nopm as f64)]
    );
    assert_eq!(row(Figure::Tpm).values, [Some(61_185.0), Some(tpm as f64)]);
    let table = crate::compare::render_table(&c);
    assert!(table.lines().any(|l| l.starts_with("NOPM ")), "{table}");
}

/// #38: negative NOPM (which `compare` then called -200%), 4,294,967,295 virtual
/// users and a 999,999,999,999-minute test were imported as they stood.
#[test]
fn implausible_figures_are_refused_with_their_line() {
    for (from, to, want) in [
        (
            "26275 NOPM from",
            "-26275 NOPM from",
            "run.log:25: NOPM is -26275, not a count HammerDB prints",
        ),
        (
            "from 61185 PostgreSQL",
            "from -61185 PostgreSQL",
            "run.log:25: TPM is -61185, not a count HammerDB prints",
        ),
        (
            "Vuser 1:4 Active Virtual Users",
            "Vuser 1:4294967295 Active Virtual Users",
            "run.log:24: active virtual users is 4294967295, not a count HammerDB prints",
        ),
        (
            "Timing test period of 3 in minutes",
            "Timing test period of 999999999999 in minutes",
            "run.log:22: test period is 59999999999940 s, longer than any run",
        ),
        (
            "rampup time of 1 minutes",
            "rampup time of nan minutes",
            "run.log:13: rampup time is NaN, not a figure HammerDB prints",
        ),
        (
            "CALLS: 52547\tMIN",
            "CALLS: -52547\tMIN",
            "run.log:42: CALLS is -52547, not a count HammerDB prints",
        ),
        (
            "AVG: 3.041ms",
            "AVG: infms",
            "run.log:42: AVG is inf, not a figure HammerDB prints",
        ),
        (
            "P99: 9.880ms",
            "P99: -9.880ms",
            "run.log:43: P99 is -9.88, not a figure HammerDB prints",
        ),
    ] {
        assert!(RUN_LOG.contains(from), "{from}");
        let e = parse("run.log", &RUN_LOG.replace(from, to))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(want), "{to}: {e}");
    }
}

/// A real capture of HammerDB 4.12 (`hammerdb.sh run` of `../shared/tools/hammerdb/`,
/// 8 virtual users, rampup 0, duration 1, against PostgreSQL 15.20) with its
/// `hdbxtprofile.log` appended; its temporary directory's path shortened to `/tmp/`.
/// pg_stat_statements counted 112,242 calls of `neword` in that run.
const RUN_4_12: &str = include_str!("../../../../tests/data/hammerdb/4.12-run.log");

#[test]
fn hammerdb_4_12s_doubled_calls_and_sd_in_microseconds_are_undone() {
    let h = parse("run.log", RUN_4_12).unwrap();
    assert_eq!(h.banner.client.as_deref(), Some("HammerDB v4.12"));
    let s = &h.summary;
    assert_eq!(
        (s.workload.tpcc.nopm, s.workload.tpcc.tpm),
        (Some(111_904), Some(254_916))
    );
    let names: Vec<&str> = s.scripts.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["neword", "payment", "delivery", "slev", "ostat"]);
    // The summary says 224,484: each call twice. Its virtual users' blocks and the
    // server say 112,242.
    let neword = &s.scripts[0];
    assert_eq!(neword.transactions, Some(112_242));
    assert_eq!(neword.percentiles.as_ref().unwrap().count, 112_242);
    // `SD: 1529.198` is µs.
    assert_eq!(neword.latency_stddev_ms, Some(1.529198));
    assert_eq!(neword.latency_avg_ms, Some(1.814));
    // The counts cover the ramp-up (none here) and the timed minute.
    assert_eq!(h.options["warmup"], 0);
    assert_eq!(h.options["time_profile_s"], 60);
    // HammerDB 6's layout (SD in ms) is read as it is, even under another banner.
    let six = parse("run.log", RUN_LOG).unwrap();
    assert_eq!(six.summary.scripts[0].transactions, Some(52_547));
    assert_eq!(six.summary.scripts[0].latency_stddev_ms, Some(2.301));
    assert_eq!(six.options["time_profile_s"], 240);
}
