//! The collector's tests: counting, warm-up, aborts and unfinished clients, with
//! events made by hand (no clients, no server).

use super::*;
use crate::bench::error::{AbortReason, ClientAbort};
use crate::bench::phases::PhasePlan;

fn plan() -> CollectorPlan {
    CollectorPlan {
        clients: 2,
        scripts: 2,
        latency_limit_us: Some(2_000),
        throttled: false,
        histograms: true,
        series: true,
        exit_on_abort: false,
        phases: PhasePlan::default().anchored(0),
        duration_s: None,
        availability: None,
        stages: None,
    }
}

fn tx(script: u32, outcome: TxOutcome, latency: f64, end_us: i64) -> TxRecord {
    TxRecord {
        script,
        outcome,
        latency,
        lag: 0.0,
        tries: 1,
        end_us,
    }
}

fn done(end_us: i64, failures: i64) -> Event {
    Event::Done(ClientDone {
        commands: Some(vec![
            vec![CommandStats {
                failures,
                ..Default::default()
            }],
            vec![],
        ]),
        conn_duration_us: 10.0,
        queries: Default::default(),
        end_us,
        unfinished: false,
        cut_short_in_doubt: 0,
    })
}

#[test]
fn a_client_lost_to_a_panic_is_an_abort_and_the_collection_ends() {
    let mut events = vec![Event::Batch(vec![tx(
        0,
        TxOutcome::Success,
        1_000.0,
        100_000,
    )])];
    events.extend(crate::bench::events::lost_client(0, 1, 200_000));
    events.push(done(300_000, 0));
    let (c, text) = run(&plan(), events);
    assert_eq!(c.aborted, 1);
    assert_eq!(c.total.counts.cnt, 1);
    assert!(
        text.contains("client 1 aborted: internal error in its thread"),
        "{text}"
    );
}

#[test]
fn last_words_without_counters_add_none() {
    // #48: a run without -r keeps no counters per command, in any client.
    let without = |end_us| {
        let Event::Done(mut d) = done(end_us, 0) else {
            unreachable!()
        };
        d.commands = None;
        Event::Done(d)
    };
    let (c, _) = run(&plan(), vec![without(100_000), without(200_000)]);
    assert!(c.commands.is_empty());
    assert_eq!(c.conn_total_duration_us, 20.0);
    // A client lost before its last word has none either, beside clients that kept theirs.
    let mut events = Vec::from(crate::bench::events::lost_client(0, 0, 100_000));
    events.push(done(200_000, 2));
    let (c, _) = run(&plan(), events);
    assert_eq!(c.commands[0][0].failures, 2);
}

#[test]
fn clients_the_stopper_gave_up_on_are_unfinished() {
    let (tx_, rx) = crossbeam_channel::unbounded();
    tx_.send(done(100_000, 0)).unwrap();
    let mut t = 0;
    let mut looks = 0;
    let mut hooks = Hooks {
        outbox: None,
        now: &mut || {
            t += 500_000;
            t
        },
        out: &mut |_| {},
        watch: &mut |_, _| {
            looks += 1;
            looks > 3
        },
        live: None,
        board: None,
    };
    let c = collect(&plan(), &rx, 0, &mut hooks);
    assert_eq!((c.abandoned, c.unfinished), (1, 1));
}

/// Runs the collector on `events` with a clock that moves 0.5 s per look, and `-P 1`.
fn run(plan: &CollectorPlan, events: Vec<Event>) -> (Collected, String) {
    run_with(plan, events, true)
}

fn run_with(plan: &CollectorPlan, events: Vec<Event>, progress: bool) -> (Collected, String) {
    let format = crate::bench::progress::ProgressFormat {
        timestamp: false,
        throttled: false,
        latency_limit: false,
        show_retries: false,
    };
    let board = ProgressBoard::new(plan.clients, 1_000_000, format);
    board.begin(0, plan.phases, plan.stages.clone(), 0);
    let (tx_, rx) = crossbeam_channel::unbounded();
    for e in events {
        tx_.send(e).unwrap();
    }
    let mut t = 0;
    let mut clock = || {
        t += 500_000;
        t
    };
    let mut text = String::new();
    let mut hooks = Hooks {
        outbox: None,
        now: &mut clock,
        out: &mut |s| text.push_str(s),
        watch: &mut |_, _| false,
        live: None,
        board: progress.then_some(&board),
    };
    let c = collect(plan, &rx, 0, &mut hooks);
    (c, text)
}

