//! Conversions between doubles and text against the platform's C library, which is
//! what pgbench uses: PostgreSQL's snprintf hands finite doubles to the system's
//! `snprintf`, so glibc's `%.15g` and `%f` are the oracle (NaN and infinities are
//! PostgreSQL's own spellings, checked in the stock recordings instead); variables
//! are read with glibc's `strtod`, whose value, end position and `ERANGE` decide
//! between a double and `malformed variable`.
#![allow(unsafe_code)]

use std::ffi::CStr;

use pgbench_script::cnum::{fmt_f, strtod, StrtodError};
use pgbench_script::value::write_double;
use proptest::prelude::*;

fn c_format(fmt: &CStr, d: f64) -> String {
    let mut buf = vec![0u8; 512];
    // SAFETY: the buffer is writable for its whole length, which is passed as the
    // limit; the format takes exactly one double.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), fmt.as_ptr(), d) };
    assert!(n >= 0 && (n as usize) < buf.len());
    buf.truncate(n as usize);
    String::from_utf8(buf).unwrap()
}

fn ours_g(d: f64) -> String {
    let mut s = String::new();
    write_double(&mut s, d);
    s
}

fn check(d: f64) {
    if d.is_finite() {
        assert_eq!(
            ours_g(d),
            c_format(c"%.15g", d),
            "%.15g of {d:e} ({:#x})",
            d.to_bits()
        );
        if d.abs() < 1e30 {
            assert_eq!(fmt_f(d, 6), c_format(c"%f", d), "%f of {d:e}");
        }
    }
}

#[test]
fn chosen_values() {
    let values = [
        0.0,
        -0.0,
        1.0,
        0.1,
        0.3,
        1e15,
        1e14,
        1e-4,
        1e-5,
        9.5e-5,
        123456789012345678.0,
        1234567890123445.0,
        1234567890123455.0,
        999999999999999.5,
        99999999999999.95,
        0.5,
        2.5,
        -2.5,
        5e-324,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        std::f64::consts::PI,
        1.0 / 3.0,
        2.0f64.powi(60),
        9.223_372_036_854_776e18,
        0.000_123_456_789_012_345_68,
        1e100,
        1e-100,
        4.35,
        0.000015,
        1.5e-5,
    ];
    for d in values {
        check(d);
        check(-d);
    }
}

