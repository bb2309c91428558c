//! How a client stops for good, and what it says: a connection that drops, a FATAL
//! error, COPY, a transaction block left open, a `-C` connection refused, and a server
//! that never answers (the run's stop ends the client without an abort).

use super::*;
use std::sync::atomic::{AtomicBool, Ordering};

all_drives!(a_dropped_connection_aborts_with_pgbench_words, |drive| {
    let server = FakeServer::answering(|r: &Request| match r.number {
        2 => Reply::Drop,
        _ => Reply::usual(&r.sql),
    });
    let ran = Bench::new(&["-t", "5"], "SELECT 1;\n").run(&server, drive);
    ran.assert_succeeded(2);
    assert_eq!(
        ran.abort(),
        "client 0 aborted in command 0 (SQL) of script 0; perhaps the backend died while processing"
    );
    assert_eq!(ran.done.len(), 1);
});

all_drives!(
    a_fatal_error_is_one_abort_with_the_server_message,
    |drive| {
        let server = FakeServer::answering(|r: &Request| match r.number {
            1 => Reply::Fatal {
                code: "57P01".into(),
                message: "terminating connection due to administrator command".into(),
            },
            _ => Reply::usual(&r.sql),
        });
        let ran = Bench::new(&["-t", "3", "-M", "extended"], "SELECT 1;\n").run(&server, drive);
        ran.assert_succeeded(1);
        assert_eq!(
            ran.abort(),
            "client 0 script 0 aborted in command 0 query 0: \
         FATAL:  terminating connection due to administrator command"
        );
    }
);

#[test]
fn copy_is_not_supported() {
    let server = FakeServer::answering(|r: &Request| match r.sql.as_str() {
        "COPY t FROM STDIN;" => Reply::CopyIn,
        sql => Reply::usual(sql),
    });
    let ran = Bench::new(&["-t", "2"], "COPY t FROM STDIN;\n").run(&server, Drive::Alone);
    assert!(ran.records.is_empty());
    assert_eq!(ran.abort(), "COPY is not supported in pgbench, aborting");
}

all_drives!(
    a_transaction_block_left_open_is_counted_then_aborts,
    |drive| {
        let ran = Bench::new(&["-t", "3"], "BEGIN;\nSELECT 1;\n").run(&usual_server(), drive);
        ran.assert_succeeded(1);
        assert_eq!(
            ran.abort(),
            "client 0 aborted: end of script reached without completing the last transaction"
        );
    }
);

#[test]
fn a_refused_reconnection_under_c_aborts_while_establishing_connection() {
    let server = FakeServer::start(|mut s| {
        if s.number() == 0 {
            if s.accept() {
                s.answer(&|r: &Request| Reply::usual(&r.sql));
            }
        } else {
            s.refuse("password authentication failed for user \"tester\"");
        }
    });
    let ran = Bench::new(&["-t", "3", "-C"], "SELECT 1;\n").run(&server, Drive::Alone);
    ran.assert_succeeded(1);
    let abort = ran.abort();
    assert!(
        abort.ends_with("client 0 aborted while establishing connection"),
        "{abort}"
    );
    assert!(
        abort.contains("password authentication failed for user \"tester\""),
        "{abort}"
    );
}

all_drives!(evaluation_errors_abort_in_their_command, |drive| {
    let ran = Bench::new(&["-t", "1"], "SELECT 1;\n\\set x 1 / (:client_id * 0)\n")
        .run(&usual_server(), drive);
    assert!(ran.records.is_empty());
    assert_eq!(
        ran.abort(),
        "division by zero\n\
         client 0 aborted in command 1 (set) of script 0; evaluation of meta-command failed"
    );
});

/// Waits (a generous real minute: the machine may be loaded) for `flag`.
pub fn wait_for(flag: &AtomicBool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !flag.load(Ordering::SeqCst) {
        assert!(
            std::time::Instant::now() < until,
            "the server never got the request"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

all_drives!(
    a_server_that_never_answers_is_cut_off_after_the_grace,
    |drive| {
        let asked = Arc::new(AtomicBool::new(false));
        let told = Arc::clone(&asked);
        let server = FakeServer::answering(move |r: &Request| {
            if r.number == 1 {
                told.store(true, Ordering::SeqCst);
                return Reply::Hang;
            }
            Reply::usual(&r.sql)
        });
        let deadline = 1_000;
        let bench = Bench::new(&["-T", "1"], "SELECT 1;\n").ends_after(deadline);
        let clock = Arc::clone(&bench.clock);
        let ran = bench.run_with(&server, drive, |control| {
            wait_for(&asked);
            // As the collector would, once the grace after -T is over: cancel, then shut
            // the sockets of the clients still waiting.
            let overdue = START_US + deadline + crate::bench::control::grace_us(0.0) + 1;
            clock.reach(overdue);
            control.watch(overdue, 0.0);
            control.wait_for_cancels(std::time::Duration::from_secs(60));
            let shut = overdue + crate::bench::control::CLOSE_GRACE_US + 1;
            control.watch(shut, 0.0);
        });
        // The first transaction counted; the one cut short is not, and nobody aborted.
        ran.assert_succeeded(1);
        assert!(ran.done[0].unfinished);
        assert_eq!(server.cancels(), 1);
    }
);
