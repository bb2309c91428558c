//! Server rows: a doubled WAL per transaction is beyond noise and worse, an A/A pair
//! within noise, a wait event of no better direction only higher or lower; files
//! without server stats compare as before; gates name the rows.

use super::super::*;
use crate::compare::tests::cells;
use crate::document::RunMeta;
use crate::synthetic::server::{server_stats, ServerSpec};
use crate::synthetic::{run, Spec};

fn doc(spec: &Spec, server: Option<&ServerSpec>) -> ResultsFile {
    let mut r = run(spec);
    r.server = server.map(|s| server_stats(&r, s));
    ResultsFile::from_run(r, RunMeta::default())
}

fn sides(a: ResultsFile, b: ResultsFile) -> [Side; 2] {
    [
        Side {
            label: "a".into(),
            runs: vec![a],
        },
        Side {
            label: "b".into(),
            runs: vec![b],
        },
    ]
}

fn verdict(c: &Comparison, f: ServerFigure) -> Verdict {
    let f = Figure::Server(f);
    c.rows.iter().find(|r| r.figure == f).unwrap().changes[0].verdict
}

#[test]
fn doubled_wal_per_transaction_is_beyond_noise_and_worse_and_gates_trip() {
    let reads = ServerSpec::reads(1);
    let mut writes = ServerSpec::reads(2);
    writes.wal_bytes_per_transaction *= 2.0;
    writes.hit_ratio = 0.95;
    writes.waits[2].2 = 0.2;
    let c = compare(&sides(
        doc(&Spec::tpcb(1, 60, 500.0, 2000.0), Some(&reads)),
        doc(&Spec::tpcb(2, 60, 500.0, 2000.0), Some(&writes)),
    ))
    .unwrap();
    let wal = Figure::Server(ServerFigure::WalBytesPerTransaction);
    let row = c.rows.iter().find(|r| r.figure == wal).unwrap();
    let (a, b) = (row.values[0].unwrap(), row.values[1].unwrap());
    assert!(
        (a - 400.0).abs() < 10.0 && (b - 800.0).abs() < 20.0,
        "{a} {b}"
    );
    let ch = &row.changes[0];
    let i = ch.interval.unwrap();
    assert!(i.low > 0.8 && i.high < 1.2, "{i:?}");
    assert_eq!(ch.verdict, Verdict::Worse);
    assert_eq!(verdict(&c, ServerFigure::HitRatio), Verdict::Worse);
    assert_eq!(verdict(&c, ServerFigure::FpiShare), Verdict::WithinNoise);
    // LWLock waits are contention (lower is better); the client's share says only
    // where the backends were.
    let lwlock = ServerFigure::WaitShare("LWLock:WALWrite".into());
    assert_eq!(verdict(&c, lwlock), Verdict::Worse);
    let client = ServerFigure::WaitShare("Client:ClientRead".into());
    assert_eq!(verdict(&c, client), Verdict::Lower);
    assert_eq!(
        verdict(&c, ServerFigure::Checkpoints),
        Verdict::Same,
        "no checkpoint on either side"
    );
    let table = render_table(&c);
    assert!(table.contains("\nWAL bytes per transaction "), "{table}");
    assert!(table.contains("beyond noise: lower"), "{table}");
    // A count prints as one, the ratios and shares with their decimals.
    assert_eq!(
        cells(&table, "checkpoints in window")[..4],
        ["0", "0", "+0.0%", "same"],
        "{table}"
    );
    let hits = cells(&table, "buffer hit ratio (%)");
    let decimals = |v: &str| v.split_once('.').map(|(_, d)| d.len());
    assert_eq!(decimals(&hits[0]), Some(3), "{hits:?}");

    let gate = Gate::parse("wal_bytes_per_transaction>50%").unwrap();
    assert!(
        matches!(&gate.check(&c)[..], [GateFinding::Regression(m)] if m.contains("changed by +")),
        "{:?}",
        gate.check(&c)
    );
    let wait = Gate::parse("wait:Client:ClientRead<-10%").unwrap();
    assert!(matches!(&wait.check(&c)[..], [GateFinding::Regression(_)]));
    assert!(Gate::parse("hit_ratio<-1%").is_ok());
    let unknown = Gate::parse("wal<1%").unwrap_err().to_string();
    assert!(unknown.contains("hit_ratio") && unknown.contains("wait:TYPE:EVENT"));
}

