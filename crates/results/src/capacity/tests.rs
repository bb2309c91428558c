//! Files of steps built from synthetic runs: they read back equal and validate
//! against the schema, `show` prints the steps then the peak's report, two sweeps
//! compare point by point, workers' sweeps merge step by step, a search's lines say
//! what it found.

use super::*;
use crate::document::tests::{assert_valid, validator};
use crate::document::{RunMeta, WorkerInfo};
use crate::synthetic::{run, Spec};

/// A step's run: `clients` clients at `tps`, 10 s.
fn step_file(clients: usize, tps: f64, seed: u64, worker: Option<WorkerInfo>) -> ResultsFile {
    let mut spec = Spec::tpcb(seed, 60, tps, 1000.0 * clients as f64);
    spec.settings.clients = clients;
    spec.settings.threads = clients.min(2);
    let meta = RunMeta {
        random_seed: 7,
        started_unix_us: 1_764_583_200_000_000,
        ended_unix_us: 1_764_583_210_000_000,
        worker,
        ..Default::default()
    };
    ResultsFile::from_run(run(&spec), meta)
}

fn sweep_capacity(values: &[&str], repeat: u32) -> Capacity {
    Capacity {
        kind: Kind::Sweep,
        parameter: "clients".into(),
        values: values.iter().map(|v| v.to_string()).collect(),
        repeat,
        search: None,
        found: None,
        representative: None,
        stopped: None,
    }
}

/// A sweep of clients whose tps at each value is `tps(clients)`, in rounds.
fn sweep(values: &[usize], repeat: u32, tps: impl Fn(usize, u32) -> f64) -> ResultsFile {
    let texts: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    let mut capacity = sweep_capacity(
        &texts.iter().map(String::as_str).collect::<Vec<_>>(),
        repeat,
    );
    let mut steps = Vec::new();
    for round in 1..=repeat {
        for &c in values {
            let n = steps.len() as u32 + 1;
            steps.push(Step {
                step: n,
                value: c.to_string(),
                round,
                role: None,
                verdict: None,
                file: step_file(c, tps(c, round), u64::from(n), None),
            });
        }
    }
    capacity.representative = peak_step(&capacity, &steps);
    let mut doc = steps
        .iter()
        .find(|s| Some(s.step) == capacity.representative)
        .unwrap()
        .file
        .clone();
    doc.capacity = Some(capacity);
    doc.steps = steps;
    doc
}

#[test]
fn a_sweep_reads_back_equal_validates_and_shows_its_steps_then_the_peaks_report() {
    let doc = sweep(&[1, 2, 4, 8], 1, |c, _| {
        [250.0, 480.0, 600.0, 800.0][c.trailing_zeros() as usize]
    });
    let json = doc.to_json();
    assert_valid(&validator(), "sweep", &json);
    let back = ResultsFile::from_json(&json).unwrap();
    assert_eq!(back, doc);
    assert_eq!(back.schema, 5);
    let shown = crate::show::render(&back);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines[0],
        "sweep of clients over 1, 2, 4, 8: 4 steps (each 60 s)"
    );
    assert_eq!(
        lines[1],
        "step  clients         tps     p50 ms     p99 ms    failed  warnings"
    );
    assert!(lines[2].starts_with(" 1/4        1       "), "{}", lines[2]);
    // The knee: 2 adds 230 tps a client against 250 at 1; 4 adds 110, under half.
    let closing = lines.iter().find(|l| l.starts_with("peak:")).unwrap();
    assert!(
        closing.ends_with("at clients=8; knee: clients=2"),
        "{closing}"
    );
    let heading = shown
        .find("report of step 4 (clients=8, the peak):\npgbench (15.")
        .unwrap();
    assert!(
        shown[heading..].contains("number of clients: 8\n"),
        "{shown}"
    );
    // The top level is the peak's run: a reader that knows nothing of steps reads it.
    assert_eq!(back.summary.clients, Some(8));
}

