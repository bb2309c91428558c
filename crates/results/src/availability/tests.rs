use super::render::utc_ms;
use super::*;

const S: i64 = 1_000_000;

fn spell(client: usize, fail: i64, before: Option<i64>, after: Option<i64>) -> Spell {
    Spell {
        client,
        first_failure_us: fail,
        last_success_before_us: before,
        first_success_after_us: after,
        failed: 1,
        in_doubt: 0,
        reconnects: 1,
        gave_up_us: None,
    }
}

/// 100 successes a second, evenly, from 0 to `end` but none in `gap`, then `after`
/// a second (or 100) from the gap's end.
fn bins(end: i64, gap: (i64, i64), after: i64) -> SuccessBins {
    let mut b = SuccessBins::new(0);
    let mut t = 0;
    while t < end {
        let rate = if t >= gap.1 { after } else { 100 };
        if !(gap.0..gap.1).contains(&t) {
            b.add(t);
        }
        t += S / rate;
    }
    b
}

#[test]
fn overlapping_spells_make_one_window_with_its_first_and_last_instants() {
    let spells = [
        spell(0, 5_000_000, Some(4_990_000), Some(6_200_000)),
        spell(1, 5_010_000, Some(5_003_000), Some(6_100_000)),
        // A client whose last success came after the first failure: not "before".
        spell(2, 5_300_000, Some(5_200_000), Some(6_400_000)),
        // Apart: a second window, lasting past the end.
        spell(0, 8_000_000, Some(7_999_000), None),
    ];
    let b = bins(10 * S, (5 * S, 6_100_000), 100);
    let w = outages(&spells, &b, 10 * S, 1_000);
    assert_eq!(w.len(), 2);
    let o = &w[0];
    assert_eq!(o.first_failure_unix_us, 5_001_000);
    assert_eq!(o.last_success_before_unix_us, Some(4_991_000));
    assert_eq!(o.first_success_after_unix_us, Some(6_101_000));
    assert_eq!(o.all_back_unix_us, Some(6_401_000));
    assert_eq!((o.clients, o.failed_transactions, o.reconnects), (3, 3, 3));
    assert_eq!(o.length_s(), Some(1.1));
    assert_eq!(o.bound_s(), Some(1.11));
    let second = &w[1];
    assert_eq!(
        (second.first_success_after_unix_us, second.all_back_unix_us),
        (None, None)
    );
    assert_eq!(second.clients, 1);
    assert_eq!(second.length_s(), None);
}

#[test]
fn the_level_before_is_the_ten_seconds_before_and_the_return_a_whole_second_at_95_percent() {
    // 100 tps for 20 s, nothing for 2 s, then 50 tps for 3 s, then 100 again.
    let mut b = SuccessBins::new(0);
    for i in 0..2000 {
        b.add(i * 10_000);
    }
    for i in 0..150 {
        b.add(22 * S + i * 20_000);
    }
    for i in 0..1000 {
        b.add(25 * S + i * 10_000);
    }
    let spells = [spell(0, 20 * S, Some(20 * S - 10_000), Some(22 * S))];
    let o = &outages(&spells, &b, 35 * S, 0)[0];
    assert_eq!(o.tps_before, Some(100.0));
    assert_eq!(o.back_to_95_unix_us, Some(25 * S - BIN_US));
    assert_eq!(o.recovery_s(), Some(4.9));
    // Never back: the run ends at half the rate.
    let o = &outages(&spells, &b, 25 * S, 0)[0];
    assert_eq!(o.back_to_95_unix_us, None);
    // An outage in the run's first half second has no level before it.
    let early = [spell(0, S / 2, None, Some(S))];
    assert_eq!(outages(&early, &b, 35 * S, 0)[0].tps_before, None);
}