#[test]
fn a_a_server_figures_are_within_noise_with_intervals() {
    let spec = |seed| ServerSpec {
        hit_ratio: 0.9,
        ..ServerSpec::reads(seed)
    };
    let c = compare(&sides(
        doc(&Spec::tpcb(3, 60, 500.0, 2000.0), Some(&spec(3))),
        doc(&Spec::tpcb(4, 60, 500.0, 2000.0), Some(&spec(4))),
    ))
    .unwrap();
    for f in [
        ServerFigure::WalBytesPerTransaction,
        ServerFigure::BlksReadPerTransaction,
        ServerFigure::HitRatio,
        ServerFigure::WaitShare("active".into()),
    ] {
        assert_eq!(verdict(&c, f.clone()), Verdict::WithinNoise, "{f:?}");
    }
}

#[test]
fn a_checkpoint_counts_and_groups_of_runs_get_welch_intervals() {
    let mut with = ServerSpec::reads(5);
    with.checkpoints_at = vec![10, 40];
    let d = doc(&Spec::tpcb(5, 60, 500.0, 2000.0), Some(&with));
    assert_eq!(
        ServerFigure::Checkpoints.value(&d),
        Some(2.0),
        "{:?}",
        d.run.as_ref().unwrap().server
    );
    let group = |seed: u64, wal: f64| Side {
        label: format!("g{seed}"),
        runs: (0..3)
            .map(|i| {
                let mut s = ServerSpec::reads(seed + i);
                s.wal_bytes_per_transaction = wal;
                doc(&Spec::tpcb(seed + i, 20, 500.0, 2000.0), Some(&s))
            })
            .collect(),
    };
    let c = compare(&[group(10, 400.0), group(20, 600.0)]).unwrap();
    assert_eq!(c.method, Method::Runs);
    assert_eq!(
        verdict(&c, ServerFigure::WalBytesPerTransaction),
        Verdict::Worse
    );
}

#[test]
fn checkpoints_print_as_a_count_and_a_groups_mean_of_them_with_decimals() {
    let mut with = ServerSpec::reads(11);
    with.checkpoints_at = vec![10, 40];
    let c = compare(&sides(
        doc(
            &Spec::tpcb(11, 60, 500.0, 2000.0),
            Some(&ServerSpec::reads(12)),
        ),
        doc(&Spec::tpcb(12, 60, 500.0, 2000.0), Some(&with)),
    ))
    .unwrap();
    let table = render_table(&c);
    // Not "0.000" and "2.000": no one counts a fraction of a checkpoint.
    assert_eq!(
        cells(&table, "checkpoints in window")[..3],
        ["0", "2", "-"],
        "{table}"
    );
    let gate = Gate::parse("checkpoints>0%").unwrap();
    let found = gate.check(&c);
    assert!(
        matches!(&found[..], [GateFinding::Regression(m) | GateFinding::Undecided(m)]
            if m.starts_with("b vs a: checkpoints changed from 0 to 2 (")),
        "{found:?}"
    );
    // One checkpoint in three runs is a third of one a run, not 0.
    let group = |seed: u64, checkpoints: &[Vec<i64>]| Side {
        label: format!("g{seed}"),
        runs: checkpoints
            .iter()
            .zip(seed..)
            .map(|(at, seed)| {
                let mut s = ServerSpec::reads(seed);
                s.checkpoints_at = at.clone();
                doc(&Spec::tpcb(seed, 20, 500.0, 2000.0), Some(&s))
            })
            .collect(),
    };
    let c = compare(&[
        group(30, &[vec![5], vec![], vec![]]),
        group(40, &[vec![5], vec![8], vec![12]]),
    ])
    .unwrap();
    let table = render_table(&c);
    assert_eq!(
        cells(&table, "checkpoints in window")[..3],
        ["0.333", "1", "+200.0%"],
        "{table}"
    );
}

#[test]
fn without_server_stats_on_both_sides_the_rows_are_todays() {
    let plain = || doc(&Spec::tpcb(6, 30, 500.0, 2000.0), None);
    let with = doc(
        &Spec::tpcb(6, 30, 500.0, 2000.0),
        Some(&ServerSpec::reads(6)),
    );
    let today = compare(&sides(plain(), plain())).unwrap();
    let mixed = compare(&sides(plain(), with)).unwrap();
    assert_eq!(render_table(&today), render_table(&mixed));
    assert!(!today
        .rows
        .iter()
        .any(|r| matches!(r.figure, Figure::Server(_))));
    // A gate on a row these files do not have cannot pass blind.
    let gate = Gate::parse("hit_ratio<-1%").unwrap();
    assert!(
        matches!(&gate.check(&today)[..], [GateFinding::Undecided(m)] if m.contains("not in these files")),
        "{:?}",
        gate.check(&today)
    );
}

