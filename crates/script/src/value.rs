//! What pgbench does with a typed [`Value`]: its string forms, its type names, and the
//! coercions to int, double and boolean used by every operator and function.
//!
//! The string form is what SQL substitution, `\shell` arguments and `debug()` print, so
//! it reproduces C's `%lld` and PostgreSQL's `snprintf("%.15g")` (from
//! [`crate::cnum`], which spells the special doubles `Infinity`, `-Infinity` and
//! `NaN`). Writers append to a `String` and never allocate on their own. This module does not own variables (see
//! [`crate::variables`]) nor the evaluation of expressions (see [`crate::eval`]).

use std::fmt;

pub use crate::ast::Value;
use crate::cnum;
use crate::error::EvalError;

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
        match *self {
            Value::Double(d) => cnum::write_g15(f, d),
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
/// substitution does this for every variable of every transaction). Two digits a
/// division, from a table of the hundred pairs; the digits are ASCII, so they go in
/// without the UTF-8 check `str::from_utf8` would make of them.
#[inline]
#[allow(unsafe_code)]
pub fn push_int(out: &mut String, i: i64) {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let mut n = i.unsigned_abs();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        pos -= 1;
        buf[pos] = b'0' + n as u8;
    }
    if i < 0 {
        out.push('-');
    }
    // SAFETY: `buf[pos..]` holds only digits, from DIGIT_PAIRS and `b'0' + n`.
    unsafe { push_ascii(out, &buf[pos..]) };
}

/// `00`, `01`, ... `99`: the two digits of each pair, side by side.
pub(crate) const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Appends bytes known to be ASCII, without checking them again.
///
/// # Safety
///
/// `ascii` must hold ASCII bytes only: appended to valid UTF-8 they keep it valid.
#[inline]
#[allow(unsafe_code)]
unsafe fn push_ascii(out: &mut String, ascii: &[u8]) {
    debug_assert!(ascii.is_ascii());
    // SAFETY: the caller passes ASCII only (this function's contract).
    unsafe { out.as_mut_vec() }.extend_from_slice(ascii);
}

/// Appends a double as PostgreSQL's `snprintf("%.15g")` ([`cnum::write_g15`]).
pub fn write_double(out: &mut String, d: f64) {
    // Writing into a String cannot fail.
    let _ = cnum::write_g15(out, d);
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for i in (0..=18)
            .map(|e| 10i64.pow(e))
            .flat_map(|p| [p - 1, p, p + 1, -p, 1 - p])
        {
            let mut s = String::new();
            push_int(&mut s, i);
            assert_eq!(s, i.to_string());
        }
        assert_eq!(Value::Bool(false).to_string(), "false");
    }

    proptest::proptest! {
        /// Digit pairs write what `format!` writes, after what was there.
        #[test]
        fn push_int_is_lld(i in proptest::num::i64::ANY, pre in "[a-z]{0,3}") {
            let mut s = pre.clone();
            push_int(&mut s, i);
            proptest::prop_assert_eq!(s, format!("{pre}{i}"));
        }
    }
}
