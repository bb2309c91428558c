//! The page's structure without a browser (tests/report.rs renders it in Chromium).

use super::*;
use crate::document::RunMeta;
use crate::synthetic::{run, Spec};

fn doc(spec: &Spec) -> ResultsFile {
    ResultsFile::from_run(run(spec), RunMeta::default())
}

#[test]
fn one_page_holds_the_library_the_data_and_every_chart() {
    let mut a = Spec::tpcb(1, 30, 300.0, 2000.0);
    a.settings.report_per_command = true;
    let mut b = a.clone();
    b.seed = 2;
    b.settings.max_tries = crate::run::MaxTries::Limited(3);
    b.retry_rate = 0.05;
    let page = render_page(&[("base".into(), doc(&a)), ("</script><b>x".into(), doc(&b))]);
    for id in [
        "chart-tps",
        "chart-latency",
        "chart-spectrum",
        "chart-failures",
        "statements",
    ] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(page.contains("/*! https://github.com/leeoniya/uPlot (v1.6.32) */"));
    assert_eq!(
        page.matches("</script>").count(),
        3,
        "the label cannot end a script"
    );
    assert!(page.contains("&lt;/script&gt;&lt;b&gt;x"));
    assert!(
        !page.contains("<link") && !page.contains(" src="),
        "nothing to fetch"
    );
    let plain = render_page(&[("a".into(), doc(&Spec::tpcb(1, 5, 100.0, 1000.0)))]);
    assert!(!plain.contains("id=\"chart-failures\"") && !plain.contains("id=\"statements\""));
}

