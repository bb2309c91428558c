//! pgbench's random numbers, bit for bit: the `pg_prng` generator of PostgreSQL 15
//! (xoroshiro128** seeded by splitmix64), its range/double/normal draws, the
//! `--random-seed` option, and the order in which pgbench derives every client's and
//! thread's generator from the base seed ([`SeedPlan`]).
//!
//! Pure: a `time` or `rand` seed is a [`SeedSpec`] that the caller resolves with its
//! own clock and random source. The distributions built on top (`random_gaussian`
//! etc.) live in [`crate::functions`]; when and with which state they are drawn is the
//! runner's business.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoroshiro128StarStar;

use crate::cnum::scan_unsigned;

/// One `pg_prng_state`: xoroshiro128** 1.0, as pgbench 15+ uses for everything random.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prng {
    inner: Xoroshiro128StarStar,
}

/// pg_prng's replacement state when splitmix64 yields all zeros (xoroshiro's only
/// forbidden state).
const ZERO_GUARD: (u64, u64) = (0x5851_F42D_4C95_7F2D, 0x1405_7B7E_F767_814F);

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Prng {
    /// `pg_prng_seed`: two splitmix64 outputs become the state.
    pub fn seed(seed: u64) -> Prng {
        let mut sm = seed;
        let mut s0 = splitmix64(&mut sm);
        let mut s1 = splitmix64(&mut sm);
        if s0 == 0 && s1 == 0 {
            (s0, s1) = ZERO_GUARD;
        }
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&s0.to_le_bytes());
        bytes[8..].copy_from_slice(&s1.to_le_bytes());
        // Never all zero here, so rand_xoshiro takes the state as given.
        Prng {
            inner: Xoroshiro128StarStar::from_seed(bytes),
        }
    }

    /// `pg_prng_uint64`: the next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// `pg_prng_uint64_range`: uniform in `[rmin, rmax]` by rejection on the top bits
    /// of each draw. Returns `rmin` without drawing when `rmax <= rmin`.
    #[inline]
    pub fn uniform_range(&mut self, rmin: u64, rmax: u64) -> u64 {
        if rmax <= rmin {
            return rmin;
        }
        let range = rmax - rmin;
        // 63 - pg_leftmost_one_pos64(range)
        let rshift = range.leading_zeros();
        loop {
            let val = self.next_u64() >> rshift;
            if val <= range {
                return rmin + val;
            }
        }
    }

    /// `pg_prng_double`: uniform in `[0, 1)` with 52 random bits.
    #[inline]
    pub fn double(&mut self) -> f64 {
        // ldexp(x, -52) is an exact scaling by a power of two.
        (self.next_u64() >> 12) as f64 * (1.0 / (1u64 << 52) as f64)
    }

    /// `pg_prng_double_normal` (the inline Box-Muller of pgbench 15's
    /// `getGaussianRand`): two draws, `sin` branch, nothing cached.
    #[inline]
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.double();
        let u2 = 1.0 - self.double();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin()
    }

    /// `getrand`: uniform int64 in `[min, max]`; the caller guarantees `min <= max`
    /// and that `max - min` does not overflow (pgbench checks it before).
    #[inline]
    pub fn int_range(&mut self, min: i64, max: i64) -> i64 {
        min.wrapping_add(self.uniform_range(0, max.wrapping_sub(min) as u64) as i64)
    }

    /// `getPoissonRand`: the throttling delay (µs) drawn per transaction under `-R`.
    #[inline]
    pub fn poisson(&mut self, center: f64) -> i64 {
        let uniform = 1.0 - self.double();
        (-uniform.ln() * center + 0.5) as i64
    }
}

/// `chooseScript`: picks the index of the script to run from the thread's
/// `ts_choose_rs`, by weight. With one script pgbench draws nothing; the weights'
/// total must be positive (pgbench rejects an all-zero total at start-up).
pub fn choose_script(rng: &mut Prng, weights: &[i64]) -> usize {
    if weights.len() <= 1 {
        return 0;
    }
    let total: i64 = weights.iter().copied().fold(0i64, i64::wrapping_add);
    let mut w = rng.int_range(0, total.wrapping_sub(1));
    for (i, weight) in weights.iter().enumerate() {
        w = w.wrapping_sub(*weight);
        if w < 0 {
            return i;
        }
    }
    weights.len() - 1
}

/// The generators of one thread (`TState`), derived in this order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSeeds {
    /// `ts_choose_rs`: which script each transaction runs.
    pub choose: Prng,
    /// `ts_throttle_rs`: `-R` schedule delays.
    pub throttle: Prng,
    /// `ts_sample_rs`: `--sampling-rate` decisions.
    pub sample: Prng,
}