#[test]
fn repeated_values_have_a_mean_and_an_interval_and_a_text_value_keeps_its_order() {
    let doc = sweep(&[1, 2], 3, |c, round| 100.0 * c as f64 + f64::from(round));
    let c = curve::curve(doc.capacity.as_ref().unwrap(), &doc.steps);
    let tps = c.points[1].tps.unwrap();
    assert_eq!(tps.n, 3);
    assert!(tps.low.unwrap() < tps.mean && tps.mean < tps.high.unwrap());
    assert_eq!(c.points[1].steps, vec![2, 4, 6]);
    let shown = table::render(doc.capacity.as_ref().unwrap(), &doc.steps);
    assert!(shown.starts_with("sweep of clients over 1, 2, each value 3 times in rounds: 6 steps"));
    assert!(shown.contains("(mean of 3) at clients=2"), "{shown}");
}

#[test]
fn two_sweeps_compare_point_by_point_and_gates_name_the_point() {
    let a = sweep(&[1, 2, 4], 1, |c, _| 100.0 * c as f64);
    let b = sweep(&[1, 2, 4, 8], 1, |c, _| {
        if c == 4 {
            250.0
        } else {
            100.0 * c as f64
        }
    });
    let files = vec![("a.json".to_string(), a), ("b.json".to_string(), b)];
    let c = compare::compare(&files).unwrap();
    assert_eq!(
        c.points
            .iter()
            .map(|p| p.value.as_str())
            .collect::<Vec<_>>(),
        ["1", "2", "4"]
    );
    assert_eq!(
        c.unmatched,
        vec![("8".to_string(), vec!["b.json".to_string()])]
    );
    let text = compare::render(&c);
    assert!(
        text.contains("not compared: clients=8: only in b.json"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("4 ") && l.contains("tps"))
        .unwrap();
    assert!(
        row.contains("-3") && row.contains("beyond noise: worse"),
        "{row}"
    );
    let gate = crate::compare::Gate::parse("tps<-10%").unwrap();
    let found = compare::check(&gate, &c);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        matches!(&found[0], crate::compare::GateFinding::Regression(m) if m.starts_with("clients=4: "))
    );
    // The point only b.json ran cannot be checked: undecided, not passed.
    assert!(
        matches!(&found[1], crate::compare::GateFinding::Undecided(m) if m.starts_with("clients=8: not in a.json (only in b.json)")),
        "{found:?}"
    );
    let plain = ("run.json".to_string(), step_file(1, 100.0, 1, None));
    assert!(matches!(
        compare::compare(&[files[0].clone(), plain]),
        Err(compare::SweepCompareError::NotASweep { .. })
    ));
}

/// #43: a gate over sweeps passed when a point was missing from one file, or a file
/// had no steps: every point "not compared", exit 0. Both are undecided now.
#[test]
fn a_gate_is_undecided_at_a_missing_point_and_for_a_file_without_steps() {
    use crate::compare::GateFinding;
    let gate = crate::compare::Gate::parse("tps<-5%").unwrap();
    let undecided = |found: &[GateFinding]| {
        found
            .iter()
            .map(|f| match f {
                GateFinding::Undecided(m) => m.clone(),
                GateFinding::Regression(m) => panic!("no regression expected: {m}"),
            })
            .collect::<Vec<_>>()
    };
    // The same curve, one point fewer in b.json.
    let a = sweep(&[1, 2, 4], 1, |c, _| 100.0 * c as f64);
    let b = sweep(&[1, 2], 1, |c, _| 100.0 * c as f64);
    let files = vec![("a.json".to_string(), a), ("b.json".to_string(), b)];
    let c = compare::compare(&files).unwrap();
    let found = undecided(&compare::check(&gate, &c));
    assert_eq!(
        found,
        ["clients=4: not in b.json (only in a.json), so --fail-if 'tps<-5%' cannot be checked there"]
    );
    // b.json a sweep of no steps: no point at all is compared.
    let mut empty = files[1].1.clone();
    empty.steps.clear();
    let files = vec![files[0].clone(), ("b.json".to_string(), empty)];
    let c = compare::compare(&files).unwrap();
    assert!(c.points.is_empty());
    let found = undecided(&compare::check(&gate, &c));
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(
        found[3],
        "no point of clients compared: b.json has no steps, so --fail-if 'tps<-5%' cannot be checked"
    );
    assert!(
        compare::render(&c).contains("not compared: b.json has no steps\n"),
        "{}",
        compare::render(&c)
    );
}

