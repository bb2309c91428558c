//! io_uring refused or failing, made so by a seccomp filter on the thread: a thread
//! whose kernel refuses the ring (or a probe of it) waits with epoll instead; a ring
//! that fails once its clients run aborts every one of them in pgbench's words for a
//! failed wait, keeps what they counted, leaks the buffers the kernel may still
//! write into, and ends.

use super::seccomp::{refuse, Refusal};
use super::*;

/// Which drivers a thread that first did `refusal` is given: whether
/// `Driver::uring` made a ring, and whether `Driver::new` (the runner's choice for a
/// thread of several clients) fell back to epoll.
fn drivers_after(refusal: Refusal) -> (bool, bool) {
    std::thread::spawn(move || {
        refuse(refusal);
        let uring = Driver::uring(3).is_some();
        let epoll = matches!(Driver::new(3), Driver::Epoll);
        (uring, epoll)
    })
    .join()
    .expect("the refusing thread")
}

#[test]
fn a_ring_the_kernel_refuses_leaves_the_thread_to_epoll() {
    if !uring_or_skip() {
        return;
    }
    // As a container's seccomp profile refuses io_uring; the probe of the operations
    // the driver submits, as a kernel that knows no IORING_REGISTER_PROBE (before
    // 5.6) or a sandbox's partial io_uring would.
    for call in [libc::SYS_io_uring_setup, libc::SYS_io_uring_register] {
        assert_eq!(
            drivers_after(Refusal::every(call, libc::EPERM)),
            (false, true),
            "system call {call} refused"
        );
    }
    // The same with nothing refused (the test thread's own kernel): a ring.
    assert!(Driver::uring(3).is_some());
}

/// `-c 3 -j 1` on the io_uring driver, `refusal` made after the clients connected:
/// client 0 answered as usual, clients 1 and 2 never (so their receives are in flight
/// when the ring fails). What the clients told.
fn run_until_the_ring_fails(refusal: fn(usize, std::os::fd::RawFd), script: &str) -> Ran {
    let server = FakeServer::answering(|r: &Request| match r.sql.trim() {
        "SELECT 0;" => Reply::usual(&r.sql),
        _ => Reply::Hang,
    });
    Bench::new(&["-c", "3", "-j", "1", "-t", "3", "-D", "n=0"], script)
        .on_connected(refusal)
        .run(&server, Drive::Uring)
}

/// Every client's abort when the thread's wait failed with `strerror`.
fn every_client_aborted(strerror: &str) -> Vec<String> {
    (0..3)
        .map(|c| {
            format!(
                "io_uring_enter() failed: {strerror}\n\
                 client {c} aborted: could not wait for the server"
            )
        })
        .collect()
}

#[test]
fn a_ring_that_fails_its_first_wait_aborts_every_client() {
    if !uring_or_skip() {
        return;
    }
    fn refuse_every_wait(client: usize, _: std::os::fd::RawFd) {
        if client == 0 {
            refuse(Refusal::every(libc::SYS_io_uring_enter, libc::EPERM));
        }
    }
    let ran = run_until_the_ring_fails(refuse_every_wait, "SELECT :client_id;\n");
    assert!(ran.records.is_empty(), "{:?}", ran.records);
    assert_eq!(ran.aborts, every_client_aborted("Operation not permitted"));
    assert_eq!(ran.done.len(), 3);
}

#[test]
fn a_ring_that_fails_mid_run_aborts_every_client_and_keeps_what_was_counted() {
    if !uring_or_skip() {
        return;
    }
    // A wait with a timeout (IORING_ENTER_EXT_ARG in the call's flags) refused as a
    // kernel before 5.11 refused it: the first comes with client 0's `\sleep`, once its
    // first transaction is done and while clients 1 and 2 wait for their replies.
    fn refuse_timed_waits(client: usize, _: std::os::fd::RawFd) {
        if client == 0 {
            refuse(Refusal {
                call: libc::SYS_io_uring_enter,
                with_flag: Some((3, io_uring::EnterFlags::EXT_ARG.bits())),
                errno: libc::EINVAL,
            });
        }
    }
    let script = "\\set n :n + 1\n\\if :n > 1\n\\sleep 1 ms\n\\endif\nSELECT :client_id;\n";
    let ran = run_until_the_ring_fails(refuse_timed_waits, script);
    // Client 0's first transaction, counted; nothing of the others'.
    ran.assert_succeeded(1);
    assert_eq!(ran.aborts, every_client_aborted("Invalid argument"));
    assert_eq!(ran.done.len(), 3);
}
