//! Synthetic runs with known differences are told apart; A/A runs are called within
//! noise (at about the advertised 5 % rate); short runs are too short to tell; gates
//! trip on regressions beyond noise only.

use super::*;
use crate::document::RunMeta;
use crate::run::Limit;
use crate::synthetic::{run, Spec};

fn doc(spec: &Spec) -> ResultsFile {
    ResultsFile::from_run(run(spec), RunMeta::default())
}

fn side(label: &str, specs: &[Spec]) -> Side {
    Side {
        label: label.to_string(),
        runs: specs.iter().map(doc).collect(),
    }
}

fn row<'a>(c: &'a Comparison, f: &Figure) -> &'a Row {
    c.rows.iter().find(|r| &r.figure == f).unwrap()
}

#[test]
fn a_ten_percent_faster_single_run_is_beyond_noise_and_better() {
    let a = Spec::tpcb(1, 120, 500.0, 2000.0);
    let b = Spec::tpcb(2, 120, 550.0, 1800.0);
    let c = compare(&[side("a", &[a]), side("b", &[b])]).unwrap();
    assert_eq!(c.method, Method::Seconds);
    for f in [
        Figure::Tps,
        Figure::LatencyAvg,
        Figure::Percentile(50.0),
        Figure::Percentile(99.0),
    ] {
        let ch = &row(&c, &f).changes[0];
        assert_eq!(ch.verdict, Verdict::Better, "{f:?}: {ch:?}");
    }
    let tps = &row(&c, &Figure::Tps).changes[0];
    let i = tps.interval.unwrap();
    assert!(i.low < 0.10 && i.high > 0.10 - 0.05, "{i:?}");
    assert_eq!(
        row(&c, &Figure::LatencyMax).changes[0].verdict,
        Verdict::NoInterval
    );
    for seed in 10..20 {
        let a = Spec::tpcb(seed, 120, 500.0, 2000.0);
        let b = Spec::tpcb(seed + 100, 120, 550.0, 2000.0);
        let c = compare(&[side("a", &[a]), side("b", &[b])]).unwrap();
        let ch = &row(&c, &Figure::Tps).changes[0];
        assert_eq!(ch.verdict, Verdict::Better, "seed {seed}: {ch:?}");
    }
}

#[test]
fn a_a_single_runs_are_within_noise_at_about_the_nominal_rate() {
    let figures = [Figure::Tps, Figure::LatencyAvg, Figure::Percentile(99.0)];
    let mut flagged = [0; 3];
    let pairs = 40;
    for seed in 0..pairs {
        let a = Spec::tpcb(100 + seed, 90, 400.0, 2000.0);
        let b = Spec::tpcb(200 + seed, 90, 400.0, 2000.0);
        let c = compare(&[side("a", &[a]), side("b", &[b])]).unwrap();
        for (f, n) in figures.iter().zip(&mut flagged) {
            let v = row(&c, f).changes[0].verdict;
            assert_ne!(v, Verdict::TooShort, "90 s is long enough");
            if v != Verdict::WithinNoise {
                *n += 1;
            }
        }
    }
    // 95 % intervals: about 2 of 40 by chance; well above that means the intervals
    // ignore the seconds' correlation.
    eprintln!("A/A pairs called different, of {pairs}: {flagged:?} (tps, latency, p99)");
    assert!(flagged.iter().all(|&n| n <= 6), "{flagged:?} of {pairs}");
}

#[test]
fn short_runs_are_too_short_to_tell() {
    let c = compare(&[
        side("a", &[Spec::tpcb(1, 10, 500.0, 2000.0)]),
        side("b", &[Spec::tpcb(2, 10, 600.0, 2000.0)]),
    ])
    .unwrap();
    assert_eq!(row(&c, &Figure::Tps).changes[0].verdict, Verdict::TooShort);
    assert!(render_table(&c).contains("too short to tell"));
}