#[test]
fn from_no_wal_at_all_the_change_has_no_percentage_but_a_verdict() {
    let none = ServerSpec {
        wal_bytes_per_transaction: 0.0,
        ..ServerSpec::reads(7)
    };
    let c = compare(&sides(
        doc(&Spec::tpcb(7, 30, 500.0, 2000.0), Some(&none)),
        doc(
            &Spec::tpcb(8, 30, 500.0, 2000.0),
            Some(&ServerSpec::reads(8)),
        ),
    ))
    .unwrap();
    let wal = Figure::Server(ServerFigure::WalBytesPerTransaction);
    let ch = &c.rows.iter().find(|r| r.figure == wal).unwrap().changes[0];
    assert_eq!((ch.ratio, ch.verdict), (None, Verdict::Worse), "{ch:?}");
    let table = render_table(&c);
    let line = table.lines().find(|l| l.starts_with("WAL bytes")).unwrap();
    assert!(
        line.ends_with(" -                   beyond noise: worse"),
        "{line}"
    );
    let gate = Gate::parse("wal_bytes_per_transaction>50%").unwrap();
    assert!(
        matches!(&gate.check(&c)[..], [GateFinding::Regression(m)] if m.contains("changed from 0 to 399.")),
        "{:?}",
        gate.check(&c)
    );
}

/// CI's select-only run: 50 bytes of the server's own WAL in its last (partial)
/// second, so its figure is 0.001 a transaction and its whole seconds average 0. The
/// ratio has no interval, but an insert run's 26 kB is beyond noise all the same.
#[test]
fn a_base_whose_seconds_average_0_is_told_from_noise_by_the_difference() {
    let mut quiet = ServerSpec::reads(1);
    quiet.wal_bytes_per_transaction = 0.0;
    let mut inserts = ServerSpec::reads(2);
    inserts.wal_bytes_per_transaction = 26_000.0;
    let mut a = doc(&Spec::tpcb(1, 30, 500.0, 2000.0), Some(&quiet));
    let run = a.run.as_mut().unwrap();
    let cnt = run.total.counts.cnt;
    let stats = run.server.as_mut().unwrap();
    let last = stats.series.last_mut().unwrap();
    *last
        .counters
        .get_mut("pg_stat_wal")
        .unwrap()
        .get_mut("wal_bytes")
        .unwrap() += 50;
    *stats
        .window
        .get_mut("pg_stat_wal")
        .unwrap()
        .get_mut("wal_bytes")
        .unwrap() += 50;
    stats.derived.wal_bytes_per_transaction = Some(50.0 / cnt as f64);
    let b = doc(&Spec::tpcb(2, 30, 500.0, 2000.0), Some(&inserts));
    let c = compare(&sides(a, b)).unwrap();
    let wal = Figure::Server(ServerFigure::WalBytesPerTransaction);
    let row = c.rows.iter().find(|r| r.figure == wal).unwrap();
    let ch = &row.changes[0];
    assert!(
        row.values[0].unwrap() > 0.0 && ch.ratio.unwrap() > 1e6,
        "{row:?}"
    );
    assert_eq!((ch.interval, ch.verdict), (None, Verdict::Worse), "{row:?}");
}

/// #38: a long run's entries of several seconds are put over the client's same
/// seconds (not over one of them), and a second whose counters were not read has no
/// figure (not zero).
#[test]
fn entries_of_two_seconds_and_seconds_not_read_per_transaction() {
    let mut d = doc(
        &Spec::tpcb(4, 40, 500.0, 2000.0),
        Some(&ServerSpec::reads(4)),
    );
    let figure = ServerFigure::WalBytesPerTransaction;
    let whole = figure.per_second(&d).unwrap();
    let s = d.run.as_mut().unwrap().server.as_mut().unwrap();
    let mut pairs = Vec::new();
    for pair in s.series.chunks(2) {
        let mut e = pair[0].clone();
        if let Some(b) = pair.get(1) {
            e.seconds += b.seconds;
            for (view, cols) in &b.counters {
                for (col, v) in cols {
                    *e.counters.get_mut(view).unwrap().get_mut(col).unwrap() += v;
                }
            }
        }
        pairs.push(e);
    }
    pairs[3].counters.clear();
    s.series = pairs;
    let merged = figure.per_second(&d).unwrap();
    let mean = |xs: &[(f64, f64)]| xs.iter().map(|x| x.0).sum::<f64>() / xs.len() as f64;
    assert!(
        (mean(&merged) - mean(&whole)).abs() < 0.05 * mean(&whole),
        "{merged:?} against {whole:?}"
    );
    // 20 entries of 2 s, less the unread one and the one with the client's last second.
    assert_eq!(merged.len(), whole.len() / 2 - 1, "{merged:?}");
}
