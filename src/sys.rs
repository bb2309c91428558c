//! The few operating-system calls pgbench makes through libc that std does not offer:
//! the open-files limit, the OS user name, `isatty`, signal masks, a listener's waiting
//! connection, and `strerror`-style messages, each a thin wrapper. Most of the binary's
//! `unsafe` code lives here; the rest is the io_uring driver's
//! (`bench/multiplex/uring.rs`), each site annotated.
#![allow(unsafe_code)]

use std::io;

/// Why the open-files limit is too low for the clients asked for.
#[derive(Debug)]
pub enum LimitError {
    /// The hard limit is below what is needed (pgbench 15's check).
    Hard(u64),
    /// Raising the soft limit failed (pgbench 18 raises it itself).
    Raise(String),
}

/// Makes sure at least `need` files can be open, raising the soft limit when the hard
/// limit allows it, as pgbench 18 does (pgbench 15 only checked).
pub fn ensure_open_files(need: u64) -> Result<(), LimitError> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(LimitError::Raise(io::Error::last_os_error().to_string()));
    }
    if lim.rlim_max != libc::RLIM_INFINITY && lim.rlim_max < need {
        return Err(LimitError::Hard(lim.rlim_max));
    }
    if lim.rlim_cur != libc::RLIM_INFINITY && lim.rlim_cur < need {
        lim.rlim_cur = need;
        // SAFETY: setrlimit reads the struct we own.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
            return Err(LimitError::Raise(strerror(&io::Error::last_os_error())));
        }
    }
    Ok(())
}

/// The files this process has open now and its soft limit on them
/// (`u64::MAX` when unlimited), or `None` when either cannot be read (no `/proc`).
pub fn open_files() -> Option<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    let limit = match lim.rlim_cur {
        libc::RLIM_INFINITY => u64::MAX,
        n => n,
    };
    // The directory's own descriptor is listed too.
    let in_use = std::fs::read_dir("/proc/self/fd").ok()?.count() as u64 - 1;
    Some((in_use, limit))
}

/// User and system CPU seconds this process has used (all its threads).
pub fn process_cpu_s() -> Option<f64> {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(secs(usage.ru_utime) + secs(usage.ru_stime))
}

/// The effective user's login name (libpq's and pgbench's default user and database),
/// as the connection layer looks it up.
pub use pgbench_wire::os_user_name;

/// Caps glibc's malloc arenas. With one thread per client (`--os-threads`, `-C`),
/// glibc would give hundreds of threads their own arenas (up to 8 per core), each with
/// heap pages of its own;
/// the hot path allocates nothing, so two arenas cost no contention and keep the
/// peak RSS of a 256-client run down (measured: 33.7 MiB -> 25.8 MiB).
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; called before threads start.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Runs `handler(signal)` on a thread of its own each time one of `signals` arrives,
/// instead of the default action. The signals are blocked in the calling thread, and
/// so in every thread it starts later: call it before starting any. When the thread
/// cannot be made (a process limit), the signals keep their default action and the
/// error is returned: the caller says it as pgbench says a thread it could not create.
///
/// A signal this process was started with ignored is left alone: a shell starts a
/// script's background jobs with SIGINT ignored so that a Ctrl-C meant for the
/// foreground command does not reach them, and stock pgbench, which installs no
/// handler, keeps running. Blocking it for `sigwait` would take it in (Linux queues a
/// blocked signal even when it is ignored).
pub fn on_signals(
    signals: &[libc::c_int],
    handler: impl Fn(libc::c_int) + Send + 'static,
) -> std::io::Result<()> {
    let signals: Vec<libc::c_int> = signals.iter().copied().filter(|&s| !ignored(s)).collect();
    if signals.is_empty() {
        return Ok(());
    }
    let (set, old) = block_signals(&signals);
    let spawned = std::thread::Builder::new().spawn(move || loop {
        let mut sig: libc::c_int = 0;
        // SAFETY: waits on the blocked set above; writes only `sig`.
        if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
            handler(sig);
        }
    });
    if let Err(e) = spawned {
        // SAFETY: puts back the mask read above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
        return Err(e);
    }
    Ok(())
}

