//! One client's variable table, as pgbench keeps it (`Variables` in pgbench.c).
//!
//! A variable holds a string (from `-D`, `\gset`, `\aset`), a typed value (from
//! `\set`, `\setshell`, the automatic variables), or both once the string has been
//! converted. Conversion is lazy, with pgbench's rules and messages, and happens the
//! first time an expression reads the variable. SQL substitution uses the string when
//! there is one (so `-D x=007` substitutes `007`), else the value's string form.
//!
//! This module does not substitute into SQL text (the runner walks
//! [`crate::ast::SqlPiece`]s and calls [`Variables::write_text`]) and does not
//! evaluate expressions (see [`crate::eval`]).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::ast::Value;
use crate::eval::EvalError;

/// One named variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    name: Box<str>,
    /// pgbench's `svalue`; the buffer is kept (and reused) when `has_text` is false.
    text: String,
    has_text: bool,
    /// pgbench's `value`; `None` is `PGBT_NO_VALUE` (string not converted yet).
    value: Option<Value>,
}

impl Variable {
    /// The variable's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The string it was given (`-D`, `\gset`, `\aset`), if it was set from a string.
    pub fn text(&self) -> Option<&str> {
        self.has_text.then_some(self.text.as_str())
    }

    /// The typed value, if it was set from a value or already converted.
    pub fn typed_value(&self) -> Option<Value> {
        self.value
    }

    /// Appends the string form pgbench substitutes (`getVariable`): the given string,
    /// else the value as `NULL`, `true`/`false`, `%lld` or `%.15g`.
    #[inline]
    pub fn write_text(&self, out: &mut String) {
        match self.value {
            Some(v) if !self.has_text => v.write_text(out),
            _ => out.push_str(&self.text),
        }
    }
}

/// A client's variables, with lookup by name in constant time.
///
/// Variables are never removed, so an index from [`Variables::index_of`] stays valid
/// for the table's life (and for its clones, which the runner makes of client 0's
/// table for every client).
#[derive(Debug, Clone, Default)]
pub struct Variables {
    vars: Vec<Variable>,
    index: HashMap<Box<str>, usize, BuildHasherDefault<Fnv1a>>,
}

impl Variables {
    /// An empty table.
    pub fn new() -> Variables {
        Variables::default()
    }

    /// Number of variables.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Whether no variable is defined.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// The variables in order of creation.
    pub fn iter(&self) -> impl Iterator<Item = &Variable> {
        self.vars.iter()
    }

    /// Looks a variable up by name.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&Variable> {
        self.index.get(name).map(|&i| &self.vars[i])
    }

    /// The stable index of a variable, for callers that resolve names once.
    #[inline]
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The variable at an index from [`Variables::index_of`].
    #[inline]
    pub fn get_index(&self, index: usize) -> Option<&Variable> {
        self.vars.get(index)
    }

    /// Appends the string form of `name` to `out` (for SQL, `\shell` arguments and
    /// `\sleep :v`); returns `false`, appending nothing, when it is undefined.
    #[inline]
    pub fn write_text(&self, name: &str, out: &mut String) -> bool {
        match self.get(name) {
            Some(var) => {
                var.write_text(out);
                true
            }
            None => false,
        }
    }

    /// Assigns a string (`putVariable`): `-D` (context `option`), `\gset` (`gset`),
    /// `\aset` (`aset`). The name is checked only when the variable is created.
    pub fn set_text(&mut self, context: &str, name: &str, text: &str) -> Result<(), EvalError> {
        let var = self.lookup_create(context, name)?;
        var.text.clear();
        var.text.push_str(text);
        var.has_text = true;
        var.value = None;
        Ok(())
    }

    /// Assigns a typed value (`putVariableValue`): `\set` (context `set`), automatic
    /// variables (`startup`). No allocation once the variable exists.
    #[inline]
    pub fn set_value(&mut self, context: &str, name: &str, value: Value) -> Result<(), EvalError> {
        let var = self.lookup_create(context, name)?;
        var.has_text = false;
        var.value = Some(value);
        Ok(())
    }

    /// Assigns an int (`putVariableInt`): `\setshell`, `scale`, `client_id`, seeds.
    pub fn set_int(&mut self, context: &str, name: &str, value: i64) -> Result<(), EvalError> {
        self.set_value(context, name, Value::Int(value))
    }

    /// The typed value of `name` for an expression, converting its string on first
    /// use and keeping the result (pgbench's `makeVariableValue`).
    #[inline]
    pub fn value(&mut self, name: &str) -> Result<Value, EvalError> {
        let Some(&i) = self.index.get(name) else {
            return Err(EvalError::UndefinedVariable(name.to_owned()));
        };
        let var = &mut self.vars[i];
        if let Some(v) = var.value {
            return Ok(v);
        }
        let v = parse_variable_value(&var.name, &var.text)?;
        var.value = Some(v);
        Ok(v)
    }

    fn lookup_create(&mut self, context: &str, name: &str) -> Result<&mut Variable, EvalError> {
        let i = match self.index.get(name) {
            Some(&i) => i,
            None => {
                if !is_valid_name(name) {
                    return Err(EvalError::InvalidVariableName {
                        context: context.to_owned(),
                        name: name.to_owned(),
                    });
                }
                self.vars.push(Variable {
                    name: name.into(),
                    text: String::new(),
                    has_text: false,
                    value: None,
                });
                self.index.insert(name.into(), self.vars.len() - 1);
                self.vars.len() - 1
            }
        };
        Ok(&mut self.vars[i])
    }
}