#[test]
fn the_block_names_the_instants_in_utc_and_the_failures_by_class() {
    let mut failed = std::collections::BTreeMap::new();
    failed.insert("57P01".to_string(), 7);
    failed.insert("08006".to_string(), 1);
    let a = Availability {
        reconnect_timeout_s: 60.0,
        backoff_max_ms: BACKOFF_MAX_MS,
        measured_from_unix_us: 1_700_000_000_000_000,
        reconnects: 8,
        gave_up: 0,
        in_doubt: 1,
        failed,
        outages: vec![Outage {
            last_success_before_unix_us: Some(1_700_000_009_512_000),
            first_failure_unix_us: 1_700_000_009_514_400,
            first_success_after_unix_us: Some(1_700_000_010_732_400),
            all_back_unix_us: Some(1_700_000_010_790_000),
            clients: 8,
            failed_transactions: 8,
            in_doubt: 1,
            reconnects: 8,
            gave_up: 0,
            seen_until_unix_us: None,
            tps_before: Some(1234.56),
            back_to_95_unix_us: Some(1_700_000_011_014_400),
        }],
    };
    assert_eq!(
        render_block(&a),
        "availability (--reconnect, timeout 60 s, backoff up to 200 ms):\n\
         outages: 1, 1.218 s in all; reconnects: 8; clients that gave up: 0\n\
         transactions in doubt: 1 (connection lost after a statement that may commit was sent: the server may have committed them)\n\
         outage 1: 8 clients, 8 failed transactions (1 in doubt), 8 reconnects\n\
         \x20 last success before  2023-11-14 22:13:29.512 UTC (9.512 s into the run)\n\
         \x20 first failure        2023-11-14 22:13:29.514 UTC (9.514 s into the run)\n\
         \x20 first success after  2023-11-14 22:13:30.732 UTC (10.732 s into the run)\n\
         \x20 all clients back     2023-11-14 22:13:30.790 UTC (10.790 s into the run)\n\
         \x20 length: 1.218 s from the first failure, 1.220 s from the last success\n\
         \x20 tps back at 95% of its level before (1234.6): 1.500 s after the first failure\n\
         failed transactions by SQLSTATE class:\n\
         \x20 08 (connection exception): 1 (08006 1)\n\
         \x20 57 (operator intervention): 7 (57P01 7)\n"
    );
}

#[test]
fn utc_clock_times_across_years_and_before_1970() {
    assert_eq!(utc_ms(0), "1970-01-01 00:00:00.000 UTC");
    assert_eq!(utc_ms(951_782_400_123_999), "2000-02-29 00:00:00.123 UTC");
    assert_eq!(utc_ms(-1_000), "1969-12-31 23:59:59.999 UTC");
}

#[test]
fn a_file_without_the_block_reads_and_one_with_it_round_trips() {
    let a = Availability {
        reconnect_timeout_s: 5.0,
        backoff_max_ms: 200,
        measured_from_unix_us: 1,
        reconnects: 0,
        gave_up: 0,
        in_doubt: 0,
        failed: Default::default(),
        outages: vec![],
    };
    // Files written before the count of doubts read as none.
    let old = r#"{"reconnect_timeout_s":5.0,"backoff_max_ms":200,"measured_from_unix_us":1,"reconnects":0,"gave_up":0,"failed":{},"outages":[]}"#;
    assert_eq!(serde_json::from_str::<Availability>(old).unwrap(), a);
    let text = serde_json::to_string(&a).unwrap();
    assert_eq!(serde_json::from_str::<Availability>(&text).unwrap(), a);
}

/// A synthetic run with these outages (first failure, length) in seconds.
fn run_with(outages: &[(f64, f64)]) -> crate::run::RunResult {
    let mut r = crate::synthetic::run(&crate::synthetic::Spec::tpcb(7, 20, 500.0, 2000.0));
    r.scale = 100;
    let us = |s: f64| (s * 1e6) as i64;
    r.availability = Some(Availability {
        reconnect_timeout_s: 60.0,
        backoff_max_ms: BACKOFF_MAX_MS,
        measured_from_unix_us: 0,
        reconnects: 8 * outages.len() as i64,
        gave_up: 0,
        in_doubt: 0,
        failed: [("57P01".to_string(), 8 * outages.len() as i64)].into(),
        outages: outages
            .iter()
            .map(|&(at, length)| Outage {
                last_success_before_unix_us: Some(us(at) - 1000),
                first_failure_unix_us: us(at),
                first_success_after_unix_us: Some(us(at + length)),
                all_back_unix_us: Some(us(at + length)),
                clients: 8,
                failed_transactions: 8,
                in_doubt: 0,
                reconnects: 8,
                gave_up: 0,
                seen_until_unix_us: None,
                tps_before: Some(500.0),
                back_to_95_unix_us: Some(us(at + length + 0.5)),
            })
            .collect(),
    });
    r
}

#[test]
fn compare_sets_the_outages_of_two_runs_side_by_side() {
    use crate::compare::{compare, render_table, Side};
    let side = |label: &str, r| Side {
        label: label.into(),
        runs: vec![crate::ResultsFile::from_run(r, Default::default())],
    };
    let sides = [
        side("restart", run_with(&[(5.0, 0.4)])),
        side("failover", run_with(&[(5.0, 1.0), (12.0, 0.2)])),
    ];
    let c = compare(&sides).unwrap();
    assert_eq!(
        c.outages,
        [
            "outages (--reconnect):",
            "  A: restart: 1 outage(s), 0.400 s in all, the longest 0.400 s, tps back at 95% after 0.900 s, 0 in doubt",
            "  B: failover: 2 outage(s), 1.200 s in all, the longest 1.000 s (+150.0% on A), tps back at 95% after 1.500 s, 0 in doubt",
        ]
    );
    assert!(render_table(&c).contains("\noutages (--reconnect):\n"));
    let without = [side("plain", run_with(&[])), sides[0].clone()];
    let mut plain = without[0].clone();
    plain.runs[0].run.as_mut().unwrap().availability = None;
    let c = compare(&[plain, without[1].clone()]).unwrap();
    assert_eq!(c.outages[1], "  A: plain: not run with --reconnect");
}

