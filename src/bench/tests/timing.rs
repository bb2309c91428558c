//! Time on the test clock: `-T` and the transaction running at its end, `-R` slots
//! and their skips under `-L`, `-C` connections; and what a client counts besides
//! (`-r` times, its statements by kind).

use super::*;

/// A server whose every `SELECT` takes `us` of the run clock.
fn taking(bench: &Bench, us: i64) -> FakeServer {
    let clock = Arc::clone(&bench.clock);
    FakeServer::answering(move |r: &Request| {
        clock.advance(us);
        Reply::usual(&r.sql)
    })
}

all_drives!(
    the_transaction_running_at_the_deadline_ends_and_is_counted,
    |drive| {
        let bench = Bench::new(&["-T", "1"], "SELECT 1;\n").ends_after(10_000);
        let ran = bench.run(&taking(&bench, 4_000), drive);
        // Started at 0, 4 and 8 ms; the third ends at 12 ms, after the deadline.
        ran.assert_succeeded(3);
        let ends: Vec<i64> = ran.records.iter().map(|r| r.end_us - START_US).collect();
        assert_eq!(ends, [4_000, 8_000, 12_000]);
        assert!(ran.records.iter().all(|r| r.latency == 4_000.0));
        assert!(!ran.done[0].unfinished);
    }
);

all_drives!(
    rate_limited_transactions_late_by_more_than_l_are_skipped,
    |drive| {
        // -R 1000/s, each SELECT taking 3 ms: the client falls behind its slots, and those
        // more than -L 1 ms late are skipped (and count towards -t).
        let run = || {
            let bench = Bench::new(&["-t", "20", "-R", "1000", "-L", "1"], "SELECT 1;\n");
            bench.run(&taking(&bench, 3_000), drive)
        };
        let ran = run();
        assert!(ran.aborts.is_empty(), "{:?}", ran.aborts);
        assert_eq!(ran.records.len(), 20);
        let (ok, skipped) = (ran.count(TxOutcome::Success), ran.count(TxOutcome::Skipped));
        assert_eq!(ok + skipped, 20);
        assert!(ok >= 2 && skipped >= 5, "{:?}", ran.outcomes());
        for r in ran
            .records
            .iter()
            .filter(|r| r.outcome == TxOutcome::Success)
        {
            // What runs started at most -L after its slot, and took 3 ms.
            assert!(r.lag <= 1_000.0, "{r:?}");
            assert_eq!(r.latency, r.lag + 3_000.0, "{r:?}");
        }
        // The same seed on the same clock: the same schedule.
        assert_eq!(run().outcomes(), ran.outcomes());
    }
);

all_drives!(rate_limited_transactions_wait_for_their_slots, |drive| {
    // A fast server: every transaction waits for its slot (the clock jumps there) and
    // starts on it, so none lags and none is skipped.
    let bench = Bench::new(&["-t", "10", "-R", "100", "-L", "1"], "SELECT 1;\n");
    let ran = bench.run(&usual_server(), drive);
    ran.assert_succeeded(10);
    assert!(ran.records.iter().all(|r| r.lag == 0.0 && r.latency == 0.0));
    // Ten slots of a mean 10 ms apart took the clock well past the start.
    assert!(
        bench.clock.now_us() - START_US > 20_000,
        "{}",
        bench.clock.now_us()
    );
});

all_drives!(c_connects_for_every_transaction_and_times_it, |drive| {
    let bench = Bench::new(&["-t", "3", "-C", "-M", "prepared"], "SELECT :client_id;\n");
    // Each connection takes 700 µs of the run clock.
    let clock = Arc::clone(&bench.clock);
    let server = FakeServer::start(move |mut s| {
        clock.advance(700);
        if s.accept() {
            s.answer(&|r: &Request| Reply::usual(&r.sql));
        }
    });
    let ran = bench.run(&server, drive);
    // Prepared again on each new connection, or the server would not know P_0.
    ran.assert_succeeded(3);
    assert_eq!(server.connections(), 3);
    assert_eq!(ran.done[0].conn_duration_us, 2_100.0);
    // As pgbench, the transaction begins once connected: latency without the connect.
    assert!(
        ran.records.iter().all(|r| r.latency == 0.0),
        "{:?}",
        ran.records
    );
    let ends: Vec<i64> = ran.records.iter().map(|r| r.end_us - START_US).collect();
    assert_eq!(ends, [700, 1_400, 2_100]);
});

all_drives!(
    a_sleep_across_the_deadline_finishes_its_transaction,
    |drive| {
        let bench = Bench::new(&["-T", "1"], "\\sleep 100 ms\nSELECT 1;\n").ends_after(150_000);
        let ran = bench.run(&usual_server(), drive);
        ran.assert_succeeded(2);
        let ends: Vec<i64> = ran.records.iter().map(|r| r.end_us - START_US).collect();
        assert_eq!(ends, [100_000, 200_000]);
    }
);

