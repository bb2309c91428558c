//! What pgbench does with a typed [`Value`]: its string forms, its type names, and the
//! coercions to int, double and boolean used by every operator and function.
//!
//! The string form is what SQL substitution, `\shell` arguments and `debug()` print, so
//! it reproduces C's `%lld` and PostgreSQL's `snprintf("%.15g")` (which spells the
//! special doubles `Infinity`, `-Infinity` and `NaN`). Writers append to a `String`
//! and never allocate on their own. This module does not own variables (see
//! [`crate::variables`]) nor the evaluation of expressions (see [`crate::eval`]).

use std::fmt::{self, Write as _};

pub use crate::ast::Value;
use crate::eval::EvalError;

/// `DBL_DIG`: the precision pgbench prints doubles with (`%.*g`, `DBL_DIG`).
const DBL_DIG: usize = 15;

impl Value {
    /// The type name pgbench's `valueTypeName` uses in coercion errors.
    ///
    /// pgbench also knows `none` (a variable not yet converted from its string),
    /// which never reaches a [`Value`] here.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }

    /// Appends the string form used for SQL substitution and `\shell` arguments
    /// (pgbench's `getVariable`): `NULL`, `true`/`false`, `%lld`, or `%.15g`.
    pub fn write_text(&self, out: &mut String) {
        match *self {
            Value::Null => out.push_str("NULL"),
            Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Value::Int(i) => push_int(out, i),
            Value::Double(d) => write_double(out, d),
        }
    }

    /// Appends what `debug()` prints after its `debug(script=..,command=..): ` prefix:
    /// `null`, `boolean true`, `int 5` or `double 3.14159265358979`.
    pub fn write_debug(&self, out: &mut String) {
        match *self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if b { "boolean true" } else { "boolean false" }),
            Value::Int(i) => {
                out.push_str("int ");
                push_int(out, i);
            }
            Value::Double(d) => {
                out.push_str("double ");
                write_double(out, d);
            }
        }
    }

    /// Coerces to int as pgbench's `coerceToInt`: doubles are rounded with `rint`
    /// (half to even) and must fit in int64.
    #[inline]
    pub fn to_int(self) -> Result<i64, EvalError> {
        match self {
            Value::Int(i) => Ok(i),
            Value::Double(d) => double_to_int(d),
            other => Err(EvalError::CannotCoerce {
                from: other.type_name(),
                to: "int",
            }),
        }
    }

    /// Coerces to double as pgbench's `coerceToDouble` (ints are cast).
    #[inline]
    pub fn to_double(self) -> Result<f64, EvalError> {
        match self {
            Value::Double(d) => Ok(d),
            Value::Int(i) => Ok(i as f64),
            other => Err(EvalError::CannotCoerce {
                from: other.type_name(),
                to: "double",
            }),
        }
    }

    /// Coerces to boolean as pgbench's `coerceToBool`: only booleans are accepted.
    #[inline]
    pub fn to_bool(self) -> Result<bool, EvalError> {
        match self {
            Value::Bool(b) => Ok(b),
            other => Err(EvalError::CannotCoerce {
                from: other.type_name(),
                to: "boolean",
            }),
        }
    }

    /// Truthiness for `\if`, `\elif` and `CASE WHEN` (pgbench's `valueTruth`): NULL is
    /// false, numbers are true when non-zero.
    #[inline]
    pub fn truth(self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// The first byte of pgbench's value union (`u.bval`), which its `IS` operator
    /// compares besides the type. Booleans are stored in that byte and NULL zeroes
    /// the union; ints and doubles expose their least significant byte (x86).
    pub(crate) fn union_first_byte(self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Bool(b) => u8::from(b),
            Value::Int(i) => i.to_le_bytes()[0],
            Value::Double(d) => d.to_bits().to_le_bytes()[0],
        }
    }
}