#[test]
fn a_run_with_outages_is_warned_of_and_one_without_is_not() {
    let warned = crate::warnings::check(&run_with(&[(5.0, 0.4)]));
    let w = warned
        .warnings
        .iter()
        .find(|w| w.code == "outages")
        .expect("the outages warning");
    assert!(w.message.contains("1 outage(s)"), "{}", w.message);
    assert_eq!(w.figures["longest_s"], 0.4);
    let quiet = crate::warnings::check(&run_with(&[]));
    assert!(quiet.warnings.iter().all(|w| w.code != "outages"));
}

#[test]
fn an_outage_clients_gave_up_on_lasts_until_they_did_and_was_not_ridden_through() {
    // Two clients lose the server at 3 s; it stays down past --reconnect-timeout=2:
    // both give up at 5 s, and the run ends at 5.1 s.
    let gone = |client, gave_up| Spell {
        gave_up_us: Some(gave_up),
        first_success_after_us: None,
        ..spell(client, 3 * S, Some(3 * S - 5_000), None)
    };
    let spells = [gone(0, 5 * S), gone(1, 5 * S + 10_000)];
    let b = bins(5_100_000, (3 * S, 5_100_000), 100);
    let w = outages(&spells, &b, 5_100_000, 0);
    assert_eq!(w.len(), 1);
    let o = &w[0];
    assert_eq!((o.gave_up, o.length_s()), (2, None));
    assert_eq!(o.seen_until_unix_us, Some(5 * S + 10_000));
    assert_eq!(o.at_least_s(), 2.01);
    assert!(!o.ridden_through());
    let a = Availability {
        reconnect_timeout_s: 2.0,
        backoff_max_ms: BACKOFF_MAX_MS,
        measured_from_unix_us: 0,
        reconnects: 0,
        gave_up: 2,
        in_doubt: 0,
        failed: [("08006".to_string(), 2)].into(),
        outages: w,
    };
    // Not "0.000 s in all": at least the two seconds until the clients gave up.
    assert_eq!(a.total_outage_s(), 2.01);
    assert!(!a.all_over() && !a.ridden_through());
    let block = render_block(&a);
    assert!(
        block.contains(
            "outages: 1, at least 2.010 s in all; reconnects: 0; clients that gave up: 2\n"
        ),
        "{block}"
    );
    assert!(
        block.contains("outage 1: 2 clients, 2 failed transactions (0 in doubt), 2 reconnects, 2 clients gave up\n"),
        "{block}"
    );
    assert!(
        block.contains("  length: at least 2.010 s from the first failure, not over: 2 clients gave up, the last 1970-01-01 00:00:05.010 UTC (5.010 s into the run)\n"),
        "{block}"
    );
    let mut r = run_with(&[]);
    r.availability = Some(a);
    let checked = crate::warnings::check(&r);
    let w = checked
        .warnings
        .iter()
        .find(|w| w.code == "outages")
        .unwrap();
    assert!(!w.message.contains("rode through"), "{}", w.message);
    assert!(
        w.message.starts_with(
            "the clients did not ride through 1 outage(s) of the server (at least 2.010 s in all"
        ),
        "{}",
        w.message
    );
    assert!(w.message.contains("2 client(s) gave up"), "{}", w.message);
}

#[test]
fn tps_back_is_never_before_the_first_success_after() {
    // 100 tps, an outage from 20 s whose first success after comes at 20.338 s, and
    // full throughput at once: the return is that success, printed as it is.
    let mut b = SuccessBins::new(0);
    for i in 0..2000 {
        b.add(i * 10_000);
    }
    for i in 0..1000 {
        b.add(20_338_000 + i * 10_000);
    }
    let spells = [spell(0, 20 * S, Some(20 * S - 10_000), Some(20_338_000))];
    let o = &outages(&spells, &b, 35 * S, 0)[0];
    assert_eq!(o.length_s(), Some(0.338));
    assert_eq!(o.recovery_s(), Some(0.338));
    let a = Availability {
        reconnect_timeout_s: 60.0,
        backoff_max_ms: BACKOFF_MAX_MS,
        measured_from_unix_us: 0,
        reconnects: 1,
        gave_up: 0,
        in_doubt: 0,
        failed: Default::default(),
        outages: vec![o.clone()],
    };
    // Printed to the millisecond like the length, never rounded down below it.
    assert!(render_block(&a).contains("(100.0): 0.338 s after the first failure\n"));
}