/// Runs `start` (which starts threads) with these signals blocked in the calling
/// thread, so that the threads it starts inherit the mask: a signal [`on_signals`]
/// takes later must not go to one of them and end the process.
pub fn with_signals_blocked<T>(signals: &[libc::c_int], start: impl FnOnce() -> T) -> T {
    let (_, old) = block_signals(signals);
    let out = start();
    // SAFETY: puts back the mask block_signals read, as it was.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    out
}

/// Whether `signal`'s disposition is to be ignored (`SIG_IGN`). pgbench-rs never sets
/// that itself, so it is how the process was started.
fn ignored(signal: libc::c_int) -> bool {
    // SAFETY: with a null new action, sigaction only reads the disposition into `old`,
    // which is ours and zeroed.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Blocks `signals` in the calling thread: the set blocked, and the mask before.
fn block_signals(signals: &[libc::c_int]) -> (libc::sigset_t, libc::sigset_t) {
    // SAFETY: the sigsets are ours, initialised by sigemptyset (or filled by
    // pthread_sigmask) before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        (set, old)
    }
}

/// Shuts a socket down in both directions, so that a thread blocked reading it wakes
/// with end-of-file. The descriptor stays open (its owner closes it).
pub fn shutdown_socket(fd: std::os::fd::RawFd) {
    // SAFETY: shutdown only changes the state of the socket `fd` names; the caller
    // guarantees the descriptor is still the connection's (not closed and reused).
    unsafe {
        libc::shutdown(fd, libc::SHUT_RDWR);
    }
}

/// Whether a listening socket has a connection waiting to be accepted (`poll` for
/// readability without waiting, which needs no new descriptor, unlike `accept`).
pub fn connection_waiting(fd: std::os::fd::RawFd) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `pfd` is a valid, exclusively borrowed pollfd array of length 1.
    let rc = unsafe { libc::poll(&mut pfd, 1, 0) };
    rc > 0 && pfd.revents & libc::POLLIN != 0
}

/// 8 bytes of `/dev/urandom` (`--random-seed=rand`), or `None` if it cannot be read.
pub fn urandom_u64() -> Option<u64> {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .ok()?;
    Some(u64::from_ne_bytes(bytes))
}

/// pgbench's `pg_time_now()` as a seed (`--random-seed=time`, the default): µs of
/// CLOCK_MONOTONIC, which is what `:random_seed` then shows.
pub fn time_seed() -> u64 {
    monotonic_us() as u64
}

/// CLOCK_MONOTONIC in microseconds.
#[inline]
pub fn monotonic_us() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the struct we own; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000 + ts.tv_nsec / 1_000
}

/// Whether stderr is a terminal (progress lines then end in `\r`).
pub fn stderr_is_tty() -> bool {
    use std::io::IsTerminal;
    io::stderr().is_terminal()
}

/// pgbench's `simple_prompt`: asks on the terminal with echo off, or on stderr
/// reading stdin when there is no terminal (`echo pw | setsid pgbench ...`); always
/// a line, empty when nothing could be read, as stock pgbench then tries it.
pub fn prompt_password(prompt: &str) -> String {
    pgbench_wire::prompt_password(prompt)
}

/// The C library's message for an I/O error, as `%m` prints it (no "(os error N)").
pub use pgbench_wire::strerror;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strerror_drops_the_rust_suffix() {
        let e = io::Error::from_raw_os_error(2);
        assert_eq!(strerror(&e), "No such file or directory");
    }

    #[test]
    fn open_files_are_counted_under_the_limit() {
        // Standard input, output and error, and the file opened here.
        let _file = std::fs::File::open("/dev/null").unwrap();
        let (open, limit) = open_files().unwrap();
        assert!(open >= 4 && limit > open, "{open} of {limit}");
    }

    #[test]
    fn os_user_is_known() {
        assert!(os_user_name().is_some_and(|n| !n.is_empty()));
    }

    #[test]
    fn seeds_come_from_the_monotonic_clock_and_the_random_source() {
        // `time` is the monotonic clock in µs: small (uptime), not the Unix epoch.
        let t = time_seed();
        let epoch_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as u64;
        assert!(t > 0 && t < epoch_us / 2, "{t}");
        assert!(time_seed() >= t);
        assert_ne!(urandom_u64().unwrap(), urandom_u64().unwrap());
    }

    #[test]
    fn a_small_open_files_need_is_met() {
        ensure_open_files(16).unwrap();
    }
}
