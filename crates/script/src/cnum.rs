//! The C library's number parsing and formatting as pgbench relies on it, in one place:
//! `isspace`, `strtol` prefixes, `atoi`, `atof`, `sscanf("%lu")`, pgbench's
//! `strtoint64`, glibc's `strtod` (hexadecimal floats and `ERANGE` included), the
//! x86-64 `(int64)` cast of a double, and PostgreSQL's `snprintf` for `%.Nf` and
//! `%.15g` (which spells the special doubles `NaN`, `Infinity` and `-Infinity`).
//!
//! Pure functions of their input, with C's leniency where C has it (leading white
//! space, trailing garbage ignored by `atoi`/`atof`, 0 when nothing parses). What the
//! numbers mean to pgbench (variables, seeds, options) belongs to the callers.

use std::fmt::{self, Write as _};

/// C's `isspace` in the C locale.
pub fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// Splits an optional `+`/`-` off the front.
fn split_sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

/// `strtol` without its white-space skip: an optional sign and decimal digits off the
/// front, saturated to i64 as `strtol` saturates; `None` (and the whole input as the
/// rest) when there are no digits.
pub fn strtol_prefix(s: &str) -> (Option<i64>, &str) {
    let bytes = s.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let digits_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i == digits_start {
        return (None, s);
    }
    let saturated = if bytes[0] == b'-' { i64::MIN } else { i64::MAX };
    (Some(s[..i].parse::<i64>().unwrap_or(saturated)), &s[i..])
}

/// C's `atoi`: a prefix integer after white space, as a C int (wrapped), 0 if none.
pub fn atoi(s: &str) -> i32 {
    strtol_prefix(s.trim_start_matches(is_c_space))
        .0
        .unwrap_or(0) as i32
}

/// C's `atof`: the longest prefix that reads as a number, 0 when there is none.
pub fn atof(s: &str) -> f64 {
    let t = s.trim_start_matches(is_c_space);
    let lower = t.to_ascii_lowercase();
    for (word, v) in [
        ("+infinity", f64::INFINITY),
        ("-infinity", f64::NEG_INFINITY),
        ("infinity", f64::INFINITY),
        ("+inf", f64::INFINITY),
        ("-inf", f64::NEG_INFINITY),
        ("inf", f64::INFINITY),
        ("nan", f64::NAN),
        ("+nan", f64::NAN),
        ("-nan", f64::NAN),
    ] {
        if lower.starts_with(word) {
            return v;
        }
    }
    let b = t.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let mantissa_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i == mantissa_start || (i == mantissa_start + 1 && b[mantissa_start] == b'.') {
        return 0.0;
    }
    let mut end = i;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_digits = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_digits {
            end = j;
        }
    }
    t[..end].parse().unwrap_or(0.0)
}

/// `sscanf(s, "%lu%c", ...) == 1`: one `strtoul` number (C white space, optional
/// sign, decimal digits) filling the whole string. A `-` wraps (`-1` is `u64::MAX`),
/// overflow saturates.
pub fn scan_unsigned(s: &str) -> Option<u64> {
    let (negative, digits) = split_sign(s.trim_start_matches(is_c_space));
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: u64 = 0;
    let mut overflow = false;
    for b in digits.bytes() {
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    Some(if overflow {
        u64::MAX
    } else if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// Why pgbench's `strtoint64` refuses a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strtoint64Error {
    /// Not an optional sign and digits filling the string (after white space).
    Syntax,
    /// Beyond the range of int64.
    Range,
}

/// pgbench's `strtoint64`: `strtoll` that must consume the whole string (leading C
/// white space and a sign allowed), with overflow an error rather than saturation.
pub fn strtoint64(s: &str) -> Result<i64, Strtoint64Error> {
    let (negative, digits) = split_sign(s.trim_start_matches(is_c_space));
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Strtoint64Error::Syntax);
    }
    let mut acc: i64 = 0;
    for b in digits.bytes() {
        let d = i64::from(b - b'0');
        // Accumulate negatively so that INT64_MIN parses.
        acc = acc
            .checked_mul(10)
            .and_then(|a| {
                if negative {
                    a.checked_sub(d)
                } else {
                    a.checked_add(d)
                }
            })
            .ok_or(Strtoint64Error::Range)?;
    }
    Ok(acc)
}