/// Every generator and seed pgbench derives from the base seed, in pgbench's exact
/// order (main(): clients, then `default_seed`, then three states per thread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedPlan {
    /// `:random_seed`, the base seed as int64.
    pub random_seed: i64,
    /// `cs_func_rs` of each client, used by `random*()` in its expressions.
    pub clients: Vec<Prng>,
    /// `:default_seed` for every client, or `None` when `-D default_seed=` set it
    /// (then nothing is drawn for it).
    pub default_seed: Option<i64>,
    /// Per thread; `nthreads` is capped to `nclients` as pgbench does.
    pub threads: Vec<ThreadSeeds>,
}

impl SeedPlan {
    /// Derives everything from `base_seed` for `nclients` clients and `nthreads`
    /// threads (as given to `-j`; capped to `nclients` here).
    pub fn new(
        base_seed: u64,
        nclients: usize,
        nthreads: usize,
        default_seed_defined_by_user: bool,
    ) -> SeedPlan {
        let mut base = Prng::seed(base_seed);
        let clients = (0..nclients).map(|_| Prng::seed(base.next_u64())).collect();
        let default_seed = if default_seed_defined_by_user {
            None
        } else {
            Some(base.next_u64() as i64)
        };
        let threads = (0..nthreads.min(nclients))
            .map(|_| ThreadSeeds {
                choose: Prng::seed(base.next_u64()),
                throttle: Prng::seed(base.next_u64()),
                sample: Prng::seed(base.next_u64()),
            })
            .collect();
        SeedPlan {
            random_seed: base_seed as i64,
            clients,
            default_seed,
            threads,
        }
    }
}

/// Errors of the `--random-seed` option and `PGBENCH_RANDOM_SEED`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    /// `rand` could not read the system's random source.
    #[error("could not generate random seed")]
    CouldNotGenerate,
    /// Neither `time`, `rand` nor one unsigned integer; see [`SeedError::detail`].
    #[error("unrecognized random seed option \"{0}\"")]
    Unrecognized(String),
}

impl SeedError {
    /// The `pgbench: detail:` line pgbench prints after the error, if any.
    pub fn detail(&self) -> Option<&'static str> {
        match self {
            SeedError::CouldNotGenerate => None,
            SeedError::Unrecognized(_) => {
                Some("Expecting an unsigned integer, \"time\" or \"rand\".")
            }
        }
    }
}

/// What a `--random-seed` value (or `PGBENCH_RANDOM_SEED`) asks for. Resolving `Time`
/// and `Rand` reads the clock or the system's random source, which is the binary's
/// business; [`SeedSpec::resolve`] does it given those two readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedSpec {
    /// `time`: the monotonic clock in µs, as pgbench's `pg_time_now()`.
    Time,
    /// `rand`: 8 bytes of the system's strong random source.
    Rand,
    /// An unsigned integer.
    Value(u64),
}

impl SeedSpec {
    /// Parses a seed option as pgbench's `set_random_seed` does: `time`, `rand`, or one
    /// unsigned integer with `sscanf("%lu%c")` rules (leading white space and a sign
    /// are accepted, `-1` wraps, nothing may follow, overflow saturates).
    pub fn parse(s: &str) -> Result<SeedSpec, SeedError> {
        match s {
            "time" => Ok(SeedSpec::Time),
            "rand" => Ok(SeedSpec::Rand),
            _ => scan_unsigned(s)
                .map(SeedSpec::Value)
                .ok_or_else(|| SeedError::Unrecognized(s.to_owned())),
        }
    }

    /// The seed, reading the clock (µs of CLOCK_MONOTONIC) or the random source (`None`
    /// when it cannot be read) only when the spec asks for it.
    pub fn resolve(
        self,
        monotonic_micros: impl FnOnce() -> u64,
        random_u64: impl FnOnce() -> Option<u64>,
    ) -> Result<u64, SeedError> {
        match self {
            SeedSpec::Time => Ok(monotonic_micros()),
            SeedSpec::Rand => random_u64().ok_or(SeedError::CouldNotGenerate),
            SeedSpec::Value(seed) => Ok(seed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_specs_resolve_only_what_they_name() {
        let clock = || 7;
        let urandom = || Some(9);
        let spec = |s| SeedSpec::parse(s).and_then(|spec| spec.resolve(clock, urandom));
        assert_eq!(spec("time"), Ok(7));
        assert_eq!(spec("rand"), Ok(9));
        assert_eq!(spec(" 42"), Ok(42));
        assert_eq!(
            SeedSpec::Rand.resolve(|| unreachable!(), || None),
            Err(SeedError::CouldNotGenerate)
        );
        assert_eq!(
            SeedSpec::Value(3).resolve(|| unreachable!(), || unreachable!()),
            Ok(3)
        );
        assert_eq!(
            SeedSpec::parse("Time"),
            Err(SeedError::Unrecognized("Time".into()))
        );
    }

    #[test]
    fn choose_script_walks_the_weights() {
        let mut rng = Prng::seed(1);
        let mut counts = [0usize; 3];
        for _ in 0..3000 {
            counts[choose_script(&mut rng, &[1, 0, 2])] += 1;
        }
        assert_eq!(counts[1], 0);
        assert!(counts[0] > 800 && counts[2] > 1800, "{counts:?}");
    }
}