#[test]
fn the_spectrum_runs_from_the_median_to_the_maximum() {
    let mut h = LatencyHistogram::new();
    for us in 1..=10_000 {
        h.record(us as f64);
    }
    let (x, y) = spectrum(&h);
    assert_eq!(x[0], 1.0);
    assert!(
        (x[10] - 10.0).abs() < 1e-9 && (y[10] - 9.0).abs() < 0.05,
        "{} {}",
        x[10],
        y[10]
    );
    assert_eq!(*x.last().unwrap(), 10_000.0);
    assert!((*y.last().unwrap() - 10.0).abs() < 0.01);
    assert!(y.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn server_panels_and_the_warmup_only_where_a_file_has_them() {
    use crate::synthetic::server::{server_stats, ServerSpec};
    let spec = Spec::tpcb(1, 20, 300.0, 2000.0);
    let mut r = run(&spec);
    let mut with = ServerSpec::reads(1);
    with.checkpoints_at = vec![7];
    r.server = Some(server_stats(&r, &with));
    let served = ResultsFile::from_run(r, RunMeta::default());
    let page = render_page(&[("plain".into(), doc(&spec)), ("served".into(), served)]);
    for id in [
        "chart-server-wal",
        "chart-server-hits",
        "chart-server-waits-1",
    ] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(!page.contains("chart-server-waits-0"));
    let data = chart_data("served", &{
        let mut r = run(&spec);
        r.server = Some(server_stats(&r, &with));
        ResultsFile::from_run(r, RunMeta::default())
    });
    let s = serde_json::to_value(&data).unwrap();
    assert_eq!(s["server"]["checkpoints"], serde_json::json!([8.0]));
    assert_eq!(s["server"]["t"][0], 1.0);
    let waits = s["server"]["waits"].as_array().unwrap();
    assert_eq!(waits[0]["label"], "Client:ClientRead");
    let second: f64 = waits.iter().map(|w| w["share"][3].as_f64().unwrap()).sum();
    assert!((second - 100.0).abs() < 1e-9, "{second}");
    let plain = render_page(&[("a".into(), doc(&spec))]);
    assert!(!plain.contains("id=\"chart-server") && !plain.contains("shaded: the --warmup"));
}

#[test]
fn the_warmup_keeps_its_latencies_for_the_chart_before_the_window() {
    let spec = Spec::tpcb(3, 10, 300.0, 2000.0);
    let mut r = run(&spec);
    // A warm-up of 3 s, its series counted from the clients' start, as the runner's.
    let warm = run(&Spec::tpcb(4, 3, 200.0, 4000.0));
    r.warmup = Some(crate::run::Warmup {
        seconds: 3,
        total: warm.total,
        series: warm.series.clone(),
    });
    let page_doc = ResultsFile::from_run(r, RunMeta::default());
    let s = serde_json::to_value(chart_data("w", &page_doc)).unwrap();
    let w = &s["warmup"];
    assert_eq!(w["t"], serde_json::json!([-2.0, -1.0, 0.0]));
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    for (i, second) in warm.series.iter().enumerate() {
        let avg = second.latency.mean() / 1000.0;
        assert!((f(&w["latency_avg"][i]) - avg).abs() < 1e-9, "{w}");
        let q = second.quantiles_us.unwrap();
        assert_eq!(f(&w["percentiles"][0][i]), q[0] as f64 / 1000.0);
        assert_eq!(f(&w["percentiles"][2][i]), q[2] as f64 / 1000.0);
    }
    // About twice the window's median, as simulated.
    let (warm_p50, run_p50) = (f(&w["percentiles"][0][1]), f(&s["percentiles"][0][1]));
    assert!(warm_p50 > 1.5 * run_p50, "{warm_p50} {run_p50}");
    let page = render_page(&[("w".into(), page_doc)]);
    assert!(page.contains("Shaded: the --warmup seconds (their latencies lighter)."));
    let plain = render_page(&[("a".into(), doc(&spec))]);
    assert!(!plain.contains("their latencies lighter"));
}

/// #33: a page of a run stopped by Ctrl-C drew its 12 s beside a whole run's with
/// nothing to say so.
#[test]
fn the_files_warnings_are_listed_under_the_summary() {
    let whole = doc(&Spec::tpcb(1, 5, 100.0, 1000.0));
    let mut r = run(&Spec::tpcb(2, 5, 100.0, 1000.0));
    r.settings.limit = crate::run::Limit::Duration(60);
    r.ended = Some(crate::run::ended::Ended::Interrupted {
        signal: "SIGINT".into(),
        at_s: 5.0,
        during_warmup: false,
        unfinished: 1,
    });
    let cut = ResultsFile::from_run(r, RunMeta::default());
    let page = render_page(&[("whole".into(), whole.clone()), ("<cut>".into(), cut)]);
    let list = page
        .split_once("<ul id=\"warnings\" class=\"note\">")
        .and_then(|(_, rest)| rest.split_once("</ul>"))
        .map(|(list, _)| list)
        .expect("a list of warnings");
    assert!(
        list.contains("<li><b>&lt;cut&gt;</b>: interrupted: the run was interrupted by SIGINT after 5.0 s of its -T 60,"),
        "{list}"
    );
    let mut quiet = whole;
    quiet.warnings.clear();
    assert!(!render_page(&[("a".into(), quiet)]).contains("id=\"warnings\""));
}

/// A file of steps: `kind` over `parameter`, one step a `(value, latency median µs)`,
/// its top level the first step's.
fn steps_doc(kind: crate::capacity::Kind, parameter: &str, steps: &[(&str, f64)]) -> ResultsFile {
    use crate::capacity::{Capacity, Step};
    let steps: Vec<Step> = steps
        .iter()
        .enumerate()
        .map(|(i, (value, median_us))| Step {
            step: i as u32 + 1,
            value: value.to_string(),
            round: 1,
            role: None,
            verdict: None,
            file: doc(&Spec::tpcb(i as u64 + 1, 10, 400.0, *median_us)),
        })
        .collect();
    let mut values: Vec<String> = steps.iter().map(|s| s.value.clone()).collect();
    values.dedup();
    let mut top = steps[0].file.clone();
    top.capacity = Some(Capacity {
        kind,
        parameter: parameter.into(),
        values,
        repeat: 1,
        search: None,
        found: None,
        representative: Some(1),
        stopped: None,
    });
    top.steps = steps;
    top
}

/// #43: a repeated value whose p99 varies much about a small mean had its 95% band
/// drawn below 0 ms; it stops at 0 now.
#[test]
fn an_interval_band_stops_at_0() {
    use crate::capacity::Kind;
    let d = steps_doc(
        Kind::Sweep,
        "clients",
        &[("1", 100.0), ("1", 100.0), ("1", 8000.0), ("2", 1000.0)],
    );
    let k = crate::capacity::curve::curve(d.capacity.as_ref().unwrap(), &d.steps);
    let raw = k.points[0].stat("p99").unwrap().low.unwrap();
    assert!(raw < 0.0, "the case: an interval reaching below 0 ({raw})");
    let curves = serde_json::to_value(capacity::curves(&[("a".into(), d)])).unwrap();
    let low = &curves[0]["p99"]["low"];
    assert_eq!(low[0], serde_json::json!(0.0), "{low}");
}

/// #43: a clients sweep, a rate sweep and a search were drawn on one "clients (log
/// scale)" axis. Files whose curves share no axis are refused, as compare does.
#[test]
fn curves_of_different_parameters_are_refused() {
    use crate::capacity::Kind;
    let clients = || steps_doc(Kind::Sweep, "clients", &[("1", 1000.0), ("4", 1000.0)]);
    let rates = steps_doc(Kind::Sweep, "rate", &[("100", 1000.0), ("400", 1000.0)]);
    let search = steps_doc(
        Kind::Search,
        "rate",
        &[("closed loop", 1000.0), ("400", 1000.0)],
    );
    let plain = doc(&Spec::tpcb(1, 5, 100.0, 1000.0));
    let files = |more: Vec<(&str, ResultsFile)>| {
        let mut f = vec![
            ("clients.json".to_string(), clients()),
            ("run.json".to_string(), plain.clone()),
        ];
        f.extend(more.into_iter().map(|(l, d)| (l.to_string(), d)));
        f
    };
    assert_eq!(check_files(&files(vec![("more.json", clients())])), Ok(()));
    assert_eq!(
        check_files(&files(vec![("rates.json", rates), ("search.json", search.clone())]))
            .unwrap_err()
            .to_string(),
        "clients.json is a sweep of clients, rates.json a sweep of rate: their curves have no axis in common; draw each on a page of its own"
    );
    assert_eq!(
        check_files(&files(vec![("search.json", search)]))
            .unwrap_err()
            .to_string(),
        "clients.json is a sweep of clients, search.json a search for the highest -R: their curves have no axis in common; draw each on a page of its own"
    );
}

/// #43: a sweep stopped early showed, in its page's warnings, only its one step's.
#[test]
fn a_sweep_stopped_early_says_so_on_its_page() {
    use crate::capacity::Kind;
    let mut d = steps_doc(Kind::Sweep, "clients", &[("1", 1000.0)]);
    let c = d.capacity.as_mut().unwrap();
    c.values = vec!["1".into(), "2".into()];
    c.stopped = Some("interrupted by SIGINT after 1 step(s) of 2".into());
    d.warnings.clear();
    let page = render_page(&[("cut.json".into(), d)]);
    assert!(
        page.contains("<li><b>cut.json</b>: interrupted: the sweep stopped early (interrupted by SIGINT after 1 step(s) of 2)"),
        "{}",
        &page[page.find("<ul id=\"warnings\"").unwrap_or(0)..][..300.min(page.len())]
    );
}
