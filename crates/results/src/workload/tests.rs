//! A workload's part of a result in a results file: under its key in `run`, where
//! the two fields of each workload were, and its figures in `summary`.

use super::sysbench::{QueryCounts, SysbenchSummary};
use super::tpcc::{ServerCounts, TpccResult};
use super::*;
use crate::run::RunResult;
use crate::summary::Summary;
use crate::synthetic::{run, Spec};

fn tpcc() -> WorkloadResult {
    WorkloadResult::Tpcc(TpccResult {
        new_orders_committed: 1_000,
        server: Some(ServerCounts {
            transactions: 6_000,
            new_orders: 1_002,
            backends_left: 0,
        }),
        profile: vec![(0, "neword".into())],
        server_lost: None,
        layout: Default::default(),
    })
}

fn sysbench() -> WorkloadResult {
    WorkloadResult::Sysbench(SysbenchSummary {
        percentile: 95,
        queries: QueryCounts {
            read: 14,
            write: 4,
            other: 2,
            errors: 1,
            reconnects: 0,
        },
        tables: Some(2),
        table_size: Some(1_000),
    })
}

/// A 60 s run with `part`.
fn with(part: Option<WorkloadResult>) -> RunResult {
    let mut r = run(&Spec::tpcb(1, 60, 50.0, 1000.0));
    r.workload = part;
    r
}

/// Where `key` is in the run's JSON text.
fn at(json: &str, key: &str) -> usize {
    json.find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("no {key} in {json}"))
}

#[test]
fn a_workloads_part_is_its_key_in_run_where_its_field_was() {
    for (key, part) in [("tpcc", tpcc()), ("sysbench", sysbench())] {
        let r = with(Some(part.clone()));
        let json = serde_json::to_string(&r).unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let inner = match &part {
            WorkloadResult::Tpcc(t) => serde_json::to_value(t).unwrap(),
            WorkloadResult::Sysbench(s) => serde_json::to_value(s).unwrap(),
        };
        assert_eq!(value[key], inner, "{key}");
        assert_eq!(part.key(), key);
        // Between the series and how the run ended, as the two fields were.
        assert!(at(&json, "series") < at(&json, key), "{json}");
        assert!(at(&json, key) < at(&json, "ended"), "{json}");
        let back: RunResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r, "{key}");
        assert_eq!(serde_json::to_string(&back).unwrap(), json, "{key}");
    }
    let none = serde_json::to_string(&with(None)).unwrap();
    assert!(!none.contains("\"tpcc\"") && !none.contains("\"sysbench\""));
    assert_eq!(
        serde_json::from_str::<RunResult>(&none).unwrap().workload,
        None
    );
}

/// A section of `null` is none, a key no workload has is ignored, a section that
/// does not read is an error (not a run without its part).
#[test]
fn a_null_section_is_none_and_a_broken_one_an_error() {
    let json = serde_json::to_string(&with(None)).unwrap();
    let put = |extra: &str| json.replacen('{', &format!("{{{extra},"), 1);
    let read = |text: &str| serde_json::from_str::<RunResult>(text);
    assert_eq!(read(&put("\"tpcc\":null")).unwrap().workload, None);
    assert_eq!(read(&put("\"sysbench\":null")).unwrap().workload, None);
    assert_eq!(read(&put("\"later\":{\"a\":[1]}")).unwrap(), with(None));
    let broken = read(&put("\"tpcc\":{\"new_orders_committed\":\"many\"}"));
    assert!(broken.is_err(), "{broken:?}");
    let broken = read(&put("\"sysbench\":[]"));
    assert!(broken.is_err(), "{broken:?}");
}

#[test]
fn the_summary_holds_nopm_and_tpm_where_they_were_for_tpcc_only() {
    let s = Summary::from_run(&with(Some(tpcc())));
    assert_eq!(
        (s.workload.tpcc.nopm, s.workload.tpcc.tpm),
        (Some(1_002), Some(6_000))
    );
    let json = serde_json::to_string(&s).unwrap();
    assert!(json.ends_with(",\"nopm\":1002,\"tpm\":6000}"), "{json}");
    assert_eq!(serde_json::from_str::<Summary>(&json).unwrap(), s);
    for other in [None, Some(sysbench())] {
        let s = Summary::from_run(&with(other));
        assert_eq!(s.workload, SummaryFigures::default());
        let json = serde_json::to_string(&s).unwrap();
        assert!(!json.contains("nopm") && !json.contains("tpm"), "{json}");
    }
}

/// The merge's rule: TPC-C's counts add up (worker 0's server counts are the whole
/// run's), so do sysbench's queries; a lost count makes the run's lost; parts of
/// different workloads do not add, and say so.
#[test]
fn parts_merge_and_say_what_was_lost() {
    let mut a = tpcc();
    let WorkloadResult::Tpcc(mut lost) = tpcc() else {
        unreachable!()
    };
    lost.server = None;
    lost.server_lost = Some("gone".into());
    a.merge(&WorkloadResult::Tpcc(lost)).unwrap();
    let WorkloadResult::Tpcc(t) = &a else {
        unreachable!()
    };
    assert_eq!(t.new_orders_committed, 2_000);
    assert_eq!(t.server.map(|s| s.new_orders), Some(1_002));
    assert_eq!(a.lost(), Some("gone"));
    let mut s = sysbench();
    s.merge(&sysbench()).unwrap();
    let (WorkloadResult::Sysbench(twice), WorkloadResult::Sysbench(once)) = (&s, sysbench()) else {
        unreachable!()
    };
    let mut doubled = once.queries;
    doubled.add(&once.queries);
    assert_eq!(twice.queries, doubled);
    assert_eq!(s.lost(), None);
    assert_eq!(s.merge(&tpcc()), Err("the workers ran different workloads"));
}