#[test]
fn groups_of_repeated_runs_compare_by_welchs_interval() {
    let group = |base: u64, tps: f64| -> Vec<Spec> {
        (0..4)
            .map(|i| Spec::tpcb(base + i, 20, tps * (1.0 + 0.01 * i as f64), 2000.0))
            .collect()
    };
    let c = compare(&[
        side("old", &group(10, 500.0)),
        side("new", &group(20, 450.0)),
    ])
    .unwrap();
    assert_eq!(c.method, Method::Runs);
    assert_eq!(row(&c, &Figure::Tps).changes[0].verdict, Verdict::Worse);
    let aa = compare(&[side("a", &group(30, 500.0)), side("b", &group(40, 500.0))]).unwrap();
    assert_eq!(
        row(&aa, &Figure::Tps).changes[0].verdict,
        Verdict::WithinNoise
    );
    let two = compare(&[
        side("a", &group(30, 500.0)[..2]),
        side("b", &group(40, 500.0)[..2]),
    ]);
    assert_eq!(
        row(&two.unwrap(), &Figure::Tps).changes[0].verdict,
        Verdict::TooFewRuns
    );
}

#[test]
fn gates_trip_on_regressions_beyond_noise_only() {
    let a = [Spec::tpcb(1, 120, 500.0, 2000.0)];
    let slower = compare(&[
        side("a", &a),
        side("b", &[Spec::tpcb(2, 120, 450.0, 2300.0)]),
    ])
    .unwrap();
    let same = compare(&[
        side("a", &a),
        side("b", &[Spec::tpcb(3, 120, 500.0, 2000.0)]),
    ])
    .unwrap();
    let gate = Gate::parse("tps<-5%").unwrap();
    let msgs = gate.check(&slower);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(
        matches!(&msgs[0], GateFinding::Regression(m) if m.starts_with("b vs a: tps changed by -")),
        "{msgs:?}"
    );
    assert!(gate.check(&same).is_empty());
    assert_eq!(Gate::parse("p99>10").unwrap().check(&slower).len(), 1);
    assert!(Gate::parse("p99>50%").unwrap().check(&slower).is_empty());
    assert_eq!(
        Gate::parse("tps").unwrap_err().to_string(),
        "cannot read --fail-if \"tps\": expected FIGURE<PERCENT or FIGURE>PERCENT, e.g. 'tps<-5%' or 'p99>10%'"
    );
    assert!(matches!(
        Gate::parse("speed<-5%"),
        Err(CompareError::UnknownFigure(_))
    ));
}

/// #22: a change past the threshold that is too short to tell tripped the gate.
#[test]
fn a_gate_on_runs_too_short_to_tell_is_undecided_not_tripped() {
    let short = compare(&[
        side("a", &[Spec::tpcb(1, 4, 500.0, 2000.0)]),
        side("b", &[Spec::tpcb(2, 4, 400.0, 2500.0)]),
    ])
    .unwrap();
    assert_eq!(
        row(&short, &Figure::Tps).changes[0].verdict,
        Verdict::TooShort
    );
    let found = Gate::parse("tps<-5%").unwrap().check(&short);
    assert!(
        matches!(&found[..], [GateFinding::Undecided(m)]
            if m.starts_with("b vs a: tps changed by -")
                && m.ends_with("% (too short to tell): --fail-if 'tps<-5%' cannot tell it from noise")),
        "{found:?}"
    );
    // A change that does not pass the threshold says nothing, told or not.
    assert!(Gate::parse("tps<-50%").unwrap().check(&short).is_empty());
}