/// pgbench's `valid_variable_name`: `[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*`.
pub fn is_valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    let first_ok =
        matches!(bytes.next(), Some(b) if b >= 0x80 || b == b'_' || b.is_ascii_alphabetic());
    first_ok && bytes.all(|b| b >= 0x80 || b == b'_' || b.is_ascii_alphanumeric())
}

/// Converts a variable's string to a value (`makeVariableValue`): `null`; prefixes of
/// `true`/`yes`/`false`/`no`, `on`, `off`, `of`; an integer; else a double.
pub fn parse_variable_value(name: &str, text: &str) -> Result<Value, EvalError> {
    if text.is_empty() {
        return Err(EvalError::EmptyValue(name.to_owned()));
    }
    let is_prefix_of = |word: &str| {
        text.len() <= word.len()
            && word.as_bytes()[..text.len()].eq_ignore_ascii_case(text.as_bytes())
    };
    if text.eq_ignore_ascii_case("null") {
        Ok(Value::Null)
    } else if is_prefix_of("true") || is_prefix_of("yes") || text.eq_ignore_ascii_case("on") {
        Ok(Value::Bool(true))
    } else if is_prefix_of("false")
        || is_prefix_of("no")
        || text.eq_ignore_ascii_case("off")
        || text.eq_ignore_ascii_case("of")
    {
        Ok(Value::Bool(false))
    } else if is_an_int(text) {
        strtoint64(text).map(Value::Int)
    } else {
        match strtod(text) {
            Ok(d) => Ok(Value::Double(d)),
            Err(_) => Err(EvalError::MalformedVariable {
                name: name.to_owned(),
                value: text.to_owned(),
            }),
        }
    }
}

/// C `isspace` in the C locale.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// pgbench's `is_an_int`: `^\s*[-+]?[0-9]*$` (it lets "no digit" through).
fn is_an_int(s: &str) -> bool {
    let s = s.trim_start_matches(is_c_space);
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    s.bytes().all(|b| b.is_ascii_digit())
}

/// pgbench's `strtoint64` with errors reported: `strtoll` that must consume all.
fn strtoint64(s: &str) -> Result<i64, EvalError> {
    let body = s.trim_start_matches(is_c_space);
    let (negative, digits) = match body.as_bytes().first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(EvalError::InvalidBigint(s.to_owned()));
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
            .ok_or_else(|| EvalError::ValueOutOfRange(s.to_owned()))?;
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
    let body = s.trim_start_matches(is_c_space);
    let (negative, rest) = match body.as_bytes().first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
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
        i += 1;
        let negative = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let digits = &s[i..];
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

/// FNV-1a for the name index: names are short, so a simple byte hash beats SipHash.
#[derive(Default)]
struct Fnv1a(u64);

impl Hasher for Fnv1a {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn names_follow_valid_variable_name() {
        assert!(is_valid_name("aid"));
        assert!(is_valid_name("_x1"));
        assert!(is_valid_name("été"));
        assert!(!is_valid_name("1x"));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("a-b"));
    }
}
