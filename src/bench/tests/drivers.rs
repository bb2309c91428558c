//! Several clients on one thread: each driver advances the clients that can go on
//! in time order, and in client order at the same instant; replies cut into tiny
//! packets, a request larger than the socket buffers, and one client's failure that
//! leaves the others running; a socket the kernel will not let epoll watch.

use super::meta::{recording, statements};
use super::seccomp::{refuse, Refusal};
use super::*;
use pgbench_wire::testing::Session;
use std::time::Duration;

/// `-c N` clients: one thread each when alone, else all on one thread.
fn clients(drive: Drive, n: usize) -> [String; 4] {
    let threads = if drive == Drive::Alone { n } else { 1 };
    ["-c".into(), n.to_string(), "-j".into(), threads.to_string()]
}

fn args<'a>(owned: &'a [String], more: &[&'a str]) -> Vec<&'a str> {
    owned
        .iter()
        .map(String::as_str)
        .chain(more.iter().copied())
        .collect()
}

/// Each of three clients sleeps `ms` (a function of its number), then aborts; the
/// order of the aborts is the order the driver advanced them in.
fn abort_order(drive: Drive, ms: &str) -> Vec<String> {
    let script = format!("\\set ms {ms}\n\\sleep :ms ms\n\\set x 1 / 0\n");
    let owned = clients(drive, 3);
    let ran = Bench::new(&args(&owned, &["-t", "1"]), &script).run(&usual_server(), drive);
    ran.aborts
        .iter()
        .map(|a| a.lines().last().unwrap_or("").to_string())
        .collect()
}

fn advanced_by_time_then_in_client_order(drive: Drive) {
    let line = |c| {
        format!(
            "client {c} aborted in command 2 (set) of script 0; evaluation of meta-command failed"
        )
    };
    // Due at once: client order.
    assert_eq!(abort_order(drive, "1"), [line(0), line(1), line(2)]);
    // Client 2 due first, then 1, then 0.
    assert_eq!(
        abort_order(drive, "3 - :client_id"),
        [line(2), line(1), line(0)]
    );
}

#[test]
fn epoll_advances_clients_by_time_then_in_client_order() {
    advanced_by_time_then_in_client_order(Drive::Epoll);
}

#[test]
fn uring_advances_clients_by_time_then_in_client_order() {
    if uring_or_skip() {
        advanced_by_time_then_in_client_order(Drive::Uring);
    }
}

all_drives!(three_clients_read_replies_cut_into_tiny_packets, |drive| {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let server = FakeServer::start(move |mut s: Session| {
        s.split_writes(3);
        if s.accept() {
            let log = Arc::clone(&log);
            s.answer(&move |r: &Request| {
                log.lock().unwrap().push((r.connection, r.sql.clone()));
                match r.sql.trim() {
                    "SELECT one" => Reply::row(&["v"], &["1"]),
                    sql => Reply::usual(sql),
                }
            });
        }
    });
    let script = "SELECT one \\gset\n\\startpipeline\nSELECT :v + :client_id;\n\\endpipeline\n";
    let owned = clients(drive, 3);
    let ran = Bench::new(&args(&owned, &["-t", "4", "-M", "extended"]), script).run(&server, drive);
    ran.assert_succeeded(12);
    let seen = seen.lock().unwrap();
    for connection in 0..3 {
        let sent: Vec<&str> = seen
            .iter()
            .filter(|(c, _)| *c == connection)
            .map(|(_, sql)| sql.as_str())
            .collect();
        assert_eq!(sent.len(), 8, "{sent:?}");
    }
});

all_drives!(
    one_client_losing_its_server_leaves_the_others_running,
    |drive| {
        // Client 1 is told by its statement, not by its connection's number: clients
        // on threads of their own connect in any order.
        let server =
            FakeServer::answering(|r: &Request| match r.sql.trim().trim_end_matches(';') {
                "SELECT 1" if r.number == 1 => Reply::Drop,
                _ => Reply::usual(&r.sql),
            });
        let owned = clients(drive, 3);
        let script = "SELECT :client_id;\n";
        let ran = Bench::new(&args(&owned, &["-t", "3"]), script).run(&server, drive);
        assert_eq!(ran.count(TxOutcome::Success), 7);
        assert_eq!(
        ran.abort(),
        "client 1 aborted in command 0 (SQL) of script 0; perhaps the backend died while processing"
    );
        assert_eq!(ran.done.len(), 3);
    }
);

all_drives!(
    a_request_larger_than_the_socket_buffers_goes_out_in_pieces,
    |drive| {
        // 16 MiB, read 256 KiB at a time: the client's socket fills and its writes wait
        // (blocking), come back with EAGAIN (epoll) or short (io_uring).
        let big = "x".repeat(16 << 20);
        let got = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let told = Arc::clone(&got);
        let server = FakeServer::start(move |mut s: Session| {
            s.read_slowly(256 << 10, Duration::from_micros(500));
            if s.accept() {
                let told = Arc::clone(&told);
                s.answer(&move |r: &Request| {
                    told.fetch_add(r.sql.len(), std::sync::atomic::Ordering::SeqCst);
                    Reply::usual(&r.sql)
                });
            }
        });
        let define = format!("big={big}");
        let ran = Bench::new(&["-t", "2", "-D", &define], "SELECT ':big';\n").run(&server, drive);
        ran.assert_succeeded(2);
        let one = "SELECT '';".len() + big.len();
        assert_eq!(got.load(std::sync::atomic::Ordering::SeqCst), 2 * one);
    }
);

all_drives!(clients_sharing_a_thread_retry_on_their_own, |drive| {
    // Every client's first UPDATE fails: each retries its own transaction once.
    let (server, seen) = recording(|r| {
        (r.sql.starts_with("UPDATE") && r.number == 1)
            .then(|| Reply::error("40001", "could not serialize access"))
    });
    let script = "BEGIN;\nUPDATE t SET c = :client_id;\nEND;\n";
    let owned = clients(drive, 3);
    let ran = Bench::new(&args(&owned, &["-t", "2", "--max-tries=2"]), script).run(&server, drive);
    ran.assert_succeeded(6);
    assert_eq!(ran.tries().iter().filter(|&&t| t == 2).count(), 3);
    let updates = statements(&seen)
        .iter()
        .filter(|s| s.starts_with("UPDATE"))
        .count();
    assert_eq!(updates, 9);
});

/// Client 0's first reply is held until clients 1 and 2 have each sent all five of
/// their statements: a driver that waited on client 0 alone would never get there
/// (the hold gives up after a generous minute, failing the test).
fn a_slow_reply_holds_up_no_other_client(drive: Drive) {
    use std::sync::{Condvar, Mutex};
    let sent = Arc::new((Mutex::new([0usize; 3]), Condvar::new()));
    let shared = Arc::clone(&sent);
    let server = FakeServer::answering(move |r: &Request| {
        let (counts, changed) = &*shared;
        let mut c = counts.lock().unwrap();
        c[r.connection] += 1;
        changed.notify_all();
        if r.connection == 0 && r.number == 0 {
            let (c, waited) = changed
                .wait_timeout_while(c, Duration::from_secs(60), |c| c[1] < 5 || c[2] < 5)
                .unwrap();
            assert!(!waited.timed_out(), "the others were held up: {c:?}");
        }
        Reply::usual(&r.sql)
    });
    let owned = clients(drive, 3);
    let ran = Bench::new(&args(&owned, &["-t", "5"]), "SELECT 1;\n").run(&server, drive);
    ran.assert_succeeded(15);
    assert_eq!(*sent.0.lock().unwrap(), [5, 5, 5]);
}

#[test]
fn epoll_a_slow_reply_holds_up_no_other_client() {
    a_slow_reply_holds_up_no_other_client(Drive::Epoll);
}

#[test]
fn uring_a_slow_reply_holds_up_no_other_client() {
    if uring_or_skip() {
        a_slow_reply_holds_up_no_other_client(Drive::Uring);
    }
}

/// Makes the kernel refuse `epoll_ctl` (`EPERM`) to this thread from now on, as a
/// kernel may refuse a socket (`ENOSPC` past `max_user_watches`): on the test's
/// driver thread alone, which ends with the run.
fn refuse_epoll_ctl(_client: usize, _socket: std::os::fd::RawFd) {
    refuse(Refusal::every(libc::SYS_epoll_ctl, libc::EPERM));
}

#[test]
fn epoll_aborts_a_client_whose_socket_it_cannot_watch() {
    let ran = Bench::new(&["-c", "1", "-j", "1", "-t", "3"], "SELECT 1;\n")
        .on_connected(refuse_epoll_ctl)
        .run(&usual_server(), Drive::Epoll);
    // Before, the failure was logged and the socket taken as watched: the client
    // waited for a readiness that could never come.
    assert_eq!(
        ran.abort(),
        "epoll_ctl() failed: Operation not permitted\n\
         client 0 aborted: could not wait for the server"
    );
    assert!(ran.records.is_empty());
    assert_eq!(ran.done.len(), 1);
}

/// `-j` threads run on one OS thread per CPU unless a client would hold its thread up
/// for long (`-C`, `--reconnect`, `\\shell`, `\\setshell`); `--os-threads` decides when
/// given, never more than `-j`.
#[test]
fn threads_run_on_one_os_thread_per_cpu_unless_a_client_blocks_its_thread() {
    let os = |args: &[&str], script: &str, cpus| {
        threads::os_threads(&Bench::new(args, script).plan(), cpus)
    };
    let select = "select 1;\n";
    assert_eq!(os(&["-c", "256", "-j", "256"], select, 2), 2);
    assert_eq!(os(&["-c", "256", "-j", "256"], select, 64), 64);
    assert_eq!(os(&["-c", "4", "-j", "4"], select, 64), 4);
    assert_eq!(os(&["-c", "8"], select, 2), 1);
    assert_eq!(os(&["-c", "8", "-j", "8", "-C"], select, 2), 8);
    assert_eq!(os(&["-c", "8", "-j", "8", "--reconnect"], select, 2), 8);
    assert_eq!(os(&["-c", "8", "-j", "8"], "\\shell true\n", 2), 8);
    assert_eq!(os(&["-c", "8", "-j", "8"], "\\setshell x echo 1\n", 2), 8);
    assert_eq!(os(&["-c", "8", "-j", "8", "--os-threads=3"], select, 2), 3);
    assert_eq!(os(&["-c", "8", "-j", "8", "--os-threads=30"], select, 2), 8);
    assert_eq!(
        os(&["-c", "8", "-j", "8", "-C", "--os-threads=1"], select, 2),
        1
    );
}

/// Clients of several `-j` threads on one OS thread (`--os-threads=1`): the four
/// clients of `-j 4` share its driver, and each runs its 3 transactions.
#[test]
fn clients_of_several_threads_share_one_os_thread() {
    let bench = Bench::new(
        &["-c", "4", "-j", "4", "-t", "3", "--os-threads=1"],
        "select 1;\n",
    );
    let ran = bench.run(&usual_server(), Drive::Alone);
    ran.assert_succeeded(12);
}