#[test]
fn workers_sweeps_merge_step_by_step_into_one_sweep() {
    let info = |index: u32, clients: u32| WorkerInfo {
        index,
        count: 2,
        run_id: format!("run-{clients}"),
        start_unix_us: 1_764_583_200_000_000,
        first_client: index * clients,
    };
    let worker = |index: u32| {
        let mut doc = sweep(&[1, 2], 1, |c, _| 100.0 * c as f64);
        for s in &mut doc.steps {
            let clients: u32 = s.value.parse().unwrap();
            s.file.worker = Some(info(index, clients));
        }
        doc
    };
    let files = vec![
        ("w0.json".to_string(), worker(0)),
        ("w1.json".to_string(), worker(1)),
    ];
    let merged = merge::merge(&files).unwrap();
    assert_eq!(merged.steps.len(), 2);
    let step2 = &merged.steps[1].file;
    assert_eq!(step2.summary.clients, Some(4), "two workers of 2 clients");
    assert_eq!(step2.merge.as_ref().unwrap().workers.len(), 2);
    assert_eq!(merged.capacity.as_ref().unwrap().representative, Some(2));
    assert_eq!(merged.summary.clients, Some(4));
    // A step of another value is another run.
    let mut other = worker(1);
    other.steps[1].value = "3".into();
    let files = vec![
        ("w0.json".to_string(), worker(0)),
        ("w1.json".to_string(), other),
    ];
    assert!(merge::merge(&files)
        .unwrap_err()
        .to_string()
        .contains("steps[1].value"));
}

#[test]
fn a_search_says_the_rate_found_and_the_first_that_missed() {
    let step = |n: u32, value: &str, role: Role, verdict: Option<Verdict>, tps: f64| Step {
        step: n,
        value: value.into(),
        round: 1,
        role: Some(role),
        verdict,
        file: step_file(4, tps, u64::from(n), None),
    };
    let met = || {
        Some(Verdict {
            met: true,
            why: vec![],
        })
    };
    let missed = |why: &str| {
        Some(Verdict {
            met: false,
            why: vec![why.into()],
        })
    };
    let steps = vec![
        step(1, CLOSED_LOOP, Role::ClosedLoop, None, 1000.0),
        step(
            2,
            "1000.0",
            Role::Ladder,
            missed("p99 31.200 ms > 20 ms"),
            990.0,
        ),
        step(3, "900.0", Role::Ladder, met(), 900.0),
        step(4, "948.7", Role::Bisection, met(), 948.0),
        step(5, "948.7", Role::Confirmation, met(), 947.0),
    ];
    let capacity = Capacity {
        kind: Kind::Search,
        parameter: "rate".into(),
        values: vec![],
        repeat: 1,
        search: Some(SearchSpec {
            target: "p99<=20ms".into(),
            tolerance: 0.05,
            max_steps: 12,
            fail_if_below: None,
        }),
        found: Some(Found {
            closed_loop_tps: Some(1000.0),
            rate: Some(948.7),
            step: Some(5),
            first_miss: Some(Miss {
                rate: 1000.0,
                step: 2,
                why: "p99 31.200 ms > 20 ms".into(),
            }),
            within_tolerance: true,
            confirmed: true,
        }),
        representative: Some(5),
        stopped: None,
    };
    let text = table::render(&capacity, &steps);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "search for the highest -R meeting p99<=20ms: at most 12 steps (each 60 s), to within 5%"
    );
    // (The synthetic run has 4 clients at scale 1: warned about, in brackets.)
    assert!(
        lines[2].contains("  the clients' most, without -R"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains("  missed: p99 31.200 ms > 20 ms"),
        "{}",
        lines[3]
    );
    assert!(
        lines[4].contains("  met [scale_below_clients]"),
        "{}",
        lines[4]
    );
    assert!(
        lines[6].contains("  met again [scale_below_clients]"),
        "{}",
        lines[6]
    );
    let last = lines.last().unwrap();
    assert!(last.starts_with("found: -R 948.7 (p99 "), "{last}");
    assert!(
        last.contains("; met twice); first rate that missed"),
        "{last}"
    );
    assert!(
        last.ends_with("first rate that missed: -R 1000 (p99 31.200 ms > 20 ms)"),
        "{last}"
    );
    // #43: the rates as -R ran them, every digit: `-R 9.172` was shown as `-R 9.2`.
    let mut slow = capacity.clone();
    let found = slow.found.as_mut().unwrap();
    found.rate = Some(9.172);
    found.first_miss.as_mut().unwrap().rate = 9.655;
    let closing = table::closing(&slow, &steps);
    assert!(closing.starts_with("found: -R 9.172 (p99 "), "{closing}");
    assert!(
        closing.contains("; first rate that missed: -R 9.655 ("),
        "{closing}"
    );
    let c = curve::curve(&capacity, &steps);
    assert_eq!(
        c.points.iter().map(|p| p.x).collect::<Vec<_>>(),
        [900.0, 948.7, 1000.0]
    );
}

