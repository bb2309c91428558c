//! TRANSITIONAL: the clock and the system random source behind `--random-seed=time`
//! and `rand`. They are the crate's only I/O and its only clock, kept only until the
//! binary resolves [`crate::prng::SeedSpec`] itself: move [`monotonic_micros`] and
//! [`urandom_u64`] into the binary's `src/sys.rs`, call
//! `SeedSpec::parse(..)?.resolve(sys::monotonic_micros, sys::urandom_u64)` there,
//! then delete this file and the wrappers `prng::parse_seed` / `prng::monotonic_micros`.

/// 8 bytes of `/dev/urandom`, or `None` if it cannot be read.
pub(crate) fn urandom_u64() -> Option<u64> {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .ok()?;
    Some(u64::from_ne_bytes(bytes))
}

/// `pg_time_now()`: CLOCK_MONOTONIC in microseconds (not the Unix epoch), which is
/// what `:random_seed` shows for `--random-seed=time`.
pub fn monotonic_micros() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call, and
    // CLOCK_MONOTONIC is always supported on Linux; std offers no way to read the
    // clock's absolute value.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000)
        .wrapping_add(ts.tv_nsec as u64 / 1000)
}
