//! `--reconnect`: a client whose connection drops, whose server shuts down under it
//! (FATAL 57P01) or turns read-only (25006) counts the transaction as failed, connects
//! again and goes on; statements are prepared again, `\gset` variables kept; under
//! `-R` the transactions due during the outage carry it in their latency; one that
//! cannot connect again within `--reconnect-timeout` aborts.

use super::*;
use crate::bench::events::LinkEvent;
use std::sync::Mutex;

/// The kinds of what the client said of its connection, in order.
fn said(ran: &Ran) -> Vec<&'static str> {
    ran.links
        .iter()
        .map(|l| match l {
            LinkEvent::Lost { .. } => "lost",
            LinkEvent::Reconnected { .. } => "reconnected",
            LinkEvent::Recovered { .. } => "recovered",
            LinkEvent::GaveUp { .. } => "gave up",
        })
        .collect()
}

/// The SQLSTATEs of the failed transactions the client reported lost.
fn lost_states(ran: &Ran) -> Vec<String> {
    ran.links
        .iter()
        .filter_map(|l| match l {
            LinkEvent::Lost {
                failed: Some((s, _)),
                ..
            } => Some(String::from_utf8_lossy(s).into_owned()),
            _ => None,
        })
        .collect()
}

all_drives!(
    a_dropped_connection_is_a_failed_transaction_then_a_new_one,
    |drive| {
        let server = FakeServer::answering(|r: &Request| match (r.connection, r.number) {
            (0, 2) => Reply::Drop,
            _ => Reply::usual(&r.sql),
        });
        let ran = Bench::new(&["-t", "5", "--reconnect"], "SELECT 1;\n").run(&server, drive);
        assert!(ran.aborts.is_empty(), "{:?}", ran.aborts);
        // A statement outside a block commits by itself: lost in flight, in doubt.
        use TxOutcome::{InDoubt, Success as Ok};
        assert_eq!(ran.outcomes(), [Ok, Ok, InDoubt, Ok, Ok]);
        assert_eq!(said(&ran), ["lost", "reconnected", "recovered"]);
        assert_eq!(lost_states(&ran), ["08006"]);
        assert_eq!(server.connections(), 2);
        let LinkEvent::Lost {
            last_success, at, ..
        } = ran.links[0]
        else {
            unreachable!()
        };
        assert_eq!(last_success, Some(ran.records[1].end_us));
        assert_eq!(at, ran.records[2].end_us);
    }
);

all_drives!(without_reconnect_the_same_drop_still_aborts, |drive| {
    let server = FakeServer::answering(|r: &Request| match (r.connection, r.number) {
        (0, 2) => Reply::Drop,
        _ => Reply::usual(&r.sql),
    });
    let ran = Bench::new(&["-t", "5"], "SELECT 1;\n").run(&server, drive);
    ran.assert_succeeded(2);
    assert!(ran.links.is_empty());
    assert_eq!(
        ran.abort(),
        "client 0 aborted in command 0 (SQL) of script 0; perhaps the backend died while processing"
    );
});

all_drives!(
    a_shutdown_fails_the_transaction_with_its_sqlstate_and_statements_are_prepared_again,
    |drive| {
        // -M prepared: a statement the new connection does not know fails (26000), so
        // each success after the shutdown is one prepared again.
        let server = FakeServer::answering(|r: &Request| match (r.connection, r.number) {
            (0, 1) => Reply::Fatal {
                code: "57P01".into(),
                message: "terminating connection due to administrator command".into(),
            },
            _ => Reply::usual(&r.sql),
        });
        let ran = Bench::new(&["-t", "4", "-M", "prepared", "--reconnect"], "SELECT 1;\n")
            .run(&server, drive);
        assert!(ran.aborts.is_empty(), "{:?}", ran.aborts);
        // A FATAL may come after the commit (an immediate shutdown): in doubt.
        use TxOutcome::{InDoubt, Success as Ok};
        assert_eq!(ran.outcomes(), [Ok, InDoubt, Ok, Ok]);
        assert_eq!(lost_states(&ran), ["57P01"]);
    }
);

all_drives!(a_read_only_server_is_left_for_a_new_connection, |drive| {
    // A primary demoted under the client: its writes fail (25006) on a connection that
    // stays up; the client leaves it for a new one, which may find the new primary.
    let server = FakeServer::answering(|r: &Request| match (r.connection, r.number) {
        (0, 1) => Reply::error("25006", "cannot execute INSERT in a read-only transaction"),
        _ => Reply::usual(&r.sql),
    });
    let ran =
        Bench::new(&["-t", "3", "--reconnect"], "INSERT INTO t VALUES (1);\n").run(&server, drive);
    assert!(ran.aborts.is_empty(), "{:?}", ran.aborts);
    // The server refused the INSERT with an ERROR: nothing committed, not in doubt.
    assert_eq!(ran.count(TxOutcome::OtherFailure), 1);
    assert_eq!(ran.count(TxOutcome::InDoubt), 0);
    assert_eq!(lost_states(&ran), ["25006"]);
    assert_eq!(server.connections(), 2);
});

all_drives!(
    gset_variables_keep_their_values_across_a_reconnection,
    |drive| {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let server = FakeServer::answering(move |r: &Request| {
            log.lock().unwrap().push((r.connection, r.sql.clone()));
            match (r.connection, r.number) {
                (0, 1) => Reply::Drop,
                _ if r.sql.starts_with("SELECT 7 AS x") => Reply::row(&["x"], &["7"]),
                _ => Reply::usual(&r.sql),
            }
        });
        let script = "\\if :x = 0\nSELECT 7 AS x \\gset\n\\else\nSELECT :x + 1;\n\\endif\n";
        let ran = Bench::new(&["-t", "3", "-D", "x=0", "--reconnect"], script).run(&server, drive);
        assert!(ran.aborts.is_empty(), "{:?}", ran.aborts);
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                (0, "SELECT 7 AS x ".to_string()),
                (0, "SELECT 7 + 1;".to_string()),
                (1, "SELECT 7 + 1;".to_string()),
            ]
        );
    }
);