/// The string form of a value, as [`Value::write_text`] writes it.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = StackBuf::new();
        match *self {
            Value::Double(d) => {
                write_double_to(&mut buf, d)?;
                f.write_str(buf.as_str())
            }
            Value::Int(i) => write!(f, "{i}"),
            Value::Null => f.write_str("NULL"),
            Value::Bool(b) => f.write_str(if b { "true" } else { "false" }),
        }
    }
}

/// `rint` then pgbench's `FLOAT8_FITS_IN_INT64` check.
#[inline]
pub fn double_to_int(d: f64) -> Result<i64, EvalError> {
    let r = d.round_ties_even();
    // -2^63 is exactly representable; 2^63 is the first value that does not fit.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
        Ok(r as i64)
    } else {
        Err(EvalError::DoubleToIntOverflow(r))
    }
}

/// Appends an int64 as C's `%lld` does (without the `fmt` machinery: SQL
/// substitution does this for every variable of every transaction).
#[inline]
pub fn push_int(out: &mut String, i: i64) {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let mut n = i.unsigned_abs();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        out.push('-');
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[pos..]).unwrap_or_default());
}

/// Appends a double as PostgreSQL's `snprintf("%.15g")`: `Infinity`, `-Infinity`,
/// `NaN`, `-0`, `1e+15`, `1.23456789012346e+17`, `0.3`, `1.2345e-05`.
pub fn write_double(out: &mut String, d: f64) {
    // Writing into a String cannot fail.
    let _ = write_double_to(out, d);
}

/// `%.15g` into any formatter; see [`write_double`].
pub fn write_double_to<W: fmt::Write>(out: &mut W, d: f64) -> fmt::Result {
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

/// A double printed as PostgreSQL's `snprintf("%f")` does, for error messages such as
/// `double to int overflow for %f` (`Infinity`, `NaN`, else six decimals).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrintfF(pub f64);

impl fmt::Display for PrintfF {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.is_nan() {
            f.write_str("NaN")
        } else if d.is_infinite() {
            f.write_str(if d < 0.0 { "-Infinity" } else { "Infinity" })
        } else {
            // Rust prints the exact decimal expansion, rounded half to even, like glibc.
            write!(f, "{d:.6}")
        }
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

    fn g(d: f64) -> String {
        let mut s = String::new();
        write_double(&mut s, d);
        s
    }

    #[test]
    fn double_string_form_matches_postgres_snprintf() {
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
    fn printf_f_matches_postgres() {
        assert_eq!(PrintfF(1.9).to_string(), "1.900000");
        assert_eq!(PrintfF(f64::NAN).to_string(), "NaN");
        assert_eq!(PrintfF(f64::NEG_INFINITY).to_string(), "-Infinity");
        assert_eq!(PrintfF(1e19).to_string(), "10000000000000000000.000000");
    }

    #[test]
    fn int_coercion_rounds_half_even_and_checks_range() {
        assert_eq!(Value::Double(2.5).to_int(), Ok(2));
        assert_eq!(Value::Double(3.5).to_int(), Ok(4));
        assert_eq!(Value::Double(-2.5).to_int(), Ok(-2));
        assert_eq!(Value::Double(-(2f64.powi(63))).to_int(), Ok(i64::MIN));
        assert_eq!(
            Value::Double(2f64.powi(63)).to_int(),
            Err(EvalError::DoubleToIntOverflow(2f64.powi(63)))
        );
        assert!(Value::Double(f64::NAN).to_int().is_err());
        assert_eq!(
            Value::Bool(true).to_int(),
            Err(EvalError::CannotCoerce {
                from: "boolean",
                to: "int"
            })
        );
    }

    #[test]
    fn display_is_the_string_form() {
        assert_eq!(Value::Double(1e15).to_string(), "1e+15");
        assert_eq!(Value::Int(-5).to_string(), "-5");
        for i in [0, 7, -7, 10, 1234567890, i64::MIN, i64::MAX] {
            let mut s = String::from("x");
            push_int(&mut s, i);
            assert_eq!(s, format!("x{i}"));
        }
        assert_eq!(Value::Null.to_string(), "NULL");
        assert_eq!(Value::Bool(false).to_string(), "false");
    }
}