#[test]
fn decimal_ties_round_like_glibc() {
    // Integers below 2^53 with 16 digits ending in 5 are exact ties at 15 digits.
    for k in 0..2000i64 {
        check((1_000_000_000_000_005 + 10 * k * 7919) as f64);
    }
    // Short decimals near powers of ten.
    for e in -20..=20 {
        for m in [1.0, 9.99999999999999, 9.999999999999995, 5.0, 1.5] {
            check(m * 10f64.powi(e));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn any_double_bits(bits in any::<u64>()) {
        check(f64::from_bits(bits));
    }

    #[test]
    fn doubles_of_everyday_magnitude(d in -1e17f64..1e17) {
        check(d);
    }

    #[test]
    fn quotients_of_small_ints(a in -100000i64..100000, b in 1i64..1000) {
        check(a as f64 / b as f64);
    }
}

/// glibc's verdict on a whole string, in our terms.
fn c_strtod(s: &str) -> Result<f64, StrtodError> {
    let c = std::ffi::CString::new(s).unwrap();
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call; `end` is a
    // valid out-pointer; errno is thread-local and read right after the call.
    let (v, errno) = unsafe {
        *libc::__errno_location() = 0;
        let v = libc::strtod(c.as_ptr(), &mut end);
        (v, *libc::__errno_location())
    };
    // SAFETY: strtod sets `end` inside the string it was given.
    let consumed = unsafe { end.offset_from(c.as_ptr()) } as usize;
    if consumed == 0 || consumed != s.len() {
        Err(StrtodError::Syntax)
    } else if errno == libc::ERANGE {
        Err(StrtodError::Range)
    } else {
        Ok(v)
    }
}

fn same(a: Result<f64, StrtodError>, b: Result<f64, StrtodError>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (x, y) => x == y,
    }
}

#[test]
fn strtod_chosen_strings() {
    for s in [
        "1",
        "1.5",
        " -2e3",
        ".5",
        "5.",
        ".",
        "1e",
        "1e+",
        "e5",
        "0x10",
        "0x1.8p1",
        "0x",
        "0x.8",
        "0xp1",
        "0x1p",
        "0x1p-1074",
        "0x1.8p-1074",
        "0x1p1024",
        "0x1.fffffffffffffp1023",
        "inf",
        "-INFINITY",
        "infinit",
        "nan",
        "nan()",
        "nan(x_1)",
        "nan(",
        "NaN(1)x",
        "1e-310",
        "0e-400",
        "1e400",
        "2.2250738585072011e-308",
        "2.2250738585072014e-308",
        "1.5.5",
        "12 ",
        "\t7",
        "+.5",
        "-0",
        "1_000",
        "0x1P+3",
        "4.9406564584124654e-324",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
    ] {
        assert!(
            same(strtod(s), c_strtod(s)),
            "{s:?}: ours {:?}, glibc {:?}",
            strtod(s),
            c_strtod(s)
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn strtod_decimal(s in r"[ \t]{0,1}[-+]?[0-9]{0,22}(\.[0-9]{0,22})?([eE][-+]?[0-9]{1,3})?x?") {
        prop_assert!(same(strtod(&s), c_strtod(&s)), "{:?}: ours {:?}, glibc {:?}", s, strtod(&s), c_strtod(&s));
    }

    #[test]
    fn strtod_hex(s in r"[-+]?0[xX][0-9a-fA-F]{0,20}(\.[0-9a-fA-F]{0,20})?([pP][-+]?[0-9]{1,4})?") {
        prop_assert!(same(strtod(&s), c_strtod(&s)), "{:?}: ours {:?}, glibc {:?}", s, strtod(&s), c_strtod(&s));
    }

    #[test]
    fn strtod_words(s in r"[-+]?(inf|infinity|nan|nan\([a-z0-9_]{0,3}\)?|INF|NaN)[x(]?") {
        prop_assert!(same(strtod(&s), c_strtod(&s)), "{:?}: ours {:?}, glibc {:?}", s, strtod(&s), c_strtod(&s));
    }
}

// The C library's math functions, which pgbench calls; std links libm on Linux.
extern "C" {
    fn exp(x: f64) -> f64;
    fn log(x: f64) -> f64;
    fn pow(x: f64, y: f64) -> f64;
    fn sin(x: f64) -> f64;
    fn sqrt(x: f64) -> f64;
    fn floor(x: f64) -> f64;
}

fn same_bits(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// Rust's f64 methods give glibc's results bit for bit, so exp(), ln(), pow(),
    /// sqrt() and the random distributions (log, pow, sin, floor) match pgbench.
    #[test]
    fn f64_methods_are_the_c_library(bits in any::<u64>(), y in -50.0f64..50.0, u in 0.0f64..1.0) {
        let x = f64::from_bits(bits);
        // SAFETY: pure C math functions on plain doubles.
        let c = unsafe { (exp(x), log(x), pow(x, y), sin(x), sqrt(x), floor(x), log(u), pow(u, -1.0 / y), sin(2.0 * std::f64::consts::PI * u)) };
        prop_assert!(same_bits(x.exp(), c.0));
        prop_assert!(same_bits(x.ln(), c.1));
        prop_assert!(same_bits(x.powf(y), c.2));
        prop_assert!(same_bits(x.sin(), c.3));
        prop_assert!(same_bits(x.sqrt(), c.4));
        prop_assert!(same_bits(x.floor(), c.5));
        prop_assert!(same_bits(u.ln(), c.6));
        prop_assert!(same_bits(u.powf(-1.0 / y), c.7));
        prop_assert!(same_bits((2.0 * std::f64::consts::PI * u).sin(), c.8));
    }
}