#[test]
fn counts_every_transaction_per_script_with_lateness_histograms_and_series() {
    let events = vec![
        Event::Batch(vec![
            tx(0, TxOutcome::Success, 1_000.0, 100_000),
            tx(1, TxOutcome::Success, 3_000.0, 1_200_000),
            tx(0, TxOutcome::SerializationFailure, 0.0, 1_300_000),
        ]),
        done(1_500_000, 1),
        Event::Batch(vec![tx(1, TxOutcome::Success, 5_000.0, 2_100_000)]),
        done(2_200_000, 2),
    ];
    let (c, text) = run(&plan(), events);
    assert_eq!((c.total.counts.cnt, c.total.failures()), (3, 1));
    assert_eq!(
        (c.per_script[0].counts.cnt, c.per_script[1].counts.cnt),
        (1, 2)
    );
    assert_eq!(c.latency_late, 2);
    let extras = *c.extras.unwrap();
    assert_eq!(extras.per_script[1].to_histogram().len(), 2);
    let (series, run) = extras.finish(2_200_000);
    assert_eq!(run.unwrap().to_histogram().len(), 3);
    assert_eq!(c.commands[0][0].failures, 3);
    assert_eq!(c.conn_total_duration_us, 20.0);
    assert_eq!(c.last_client_end, 2_200_000);
    let per_second: Vec<i64> = series.unwrap().iter().map(|s| s.counts.cnt).collect();
    assert_eq!(per_second, [1, 1, 1]);
    // The second look at the clock is 1 s in, with one client still running: the
    // first batch (2 successes, 1 failure) is that second's.
    assert_eq!(
        text,
        "progress: 1.0 s, 2.0 tps, lat 2.000 ms stddev 1.000, 1 failed\n"
    );
}

#[test]
fn a_warm_up_is_counted_apart_and_the_measured_part_restarts_every_figure() {
    let mut p = plan();
    p.scripts = 1;
    p.phases = PhasePlan { warmup_s: Some(1) }.anchored(0);
    let events = vec![
        Event::Batch(vec![
            tx(0, TxOutcome::Success, 1_000.0, 200_000),
            tx(0, TxOutcome::Success, 3_000.0, 800_000),
            tx(0, TxOutcome::Success, 5_000.0, 1_100_000),
        ]),
        done(1_200_000, 0),
        Event::Batch(vec![tx(0, TxOutcome::Success, 7_000.0, 1_600_000)]),
        Event::Batch(vec![]),
        done(2_100_000, 0),
    ];
    let (c, text) = run(&p, events);
    // The warm-up's lines say so; the measured part's count from its start.
    assert_eq!(
        text,
        "warm-up progress: 1.0 s, 2.0 tps, lat 2.000 ms stddev 1.000, 0 failed\n\
         progress: 1.0 s, 2.0 tps, lat 6.000 ms stddev 1.000, 0 failed\n"
    );
    assert_eq!((c.total.counts.cnt, c.per_script[0].counts.cnt), (2, 2));
    assert_eq!(c.total.latency.min, 5_000.0);
    assert_eq!(c.latency_late, 2, "the measured part's only");
    let warm = c.warmup.unwrap().finish(1, 2_100_000);
    assert_eq!(
        (warm.total.counts.cnt, warm.total.latency.max),
        (2, 3_000.0)
    );
    let warm_series = warm.series;
    assert_eq!(warm_series.len(), 1);
    assert_eq!((warm_series[0].t, warm_series[0].counts.cnt), (0, 2));
    let (series, run) = c.extras.unwrap().finish(2_100_000);
    assert_eq!(run.unwrap().to_histogram().len(), 2);
    let series = series.unwrap();
    // From the warm-up's end: second 0 is [1.0, 2.0).
    assert_eq!((series[0].t, series[0].counts.cnt), (0, 2));
}

/// #38: Ctrl-C at 3.4 s of a 10 s warm-up padded its series with 6 seconds of
/// zeros that never ran.
#[test]
fn a_warm_up_cut_short_has_only_the_seconds_it_ran() {
    let mut p = plan();
    p.phases = PhasePlan { warmup_s: Some(10) }.anchored(0);
    let ok = |end| tx(0, TxOutcome::Success, 1_000.0, end);
    let batch = Event::Batch(vec![ok(200_000), ok(2_500_000), ok(3_300_000)]);
    let (c, _) = run(&p, vec![batch, done(3_400_000, 0), done(3_400_000, 0)]);
    let warm = c.warmup.unwrap().finish(10, c.last_client_end);
    let seconds: Vec<_> = warm.series.iter().map(|s| (s.t, s.counts.cnt)).collect();
    assert_eq!(seconds, [(0, 1), (1, 0), (2, 1), (3, 1)]);
    assert!((warm.series[3].length_s.unwrap() - 0.4).abs() < 1e-6);
}

