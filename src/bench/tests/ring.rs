//! io_uring refused, made so by a seccomp filter on the thread: a thread whose kernel
//! refuses the ring (or a probe of it) waits with epoll instead.

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