all_drives!(a_client_that_cannot_connect_again_in_time_aborts, |drive| {
    let server = FakeServer::start(|mut s| {
        if s.number() == 0 {
            if s.accept() {
                s.answer(&|r: &Request| match r.number {
                    1 => Reply::Drop,
                    _ => Reply::usual(&r.sql),
                });
            }
        } else {
            s.refuse("the database system is shutting down");
        }
    });
    let bench = Bench::new(
        &["-t", "5", "--reconnect", "--reconnect-timeout=1"],
        "SELECT 1;\n",
    );
    let ran = bench.run(&server, drive);
    assert_eq!(ran.outcomes(), [TxOutcome::Success, TxOutcome::InDoubt]);
    assert_eq!(said(&ran), ["lost", "gave up"]);
    let abort = ran.abort();
    assert!(
        abort.ends_with("\nclient 0 aborted while establishing connection"),
        "{abort}"
    );
    assert!(
        abort.contains("could not connect again within --reconnect-timeout=1 s"),
        "{abort}"
    );
    // Attempts every 10, 20, 40 ... up to 200 ms, for one second of the test clock.
    let attempts = server.connections() - 1;
    assert!((7..=12).contains(&attempts), "{attempts} attempts");
});

all_drives!(
    under_r_the_transactions_due_in_the_outage_carry_it,
    |drive| {
        // -R 100: a slot every 10 ms on average. The connection drops at the fifth
        // transaction, and for 500 ms of the run clock every connection is refused: the
        // transactions due meanwhile run late, and their latency holds the wait.
        let bench = Bench::new(&["-t", "20", "-R", "100", "--reconnect"], "SELECT 1;\n");
        let clock = Arc::clone(&bench.clock);
        let back_at = Arc::new(std::sync::atomic::AtomicI64::new(i64::MAX));
        let back = Arc::clone(&back_at);
        let server = FakeServer::start(move |mut s| {
            use std::sync::atomic::Ordering::SeqCst;
            if s.number() > 0 && clock.now_us() < back.load(SeqCst) {
                s.refuse("the database system is starting up");
                return;
            }
            if s.accept() {
                let (clock, back) = (Arc::clone(&clock), Arc::clone(&back));
                s.answer(&move |r: &Request| {
                    if r.connection == 0 && r.number == 4 {
                        back.store(clock.now_us() + 500_000, SeqCst);
                        return Reply::Drop;
                    }
                    Reply::usual(&r.sql)
                });
            }
        });
        let ran = bench.run(&server, drive);
        assert!(ran.aborts.is_empty(), "{:?}", ran.aborts);
        let failed = ran
            .records
            .iter()
            .position(|r| r.outcome == TxOutcome::InDoubt)
            .expect("a failed transaction");
        let first_after = &ran.records[failed + 1];
        assert_eq!(first_after.outcome, TxOutcome::Success);
        // Due right after the failure, it ran once connected, 500 ms or more later.
        assert!(first_after.latency >= 500_000.0, "{first_after:?}");
        assert_eq!(
            first_after.latency, first_after.lag,
            "the server answers at once"
        );
        // The schedule went on: the next ones were due within the outage too.
        assert!(
            ran.records[failed + 2].latency >= 400_000.0,
            "{:?}",
            ran.records
        );
    }
);

/// In a transaction block, a loss before its COMMIT leaves nothing committed; a loss
/// with the COMMIT in flight leaves it in doubt. Request numbers count each
/// connection's statements: BEGIN 0, SELECT 1, END 2, then the next transaction's.
fn lost_at(drive: Drive, request: usize, args: &[&str]) -> Ran {
    let server = FakeServer::answering(move |r: &Request| match (r.connection, r.number) {
        (0, n) if n == request => Reply::Drop,
        _ => Reply::usual(&r.sql),
    });
    Bench::new(args, "BEGIN;\nSELECT 1;\nEND;\n").run(&server, drive)
}

all_drives!(
    in_a_block_only_a_loss_during_its_commit_is_in_doubt,
    |drive| {
        use TxOutcome::{InDoubt, OtherFailure as Failed, Success as Ok};
        let args = ["-t", "2", "--reconnect"];
        assert_eq!(lost_at(drive, 0, &args).outcomes(), [Failed, Ok]);
        assert_eq!(lost_at(drive, 1, &args).outcomes(), [Failed, Ok]);
        let at_commit = lost_at(drive, 2, &args);
        assert_eq!(at_commit.outcomes(), [InDoubt, Ok]);
        let in_doubt: Vec<bool> = at_commit
            .links
            .iter()
            .filter_map(|l| match l {
                LinkEvent::Lost {
                    failed: Some((_, d)),
                    ..
                } => Some(*d),
                _ => None,
            })
            .collect();
        assert_eq!(in_doubt, [true]);
        assert_eq!(at_commit.done[0].cut_short_in_doubt, 0);
    }
);

all_drives!(
    without_reconnect_a_client_aborted_during_its_commit_leaves_it_in_doubt,
    |drive| {
        // The abort counts nothing of the transaction, but it may have committed.
        let ran = lost_at(drive, 5, &["-t", "3"]);
        ran.assert_succeeded(1);
        assert_eq!(ran.done[0].cut_short_in_doubt, 1);
        let before = lost_at(drive, 4, &["-t", "3"]);
        before.assert_succeeded(1);
        assert_eq!(before.done[0].cut_short_in_doubt, 0);
    }
);