#[test]
fn aborts_are_printed_as_they_arrive_and_exit_on_abort_stops_at_the_first() {
    crate::logging::init_progname("pgbench");
    let abort = || Event::Aborted {
        thread: 1,
        abort: ClientAbort::new(
            1,
            AbortReason::Other("end of script reached with pipeline open"),
        ),
    };
    let mut p = plan();
    let (c, text) = run_with(&p, vec![abort(), done(5, 0), done(6, 0)], false);
    assert_eq!((c.aborted, c.stopped_by_thread), (1, None));
    assert_eq!(
        text,
        "pgbench: error: client 1 aborted: end of script reached with pipeline open\n"
    );
    p.exit_on_abort = true;
    let (c, _) = run(&p, vec![abort(), done(5, 0), done(6, 0)]);
    assert_eq!(c.stopped_by_thread, Some(1));
    assert_eq!(
        c.last_client_end, 0,
        "stopped before the clients' last words"
    );
}

/// Each transaction counts in the stage it ended in: a backlog of the first stage
/// that ends in the second is late there (its `-L` lateness and skips with it), and
/// the `-P` lines name the stage of their interval.
#[test]
fn stages_count_what_ended_in_them_and_progress_names_them() {
    use crate::bench::stages::{RateProfile, StagePlan, Stages};
    let stages = StagePlan::Rate(RateProfile {
        start: 100.0,
        stages: Stages::parse("1s:100,1s:300").unwrap(),
        threads: 1,
    });
    let clock = stages.on_clock(2_000_000);
    let plan = CollectorPlan {
        stages: Some((stages, clock)),
        ..plan()
    };
    let events = vec![
        Event::Batch(vec![
            tx(0, TxOutcome::Success, 1_000.0, 500_000),
            // Due in the first stage, ended late in the second.
            tx(0, TxOutcome::Success, 9_000.0, 1_005_000),
            tx(1, TxOutcome::Skipped, 0.0, 1_006_000),
            tx(1, TxOutcome::Success, 1_000.0, 1_900_000),
        ]),
        done(1_900_000, 0),
        done(1_900_000, 0),
    ];
    let (c, text) = run(&plan, events);
    let counts = c.stages.unwrap();
    assert_eq!(counts[0].total.counts.cnt, 1);
    assert_eq!((counts[0].late, counts[0].total.counts.skipped), (0, 0));
    assert_eq!(counts[1].total.counts.cnt, 2);
    assert_eq!((counts[1].late, counts[1].total.counts.skipped), (1, 1));
    assert_eq!(counts[1].latencies.value_at_quantiles([1.0]), Some([9_007]));
    assert!(text.contains(", stage 1/2, rate 100.0\n"), "{text}");
}

#[test]
fn records_left_in_the_outbox_are_counted_before_the_clients_last_word() {
    let outbox = crate::bench::events::Outbox::new(2);
    let mut first = vec![
        tx(0, TxOutcome::Success, 1_000.0, 100_000),
        tx(0, TxOutcome::Success, 3_000.0, 200_000),
    ];
    assert!(outbox.put(0, &mut first, false));
    assert!(first.is_empty(), "the client gets an empty vector back");
    // The other client's, handed over waiting if need be (before its last word).
    let mut second = vec![tx(0, TxOutcome::Success, 2_000.0, 300_000)];
    assert!(outbox.put(1, &mut second, true));
    let (tx_, rx) = crossbeam_channel::unbounded();
    tx_.send(done(400_000, 0)).unwrap();
    tx_.send(done(400_000, 0)).unwrap();
    let mut t = 0;
    let mut hooks = Hooks {
        outbox: Some(&outbox),
        now: &mut || {
            t += 500_000;
            t
        },
        out: &mut |_| {},
        watch: &mut |_, _| false,
        live: None,
        board: None,
    };
    let c = collect(&plan(), &rx, 0, &mut hooks);
    assert_eq!(c.total.counts.cnt, 3);
    assert_eq!(c.total.latency.sum, 6_000.0);
}
