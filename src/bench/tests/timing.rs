//! Time on the test clock: `-T` and the transaction running at its end, `-R` slots
//! and their skips under `-L`, `-C` connections.

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
