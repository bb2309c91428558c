//! The registry and what each workload tells a run, as the closed list of workloads
//! told them.

use super::*;
use pgbench_results::QueryMode;

fn defines(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

fn configure(name: &str, pairs: &[(&str, &str)]) -> Arc<dyn Workload> {
    find(name).unwrap().configure(&defines(pairs)).unwrap()
}

#[test]
fn the_registry_names_every_workload_in_the_order_lists_show_them() {
    let all = "oltp_read_write, oltp_read_only, oltp_write_only, oltp_point_select, \
               oltp_insert, oltp_delete, oltp_update_index, oltp_update_non_index, \
               select_random_points, select_random_ranges, tpcc";
    assert_eq!(names().join(", "), all);
    assert_eq!(
        help_list(),
        "sysbench's oltp_* tests, HammerDB's TPC-C (tpcc)"
    );
    for name in names() {
        let chosen = find(name).unwrap();
        assert_eq!(chosen.name(), name);
        assert_eq!(chosen.configure(&[]).unwrap().name(), name);
    }
    assert_eq!(
        find("oltp").unwrap_err().to_string(),
        format!("unknown workload \"oltp\"; known workloads: {all}")
    );
}

#[test]
fn each_workload_runs_as_its_tool_does() {
    let policy = |name: &str, pairs: &[(&str, &str)]| configure(name, pairs).policy();
    let tool = |query_mode, continue_on_error| RunPolicy {
        query_mode: Some(query_mode),
        continue_on_error,
        keep_histograms: true,
        skip_vacuum: true,
    };
    for name in names().into_iter().filter(|n| *n != "tpcc") {
        assert_eq!(policy(name, &[]), tool(QueryMode::Prepared, true), "{name}");
    }
    assert_eq!(policy("tpcc", &[]), tool(QueryMode::Prepared, true));
    let procs = policy("tpcc", &[("storedprocs", "1")]);
    assert_eq!(procs, tool(QueryMode::Simple, true));
    let raise = policy("tpcc", &[("raiseerror", "1")]);
    assert_eq!(raise, tool(QueryMode::Prepared, false));
    let spec = policy("tpcc", &[("mode", "spec")]);
    assert_eq!(spec, tool(QueryMode::Prepared, false));
}

/// `--worker`'s run id is a digest of the plan's `Debug`: a workload's options are
/// in it.
#[test]
fn a_configured_workload_shows_its_options_in_its_debug() {
    let debug = |name: &str, pairs: &[(&str, &str)]| format!("{:?}", configure(name, pairs));
    let tables = debug("oltp_read_only", &[("tables", "8")]);
    assert!(tables.contains("tables: 8"), "{tables}");
    assert_ne!(tables, debug("oltp_read_only", &[]));
    assert_ne!(debug("oltp_read_only", &[]), debug("oltp_write_only", &[]));
    assert_ne!(debug("tpcc", &[]), debug("tpcc", &[("allwarehouse", "1")]));
}

#[test]
fn scripts_and_show_script_come_from_the_workload() {
    let ctx = ScriptContext {
        query_mode: QueryMode::Prepared,
        clients: 2,
        workers: 1,
    };
    let sb = configure("oltp_point_select", &[]);
    let scripts = sb.scripts(ctx);
    assert_eq!(scripts.len(), 1);
    assert_eq!(scripts[0].description, "<workload: oltp_point_select>");
    assert_eq!(scripts[0].text, sb.script_text(ctx));
    let tpcc = configure("tpcc", &[]);
    let shown = tpcc.script_text(ctx);
    for s in tpcc.scripts(ctx) {
        assert!(s.untimed_sleeps && shown.contains(&s.text), "{}", s.name);
    }
}