/// Why C's `strtod` would not give a usable double for a whole string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrtodError {
    /// Not a number, or characters left over (`end == str || *end != '\0'`).
    Syntax,
    /// `errno == ERANGE`: overflow, or an inexact result that is zero or subnormal.
    Range,
}

/// C's `strtod` (glibc) on a whole string: leading white space, a sign, then a
/// decimal or `0x` hexadecimal number, `inf`/`infinity`, or `nan`/`nan(chars)`.
pub fn strtod(s: &str) -> Result<f64, StrtodError> {
    let (negative, rest) = split_sign(s.trim_start_matches(is_c_space));
    let sign = if negative { -1.0 } else { 1.0 };
    if rest.eq_ignore_ascii_case("inf") || rest.eq_ignore_ascii_case("infinity") {
        return Ok(sign * f64::INFINITY);
    }
    if rest.len() >= 3 && rest.as_bytes()[..3].eq_ignore_ascii_case(b"nan") {
        let tail = &rest[3..];
        let nchars = tail
            .strip_prefix('(')
            .and_then(|t| t.strip_suffix(')'))
            .is_some_and(|t| t.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric()));
        return if tail.is_empty() || nchars {
            Ok(f64::NAN)
        } else {
            Err(StrtodError::Syntax)
        };
    }
    let bytes = rest.as_bytes();
    if bytes.len() > 2 && bytes[0] == b'0' && (bytes[1] | 0x20) == b'x' {
        if let Some(v) = hex_float(&rest[2..]) {
            return v.map(|v| sign * v);
        }
        // "0x" without hex digits: strtod reads just the "0".
        return Err(StrtodError::Syntax);
    }
    if !is_decimal_float(rest) {
        return Err(StrtodError::Syntax);
    }
    let v: f64 = rest.parse().map_err(|_| StrtodError::Syntax)?;
    let nonzero_mantissa = rest
        .bytes()
        .take_while(|&b| b != b'e' && b != b'E')
        .any(|b| (b'1'..=b'9').contains(&b));
    if v.is_infinite() || (nonzero_mantissa && v < f64::MIN_POSITIVE) {
        return Err(StrtodError::Range);
    }
    Ok(sign * v)
}

/// `digits [. digits] [e [sign] digits]` with at least one mantissa digit.
fn is_decimal_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp_digits == 0 {
            return false;
        }
        i += exp_digits;
    }
    i == b.len()
}

