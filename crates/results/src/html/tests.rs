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
