//! Serialization and deadlock failures: retried as `--max-tries` and `-L` allow, the
//! transaction's random state rewound for each try, counted as failures after the
//! last; other errors abort the client.

use super::meta::{recording, statements};
use super::*;

const TRANSFER: &str = "\\set v random(1, 1000000)\nBEGIN;\nUPDATE t SET v = :v;\nEND;\n";

/// A server whose `UPDATE` fails with `code` on the tries `failing` says (by the
/// number of UPDATEs seen so far, from 0).
fn failing_updates(
    code: &'static str,
    failing: impl Fn(usize) -> bool + Send + Sync + 'static,
) -> (FakeServer, Arc<std::sync::Mutex<Vec<Request>>>) {
    let updates = std::sync::atomic::AtomicUsize::new(0);
    recording(move |r| {
        if !r.sql.starts_with("UPDATE") {
            return None;
        }
        let n = updates.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        failing(n).then(|| Reply::error(code, "could not serialize access"))
    })
}

all_drives!(
    a_serialization_failure_is_retried_with_the_same_random_values,
    |drive| {
        let (server, seen) = failing_updates("40001", |n| n == 0);
        let ran = Bench::new(&["-t", "2", "-M", "extended", "--max-tries=3"], TRANSFER)
            .run(&server, drive);
        ran.assert_succeeded(2);
        assert_eq!(ran.tries(), [2, 1]);
        let sent = statements(&seen);
        let updates: Vec<&String> = sent.iter().filter(|s| s.starts_with("UPDATE")).collect();
        assert_eq!(updates.len(), 3, "{sent:?}");
        // The retry draws what the failed try drew; the next transaction draws anew.
        assert_eq!(updates[0], updates[1]);
        assert_ne!(updates[1], updates[2]);
        assert_eq!(sent[2], "ROLLBACK", "{sent:?}");

        // And the values are those of a run without failures: the rewind loses no draw.
        let (clean, clean_seen) = recording(|_| None);
        Bench::new(&["-t", "2", "-M", "extended"], TRANSFER).run(&clean, drive);
        let clean_updates: Vec<String> = statements(&clean_seen)
            .into_iter()
            .filter(|s| s.starts_with("UPDATE"))
            .collect();
        assert_eq!(clean_updates, [updates[1].clone(), updates[2].clone()]);
    }
);

all_drives!(a_deadlock_is_retried_too, |drive| {
    let (server, _) = failing_updates("40P01", |n| n < 2);
    let ran = Bench::new(&["-t", "1", "--max-tries=3"], TRANSFER).run(&server, drive);
    ran.assert_succeeded(1);
    assert_eq!(ran.tries(), [3]);
});

#[test]
fn the_last_try_failing_counts_a_failure_and_the_client_goes_on() {
    let (server, _) = failing_updates("40001", |n| n < 2);
    // -r: the failure and the retry are the UPDATE's.
    let ran = Bench::new(&["-t", "2", "--max-tries=2", "-r"], TRANSFER).run(&server, Drive::Alone);
    assert!(ran.aborts.is_empty(), "{:?}", ran.aborts);
    assert_eq!(
        ran.outcomes(),
        [TxOutcome::SerializationFailure, TxOutcome::Success]
    );
    assert_eq!(ran.tries(), [2, 1]);
    let commands = ran.done[0].commands.as_ref().expect("-r's counters");
    assert_eq!(commands[0][2].retries, 1);
    assert_eq!(commands[0][2].failures, 1);
}

#[test]
fn without_max_tries_a_deadlock_fails_once_and_is_not_retried() {
    let (server, seen) = failing_updates("40P01", |n| n == 0);
    let ran = Bench::new(&["-t", "2"], TRANSFER).run(&server, Drive::Alone);
    assert_eq!(
        ran.outcomes(),
        [TxOutcome::DeadlockFailure, TxOutcome::Success]
    );
    let updates = statements(&seen)
        .iter()
        .filter(|s| s.starts_with("UPDATE"))
        .count();
    assert_eq!(updates, 2);
}

#[test]
fn latency_limit_bounds_unlimited_tries() {
    let bench = Bench::new(&["-t", "1", "--max-tries=0", "-L", "10"], TRANSFER);
    // Each failing UPDATE takes 4 ms of the run clock: tries end at 12 ms > 10 ms.
    let clock = Arc::clone(&bench.clock);
    let server = FakeServer::answering(move |r: &Request| {
        if r.sql.starts_with("UPDATE") {
            clock.advance(4_000);
            return Reply::error("40001", "could not serialize access");
        }
        Reply::usual(&r.sql)
    });
    let ran = bench.run(&server, Drive::Alone);
    assert_eq!(ran.outcomes(), [TxOutcome::SerializationFailure]);
    assert_eq!(ran.tries(), [3]);
}

all_drives!(
    another_error_aborts_the_client_with_the_server_message,
    |drive| {
        let (server, _) = failing_updates("23505", |_| true);
        let ran = Bench::new(&["-t", "3", "--max-tries=5"], TRANSFER).run(&server, drive);
        assert!(ran.records.is_empty());
        assert_eq!(
            ran.abort(),
            "client 0 script 0 aborted in command 2 query 0: ERROR:  could not serialize access"
        );
    }
);

all_drives!(
    continue_on_error_counts_other_errors_as_failures_and_goes_on,
    |drive| {
        // pgbench 19: a unique violation ends the try, is counted as failed (never
        // retried), and the client goes on.
        let (server, _) = failing_updates("23505", |n| n % 2 == 0);
        let args = ["-t", "4", "--max-tries=3", "--continue-on-error"];
        let ran = Bench::new(&args, TRANSFER).run(&server, drive);
        assert!(ran.aborts.is_empty(), "{:?}", ran.aborts);
        assert_eq!(
            ran.outcomes(),
            [
                TxOutcome::OtherFailure,
                TxOutcome::Success,
                TxOutcome::OtherFailure,
                TxOutcome::Success
            ]
        );
        assert_eq!(ran.tries(), [1, 1, 1, 1]);
    }
);

all_drives!(ignored_errors_are_the_failures_and_the_retries, |drive| {
    // sysbench's "ignored errors" after a workload's report are every error
    // a counted try ended with: the failed transactions plus the retries.
    let (server, _) = failing_updates("40001", |n| n < 3);
    let args = ["-t", "4", "--max-tries=2", "--continue-on-error"];
    let ran = Bench::new(&args, TRANSFER).run(&server, drive);
    assert_eq!(ran.tries(), [2, 2, 1, 1]);
    let failed = ran.count(TxOutcome::SerializationFailure);
    let retries: u32 = ran.tries().iter().map(|t| t - 1).sum();
    assert_eq!((failed, retries), (1, 2));
    assert_eq!(ran.done[0].queries.errors, 3);
});