/// The part of a hexadecimal float after `0x`, rounded to nearest even like glibc.
/// `None` when there is no hex digit at all.
fn hex_float(s: &str) -> Option<Result<f64, StrtodError>> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut mant: u128 = 0;
    let mut sticky = false;
    let mut exp2: i64 = 0;
    let mut ndigits = 0;
    let mut seen_point = false;
    while i < b.len() {
        let c = b[i];
        if c == b'.' && !seen_point {
            seen_point = true;
        } else if let Some(d) = (c as char).to_digit(16) {
            ndigits += 1;
            if mant >> 120 == 0 {
                mant = (mant << 4) | u128::from(d);
                if seen_point {
                    exp2 -= 4;
                }
            } else {
                sticky |= d != 0;
                if !seen_point {
                    exp2 += 4;
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    if ndigits == 0 {
        return None;
    }
    if i < b.len() {
        if (b[i] | 0x20) != b'p' {
            return Some(Err(StrtodError::Syntax));
        }
        let (negative, digits) = split_sign(&s[i + 1..]);
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return Some(Err(StrtodError::Syntax));
        }
        let e: i64 = digits.parse().unwrap_or(i64::MAX / 4).min(i64::MAX / 4);
        exp2 += if negative { -e } else { e };
    }
    if mant == 0 {
        return Some(Ok(0.0));
    }
    Some(round_binary(mant, sticky, exp2))
}

/// `mant * 2^exp2` (plus a sticky bit below `mant`) rounded to a double.
fn round_binary(mant: u128, sticky: bool, exp2: i64) -> Result<f64, StrtodError> {
    let top = 127 - i64::from(mant.leading_zeros());
    // Exponent of the leading bit of the value.
    let lead = top + exp2;
    if lead > 1023 {
        return Err(StrtodError::Range);
    }
    // Position (as a power of two) of the last bit the double can keep.
    let lsb = (lead - 52).max(-1074);
    let drop = lsb - exp2;
    let (mut kept, inexact) = if drop <= 0 {
        (mant << (-drop) as u32, sticky)
    } else if drop >= 128 {
        (0, true)
    } else {
        let kept = mant >> drop as u32;
        let rest = mant & ((1u128 << drop as u32) - 1);
        let half = 1u128 << (drop as u32 - 1);
        let round_up = rest > half || (rest == half && (sticky || kept & 1 == 1));
        let inexact = rest != 0 || sticky;
        (kept + u128::from(round_up), inexact)
    };
    let mut lsb = lsb;
    if kept >> 53 != 0 {
        kept >>= 1;
        lsb += 1;
    }
    if lsb + 52 > 1023 && kept >> 52 != 0 {
        return Err(StrtodError::Range);
    }
    let scale = if lsb >= -1022 {
        f64::from_bits(((lsb + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (lsb + 1074))
    };
    let v = kept as f64 * scale;
    if v.is_infinite() || (inexact && v < f64::MIN_POSITIVE) {
        return Err(StrtodError::Range);
    }
    Ok(v)
}

/// C's `(int64) x` on x86-64: out-of-range values and NaN become `INT64_MIN`
/// (`cvttsd2si`'s "integer indefinite").
#[inline]
pub fn trunc_to_i64(x: f64) -> i64 {
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
}

/// A double as PostgreSQL's `snprintf("%.Nf")` prints it: `NaN`, `Infinity`,
/// `-Infinity`, else `N` decimals (Rust prints the exact decimal expansion rounded
/// half to even, as glibc does).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedF {
    pub value: f64,
    pub decimals: usize,
}

impl fmt::Display for FixedF {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.value;
        if d.is_nan() {
            f.write_str("NaN")
        } else if d.is_infinite() {
            f.write_str(if d < 0.0 { "-Infinity" } else { "Infinity" })
        } else {
            write!(f, "{d:.*}", self.decimals)
        }
    }
}

/// `snprintf("%.*f", prec, v)` as PostgreSQL prints it; see [`FixedF`].
pub fn fmt_f(v: f64, prec: usize) -> String {
    FixedF {
        value: v,
        decimals: prec,
    }
    .to_string()
}

/// `DBL_DIG`: the precision pgbench prints doubles with (`%.*g`, `DBL_DIG`).
const DBL_DIG: usize = 15;

/// A double as PostgreSQL's `snprintf("%.15g")`: `Infinity`, `-Infinity`, `NaN`,
/// `-0`, `1e+15`, `1.23456789012346e+17`, `0.3`, `1.2345e-05`. Allocates nothing.
pub fn write_g15<W: fmt::Write>(out: &mut W, d: f64) -> fmt::Result {
    if d.is_nan() {
        // PostgreSQL's snprintf prints NaN without a sign.
        return out.write_str("NaN");
    }
    if d.is_sign_negative() {
        out.write_char('-')?;
    }
    if d.is_infinite() {
        return out.write_str("Infinity");
    }
    // `%g` first formats as `%e` with precision P-1 to learn the decimal exponent X,
    // then uses `%f` when -4 <= X < P; both round at the same digit, so the 15
    // significant digits of the `%e` rendering serve both styles. Rust's exact
    // formatting rounds ties to even, as glibc does in the default rounding mode.
    let mut sci = StackBuf::new();
    write!(sci, "{:.*e}", DBL_DIG - 1, d.abs())?;
    let (mantissa, exp) = sci.as_str().split_once('e').ok_or(fmt::Error)?;
    let exp: i32 = exp.parse().map_err(|_| fmt::Error)?;
    let mut digits = [b'0'; DBL_DIG];
    let mut n = 0;
    for b in mantissa.bytes().filter(u8::is_ascii_digit).take(DBL_DIG) {
        digits[n] = b;
        n += 1;
    }
    let digits = std::str::from_utf8(&digits[..n]).map_err(|_| fmt::Error)?;
    if exp < -4 || exp >= DBL_DIG as i32 {
        out.write_str(&digits[..1])?;
        let frac = digits[1..].trim_end_matches('0');
        if !frac.is_empty() {
            out.write_char('.')?;
            out.write_str(frac)?;
        }
        let sign = if exp < 0 { '-' } else { '+' };
        write!(out, "e{sign}{:02}", exp.unsigned_abs())
    } else if exp >= 0 {
        let point = exp as usize + 1;
        out.write_str(&digits[..point])?;
        let frac = digits[point..].trim_end_matches('0');
        if !frac.is_empty() {
            out.write_char('.')?;
            out.write_str(frac)?;
        }
        Ok(())
    } else {
        out.write_str("0.")?;
        for _ in 0..(-exp - 1) {
            out.write_char('0')?;
        }
        out.write_str(digits.trim_end_matches('0'))
    }
}

/// A small fixed buffer for formatting numbers without touching the heap.
struct StackBuf {
    bytes: [u8; 64],
    len: usize,
}

impl StackBuf {
    fn new() -> Self {
        StackBuf {
            bytes: [0; 64],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        // Only whole `&str`s are ever appended, so the prefix is valid UTF-8.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_leniency() {
        assert_eq!(strtol_prefix("42\n"), (Some(42), "\n"));
        assert_eq!(strtol_prefix("-7x"), (Some(-7), "x"));
        assert_eq!(strtol_prefix("x"), (None, "x"));
        assert_eq!(strtol_prefix("99999999999999999999"), (Some(i64::MAX), ""));
        assert_eq!(strtol_prefix("-99999999999999999999"), (Some(i64::MIN), ""));
        assert_eq!(atoi(" 12ms"), 12);
        assert_eq!(atoi("abc"), 0);
        assert_eq!(atoi("-1"), -1);
        assert_eq!(atoi("4294967297"), 1);
        assert_eq!(atof("0.05"), 0.05);
        assert_eq!(atof("12abc"), 12.0);
        assert_eq!(atof("abc"), 0.0);
        assert_eq!(atof(" -1e3x"), -1000.0);
        assert_eq!(atof("1e"), 1.0);
        assert!(atof("-Infinity").is_infinite());
        assert!(is_c_space('\x0b') && !is_c_space('\u{a0}'));
    }

    #[test]
    fn scan_unsigned_follows_sscanf_lu() {
        assert_eq!(scan_unsigned("42"), Some(42));
        assert_eq!(scan_unsigned("  42"), Some(42));
        assert_eq!(scan_unsigned("+42"), Some(42));
        assert_eq!(scan_unsigned("-1"), Some(u64::MAX));
        assert_eq!(scan_unsigned("42 "), None);
        assert_eq!(scan_unsigned("0x10"), None);
        assert_eq!(scan_unsigned(""), None);
        assert_eq!(scan_unsigned("-"), None);
        assert_eq!(scan_unsigned("99999999999999999999"), Some(u64::MAX));
    }

    #[test]
    fn strtoint64_must_consume_everything() {
        assert_eq!(strtoint64(" -9223372036854775808"), Ok(i64::MIN));
        assert_eq!(strtoint64("+9223372036854775807"), Ok(i64::MAX));
        assert_eq!(
            strtoint64("9223372036854775808"),
            Err(Strtoint64Error::Range)
        );
        assert_eq!(strtoint64("12 "), Err(Strtoint64Error::Syntax));
        assert_eq!(strtoint64("-"), Err(Strtoint64Error::Syntax));
    }

    #[test]
    fn strtod_follows_glibc() {
        assert_eq!(strtod("1.5"), Ok(1.5));
        assert_eq!(strtod("  -2e3"), Ok(-2000.0));
        assert_eq!(strtod(".5"), Ok(0.5));
        assert_eq!(strtod("5."), Ok(5.0));
        assert_eq!(strtod("0x10"), Ok(16.0));
        assert_eq!(strtod("0x1.8p1"), Ok(3.0));
        assert_eq!(strtod("0x1p-1074"), Ok(5e-324));
        assert_eq!(strtod("0x1.8p-1074"), Err(StrtodError::Range));
        assert_eq!(strtod("0x1p1024"), Err(StrtodError::Range));
        assert_eq!(strtod("-InFiNiTy"), Ok(f64::NEG_INFINITY));
        assert!(strtod("nan(abc_1)").unwrap().is_nan());
        assert_eq!(strtod("nan("), Err(StrtodError::Syntax));
        assert_eq!(strtod("1e-310"), Err(StrtodError::Range));
        assert_eq!(strtod("0e-400"), Ok(0.0));
        assert_eq!(strtod("1e400"), Err(StrtodError::Range));
        assert_eq!(strtod("1e"), Err(StrtodError::Syntax));
        assert_eq!(strtod("12 "), Err(StrtodError::Syntax));
        assert_eq!(strtod("."), Err(StrtodError::Syntax));
        assert_eq!(strtod("0x"), Err(StrtodError::Syntax));
        assert_eq!(
            strtod("2.2250738585072014e-308"),
            Ok(2.2250738585072014e-308)
        );
    }

    #[test]
    fn casts_like_x86() {
        assert_eq!(trunc_to_i64(-2.9), -2);
        assert_eq!(trunc_to_i64(f64::NAN), i64::MIN);
        assert_eq!(trunc_to_i64(1e19), i64::MIN);
    }

    fn g(d: f64) -> String {
        let mut s = String::new();
        write_g15(&mut s, d).unwrap();
        s
    }

    #[test]
    fn g15_matches_postgres_snprintf() {
        assert_eq!(g(0.3), "0.3");
        assert_eq!(g(1e15), "1e+15");
        assert_eq!(g(1e14), "100000000000000");
        assert_eq!(g(123456789012345678.0), "1.23456789012346e+17");
        assert_eq!(g(f64::INFINITY), "Infinity");
        assert_eq!(g(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(g(f64::NAN), "NaN");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(0.0), "0");
        assert_eq!(g(0.000012345), "1.2345e-05");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(std::f64::consts::PI), "3.14159265358979");
        assert_eq!(g(1e300), "1e+300");
        assert_eq!(g(5e-324), "4.94065645841247e-324");
        assert_eq!(g(1234567890123445.0), "1.23456789012344e+15");
        assert_eq!(g(-2.5), "-2.5");
        assert_eq!(g(99999999999999.95), "100000000000000");
        assert_eq!(g(999999999999999.5), "1e+15");
    }

    #[test]
    fn fixed_matches_postgres_snprintf() {
        assert_eq!(fmt_f(1.9, 6), "1.900000");
        assert_eq!(fmt_f(f64::NAN, 3), "NaN");
        assert_eq!(fmt_f(f64::NEG_INFINITY, 3), "-Infinity");
        assert_eq!(fmt_f(f64::INFINITY, 0), "Infinity");
        assert_eq!(fmt_f(1e19, 6), "10000000000000000000.000000");
        assert_eq!(fmt_f(2.5, 0), "2");
        assert_eq!(fmt_f(0.0005, 3), "0.001");
        assert_eq!(fmt_f(12.3456, 3), "12.346");
    }
}