all_drives!(
    a_pause_is_left_out_of_the_latency_and_ends_at_the_deadline,
    |drive| {
        // Keying before the statement, thinking after it: neither is its latency.
        let script = "\\sleep 100 ms\nSELECT 1;\n\\sleep 20 ms\n";
        let bench = Bench::new(&["-T", "1"], script)
            .untimed_sleeps()
            .ends_after(250_000);
        let ran = bench.run(&usual_server(), drive);
        ran.assert_succeeded(2);
        assert!(
            ran.records.iter().all(|r| r.latency == 0.0),
            "{:?}",
            ran.records
        );
        let ends: Vec<i64> = ran.records.iter().map(|r| r.end_us - START_US).collect();
        // The third transaction's keying, from 240 ms, is cut short at 250 ms: the
        // client stops there, and its transaction is not counted.
        assert_eq!(ends, [120_000, 240_000]);
        assert_eq!(bench.clock.now_us(), START_US + 250_000);
        // Without the pauses' flag, the sleeps are the transactions' time.
        let timed = Bench::new(&["-t", "1"], script).run(&usual_server(), drive);
        assert_eq!(timed.records[0].latency, 120_000.0);
    }
);

all_drives!(a_rate_slot_after_the_deadline_is_not_run, |drive| {
    let deadline = 300_000;
    let bench = Bench::new(&["-T", "1", "-R", "10"], "SELECT 1;\n").ends_after(deadline);
    let ran = bench.run(&usual_server(), drive);
    assert!(ran.aborts.is_empty(), "{:?}", ran.aborts);
    assert!(!ran.records.is_empty());
    for r in &ran.records {
        // Scheduled (end minus latency) before the deadline.
        assert!(r.end_us - r.latency as i64 <= START_US + deadline, "{r:?}");
    }
    // A slot past the deadline ends the client at once: it did not wait for it.
    assert!(bench.clock.now_us() <= START_US + deadline);
});

all_drives!(
    a_failure_after_the_deadline_is_neither_retried_nor_counted,
    |drive| {
        let bench = Bench::new(&["-T", "1", "--max-tries=3"], "BEGIN;\nUPDATE t;\nEND;\n")
            .ends_after(1_000);
        let clock = Arc::clone(&bench.clock);
        let server = FakeServer::answering(move |r: &Request| {
            if r.sql.starts_with("UPDATE") {
                clock.advance(5_000);
                return Reply::error("40001", "could not serialize access");
            }
            Reply::usual(&r.sql)
        });
        let ran = bench.run(&server, drive);
        assert!(ran.records.is_empty(), "{:?}", ran.records);
        assert!(ran.aborts.is_empty(), "{:?}", ran.aborts);
        assert_eq!(ran.done.len(), 1);
        // #33: nor is its error among sysbench's ignored errors (a 300-client run
        // said 30 failed transactions and 31 ignored errors).
        assert_eq!(ran.done[0].queries.errors, 0);
    }
);

all_drives!(per_command_times_are_what_each_command_took, |drive| {
    // -r: the UPDATE takes 2 ms of the run clock, the rest nothing.
    let bench = Bench::new(&["-t", "3", "-r"], "BEGIN;\nUPDATE t;\nEND;\n");
    let clock = Arc::clone(&bench.clock);
    let server = FakeServer::answering(move |r: &Request| {
        if r.sql.starts_with("UPDATE") {
            clock.advance(2_000);
        }
        Reply::usual(&r.sql)
    });
    let ran = bench.run(&server, drive);
    ran.assert_succeeded(3);
    let commands = &ran.done[0].commands.as_ref().expect("-r's counters")[0];
    let sums: Vec<f64> = commands.iter().map(|c| c.elapsed.sum).collect();
    assert_eq!(sums, [0.0, 0.006, 0.0]);
    assert!(commands.iter().all(|c| c.elapsed.count == 3));
});

all_drives!(without_r_a_client_keeps_no_per_command_counters, |drive| {
    // #48: a set per command of every script for every client is most of a large
    // run's memory (5,000 commands in a sysbench script of 250 tables, 1,000
    // clients), and only -r prints it: its failures and retries too.
    let server = FakeServer::answering(|r: &Request| match r.sql.starts_with("UPDATE") {
        true => Reply::error("40001", "could not serialize access"),
        false => Reply::usual(&r.sql),
    });
    let script = "BEGIN;\nUPDATE t;\nEND;\n";
    let ran = Bench::new(&["-t", "2", "-c", "2"], script).run(&server, drive);
    assert_eq!(ran.outcomes().len(), 4);
    assert_eq!(ran.done.len(), 2);
    assert!(ran.done.iter().all(|d| d.commands.is_none()));
    // Its statements by kind are still counted (a workload's report reads them).
    assert!(ran.done.iter().all(|d| d.queries.errors == 2));
    let ran = Bench::new(&["-t", "2", "-c", "2", "-r"], script).run(&server, drive);
    for d in &ran.done {
        let commands = d.commands.as_ref().expect("-r's counters");
        let failures: Vec<i64> = commands[0].iter().map(|c| c.failures).collect();
        assert_eq!(failures, [0, 2, 0]);
    }
});

all_drives!(statements_are_counted_by_what_they_returned, |drive| {
    // The last word's statement kinds (what a workload reports of its queries): rows
    // returned are a read, rows changed a write, anything else (BEGIN, a DELETE of
    // no row, COMMIT) other.
    let script = "BEGIN;\nSELECT 1;\nUPDATE t;\nDELETE FROM t;\nEND;\n";
    let server = FakeServer::answering(|r: &Request| {
        if r.sql.starts_with("DELETE") {
            return Reply::Tag("DELETE 0".into());
        }
        Reply::usual(&r.sql)
    });
    let ran = Bench::new(&["-t", "3"], script).run(&server, drive);
    ran.assert_succeeded(3);
    let kinds = ran.done[0].queries;
    assert_eq!(
        (kinds.read, kinds.write, kinds.other, kinds.errors),
        (3, 3, 9, 0)
    );
});