#[test]
fn a_sweeps_page_has_its_curves_with_the_peak_and_the_knee_and_its_steps_lines() {
    let doc = sweep(&[1, 2, 4, 8], 2, |c, _| {
        [250.0, 480.0, 600.0, 800.0][c.trailing_zeros() as usize]
    });
    let page = crate::html::render_page(&[("sweep".to_string(), doc)]);
    for id in ["chart-sweep-tps", "chart-sweep-p99"] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(
        !page.contains("id=\"chart-sweep-nopm\""),
        "NOPM only for TPC-C"
    );
    let start = page
        .find("<script type=\"application/json\" id=\"data\">")
        .unwrap();
    let json = &page[start..];
    let json = &json[json.find('>').unwrap() + 1..json.find("</script>").unwrap()];
    let data: serde_json::Value = serde_json::from_str(json).unwrap();
    let c = &data["curves"][0];
    assert_eq!(c["x"], serde_json::json!([1.0, 2.0, 4.0, 8.0]));
    assert_eq!(
        (c["peak"].as_f64(), c["knee"].as_f64()),
        (Some(8.0), Some(2.0))
    );
    assert!(c["tps"]["low"][0].is_number(), "two rounds: an interval");
    assert!(
        page.contains("<pre class=\"steps\">sweep of clients over 1, 2, 4, 8, each value 2 times")
    );
}

/// A workload's headline figure is a sweep's column and chart from the workload's own
/// table: a sysbench sweep shows its queries per second, a TPC-C one its NOPM, and
/// neither the other's.
#[test]
fn a_workloads_headline_figure_is_a_column_and_a_chart_of_its_sweep() {
    use crate::workload::sysbench::{QueryCounts, SysbenchSummary};
    use crate::workload::WorkloadResult;
    let mut sb = sweep(&[1, 2], 1, |c, _| 100.0 * c as f64);
    for s in &mut sb.steps {
        let run = s.file.run.as_mut().unwrap();
        let queries = (run.bench_duration_us / 1e6 * 1800.0 * s.step as f64) as i64;
        run.workload = Some(WorkloadResult::Sysbench(SysbenchSummary {
            percentile: 95,
            queries: QueryCounts {
                read: queries,
                ..QueryCounts::default()
            },
            tables: None,
            table_size: None,
        }));
    }
    let text = table::render(sb.capacity.as_ref().unwrap(), &sb.steps);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].ends_with("failed         qps  warnings"), "{text}");
    assert!(lines[2].contains("      1800.0"), "{text}");
    assert!(lines[3].contains("      3600.0"), "{text}");
    assert!(!text.contains("NOPM"), "{text}");
    let page = crate::html::render_page(&[("sb".to_string(), sb)]);
    assert!(
        page.contains("id=\"chart-sweep-qps\" data-y=\"queries per second\""),
        "the page charts qps"
    );
    assert!(!page.contains("id=\"chart-sweep-nopm\""));

    let mut tpcc = sweep(&[1, 2], 1, |c, _| 100.0 * c as f64);
    for s in &mut tpcc.steps {
        s.file.summary.workload.tpcc.nopm = Some(1000 * i64::from(s.step));
    }
    let text = table::render(tpcc.capacity.as_ref().unwrap(), &tpcc.steps);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].ends_with("failed      NOPM  warnings"), "{text}");
    assert!(lines[3].contains("      2000"), "{text}");
    assert!(!text.contains("qps"), "{text}");
    let page = crate::html::render_page(&[("tpcc".to_string(), tpcc)]);
    assert!(page.contains("id=\"chart-sweep-nopm\" data-y=\"NOPM\""));
    assert!(!page.contains("id=\"chart-sweep-qps\""));
}