#[test]
fn the_table_lists_scripts_and_statements_of_every_side() {
    let mut a = Spec::tpcb(1, 30, 300.0, 2000.0);
    a.settings.report_per_command = true;
    a.scripts
        .push(("b.sql".into(), 1, vec!["SELECT 2;".into()]));
    let mut b = a.clone();
    b.seed = 9;
    let text = render_table(&compare(&[side("base", &[a]), side("new", &[b])]).unwrap());
    for wanted in [
        "A: base\nB: new\n95% intervals: batch means",
        "\ntps ",
        "latency p99.9 (ms)",
        "b.sql: tps",
        "  2: b.sql: SELECT 2; (ms)",
        "B vs A",
    ] {
        assert!(text.contains(wanted), "{wanted:?} not in\n{text}");
    }
    assert!(compare(&[side("a", &[Spec::tpcb(1, 3, 10.0, 100.0)])]).is_err());
}

#[test]
fn a_a_groups_are_within_noise_at_about_the_nominal_rate() {
    let figures = [
        Figure::Tps,
        Figure::LatencyAvg,
        Figure::Percentile(99.0),
        Figure::Percentile(99.99),
        Figure::LatencyMax,
    ];
    let pairs = 40;
    for runs in [3, 5] {
        let mut flagged = [0; 5];
        for pair in 0..pairs {
            let group = |base: u64| -> Vec<Spec> {
                (0..runs)
                    .map(|i| Spec::tpcb(base + i, 20, 500.0, 2000.0))
                    .collect()
            };
            let c = compare(&[
                side("a", &group(1000 + 20 * pair)),
                side("b", &group(5000 + 20 * pair)),
            ])
            .unwrap();
            for (f, n) in figures.iter().zip(&mut flagged) {
                if row(&c, f).changes[0].verdict != Verdict::WithinNoise {
                    *n += 1;
                }
            }
        }
        eprintln!(
            "A/A groups of {runs} runs called different, of {pairs}: {flagged:?} (tps, latency, p99, p99.99, max)"
        );
        assert!(
            flagged.iter().all(|&n| n <= 6),
            "{runs} runs: {flagged:?} of {pairs}"
        );
    }
}

#[test]
fn tpcc_runs_compare_nopm_and_tpm_first_higher_being_better() {
    let with = |seed: u64, new_orders: i64| {
        let mut r = run(&Spec::tpcb(seed, 60, 500.0, 2000.0));
        let tpcc = crate::workload::tpcc::TpccResult {
            new_orders_committed: new_orders,
            server: Some(crate::workload::tpcc::ServerCounts {
                transactions: 3 * new_orders,
                new_orders,
                backends_left: 0,
            }),
            profile: Vec::new(),
            server_lost: None,
            layout: Default::default(),
        };
        r.workload = Some(crate::workload::WorkloadResult::Tpcc(tpcc));
        ResultsFile::from_run(r, RunMeta::default())
    };
    let sides = [
        Side {
            label: "a".into(),
            runs: vec![with(1, 10_000)],
        },
        Side {
            label: "b".into(),
            runs: vec![with(2, 12_000)],
        },
    ];
    let c = compare(&sides).unwrap();
    assert_eq!(
        (&c.rows[0].figure, &c.rows[1].figure),
        (&Figure::Nopm, &Figure::Tpm)
    );
    assert_eq!(Figure::Nopm.better(), Better::Higher);
    let a = Figure::Nopm.value(&sides[0].runs[0]).unwrap();
    let b = Figure::Nopm.value(&sides[1].runs[0]).unwrap();
    assert!(b > a * 1.19, "{a} {b}");
    // Whole, as HammerDB prints them ("System achieved 9989 NOPM"), not 9989.0.
    let table = render_table(&c);
    let tpm = |d: &ResultsFile| Figure::Tpm.value(d).unwrap();
    let (ta, tb) = (tpm(&sides[0].runs[0]), tpm(&sides[1].runs[0]));
    for (label, a, b) in [("NOPM", a, b), ("TPM", ta, tb)] {
        assert_eq!(
            cells(&table, label)[..2],
            [format!("{a}"), format!("{b}")],
            "{table}"
        );
    }
}

