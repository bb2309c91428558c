//! Making the kernel refuse one system call to the calling thread from then on, as a
//! container's seccomp profile or an older kernel would: a seccomp filter, which the
//! threads the caller starts inherit and no other thread sees. How the driver tests
//! make epoll and io_uring fail without a test-only branch in the drivers. Call it on
//! a thread that ends with the test (a driver's, or one of the test's own), never on
//! the test harness's thread.
#![allow(unsafe_code)]

/// The calls refused.
#[derive(Debug, Clone, Copy)]
pub struct Refusal {
    /// The system call's number (`libc::SYS_...`).
    pub call: libc::c_long,
    /// Only when argument `.0` (counted from 0) has a bit of mask `.1` set.
    pub with_flag: Option<(usize, u32)>,
    /// What the call fails with.
    pub errno: i32,
}

impl Refusal {
    /// Every call of `call`, failing with `errno`.
    pub fn every(call: libc::c_long, errno: i32) -> Refusal {
        Refusal {
            call,
            with_flag: None,
            errno,
        }
    }
}

/// Makes the kernel refuse what `refusal` says to this thread, for good.
pub fn refuse(refusal: Refusal) {
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    // A jump over the next `skip` statements unless the loaded word is `k` (has a bit
    // of `k`, for JSET).
    let unless = |op: u32, k: u32, skip: u8| libc::sock_filter {
        code: (libc::BPF_JMP | op | libc::BPF_K) as u16,
        jt: 0,
        jf: skip,
        k,
    };
    let load = |offset: usize| stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset as u32);
    // `struct seccomp_data`: the call's number at 0, its six 64-bit arguments from 16.
    let mut program = vec![load(0)];
    match refusal.with_flag {
        None => program.push(unless(libc::BPF_JEQ, refusal.call as u32, 1)),
        Some((arg, mask)) => {
            let low_half = if cfg!(target_endian = "big") { 4 } else { 0 };
            program.extend([
                unless(libc::BPF_JEQ, refusal.call as u32, 3),
                load(16 + 8 * arg + low_half),
                unless(libc::BPF_JSET, mask, 1),
            ]);
        }
    }
    program.extend([
        stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | refusal.errno as u32,
        ),
        stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ]);
    let prog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: prctl with a filter program that outlives the call (the kernel copies
    // it); it only makes the one call fail, on this thread and those it starts.
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        assert_eq!(
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                &prog as *const libc::sock_fprog
            ),
            0,
            "seccomp filter refused: {}",
            std::io::Error::last_os_error()
        );
    }
}