/// A row of the table: its cells after the label, split at spaces (the server
/// rows' tests use it too).
pub(in crate::compare) fn cells(table: &str, label: &str) -> Vec<String> {
    let line = table
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{label} ")))
        .unwrap_or_else(|| panic!("no {label:?} row in\n{table}"));
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
fn counts_print_whole_and_rates_keep_their_decimals() {
    let tries = |seed: u64, retry_rate: f64| {
        let mut s = Spec::tpcb(seed, 30, 500.0, 2000.0);
        s.settings.max_tries = crate::run::MaxTries::Limited(5);
        s.retry_rate = retry_rate;
        s
    };
    let sides = [side("a", &[tries(1, 0.1)]), side("b", &[tries(2, 0.2)])];
    let c = compare(&sides).unwrap();
    let table = render_table(&c);
    let retries = |s: &Side| s.runs[0].summary.retries.unwrap();
    let (a, b) = (retries(&sides[0]), retries(&sides[1]));
    assert!(a > 1000 && b > a, "{a} {b}");
    // 1000 and up the real-valued figures print one decimal: retries printed 1503.0.
    assert_eq!(
        cells(&table, "retries")[..2],
        [a.to_string(), b.to_string()],
        "{table}"
    );
    let tps = cells(&table, "tps");
    assert!(
        tps[0].ends_with(char::is_numeric) && tps[0].contains('.'),
        "{tps:?}"
    );
    let failed = cells(&table, "failed transactions (%)");
    assert_eq!(failed[..2], ["0.000", "0.000"], "{table}");
    // The format is the figure's: one place, whatever prints it.
    assert_eq!(Figure::Retries.format(), Format::Whole);
    assert_eq!(Figure::FailedPct.format(), Format::Real);
    assert_eq!(Format::Whole.show(Some(2.0)), "2");
    assert_eq!(Format::Whole.show(Some(2.0 / 3.0)), "0.667");
    assert_eq!(Format::Whole.show(Some(4000.5)), "4000.5");
    assert_eq!(Format::Real.show(Some(2.0)), "2.000");
    assert_eq!(Format::Whole.show(None), "-");
    // A gate on a count says its change from 0 in the count's own form (single runs
    // have no per-second retries, so no interval: undecided).
    let none = [side("a", &[tries(3, 0.0)]), side("b", &[tries(4, 0.1)])];
    let c = compare(&none).unwrap();
    let found = Gate::parse("retries>10%").unwrap().check(&c);
    let b = retries(&none[1]);
    assert!(
        matches!(&found[..], [GateFinding::Undecided(m)]
            if m.starts_with(&format!("b vs a: retries changed from 0 to {b} (no interval)"))),
        "{found:?}\n{}",
        render_table(&c)
    );
}

/// #22: two values that both show as 0.000 printed a change of +inf%.
#[test]
fn values_equal_as_shown_are_the_same_and_a_change_from_0_has_no_percentage() {
    let sides = [
        side("a", &[Spec::tpcb(1, 30, 500.0, 2000.0)]),
        side("b", &[Spec::tpcb(2, 30, 500.0, 2000.0)]),
    ];
    let (a, b) = (&sides[0], &sides[1]);
    let same = change(&Figure::Tps, Method::Seconds, a, b, 0.0, 0.0004);
    assert_eq!((same.ratio, same.verdict), (Some(0.0), Verdict::Same));
    // The difference (0.5 tps, with the width of these 500 tps series) is noise.
    let from_zero = change(&Figure::Tps, Method::Seconds, a, b, 0.0, 0.5);
    assert_eq!(
        (from_zero.ratio, from_zero.verdict),
        (None, Verdict::WithinNoise)
    );
    // A base that shows as 0.000 is a change from 0 too: CI printed +7969933716.9%
    // for 0.0003 WAL bytes a transaction against 26,334.
    let tiny = change(&Figure::Tps, Method::Seconds, a, b, 0.0003, 0.5);
    assert_eq!((tiny.ratio, tiny.verdict), (None, Verdict::WithinNoise));
    let c = compare(&sides).unwrap();
    assert!(!render_table(&c).contains("inf%"), "{}", render_table(&c));
}

/// A `-T` run of `seconds` at a scale above its clients (no scale warning).
fn sized(seed: u64, seconds: i64, asked: Limit) -> crate::run::RunResult {
    let mut r = run(&Spec::tpcb(seed, seconds, 500.0, 2000.0));
    r.scale = 100;
    r.settings.limit = asked;
    r
}

fn one(label: &str, r: crate::run::RunResult) -> Side {
    Side {
        label: label.to_string(),
        runs: vec![ResultsFile::from_run(r, RunMeta::default())],
    }
}

/// #33: compare set a run stopped by Ctrl-C at 12 s of `-T 60` beside a 60 s one
/// without a word (and called its difference beyond noise).
#[test]
fn compare_names_an_interrupted_run_and_runs_of_unlike_lengths() {
    let full = sized(1, 60, Limit::Duration(60));
    let mut cut = sized(2, 12, Limit::Duration(60));
    cut.ended = Some(crate::run::ended::Ended::Interrupted {
        signal: "SIGINT".into(),
        at_s: 12.0,
        during_warmup: false,
        unfinished: 3,
    });
    let c = compare(&[one("full.json", full.clone()), one("cut.json", cut)]).unwrap();
    assert_eq!(
        c.caveats,
        [
            "B: cut.json: interrupted: the run was interrupted by SIGINT after 12.0 s of its -T 60, so its figures are of a shorter run than the one asked for: run it again to its end before comparing it",
            "the runs differ in length (A 60.0 s; B 12.0 s), and a run's figures depend on its length (caches warming, checkpoints, autovacuum, growing tables): compare runs of one length",
        ],
        "{:#?}",
        c.caveats
    );
    // Two whole runs of one length: nothing to say.
    let again = sized(3, 60, Limit::Duration(60));
    let c = compare(&[one("a.json", full.clone()), one("b.json", again)]).unwrap();
    assert!(c.caveats.is_empty(), "{:?}", c.caveats);
    // -T 60 against -T 10, both whole; and -t runs of different counts, in groups.
    let short = sized(4, 10, Limit::Duration(10));
    let c = compare(&[one("a.json", full), one("b.json", short)]).unwrap();
    assert_eq!(c.caveats.len(), 1, "{:?}", c.caveats);
    assert!(c.caveats[0].starts_with("the runs differ in length (A 60.0 s; B 10.0 s)"));
    let t = |seed, n| {
        ResultsFile::from_run(sized(seed, 20, Limit::Transactions(n)), RunMeta::default())
    };
    let group = |label: &str, runs| Side {
        label: label.to_string(),
        runs,
    };
    let c = compare(&[
        group("a", vec![t(5, 2500), t(6, 2500), t(7, 2500)]),
        group("b", vec![t(8, 2500), t(9, 1000), t(10, 2500)]),
    ])
    .unwrap();
    assert_eq!(
        c.caveats[0],
        "the runs differ in length (A 10000 transactions, 10000 transactions, 10000 transactions; B 10000 transactions, 4000 transactions, 10000 transactions), and a run's figures depend on its length (caches warming, checkpoints, autovacuum, growing tables): compare runs of one length"
    );
    // A file's warning in a group names its run.
    let mut cold = t(11, 2500);
    cold.warnings = vec![crate::warnings::Warning {
        code: "cold_start".into(),
        message: "cold".into(),
        figures: Default::default(),
    }];
    let c = compare(&[
        group("a", vec![t(12, 2500), cold, t(13, 2500)]),
        group("b", vec![t(14, 2500), t(15, 2500), t(16, 2500)]),
    ])
    .unwrap();
    assert_eq!(c.caveats, ["A, run 2 of 3: cold_start: cold"]);
}
